// Malformed specs: each replaces one line of the minimal spec and expects one diagnostic at an
// exact line and column with a message. The parser must report it and not crash.
#include "spec/spec.h"
#include "spec_fixtures.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace memplace::spec {
namespace {

struct Malformed {
    const char* name;
    size_t line;             ///< line of the minimal spec to replace
    const char* replacement; ///< its new text
    uint32_t wantLine;
    uint32_t wantColumn;
    const char* wantMessage; ///< a substring of the message
};

// clang-format off
const Malformed kCases[] = {
    {"missing_value", 14, "    id = ;", 14, 10, "expected a value, found ';'"},
    {"unknown_field_suggests", 21, "    latncy = (30, 30);", 21, 5, "unknown field 'latncy' in memory 'L1'; did you mean 'latency'?"},
    {"missing_required_field", 21, "", 13, 1, "memory 'L1' lacks the required field 'latency'"},
    {"duplicate_id", 29, "    id = 1;", 29, 10, "id 1 of memory 'global' is already the id of 'L1'"},
    {"duplicate_memory", 28, "memory L1 {", 28, 8, "memory 'L1' defined twice (first at line 13)"},
    {"unknown_level_suggests", 23, "    lowerLevels = (globl);", 23, 20, "unknown memory 'globl' in 'lowerLevels'; did you mean 'global'?"},
    {"cycle", 38, "    lowerLevels = (L1);", 38, 19, "the memory hierarchy has a cycle: L1 -> global -> L1"},
    {"inconsistent_levels", 22, "    upperLevels = (global);", 38, 19, "'L1' lists 'global' in its upperLevels, but lowerLevels of 'global' does not list 'L1'"},
    {"lists_itself", 23, "    lowerLevels = (L1);", 23, 20, "memory 'L1' lists itself in 'lowerLevels'"},
    {"unknown_not_allowed", 21, "    latency = ?;", 21, 15, "'latency' cannot be unknown ('?')"},
    {"om_not_allowed", 18, "    size = om;", 18, 12, "'size' cannot be inferred ('om')"},
    {"na_not_allowed", 19, "    blockSize = na;", 19, 17, "'blockSize' cannot be 'na'"},
    {"wrong_unit", 18, "    size = 128 MHz;", 18, 12, "'size' expects a size in B, KB, MB or GB"},
    {"fractional_count", 14, "    id = 1.5;", 14, 10, "'id' expects a whole number, found a number"},
    {"bad_yes_no", 15, "    swmng = maybe;", 15, 13, "'swmng' expects yes or no, found the name 'maybe'"},
    {"bad_rw", 16, "    rw = w;", 16, 10, "'rw' expects r or rw"},
    {"bad_scope", 24, "    shareScope = cluster;", 24, 18, "'shareScope' expects thread, warp, block, sm or device"},
    {"concurrency_out_of_range", 25, "    concurrencyFactor = (0.1, 1.5);", 25, 31, "'concurrencyFactor' expects a number in (0, 1], found 1.5"},
    {"latency_arity", 21, "    latency = (30, 30, 30);", 21, 15, "'latency' expects (read, write) in cycles, found a tuple"},
    {"missing_semicolon", 14, "    id = 1", 14, 11, "expected ';' after the value of 'id'"},
    {"unclosed_entry", 27, "", 28, 8, "expected '=' after 'memory', found 'global'"},
    {"unknown_condition_name", 26, "    serialCondition = warp{ addr1 / 32 != address2 / 32 };", 26, 29, "unknown name 'addr1' in a serialization condition"},
    {"division_by_zero", 26, "    serialCondition = warp{ address1 / 0 != address2 / 32 };", 26, 38, "division by zero"},
    {"unclosed_paren", 26, "    serialCondition = warp{ (address1 / 32 != address2 / 32 };", 26, 61, "expected ')' to close '(', found '}'"},
    {"banks_na_in_condition", 50, "    banks = na;", 56, 23, "uses 'banks', but its banks are 'na'"},
    {"bad_condition_scope", 26, "    serialCondition = thread{ address1 != address2 };", 26, 29, "expected ';' after the value of 'serialCondition', found '{'"},
    {"unknown_place_suggests", 59, "place sharde { memory = shared; path = ldst; capacity = 48 KB; }", 59, 7, "unknown place 'sharde'"},
    {"place_on_cache", 59, "place shared { memory = L1; }", 59, 25, "keeps data in 'L1', which is not software-managed"},
    {"levels_end_elsewhere", 58, "place global { memory = global; levels = (L1); path = ldst; }", 58, 42, "the levels of place 'global' must end at its memory 'global'"},
    {"levels_out_of_order", 58, "place global { memory = global; levels = (global, L1); path = ldst; }", 58, 51, "'L1' is not a lower level of 'global'"},
    {"no_global_place", 58, "", 1, 1, "no 'global' place"},
    {"no_processor", 1, "memory cpu {", 1, 1, "no processor entry"},
    {"second_processor", 59, "processor { sms = 1; }", 59, 1, "second processor entry (the first is at line 1)"},
    {"duplicate_field", 14, "    id = 1; id = 5;", 14, 13, "field 'id' given twice in memory 'L1' (first at line 14)"},
    {"unknown_entry_kind", 13, "memroy L1 {", 13, 1, "expected 'processor', 'memory' or 'place', found 'memroy'"},
    {"bad_character", 14, "    id = 1 @;", 14, 12, "unexpected character '@'"},
    {"unterminated_string", 2, "    name = \"H100;", 2, 12, "unterminated string"},
    {"number_too_large", 14, "    id = 99999999999999999999;", 14, 10, "number '99999999999999999999' is too large"},
    {"shared_exceeds_sm", 11, "    maxSharedPerBlock = 200 KB;", 11, 25, "'maxSharedPerBlock' (204800) exceeds 'maxSharedPerSm' (102400)"},
    {"dim_out_of_range", 17, "    dim = 4;", 17, 11, "'dim' must be 1, 2 or 3"},
    {"clock_without_unit", 4, "    clock = 1000;", 4, 13, "'clock' expects a positive frequency such as 1755 MHz"},
    {"place_dim_out_of_range", 59, "place shared { memory = shared; rw = rw; }\nplace constant { memory = global; rw = r; dim = 7; }", 60, 49, "'dim' expects 1, 2 or 3"},
};
// clang-format on

class MalformedSpec : public ::testing::TestWithParam<Malformed> {};

TEST_P(MalformedSpec, ReportsLineColumnAndMessage) {
    const Malformed& c = GetParam();
    std::string text = testing::minimalSpecWith(c.line, c.replacement);
    auto s = parseSpec(text, "bad.msl");
    ASSERT_FALSE(s) << "parsed without error:\n" << text;
    bool found = false;
    for (const auto& d : s.diagnostics().all()) {
        if (d.location.line == c.wantLine && d.location.column == c.wantColumn &&
            d.message.find(c.wantMessage) != std::string::npos) {
            found = true;
            EXPECT_EQ(d.location.file, "bad.msl");
            if (c.wantLine != 1 || std::string(c.wantMessage).find("no ") != 0) {
                EXPECT_FALSE(d.sourceLine.empty()) << "the line is quoted";
            }
        }
    }
    EXPECT_TRUE(found) << fmt::format("wanted {}:{}: {}\ngot:\n{}", c.wantLine, c.wantColumn,
                                      c.wantMessage, s.message());
}

INSTANTIATE_TEST_SUITE_P(AllCases, MalformedSpec, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(MalformedSpecTable, HasAtLeastThirtyCases) {
    EXPECT_GE(std::size(kCases), 30u);
}

} // namespace
} // namespace memplace::spec

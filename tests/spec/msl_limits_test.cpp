// What no MSL input may cost: absurd values are errors with file:line:col, not gigabytes; a long
// condition is an error, not a stack overflow; a long name or a file of garbage costs linear
// time and a bounded number of messages (issue 30). Large inputs are generated here.
#include "spec/spec.h"
#include "spec_fixtures.h"
#include "tests/common/time_budget.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <optional>
#include <random>

namespace memplace::spec {
namespace {

std::string withLine(size_t line, const std::string& text) {
    return testing::minimalSpecWith(line, text);
}

double secondsOf(const std::function<void()>& f) {
    auto start = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// `sms = 1000000000` passed and `memplace place` took 23.5 GB; 2^31 aborted on bad_alloc.
TEST(MslLimits, ProcessorValuesHaveRanges) {
    struct Case {
        size_t line;
        std::string text;
        std::string message;
    };
    const Case cases[] = {
        {2, "    sms = 1000000000;",
         "bad.msl:2:11: error: 'sms' must be in 1..1024, found 1000000000"},
        {2, "    sms = 2147483648;", "bad.msl:2:11: error: 'sms' must be in 1..1024"},
        {2, "    sms = 0;", "bad.msl:2:11: error: 'sms' must be in 1..1024, found 0"},
        {3, "    warpSize = 4294967295;", "bad.msl:3:16: error: 'warpSize' must be in 1..64"},
        {4, "    clock = 100000 MHz;", "bad.msl:4:13: error: 'clock' must be in (0, 10000] MHz"},
        {4, "    clock = 0.0 GHz;", "bad.msl:4:13: error: 'clock' must be in (0, 10000] MHz"},
        {5, "    maxThreadsPerSm = 99999999;",
         "bad.msl:5:23: error: 'maxThreadsPerSm' must be in 1..16384"},
        {6, "    maxBlocksPerSm = 5000;",
         "bad.msl:6:22: error: 'maxBlocksPerSm' must be in 1..1024"},
        {7, "    maxRegistersPerSm = 99999999999;",
         "bad.msl:7:25: error: 'maxRegistersPerSm' must be in 1..16777216"},
        {8, "    maxSharedPerSm = 2 GB;",
         "bad.msl:8:22: error: 'maxSharedPerSm' must be a whole number of bytes in 0..1 GB"},
        {11, "    maxSharedPerBlock = 1e300 GB;",
         "bad.msl:11:25: error: 'maxSharedPerBlock' must be a whole number of bytes in 0..1 GB"},
        {12, "    maxRegistersPerThread = 4096; }",
         "bad.msl:12:29: error: 'maxRegistersPerThread' must be in 1..1024"},
        {12, "    sharedAllocationUnit = 4 MB; }",
         "bad.msl:12:28: error: 'sharedAllocationUnit' must be a whole number of bytes in 1..1 MB"},
        {14, "    id = 3000000000;", "bad.msl:14:10: error: 'id' must be in 0..2147483647"},
        {19, "    blockSize = 2 MB;",
         "bad.msl:19:17: error: 'blockSize' must be a whole number of bytes in 1..1 MB"},
        {33, "    size = 2000000 GB;",
         "bad.msl:33:12: error: 'size' must be a whole number of bytes in 1..1048576 GB"},
        {50, "    banks = 100000;", "bad.msl:50:13: error: 'banks' must be in 1..1024"},
        {21, "    latency = (1e300, 30);",
         "bad.msl:21:16: error: 'latency' expects a number in (0, 10000000], found 1e+300"},
    };
    for (const auto& c : cases) {
        std::string text = withLine(c.line, c.text);
        auto s = parseSpec(text, "bad.msl");
        ASSERT_FALSE(s.ok()) << c.text;
        EXPECT_NE(s.message().find(c.message), std::string::npos) << c.text << "\n" << s.message();
    }
    // The bounds themselves are accepted.
    std::string edges = withLine(2, "    sms = 1024;");
    auto s = parseSpec(edges, "ok.msl");
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(s->processor.sms, 1024u);
    auto big = parseSpec(withLine(33, "    size = 1048576 GB;"), "ok.msl");
    ASSERT_TRUE(big.ok()) << big.message();
    EXPECT_EQ(big->findMemory("global")->size, uint64_t{1} << 50);
}

std::string conditionOf(size_t terms) {
    std::string e = "address1";
    for (size_t i = 1; i < terms; ++i) {
        e += " + address1";
    }
    return fmt::format("    serialCondition = warp{{ {} != address2 }};", e);
}

// A 15,000-term condition overflowed the stack in print and eval (a left-deep tree), in the CLI
// and in a program run with that MEMPLACE_SPEC.
TEST(MslLimits, LongConditionsAreAnError) {
    auto s = parseSpec(withLine(26, conditionOf(15000)), "bad.msl");
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("bad.msl:26:23: error: serialization condition of 30001 operators "
                               "and operands: at most 256"),
              std::string::npos)
        << s.message().substr(0, 400);
    // Near the bound it parses, prints and evaluates.
    auto ok = parseSpec(withLine(26, conditionOf(120)), "ok.msl");
    ASSERT_TRUE(ok.ok()) << ok.message();
    const auto& cond = *ok->findMemory("L1")->serialCondition;
    EXPECT_FALSE(cond.toString().empty());
    EXPECT_EQ(evaluate(cond.expr, {0, 1}, {0, 120}, {}), 0);
    EXPECT_EQ(evaluate(cond.expr, {0, 1}, {0, 5}, {}), 1);
}

// Nesting is bounded at parse time: no stack overflow, an error with the position.
TEST(MslLimits, DeepNestingIsAnError) {
    for (const std::string& open : {std::string("("), std::string("!"), std::string("-")}) {
        std::string deep;
        for (int i = 0; i < 100000; ++i) {
            deep += open;
        }
        deep += "address1";
        if (open == "(") {
            deep += std::string(100000, ')');
        }
        auto s = parseSpec(withLine(26, "    serialCondition = warp{ " + deep + " != address2 };"),
                           "bad.msl");
        ASSERT_FALSE(s.ok()) << open;
        EXPECT_NE(s.message().find("nesting deeper than 100 levels"), std::string::npos)
            << s.message().substr(0, 400);
    }
    std::string tuple(100000, '(');
    auto t = parseSpec(withLine(21, "    latency = " + tuple + "1;"), "bad.msl");
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.message().find("nesting deeper than 100 levels"), std::string::npos);
}

// "did you mean" compared a 200,000-character name with every candidate in quadratic time
// (251 s). A long name gets no suggestion, in linear time.
TEST(MslLimits, SuggestionsCostLinearTime) {
    const std::string name(30000, 'm');
    std::string typo = name;
    typo[15000] = 'n';
    // L1 lists the typo below it; the memory of line 28 gets the long name.
    std::string text = withLine(23, "    lowerLevels = (" + typo + ");");
    auto at = text.find("memory global {");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 15, "memory " + name + " {");
    std::optional<Expected<Spec>> parsed;
    double seconds = secondsOf([&] { parsed.emplace(parseSpec(text, "bad.msl")); });
    const auto& s = *parsed;
    ASSERT_FALSE(s.ok());
    EXPECT_LT(seconds, test::timeBudget(2.0));
    EXPECT_NE(s.message().find("unknown memory 'mmm"), std::string::npos);
    EXPECT_EQ(s.message().find("did you mean"), std::string::npos)
        << "no suggestion for a long name";
    // Short names still get theirs.
    auto near = parseSpec(withLine(23, "    lowerLevels = (globl);"), "bad.msl");
    ASSERT_FALSE(near.ok());
    EXPECT_NE(near.message().find("did you mean 'global'?"), std::string::npos);
}

// One megabyte of random bytes gave 155 MB of messages.
TEST(MslLimits, DiagnosticsAreCappedPerFile) {
    std::mt19937 rng(30);
    std::string garbage(1 << 20, '\0');
    for (auto& c : garbage) {
        c = static_cast<char>(rng());
    }
    std::optional<Expected<Spec>> parsed;
    double seconds = secondsOf([&] { parsed.emplace(parseSpec(garbage, "junk.msl")); });
    const auto& s = *parsed;
    ASSERT_FALSE(s.ok());
    EXPECT_LT(seconds, test::timeBudget(10.0));
    const auto& all = s.diagnostics().all();
    EXPECT_LE(all.size(), 51u);
    EXPECT_NE(all.back().message.find("more errors"), std::string::npos) << all.back().message;
    EXPECT_LT(s.message().size(), 64u * 1024) << "bytes of messages";

    // A long line is quoted in part, so that 20 errors cannot quote a megabyte each.
    std::string longLine = "    name = \"" + std::string(1 << 20, 'x') + "\"; bogus = 1;";
    auto l = parseSpec(withLine(2, longLine), "long.msl");
    ASSERT_FALSE(l.ok());
    EXPECT_LT(l.message().size(), 64u * 1024);
    EXPECT_NE(l.message().find("long.msl:2:"), std::string::npos);
}

} // namespace
} // namespace memplace::spec

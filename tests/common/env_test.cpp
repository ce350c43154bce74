#include "common/env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace memplace::env {
namespace {

namespace fs = std::filesystem;

/// Sets an environment variable for one test and puts the old value back.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) {
            old_ = old;
        }
        ::setenv(name, value, 1);
    }
    ~ScopedEnv() {
        if (old_) {
            ::setenv(name_, old_->c_str(), 1);
        } else {
            ::unsetenv(name_);
        }
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

TEST(Env, RealsRejectNanInfinitiesAndGarbage) {
    EXPECT_EQ(parseReal("2.5"), 2.5);
    EXPECT_EQ(parseReal(" 1e3 "), 1000.0);
    for (const char* bad : {"nan", "NaN", "-nan", "inf", "-inf", "infinity", "1e999", "0x10", "5x",
                            "", " ", "1,5", "--1"}) {
        EXPECT_FALSE(parseReal(bad)) << bad;
    }
}

TEST(Env, WholeNumbersRejectFractionsOverflowAndRange) {
    EXPECT_EQ(parseWhole("12", 0, 100), 12.0L);
    EXPECT_EQ(parseWhole("+7", 0, 100), 7.0L);
    for (const char* bad :
         {"1.5", "1e3", "nan", "99999999999999999999999", "101", "-1", "12abc", ""}) {
        EXPECT_FALSE(parseWhole(bad, 0, 100)) << bad;
    }
}

TEST(Env, SizesAndSwitches) {
    EXPECT_EQ(parseSize("12MB"), std::size_t{12} << 20);
    EXPECT_EQ(parseSize("4KB"), 4096u);
    EXPECT_FALSE(parseSize("0"));
    EXPECT_FALSE(parseSize("99999999999999999999MB"));
    EXPECT_EQ(parseSwitch(" on"), true);
    EXPECT_EQ(parseSwitch("false"), false);
    EXPECT_FALSE(parseSwitch("2"));
}

TEST(Env, ABadNumberKeepsTheDefaultWithOneWarning) {
    for (const char* bad : {"nan", "inf", "-inf", "1e30", "0", "5x", "2.5"}) {
        ScopedEnv e("MEMPLACE_TRACE_RECORDS", bad);
        std::size_t records = 131072;
        std::vector<std::string> w;
        EXPECT_FALSE(readNumber("MEMPLACE_TRACE_RECORDS", records, w)) << bad;
        EXPECT_EQ(records, 131072u) << bad;
        ASSERT_EQ(w.size(), 1u) << bad;
        EXPECT_NE(w[0].find("MEMPLACE_TRACE_RECORDS='"), std::string::npos) << w[0];
        EXPECT_NE(w[0].find("a whole number in [1, 16777216]"), std::string::npos) << w[0];
        EXPECT_NE(w[0].find("using the default (131072)"), std::string::npos) << w[0];
    }
    ScopedEnv e("MEMPLACE_TRACE_RECORDS", "4096");
    std::size_t records = 131072;
    std::vector<std::string> w;
    EXPECT_TRUE(readNumber("MEMPLACE_TRACE_RECORDS", records, w));
    EXPECT_EQ(records, 4096u);
    EXPECT_TRUE(w.empty());
}

TEST(Env, RealVariablesTakeFractionsWithinRange) {
    ScopedEnv e("MEMPLACE_PROFILE_TOLERANCE", "0.25");
    double t = 0.005;
    std::vector<std::string> w;
    EXPECT_TRUE(readNumber("MEMPLACE_PROFILE_TOLERANCE", t, w));
    EXPECT_EQ(t, 0.25);
    ScopedEnv nan("MEMPLACE_PROFILE_TOLERANCE", "nan");
    EXPECT_FALSE(readNumber("MEMPLACE_PROFILE_TOLERANCE", t, w));
    EXPECT_EQ(t, 0.25);
    EXPECT_EQ(w.size(), 1u);
}

TEST(Env, SwitchesAndChoicesWarnWithWhatTheyAccept) {
    ScopedEnv e("MEMPLACE_TIME", "maybe");
    std::vector<std::string> w;
    EXPECT_TRUE(readSwitch("MEMPLACE_TIME", true, w));
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("MEMPLACE_TIME='maybe' is not 1, on, yes, true, 0, off, no or false"),
              std::string::npos)
        << w[0];
    ScopedEnv p("MEMPLACE_PROFILE", "partial");
    EXPECT_FALSE(readChoice("MEMPLACE_PROFILE", {"full", "active"}, w));
    ASSERT_EQ(w.size(), 2u);
    EXPECT_NE(w[1].find("full, active"), std::string::npos) << w[1];
    EXPECT_NE(w[1].find("using the default (full)"), std::string::npos) << w[1];
}

TEST(Env, TheTableIsWellFormed) {
    std::set<std::string_view> names;
    for (const Variable& v : kVariables) {
        EXPECT_TRUE(names.insert(v.name).second) << "twice: " << v.name;
        EXPECT_FALSE(v.fallback.empty()) << v.name;
        EXPECT_FALSE(v.meaning.empty()) << v.name;
        if (v.kind == Kind::Integer || v.kind == Kind::Real) {
            EXPECT_LT(v.lo, v.hi) << v.name;
        }
        if (v.kind == Kind::Choice || v.kind == Kind::Text) {
            EXPECT_FALSE(v.accepts.empty()) << v.name;
        }
    }
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// docs/placer.md's table of variables lists every variable of common/env.h, saying what it
/// accepts (numbers: their range) and its default.
TEST(Env, DocsListEveryVariableWithWhatItAccepts) {
    const std::string docs = slurp(fs::path(MEMPLACE_SOURCE_DIR) / "docs" / "placer.md");
    ASSERT_FALSE(docs.empty());
    for (const Variable& v : kVariables) {
        const std::string cell = "| `" + std::string(v.name) + "` |";
        const std::size_t at = docs.find(cell);
        ASSERT_NE(at, std::string::npos) << v.name << " is not in docs/placer.md's table";
        const std::string row = docs.substr(at, docs.find('\n', at) - at);
        if (v.kind == Kind::Integer || v.kind == Kind::Real) {
            const std::string range = acceptsText(v).substr(acceptsText(v).find('['));
            EXPECT_NE(row.find(range), std::string::npos)
                << v.name << ": its row does not say " << range << "\n"
                << row;
        }
    }
    EXPECT_NE(docs.find("A value that does not parse"), std::string::npos);
}

/// Every MEMPLACE_* name the sources read is in the table (so it is validated and documented).
TEST(Env, EveryVariableTheSourcesReadIsInTheTable) {
    const std::regex literal("\"(MEMPLACE(_[A-Z0-9_]+)?)\"");
    const std::set<std::string> notVariables = {"MEMPLACE_NO_TRACING"}; // a macro name
    std::size_t seen = 0;
    for (const char* dir : {"runtime/src", "placer", "emu/src", "probe", "frontend", "cli"}) {
        for (const auto& e :
             fs::recursive_directory_iterator(fs::path(MEMPLACE_SOURCE_DIR) / dir)) {
            const std::string ext = e.path().extension().string();
            if (ext != ".cpp" && ext != ".h") {
                continue;
            }
            const std::string text = slurp(e.path());
            for (auto it = std::sregex_iterator(text.begin(), text.end(), literal);
                 it != std::sregex_iterator(); ++it) {
                const std::string name = (*it)[1];
                if (notVariables.count(name) == 0) {
                    ++seen;
                    EXPECT_NE(find(name), nullptr) << name << " in " << e.path();
                }
            }
        }
    }
    EXPECT_GT(seen, 40u);
}

} // namespace
} // namespace memplace::env

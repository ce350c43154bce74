#include "common/diagnostics.h"

#include <gtest/gtest.h>

namespace memplace {
namespace {

TEST(Diagnostic, FormatsLikeClangWithCaretUnderColumn) {
    Diagnostic d{Severity::Error, {"a.msl", 3, 7}, "bad value", "  x = @;"};
    EXPECT_EQ(d.format(), "a.msl:3:7: error: bad value\n    x = @;\n        ^");
}

TEST(Diagnostic, KeepsTabsSoTheCaretLinesUp) {
    Diagnostic d{Severity::Warning, {"a.msl", 1, 3}, "w", "\tab"};
    EXPECT_EQ(d.format(), "a.msl:1:3: warning: w\n  \tab\n  \t ^");
}

TEST(Diagnostic, WithoutLineOrFile) {
    EXPECT_EQ((Diagnostic{Severity::Error, {"f", 0, 0}, "m", ""}.format()), "f: error: m");
    EXPECT_EQ((Diagnostic{Severity::Note, {}, "m", ""}.format()), "note: m");
}

TEST(DiagnosticList, CountsErrorsOnly) {
    DiagnosticList list;
    list.warning({}, "w");
    EXPECT_FALSE(list.hasErrors());
    list.error({}, "e1");
    list.error({}, "e2");
    EXPECT_EQ(list.errorCount(), 2u);
    EXPECT_EQ(list.all().size(), 3u);
}

TEST(LineOf, FindsLinesAndStripsCarriageReturns) {
    std::string_view text = "one\r\ntwo\nthree";
    EXPECT_EQ(lineOf(text, 1), "one");
    EXPECT_EQ(lineOf(text, 2), "two");
    EXPECT_EQ(lineOf(text, 3), "three");
    EXPECT_EQ(lineOf(text, 4), "");
    EXPECT_EQ(lineOf(text, 0), "");
}

} // namespace
} // namespace memplace

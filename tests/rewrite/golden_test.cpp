// Golden tests: every corpus program (tests/frontend/kernels/*.cu) rewritten, against the
// reviewed rewritten source in tests/rewrite/golden/ (and its warnings in golden/<name>.log).
// MEMPLACE_UPDATE_GOLDEN=1 rewrites the golden files: review the diff before committing it.
#include "frontend/source_prep.h"
#include "rewrite/rewrite.h"
#include "tests/common/golden.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace memplace::rewrite {
namespace {

namespace fs = std::filesystem;

using golden::corpusPrograms;

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, MatchesReviewedSource) {
    if (!frontend::findCudaInstallation({}).ok()) {
        GTEST_SKIP() << "no CUDA installation";
    }
    const std::string name = GetParam();
    fs::current_path(MEMPLACE_SOURCE_DIR); // the path below is relative, as a user types it
    RewriteOptions o;
    o.file = "tests/frontend/kernels/" + name + ".cu"; // relative to the source root, as typed
    auto r = rewriteFile(o);
    ASSERT_TRUE(r.ok()) << r.message();
    const fs::path dir = fs::path(MEMPLACE_SOURCE_DIR) / "tests" / "rewrite" / "golden";
    golden::expectMatches(dir / (name + ".cu"), r->output);
    // The program's included files (rewritten or copied unchanged), at their relative names
    // under golden/<name>.files/.
    for (const IncludedOutput& f : r->included) {
        golden::expectMatches(dir / (name + ".files") / f.relative, f.output);
    }
    if (!golden::updating() && fs::exists(dir / (name + ".files"))) {
        size_t files = 0;
        for (const auto& e : fs::recursive_directory_iterator(dir / (name + ".files"))) {
            files += e.is_regular_file() ? 1 : 0;
        }
        EXPECT_EQ(files, r->included.size())
            << "golden/" << name << ".files: one per included file";
    }
    golden::expectMatches(dir / (name + ".log"),
                          r->warnings.format() + (r->warnings.empty() ? "" : "\n"));
    if (golden::updating()) {
        GTEST_SKIP() << "updated " << dir / name;
    }
}

INSTANTIATE_TEST_SUITE_P(Corpus, Golden, ::testing::ValuesIn(corpusPrograms()),
                         [](const auto& info) { return info.param; });

TEST(Golden, EveryProgramHasAGoldenFile) {
    for (const auto& name : corpusPrograms()) {
        EXPECT_TRUE(fs::exists(fs::path(MEMPLACE_SOURCE_DIR) / "tests" / "rewrite" / "golden" /
                               (name + ".cu")))
            << name;
    }
    EXPECT_GE(corpusPrograms().size(), 16u);
}

} // namespace
} // namespace memplace::rewrite

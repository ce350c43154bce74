// Golden tests: the analysis of every corpus program (tests/frontend/kernels/*.cu) against the
// reviewed JSON in tests/frontend/golden/. MEMPLACE_UPDATE_GOLDEN=1 rewrites the golden files
// (review the diff before committing it).
#include "frontend/frontend.h"
#include "frontend/source_prep.h"
#include "kernelinfo/kernel_info_json.h"
#include "tests/common/golden.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace memplace::frontend {
namespace {

namespace fs = std::filesystem;

using golden::corpusPrograms;

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, MatchesReviewedJson) {
    if (!findCudaInstallation({}).ok()) {
        GTEST_SKIP() << "no CUDA installation";
    }
    const std::string name = GetParam();
    // Relative to the source root (where ctest runs the tests), as a user would type it.
    AnalyzeOptions o;
    o.file = "tests/frontend/kernels/" + name + ".cu";
    auto info = analyzeFile(o);
    ASSERT_TRUE(info.ok()) << info.message();
    std::string got = kernelinfo::formatJson(kernelinfo::toJson(*info));
    const fs::path file =
        fs::path(MEMPLACE_SOURCE_DIR) / "tests" / "frontend" / "golden" / (name + ".json");
    golden::expectMatches(file, got);
    if (HasFatalFailure()) {
        return; // the golden file is missing
    }
    if (golden::updating()) {
        GTEST_SKIP() << "updated " << file;
    }
    const std::string want = golden::readText(file);
    // The golden file reads back into the same KernelInfo.
    auto back = kernelinfo::fileInfoFromJson(nlohmann::json::parse(want));
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(*back, *info);
}

INSTANTIATE_TEST_SUITE_P(Corpus, Golden, ::testing::ValuesIn(corpusPrograms()),
                         [](const auto& info) { return info.param; });

TEST(Golden, EveryProgramHasAGoldenFile) {
    for (const auto& name : corpusPrograms()) {
        EXPECT_TRUE(fs::exists(fs::path(MEMPLACE_SOURCE_DIR) / "tests" / "frontend" / "golden" /
                               (name + ".json")))
            << name;
    }
    EXPECT_GE(corpusPrograms().size(), 16u);
}

} // namespace
} // namespace memplace::frontend

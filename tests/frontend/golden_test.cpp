// Golden tests: the analysis of every corpus program (tests/frontend/kernels/*.cu) against the
// reviewed JSON in tests/frontend/golden/. MEMPLACE_UPDATE_GOLDEN=1 rewrites the golden files
// (review the diff before committing it).
#include "frontend/frontend.h"
#include "frontend/source_prep.h"
#include "kernelinfo/kernel_info_json.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace memplace::frontend {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> corpus() {
    std::vector<std::string> names;
    for (const auto& e :
         fs::directory_iterator(fs::path(MEMPLACE_SOURCE_DIR) / "tests" / "frontend" / "kernels")) {
        if (e.path().extension() == ".cu") {
            names.push_back(e.path().stem().string());
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// The first lines where two texts differ, for the failure message.
std::string firstDifference(const std::string& want, const std::string& got) {
    std::istringstream a(want);
    std::istringstream b(got);
    std::string la;
    std::string lb;
    for (int line = 1;; ++line) {
        bool ha = static_cast<bool>(std::getline(a, la));
        bool hb = static_cast<bool>(std::getline(b, lb));
        if (!ha && !hb) {
            return "identical";
        }
        if (la != lb || ha != hb) {
            return "line " + std::to_string(line) + ":\n  golden:   " + (ha ? la : "<end>") +
                   "\n  analysis: " + (hb ? lb : "<end>");
        }
    }
}

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
    fs::path golden =
        fs::path(MEMPLACE_SOURCE_DIR) / "tests" / "frontend" / "golden" / (name + ".json");
    if (const char* u = std::getenv("MEMPLACE_UPDATE_GOLDEN"); u != nullptr && *u == '1') {
        std::ofstream(golden) << got;
        GTEST_SKIP() << "updated " << golden;
    }
    ASSERT_TRUE(fs::exists(golden)) << golden << " is missing (MEMPLACE_UPDATE_GOLDEN=1)";
    std::string want = slurp(golden);
    EXPECT_EQ(want, got) << firstDifference(want, got);
    // The golden file reads back into the same KernelInfo.
    auto back = kernelinfo::fileInfoFromJson(nlohmann::json::parse(want));
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(*back, *info);
}

INSTANTIATE_TEST_SUITE_P(Corpus, Golden, ::testing::ValuesIn(corpus()),
                         [](const auto& info) { return info.param; });

TEST(Golden, EveryProgramHasAGoldenFile) {
    for (const auto& name : corpus()) {
        EXPECT_TRUE(fs::exists(fs::path(MEMPLACE_SOURCE_DIR) / "tests" / "frontend" / "golden" /
                               (name + ".json")))
            << name;
    }
    EXPECT_GE(corpus().size(), 16u);
}

} // namespace
} // namespace memplace::frontend

// Golden tests: every corpus program (tests/frontend/kernels/*.cu) rewritten, against the
// reviewed rewritten source in tests/rewrite/golden/ (and its warnings in golden/<name>.log).
// MEMPLACE_UPDATE_GOLDEN=1 rewrites the golden files: review the diff before committing it.
#include "frontend/source_prep.h"
#include "rewrite/rewrite.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace memplace::rewrite {
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
            return "line " + std::to_string(line) + ":\n  golden:    " + (ha ? la : "<end>") +
                   "\n  rewritten: " + (hb ? lb : "<end>");
        }
    }
}

bool updating() {
    const char* u = std::getenv("MEMPLACE_UPDATE_GOLDEN");
    return u != nullptr && *u == '1';
}

void check(const fs::path& golden, const std::string& got) {
    if (updating()) {
        fs::create_directories(golden.parent_path());
        std::ofstream(golden) << got;
        return;
    }
    ASSERT_TRUE(fs::exists(golden)) << golden << " is missing (MEMPLACE_UPDATE_GOLDEN=1)";
    std::string want = slurp(golden);
    EXPECT_EQ(want, got) << golden << ": " << firstDifference(want, got);
}

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
    check(dir / (name + ".cu"), r->output);
    check(dir / (name + ".log"), r->warnings.format() + (r->warnings.empty() ? "" : "\n"));
    if (updating()) {
        GTEST_SKIP() << "updated " << dir / name;
    }
}

INSTANTIATE_TEST_SUITE_P(Corpus, Golden, ::testing::ValuesIn(corpus()),
                         [](const auto& info) { return info.param; });

TEST(Golden, EveryProgramHasAGoldenFile) {
    for (const auto& name : corpus()) {
        EXPECT_TRUE(fs::exists(fs::path(MEMPLACE_SOURCE_DIR) / "tests" / "rewrite" / "golden" /
                               (name + ".cu")))
            << name;
    }
    EXPECT_GE(corpus().size(), 16u);
}

} // namespace
} // namespace memplace::rewrite

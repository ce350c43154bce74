// Golden-file helpers shared by the golden tests (frontend JSON, rewritten sources): the corpus
// programs, reading a file, the first differing line, and the MEMPLACE_UPDATE_GOLDEN=1 switch
// that rewrites the golden files (review the diff before committing it).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace memplace::golden {

/// The corpus programs of tests/frontend/kernels/ (names without `.cu`), sorted.
inline std::vector<std::string> corpusPrograms() {
    namespace fs = std::filesystem;
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

inline std::string readText(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// The first line where two texts differ, for the failure message.
inline std::string firstDifference(const std::string& want, const std::string& got) {
    std::istringstream a(want);
    std::istringstream b(got);
    std::string la;
    std::string lb;
    for (int line = 1;; ++line) {
        const bool ha = static_cast<bool>(std::getline(a, la));
        const bool hb = static_cast<bool>(std::getline(b, lb));
        if (!ha && !hb) {
            return "identical";
        }
        if (la != lb || ha != hb) {
            return "line " + std::to_string(line) + ":\n  golden: " + (ha ? la : "<end>") +
                   "\n  got:    " + (hb ? lb : "<end>");
        }
    }
}

inline bool updating() {
    const char* u = std::getenv("MEMPLACE_UPDATE_GOLDEN");
    return u != nullptr && *u == '1';
}

/// With MEMPLACE_UPDATE_GOLDEN=1 writes `got` to `golden`; otherwise expects it to equal the file.
inline void expectMatches(const std::filesystem::path& golden, const std::string& got) {
    if (updating()) {
        std::filesystem::create_directories(golden.parent_path());
        std::ofstream(golden) << got;
        return;
    }
    ASSERT_TRUE(std::filesystem::exists(golden))
        << golden << " is missing (MEMPLACE_UPDATE_GOLDEN=1)";
    const std::string want = readText(golden);
    EXPECT_EQ(want, got) << golden << ": " << firstDifference(want, got);
}

} // namespace memplace::golden

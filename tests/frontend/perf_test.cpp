// Analysing a 5,000-line .cu file takes under 5 s. The file is generated from the corpus:
// each program, minus its includes, is wrapped in a namespace of its own (its macros undefined
// after it, its main renamed), and copies are appended until the file has 5,000 lines. The
// file stays at build/large_5000.cu for timing by hand (`time memplace analyze ...`).
#include "frontend/frontend.h"
#include "frontend/source_prep.h"
#include "tests/common/time_budget.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

namespace memplace::frontend {
namespace {

namespace fs = std::filesystem;

std::string generate(size_t targetLines) {
    std::vector<fs::path> files;
    for (const auto& e :
         fs::directory_iterator(fs::path(MEMPLACE_SOURCE_DIR) / "tests/frontend/kernels")) {
        if (e.path().extension() != ".cu" || !e.is_regular_file()) {
            continue;
        }
        std::ifstream in(e.path());
        const std::string text((std::istreambuf_iterator<char>(in)), {});
        // A program whose kernels live in files it includes (`#include "..."`) cannot be cut
        // into the one generated file; the others carry only system includes.
        if (text.find("#include \"") == std::string::npos) {
            files.push_back(e.path());
        }
    }
    std::sort(files.begin(), files.end());
    std::set<std::string> includes;
    std::vector<std::string> body;
    for (int copy = 0; body.size() + includes.size() + 2 < targetLines; ++copy) {
        for (const auto& f : files) {
            std::ifstream in(f);
            std::string line;
            std::vector<std::string> macros;
            body.emplace_back("namespace copy" + std::to_string(copy) + "_" + f.stem().string() +
                              " {");
            while (std::getline(in, line)) {
                if (line.starts_with("#include")) {
                    includes.insert(line);
                    continue;
                }
                if (line.starts_with("#define ")) {
                    std::string name = line.substr(8);
                    name = name.substr(0, name.find_first_of(" (\t"));
                    macros.push_back(name);
                }
                if (auto p = line.find("int main("); p != std::string::npos) {
                    line.replace(p, 9, "int program_main(");
                }
                body.push_back(line);
            }
            body.push_back("} // namespace");
            for (const auto& m : macros) {
                body.push_back("#undef " + m);
            }
            if (body.size() + includes.size() + 2 >= targetLines) {
                break;
            }
        }
    }
    std::string out;
    for (const auto& i : includes) {
        out += i + "\n";
    }
    for (const auto& l : body) {
        out += l + "\n";
    }
    out += "int main() { return 0; }\n";
    return out;
}

TEST(FrontendPerf, FiveThousandLinesUnderFiveSeconds) {
    if (!findCudaInstallation({}).ok()) {
        GTEST_SKIP() << "no CUDA installation";
    }
    std::string text = generate(5000);
    size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
    ASSERT_GE(lines, 5000u);
    fs::path file = fs::path(MEMPLACE_BINARY_DIR) / "large_5000.cu";
    std::ofstream(file) << text;

    AnalyzeOptions o;
    o.file = file.string();
    auto start = std::chrono::steady_clock::now();
    auto info = analyzeFile(o);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(info.ok()) << info.message();
    EXPECT_GE(info->kernels.size(), 60u);
    RecordProperty("seconds", std::to_string(seconds));
    std::printf("analysed %zu lines, %zu kernels, %d sites in %.2f s\n", lines,
                info->kernels.size(), info->siteCount, seconds);
    EXPECT_LT(seconds, test::timeBudget(5.0));
}

} // namespace
} // namespace memplace::frontend

// `memplace analyze` as a user meets it: tables, JSON, --kernel, clang arguments after `--`,
// and exit code 2 for files that cannot be read or parsed and for a missing CUDA installation.
#include "run_command.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace memplace {
namespace {

using testing::runMemplace;

const char* kVector = "tests/frontend/kernels/vector_1d.cu";

bool haveCuda() {
    return std::filesystem::exists("/usr/local/cuda/include/cuda_runtime.h");
}

std::string tempFile(const std::string& name, const std::string& text) {
    auto p = std::filesystem::temp_directory_path() / name;
    std::ofstream(p) << text;
    return p.string();
}

TEST(CliAnalyze, HelpDocumentsTheOptions) {
    auto r = runMemplace("analyze --help");
    EXPECT_EQ(r.exitCode, 0);
    for (const char* s : {"--json", "--kernel", "clang"}) {
        EXPECT_NE(r.out.find(s), std::string::npos) << s;
    }
    EXPECT_EQ(runMemplace("analyze").exitCode, 2);
}

TEST(CliAnalyze, TablePerKernel) {
    if (!haveCuda()) {
        GTEST_SKIP() << "no CUDA installation";
    }
    auto r = runMemplace(std::string("analyze ") + kVector, MEMPLACE_SOURCE_DIR);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    for (const char* s :
         {"kernel saxpy", "kernel smooth3", "kernel even_and_reverse", "arrays", "feasible places",
          "sites (3)", "launches (1)", "affine: threadIdx.x + blockDim.x*blockIdx.x"}) {
        EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
    }
}

TEST(CliAnalyze, JsonAndKernelFilter) {
    if (!haveCuda()) {
        GTEST_SKIP() << "no CUDA installation";
    }
    auto r = runMemplace(std::string("analyze ") + kVector + " --json --kernel smooth3",
                         MEMPLACE_SOURCE_DIR);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["kernels"].size(), 1u);
    EXPECT_EQ(j["kernels"][0]["name"], "smooth3");
    EXPECT_EQ(j["file"], kVector);
    // Site ids are file-wide: filtering keeps them.
    EXPECT_EQ(j["kernels"][0]["sites"][0]["id"], 3);

    auto none =
        runMemplace(std::string("analyze ") + kVector + " --kernel nope", MEMPLACE_SOURCE_DIR);
    EXPECT_EQ(none.exitCode, 2);
    EXPECT_NE(none.err.find("no kernel named 'nope'"), std::string::npos) << none.err;
    EXPECT_NE(none.err.find("saxpy"), std::string::npos);
}

TEST(CliAnalyze, ClangArgumentsAfterDoubleDash) {
    if (!haveCuda()) {
        GTEST_SKIP() << "no CUDA installation";
    }
    std::string f = tempFile("memplace_cli_stride.cu",
                             "__global__ void k(float* a) { a[threadIdx.x * STRIDE] = 0; }\n");
    EXPECT_EQ(runMemplace("analyze " + f).exitCode, 2); // STRIDE undefined
    auto r = runMemplace("analyze " + f + " --json -- -DSTRIDE=4");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["kernels"][0]["sites"][0]["index"]["terms"][0]["coeff"], 4);
    std::filesystem::remove(f);
}

TEST(CliAnalyze, Latin1FileNameInJson) {
    if (!haveCuda()) {
        GTEST_SKIP() << "no CUDA installation";
    }
    // A file name that is not UTF-8 used to abort the JSON writer (nlohmann type_error 316).
    std::string f = tempFile("memplace_cli_caf\xe9.cu",
                             "__global__ void k(float* a) { a[threadIdx.x] = 0; }\n");
    auto r = runMemplace("analyze '" + f + "' --json");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_NE(j["file"].get<std::string>().find("caf\xef\xbf\xbd.cu"), std::string::npos);
    std::filesystem::remove(f);
}

TEST(CliAnalyze, UnparsableFileShowsClangErrors) {
    if (!haveCuda()) {
        GTEST_SKIP() << "no CUDA installation";
    }
    std::string f =
        tempFile("memplace_cli_broken.cu", "__global__ void k(float* a) {\n  a[0] = ;\n}\n");
    auto r = runMemplace("analyze " + f);
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find(f + ":2:10: error: expected expression"), std::string::npos) << r.err;
    std::filesystem::remove(f);
}

TEST(CliAnalyze, MissingFileAndMissingCuda) {
    auto r = runMemplace("analyze /nonexistent/k.cu");
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_FALSE(r.err.empty());
    std::string f = tempFile("memplace_cli_nocuda.cu", "__global__ void k() {}\n");
    auto n = runMemplace("analyze " + f + " -- --cuda-path=/nonexistent/cuda");
    EXPECT_EQ(n.exitCode, 2);
    EXPECT_NE(n.err.find("no CUDA installation"), std::string::npos) << n.err;
    std::filesystem::remove(f);
}

} // namespace
} // namespace memplace

// Spaced chevrons, the CUDA installation search and the compile flags, without clang.
#include "frontend/source_prep.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace memplace::frontend {
namespace {

std::string norm(const std::string& s, int* n = nullptr) {
    return normalizeLaunchChevrons(s, n);
}

TEST(Chevrons, SpacedLaunchesBecomeTriples) {
    int n = 0;
    EXPECT_EQ(norm("k << < g, b >> > (x);", &n), "k <<<  g, b >>>  (x);");
    EXPECT_EQ(n, 1);
    EXPECT_EQ(norm("k<< <g,b>> >(x);"), "k<<< g,b>>> (x);");
    EXPECT_EQ(norm("k< < <g, b> > >(x);"), "k<<<  g, b>>>  (x);");
    EXPECT_EQ(norm("k << < g, b >>> (x);"), "k <<<  g, b >>> (x);");
    // Nested brackets and shifts inside the configuration are not mistaken for the closing.
    EXPECT_EQ(norm("k << < dim3{1, 2}, f(a >> 1), sizeof(A<B<int> >) >> > (x);"),
              "k <<<  dim3{1, 2}, f(a >> 1), sizeof(A<B<int> >) >>>  (x);");
    // Newlines stay, so every line keeps its number.
    EXPECT_EQ(norm("k <<\n< g, b >>\n> (x);"), "k <<<\n g, b >>>\n (x);");
}

TEST(Chevrons, LengthAndOffsetsArePreserved) {
    std::string src = "int main() {\n  k << < 1, 2 >> > (a, b);\n  j << < 3, 4 >> > ();\n}\n";
    int n = 0;
    std::string out = norm(src, &n);
    EXPECT_EQ(out.size(), src.size());
    EXPECT_EQ(n, 2);
    EXPECT_EQ(out.find("(a, b)"), src.find("(a, b)"));
    EXPECT_EQ(out.find("j <<<"), src.find("j << <"));
}

TEST(Chevrons, LeavesEverythingElseAlone) {
    for (const char* s : {
             "k<<<g, b>>>(x);",
             "std::vector<std::vector<std::vector<int> > > v;",
             "x = a << b; y = c >> d; z = e < f;",
             "// k << < g, b >> > (x);\n",
             "/* k << < g, b >> > (x); */",
             "const char* s = \"k << < g, b >> > (x)\";",
             "char c = '<'; char d = '>';",
             "auto r = R\"(k << < g >> >)\";",
             "k << < g, b; // no closing before the semicolon >> >",
             "int big = 1'000'000; k<<<1, 2>>>();",
         }) {
        EXPECT_EQ(norm(s), s) << s;
    }
}

TEST(CudaInstallation, CudaPathArgumentWins) {
    auto r = findCudaInstallation({"--cuda-path=/nonexistent/cuda"});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("/nonexistent/cuda"), std::string::npos);

    std::filesystem::path fake = std::filesystem::temp_directory_path() / "memplace_fake_cuda";
    std::filesystem::create_directories(fake / "include");
    std::ofstream(fake / "include" / "cuda_runtime.h") << "// fake\n";
    auto ok = findCudaInstallation({"--cuda-path", fake.string()});
    ASSERT_TRUE(ok.ok()) << ok.message();
    EXPECT_EQ(*ok, fake.string());
    std::filesystem::remove_all(fake);
}

TEST(CudaInstallation, NoneFoundSaysWhereItLooked) {
    const char* path = std::getenv("PATH");
    std::string saved = path != nullptr ? path : "";
    bool haveDefault = std::filesystem::exists("/usr/local/cuda/include/cuda_runtime.h");
    ::setenv("PATH", "/nonexistent", 1);
    ::setenv("CUDA_PATH", "/nonexistent/cuda-env", 1);
    auto r = findCudaInstallation({});
    ::setenv("PATH", saved.c_str(), 1);
    ::unsetenv("CUDA_PATH");
    if (haveDefault) {
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(*r, "/usr/local/cuda");
    } else {
        ASSERT_FALSE(r.ok());
        EXPECT_NE(r.message().find("no CUDA installation found"), std::string::npos);
        EXPECT_NE(r.message().find("/nonexistent/cuda-env"), std::string::npos);
    }
}

TEST(CompileFlags, DeviceSideWithShimAndUserArgumentsLast) {
    CompileFlagsInput in;
    in.cudaPath = "/usr/local/cuda";
    in.resourceDir = "/usr/lib/llvm-19/lib/clang/19";
    in.extraArgs = {"-DN=4", "-Iinclude"};
    auto args = compileFlags(in);
    auto has = [&](const std::string& a) {
        return std::find(args.begin(), args.end(), a) != args.end();
    };
    EXPECT_TRUE(has("--cuda-device-only"));
    EXPECT_TRUE(has("--cuda-path=/usr/local/cuda"));
    EXPECT_TRUE(has("--cuda-gpu-arch=sm_90"));
    EXPECT_TRUE(has("-nocudalib"));
    EXPECT_TRUE(has(std::string(kShimDir)));
    EXPECT_TRUE(has("-resource-dir=/usr/lib/llvm-19/lib/clang/19"));
    EXPECT_EQ(args[args.size() - 2], "-DN=4");
    EXPECT_EQ(args.back(), "-Iinclude");

    in.extraArgs = {"--cuda-gpu-arch=sm_80", "--cuda-path=/opt/cuda"};
    args = compileFlags(in);
    EXPECT_FALSE(has("--cuda-gpu-arch=sm_90"));
    EXPECT_FALSE(has("--cuda-path=/usr/local/cuda"));
}

} // namespace
} // namespace memplace::frontend

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

    // nvcc's host side: the max/min shim is force-included; gcc's OpenMP folder is searched
    // last (only when there is one), so that nothing of gcc's shadows clang's own headers.
    auto at = std::find(args.begin(), args.end(), std::string(kShimHostMinMaxPath));
    ASSERT_NE(at, args.end());
    EXPECT_EQ(*(at - 1), "-include");
    // ... and so are the C headers nvcc's cuda_runtime.h includes for host code (time()).
    auto headers = std::find(args.begin(), args.end(), std::string(kShimNvccHostHeadersPath));
    ASSERT_NE(headers, args.end());
    EXPECT_EQ(*(headers - 1), "-include");
    EXPECT_NE(shimNvccHostHeadersContent().find("#include <time.h>"), std::string_view::npos);
    EXPECT_FALSE(has("-idirafter"));
    in.hostOpenMpDir = "/usr/lib/gcc/x86_64-linux-gnu/12/include";
    args = compileFlags(in);
    auto omp = std::find(args.begin(), args.end(), "-idirafter");
    ASSERT_NE(omp, args.end());
    EXPECT_EQ(*(omp + 1), in.hostOpenMpDir);
    EXPECT_EQ(args.back(), "-Iinclude");
    in.hostOpenMpDir.clear();

    in.extraArgs = {"--cuda-gpu-arch=sm_80", "--cuda-path=/opt/cuda"};
    args = compileFlags(in);
    EXPECT_FALSE(has("--cuda-gpu-arch=sm_90"));
    EXPECT_FALSE(has("--cuda-path=/usr/local/cuda"));
}

// gcc's omp.h: the newest gcc's folder that has one.
TEST(CompileFlags, FindsTheNewestGccOpenMpHeader) {
    namespace fs = std::filesystem;
    const fs::path root = fs::temp_directory_path() / "memplace_source_prep_gcc";
    fs::remove_all(root);
    EXPECT_EQ(findHostOpenMpIncludeDir(root.string()), "");
    for (const char* v : {"9", "12", "13"}) {
        fs::create_directories(root / "x86_64-linux-gnu" / v / "include");
    }
    std::ofstream(root / "x86_64-linux-gnu" / "9" / "include" / "omp.h") << "\n";
    std::ofstream(root / "x86_64-linux-gnu" / "12" / "include" / "omp.h") << "\n";
    EXPECT_EQ(findHostOpenMpIncludeDir(root.string()),
              (root / "x86_64-linux-gnu" / "12" / "include").string());
    fs::remove_all(root);
}

TEST(CompileFlags, WorkaroundsNameTheConstructAndTheArguments) {
    auto notes = parseWorkarounds({"'omp.h' file not found"});
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("'omp.h' is not on clang's include path"), std::string::npos);
    EXPECT_NE(notes[0].find("-idirafter"), std::string::npos);
    notes = parseWorkarounds(
        {"no matching function for call to 'fmaxf3'",
         "candidate function not viable: call to __device__ function from __host__ function"});
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("host code calls 'fmaxf3'"), std::string::npos) << notes[0];
    EXPECT_NE(notes[0].find("-- -include <header>"), std::string::npos) << notes[0];
    notes = parseWorkarounds(
        {"use of undeclared identifier 'BLOCK_SIZE'", "use of undeclared identifier 'BLOCK_SIZE'"});
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("'BLOCK_SIZE' may come from a macro"), std::string::npos);
    EXPECT_TRUE(parseWorkarounds({"expected ';' after expression"}).empty());
}

} // namespace
} // namespace memplace::frontend

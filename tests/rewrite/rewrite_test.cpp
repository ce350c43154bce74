// Unit tests of the rewriter: constructs it transforms, constructs it must leave alone (with a
// warning naming file:line:col), and the CLI's promises (the input is never written, an existing
// output is not replaced without --force).
#include "../cli/run_command.h"
#include "frontend/source_prep.h"
#include "rewrite/rewrite.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace memplace::rewrite {
namespace {

namespace fs = std::filesystem;
using memplace::testing::runMemplace;

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// A fresh folder under the system's temporary directory.
fs::path freshDir(const std::string& name) {
    fs::path d = fs::temp_directory_path() / ("memplace_rewrite_test_" + name);
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

// The CLI's promises: the input is never written; an existing output is replaced only with
// --force; writing into the input's own folder is refused.
TEST(Rewrite, NeverOverwritesWithoutForceAndNeverWritesTheInput) {
    const fs::path input = fs::path(MEMPLACE_SOURCE_DIR) / "tests/frontend/kernels/vector_1d.cu";
    const std::string before = slurp(input);
    const fs::path out = freshDir("force");
    const std::string cmd = "rewrite '" + input.string() + "' -o '" + out.string() + "'";
    auto first = runMemplace(cmd);
    ASSERT_EQ(first.exitCode, 0) << first.err;
    const std::string written = slurp(out / "vector_1d.cu");
    EXPECT_NE(written.find("memplace::launch<memplace_kernel_saxpy>"), std::string::npos);
    std::ofstream(out / "vector_1d.cu") << "// the user's own edits\n";
    auto second = runMemplace(cmd);
    EXPECT_EQ(second.exitCode, 2);
    EXPECT_NE(second.err.find("already exists"), std::string::npos) << second.err;
    EXPECT_EQ(slurp(out / "vector_1d.cu"), "// the user's own edits\n");
    auto forced = runMemplace(cmd + " --force");
    EXPECT_EQ(forced.exitCode, 0) << forced.err;
    EXPECT_EQ(slurp(out / "vector_1d.cu"), written);
    // Into the input's own folder: refused, even with --force.
    auto own = runMemplace("rewrite '" + input.string() + "' -o '" + input.parent_path().string() +
                           "' --force");
    EXPECT_EQ(own.exitCode, 2);
    EXPECT_EQ(slurp(input), before);
    fs::remove_all(out);
}

void writeText(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

// A program whose kernel lives in a header of its folder tree (which includes another header of
// the tree, without kernels): the rewritten main file and rewritten copies of both headers go
// into the output folder at the same relative names; the originals are never written; an
// existing copy is not replaced without --force, and then nothing at all is written.
TEST(Rewrite, KernelsInIncludedFilesAreRewrittenIntoCopies) {
    if (!frontend::findCudaInstallation({}).ok()) {
        GTEST_SKIP() << "no CUDA installation";
    }
    const fs::path dir = freshDir("included");
    const fs::path src = dir / "src";
    const std::string mainText = "#include \"kern/scale.cuh\"\n"
                                 "void run(int n, const float* x, float* y) {\n"
                                 "    scale<<<(n + 127) / 128, 128>>>(n, x, y);\n"
                                 "}\n";
    const std::string kernelText = "#pragma once\n"
                                   "#include \"index.h\"\n"
                                   "__global__ void scale(int n, const float* x, float* y) {\n"
                                   "    int i = globalIndex();\n"
                                   "    if (i < n) y[i] = 2.0f * x[i];\n"
                                   "}\n";
    const std::string indexText = "#pragma once\n"
                                  "__device__ inline int globalIndex() {\n"
                                  "    return blockIdx.x * blockDim.x + threadIdx.x;\n"
                                  "}\n";
    writeText(src / "main.cu", mainText);
    writeText(src / "kern" / "scale.cuh", kernelText);
    writeText(src / "kern" / "index.h", indexText);
    const fs::path out = dir / "out";
    const std::string cmd =
        "rewrite '" + (src / "main.cu").string() + "' -o '" + out.string() + "'";
    auto first = runMemplace(cmd);
    ASSERT_EQ(first.exitCode, 0) << first.err;
    EXPECT_NE(slurp(out / "main.cu").find("memplace::launch<memplace_kernel_scale>"),
              std::string::npos);
    const std::string copy = slurp(out / "kern" / "scale.cuh");
    EXPECT_NE(copy.find("template <class MP_x, class MP_y>"), std::string::npos) << copy;
    EXPECT_NE(copy.find("y[memplace::at<"), std::string::npos) << copy;
    EXPECT_EQ(slurp(out / "kern" / "index.h"), indexText); // copied unchanged
    EXPECT_NE(first.out.find((out / "kern" / "scale.cuh").string() + " (from "), std::string::npos)
        << first.out;
    EXPECT_NE(first.out.find("rewritten: 1 kernel scale, 0 launches"), std::string::npos)
        << first.out;
    EXPECT_NE(first.out.find("copied unchanged"), std::string::npos) << first.out;
    // The originals are as they were.
    EXPECT_EQ(slurp(src / "main.cu"), mainText);
    EXPECT_EQ(slurp(src / "kern" / "scale.cuh"), kernelText);
    EXPECT_EQ(slurp(src / "kern" / "index.h"), indexText);

    // An existing copy of an included file: refused without --force, and nothing is written.
    writeText(out / "kern" / "scale.cuh", "// the user's own edits\n");
    fs::remove(out / "main.cu");
    auto second = runMemplace(cmd);
    EXPECT_EQ(second.exitCode, 2);
    EXPECT_NE(second.err.find((out / "kern" / "scale.cuh").string() + " already exists"),
              std::string::npos)
        << second.err;
    EXPECT_FALSE(fs::exists(out / "main.cu"));
    EXPECT_EQ(slurp(out / "kern" / "scale.cuh"), "// the user's own edits\n");
    auto forced = runMemplace(cmd + " --force");
    EXPECT_EQ(forced.exitCode, 0) << forced.err;
    EXPECT_EQ(slurp(out / "kern" / "scale.cuh"), copy);
    // Into the source folder: refused even with --force (the copies would be the originals).
    auto own = runMemplace("rewrite '" + (src / "main.cu").string() + "' -o '" + src.string() +
                           "' --force");
    EXPECT_EQ(own.exitCode, 2);
    EXPECT_EQ(slurp(src / "kern" / "scale.cuh"), kernelText);
    fs::remove_all(dir);
}

// A header that holds only a kernel's prototype and a helper made a template is reported with
// them, not as "0 kernels, 0 launches" alone.
TEST(Rewrite, AHeaderOfPrototypesAndHelpersSaysWhatWasRewrittenInIt) {
    if (!frontend::findCudaInstallation({}).ok()) {
        GTEST_SKIP() << "no CUDA installation";
    }
    const fs::path dir = freshDir("protos_header");
    const fs::path src = dir / "src";
    writeText(src / "protos.h",
              "#pragma once\n"
              "__global__ void scaleAll(const float* in, float* out, int n);\n"
              "template <class T> __device__ T twice(const T* p, int i) { return p[i] * T(2); }\n");
    writeText(src / "main.cu", "#include \"protos.h\"\n"
                               "__global__ void scaleAll(const float* in, float* out, int n) {\n"
                               "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                               "    if (i < n) out[i] = twice(in, i);\n"
                               "}\n"
                               "void run(const float* a, float* b, int n) {\n"
                               "    scaleAll<<<(n + 127) / 128, 128>>>(a, b, n);\n"
                               "}\n");
    const fs::path out = dir / "out";
    auto r = runMemplace("rewrite '" + (src / "main.cu").string() + "' -o '" + out.string() + "'");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("rewritten: 0 kernels, 0 launches, the prototype of scaleAll, 1 helper "
                         "made template over accessors (twice)"),
              std::string::npos)
        << r.out;
    fs::remove_all(dir);
}

// Headers of the folder without anything to rewrite are not copied when no included file is
// rewritten: two programs of one folder sharing a header are rewritten into one output folder,
// one after the other, without --force (the demo's spmv.cu and particle_filter.cu).
TEST(Rewrite, IncludedFilesAreCopiedOnlyWhenOneIsRewritten) {
    if (!frontend::findCudaInstallation({}).ok()) {
        GTEST_SKIP() << "no CUDA installation";
    }
    const fs::path dir = freshDir("shared_header");
    writeText(dir / "src" / "defs.h", "#pragma once\n#define SCALE 2.0f\n");
    for (const char* name : {"a", "b"}) {
        writeText(dir / "src" / (std::string(name) + ".cu"),
                  "#include \"defs.h\"\n"
                  "__global__ void k(float* y) { y[threadIdx.x] *= SCALE; }\n"
                  "void run(float* y) { k<<<1, 32>>>(y); }\n");
        auto r = runMemplace("rewrite '" + (dir / "src" / (std::string(name) + ".cu")).string() +
                             "' -o '" + (dir / "out").string() + "'");
        EXPECT_EQ(r.exitCode, 0) << name << ": " << r.err;
    }
    EXPECT_TRUE(fs::exists(dir / "out" / "a.cu"));
    EXPECT_TRUE(fs::exists(dir / "out" / "b.cu"));
    EXPECT_FALSE(fs::exists(dir / "out" / "defs.h"));
    fs::remove_all(dir);
}

// A kernel defined outside the program's files (a header above the main file's folder) is a
// library's: not analysed; its launch gets a warning naming the launch and the kernel, instead
// of a silent "no kernels" and an unchanged output.
TEST(Rewrite, WarnsAtLaunchesOfKernelsWithNoDefinitionInTheProgram) {
    if (!frontend::findCudaInstallation({}).ok()) {
        GTEST_SKIP() << "no CUDA installation";
    }
    const fs::path dir = freshDir("outside");
    writeText(dir / "lib" / "k.cuh",
              "__global__ void libKernel(float* y) { y[threadIdx.x] = 1; }\n");
    writeText(dir / "app" / "main.cu", "#include \"../lib/k.cuh\"\n"
                                       "__global__ void declaredOnly(float* y);\n"
                                       "void run(float* y) {\n"
                                       "    libKernel<<<1, 32>>>(y);\n"
                                       "    declaredOnly<<<1, 32>>>(y);\n"
                                       "}\n");
    auto r = runMemplace("rewrite '" + (dir / "app" / "main.cu").string() + "' -o '" +
                         (dir / "out").string() + "'");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("main.cu:4:5: warning: launch of kernel 'libKernel' with no kernel "
                         "definition analysed: it is defined in "),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("lib/k.cuh, which is not one of the program's files"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("main.cu:5:5: warning: launch of kernel 'declaredOnly' with no kernel "
                         "definition analysed: it is only declared"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir / "out" / "lib")); // a library's file is not copied
    fs::remove_all(dir);
}

// A kernel declared in a header outside the program's files (which memplace does not rewrite)
// and defined in the main file: every declaration would need the accessor template, so the
// kernel stays as written, with a warning naming the prototype's file:line:col; the kernel
// declared in the main file before its definition is rewritten with its prototype.
TEST(Rewrite, APrototypeOutsideTheProgramKeepsItsKernelAsWritten) {
    if (!frontend::findCudaInstallation({}).ok()) {
        GTEST_SKIP() << "no CUDA installation";
    }
    const fs::path dir = freshDir("outside_prototype");
    writeText(dir / "lib" / "api.cuh", "__global__ void fill(float* y, int n);\n");
    writeText(dir / "app" / "main.cu", "#include \"../lib/api.cuh\"\n"
                                       "__global__ void copy(const float* x, float* y);\n"
                                       "void run(float* y, int n) {\n"
                                       "    fill<<<1, 32>>>(y, n);\n"
                                       "    copy<<<1, 32>>>(y, y + 32);\n"
                                       "}\n"
                                       "__global__ void fill(float* y, int n) {\n"
                                       "    if (threadIdx.x < n) y[threadIdx.x] = 1.0f;\n"
                                       "}\n"
                                       "__global__ void copy(const float* x, float* y) {\n"
                                       "    y[threadIdx.x] = x[threadIdx.x];\n"
                                       "}\n");
    RewriteOptions o;
    o.file = (dir / "app" / "main.cu").string();
    auto r = rewriteFile(o);
    ASSERT_TRUE(r) << r.message();
    for (const auto& k : r->kernels) {
        EXPECT_EQ(k.rewritten, k.name == "copy") << k.name << ": " << k.reason;
        if (k.name == "fill") {
            EXPECT_NE(k.reason.find("lib/api.cuh:1:17, in a file memplace does not rewrite"),
                      std::string::npos)
                << k.reason;
        }
    }
    EXPECT_NE(r->output.find("__global__ void fill(float* y, int n) {"), std::string::npos);
    EXPECT_NE(r->output.find("MEMPLACE_LAUNCH(fill, 1, 32, 0, 0, y, n)"), std::string::npos)
        << r->output;
    EXPECT_NE(r->output.find("struct memplace_kernel_copy;\ntemplate <class MP_x, class MP_y>\n"
                             "__global__ void copy(MP_x x, MP_y y);"),
              std::string::npos)
        << r->output;
    bool named = false;
    for (const auto& d : r->warnings.all()) {
        named = named || (d.message.find("kernel 'fill' left as written") != std::string::npos &&
                          d.location.file.find("api.cuh") != std::string::npos);
    }
    EXPECT_TRUE(named) << r->warnings.format();
    fs::remove_all(dir);
}

// Constructs the rewriter must leave as written, each with a warning that names file:line:col:
// pointer arithmetic on an array (raw pointer kept), and a template kernel that is never
// launched (nothing to instantiate it with).
TEST(Rewrite, LocalPointersIntoAnArrayBecomeViewsOfItsAccessor) {
    const fs::path dir = freshDir("views");
    const fs::path file = dir / "views.cu";
    std::ofstream(file) << R"(#include <cuda_runtime.h>
__global__ void rows(int w, const float* m, const float* v, float* out) {
    const float* row = m + blockIdx.x * w - 1;
    const float *a = v + 1, *b = v + 2;
    out[blockIdx.x] = row[threadIdx.x + 1] + a[0] + b[0];
}
void run(int w, const float* m, const float* v, float* out) {
    rows<<<4, 1>>>(w, m, v, out);
}
)";
    RewriteOptions o;
    o.file = file.string();
    auto r = rewriteFile(o);
    ASSERT_TRUE(r) << r.message();
    ASSERT_EQ(r->kernels.size(), 1u);
    for (const auto& a : r->kernels[0].arrays) {
        // Two pointers declared in one statement: the declaration is not edited, v stays raw.
        EXPECT_EQ(a.accessor, a.name != "v") << a.name;
    }
    EXPECT_NE(r->output.find("auto row = memplace::offset(m, blockIdx.x * w, memplace::minus(1));"),
              std::string::npos)
        << r->output;
    EXPECT_NE(r->output.find("row[memplace::at<1>(threadIdx.x + 1)]"), std::string::npos);
    EXPECT_NE(r->output.find("const float *a = v + 1, *b = v + 2;"), std::string::npos);
    EXPECT_NE(r->output.find("a[0] + b[0]"), std::string::npos);
    fs::remove_all(dir);
}

TEST(Rewrite, AParameterRebasedAtTheTopBecomesAViewOfItsAccessor) {
    const fs::path dir = freshDir("rebased");
    const fs::path file = dir / "rebased.cu";
    std::ofstream(file) << R"(#include <cuda_runtime.h>
__global__ void copy(int pitch, const float* src, float* dst, float* late) {
    late[0] = 1.0f;
    src += blockIdx.x * pitch;
    dst -= 1;
    late += 2;
    dst[threadIdx.x + 1] = src[threadIdx.x] + late[0];
}
void run(int pitch, const float* src, float* dst, float* late) {
    copy<<<4, 32>>>(pitch, src, dst, late);
}
)";
    RewriteOptions o;
    o.file = file.string();
    auto r = rewriteFile(o);
    ASSERT_TRUE(r) << r.message();
    ASSERT_EQ(r->kernels.size(), 1u);
    for (const auto& a : r->kernels[0].arrays) {
        // `late` is used before its rebase: not followed, it stays raw.
        EXPECT_EQ(a.accessor, a.name != "late") << a.name;
    }
    EXPECT_NE(r->output.find("const auto mp_src = memplace::offset(src, blockIdx.x * pitch);"),
              std::string::npos)
        << r->output;
    EXPECT_NE(r->output.find("const auto mp_dst = memplace::offset(dst, memplace::minus(1));"),
              std::string::npos);
    EXPECT_NE(r->output.find("mp_dst[memplace::at<1>(threadIdx.x + 1)] = "
                             "mp_src[memplace::at<2>(threadIdx.x)] + late[0];"),
              std::string::npos)
        << r->output;
    EXPECT_NE(r->output.find("late += 2;"), std::string::npos);

    // The view's name is taken: the parameter stays raw, the rebase as written.
    std::ofstream(file) << R"(#include <cuda_runtime.h>
__global__ void copy(int pitch, const float* src, float* dst) {
    src += blockIdx.x * pitch;
    const int mp_src = 0;
    dst[threadIdx.x] = src[threadIdx.x + mp_src];
}
void run(int pitch, const float* src, float* dst) {
    copy<<<4, 32>>>(pitch, src, dst);
}
)";
    r = rewriteFile(o);
    ASSERT_TRUE(r) << r.message();
    for (const auto& a : r->kernels[0].arrays) {
        EXPECT_EQ(a.accessor, a.name != "src") << a.name;
    }
    EXPECT_NE(r->output.find("src += blockIdx.x * pitch;"), std::string::npos) << r->output;
    fs::remove_all(dir);
}

TEST(Rewrite, LeavesWhatItCannotVouchForAsWrittenWithAWarning) {
    const fs::path dir = freshDir("alone");
    const fs::path file = dir / "alone.cu";
    std::ofstream(file) << R"(#include <cuda_runtime.h>
__global__ void shifted(int n, const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float* p = in + 1;
    if (i + 1 < n) out[i] = *(p + i);
}
template <typename T>
__global__ void never(int n, T* a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = T(0);
}
void run(int n, const float* in, float* out) {
    shifted<<<(n + 127) / 128, 128>>>(n, in, out);
}
)";
    RewriteOptions o;
    o.file = file.string();
    auto r = rewriteFile(o);
    ASSERT_TRUE(r) << r.message();
    const KernelReport* shifted = nullptr;
    for (const auto& k : r->kernels) {
        shifted = k.name == "shifted" ? &k : shifted;
    }
    ASSERT_NE(shifted, nullptr);
    EXPECT_TRUE(shifted->rewritten);
    for (const auto& a : shifted->arrays) {
        if (a.name == "in") {
            EXPECT_FALSE(a.accessor) << "pointer arithmetic: the raw pointer stays";
            EXPECT_FALSE(a.reason.empty());
        }
        if (a.name == "out") {
            EXPECT_TRUE(a.accessor);
        }
    }
    EXPECT_NE(r->output.find("const float* p = in + 1;"), std::string::npos);
    EXPECT_NE(r->output.find("*(p + i)"), std::string::npos);
    bool arithmetic = false;
    bool neverLaunched = false;
    for (const auto& d : r->warnings.all()) {
        const bool located = d.location.file.find("alone.cu") != std::string::npos &&
                             d.location.line > 0 && d.location.column > 0;
        if (located && d.location.line == 4) {
            arithmetic = true;
        }
        if (located && d.message.find("never") != std::string::npos) {
            neverLaunched = true;
        }
    }
    EXPECT_TRUE(arithmetic) << "a warning at 4:col for the pointer arithmetic";
    EXPECT_TRUE(neverLaunched) << "a warning naming the template that is never launched";
    EXPECT_EQ(slurp(file).find("memplace"), std::string::npos) << "the input is not written";
    fs::remove_all(dir);
}

// A kernel defined in an `extern "C"` block (Rodinia's b+tree includes its kernel file in one)
// is rewritten inside an `extern "C++"` block (a template cannot have C linkage), its descriptor
// with it; a kernel declared `extern "C"` on its own stays as written, with the reason.
TEST(Rewrite, AKernelInAnExternCBlockIsRewrittenWithCxxLinkage) {
    const fs::path dir = freshDir("externc");
    const fs::path file = dir / "externc.cu";
    std::ofstream(file) << R"(#include <cuda_runtime.h>
extern "C" {
__global__ void in_c(int n, const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}
}
extern "C" __global__ void alone_c(int n, const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
}
void run(int n, const float* in, float* out) {
    in_c<<<(n + 127) / 128, 128>>>(n, in, out);
    alone_c<<<(n + 127) / 128, 128>>>(n, in, out);
}
)";
    RewriteOptions o;
    o.file = file.string();
    auto r = rewriteFile(o);
    ASSERT_TRUE(r) << r.message();
    std::map<std::string, const KernelReport*> byName;
    for (const auto& k : r->kernels) {
        byName[k.name] = &k;
    }
    ASSERT_EQ(byName.count("in_c"), 1u);
    ASSERT_EQ(byName.count("alone_c"), 1u);
    EXPECT_TRUE(byName["in_c"]->rewritten) << byName["in_c"]->reason;
    const size_t open = r->output.find("extern \"C++\" {");
    const size_t kernel = r->output.find("__global__ void in_c(MP_in in, MP_out out)");
    const size_t descriptor = r->output.find("struct memplace_kernel_in_c {");
    ASSERT_NE(open, std::string::npos) << r->output;
    EXPECT_LT(open, r->output.find("template <class MP_in, class MP_out>"));
    EXPECT_NE(r->output.find("__global__ void in_c(int n, MP_in in, MP_out out)"),
              std::string::npos)
        << r->output;
    EXPECT_EQ(kernel, std::string::npos);
    ASSERT_NE(descriptor, std::string::npos);
    // The block closes after the descriptor, before the C block does.
    const size_t descriptorEnd = r->output.find("};\n}\n", descriptor);
    EXPECT_NE(descriptorEnd, std::string::npos) << r->output;
    EXPECT_FALSE(byName["alone_c"]->rewritten);
    EXPECT_NE(byName["alone_c"]->reason.find("extern \"C\" on its own"), std::string::npos)
        << byName["alone_c"]->reason;
    EXPECT_NE(r->output.find("extern \"C\" __global__ void alone_c(int n, const float* in, "
                             "float* out)"),
              std::string::npos)
        << "alone_c as written";
    bool located = false;
    for (const auto& d : r->warnings.all()) {
        located = located || (d.location.line == 8 && d.location.column > 0 &&
                              d.message.find("alone_c") != std::string::npos);
    }
    EXPECT_TRUE(located) << r->warnings.format();
    fs::remove_all(dir);
}

// A launch in a host function template that deduces the kernel's template arguments is
// rewritten when each argument is one of the host template's parameters in every instantiation
// (tests/frontend/kernels/host_template_launch.cu); when one is not (a container's value type),
// the launch and the kernel stay as written, with a warning at the launch.
TEST(Rewrite, ADeducedLaunchInAHostTemplateNeedsTheHostTemplatesParameters) {
    const fs::path dir = freshDir("deduced");
    const fs::path file = dir / "deduced.cu";
    std::ofstream(file) << R"(#include <cuda_runtime.h>
template <typename T>
__global__ void fill(T* out, int n, T value) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value;
}
template <class Buffer>
void fillAll(Buffer& b, typename Buffer::value_type v) {
    fill<<<(b.n + 127) / 128, 128>>>(b.data, b.n, v);
}
struct IntBuffer {
    using value_type = int;
    int* data;
    int n;
};
void run(IntBuffer& b) { fillAll(b, 7); }
)";
    RewriteOptions o;
    o.file = file.string();
    auto r = rewriteFile(o);
    ASSERT_TRUE(r) << r.message();
    ASSERT_EQ(r->kernels.size(), 1u);
    EXPECT_FALSE(r->kernels[0].rewritten);
    EXPECT_NE(r->kernels[0].reason.find("not one of the host template's parameters"),
              std::string::npos)
        << r->kernels[0].reason;
    EXPECT_NE(r->output.find("fill<<<(b.n + 127) / 128, 128>>>(b.data, b.n, v);"),
              std::string::npos);
    bool atLaunch = false;
    for (const auto& d : r->warnings.all()) {
        atLaunch = atLaunch || (d.location.file.find("deduced.cu") != std::string::npos &&
                                d.location.line == 9 && d.location.column == 5);
    }
    EXPECT_TRUE(atLaunch) << r->warnings.format();
    fs::remove_all(dir);
}

// A local pointer into an array may be dereferenced (`*p`, `p->m`: derived_pointers.cu); one whose
// element's address is taken (`&p->a`) keeps the array in global memory, with a warning there.
TEST(Rewrite, TheAddressOfAnElementThroughALocalPointerKeepsItsArrayHome) {
    const fs::path dir = freshDir("alias_address");
    const fs::path file = dir / "alias_address.cu";
    std::ofstream(file) << R"(#include <cuda_runtime.h>
struct P { float a; float b; };
__global__ void k(P* ps, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    P* p = ps + i;
    float* q = &p->a;
    if (i < n) { *q = 1.0f; out[i] = p->b; }
}
void run(P* ps, float* o, int n) { k<<<1, 32>>>(ps, o, n); }
)";
    RewriteOptions o;
    o.file = file.string();
    auto r = rewriteFile(o);
    ASSERT_TRUE(r) << r.message();
    ASSERT_EQ(r->kernels.size(), 1u);
    for (const auto& a : r->kernels[0].arrays) {
        EXPECT_EQ(a.accessor, a.name == "out") << a.name << ": " << a.reason;
    }
    bool atAddress = false;
    for (const auto& d : r->warnings.all()) {
        atAddress = atAddress || (d.location.line == 6 && d.location.column == 17 &&
                                  d.message.find("address") != std::string::npos);
    }
    EXPECT_TRUE(atAddress) << r->warnings.format();
    EXPECT_NE(r->output.find("P* p = ps + i;"), std::string::npos) << "the pointer as written";
    fs::remove_all(dir);
}

// A member function handed an array becomes a member template (tests/frontend/kernels/
// member_helpers.cu); a virtual one cannot be a template: the array stays a raw pointer, with
// the reason.
TEST(Rewrite, AVirtualMemberFunctionKeepsItsArrayARawPointer) {
    const fs::path dir = freshDir("virtual_member");
    const fs::path file = dir / "virtual_member.cu";
    std::ofstream(file) << R"(#include <cuda_runtime.h>
struct Reader {
    __device__ virtual float at(const float* p, int i) { return p[i]; }
    __device__ float plain(const float* p, int i) { return p[i]; }
};
__global__ void copyVirtual(int n, const float* in, float* out) {
    Reader r;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = r.at(in, i);
}
__global__ void copyPlain(int n, const float* in, float* out) {
    Reader r;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = r.plain(in, i);
}
void run(int n, const float* in, float* out) {
    copyVirtual<<<(n + 127) / 128, 128>>>(n, in, out);
    copyPlain<<<(n + 127) / 128, 128>>>(n, in, out);
}
)";
    RewriteOptions o;
    o.file = file.string();
    auto r = rewriteFile(o);
    ASSERT_TRUE(r) << r.message();
    std::map<std::string, const KernelReport*> byName;
    for (const auto& k : r->kernels) {
        byName[k.name] = &k;
    }
    ASSERT_EQ(byName.count("copyVirtual"), 1u);
    ASSERT_EQ(byName.count("copyPlain"), 1u);
    for (const auto& a : byName["copyVirtual"]->arrays) {
        if (a.name == "in") {
            EXPECT_FALSE(a.accessor);
            EXPECT_NE(a.reason.find("virtual"), std::string::npos) << a.reason;
        }
    }
    for (const auto& a : byName["copyPlain"]->arrays) {
        EXPECT_TRUE(a.accessor) << a.name << ": " << a.reason;
    }
    EXPECT_NE(r->output.find("__device__ virtual float at(const float* p, int i)"),
              std::string::npos);
    EXPECT_NE(r->output.find("template <class MP_p>"), std::string::npos) << r->output;
    fs::remove_all(dir);
}

// MEMPLACE_LAUNCH takes the kernel's address, which has no default arguments: a launch that
// leaves trailing arguments to their defaults gets their values written out when they are
// constants of builtin types (exact: floating point in hexadecimal), so that the CPU emulation
// layer, which calls the kernel through its address, gets every argument. Otherwise (a default
// that names something) the launch stays as it is written, which nvcc still builds.
TEST(Rewrite, MacroLaunchesWriteConstantDefaultArgumentsOut) {
    const fs::path dir = freshDir("defaults");
    const fs::path file = dir / "defaults.cu";
    std::ofstream(file) << R"(#include <cuda_runtime.h>
constexpr int kLimit = 9;
__global__ void fill(float* out, int n, float v = 0.1f, unsigned cap = 7u, bool on = true) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (on && i < n && i < (int)cap) out[i] = v;
}
struct Box { int w; };
__global__ void named(float* out, int n, int limit = kLimit, Box b = Box{2}) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && i < limit) out[i] = (float)b.w;
}
void run(float* out, int n) {
    fill<<<1, 32>>>(out, n);
    fill<<<1, 32>>>(out, n, 2.5f);
    named<<<1, 32>>>(out, n);
}
)";
    RewriteOptions o;
    o.file = file.string();
    o.launchesOnly = true;
    auto r = rewriteFile(o);
    ASSERT_TRUE(r) << r.message();
    auto count = [&](const std::string& what) {
        size_t n = 0;
        for (size_t at = r->output.find(what); at != std::string::npos;
             at = r->output.find(what, at + 1)) {
            ++n;
        }
        return n;
    };
    // (The launches are wrapped: each value is checked on its own.)
    EXPECT_EQ(
        count("MEMPLACE_LAUNCH(fill, 1, 32, 0, 0, out, n, static_cast<float>(0x1.99999ap-4),"), 1u)
        << r->output;
    EXPECT_EQ(count("MEMPLACE_LAUNCH(fill, 1, 32, 0, 0, out, n, 2.5f, "
                    "static_cast<unsigned int>(7ULL),"),
              1u)
        << r->output;
    EXPECT_EQ(count("static_cast<unsigned int>(7ULL)"), 2u) << r->output;
    EXPECT_EQ(count("static_cast<bool>(true));"), 2u) << r->output;
    EXPECT_NE(r->output.find("MEMPLACE_LAUNCH(named, 1, 32, 0, 0, out, n);"), std::string::npos)
        << "a structure default is left to the kernel";
    fs::remove_all(dir);
}

// The descriptor names its kernel qualified: a kernel named `kernel` (Rodinia's myocyte) was
// taken for the descriptor's own member `kernel()`, and nvcc rejected the rewritten file.
TEST(Rewrite, TheDescriptorNamesItsKernelQualified) {
    const fs::path dir = freshDir("named_kernel");
    const fs::path file = dir / "named_kernel.cu";
    std::ofstream(file) << R"(#include <cuda_runtime.h>
__global__ void kernel(int n, const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}
namespace solver {
namespace {
__global__ void kernel(int n, const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
}
} // namespace
void run(int n, const float* in, float* out) { kernel<<<(n + 127) / 128, 128>>>(n, in, out); }
} // namespace solver
void run(int n, const float* in, float* out) { kernel<<<(n + 127) / 128, 128>>>(n, in, out); }
)";
    RewriteOptions o;
    o.file = file.string();
    auto r = rewriteFile(o);
    ASSERT_TRUE(r) << r.message();
    EXPECT_NE(r->output.find("static auto kernel() { return &::kernel<Acc...>; }"),
              std::string::npos);
    EXPECT_NE(r->output.find("static auto kernel() { return &::solver::kernel<Acc...>; }"),
              std::string::npos)
        << "qualified past the anonymous namespace";
    fs::remove_all(dir);
}

// `memplace rewrite --compile`: extra placements become specialised instantiations; a place
// outside an array's mask, an unknown array or an unknown kernel is dropped with a warning.
TEST(Rewrite, ExtraCompiledPlacements) {
    RewriteOptions o;
    o.file = "tests/frontend/kernels/csr_spmv.cu"; // relative to the source root
    auto plain = rewriteFile(o);
    ASSERT_TRUE(plain) << plain.message();
    o.compile = {
        {"spmv_csr_scalar", {{"x", Place::Texture}, {"val", Place::L2Persist}}},
        {"spmv_csr_scalar", {{"x", Place::Texture}, {"val", Place::L2Persist}}}, // once
        {"spmv_csr_scalar", {{"y", Place::Texture}}},      // written: not in its mask
        {"spmv_csr_scalar", {{"nothing", Place::Global}}}, // no such array
        {"no_such_kernel", {{"x", Place::Texture}}},
    };
    auto r = rewriteFile(o);
    ASSERT_TRUE(r) << r.message();
    const KernelReport* before = nullptr;
    const KernelReport* after = nullptr;
    for (const auto& k : plain->kernels) {
        before = k.name == "spmv_csr_scalar" ? &k : before;
    }
    for (const auto& k : r->kernels) {
        after = k.name == "spmv_csr_scalar" ? &k : after;
    }
    ASSERT_NE(before, nullptr);
    ASSERT_NE(after, nullptr);
    ASSERT_EQ(after->compiled.size(), before->compiled.size() + 1);
    std::vector<Place> want;
    for (const auto& a : after->arrays) {
        if (!a.accessor) {
            continue;
        }
        want.push_back(a.name == "x"     ? Place::Texture
                       : a.name == "val" ? Place::L2Persist
                                         : Place::Global);
    }
    EXPECT_EQ(after->compiled.back(), want);
    EXPECT_NE(r->output.find("memplace::Place::L2Persist"), std::string::npos);
    int warnings = 0;
    for (const auto& d : r->warnings.all()) {
        warnings += d.message.find("extra compiled placement") != std::string::npos;
    }
    EXPECT_EQ(warnings, 3);
}

} // namespace
} // namespace memplace::rewrite

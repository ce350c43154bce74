// Unit tests of the rewriter: constructs it transforms, constructs it must leave alone (with a
// warning naming file:line:col), and the CLI's promises (the input is never written, an existing
// output is not replaced without --force).
#include "../cli/run_command.h"
#include "frontend/source_prep.h"
#include "rewrite/rewrite.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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

// Constructs the rewriter must leave as written, each with a warning that names file:line:col:
// pointer arithmetic on an array (raw pointer kept), and a template kernel that is never
// launched (nothing to instantiate it with).
TEST(Rewrite, LeavesWhatItCannotVouchForAsWrittenWithAWarning) {
    const fs::path dir = freshDir("alone");
    const fs::path file = dir / "alone.cu";
    std::ofstream(file) << R"(#include <cuda_runtime.h>
__global__ void shifted(int n, const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float* p = in + 1;
    if (i + 1 < n) out[i] = p[i];
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

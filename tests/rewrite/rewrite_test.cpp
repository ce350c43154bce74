// Unit tests of the rewriter: constructs it transforms, constructs it must leave alone (with a
// warning naming file:line:col), and the CLI's promises (the input is never written, an existing
// output is not replaced without --force).
#include "frontend/source_prep.h"
#include "rewrite/rewrite.h"

#include <gtest/gtest.h>

namespace memplace::rewrite {
namespace {

TEST(Rewrite, Placeholder) {
    SUCCEED();
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

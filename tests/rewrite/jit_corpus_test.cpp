// The rewriter's just-in-time sources (descriptor member jitSource) of every corpus kernel
// (tests/frontend/kernels, bench/kernels) compile with NVRTC for sm_90, for the default
// placement and for every array in every feasible place (one NVRTC program per kernel, one
// name expression per placement), exactly as the runtime would ask for them (runtime/src/jit.h).
// Needs no GPU; skipped when libnvrtc is missing. Kernels that are not JIT-able must say why,
// and the ones known to be JIT-able must stay so.
#include "rewrite/rewrite.h"
#include "runtime/src/jit.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

namespace memplace::rewrite {
namespace {

namespace fs = std::filesystem;
namespace jit = memplace::detail::jit;

struct Outcome {
    std::string kernel;
    bool jitable = false;
    std::string reason;
    int instantiations = 0;
    double ms = 0;
    std::string constants; ///< the __constant__ variables the JIT module copies
};

/// Rewrites `file` and compiles every JIT source it has; the outcome of each kernel.
std::vector<Outcome> compileFile(const fs::path& file) {
    std::vector<Outcome> out;
    RewriteOptions o;
    o.file = file.string();
    auto r = rewriteFile(o);
    EXPECT_TRUE(static_cast<bool>(r)) << file << ": " << (r ? "" : r.message());
    if (!r) {
        return out;
    }
    for (const KernelReport& k : r->kernels) {
        if (!k.rewritten) {
            continue;
        }
        Outcome oc;
        oc.kernel = file.filename().string() + ":" + k.name;
        oc.jitable = !k.jitSource.empty();
        oc.reason = k.jitReason;
        for (const std::string& c : k.jitConstants) {
            oc.constants += "  __constant__ " + c;
        }
        if (!oc.jitable) {
            EXPECT_FALSE(k.jitReason.empty()) << oc.kernel << ": not JIT-able without a reason";
            out.push_back(oc);
            continue;
        }
        std::vector<const ArrayReport*> arrays;
        for (const ArrayReport& a : k.arrays) {
            if (a.accessor) {
                arrays.push_back(&a);
            }
        }
        EXPECT_EQ(arrays.size(), k.jitTypes.size()) << oc.kernel;
        if (arrays.size() != k.jitTypes.size()) {
            continue;
        }
        // The placements: every array global, then each array in each feasible place.
        std::vector<std::vector<Place>> placements;
        placements.emplace_back(arrays.size(), Place::Global);
        for (std::size_t j = 0; j < arrays.size(); ++j) {
            for (Place p : kAllPlaces) {
                if (p != Place::Global && p != Place::Registers && arrays[j]->places.contains(p)) {
                    std::vector<Place> pl(arrays.size(), Place::Global);
                    pl[j] = p;
                    placements.push_back(pl);
                }
            }
        }
        std::vector<std::string> names;
        for (const auto& pl : placements) {
            std::vector<std::string> accessors;
            for (std::size_t j = 0; j < arrays.size(); ++j) {
                accessors.push_back(jit::accessorName(pl[j], arrays[j]->dims, k.jitTypes[j]));
            }
            names.push_back(jit::nameExpression(k.jitKernel, accessors));
        }
        jit::CompileRequest req;
        req.source = k.jitSource;
        req.nameExpression = names.front();
        req.ccMajor = 9;
        req.ccMinor = 0;
        // As the rewritten translation unit defines it (its own __constant__ data comes first).
        req.poolBytes = 65536 - (r->ownConstantBytes + 15) / 16 * 16;
        req.constants = k.jitConstants;
        const std::vector<std::string> more(names.begin() + 1, names.end());
        std::vector<std::string> lowered;
        const jit::Binary b = jit::compile(req, nullptr, &more, &lowered);
        EXPECT_TRUE(b.ok) << oc.kernel << ": " << b.error << "\n--- source ---\n" << k.jitSource;
        if (b.ok) {
            for (std::size_t i = 0; i < lowered.size(); ++i) {
                EXPECT_FALSE(lowered[i].empty()) << oc.kernel << ": " << more[i];
            }
            EXPECT_EQ(b.constantNames.size(), k.jitConstants.size()) << oc.kernel;
            oc.instantiations = static_cast<int>(names.size());
        } else {
            oc.jitable = false;
            oc.reason = "NVRTC failed";
        }
        oc.ms = b.compileMs;
        out.push_back(oc);
    }
    return out;
}

std::vector<fs::path> corpus(const fs::path& dir) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir)) {
        if (e.path().extension() == ".cu") {
            files.push_back(e.path());
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

void report(const std::vector<Outcome>& all) {
    for (const Outcome& o : all) {
        if (o.jitable) {
            std::printf("  jit   %-44s %3d instantiations  %7.0f ms%s\n", o.kernel.c_str(),
                        o.instantiations, o.ms, o.constants.empty() ? "" : o.constants.c_str());
        } else {
            std::printf("  no    %-44s %s\n", o.kernel.c_str(), o.reason.c_str());
        }
    }
}

class JitCorpus : public ::testing::Test {
protected:
    void SetUp() override {
        std::string why;
        if (!jit::nvrtcAvailable(&why)) {
            GTEST_SKIP() << why;
        }
    }
};

TEST_F(JitCorpus, FrontendKernelsCompileWithNvrtc) {
    std::vector<Outcome> all;
    for (const fs::path& f : corpus(fs::path(MEMPLACE_SOURCE_DIR) / "tests/frontend/kernels")) {
        for (Outcome& o : compileFile(f)) {
            all.push_back(std::move(o));
        }
    }
    report(all);
    std::map<std::string, const Outcome*> by;
    for (const Outcome& o : all) {
        by[o.kernel] = &o;
    }
    // Self-contained kernels, helpers, macros, structs: JIT-able.
    for (const char* k :
         {"vector_1d.cu:saxpy", "device_helpers.cu:blend", "device_helpers.cu:row_sums",
          "csr_spmv.cu:spmv_csr_scalar", "index_macros.cu:add_bias", "aos_particles.cu:integrate",
          "tiled_matmul.cu:matmul_tiled", "atomics_histogram.cu:histogram_shared"}) {
        auto it = by.find(k);
        if (it == by.end()) {
            ADD_FAILURE() << k << ": not in the corpus any more (update the list)";
            continue;
        }
        EXPECT_TRUE(it->second->jitable) << k << ": " << it->second->reason;
    }
    // A kernel template, a kernel that reads a __device__ variable another writes: not
    // JIT-able, with the reason. A kernel that reads a __constant__ variable: JIT-able.
    for (const Outcome& o : all) {
        if (o.kernel.rfind("templates.cu:", 0) == 0) {
            EXPECT_FALSE(o.jitable) << o.kernel;
            EXPECT_NE(o.reason.find("template"), std::string::npos) << o.reason;
        }
        if (o.kernel == "texture_constant.cu:apply_lut") {
            EXPECT_FALSE(o.jitable);
            EXPECT_NE(o.reason.find("__device__ variable 'd_lut'"), std::string::npos) << o.reason;
        }
        if (o.kernel == "texture_constant.cu:blur3x3") {
            EXPECT_TRUE(o.jitable) << o.reason;
            EXPECT_EQ(o.constants, "  __constant__ c_weights");
        }
    }
}

TEST_F(JitCorpus, BenchKernelsCompileWithNvrtc) {
    std::vector<Outcome> all;
    for (const fs::path& f : corpus(fs::path(MEMPLACE_SOURCE_DIR) / "bench/kernels")) {
        for (Outcome& o : compileFile(f)) {
            all.push_back(std::move(o));
        }
    }
    report(all);
    int jitable = 0;
    for (const Outcome& o : all) {
        jitable += o.jitable ? 1 : 0;
    }
    // Every kernel of the benchmark suite is JIT-able (those reading __constant__ tables too).
    EXPECT_EQ(jitable, static_cast<int>(all.size()));
    EXPECT_GE(jitable, 22) << "fewer benchmark kernels than when this was written";
}

} // namespace
} // namespace memplace::rewrite

// Unit tests of the rewriter's plan (rewrite/plan.h), without text: a small CUDA file is
// analysed and planned, and the plan's fields say which kernels are rewritten, which arrays
// become accessors (mode, places, dimensions) and which stay raw pointers and why, and what each
// launch and `extern __shared__` declaration becomes.
#include "frontend/frontend.h"
#include "rewrite/plan.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

namespace memplace::rewrite::detail {
namespace {

namespace fs = std::filesystem;

/// A CUDA source in a fresh temporary file, analysed and planned.
class Planned {
public:
    explicit Planned(const std::string& name, const std::string& source,
                     RewriteOptions options = {}) {
        dir_ = fs::temp_directory_path() / ("memplace_plan_test_" + name);
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        const fs::path file = dir_ / (name + ".cu");
        std::ofstream(file) << source;
        frontend::AnalyzeOptions ao;
        ao.file = file.string();
        auto a = frontend::analyze(ao);
        EXPECT_TRUE(a.ok()) << a.message();
        if (a.ok()) {
            analysis_ = std::move(*a);
            options_ = std::move(options);
            options_.file = file.string();
            plan_.emplace(planRewrite(options_, *analysis_));
        }
    }
    ~Planned() { fs::remove_all(dir_); }
    Planned(const Planned&) = delete;
    Planned& operator=(const Planned&) = delete;

    bool ok() const { return plan_.has_value(); }
    const RewritePlan& plan() const { return *plan_; }

    const KernelPlan& kernel(const std::string& name) const {
        for (const KernelPlan& k : plan_->kernels) {
            if (k.name == name) {
                return k;
            }
        }
        ADD_FAILURE() << "no kernel plan for " << name;
        static const KernelPlan none;
        return none;
    }
    static const ArrayPlan& array(const KernelPlan& k, const std::string& name) {
        for (const ArrayPlan& a : k.arrays) {
            if (a.name == name) {
                return a;
            }
        }
        ADD_FAILURE() << "no array plan for " << name;
        static const ArrayPlan none;
        return none;
    }

private:
    fs::path dir_;
    RewriteOptions options_;
    std::unique_ptr<frontend::Analysis> analysis_;
    std::optional<RewritePlan> plan_;
};

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(RewritePlan, ArraysBecomeAccessorsOrStayRawWithTheirReason) {
    Planned p("arrays", R"(#include <cuda_runtime.h>
__global__ void k(int n, const float* in, float* out, volatile int* flag, const float* unused) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] * 2.0f;
        flag[0] = 1;
    }
}
void run(int n, const float* in, float* out, volatile int* flag, const float* unused) {
    k<<<(n + 255) / 256, 256>>>(n, in, out, flag, unused);
}
)");
    ASSERT_TRUE(p.ok());
    const KernelPlan& k = p.kernel("k");
    EXPECT_TRUE(k.ok) << k.reason;
    EXPECT_EQ(k.descName, "memplace_kernel_k");
    ASSERT_EQ(k.arrays.size(), 4u); // every pointer parameter, in parameter order

    const ArrayPlan& in = Planned::array(k, "in");
    EXPECT_TRUE(in.accessor) << in.reason;
    EXPECT_EQ(in.param, 1u);
    EXPECT_EQ(in.mode, ki::AccessMode::Read);
    EXPECT_FALSE(in.written());
    EXPECT_TRUE(in.mask.contains(Place::ReadOnly));
    EXPECT_EQ(in.elemType, "const float");
    EXPECT_EQ(in.elemTypeBare, "float");
    EXPECT_EQ(in.mpName, "MP_in");
    EXPECT_EQ(in.dims, 1);

    const ArrayPlan& out = Planned::array(k, "out");
    EXPECT_TRUE(out.accessor) << out.reason;
    EXPECT_TRUE(out.written());
    EXPECT_EQ(out.likely, Place::Global);
    EXPECT_EQ(out.likelyWhy, "written");
    EXPECT_FALSE(out.mask.contains(Place::ReadOnly));

    const ArrayPlan& flag = Planned::array(k, "flag");
    EXPECT_FALSE(flag.accessor);
    EXPECT_TRUE(contains(flag.reason, "volatile")) << flag.reason;

    const ArrayPlan& unused = Planned::array(k, "unused");
    EXPECT_FALSE(unused.accessor);
    EXPECT_EQ(unused.reason, "the kernel does not access it");

    // The default instantiation keeps every accessor array where the program keeps it; the
    // compiled placements are one place per accessor array.
    EXPECT_EQ(k.accessorArrays().size(), 2u);
    for (const auto& placement : k.compiled) {
        EXPECT_EQ(placement.size(), 2u);
        EXPECT_NE(placement, k.originalPlacement());
    }
}

TEST(RewritePlan, LaunchesGoToTheRuntimeForRewrittenKernelsAndToTheMacroOtherwise) {
    Planned p("launches", R"(#include <cuda_runtime.h>
__global__ void placed(int n, const float* in, float* out) {
    int i = threadIdx.x;
    if (i < n) out[i] = in[i];
}
__global__ void taken(int n, float* out) {
    out[threadIdx.x] = n;
}
void run(int n, const float* in, float* out) {
    placed<<<1, 32>>>(n, in, out);
    taken<<<1, 32>>>(n, out);
    cudaFuncSetAttribute(taken, cudaFuncAttributePreferredSharedMemoryCarveout, 50);
}
)");
    ASSERT_TRUE(p.ok());
    const KernelPlan& placed = p.kernel("placed");
    const KernelPlan& taken = p.kernel("taken");
    EXPECT_TRUE(placed.ok) << placed.reason;
    EXPECT_EQ(placed.launches, 1);
    EXPECT_FALSE(taken.ok);
    EXPECT_TRUE(contains(taken.reason, "its address is taken at ")) << taken.reason;
    EXPECT_TRUE(contains(taken.reason, "launches.cu:12:26")) << taken.reason;
    EXPECT_EQ(taken.launches, 0);

    ASSERT_EQ(p.plan().launches.size(), 2u);
    int runtime = 0;
    int macro = 0;
    for (const LaunchPlan& lp : p.plan().launches) {
        if (lp.kind == LaunchPlan::Kind::Runtime) {
            ++runtime;
            EXPECT_EQ(lp.kernel, &placed); // the descriptor it goes through
            EXPECT_TRUE(contains(lp.text, "memplace::launch<memplace_kernel_placed>")) << lp.text;
        } else if (lp.kind == LaunchPlan::Kind::Macro) {
            ++macro;
            EXPECT_EQ(lp.kernel, nullptr);
        }
        EXPECT_LT(lp.begin, lp.end);
    }
    EXPECT_EQ(runtime, 1);
    EXPECT_EQ(macro, 1);
}

TEST(RewritePlan, LaunchesOnlyLeavesEveryKernelAsWritten) {
    RewriteOptions o;
    o.launchesOnly = true;
    Planned p("launches_only", R"(#include <cuda_runtime.h>
__global__ void k(const float* in, float* out) { out[threadIdx.x] = in[threadIdx.x]; }
void run(const float* in, float* out) { k<<<1, 32>>>(in, out); }
)",
              o);
    ASSERT_TRUE(p.ok());
    const KernelPlan& k = p.kernel("k");
    EXPECT_FALSE(k.ok);
    EXPECT_EQ(k.reason, "--launches-only");
    for (const ArrayPlan& a : k.arrays) {
        EXPECT_FALSE(a.accessor) << a.name;
    }
    ASSERT_EQ(p.plan().launches.size(), 1u);
    EXPECT_EQ(p.plan().launches[0].kind, LaunchPlan::Kind::Macro);
}

TEST(RewritePlan, AHelperHandedAnArrayTakesAnAccessorUnlessAlsoHandedAnotherPointer) {
    Planned p("helpers", R"(#include <cuda_runtime.h>
__device__ float get(const float* p, int i) { return p[i]; }
__device__ float first(const float* p) { return p[0]; }
__global__ void k(const float* a, const float* b, float* out) {
    float local[2] = {1.0f, 2.0f};
    out[threadIdx.x] = get(a, threadIdx.x) + first(b) + first(local);
}
void run(const float* a, const float* b, float* out) { k<<<1, 32>>>(a, b, out); }
)");
    ASSERT_TRUE(p.ok());
    const KernelPlan& k = p.kernel("k");
    EXPECT_TRUE(k.ok) << k.reason;
    EXPECT_TRUE(Planned::array(k, "a").accessor) << Planned::array(k, "a").reason;
    const ArrayPlan& b = Planned::array(k, "b");
    EXPECT_FALSE(b.accessor);
    EXPECT_TRUE(contains(b.reason, "helper parameter that stays a pointer")) << b.reason;
    int active = 0;
    for (const auto& [key, h] : p.plan().helpers) {
        if (key.fn->getNameAsString() == "get") {
            EXPECT_TRUE(h.active) << h.reason;
            EXPECT_FALSE(h.written);
            ++active;
        } else if (key.fn->getNameAsString() == "first") {
            EXPECT_FALSE(h.active);
            EXPECT_FALSE(h.reason.empty());
        }
    }
    EXPECT_EQ(active, 1);
}

TEST(RewritePlan, RowTimesWidthPlusColumnIsTwoDimensional) {
    Planned p("two_d", R"(#include <cuda_runtime.h>
__global__ void k(int width, int height, const float* in, float* out) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        out[x * height + y] = in[y * width + x];
    }
}
void run(int w, int h, const float* in, float* out) {
    k<<<dim3(4, 4), dim3(8, 8)>>>(w, h, in, out);
}
)");
    ASSERT_TRUE(p.ok());
    const ArrayPlan& in = Planned::array(p.kernel("k"), "in");
    ASSERT_TRUE(in.accessor) << in.reason;
    EXPECT_EQ(in.dims, 2);
    EXPECT_EQ(in.widthParam, 0);
    EXPECT_EQ(in.likely, Place::Texture);
}

TEST(RewritePlan, ExternSharedBecomesTheMacroOrStaysWithItsReason) {
    Planned p("shared", R"(#include <cuda_runtime.h>
__global__ void k(float* out) {
    extern __shared__ float buf[];
    extern __shared__ __align__(32) double wide[];
    buf[threadIdx.x] = 1.0f;
    wide[threadIdx.x] = 2.0;
    out[threadIdx.x] = buf[threadIdx.x] + wide[threadIdx.x];
}
void run(float* out) { k<<<1, 32, 1024>>>(out); }
)");
    ASSERT_TRUE(p.ok());
    ASSERT_EQ(p.plan().externShared.size(), 2u);
    for (const SharedPlan& sp : p.plan().externShared) {
        if (sp.var->getNameAsString() == "buf") {
            EXPECT_TRUE(sp.why.empty()) << sp.why;
            EXPECT_EQ(sp.text, "MEMPLACE_DYNAMIC_SHARED(float, buf)");
        } else {
            EXPECT_EQ(sp.why, "it asks for an alignment above 16 bytes");
            EXPECT_TRUE(sp.text.empty());
        }
    }
}

// A kernel declared before its definition is rewritten with every declaration (a launch between
// them included); a cache preference names it (the default instantiation) and keeps it
// rewritten; a function pointer to a kernel keeps that kernel as written, naming the line.
TEST(RewritePlan, PrototypesAndCachePreferencesKeepAKernelRewrittenFunctionPointersDoNot) {
    Planned p("declared", R"(#include <cuda_runtime.h>
__global__ void early(int n, float* out);
__global__ void pointed(int n, float* out) {
    out[threadIdx.x] = n;
}
void run(int n, float* out, bool flag) {
    early<<<1, 32>>>(n, out);
    cudaFuncSetCacheConfig(early, cudaFuncCachePreferL1);
    void (*k)(int, float*) = flag ? pointed : pointed;
    k<<<1, 32>>>(n, out);
}
__global__ void early(int count, float* result) {
    result[threadIdx.x] = count;
}
)");
    ASSERT_TRUE(p.ok());
    const KernelPlan& early = p.kernel("early");
    EXPECT_TRUE(early.ok) << early.reason;
    EXPECT_EQ(early.prototypes.size(), 1u);
    EXPECT_EQ(early.cacheHints.size(), 1u);
    EXPECT_EQ(early.launches, 1);
    const KernelPlan& pointed = p.kernel("pointed");
    EXPECT_FALSE(pointed.ok);
    EXPECT_TRUE(contains(pointed.reason, "its address is taken at ")) << pointed.reason;
    EXPECT_TRUE(contains(pointed.reason, "declared.cu:9:37")) << pointed.reason;
}

} // namespace
} // namespace memplace::rewrite::detail

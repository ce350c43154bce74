// The frontend on small CUDA programs written for each test: index classification, loops,
// hazards, helpers, templates, launches and extents, diagnostics, and the source ranges the
// rewriter uses.
#include "frontend/frontend.h"
#include "frontend/source_prep.h"
#include "kernelinfo/kernel_info_json.h"

#include <clang/Basic/SourceManager.h>
#include <clang/Lex/Lexer.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace memplace::frontend {
namespace {

namespace ki = memplace::kernelinfo;

#define REQUIRE_CUDA()                                                                             \
    do {                                                                                           \
        if (!findCudaInstallation({}).ok()) {                                                      \
            GTEST_SKIP() << "no CUDA installation";                                                \
        }                                                                                          \
    } while (0)

/// Writes `source` to a temporary .cu file and analyses it.
class Snippet {
public:
    explicit Snippet(const std::string& source, const std::string& name = "snippet.cu") {
        static int counter = 0;
        dir_ = std::filesystem::temp_directory_path() /
               ("memplace_frontend_test_" + std::to_string(::getpid()) + "_" +
                std::to_string(counter++));
        std::filesystem::create_directories(dir_);
        path_ = (dir_ / name).string();
        source_ = source;
        std::ofstream(path_) << source;
    }
    ~Snippet() { std::filesystem::remove_all(dir_); }
    const std::string& path() const { return path_; }

    /// The line and column where `needle` (an occurrence, counting from 0) starts.
    std::pair<uint32_t, uint32_t> find(const std::string& needle, int occurrence = 0) const {
        size_t pos = source_.find(needle);
        while (occurrence-- > 0 && pos != std::string::npos) {
            pos = source_.find(needle, pos + 1);
        }
        EXPECT_NE(pos, std::string::npos) << needle;
        uint32_t line = 1;
        size_t lineStart = 0;
        for (size_t i = 0; i < pos && pos != std::string::npos; ++i) {
            if (source_[i] == '\n') {
                ++line;
                lineStart = i + 1;
            }
        }
        return {line, static_cast<uint32_t>(pos - lineStart + 1)};
    }

    std::unique_ptr<Analysis> analyze(std::vector<std::string> extra = {}) const {
        AnalyzeOptions o;
        o.file = path_;
        o.extraArgs = std::move(extra);
        auto a = frontend::analyze(o);
        EXPECT_TRUE(a.ok()) << a.message();
        return a.ok() ? std::move(*a) : nullptr;
    }

private:
    std::filesystem::path dir_;
    std::string path_;
    std::string source_;
};

const ki::KernelInfo& kernel(const Analysis& a, const std::string& instantiation) {
    for (const auto& k : a.info().kernels) {
        if (k.instantiation == instantiation) {
            return k;
        }
    }
    ADD_FAILURE() << "no kernel " << instantiation;
    static ki::KernelInfo none;
    return none;
}

/// The site whose access starts where `needle` does in the snippet.
const ki::Site& siteAt(const ki::KernelInfo& k, const Snippet& s, const std::string& needle,
                       int occurrence = 0) {
    auto [line, column] = s.find(needle, occurrence);
    for (const auto& site : k.sites) {
        if (site.location.line == line && site.location.column == column) {
            return site;
        }
    }
    ADD_FAILURE() << "no site at " << line << ":" << column << " (" << needle << ")";
    static ki::Site none = [] {
        ki::Site n;
        n.index.terms.resize(8);
        return n;
    }();
    return none;
}

ki::Poly poly(const char* text) {
    auto p = ki::Poly::parse(text);
    EXPECT_TRUE(p.has_value()) << text;
    return p.value_or(ki::Poly());
}

std::string rangeText(const Analysis& a, clang::CharSourceRange r) {
    return clang::Lexer::getSourceText(r, a.sourceManager(), a.langOptions()).str();
}

constexpr const char* kHeader = "#include <cuda_runtime.h>\n";

TEST(Frontend, AffineIndicesWithCoefficients) {
    REQUIRE_CUDA();
    Snippet s(std::string(kHeader) + R"(
__global__ void k(int n, int w, const float* in, float* out) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    out[y * w + x] = in[(y + 1) * w + 2 * x - 3] + in[n - 1 - x];
}
)");
    auto a = s.analyze();
    ASSERT_TRUE(a);
    const auto& k = kernel(*a, "k");
    ASSERT_EQ(k.sites.size(), 3u);
    const auto& w = siteAt(k, s, "out[y");
    EXPECT_EQ(w.array, "out");
    EXPECT_EQ(w.access, ki::AccessMode::Write);
    EXPECT_EQ(w.index.kind, ki::IndexKind::Affine);
    ASSERT_EQ(w.index.terms.size(), 4u);
    EXPECT_EQ(w.index.terms[0].var, "threadIdx.x");
    EXPECT_EQ(w.index.terms[0].coeff, poly("1"));
    EXPECT_EQ(w.index.terms[1].var, "threadIdx.y");
    EXPECT_EQ(w.index.terms[1].coeff, poly("w"));
    EXPECT_EQ(w.index.terms[2].var, "blockIdx.x");
    EXPECT_EQ(w.index.terms[2].coeff, poly("blockDim.x"));
    EXPECT_EQ(w.index.terms[3].var, "blockIdx.y");
    EXPECT_EQ(w.index.terms[3].coeff, poly("blockDim.y*w"));
    const auto& r1 = siteAt(k, s, "in[(y");
    EXPECT_EQ(r1.index.terms[0].coeff, poly("2"));
    EXPECT_EQ(r1.index.offset, poly("w - 3"));
    const auto& r2 = siteAt(k, s, "in[n - 1");
    EXPECT_EQ(r2.index.terms[0].coeff, poly("-1"));
    EXPECT_EQ(r2.index.offset, poly("n - 1"));
    const ki::ArrayInfo* out = k.findArray("out");
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->dimensionality, 2);
    EXPECT_EQ(out->rowLength, poly("w"));
    EXPECT_EQ(k.findArray("in")->mode, ki::AccessMode::Read);
}

// A row per block (a chunk loop, or one row per blockIdx.y) is not 2-D use; a loop over rows
// or rows by threadIdx.y is.
TEST(Frontend, RowsOwnedByOneBlockAreOneDimensional) {
    REQUIRE_CUDA();
    Snippet s(std::string(kHeader) + R"(
__global__ void k(long long n, long long chunk, int w, int h, const unsigned* in,
                  const float* m, const float* soa, float* out) {
    unsigned sum = 0;
    for (long long i = blockIdx.x * chunk + threadIdx.x; i < n; i += blockDim.x)
        sum += in[i];
    float acc = m[blockIdx.y * w + threadIdx.x];
    for (int r = 0; r < h; ++r)
        acc += soa[r * w + threadIdx.x];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc + sum;
}
)");
    auto a = s.analyze();
    ASSERT_TRUE(a);
    const auto& k = kernel(*a, "k");
    EXPECT_EQ(k.findArray("in")->dimensionality, 1);
    EXPECT_EQ(k.findArray("m")->dimensionality, 1);
    EXPECT_EQ(k.findArray("soa")->dimensionality, 2);
    EXPECT_EQ(k.findArray("soa")->rowLength, poly("w"));
}

TEST(Frontend, IndirectThroughAnotherArray) {
    REQUIRE_CUDA();
    Snippet s(std::string(kHeader) + R"(
__global__ void spmv(int rows, const int* rowptr, const int* col, const float* val,
                     const float* x, float* y) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float sum = 0;
    for (int j = rowptr[r]; j < rowptr[r + 1]; ++j) {
        int c = col[j];
        sum += val[j] * x[c];
    }
    y[r] = sum;
}
)");
    auto a = s.analyze();
    ASSERT_TRUE(a);
    const auto& k = kernel(*a, "spmv");
    const auto& colRead = siteAt(k, s, "col[j]");
    EXPECT_EQ(colRead.array, "col");
    EXPECT_EQ(colRead.index.kind, ki::IndexKind::Indirect);
    EXPECT_EQ(colRead.index.via, std::vector<std::string>{"rowptr"});
    const auto& xRead = siteAt(k, s, "x[c]");
    EXPECT_EQ(xRead.array, "x");
    EXPECT_EQ(xRead.index.kind, ki::IndexKind::Indirect);
    EXPECT_EQ(xRead.index.via, std::vector<std::string>{"col"});
    EXPECT_EQ(xRead.index.viaSites, std::vector<int>{colRead.id});
    ASSERT_EQ(k.loops.size(), 1u);
    EXPECT_EQ(k.loops[0].var, "j");
    EXPECT_FALSE(k.loops[0].init.has_value());
    EXPECT_FALSE(k.loops[0].tripCount.has_value());
    EXPECT_EQ(colRead.loops, std::vector<int>{0});
}

TEST(Frontend, LoopsTripCountsAndGridStride) {
    REQUIRE_CUDA();
    Snippet s(std::string(kHeader) + R"(
#define TILE 8
__global__ void k(int n, float* a, const float* b) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        for (int t = 0; t < TILE; t += 2) {
            a[i] += b[t];
        }
    }
    for (int s = 128; s > 0; s >>= 1) {
        a[threadIdx.x] += b[s];
    }
    int j = 0;
    while (j < n) { a[j] = 0; j += 4; }
}
)");
    auto a = s.analyze();
    ASSERT_TRUE(a);
    const auto& k = kernel(*a, "k");
    ASSERT_EQ(k.loops.size(), 4u);
    EXPECT_EQ(k.loops[0].var, "i");
    EXPECT_FALSE(k.loops[0].tripCount.has_value());
    EXPECT_EQ(k.loops[0].step, poly("blockDim.x*gridDim.x"));
    EXPECT_EQ(k.loops[1].tripCount, 4);
    EXPECT_EQ(k.loops[1].parent, 0);
    EXPECT_EQ(k.loops[2].tripCount, 8); // 128, 64, ..., 1
    EXPECT_EQ(k.loops[3].kind, "while");
    const auto& ai = siteAt(k, s, "a[i]");
    ASSERT_EQ(ai.index.kind, ki::IndexKind::Affine);
    ASSERT_EQ(ai.index.terms.size(), 3u);
    EXPECT_EQ(ai.index.terms[2].var, "i");
    EXPECT_EQ(ai.index.terms[2].coeff, poly("blockDim.x*gridDim.x"));
    EXPECT_EQ(ai.loops, (std::vector<int>{0, 1}));
    const auto& bt = siteAt(k, s, "b[t]");
    EXPECT_EQ(bt.index.terms[0].var, "t");
    EXPECT_EQ(bt.index.terms[0].coeff, poly("2"));
    EXPECT_EQ(siteAt(k, s, "b[s]").index.kind, ki::IndexKind::Unknown);
    const auto& aj = siteAt(k, s, "a[j]");
    EXPECT_EQ(aj.index.kind, ki::IndexKind::Unknown);
    EXPECT_NE(aj.index.reason.find("more than once"), std::string::npos);
}

TEST(Frontend, HazardsKeepArraysInGlobalMemory) {
    REQUIRE_CUDA();
    Snippet s(std::string(kHeader) + R"(
__device__ void opaque(float* p);
#define AT(m, i) m[2 * (i)]
__global__ void k(float* a, float* b, float* c, float* d, const float* e, float* f) {
    int i = threadIdx.x;
    float* q = a + 4;
    q[i] = 1.0f;
    q += 2;
    opaque(b);
    reinterpret_cast<float4*>(c)[i] = make_float4(0, 0, 0, 0);
    AT(d, i) = 2.0f;
    f[i] = e[i];
}
)");
    auto a = s.analyze();
    ASSERT_TRUE(a);
    const auto& k = kernel(*a, "k");
    auto kindOf = [&](const std::string& array) {
        for (const auto& h : k.hazards) {
            if (h.array == array) {
                return h.kind;
            }
        }
        return ki::HazardKind::Aliasing;
    };
    EXPECT_EQ(kindOf("a"), ki::HazardKind::PointerArithmetic);
    EXPECT_EQ(kindOf("b"), ki::HazardKind::Escapes);
    EXPECT_EQ(kindOf("c"), ki::HazardKind::Reinterpreted);
    EXPECT_EQ(kindOf("d"), ki::HazardKind::Macro);
    for (const char* name : {"a", "b", "c", "d"}) {
        EXPECT_EQ(k.findArray(name)->feasible, PlaceSet{Place::Global}) << name;
    }
    EXPECT_TRUE(k.findArray("e")->feasible.contains(Place::Texture));
    EXPECT_TRUE(k.findArray("f")->feasible.contains(Place::Shared));
    EXPECT_EQ(k.untracked.size(), 1u); // q[i]
    // One clang-style warning per hazard, naming file:line:col.
    EXPECT_EQ(a->warnings().all().size(), 4u);
    std::string first = a->warnings().all()[0].format();
    EXPECT_NE(first.find(s.path() + ":7:16: warning: kernel 'k': the local pointer 'q' = 'a + 4' "
                                    "is used other than as q[k] (9:5)"),
              std::string::npos)
        << first;
}

TEST(Frontend, LocalPointersIntoAnArrayAreFollowed) {
    REQUIRE_CUDA();
    Snippet s(std::string(kHeader) + R"(
__global__ void k(int w, const float* m, float* a, float* b) {
    int r = blockIdx.x;
    const float* row = m + r * w;
    float* q = &a[r];
    float* p = b + 1;
    b[0] = row[threadIdx.x] + q[threadIdx.x];
    p[threadIdx.x] = 1.0f;
    p = b;
}
)");
    auto a = s.analyze();
    ASSERT_TRUE(a);
    const auto& k = kernel(*a, "k");
    // row[x] is m[r * w + x], q[x] is a[r + x]: sites of the arrays, no hazard.
    ASSERT_EQ(k.sites.size(), 3u);
    EXPECT_EQ(k.sites[0].array, "b"); // b[0], the left-hand side, comes first
    EXPECT_EQ(k.sites[1].array, "m");
    EXPECT_EQ(k.sites[1].index.text, "r * w + threadIdx.x");
    EXPECT_EQ(k.sites[2].array, "a");
    EXPECT_EQ(k.sites[2].index.text, "r + threadIdx.x");
    EXPECT_TRUE(k.findArray("m")->feasible.contains(Place::Texture));
    EXPECT_TRUE(k.findArray("a")->feasible.contains(Place::Texture));
    // p is rebound: not followed, b stays home with a warning naming the rebinding.
    EXPECT_EQ(k.findArray("b")->feasible, PlaceSet{Place::Global});
    // (`p = b` stores b too: a second warning.)
    ASSERT_EQ(a->warnings().all().size(), 2u);
    EXPECT_NE(a->warnings().all()[0].format().find("the local pointer 'p' = 'b + 1' is used "
                                                   "other than as p[k] (10:5)"),
              std::string::npos)
        << a->warnings().all()[0].format();
}

TEST(Frontend, HelpersAreFollowedWithTheirArguments) {
    REQUIRE_CUDA();
    Snippet s(std::string(kHeader) + R"(
__device__ float load(const float* p, int i) { return p[i]; }
__device__ int gid() { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ void put(float* p, int i, float v) { p[i] = v; }
__global__ void k(const float* a, const float* b, float* out) {
    int i = gid();
    put(out, i, load(a, i) + load(b, 2 * i));
}
)");
    auto an = s.analyze();
    ASSERT_TRUE(an);
    const auto& k = kernel(*an, "k");
    ASSERT_EQ(k.sites.size(), 2u);
    const auto& load = siteAt(k, s, "p[i]");
    EXPECT_EQ(load.array, "a");
    EXPECT_EQ(load.otherArrays, std::vector<std::string>{"b"});
    EXPECT_EQ(load.contexts, 2);
    EXPECT_EQ(load.function, "load");
    ASSERT_EQ(load.callPath.size(), 1u);
    EXPECT_EQ(load.callPath[0].call.line, s.find("load(a, i)").first);
    // The two calls index differently: the merge is unknown.
    EXPECT_EQ(load.index.kind, ki::IndexKind::Unknown);
    const auto& put = siteAt(k, s, "p[i] = v");
    EXPECT_EQ(put.array, "out");
    EXPECT_EQ(put.access, ki::AccessMode::Write);
    EXPECT_EQ(put.index.kind, ki::IndexKind::Affine);
    EXPECT_EQ(put.index.terms.size(), 2u);
    EXPECT_EQ(k.findArray("b")->mode, ki::AccessMode::Read);
    EXPECT_EQ(an->kernels()[0].helpersWithArrays.size(), 2u);
}

TEST(Frontend, TemplateInstantiationsShareSiteIds) {
    REQUIRE_CUDA();
    Snippet s(std::string(kHeader) + R"(
template <typename T, int B>
__global__ void k(const T* in, T* out) {
    __shared__ T buf[B];
    buf[threadIdx.x] = in[blockIdx.x * B + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * B + threadIdx.x] = buf[B - 1 - threadIdx.x];
}
template <typename T> __global__ void unused(T* p) { p[0] = T(); }
int main() {
    float* f; double* d;
    cudaMalloc(&f, 1024 * sizeof(float));
    cudaMalloc(&d, 1024 * sizeof(double));
    k<float, 128><<<8, 128>>>(f, f);
    k<double, 64><<<16, 64>>>(d, d);
}
)");
    auto an = s.analyze();
    ASSERT_TRUE(an);
    const auto& kf = kernel(*an, "k<float, 128>");
    const auto& kd = kernel(*an, "k<double, 64>");
    ASSERT_EQ(kf.sites.size(), 4u);
    ASSERT_EQ(kd.sites.size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(kf.sites[i].id, kd.sites[i].id);
        EXPECT_EQ(kf.sites[i].location, kd.sites[i].location);
    }
    EXPECT_EQ(kf.findArray("in")->elementType, "float");
    EXPECT_EQ(kd.findArray("in")->elementSize, 8u);
    EXPECT_EQ(kf.findArray("buf")->extent.bytes, 512u);
    EXPECT_EQ(kd.findArray("buf")->extent.bytes, 512u);
    EXPECT_EQ(kf.templateArgs, (std::vector<std::string>{"float", "128"}));
    EXPECT_EQ(siteAt(kf, s, "in[blockIdx").index.terms[1].coeff, poly("128"));
    // Aliasing: the launch passes f twice.
    ASSERT_FALSE(kf.hazards.empty());
    EXPECT_EQ(kf.hazards[0].kind, ki::HazardKind::Aliasing);
    EXPECT_FALSE(kf.findArray("in")->feasible.contains(Place::Texture));
    EXPECT_EQ(kf.launches.size(), 1u);
    EXPECT_EQ(kf.launches[0].block.value, (std::vector<int64_t>{128, 1, 1}));
    bool warned = false;
    for (const auto& d : an->warnings().all()) {
        warned = warned || d.message.find("'unused' is never launched") != std::string::npos;
    }
    EXPECT_TRUE(warned);
}

TEST(Frontend, GlobalsSharedArraysLaunchesAndExtents) {
    REQUIRE_CUDA();
    Snippet s(std::string(kHeader) + R"(
__constant__ float coef[4];
__device__ int table[100000];
__global__ void k(int n, const int* in, int* out) {
    extern __shared__ int scratch[];
    __shared__ float tile[8][9];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.y][threadIdx.x] = coef[i % 4];
    scratch[threadIdx.x] = table[in[i]];
    atomicAdd(&out[0], scratch[threadIdx.x] + (int)tile[0][threadIdx.x]);
}
int main() {
    int n = 1 << 12;
    int* din; int* dout;
    size_t bytes = n * sizeof(int);
    cudaMalloc(&din, bytes);
    cudaMalloc(&dout, sizeof(int));
    dim3 block(32, 4);
    k << < n / 128, block, 128 * sizeof(int) >> > (n, din, dout);
}
)");
    auto an = s.analyze();
    ASSERT_TRUE(an);
    const auto& k = kernel(*an, "k");
    ASSERT_EQ(k.arrays.size(), 6u);
    EXPECT_EQ(k.arrays[0].name, "in");
    EXPECT_EQ(k.arrays[0].extent.bytes, 16384u);
    EXPECT_EQ(k.arrays[1].name, "out");
    EXPECT_EQ(k.arrays[1].mode, ki::AccessMode::Atomic);
    EXPECT_EQ(k.arrays[1].extent.bytes, 4u);
    EXPECT_EQ(k.arrays[2].name, "coef");
    EXPECT_EQ(k.arrays[2].kind, ki::ArrayKind::ConstantGlobal);
    EXPECT_EQ(k.arrays[3].name, "table");
    EXPECT_EQ(k.arrays[3].extent.bytes, 400000u);
    EXPECT_FALSE(k.arrays[3].feasible.contains(Place::Constant));
    EXPECT_EQ(k.arrays[4].name, "scratch");
    EXPECT_EQ(k.arrays[4].extent.bytes, 512u);
    EXPECT_EQ(k.arrays[5].name, "tile");
    EXPECT_EQ(k.arrays[5].dims, (std::vector<uint64_t>{8, 9}));
    const auto& t = siteAt(k, s, "tile[threadIdx.y]");
    EXPECT_EQ(t.subscripts.size(), 2u);
    EXPECT_EQ(t.index.terms[0].coeff, poly("1"));
    EXPECT_EQ(t.index.terms[1].coeff, poly("9"));
    const auto& tab = siteAt(k, s, "table[in");
    EXPECT_EQ(tab.index.kind, ki::IndexKind::Indirect);
    const auto& at = siteAt(k, s, "atomicAdd(&out");
    EXPECT_EQ(at.access, ki::AccessMode::Atomic);
    EXPECT_EQ(at.form, ki::SiteForm::PointerOffset);
    EXPECT_EQ(at.intrinsic, "atomicAdd");
    ASSERT_EQ(k.launches.size(), 1u);
    EXPECT_EQ(k.launches[0].grid.value, (std::vector<int64_t>{32, 1, 1}));
    EXPECT_EQ(k.launches[0].block.value, (std::vector<int64_t>{32, 4, 1}));
    EXPECT_EQ(k.launches[0].sharedBytes.value, (std::vector<int64_t>{512}));
    EXPECT_EQ(k.launches[0].sharedBytes.text, "128 * sizeof(int)");
}

/// The global of `k` named `name`, or null.
const ki::GlobalAccess* globalOf(const ki::KernelInfo& k, const std::string& name) {
    for (const auto& g : k.globals) {
        if (g.name == name) {
            return &g;
        }
    }
    return nullptr;
}

TEST(Frontend, GlobalsAccessedByNameForAliasing) {
    REQUIRE_CUDA();
    Snippet s(std::string(kHeader) + R"(
__device__ float g_arr[256];
__device__ float g_read[256];
__device__ unsigned g_count;
namespace ns { __device__ float g_ns[8]; }
struct P { float x[4]; };
__device__ P g_struct;
__device__ float g_help[16];
__device__ void put(int i, float v) { g_help[i] = v; }
__device__ void inc(unsigned* c) { atomicAdd(c, 1u); }
__global__ void k(const float* in, float* out) {
    int i = threadIdx.x;
    g_arr[i] = in[i];
    out[i] = g_read[i];
    atomicAdd(&g_count, 1u);
    ns::g_ns[i] = 0;
    g_struct.x[i] = 1;
    put(i, 2);
    float* p = g_read;
    p[i] = 3;
}
__global__ void only_reads(float* out) { out[threadIdx.x] = g_read[threadIdx.x]; }
__global__ void helper_ptr() { inc(&g_count); }
)");
    auto an = s.analyze();
    ASSERT_TRUE(an);
    const auto& k = kernel(*an, "k");
    for (const char* name : {"g_arr", "g_count", "ns::g_ns", "g_struct", "g_help"}) {
        const ki::GlobalAccess* g = globalOf(k, name);
        ASSERT_NE(g, nullptr) << name;
        EXPECT_TRUE(g->written) << name;
    }
    EXPECT_FALSE(globalOf(k, "g_arr")->managed);
    // Read by name, then written through a local pointer initialised from it.
    ASSERT_NE(globalOf(k, "g_read"), nullptr);
    EXPECT_TRUE(globalOf(k, "g_read")->written);
    EXPECT_EQ(globalOf(k, "g_read")->location.line, s.find("p[i] = 3").first);
    EXPECT_EQ(globalOf(k, "g_arr")->location.line, s.find("g_arr[i] = in").first);
    EXPECT_TRUE(k.unknownWrites.empty());
    const auto& r = kernel(*an, "only_reads");
    ASSERT_EQ(r.globals.size(), 1u);
    EXPECT_FALSE(r.globals[0].written);
    // A pointer parameter of a helper: its argument says what it points into.
    const auto& h = kernel(*an, "helper_ptr");
    ASSERT_NE(globalOf(h, "g_count"), nullptr);
    EXPECT_TRUE(globalOf(h, "g_count")->written);
    EXPECT_TRUE(h.unknownWrites.empty());

    // The JSON round trip keeps them.
    auto back = ki::fileInfoFromJson(nlohmann::json::parse(ki::toJson(an->info()).dump()));
    ASSERT_TRUE(back.ok()) << back.message();
    ASSERT_EQ(back->kernels.size(), an->info().kernels.size());
    for (size_t i = 0; i < back->kernels.size(); ++i) {
        EXPECT_EQ(back->kernels[i].globals, an->info().kernels[i].globals);
        EXPECT_EQ(back->kernels[i].unknownWrites, an->info().kernels[i].unknownWrites);
        EXPECT_EQ(back->kernels[i].unknownReads, an->info().kernels[i].unknownReads);
    }
}

TEST(Frontend, WritesThroughPointersWhoseTargetIsUnknown) {
    REQUIRE_CUDA();
    Snippet s(std::string(kHeader) + R"(
struct T { float* p; };
__device__ float* g_ptr;
__device__ void opaque(float* p);
__global__ void member(const float* in, T t) { t.p[threadIdx.x] = in[threadIdx.x]; }
__global__ void devptr(const float* in) { g_ptr[threadIdx.x] = in[threadIdx.x]; }
__global__ void loaded(float** rows, const float* in) { rows[1][threadIdx.x] = in[0]; }
__global__ void arrow(const float* in, T* ts) { ts[0].p[0] = in[0]; }
__global__ void escaped(float* out) { float* q = out + 1; opaque(q); }
__global__ void reads(float* out, T t) { out[threadIdx.x] = t.p[threadIdx.x]; }
__global__ void known(const float* in, float* out) {
    float local[4];
    float* p = out + threadIdx.x;
    float* q = threadIdx.x ? p : local;
    *q = in[0];
    local[threadIdx.x & 3] = 1;
    __shared__ float tile[32];
    float* s = tile;
    s[threadIdx.x] = 2;
    out[0] = local[0] + tile[0];
}
)");
    auto an = s.analyze();
    ASSERT_TRUE(an);
    for (const char* name : {"member", "devptr", "loaded", "arrow"}) {
        const auto& k = kernel(*an, name);
        ASSERT_EQ(k.unknownWrites.size(), 1u) << name;
    }
    EXPECT_NE(kernel(*an, "member").unknownWrites[0].find("structure member"), std::string::npos);
    EXPECT_NE(kernel(*an, "devptr").unknownWrites[0].find("__device__ pointer 'g_ptr'"),
              std::string::npos);
    EXPECT_NE(kernel(*an, "loaded").unknownWrites[0].find("read from memory"), std::string::npos);
    // A pointer into a parameter handed to a function whose body is not visible: the
    // parameter's hazard covers it (the runtime sees the parameter).
    EXPECT_TRUE(kernel(*an, "escaped").unknownWrites.empty());
    const auto& r = kernel(*an, "reads");
    EXPECT_TRUE(r.unknownWrites.empty());
    ASSERT_EQ(r.unknownReads.size(), 1u);
    const auto& k = kernel(*an, "known");
    EXPECT_TRUE(k.unknownWrites.empty()) << k.unknownWrites[0];
    EXPECT_TRUE(k.unknownReads.empty());
    EXPECT_TRUE(k.globals.empty());
}

TEST(Frontend, RewriterRanges) {
    REQUIRE_CUDA();
    Snippet s(std::string(kHeader) + R"(
template <typename T>
__global__ void scale(int n, T f, const T* __restrict__ x, T* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = f * x[i];
    atomicAdd(y + 1, x[0]);
}
int main() {
    float* d;
    scale<float> << < 4, 256 >> > (1024, 2.0f, d, d);
}
)");
    auto an = s.analyze();
    ASSERT_TRUE(an);
    ASSERT_EQ(an->kernels().size(), 1u);
    const KernelSource& ks = an->kernels()[0];
    EXPECT_NE(ks.templ, nullptr);
    EXPECT_EQ(rangeText(*an, ks.templateParams), "template <typename T>");
    EXPECT_EQ(rangeText(*an, ks.paramList), "(int n, T f, const T* __restrict__ x, T* y)");
    ASSERT_EQ(ks.params.size(), 4u);
    EXPECT_EQ(rangeText(*an, ks.params[2]), "const T* __restrict__ x");
    EXPECT_EQ(rangeText(*an, ks.declaration).rfind("__global__ void scale(", 0), 0u);
    EXPECT_EQ(rangeText(*an, ks.body).front(), '{');
    EXPECT_EQ(rangeText(*an, ks.body).back(), '}');
    ASSERT_EQ(ks.sites.size(), 4u);
    EXPECT_EQ(rangeText(*an, ks.sites[0].indices[0]), "i");
    EXPECT_EQ(rangeText(*an, ks.sites[0].access), "y[i]");
    EXPECT_EQ(rangeText(*an, ks.sites[0].base), "y");
    EXPECT_TRUE(ks.sites[0].rewritable);
    EXPECT_EQ(rangeText(*an, ks.sites[2].access), "atomicAdd(y + 1, x[0])");
    EXPECT_EQ(rangeText(*an, ks.sites[2].indices[0]), "1");
    ASSERT_EQ(ks.launches.size(), 1u);
    const LaunchSource& l = ks.launches[0];
    EXPECT_EQ(rangeText(*an, l.callee), "scale<float>");
    EXPECT_EQ(rangeText(*an, l.config), "<<<  4, 256 >>>"); // normalised in memory
    EXPECT_EQ(rangeText(*an, l.grid), "4");
    EXPECT_EQ(rangeText(*an, l.block), "256");
    EXPECT_FALSE(l.sharedBytes.isValid());
    EXPECT_EQ(rangeText(*an, l.argsParens), "(1024, 2.0f, d, d)");
    ASSERT_EQ(l.args.size(), 4u);
    EXPECT_EQ(rangeText(*an, l.args[3]), "d");
    // The file on disk is untouched.
    std::ifstream in(s.path());
    std::string disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(disk.find("<< <"), std::string::npos);
    EXPECT_EQ(disk.size(), an->parsedSource().size());
}

TEST(Frontend, UnparsableFileFailsWithClangsDiagnostics) {
    REQUIRE_CUDA();
    Snippet s(std::string(kHeader) + R"(
__global__ void k(float* a) {
    a[threadIdx.x] = undefined_thing;
}
)");
    AnalyzeOptions o;
    o.file = s.path();
    auto r = analyze(o);
    ASSERT_FALSE(r.ok());
    std::string msg = r.message();
    EXPECT_NE(msg.find(s.path() + ":4:22: error: use of undeclared identifier 'undefined_thing'"),
              std::string::npos)
        << msg;
}

// What nvcc parses, clang parses too (issue 29 item 3): host code calling max/min on floats
// (nvcc's host headers declare those overloads, clang's CUDA headers only for device code), with
// std::max and `using namespace std` beside them; and a file including <omp.h> (gcc's, where
// nvcc's host compiler finds it), when this machine has one.
TEST(Frontend, HostMaxMinAndOpenMpHeaderParseAsUnderNvcc) {
    REQUIRE_CUDA();
    Snippet s(std::string(kHeader) + R"(
#include <algorithm>
using namespace std;
__global__ void k(float* y) { y[threadIdx.x] = max(y[threadIdx.x], 0.0f) + min(1, 2); }
int main() {
    float a = 1.5f, b = 2.5f;
    float c = max(a, b) + min(a, b) + std::max(a, b);
    long l = max(3L, 4L);
    unsigned u = min(3u, 4);
    double d = max(1.0, 2.0f);
    k<<<1, 32>>>(nullptr);
    return static_cast<int>(c + l + u + d);
}
)");
    auto a = s.analyze();
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->info().kernels.size(), 1u);
    if (findHostOpenMpIncludeDir().empty()) {
        GTEST_SKIP() << "no omp.h of gcc on this machine";
    }
    Snippet omp(std::string(kHeader) + R"(
#include <omp.h>
__global__ void k(float* y) { y[threadIdx.x] = 1.0f; }
int main() {
    float s = 0;
#pragma omp parallel for reduction(+ : s)
    for (int i = 0; i < omp_get_max_threads(); ++i) s += i;
    k<<<1, 32>>>(nullptr);
    return static_cast<int>(s);
}
)");
    auto b = omp.analyze();
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->info().kernels.size(), 1u);
}

// When clang still fails, a note names the construct and what to pass after `--`.
TEST(Frontend, ParseFailuresSuggestAWorkaround) {
    REQUIRE_CUDA();
    Snippet s(std::string(kHeader) + R"(
#include <no_such_header_here.h>
int main() { return 0; }
)");
    AnalyzeOptions o;
    o.file = s.path();
    auto r = analyze(o);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("note: 'no_such_header_here.h' is not on clang's include path"),
              std::string::npos)
        << r.message();
    EXPECT_NE(r.message().find("`-- -I<dir>`"), std::string::npos) << r.message();
}

// A 10,000-term sum used to overflow the stack in the recursive walk (issue 30): past the walk's
// depth limit the arrays used there stay home, with a warning naming file:line:col; the
// shallower accesses are still analysed.
TEST(Frontend, DeeplyNestedExpressionKeepsItsArraysHome) {
    REQUIRE_CUDA();
    std::string sum = "a[0]";
    for (int i = 1; i < 10000; ++i) {
        sum += " + a[" + std::to_string(i % 7) + "]";
    }
    Snippet s(std::string(kHeader) + "__global__ void k(const float* a, const float* b, float* " +
              "out) {\n    out[threadIdx.x] = b[threadIdx.x] * (" + sum + ");\n}\n");
    auto an = s.analyze();
    ASSERT_TRUE(an);
    const auto& k = kernel(*an, "k");
    EXPECT_EQ(k.findArray("a")->feasible, PlaceSet{Place::Global});
    EXPECT_NE(k.findArray("b")->feasible, PlaceSet{Place::Global}); // analysed as usual
    bool warned = false;
    for (const auto& d : an->warnings().all()) {
        const std::string text = d.format();
        warned = warned || (text.find(s.path() + ":3:") != std::string::npos &&
                            text.find("'a' is used in code nested more than") != std::string::npos);
    }
    EXPECT_TRUE(warned);
}

TEST(Frontend, MissingFileAndMissingCuda) {
    AnalyzeOptions o;
    o.file = "/nonexistent/file.cu";
    EXPECT_FALSE(analyze(o).ok());
    Snippet s("__global__ void k() {}\n");
    o.file = s.path();
    o.extraArgs = {"--cuda-path=/nonexistent/cuda"};
    auto r = analyze(o);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("no CUDA installation at '/nonexistent/cuda'"), std::string::npos);
}

TEST(Frontend, ExtraArgumentsReachClang) {
    REQUIRE_CUDA();
    Snippet s(std::string(kHeader) + R"(
__global__ void k(float* a) { a[threadIdx.x * STRIDE] = 0; }
)");
    auto an = s.analyze({"-DSTRIDE=3"});
    ASSERT_TRUE(an);
    EXPECT_EQ(an->info().kernels[0].sites[0].index.terms[0].coeff, poly("3"));
}

} // namespace
} // namespace memplace::frontend

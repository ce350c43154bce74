// Just-in-time instantiation on the GPU (the GPU suite's gpu_jit: tests/gpu builds it,
// tests/runtime/jit_gpu.sh runs it): a kernel
// written as the rewriter writes one, with two descriptors: one whose placements are all
// compiled in (the specialised reference) and one that has only the JIT members, so that every
// other placement runs as an NVRTC instantiation. For each placement of a covering list (every
// array in every place it may take, a 2-D texture, a constant pool of the JIT module's own,
// more than 48 KB of shared staging, an L2 window, scalars between the arrays), the JIT launch
// must report dispatch "jit" and write bitwise what the specialised one writes. Then the
// background compilation (dynamic first, JIT after waitForJit), and a policy's jitPlacement. The
// kernel reads a __constant__ table of the program's (the JIT module's copy is refreshed before
// each of its launches: changed between launches here).
// Prints "jit origins: compiled=N cached=M": the script runs it twice and expects the second
// run to find everything in the disk cache, then once more after corrupting an entry.
// Exit: 0 pass, 1 fail, 77 no GPU.
// The program's own __constant__ data (k_scale, 16 bytes) comes first, as the rewriter writes it.
#define MEMPLACE_CONSTANT_POOL_BYTES (65536 - 16)
#include "memplace/memplace.cuh"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// The kernel, once: compiled here by nvcc, and its text (jit_gpu_kernel_source.h, which
// tests/gpu/CMakeLists.txt generates from the same file) handed to NVRTC through jitSource.
#include "jit_gpu_kernel.cuh"
#include "jit_gpu_kernel_source.h" // kJitGpuKernelText

using memplace::Place;
#define P(x) memplace::Place::x

// The placements: x, t, c, y. Every array in every place it may take at least once.
#define JIT_TEST_PLACEMENTS(X)                                                                     \
    X(ReadOnly, Global, Global, Global)                                                            \
    X(Texture, Texture, Constant, Shared)                                                          \
    X(Constant, ReadOnly, Shared, L2Persist)                                                       \
    X(Shared, Global, ReadOnly, Shared)                                                            \
    X(L2Persist, Texture, Texture, Global)                                                         \
    X(Global, Shared, Constant, L2Persist)                                                         \
    X(Texture, L2Persist, Shared, Global)                                                          \
    X(Shared, Constant, Global, Shared)
#define JIT_TEST_AS_PLACES(a, b, c, d) memplace::Places<P(a), P(b), P(c), P(d)>,
#define JIT_TEST_AS_VECTOR(a, b, c, d) {P(a), P(b), P(c), P(d)},

#define JIT_TEST_COMMON                                                                            \
    static constexpr const char* name = "jit_mix";                                                 \
    static constexpr int numArrays = 4;                                                            \
    static constexpr memplace::ArrayDesc arrays[4] = {                                             \
        {"x", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},                 \
        {"t", 4, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_2d, 2, 3},              \
        {"c", 5, sizeof(double), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},                \
        {"y", 6, sizeof(float), memplace::Mode::ReadWrite, memplace::kPlaces_rw, 1},               \
    };                                                                                             \
    using types = memplace::Types<const float, const float, const double, float>;                  \
    template <class... Acc>                                                                        \
    static auto kernel() {                                                                         \
        return &jit_mix<Acc...>;                                                                   \
    }                                                                                              \
    template <class A0, class A1, class A2, class A3>                                              \
    static void launch(dim3 g, dim3 b, size_t sh, cudaStream_t st, int n, float s, A0 x, int w,    \
                       A1 t, A2 c, A3 y) {                                                         \
        auto k = kernel<A0, A1, A2, A3>();                                                         \
        MEMPLACE_LAUNCH(k, g, b, sh, st, n, s, x, w, t, c, y);                                     \
    }

/// Every listed placement compiled in: the reference.
struct memplace_kernel_jit_mix_specialised {
    JIT_TEST_COMMON
    using compiled = memplace::Instantiations<JIT_TEST_PLACEMENTS(
        JIT_TEST_AS_PLACES) memplace::Places<P(Global), P(Global), P(Global), P(Global)>>;
};

/// Only the default compiled in, and the JIT members.
struct memplace_kernel_jit_mix {
    JIT_TEST_COMMON
    static constexpr const char* jitKernel = "jit_mix";
    static constexpr const char* jitTypes[4] = {"const float", "const float", "const double",
                                                "float"};
    static constexpr const char* jitConstants[1] = {"k_scale"};
    static const void* jitConstant(int k) {
        const void* const a[] = {&::k_scale};
        return a[k];
    }
    static constexpr const char* jitSource = kJitGpuKernelText;
};

namespace {

int failures = 0;
int compiledCount = 0;
int cachedCount = 0;

void check(bool ok, const std::string& what) {
    if (!ok) {
        std::printf("FAIL %s\n", what.c_str());
        ++failures;
    }
}

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            std::printf("FAIL %s: %s\n", #call, cudaGetErrorString(e_));                           \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

constexpr int kN = 8192; // x and y: 32 KB each (x and y staged: more than 48 KB)
constexpr int kW = 64;   // t: 64 x 64
constexpr int kC = 64;   // c: 64 doubles

struct Buffers {
    float* x = nullptr;
    float* t = nullptr;
    double* c = nullptr;
    float* y = nullptr;
};

std::string text(const std::vector<Place>& p) {
    static const char* names[] = {"x", "t", "c", "y"};
    std::string s;
    for (std::size_t j = 0; j < p.size(); ++j) {
        s += (j ? "," : "") + std::string(names[j]) + "=" + std::string(memplace::placeName(p[j]));
    }
    return s;
}

void place(const std::vector<Place>& p) {
    memplace::setPlacement("jit_mix", {{"x", p[0]}, {"t", p[1]}, {"c", p[2]}, {"y", p[3]}});
}

template <class K>
std::vector<float> run(const Buffers& b, cudaStream_t stream, memplace::LaunchReport* rep) {
    CK(cudaMemsetAsync(b.y, 0x3f, kN * sizeof(float), stream));
    CK(memplace::launch<K>(kN / 256, 256, 0, stream, kN, 1.5f, b.x, kW, b.t, b.c, b.y));
    *rep = memplace::lastReport();
    std::vector<float> out(kN);
    CK(cudaMemcpyAsync(out.data(), b.y, kN * sizeof(float), cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    return out;
}

bool placedAsRequested(const memplace::LaunchReport& r) {
    for (const memplace::ArrayReport& a : r.arrays) {
        if (a.placed != a.requested) {
            std::printf("     %s fell back: %s\n", a.name.c_str(), a.fallback.c_str());
            return false;
        }
    }
    return true;
}

void countOrigin(const memplace::LaunchReport& r) {
    compiledCount += r.jit == "compiled" ? 1 : 0;
    cachedCount += r.jit == "cached" ? 1 : 0;
}

/// A policy that places the default and asks for a placement just in time.
struct JitPolicy : memplace::PlacementPolicy {
    memplace::Placement jit;
    memplace::Decision decide(const memplace::LaunchInfo& info) override {
        memplace::Decision d;
        d.kind = memplace::Decision::Kind::Place;
        d.placement.assign(info.arrays.size(), Place::Global);
        d.jitPlacement = jit;
        return d;
    }
};

} // namespace

int main() {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("SKIP: no GPU\n");
        return 77;
    }
    std::string why;
    if (!memplace::jitSupported(&why)) {
        std::printf("FAIL just-in-time instantiation unsupported: %s\n", why.c_str());
        return 1;
    }
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);

    Buffers b;
    CK(cudaMalloc(&b.x, kN * sizeof(float)));
    CK(cudaMalloc(&b.t, kW * kW * sizeof(float)));
    CK(cudaMalloc(&b.c, kC * sizeof(double)));
    CK(cudaMalloc(&b.y, kN * sizeof(float)));
    std::vector<float> hx(kN), ht(kW * kW);
    std::vector<double> hc(kC);
    for (int i = 0; i < kN; ++i) {
        hx[i] = static_cast<float>((i * 7919) % 1000) * 0.001f;
    }
    for (int i = 0; i < kW * kW; ++i) {
        ht[i] = static_cast<float>((i * 104729) % 977) * 0.01f;
    }
    for (int i = 0; i < kC; ++i) {
        hc[i] = 0.125 * i;
    }
    CK(cudaMemcpy(b.x, hx.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b.t, ht.data(), kW * kW * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b.c, hc.data(), kC * sizeof(double), cudaMemcpyHostToDevice));
    const float scale[4] = {1.0f, 0.5f, 2.0f, -1.0f};
    CK(cudaMemcpyToSymbol(k_scale, scale, sizeof scale));
    cudaStream_t stream = nullptr;
    CK(cudaStreamCreate(&stream));

    // The default placement: specialised in both descriptors.
    memplace::LaunchReport rep;
    const std::vector<float> reference = run<memplace_kernel_jit_mix_specialised>(b, stream, &rep);
    check(rep.dispatch == "specialized", "default placement: dispatch " + rep.dispatch);

    // 1. Synchronous compilation of every listed placement.
    memplace::setJitMode(memplace::JitMode::Always);
    memplace::setJitSynchronous(true);
    const std::vector<std::vector<Place>> placements = {JIT_TEST_PLACEMENTS(JIT_TEST_AS_VECTOR)};
    for (const auto& p : placements) {
        place(p);
        memplace::LaunchReport spec;
        memplace::LaunchReport jit;
        const std::vector<float> s = run<memplace_kernel_jit_mix_specialised>(b, stream, &spec);
        const std::vector<float> j = run<memplace_kernel_jit_mix>(b, stream, &jit);
        countOrigin(jit);
        const bool same = std::memcmp(s.data(), j.data(), kN * sizeof(float)) == 0;
        std::printf("%s %-50s specialised:%s jit:%s (%s, compile %.0f ms, load %.1f ms)\n",
                    same && jit.dispatch == "jit" ? "ok  " : "FAIL", text(p).c_str(),
                    spec.dispatch.c_str(), jit.dispatch.c_str(), jit.jit.c_str(), jit.jitCompileMs,
                    jit.jitLoadMs);
        check(spec.dispatch == "specialized", text(p) + ": the reference is not specialised");
        check(jit.dispatch == "jit",
              text(p) + ": dispatch " + jit.dispatch + " (" + jit.jit + ": " + jit.jitDetail + ")");
        check(placedAsRequested(jit) && placedAsRequested(spec), text(p) + ": fallbacks");
        check(same, text(p) + ": the JIT instantiation's output differs from the specialised");
        check(jit.status == cudaSuccess, text(p) + ": launch status");
        // A second launch: the loaded instantiation, nothing compiled.
        const std::vector<float> j2 = run<memplace_kernel_jit_mix>(b, stream, &jit);
        check(jit.dispatch == "jit" && jit.jit == "loaded",
              text(p) + ": second launch " + jit.dispatch + " " + jit.jit);
        check(std::memcmp(s.data(), j2.data(), kN * sizeof(float)) == 0,
              text(p) + ": second JIT launch differs");
    }
    // The program changes its __constant__ table: the JIT module's copy follows.
    {
        const float other[4] = {3.0f, -2.0f, 0.25f, 1.0f};
        CK(cudaMemcpyToSymbol(k_scale, other, sizeof other));
        memplace::LaunchReport spec;
        memplace::LaunchReport jit;
        const std::vector<float> s = run<memplace_kernel_jit_mix_specialised>(b, stream, &spec);
        const std::vector<float> j = run<memplace_kernel_jit_mix>(b, stream, &jit);
        check(jit.dispatch == "jit", "constant refresh: dispatch " + jit.dispatch);
        check(std::memcmp(s.data(), j.data(), kN * sizeof(float)) == 0,
              "constant refresh: the JIT module read a stale __constant__ table");
        const float scale[4] = {1.0f, 0.5f, 2.0f, -1.0f};
        CK(cudaMemcpyToSymbol(k_scale, scale, sizeof scale));
    }
    memplace::clearPlacements();

    // 2. Background compilation: dynamic while compiling, JIT once done.
    memplace::setJitSynchronous(false);
    const std::vector<Place> bg = {P(Texture), P(Global), P(Shared), P(Global)};
    place(bg);
    {
        memplace::LaunchReport r1;
        memplace::LaunchReport r2;
        const std::vector<float> d = run<memplace_kernel_jit_mix>(b, stream, &r1);
        memplace::waitForJit();
        const std::vector<float> j = run<memplace_kernel_jit_mix>(b, stream, &r2);
        countOrigin(r2);
        std::printf("background: first launch %s (%s), after waitForJit %s (%s)\n",
                    r1.dispatch.c_str(), r1.jit.c_str(), r2.dispatch.c_str(), r2.jit.c_str());
        check((r1.dispatch == "dynamic" && r1.jit == "pending") ||
                  (r1.dispatch == "jit" && r1.jit == "cached"),
              "background: first launch " + r1.dispatch + " " + r1.jit);
        check(r2.dispatch == "jit", "background: after waitForJit " + r2.dispatch);
        check(r1.jit == "cached" || r2.jitBackground, "background: compiled in the background");
        check(std::memcmp(d.data(), j.data(), kN * sizeof(float)) == 0,
              "background: dynamic and JIT outputs differ");
    }
    memplace::clearPlacements();

    // 3. A policy's jitPlacement: the decision (the default) until compiled, then the JIT one.
    memplace::setJitMode(memplace::JitMode::Auto);
    memplace::setJitSynchronous(true);
    auto policy = std::make_shared<JitPolicy>();
    policy->jit = {P(Constant), P(Texture), P(ReadOnly), P(Shared)};
    memplace::setPlacementPolicy(policy);
    {
        memplace::LaunchReport r;
        const std::vector<float> j = run<memplace_kernel_jit_mix>(b, stream, &r);
        countOrigin(r);
        std::printf(
            "policy: %s (%s) %s\n", r.dispatch.c_str(), r.jit.c_str(),
            text({r.arrays[0].placed, r.arrays[1].placed, r.arrays[2].placed, r.arrays[3].placed})
                .c_str());
        check(r.dispatch == "jit", "policy: dispatch " + r.dispatch + " " + r.jitDetail);
        check(std::memcmp(reference.data(), j.data(), kN * sizeof(float)) == 0 ||
                  r.dispatch != "jit",
              "policy: output differs from the default placement's");
    }
    memplace::setPlacementPolicy(nullptr);

    // Every placement computes what the default computes (up to float rounding: the constant
    // and texture paths return the same bits, so exactly).
    std::printf("jit origins: compiled=%d cached=%d\n", compiledCount, cachedCount);
    std::printf("%s\n", failures == 0 ? "PASS" : "FAIL");
    return failures == 0 ? 0 : 1;
}

// A first run that changes nothing (docs/placer.md, "First launch of a signature"): kernels
// whose traced launch would change the program's results if the tracing instantiation wrote the
// program's memory too, or whose outputs depend on how its threads interleave.
//   bump        updates its array in place (a[i] += 1): run twice on the same memory it would
//               add 2;
//   accumulate  updates a __device__ array by name (g_acc[i] += in[i]), which no argument can
//               redirect: run twice it would add twice;
//   row_sums    8 threads of a warp add to one element with a plain `+=` (a race, as in
//               PolyBench's atax and mvt): its result depends on how the 8 read-modify-writes
//               interleave, so a traced run, whose accesses meet at every load and store, differs
//               from the original's (on a GPU and under the CPU emulation layer).
// Each launch runs three times (a Placer traces the first and places the later ones). The
// program checks what it can compute (bump, accumulate); row_sums only goes into the hash.
// memplace: rewritten by `memplace rewrite` from shadow_trace.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
// The file declares 8 bytes of __constant__ data of its own: the constant pool
// gets the rest of the 64 KB.
#define MEMPLACE_CONSTANT_POOL_BYTES (65536 - (8 + 15) / 16 * 16)
#include "memplace/memplace.cuh"
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                \
    do {                                                                                \
        cudaError_t err_ = (call);                                                      \
        if (err_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

constexpr int N = 1024;
constexpr int GROUP = 8; // threads of a warp adding to one element of row_sums

__device__ float g_acc[N];

// In place: every element read, then written, by one thread.
template <class MP_a>
__global__ void bump(MP_a a, int n) {
    memplace::stage(a);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[memplace::at<0>(i)] += 1.0f;
    }
    }();
    memplace::unstage(a);
}

// memplace: what the runtime needs to know about kernel 'bump' (docs/rewrite-contract.md)
struct memplace_kernel_bump {
    static constexpr const char* name = "bump";
    static constexpr int numArrays = 1;
    static constexpr memplace::ArrayDesc arrays[1] = {
        {"a", 0, sizeof(float), memplace::Mode::ReadWrite, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<float>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "bump";
    static constexpr const char* jitTypes[1] = {"float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_a>
__global__ void bump(MP_a a, int n) {
    memplace::stage(a);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[memplace::at<0>(i)] += 1.0f;
    }
    }();
    memplace::unstage(a);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::bump<Acc...>; }
    template <class MP_a>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_a a, int n) {
        auto mp_kernel = kernel<MP_a>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, a, n);
    }
};

// A __device__ array updated by name, then read back into out.
template <class MP_in, class MP_out>
__global__ void accumulate(MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) {
        return;
    }
    g_acc[i] += in[memplace::at<2>(i)];
    out[memplace::at<3>(i)] = g_acc[i] * 2.0f;
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'accumulate' (docs/rewrite-contract.md)
struct memplace_kernel_accumulate {
    static constexpr const char* name = "accumulate";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"in", 0, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 1, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // The __device__ variables it accesses by name: an array that may share memory with one
    // of them stays where the program keeps it when either is written.
    static constexpr memplace::GlobalDesc globals[1] = {{"g_acc", memplace::Mode::ReadWrite}};
    static cudaError_t globalRange(int k, void** address, size_t* bytes) {
        switch (k) {
        case 0:
            return memplace::symbolRange(::g_acc, address, bytes);
        }
        return cudaErrorInvalidSymbol;
    }
    // Not compiled just in time: it uses the __device__ variable 'g_acc' (a just-in-time module
    // would have a copy of its own, and the kernel may write it). Placements not compiled in run
    // through the dynamic accessor.
    static constexpr const char* jitSource = nullptr;
    template <class... Acc>
    static auto kernel() { return &::accumulate<Acc...>; }
    template <class MP_in, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_in in, MP_out out) {
        auto mp_kernel = kernel<MP_in, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, in, out);
    }
};

// GROUP consecutive threads add to one element, not atomically.
template <class MP_A, class MP_y>
__global__ void row_sums(MP_A A, MP_y y) {
    memplace::stage(A, y);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) {
        return;
    }
    y[memplace::at<5>(i / GROUP)] += A[memplace::at<6>(i)];
    }();
    memplace::unstage(y);
}

// memplace: what the runtime needs to know about kernel 'row_sums' (docs/rewrite-contract.md)
struct memplace_kernel_row_sums {
    static constexpr const char* name = "row_sums";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"A", 0, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"y", 1, sizeof(float), memplace::Mode::ReadWrite, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "row_sums";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

constexpr int N = 1024;

constexpr int GROUP = 8;

template <class MP_A, class MP_y>
__global__ void row_sums(MP_A A, MP_y y) {
    memplace::stage(A, y);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) {
        return;
    }
    y[memplace::at<5>(i / GROUP)] += A[memplace::at<6>(i)];
    }();
    memplace::unstage(y);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::row_sums<Acc...>; }
    template <class MP_A, class MP_y>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_A A, MP_y y) {
        auto mp_kernel = kernel<MP_A, MP_y>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, A, y);
    }
};

static unsigned long long fnv1a(const void* data, size_t bytes,
                                unsigned long long h = 1469598103934665603ull) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

static std::vector<float> pattern(size_t n, float scale) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) {
        v[i] = static_cast<float>((i * 37) % 101 + 1) * scale;
    }
    return v;
}

static unsigned long long g_hash = 1469598103934665603ull;
static int g_bad = 0;

static void check(const char* what, const std::vector<float>& got, const std::vector<float>& want) {
    g_hash = fnv1a(got.data(), got.size() * sizeof(float), g_hash);
    for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] != want[i]) {
            if (g_bad++ < 5) {
                printf("FAIL %s[%zu] = %g, expected %g\n", what, i, got[i], want[i]);
            }
            return;
        }
    }
}

int main() {
    const dim3 grid(N / 256), block(256);
    const std::vector<float> base = pattern(N, 0.25f);
    float* dA;
    float* dIn;
    float* dOut;
    float* dY;
    CUDA_CHECK(cudaMalloc(&dA, N * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dIn, N * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dOut, N * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dY, N / GROUP * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dA, base.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dIn, base.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpyToSymbol(g_acc, base.data(), N * sizeof(float)));
    CUDA_CHECK(cudaMemset(dY, 0, N / GROUP * sizeof(float)));

    std::vector<float> a = base;   // bump's array, as the CPU computes it
    std::vector<float> acc = base; // g_acc
    std::vector<float> got(N);
    std::vector<float> want(N);
    for (int rep = 0; rep < 3; ++rep) {
        memplace::launch<memplace_kernel_bump>(grid, block, 0, 0, dA, N);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemcpy(got.data(), dA, N * sizeof(float), cudaMemcpyDeviceToHost));
        for (int i = 0; i < N; ++i) {
            a[i] += 1.0f;
        }
        check("bump.a", got, a);

        memplace::launch<memplace_kernel_accumulate>(grid, block, 0, 0, dIn, dOut);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemcpy(got.data(), dOut, N * sizeof(float), cudaMemcpyDeviceToHost));
        for (int i = 0; i < N; ++i) {
            acc[i] += base[i];
            want[i] = acc[i] * 2.0f;
        }
        check("accumulate.out", got, want);
        CUDA_CHECK(cudaMemcpyFromSymbol(got.data(), g_acc, N * sizeof(float)));
        check("accumulate.g_acc", got, acc);

        memplace::launch<memplace_kernel_row_sums>(grid, block, 0, 0, dA, dY);
        CUDA_CHECK(cudaGetLastError());
        std::vector<float> y(N / GROUP);
        CUDA_CHECK(cudaMemcpy(y.data(), dY, y.size() * sizeof(float), cudaMemcpyDeviceToHost));
        g_hash = fnv1a(y.data(), y.size() * sizeof(float), g_hash);
    }
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dIn));
    CUDA_CHECK(cudaFree(dOut));
    CUDA_CHECK(cudaFree(dY));
    printf("%s shadow_trace outputs %016llx\n", g_bad == 0 ? "PASS" : "FAIL", g_hash);
    return g_bad == 0 ? 0 : 1;
}

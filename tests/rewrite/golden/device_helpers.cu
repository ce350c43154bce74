// Kernels calling __device__ helpers: loads and stores through helper functions (one helper
// reached with two different arrays), a one-line index helper, and a helper handed a pointer
// into the middle of an array (pointer arithmetic the analysis cannot follow).
// memplace: rewritten by `memplace rewrite` from device_helpers.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
#include "memplace/memplace.cuh"
#include <cmath>
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

static unsigned int g_seed = 6502u;
static float frand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return static_cast<float>(g_seed >> 8) * (1.0f / 16777216.0f);
}

__device__ __forceinline__ int global_id() { return blockIdx.x * blockDim.x + threadIdx.x; }

template <class MP_p>
__device__ float load(MP_p p, int i) { return p[memplace::at<0>(i)]; }

template <class MP_p>
__device__ void store(MP_p p, int i, float v) { p[memplace::at<1>(i)] = v; }

template <class MP_a, class MP_b>
__device__ float lerp_at(MP_a a, MP_b b, int i, float t) {
    return load(a, i) * (1.0f - t) + load(b, i) * t;
}

__device__ float row_sum(const float* row, int len) {
    float s = 0.0f;
    for (int k = 0; k < len; ++k) {
        s += row[k];
    }
    return s;
}

template <class MP_a, class MP_b, class MP_out>
__global__ void blend(int n, float t, MP_a a, MP_b b, MP_out out) {
    memplace::stage(a, b, out);
    [&]() {
    int i = global_id();
    if (i < n) {
        store(out, i, lerp_at(a, b, i, t));
    }
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'blend' (docs/rewrite-contract.md)
struct memplace_kernel_blend {
    static constexpr const char* name = "blend";
    static constexpr int numArrays = 3;
    static constexpr memplace::ArrayDesc arrays[3] = {
        {"a", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"b", 3, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 4, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::ReadOnly,
            memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "blend";
    static constexpr const char* jitTypes[3] = {"const float", "const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

__device__ __forceinline__ int global_id() { return blockIdx.x * blockDim.x + threadIdx.x; }

template <class MP_p>
__device__ float load(MP_p p, int i) { return p[memplace::at<0>(i)]; }

template <class MP_p>
__device__ void store(MP_p p, int i, float v) { p[memplace::at<1>(i)] = v; }

template <class MP_a, class MP_b>
__device__ float lerp_at(MP_a a, MP_b b, int i, float t) {
    return load(a, i) * (1.0f - t) + load(b, i) * t;
}

template <class MP_a, class MP_b, class MP_out>
__global__ void blend(int n, float t, MP_a a, MP_b b, MP_out out) {
    memplace::stage(a, b, out);
    [&]() {
    int i = global_id();
    if (i < n) {
        store(out, i, lerp_at(a, b, i, t));
    }
    }();
    memplace::unstage(out);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::blend<Acc...>; }
    template <class MP_a, class MP_b, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            float t, MP_a a, MP_b b, MP_out out) {
        auto mp_kernel = kernel<MP_a, MP_b, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, t, a, b, out);
    }
};

template <class MP_sums>
__global__ void row_sums(int rows, int cols, const float* m, MP_sums sums) {
    memplace::stage(sums);
    [&]() {
    int r = global_id();
    if (r < rows) {
        sums[memplace::at<2>(r)] = row_sum(m + r * cols, cols);
    }
    }();
    memplace::unstage(sums);
}

// memplace: what the runtime needs to know about kernel 'row_sums' (docs/rewrite-contract.md)
struct memplace_kernel_row_sums {
    static constexpr const char* name = "row_sums";
    static constexpr int numArrays = 1;
    static constexpr memplace::ArrayDesc arrays[1] = {
        {"sums", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<float>;
    // It reads through a pointer whose target is unknown: no written array leaves where the
    // program keeps it (but for global and l2persist).
    static constexpr const char* unknownReads =
        "the parameter 'm', left a raw pointer";
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "row_sums";
    static constexpr const char* jitTypes[1] = {"float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

__device__ __forceinline__ int global_id() { return blockIdx.x * blockDim.x + threadIdx.x; }

__device__ float row_sum(const float* row, int len) {
    float s = 0.0f;
    for (int k = 0; k < len; ++k) {
        s += row[k];
    }
    return s;
}

template <class MP_sums>
__global__ void row_sums(int rows, int cols, const float* m, MP_sums sums) {
    memplace::stage(sums);
    [&]() {
    int r = global_id();
    if (r < rows) {
        sums[memplace::at<2>(r)] = row_sum(m + r * cols, cols);
    }
    }();
    memplace::unstage(sums);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::row_sums<Acc...>; }
    template <class MP_sums>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            int rows, int cols, const float *m, MP_sums sums) {
        auto mp_kernel = kernel<MP_sums>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, rows, cols, m, sums);
    }
};

// FNV-1a over the bytes of the outputs: equal hashes mean bitwise-equal results.
static unsigned long long fnv1a(const void* data, size_t bytes,
                                unsigned long long h = 1469598103934665603ull) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

int main() {
    const int n = 50000;
    const int rows = 500;
    const int cols = n / rows;
    const float t = 0.25f;
    std::vector<float> a(n), b(n);
    for (int i = 0; i < n; ++i) {
        a[i] = frand();
        b[i] = frand();
    }
    float *da, *db, *dout, *dsums;
    CUDA_CHECK(cudaMalloc(&da, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&db, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dout, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dsums, rows * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dout, 0xFF, n * sizeof(float))); // poison the outputs
    CUDA_CHECK(cudaMemset(dsums, 0xFF, rows * sizeof(float)));

    memplace::launch<memplace_kernel_blend>((n + 255) / 256, 256, 0, 0, n, t, da, db, dout);
    memplace::launch<memplace_kernel_row_sums>((rows + 63) / 64, 64, 0, 0, rows, cols, dout, dsums);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> out(n), sums(rows);
    CUDA_CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(sums.data(), dsums, rows * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    double checksum = 0.0;
    for (int i = 0; i < n; ++i) {
        float ref = a[i] * (1.0f - t) + b[i] * t;
        if (std::fabs(out[i] - ref) > 1e-5f) {
            ++bad;
        }
    }
    for (int r = 0; r < rows; ++r) {
        double ref = 0.0;
        for (int c = 0; c < cols; ++c) {
            ref += out[r * cols + c];
        }
        if (std::fabs(sums[r] - ref) > 1e-3) {
            ++bad;
        }
        checksum += sums[r];
    }
    unsigned long long hash = fnv1a(out.data(), n * sizeof(float));
    hash = fnv1a(sums.data(), rows * sizeof(float), hash);
    printf("device_helpers: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL",
           checksum, hash);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dout);
    cudaFree(dsums);
    return bad == 0 ? 0 : 1;
}

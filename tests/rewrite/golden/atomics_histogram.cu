// Atomics: a histogram with global atomics, the same histogram privatised per block in
// __shared__ memory (shared atomics, then one global atomic per bin), and a global maximum.
// memplace: rewritten by `memplace rewrite` from atomics_histogram.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
#include "memplace/memplace.cuh"
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define BINS 64

#define CUDA_CHECK(call)                                                                \
    do {                                                                                \
        cudaError_t err_ = (call);                                                      \
        if (err_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static unsigned int g_seed = 2718u;
static unsigned int urand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}

template <class MP_data, class MP_bins>
__global__ void histogram_global(int n, MP_data data, MP_bins bins) {
    memplace::stage(data, bins);
    [&]() {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&bins[memplace::at<0>(data[memplace::at<1>(i)] % BINS)], 1u);
    }
    }();
    memplace::unstage(bins);
}

// memplace: what the runtime needs to know about kernel 'histogram_global' (docs/rewrite-contract.md)
struct memplace_kernel_histogram_global {
    static constexpr const char* name = "histogram_global";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"data", 1, sizeof(unsigned char), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"bins", 2, sizeof(unsigned int), memplace::Mode::ReadWrite, memplace::kPlaces_rw_noshared, 1},
    };
    using types = memplace::Types<const unsigned char, unsigned int>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "histogram_global";
    static constexpr const char* jitTypes[2] = {"const unsigned char", "unsigned int"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

#define BINS 64

template <class MP_data, class MP_bins>
__global__ void histogram_global(int n, MP_data data, MP_bins bins) {
    memplace::stage(data, bins);
    [&]() {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&bins[memplace::at<0>(data[memplace::at<1>(i)] % BINS)], 1u);
    }
    }();
    memplace::unstage(bins);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::histogram_global<Acc...>; }
    template <class MP_data, class MP_bins>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_data data, MP_bins bins) {
        auto mp_kernel = kernel<MP_data, MP_bins>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, data, bins);
    }
};

template <class MP_data, class MP_bins>
__global__ void histogram_shared(int n, MP_data data, MP_bins bins) {
    memplace::stage(data, bins);
    [&]() {
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        local[b] = 0;
    }
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&local[data[memplace::at<4>(i)] % BINS], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        atomicAdd(&bins[memplace::at<5>(b)], local[b]);
    }
    }();
    memplace::unstage(bins);
}

// memplace: what the runtime needs to know about kernel 'histogram_shared' (docs/rewrite-contract.md)
struct memplace_kernel_histogram_shared {
    static constexpr const char* name = "histogram_shared";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"data", 1, sizeof(unsigned char), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"bins", 2, sizeof(unsigned int), memplace::Mode::ReadWrite, memplace::kPlaces_rw_noshared, 1},
    };
    using types = memplace::Types<const unsigned char, unsigned int>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "histogram_shared";
    static constexpr const char* jitTypes[2] = {"const unsigned char", "unsigned int"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

#define BINS 64

template <class MP_data, class MP_bins>
__global__ void histogram_shared(int n, MP_data data, MP_bins bins) {
    memplace::stage(data, bins);
    [&]() {
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        local[b] = 0;
    }
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&local[data[memplace::at<4>(i)] % BINS], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        atomicAdd(&bins[memplace::at<5>(b)], local[b]);
    }
    }();
    memplace::unstage(bins);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::histogram_shared<Acc...>; }
    template <class MP_data, class MP_bins>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_data data, MP_bins bins) {
        auto mp_kernel = kernel<MP_data, MP_bins>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, data, bins);
    }
};

template <class MP_values, class MP_result>
__global__ void max_value(int n, MP_values values, MP_result result) {
    memplace::stage(values, result);
    [&]() {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicMax(&result[memplace::at<7>(0)], values[memplace::at<8>(i)]);
    }
    }();
    memplace::unstage(result);
}

// memplace: what the runtime needs to know about kernel 'max_value' (docs/rewrite-contract.md)
struct memplace_kernel_max_value {
    static constexpr const char* name = "max_value";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"values", 1, sizeof(int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"result", 2, sizeof(int), memplace::Mode::ReadWrite, memplace::kPlaces_rw_noshared, 1},
    };
    using types = memplace::Types<const int, int>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "max_value";
    static constexpr const char* jitTypes[2] = {"const int", "int"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_values, class MP_result>
__global__ void max_value(int n, MP_values values, MP_result result) {
    memplace::stage(values, result);
    [&]() {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicMax(&result[memplace::at<7>(0)], values[memplace::at<8>(i)]);
    }
    }();
    memplace::unstage(result);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::max_value<Acc...>; }
    template <class MP_values, class MP_result>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_values values, MP_result result) {
        auto mp_kernel = kernel<MP_values, MP_result>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, values, result);
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
    const int n = 1 << 18;
    std::vector<unsigned char> data(n);
    std::vector<int> values(n);
    for (int i = 0; i < n; ++i) {
        data[i] = static_cast<unsigned char>(urand() & 0xff);
        values[i] = static_cast<int>(urand() % 1000000);
    }
    unsigned char* ddata;
    unsigned int *dbins1, *dbins2;
    int *dvalues, *dmax;
    CUDA_CHECK(cudaMalloc(&ddata, n));
    CUDA_CHECK(cudaMalloc(&dbins1, BINS * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&dbins2, BINS * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&dvalues, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dmax, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(ddata, data.data(), n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dvalues, values.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dbins1, 0, BINS * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(dbins2, 0, BINS * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(dmax, 0, sizeof(int)));

    memplace::launch<memplace_kernel_histogram_global>(128, 256, 0, 0, n, ddata, dbins1);
    memplace::launch<memplace_kernel_histogram_shared>(128, 256, 0, 0, n, ddata, dbins2);
    memplace::launch<memplace_kernel_max_value>(128, 256, 0, 0, n, dvalues, dmax);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<unsigned int> bins1(BINS), bins2(BINS);
    int maxv = 0;
    CUDA_CHECK(cudaMemcpy(bins1.data(), dbins1, BINS * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(bins2.data(), dbins2, BINS * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&maxv, dmax, sizeof(int), cudaMemcpyDeviceToHost));
    std::vector<unsigned int> ref(BINS, 0);
    int refmax = 0;
    for (int i = 0; i < n; ++i) {
        ++ref[data[i] % BINS];
        refmax = values[i] > refmax ? values[i] : refmax;
    }
    int bad = maxv != refmax;
    unsigned long long checksum = 0;
    for (int b = 0; b < BINS; ++b) {
        bad += bins1[b] != ref[b];
        bad += bins2[b] != ref[b];
        checksum += static_cast<unsigned long long>(bins1[b]) * (b + 1);
    }
    // The bins and the maximum accumulate from zero: they cannot be poisoned, the hash covers
    // them all.
    unsigned long long hash = fnv1a(bins1.data(), BINS * sizeof(unsigned int));
    hash = fnv1a(bins2.data(), BINS * sizeof(unsigned int), hash);
    hash = fnv1a(&maxv, sizeof(maxv), hash);
    printf("atomics_histogram: %s checksum %llu max %d outputs %016llx\n",
           bad == 0 ? "PASS" : "FAIL", checksum, maxv, hash);
    cudaFree(ddata);
    cudaFree(dbins1);
    cudaFree(dbins2);
    cudaFree(dvalues);
    cudaFree(dmax);
    return bad == 0 ? 0 : 1;
}

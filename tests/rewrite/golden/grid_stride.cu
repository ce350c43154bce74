// Grid-stride loops: a fixed-size grid sweeps arrays longer than itself (saxpy, a sum of
// squares into per-block partials, and a while-loop copy).
// memplace: rewritten by `memplace rewrite` from grid_stride.cu: kernels are templates over
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

static unsigned int g_seed = 65535u;
static unsigned int urand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}

template <class MP_x, class MP_y>
__global__ void saxpy_grid_stride(int n, float a, MP_x x, MP_y y) {
    memplace::stage(x, y);
    [&]() {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[memplace::at<0>(i)] = a * x[memplace::at<1>(i)] + y[memplace::at<2>(i)];
    }
    }();
    memplace::unstage(y);
}

// memplace: what the runtime needs to know about kernel 'saxpy_grid_stride' (docs/rewrite-contract.md)
struct memplace_kernel_saxpy_grid_stride {
    static constexpr const char* name = "saxpy_grid_stride";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"x", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"y", 3, sizeof(float), memplace::Mode::ReadWrite, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "saxpy_grid_stride";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_x, class MP_y>
__global__ void saxpy_grid_stride(int n, float a, MP_x x, MP_y y) {
    memplace::stage(x, y);
    [&]() {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[memplace::at<0>(i)] = a * x[memplace::at<1>(i)] + y[memplace::at<2>(i)];
    }
    }();
    memplace::unstage(y);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::saxpy_grid_stride<Acc...>; }
    template <class MP_x, class MP_y>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            float a, MP_x x, MP_y y) {
        auto mp_kernel = kernel<MP_x, MP_y>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, a, x, y);
    }
};

template <class MP_x, class MP_partial>
__global__ void sum_squares_partial(int n, MP_x x, MP_partial partial) {
    memplace::stage(x, partial);
    [&]() {
    __shared__ float cache[256];
    float s = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        s += x[memplace::at<3>(i)] * x[memplace::at<4>(i)];
    }
    cache[threadIdx.x] = s;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            cache[threadIdx.x] += cache[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[memplace::at<8>(blockIdx.x)] = cache[0];
    }
    }();
    memplace::unstage(partial);
}

// memplace: what the runtime needs to know about kernel 'sum_squares_partial' (docs/rewrite-contract.md)
struct memplace_kernel_sum_squares_partial {
    static constexpr const char* name = "sum_squares_partial";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"x", 1, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"partial", 2, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "sum_squares_partial";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_x, class MP_partial>
__global__ void sum_squares_partial(int n, MP_x x, MP_partial partial) {
    memplace::stage(x, partial);
    [&]() {
    __shared__ float cache[256];
    float s = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        s += x[memplace::at<3>(i)] * x[memplace::at<4>(i)];
    }
    cache[threadIdx.x] = s;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            cache[threadIdx.x] += cache[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[memplace::at<8>(blockIdx.x)] = cache[0];
    }
    }();
    memplace::unstage(partial);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::sum_squares_partial<Acc...>; }
    template <class MP_x, class MP_partial>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_x x, MP_partial partial) {
        auto mp_kernel = kernel<MP_x, MP_partial>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, x, partial);
    }
};

template <class MP_src, class MP_dst>
__global__ void copy_while(int n, MP_src src, MP_dst dst) {
    memplace::stage(src, dst);
    [&]() {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int stride = blockDim.x * gridDim.x;
    while (i < static_cast<unsigned int>(n)) {
        dst[memplace::at<10>(i)] = src[memplace::at<11>(i)];
        i += stride;
    }
    }();
    memplace::unstage(dst);
}

// memplace: what the runtime needs to know about kernel 'copy_while' (docs/rewrite-contract.md)
struct memplace_kernel_copy_while {
    static constexpr const char* name = "copy_while";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"src", 1, sizeof(int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"dst", 2, sizeof(int), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const int, int>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "copy_while";
    static constexpr const char* jitTypes[2] = {"const int", "int"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_src, class MP_dst>
__global__ void copy_while(int n, MP_src src, MP_dst dst) {
    memplace::stage(src, dst);
    [&]() {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int stride = blockDim.x * gridDim.x;
    while (i < static_cast<unsigned int>(n)) {
        dst[memplace::at<10>(i)] = src[memplace::at<11>(i)];
        i += stride;
    }
    }();
    memplace::unstage(dst);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::copy_while<Acc...>; }
    template <class MP_src, class MP_dst>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_src src, MP_dst dst) {
        auto mp_kernel = kernel<MP_src, MP_dst>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, src, dst);
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
    const int n = 1 << 20;
    const int blocks = 64;
    const int threads = 256;
    std::vector<float> x(n), y(n);
    std::vector<int> src(n);
    for (int i = 0; i < n; ++i) {
        src[i] = static_cast<int>(urand() % 1000);
        x[i] = src[i] * (1.0f / 1024.0f);
        y[i] = 1.0f;
    }
    float *dx, *dy, *dpartial;
    int *dsrc, *ddst;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dpartial, blocks * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dsrc, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&ddst, n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dsrc, src.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dpartial, 0xFF, blocks * sizeof(float))); // poison the outputs
    CUDA_CHECK(cudaMemset(ddst, 0xFF, n * sizeof(int)));

    memplace::launch<memplace_kernel_saxpy_grid_stride>(blocks, threads, 0, 0, n, 3.0f, dx, dy);
    memplace::launch<memplace_kernel_sum_squares_partial>(blocks, threads, 0, 0, n, dx, dpartial);
    memplace::launch<memplace_kernel_copy_while>(blocks, threads, 0, 0, n, dsrc, ddst);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> yout(n), partial(blocks);
    std::vector<int> dst(n);
    CUDA_CHECK(cudaMemcpy(yout.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(partial.data(), dpartial, blocks * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(dst.data(), ddst, n * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    double squares = 0.0;
    for (int i = 0; i < n; ++i) {
        bad += std::fabs(yout[i] - (3.0f * x[i] + 1.0f)) > 1e-5f;
        bad += dst[i] != src[i];
        squares += static_cast<double>(x[i]) * x[i];
    }
    double sum = 0.0;
    for (float p : partial) {
        sum += p;
    }
    bad += std::fabs(sum - squares) > 1e-4 * squares;
    unsigned long long hash = fnv1a(yout.data(), n * sizeof(float));
    hash = fnv1a(partial.data(), blocks * sizeof(float), hash);
    hash = fnv1a(dst.data(), n * sizeof(int), hash);
    printf("grid_stride: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", sum,
           hash);
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(dpartial);
    cudaFree(dsrc);
    cudaFree(ddst);
    return bad == 0 ? 0 : 1;
}

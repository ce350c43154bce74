// 1-D indexing: the everyday shapes of one-dimensional kernels (unit stride, neighbours,
// stride 2, reversed). Checks every output against the CPU and prints a checksum.
// memplace: rewritten by `memplace rewrite` from vector_1d.cu: kernels are templates over
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

static unsigned int g_seed = 12345u;
static float frand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return static_cast<float>(g_seed >> 8) * (1.0f / 16777216.0f);
}

template <class MP_x, class MP_y>
__global__ void saxpy(int n, float a, MP_x x, MP_y y) {
    memplace::stage(x, y);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[memplace::at<0>(i)] = a * x[memplace::at<1>(i)] + y[memplace::at<2>(i)];
    }
    }();
    memplace::unstage(y);
}

// memplace: what the runtime needs to know about kernel 'saxpy' (docs/rewrite-contract.md)
struct memplace_kernel_saxpy {
    static constexpr const char* name = "saxpy";
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
    static constexpr const char* jitKernel = "saxpy";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_x, class MP_y>
__global__ void saxpy(int n, float a, MP_x x, MP_y y) {
    memplace::stage(x, y);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[memplace::at<0>(i)] = a * x[memplace::at<1>(i)] + y[memplace::at<2>(i)];
    }
    }();
    memplace::unstage(y);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::saxpy<Acc...>; }
    template <class MP_x, class MP_y>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            float a, MP_x x, MP_y y) {
        auto mp_kernel = kernel<MP_x, MP_y>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, a, x, y);
    }
};

// Neighbours: a 3-point average, copying the two ends.
template <class MP_in, class MP_out>
__global__ void smooth3(int n, MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) {
        out[memplace::at<3>(i)] = (in[memplace::at<4>(i - 1)] + in[memplace::at<5>(i)] + in[memplace::at<6>(i + 1)]) * (1.0f / 3.0f);
    } else if (i < n) {
        out[memplace::at<7>(i)] = in[memplace::at<8>(i)];
    }
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'smooth3' (docs/rewrite-contract.md)
struct memplace_kernel_smooth3 {
    static constexpr const char* name = "smooth3";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"in", 1, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 2, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "smooth3";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_in, class MP_out>
__global__ void smooth3(int n, MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) {
        out[memplace::at<3>(i)] = (in[memplace::at<4>(i - 1)] + in[memplace::at<5>(i)] + in[memplace::at<6>(i + 1)]) * (1.0f / 3.0f);
    } else if (i < n) {
        out[memplace::at<7>(i)] = in[memplace::at<8>(i)];
    }
    }();
    memplace::unstage(out);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::smooth3<Acc...>; }
    template <class MP_in, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_in in, MP_out out) {
        auto mp_kernel = kernel<MP_in, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, in, out);
    }
};

// Stride 2 and reversed.
template <class MP_in, class MP_even, class MP_rev>
__global__ void even_and_reverse(int n, MP_in in, MP_even even, MP_rev rev) {
    memplace::stage(in, even, rev);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 2) {
        even[memplace::at<9>(i)] = in[memplace::at<10>(2 * i)];
    }
    if (i < n) {
        rev[memplace::at<11>(i)] = in[memplace::at<12>(n - 1 - i)];
    }
    }();
    memplace::unstage(even, rev);
}

// memplace: what the runtime needs to know about kernel 'even_and_reverse' (docs/rewrite-contract.md)
struct memplace_kernel_even_and_reverse {
    static constexpr const char* name = "even_and_reverse";
    static constexpr int numArrays = 3;
    static constexpr memplace::ArrayDesc arrays[3] = {
        {"in", 1, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"even", 2, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
        {"rev", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global,
            memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "even_and_reverse";
    static constexpr const char* jitTypes[3] = {"const float", "float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_in, class MP_even, class MP_rev>
__global__ void even_and_reverse(int n, MP_in in, MP_even even, MP_rev rev) {
    memplace::stage(in, even, rev);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 2) {
        even[memplace::at<9>(i)] = in[memplace::at<10>(2 * i)];
    }
    if (i < n) {
        rev[memplace::at<11>(i)] = in[memplace::at<12>(n - 1 - i)];
    }
    }();
    memplace::unstage(even, rev);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::even_and_reverse<Acc...>; }
    template <class MP_in, class MP_even, class MP_rev>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_in in, MP_even even, MP_rev rev) {
        auto mp_kernel = kernel<MP_in, MP_even, MP_rev>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, in, even, rev);
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
    const int n = 1 << 16;
    std::vector<float> hx(n), hy(n);
    for (int i = 0; i < n; ++i) {
        hx[i] = frand();
        hy[i] = frand();
    }
    float *dx, *dy, *dsmooth, *deven, *drev;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dsmooth, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&deven, n / 2 * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&drev, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dy, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    // Poison the outputs: an element a kernel fails to write shows in the hash.
    CUDA_CHECK(cudaMemset(dsmooth, 0xFF, n * sizeof(float)));
    CUDA_CHECK(cudaMemset(deven, 0xFF, n / 2 * sizeof(float)));
    CUDA_CHECK(cudaMemset(drev, 0xFF, n * sizeof(float)));

    memplace::launch<memplace_kernel_saxpy>((n + 255) / 256, 256, 0, 0, n, 2.0f, dx, dy);
    memplace::launch<memplace_kernel_smooth3>((n + 127) / 128, 128, 0, 0, n, dy, dsmooth);
    memplace::launch<memplace_kernel_even_and_reverse>((n + 255) / 256, 256, 0, 0, n, dsmooth,
        deven, drev);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> even(n / 2), rev(n);
    CUDA_CHECK(cudaMemcpy(even.data(), deven, n / 2 * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(rev.data(), drev, n * sizeof(float), cudaMemcpyDeviceToHost));

    std::vector<float> gy(n), gsmooth(n);
    CUDA_CHECK(cudaMemcpy(gy.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gsmooth.data(), dsmooth, n * sizeof(float), cudaMemcpyDeviceToHost));
    unsigned long long hash = fnv1a(gy.data(), n * sizeof(float));
    hash = fnv1a(gsmooth.data(), n * sizeof(float), hash);
    hash = fnv1a(even.data(), n / 2 * sizeof(float), hash);
    hash = fnv1a(rev.data(), n * sizeof(float), hash);

    std::vector<float> y(n), smooth(n);
    for (int i = 0; i < n; ++i) {
        y[i] = 2.0f * hx[i] + hy[i];
    }
    for (int i = 0; i < n; ++i) {
        smooth[i] = (i > 0 && i < n - 1) ? (y[i - 1] + y[i] + y[i + 1]) * (1.0f / 3.0f) : y[i];
    }
    int bad = 0;
    double checksum = 0.0;
    for (int i = 0; i < n; ++i) {
        if (i < n / 2 && std::fabs(even[i] - smooth[2 * i]) > 1e-5f) {
            ++bad;
        }
        if (std::fabs(rev[i] - smooth[n - 1 - i]) > 1e-5f) {
            ++bad;
        }
        checksum += rev[i] + (i < n / 2 ? even[i] : 0.0f);
    }
    printf("vector_1d: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", checksum,
           hash);
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(dsmooth);
    cudaFree(deven);
    cudaFree(drev);
    return bad == 0 ? 0 : 1;
}

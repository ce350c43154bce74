// Host code calling max/min on floats and ints, as nvcc accepts (its host headers declare these
// overloads; clang-19's CUDA headers only for device code): the frontend's shim makes clang parse
// it too. The kernel clamps with the device overloads. Checks against the CPU, prints a checksum.
// memplace: rewritten by `memplace rewrite` from host_minmax.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
#include "memplace/memplace.cuh"
#include <algorithm>
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

template <class MP_x, class MP_y>
__global__ void clampScale(int n, float lo, float hi, MP_x x, MP_y y) {
    memplace::stage(x, y);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[memplace::at<0>(i)] = min(max(x[memplace::at<1>(i)], lo), hi) * 2.0f;
    }
    }();
    memplace::unstage(y);
}

// memplace: what the runtime needs to know about kernel 'clampScale' (docs/rewrite-contract.md)
struct memplace_kernel_clampScale {
    static constexpr const char* name = "clampScale";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"x", 3, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"y", 4, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "clampScale";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_x, class MP_y>
__global__ void clampScale(int n, float lo, float hi, MP_x x, MP_y y) {
    memplace::stage(x, y);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[memplace::at<0>(i)] = min(max(x[memplace::at<1>(i)], lo), hi) * 2.0f;
    }
    }();
    memplace::unstage(y);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::clampScale<Acc...>; }
    template <class MP_x, class MP_y>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            float lo, float hi, MP_x x, MP_y y) {
        auto mp_kernel = kernel<MP_x, MP_y>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, lo, hi, x, y);
    }
};

static unsigned long long fnv1a(const void* data, size_t bytes) {
    unsigned long long h = 1469598103934665603ull;
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

int main() {
    const int n = 5000;
    std::vector<float> hx(n);
    float lo = 1e30f, hi = -1e30f;
    for (int i = 0; i < n; ++i) {
        hx[i] = static_cast<float>((i * 7919) % 1000) * 0.01f - 5.0f;
        lo = min(lo, hx[i]); // host max/min on floats: nvcc's host overloads
        hi = max(hi, hx[i]);
    }
    lo = max(lo * 0.5f, -2.0f);
    hi = std::min(hi * 0.5f, 2.0f);
    const int block = max(32, min(256, n / 8)); // host max/min on ints
    const int grid = (n + block - 1) / block;
    float *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dy, 0xFF, n * sizeof(float)));
    memplace::launch<memplace_kernel_clampScale>(grid, block, 0, 0, n, lo, hi, dx, dy);
    CUDA_CHECK(cudaGetLastError());
    std::vector<float> hy(n);
    CUDA_CHECK(cudaMemcpy(hy.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        float c = hx[i] < lo ? lo : (hx[i] > hi ? hi : hx[i]);
        bad += hy[i] != c * 2.0f;
    }
    printf("host_minmax: %s, outputs %016llx\n", bad == 0 ? "PASS" : "FAIL",
           fnv1a(hy.data(), n * sizeof(float)));
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
    return bad == 0 ? 0 : 1;
}

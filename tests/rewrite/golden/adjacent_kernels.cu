// Kernels written back to back, with no blank line between one kernel's closing brace and the
// next kernel's header: the rewriter must close the first kernel (its descriptor) before it
// opens the second (its template header). Checks every output against the CPU and prints a
// checksum.
// memplace: rewritten by `memplace rewrite` from adjacent_kernels.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
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

static unsigned int g_seed = 424242u;
static float frand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return static_cast<float>(g_seed >> 8) * (1.0f / 16777216.0f);
}

template <class MP_x, class MP_y>
__global__ void scale(int n, float a, MP_x x, MP_y y) {
    memplace::stage(x, y);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[memplace::at<0>(i)] = a * x[memplace::at<1>(i)];
    }
    }();
    memplace::unstage(y);
}

// memplace: what the runtime needs to know about kernel 'scale' (docs/rewrite-contract.md)
struct memplace_kernel_scale {
    static constexpr const char* name = "scale";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"x", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"y", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "scale";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_x, class MP_y>
__global__ void scale(int n, float a, MP_x x, MP_y y) {
    memplace::stage(x, y);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[memplace::at<0>(i)] = a * x[memplace::at<1>(i)];
    }
    }();
    memplace::unstage(y);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::scale<Acc...>; }
    template <class MP_x, class MP_y>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            float a, MP_x x, MP_y y) {
        auto mp_kernel = kernel<MP_x, MP_y>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, a, x, y);
    }
};
template <class MP_y, class MP_z>
__global__ void shift(int n, MP_y y, MP_z z) {
    memplace::stage(y, z);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        z[memplace::at<2>(i)] = y[memplace::at<3>(i)] + 1.0f;
    }
    }();
    memplace::unstage(z);
}

// memplace: what the runtime needs to know about kernel 'shift' (docs/rewrite-contract.md)
struct memplace_kernel_shift {
    static constexpr const char* name = "shift";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"y", 1, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"z", 2, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "shift";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_y, class MP_z>
__global__ void shift(int n, MP_y y, MP_z z) {
    memplace::stage(y, z);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        z[memplace::at<2>(i)] = y[memplace::at<3>(i)] + 1.0f;
    }
    }();
    memplace::unstage(z);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::shift<Acc...>; }
    template <class MP_y, class MP_z>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_y y, MP_z z) {
        auto mp_kernel = kernel<MP_y, MP_z>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, y, z);
    }
};
// A comment between two kernels.
template <class MP_x, class MP_z, class MP_w>
__global__ void mix(int n, MP_x x, MP_z z, MP_w w) {
    memplace::stage(x, z, w);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        w[memplace::at<4>(i)] = x[memplace::at<5>(i)] - z[memplace::at<6>((i + 1) % n)];
    }
    }();
    memplace::unstage(w);
}

// memplace: what the runtime needs to know about kernel 'mix' (docs/rewrite-contract.md)
struct memplace_kernel_mix {
    static constexpr const char* name = "mix";
    static constexpr int numArrays = 3;
    static constexpr memplace::ArrayDesc arrays[3] = {
        {"x", 1, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"z", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"w", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
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
    static constexpr const char* jitKernel = "mix";
    static constexpr const char* jitTypes[3] = {"const float", "const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_x, class MP_z, class MP_w>
__global__ void mix(int n, MP_x x, MP_z z, MP_w w) {
    memplace::stage(x, z, w);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        w[memplace::at<4>(i)] = x[memplace::at<5>(i)] - z[memplace::at<6>((i + 1) % n)];
    }
    }();
    memplace::unstage(w);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::mix<Acc...>; }
    template <class MP_x, class MP_z, class MP_w>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_x x, MP_z z, MP_w w) {
        auto mp_kernel = kernel<MP_x, MP_z, MP_w>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, x, z, w);
    }
};
template <class MP_w, class MP_v>
__global__ void last(int n, MP_w w, MP_v v) {
    memplace::stage(w, v);
    [&]() { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) v[memplace::at<7>(i)] = 2.0f * w[memplace::at<8>(i)]; 
    }();
    memplace::unstage(v);
}

// memplace: what the runtime needs to know about kernel 'last' (docs/rewrite-contract.md)
struct memplace_kernel_last {
    static constexpr const char* name = "last";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"w", 1, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"v", 2, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "last";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_w, class MP_v>
__global__ void last(int n, MP_w w, MP_v v) {
    memplace::stage(w, v);
    [&]() { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) v[memplace::at<7>(i)] = 2.0f * w[memplace::at<8>(i)]; 
    }();
    memplace::unstage(v);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::last<Acc...>; }
    template <class MP_w, class MP_v>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_w w, MP_v v) {
        auto mp_kernel = kernel<MP_w, MP_v>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, w, v);
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

int main() {
    const int n = 1 << 14;
    const size_t bytes = n * sizeof(float);
    std::vector<float> hx(n);
    for (int i = 0; i < n; ++i) {
        hx[i] = frand();
    }
    float *dx, *dy, *dz, *dw, *dv;
    CUDA_CHECK(cudaMalloc(&dx, bytes));
    CUDA_CHECK(cudaMalloc(&dy, bytes));
    CUDA_CHECK(cudaMalloc(&dz, bytes));
    CUDA_CHECK(cudaMalloc(&dw, bytes));
    CUDA_CHECK(cudaMalloc(&dv, bytes));
    CUDA_CHECK(cudaMemcpy(dx, hx.data(), bytes, cudaMemcpyHostToDevice));
    // Poison the outputs: an element a kernel fails to write shows in the hash.
    for (float* p : {dy, dz, dw, dv}) {
        CUDA_CHECK(cudaMemset(p, 0xFF, bytes));
    }
    const int block = 128;
    const int grid = (n + block - 1) / block;
    memplace::launch<memplace_kernel_scale>(grid, block, 0, 0, n, 3.0f, dx, dy);
    memplace::launch<memplace_kernel_shift>(grid, block, 0, 0, n, dy, dz);
    memplace::launch<memplace_kernel_mix>(grid, block, 0, 0, n, dx, dz, dw);
    memplace::launch<memplace_kernel_last>(grid, block, 0, 0, n, dw, dv);
    CUDA_CHECK(cudaGetLastError());
    std::vector<float> hy(n), hz(n), hw(n), hv(n);
    CUDA_CHECK(cudaMemcpy(hy.data(), dy, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hz.data(), dz, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hw.data(), dw, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hv.data(), dv, bytes, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        const float y = 3.0f * hx[i];
        const float z = y + 1.0f;
        const float zn = 3.0f * hx[(i + 1) % n] + 1.0f;
        const float w = hx[i] - zn;
        bad += hy[i] != y || hz[i] != z || hw[i] != w || hv[i] != 2.0f * w;
    }
    unsigned long long h = fnv1a(hy.data(), bytes);
    h = fnv1a(hz.data(), bytes, h);
    h = fnv1a(hw.data(), bytes, h);
    h = fnv1a(hv.data(), bytes, h);
    printf("adjacent_kernels: %s, outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", h);
    for (float* p : {dx, dy, dz, dw, dv}) {
        CUDA_CHECK(cudaFree(p));
    }
    return bad == 0 ? 0 : 1;
}

// Kernels declared before they are defined, as many programs are laid out: prototypes at the
// top (parameter names that differ from the definition's, an unnamed parameter, a default
// argument on a scalar, a kernel declared twice, a kernel template), host code that launches
// them before their definitions, the definitions at the end. The rewriter rewrites every
// declaration with its definition. Checks against the CPU, prints a checksum of the outputs.
// memplace: rewritten by `memplace rewrite` from kernel_prototypes.cu: kernels are templates over
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

// Row scaling: each row of `mat` divided by its pivot, pivots written to `factors`.
struct memplace_kernel_rowFactors;
template <class MP_mat, class MP_factors>
__global__ void rowFactors(MP_mat matrix, MP_factors factors, int n, int col);
struct memplace_kernel_eliminate;
template <class MP_mat, class MP_factors>
__global__ void eliminate(MP_mat mat, MP_factors, int n, int col, int stride = 1);
template <class MP_mat, class MP_factors>
__global__ void eliminate(MP_mat mat, MP_factors factors, int n, int col, int stride);

template <typename T> struct memplace_kernel_blendRows;
template <typename T, class MP_src, class MP_dst>
__global__ void blendRows(MP_src src, MP_dst dst, int n, T weight);

static void stepOnDevice(float* dMat, float* dFactors, int n, int col) {
    const int block = 64;
    memplace::launch<memplace_kernel_rowFactors>((n + block - 1) / block, block, 0, 0, dMat,
        dFactors, n, col);
    dim3 threads(16, 16);
    dim3 blocks((n + 15) / 16, (n + 15) / 16);
    memplace::launch<memplace_kernel_eliminate>(blocks, threads, 0, 0, dMat, dFactors, n, col, 1); // the emulator needs every argument
}

static unsigned long long fnv1a(const void* data, size_t bytes, unsigned long long h) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

static void stepOnHost(std::vector<float>& m, std::vector<float>& f, int n, int col) {
    for (int r = 0; r < n; ++r) {
        f[r] = r > col ? m[r * n + col] / m[col * n + col] : 0.0f;
    }
    for (int r = col + 1; r < n; ++r) {
        for (int c = col; c < n; ++c) {
            m[r * n + c] -= f[r] * m[col * n + c];
        }
    }
}

int main() {
    const int n = 48;
    std::vector<float> hm(n * n);
    for (int r = 0; r < n; ++r) {
        for (int c = 0; c < n; ++c) {
            hm[r * n + c] = (r == c ? 2.0f * n : 0.0f) + static_cast<float>((r * 31 + c * 17) % 13);
        }
    }
    std::vector<float> ref = hm, refF(n, 0.0f);
    float *dMat, *dFactors, *dBlend;
    CUDA_CHECK(cudaMalloc(&dMat, n * n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dFactors, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dBlend, n * n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dMat, hm.data(), n * n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dFactors, 0xFF, n * sizeof(float)));
    CUDA_CHECK(cudaMemset(dBlend, 0xFF, n * n * sizeof(float)));
    for (int col = 0; col < n - 1; ++col) {
        stepOnDevice(dMat, dFactors, n, col);
        stepOnHost(ref, refF, n, col);
    }
    memplace::launch<memplace_kernel_blendRows<float>>((n * n + 127) / 128, 128, 0, 0, dMat, dBlend,
        n * n, 0.5f);
    CUDA_CHECK(cudaGetLastError());
    std::vector<float> gm(n * n), gf(n), gb(n * n);
    CUDA_CHECK(cudaMemcpy(gm.data(), dMat, n * n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gf.data(), dFactors, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gb.data(), dBlend, n * n * sizeof(float), cudaMemcpyDeviceToHost));
    // The device may contract a * b - c into one fused multiply-add where the host rounds twice.
    auto near = [](float got, float want) {
        return std::fabs(got - want) <= 1e-3f * (1.0f + std::fabs(want));
    };
    int bad = 0;
    for (int i = 0; i < n * n; ++i) {
        bad += !near(gm[i], ref[i]);
        bad += !near(gb[i], gm[i] * 0.5f + (i >= n ? gm[i - n] : 0.0f) * 0.5f);
    }
    unsigned long long h = 1469598103934665603ull;
    h = fnv1a(gm.data(), gm.size() * sizeof(float), h);
    h = fnv1a(gf.data(), gf.size() * sizeof(float), h);
    h = fnv1a(gb.data(), gb.size() * sizeof(float), h);
    printf("kernel_prototypes: %s, outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", h);
    CUDA_CHECK(cudaFree(dMat));
    CUDA_CHECK(cudaFree(dFactors));
    CUDA_CHECK(cudaFree(dBlend));
    return bad == 0 ? 0 : 1;
}

template <class MP_mat, class MP_factors>
__global__ void rowFactors(MP_mat mat, MP_factors factors, int n, int col) {
    memplace::stage(mat, factors);
    [&]() {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < n) {
        factors[memplace::at<0>(r)] = r > col ? mat[memplace::at<1>(r * n + col)] / mat[memplace::at<2>(col * n + col)] : 0.0f;
    }
    }();
    memplace::unstage(factors);
}

// memplace: what the runtime needs to know about kernel 'rowFactors' (docs/rewrite-contract.md)
struct memplace_kernel_rowFactors {
    static constexpr const char* name = "rowFactors";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"mat", 0, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"factors", 1, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "rowFactors";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

struct memplace_kernel_rowFactors;
template <class MP_mat, class MP_factors>
__global__ void rowFactors(MP_mat matrix, MP_factors factors, int n, int col);

template <class MP_mat, class MP_factors>
__global__ void rowFactors(MP_mat mat, MP_factors factors, int n, int col) {
    memplace::stage(mat, factors);
    [&]() {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < n) {
        factors[memplace::at<0>(r)] = r > col ? mat[memplace::at<1>(r * n + col)] / mat[memplace::at<2>(col * n + col)] : 0.0f;
    }
    }();
    memplace::unstage(factors);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::rowFactors<Acc...>; }
    template <class MP_mat, class MP_factors>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_mat mat, MP_factors factors, int n, int col) {
        auto mp_kernel = kernel<MP_mat, MP_factors>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, mat, factors, n, col);
    }
};

template <class MP_mat, class MP_factors>
__global__ void eliminate(MP_mat mat, MP_factors factors, int n, int col, int stride) {
    memplace::stage(mat, factors);
    [&]() {
    int c = blockIdx.x * blockDim.x + threadIdx.x + col;
    int r = (blockIdx.y * blockDim.y + threadIdx.y) * stride + col + 1;
    if (r < n && c < n) {
        mat[memplace::at<3>(r * n + c)] -= factors[memplace::at<4>(r)] * mat[memplace::at<5>(col * n + c)];
    }
    }();
    memplace::unstage(mat);
}

// memplace: what the runtime needs to know about kernel 'eliminate' (docs/rewrite-contract.md)
struct memplace_kernel_eliminate {
    static constexpr const char* name = "eliminate";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"mat", 0, sizeof(float), memplace::Mode::ReadWrite, memplace::kPlaces_rw, 1},
        {"factors", 1, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
    };
    using types = memplace::Types<float, const float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::Global, memplace::Place::ReadOnly>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "eliminate";
    static constexpr const char* jitTypes[2] = {"float", "const float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

struct memplace_kernel_eliminate;
template <class MP_mat, class MP_factors>
__global__ void eliminate(MP_mat mat, MP_factors, int n, int col, int stride = 1);

template <class MP_mat, class MP_factors>
__global__ void eliminate(MP_mat mat, MP_factors factors, int n, int col, int stride) {
    memplace::stage(mat, factors);
    [&]() {
    int c = blockIdx.x * blockDim.x + threadIdx.x + col;
    int r = (blockIdx.y * blockDim.y + threadIdx.y) * stride + col + 1;
    if (r < n && c < n) {
        mat[memplace::at<3>(r * n + c)] -= factors[memplace::at<4>(r)] * mat[memplace::at<5>(col * n + c)];
    }
    }();
    memplace::unstage(mat);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::eliminate<Acc...>; }
    template <class MP_mat, class MP_factors>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_mat mat, MP_factors factors, int n, int col, int stride = 1) {
        auto mp_kernel = kernel<MP_mat, MP_factors>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, mat, factors, n, col,
            stride);
    }
};

template <typename T, class MP_src, class MP_dst>
__global__ void blendRows(MP_src src, MP_dst dst, int n, T weight) {
    memplace::stage(src, dst);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        T above = i >= 48 ? src[memplace::at<6>(i - 48)] : T(0);
        dst[memplace::at<7>(i)] = src[memplace::at<8>(i)] * weight + above * (T(1) - weight);
    }
    }();
    memplace::unstage(dst);
}

// memplace: what the runtime needs to know about kernel 'blendRows' (docs/rewrite-contract.md)
template <typename T>
struct memplace_kernel_blendRows {
    static constexpr const char* name = "blendRows";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"src", 0, sizeof(T), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"dst", 1, sizeof(T), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const T, T>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Not compiled just in time: a kernel template (the runtime cannot spell its template arguments
    // in an NVRTC name expression). Placements not compiled in run through the dynamic accessor.
    static constexpr const char* jitSource = nullptr;
    template <class... Acc>
    static auto kernel() { return &::blendRows<T, Acc...>; }
    template <class MP_src, class MP_dst>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_src src, MP_dst dst, int n, T weight) {
        auto mp_kernel = kernel<MP_src, MP_dst>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, src, dst, n, weight);
    }
};

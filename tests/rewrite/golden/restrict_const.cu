// const __restrict__ pointers: a 1-D convolution whose weights every thread reads in the same
// order, and a row scaling where the whole block reads one scale factor.
// memplace: rewritten by `memplace rewrite` from restrict_const.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
#include "memplace/memplace.cuh"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define RADIUS 4

#define CUDA_CHECK(call)                                                                \
    do {                                                                                \
        cudaError_t err_ = (call);                                                      \
        if (err_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static unsigned int g_seed = 5150u;
static float frand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return static_cast<float>(g_seed >> 8) * (1.0f / 16777216.0f);
}

template <class MP_in, class MP_weights, class MP_out>
__global__ void convolve1d(int n, MP_in in, MP_weights weights,
                           MP_out out) {
    memplace::stage(in, weights, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float acc = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; ++k) {
        int j = min(max(i + k, 0), n - 1);
        acc += weights[memplace::at<0>(k + RADIUS)] * in[memplace::at<1>(j)];
    }
    out[memplace::at<2>(i)] = acc;
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'convolve1d' (docs/rewrite-contract.md)
struct memplace_kernel_convolve1d {
    static constexpr const char* name = "convolve1d";
    static constexpr int numArrays = 3;
    static constexpr memplace::ArrayDesc arrays[3] = {
        {"in", 1, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1, -1, memplace::Place::ReadOnly},
        {"weights", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1, -1, memplace::Place::ReadOnly},
        {"out", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::Global, memplace::Place::Global, memplace::Place::Global>,
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Constant,
            memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "convolve1d";
    static constexpr const char* jitTypes[3] = {"const float", "const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

#define RADIUS 4

template <class MP_in, class MP_weights, class MP_out>
__global__ void convolve1d(int n, MP_in in, MP_weights weights,
                           MP_out out) {
    memplace::stage(in, weights, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float acc = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; ++k) {
        int j = min(max(i + k, 0), n - 1);
        acc += weights[memplace::at<0>(k + RADIUS)] * in[memplace::at<1>(j)];
    }
    out[memplace::at<2>(i)] = acc;
    }();
    memplace::unstage(out);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::convolve1d<Acc...>; }
    template <class MP_in, class MP_weights, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_in in, MP_weights weights, MP_out out) {
        auto mp_kernel = kernel<MP_in, MP_weights, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, in, weights, out);
    }
};

// One row per blockIdx.y; the block's threads all read scale[row].
template <class MP_scale, class MP_in, class MP_out>
__global__ void scale_rows(int cols, MP_scale scale,
                           MP_in in, MP_out out) {
    memplace::stage(scale, in, out);
    [&]() {
    int row = blockIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) {
        out[memplace::at<3>(row * cols + c)] = scale[memplace::at<4>(row)] * in[memplace::at<5>(row * cols + c)];
    }
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'scale_rows' (docs/rewrite-contract.md)
struct memplace_kernel_scale_rows {
    static constexpr const char* name = "scale_rows";
    static constexpr int numArrays = 3;
    static constexpr memplace::ArrayDesc arrays[3] = {
        {"scale", 1, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1, -1, memplace::Place::ReadOnly},
        {"in", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1, -1, memplace::Place::ReadOnly},
        {"out", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::Global, memplace::Place::Global, memplace::Place::Global>,
        memplace::Places<memplace::Place::Constant, memplace::Place::ReadOnly,
            memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "scale_rows";
    static constexpr const char* jitTypes[3] = {"const float", "const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_scale, class MP_in, class MP_out>
__global__ void scale_rows(int cols, MP_scale scale,
                           MP_in in, MP_out out) {
    memplace::stage(scale, in, out);
    [&]() {
    int row = blockIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) {
        out[memplace::at<3>(row * cols + c)] = scale[memplace::at<4>(row)] * in[memplace::at<5>(row * cols + c)];
    }
    }();
    memplace::unstage(out);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::scale_rows<Acc...>; }
    template <class MP_scale, class MP_in, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            int cols, MP_scale scale, MP_in in, MP_out out) {
        auto mp_kernel = kernel<MP_scale, MP_in, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, cols, scale, in, out);
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
    const int n = 1 << 15;
    const int rows = 64;
    const int cols = n / rows;
    std::vector<float> in(n), w(2 * RADIUS + 1), scale(rows);
    for (int i = 0; i < n; ++i) {
        in[i] = frand();
    }
    for (int k = 0; k < 2 * RADIUS + 1; ++k) {
        w[k] = frand() / (2 * RADIUS + 1);
    }
    for (int r = 0; r < rows; ++r) {
        scale[r] = 1.0f + frand();
    }
    float *din, *dw, *dconv, *dscale, *dout;
    CUDA_CHECK(cudaMalloc(&din, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dw, (2 * RADIUS + 1) * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dconv, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dscale, rows * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dout, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(din, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dw, w.data(), (2 * RADIUS + 1) * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dscale, scale.data(), rows * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dconv, 0xFF, n * sizeof(float))); // poison the outputs
    CUDA_CHECK(cudaMemset(dout, 0xFF, n * sizeof(float)));

    memplace::launch<memplace_kernel_convolve1d>((n + 255) / 256, 256, 0, 0, n, din, dw, dconv);
    memplace::launch<memplace_kernel_scale_rows>(dim3((cols + 127) / 128, rows), 128, 0, 0, cols,
        dscale, dconv, dout);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> out(n);
    CUDA_CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
    std::vector<float> conv(n);
    CUDA_CHECK(cudaMemcpy(conv.data(), dconv, n * sizeof(float), cudaMemcpyDeviceToHost));
    unsigned long long hash = fnv1a(conv.data(), n * sizeof(float));
    hash = fnv1a(out.data(), n * sizeof(float), hash);
    int bad = 0;
    double checksum = 0.0;
    for (int i = 0; i < n; ++i) {
        double acc = 0.0;
        for (int k = -RADIUS; k <= RADIUS; ++k) {
            int j = std::min(std::max(i + k, 0), n - 1);
            acc += static_cast<double>(w[k + RADIUS]) * in[j];
        }
        double ref = scale[i / cols] * acc;
        if (std::fabs(out[i] - ref) > 1e-4) {
            ++bad;
        }
        checksum += out[i];
    }
    printf("restrict_const: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL",
           checksum, hash);
    cudaFree(din);
    cudaFree(dw);
    cudaFree(dconv);
    cudaFree(dscale);
    cudaFree(dout);
    return bad == 0 ? 0 : 1;
}

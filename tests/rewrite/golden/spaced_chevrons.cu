// Spaced launch chevrons, as clang-format writes them in files formatted as plain C++:
// nvcc accepts `k << < grid, block >> > (...)`, clang does not; the analysis normalises them
// in memory. Also a launch with all four configuration values on a stream.
// memplace: rewritten by `memplace rewrite` from spaced_chevrons.cu: kernels are templates over
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

static unsigned int g_seed = 424242u;
static float frand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return static_cast<float>(g_seed >> 8) * (1.0f / 16777216.0f);
}

template <class MP_in, class MP_out>
__global__ void negate(int n, MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[memplace::at<0>(i)] = -in[memplace::at<1>(i)];
    }
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'negate' (docs/rewrite-contract.md)
struct memplace_kernel_negate {
    static constexpr const char* name = "negate";
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
    static constexpr const char* jitKernel = "negate";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_in, class MP_out>
__global__ void negate(int n, MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[memplace::at<0>(i)] = -in[memplace::at<1>(i)];
    }
    }();
    memplace::unstage(out);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::negate<Acc...>; }
    template <class MP_in, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_in in, MP_out out) {
        auto mp_kernel = kernel<MP_in, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, in, out);
    }
};

template <class MP_data>
__global__ void offset_by(int n, MP_data data, float delta) {
    memplace::stage(data);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        data[memplace::at<2>(i)] += delta;
    }
    }();
    memplace::unstage(data);
}

// memplace: what the runtime needs to know about kernel 'offset_by' (docs/rewrite-contract.md)
struct memplace_kernel_offset_by {
    static constexpr const char* name = "offset_by";
    static constexpr int numArrays = 1;
    static constexpr memplace::ArrayDesc arrays[1] = {
        {"data", 1, sizeof(float), memplace::Mode::ReadWrite, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<float>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "offset_by";
    static constexpr const char* jitTypes[1] = {"float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_data>
__global__ void offset_by(int n, MP_data data, float delta) {
    memplace::stage(data);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        data[memplace::at<2>(i)] += delta;
    }
    }();
    memplace::unstage(data);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::offset_by<Acc...>; }
    template <class MP_data>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_data data, float delta) {
        auto mp_kernel = kernel<MP_data>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, data, delta);
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
    const int n = 30000;
    const int threads = 128;
    const int blocks = (n + threads - 1) / threads;
    std::vector<float> h(n);
    for (int i = 0; i < n; ++i) {
        h[i] = frand();
    }
    float *din, *dout;
    CUDA_CHECK(cudaMalloc(&din, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dout, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(din, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dout, 0xFF, n * sizeof(float))); // poison the output
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));

    memplace::launch<memplace_kernel_negate>(blocks, threads, 0, 0, n, din, dout);
    memplace::launch<memplace_kernel_offset_by>(blocks, threads, 0, 0, n, dout, 1.0f);
    memplace::launch<memplace_kernel_negate>(dim3(blocks), dim3(threads), 0, 0, n, dout, din);
    memplace::launch<memplace_kernel_offset_by>(dim3(blocks, 1, 1), threads, 0, stream, n, din,
        -0.5f);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> out(n);
    CUDA_CHECK(cudaMemcpy(out.data(), din, n * sizeof(float), cudaMemcpyDeviceToHost));
    std::vector<float> mid(n);
    CUDA_CHECK(cudaMemcpy(mid.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
    unsigned long long hash = fnv1a(out.data(), n * sizeof(float));
    hash = fnv1a(mid.data(), n * sizeof(float), hash);
    int bad = 0;
    double checksum = 0.0;
    for (int i = 0; i < n; ++i) {
        float ref = -(-h[i] + 1.0f) - 0.5f;
        bad += std::fabs(out[i] - ref) > 1e-6f;
        checksum += out[i];
    }
    printf("spaced_chevrons: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL",
           checksum, hash);
    CUDA_CHECK(cudaStreamDestroy(stream));
    cudaFree(din);
    cudaFree(dout);
    return bad == 0 ? 0 : 1;
}

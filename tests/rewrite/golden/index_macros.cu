// Index macros: a global thread id and a row-major index as macros inside subscripts, and an
// access macro that spells the whole subscript (the analysis cannot rewrite those in place).
// memplace: rewritten by `memplace rewrite` from index_macros.cu: kernels are templates over
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

#define GTID (blockIdx.x * blockDim.x + threadIdx.x)
#define IDX2(r, c, ld) ((r) * (ld) + (c))
#define AT(m, r, c) m[(r) * cols + (c)]

static unsigned int g_seed = 1999u;
static float frand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return static_cast<float>(g_seed >> 8) * (1.0f / 16777216.0f);
}

template <class MP_bias, class MP_m>
__global__ void add_bias(int rows, int cols, MP_bias bias, MP_m m) {
    memplace::stage(bias, m);
    [&]() {
    int r = blockIdx.y;
    int c = GTID;
    if (r < rows && c < cols) {
        m[memplace::at<0>(IDX2(r, c, cols))] += bias[memplace::at<1>(c)];
    }
    }();
    memplace::unstage(m);
}

// memplace: what the runtime needs to know about kernel 'add_bias' (docs/rewrite-contract.md)
struct memplace_kernel_add_bias {
    static constexpr const char* name = "add_bias";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"bias", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"m", 3, sizeof(float), memplace::Mode::ReadWrite, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "add_bias";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

#define GTID (blockIdx.x * blockDim.x + threadIdx.x)
#define IDX2(r, c, ld) ((r) * (ld) + (c))

template <class MP_bias, class MP_m>
__global__ void add_bias(int rows, int cols, MP_bias bias, MP_m m) {
    memplace::stage(bias, m);
    [&]() {
    int r = blockIdx.y;
    int c = GTID;
    if (r < rows && c < cols) {
        m[memplace::at<0>(IDX2(r, c, cols))] += bias[memplace::at<1>(c)];
    }
    }();
    memplace::unstage(m);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::add_bias<Acc...>; }
    template <class MP_bias, class MP_m>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            int rows, int cols, MP_bias bias, MP_m m) {
        auto mp_kernel = kernel<MP_bias, MP_m>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, rows, cols, bias, m);
    }
};

__global__ void double_copy(int rows, int cols, const float* src, float* dst) {
    int r = blockIdx.y;
    int c = GTID;
    if (r < rows && c < cols) {
        AT(dst, r, c) = AT(src, r, c) * 2.0f;
    }
}

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
    const int rows = 96;
    const int cols = 700;
    const int count = rows * cols;
    std::vector<float> m(count), bias(cols);
    for (int i = 0; i < count; ++i) {
        m[i] = frand();
    }
    for (int c = 0; c < cols; ++c) {
        bias[c] = frand();
    }
    float *dm, *dbias, *dout;
    CUDA_CHECK(cudaMalloc(&dm, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dbias, cols * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dout, count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dm, m.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dbias, bias.data(), cols * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dout, 0xFF, count * sizeof(float))); // poison the output

    dim3 grid((cols + 127) / 128, rows);
    memplace::launch<memplace_kernel_add_bias>(grid, 128, 0, 0, rows, cols, dbias, dm);
    MEMPLACE_LAUNCH(double_copy, grid, 128, 0, 0, rows, cols, dm, dout);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> out(count);
    CUDA_CHECK(cudaMemcpy(out.data(), dout, count * sizeof(float), cudaMemcpyDeviceToHost));
    std::vector<float> biased(count);
    CUDA_CHECK(cudaMemcpy(biased.data(), dm, count * sizeof(float), cudaMemcpyDeviceToHost));
    unsigned long long hash = fnv1a(biased.data(), count * sizeof(float));
    hash = fnv1a(out.data(), count * sizeof(float), hash);
    int bad = 0;
    double checksum = 0.0;
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
            float ref = (m[r * cols + c] + bias[c]) * 2.0f;
            if (std::fabs(out[r * cols + c] - ref) > 1e-5f) {
                ++bad;
            }
            checksum += out[r * cols + c];
        }
    }
    printf("index_macros: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL",
           checksum, hash);
    cudaFree(dm);
    cudaFree(dbias);
    cudaFree(dout);
    return bad == 0 ? 0 : 1;
}

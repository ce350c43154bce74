// Tiled shared-memory kernels: a square matrix product staged through two __shared__ tiles,
// and a transpose through a padded tile (no bank conflicts on the column read).
// memplace: rewritten by `memplace rewrite` from tiled_matmul.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
#include "memplace/memplace.cuh"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define TILE 16

#define CUDA_CHECK(call)                                                                \
    do {                                                                                \
        cudaError_t err_ = (call);                                                      \
        if (err_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static unsigned int g_seed = 777u;
static float frand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return static_cast<float>(g_seed >> 8) * (1.0f / 16777216.0f) - 0.5f;
}

// C = A * B for n x n matrices, n a multiple of TILE.
template <class MP_A, class MP_B, class MP_C>
__global__ void matmul_tiled(int n, MP_A A, MP_B B, MP_C C) {
    memplace::stage(A, B, C);
    [&]() {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[ty][tx] = A[memplace::at<1>(row * n + t * TILE + tx)];
        Bs[ty][tx] = B[memplace::at<3>((t * TILE + ty) * n + col)];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) {
            acc += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    C[memplace::at<6>(row * n + col)] = acc;
    }();
    memplace::unstage(C);
}

// memplace: what the runtime needs to know about kernel 'matmul_tiled' (docs/rewrite-contract.md)
struct memplace_kernel_matmul_tiled {
    static constexpr const char* name = "matmul_tiled";
    static constexpr int numArrays = 3;
    static constexpr memplace::ArrayDesc arrays[3] = {
        {"A", 1, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_2d, 2, 0},
        {"B", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_2d, 2, 0},
        {"C", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::ReadOnly,
            memplace::Place::Global>,
        memplace::Places<memplace::Place::Texture, memplace::Place::Texture,
            memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "matmul_tiled";
    static constexpr const char* jitTypes[3] = {"const float", "const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

#define TILE 16

template <class MP_A, class MP_B, class MP_C>
__global__ void matmul_tiled(int n, MP_A A, MP_B B, MP_C C) {
    memplace::stage(A, B, C);
    [&]() {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[ty][tx] = A[memplace::at<1>(row * n + t * TILE + tx)];
        Bs[ty][tx] = B[memplace::at<3>((t * TILE + ty) * n + col)];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) {
            acc += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    C[memplace::at<6>(row * n + col)] = acc;
    }();
    memplace::unstage(C);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::matmul_tiled<Acc...>; }
    template <class MP_A, class MP_B, class MP_C>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_A A, MP_B B, MP_C C) {
        auto mp_kernel = kernel<MP_A, MP_B, MP_C>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, A, B, C);
    }
};

// out = in^T for an n x n matrix, n a multiple of TILE.
template <class MP_in, class MP_out>
__global__ void transpose_tiled(int n, MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[memplace::at<8>(y * n + x)];
    __syncthreads();
    int tx = blockIdx.y * TILE + threadIdx.x;
    int ty = blockIdx.x * TILE + threadIdx.y;
    out[memplace::at<9>(ty * n + tx)] = tile[threadIdx.x][threadIdx.y];
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'transpose_tiled' (docs/rewrite-contract.md)
struct memplace_kernel_transpose_tiled {
    static constexpr const char* name = "transpose_tiled";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"in", 1, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_2d, 2, 0},
        {"out", 2, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>,
        memplace::Places<memplace::Place::Texture, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "transpose_tiled";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

#define TILE 16

template <class MP_in, class MP_out>
__global__ void transpose_tiled(int n, MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[memplace::at<8>(y * n + x)];
    __syncthreads();
    int tx = blockIdx.y * TILE + threadIdx.x;
    int ty = blockIdx.x * TILE + threadIdx.y;
    out[memplace::at<9>(ty * n + tx)] = tile[threadIdx.x][threadIdx.y];
    }();
    memplace::unstage(out);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::transpose_tiled<Acc...>; }
    template <class MP_in, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_in in, MP_out out) {
        auto mp_kernel = kernel<MP_in, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, in, out);
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
    const int n = 256;
    const size_t count = static_cast<size_t>(n) * n;
    std::vector<float> ha(count), hb(count);
    for (size_t i = 0; i < count; ++i) {
        ha[i] = frand();
        hb[i] = frand();
    }
    float *da, *db, *dc, *dt;
    CUDA_CHECK(cudaMalloc(&da, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&db, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dc, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dt, count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(da, ha.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db, hb.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dc, 0xFF, count * sizeof(float))); // poison the outputs
    CUDA_CHECK(cudaMemset(dt, 0xFF, count * sizeof(float)));

    dim3 threads(TILE, TILE);
    dim3 blocks(n / TILE, n / TILE);
    memplace::launch<memplace_kernel_matmul_tiled>(blocks, threads, 0, 0, n, da, db, dc);
    memplace::launch<memplace_kernel_transpose_tiled>(blocks, threads, 0, 0, n, dc, dt);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> c(count), t(count);
    CUDA_CHECK(cudaMemcpy(c.data(), dc, count * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(t.data(), dt, count * sizeof(float), cudaMemcpyDeviceToHost));

    int bad = 0;
    double checksum = 0.0;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            double ref = 0.0;
            for (int k = 0; k < n; ++k) {
                ref += static_cast<double>(ha[i * n + k]) * hb[k * n + j];
            }
            if (std::fabs(c[i * n + j] - ref) > 1e-3) {
                ++bad;
            }
            if (t[j * n + i] != c[i * n + j]) {
                ++bad;
            }
            checksum += c[i * n + j];
        }
    }
    unsigned long long hash = fnv1a(c.data(), count * sizeof(float));
    hash = fnv1a(t.data(), count * sizeof(float), hash);
    printf("tiled_matmul: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL",
           checksum, hash);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dt);
    return bad == 0 ? 0 : 1;
}

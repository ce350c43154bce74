// Tiled shared-memory kernels: a square matrix product staged through two __shared__ tiles,
// and a transpose through a padded tile (no bank conflicts on the column read).
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
__global__ void matmul_tiled(int n, const float* A, const float* B, float* C) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[ty][tx] = A[row * n + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) {
            acc += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    C[row * n + col] = acc;
}

// out = in^T for an n x n matrix, n a multiple of TILE.
__global__ void transpose_tiled(int n, const float* in, float* out) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    int tx = blockIdx.y * TILE + threadIdx.x;
    int ty = blockIdx.x * TILE + threadIdx.y;
    out[ty * n + tx] = tile[threadIdx.x][threadIdx.y];
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
    matmul_tiled<<<blocks, threads>>>(n, da, db, dc);
    transpose_tiled<<<blocks, threads>>>(n, dc, dt);
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

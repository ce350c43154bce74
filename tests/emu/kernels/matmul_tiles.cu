// Tiled matrix multiplication: 2-D grid and blocks, __shared__ tiles, __syncthreads.
#include <cuda_runtime.h>

#include <vector>

#include "check.h"

#define TILE 16

__global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        int ak = t * TILE + threadIdx.x, bk = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ak < K) ? A[row * K + ak] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (bk < K && col < N) ? B[bk * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}

int main() {
    const int M = 45, N = 37, K = 53;
    std::vector<float> a(M * K), b(K * N), c(M * N), ref(M * N, 0.0f);
    for (int i = 0; i < M * K; ++i) a[i] = static_cast<float>((i * 7) % 11) - 5.0f;
    for (int i = 0; i < K * N; ++i) b[i] = static_cast<float>((i * 5) % 13) - 6.0f;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float acc = 0.0f;
            for (int t = 0; t < (K + TILE - 1) / TILE; ++t)
                for (int k = t * TILE; k < t * TILE + TILE; ++k) acc += k < K ? a[i * K + k] * b[k * N + j] : 0.0f;
            ref[i * N + j] = acc;
        }
    float *dA, *dB, *dC;
    CUDA_OK(cudaMalloc(&dA, a.size() * sizeof(float)));
    CUDA_OK(cudaMalloc(&dB, b.size() * sizeof(float)));
    CUDA_OK(cudaMalloc(&dC, c.size() * sizeof(float)));
    CUDA_OK(cudaMemcpy(dA, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dB, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
    dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    MEMPLACE_LAUNCH(matmul, grid, block, 0, 0, dA, dB, dC, M, N, K);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaMemcpy(c.data(), dC, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < M * N; ++i) CHECK(c[i] == ref[i]);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    return finish("matmul_tiles");
}

// Loads that are the same for every thread along one block dimension (16 x 16 blocks): a row's
// scale factor does not depend on threadIdx.x, a column's on threadIdx.y; a tile row read in the
// inner product loop (a[ty][k]) does not depend on threadIdx.x, and b[k][tx] not on threadIdx.y.
#include <cuda_runtime.h>

#define T 16

__global__ void scaleRowsCols(const float* __restrict__ m, const float* __restrict__ rowScale,
                              const float* __restrict__ colScale, float* __restrict__ out,
                              int width) {
    int r = blockIdx.y * T + threadIdx.y;
    int c = blockIdx.x * T + threadIdx.x;
    out[r * width + c] = m[r * width + c] * rowScale[r] * colScale[c];
}

__global__ void tileProduct(const float* __restrict__ p, const float* __restrict__ q,
                            float* __restrict__ out) {
    __shared__ float a[T][T];
    __shared__ float b[T][T];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int base = (blockIdx.x * T + ty) * T + tx;
    a[ty][tx] = p[base];
    b[ty][tx] = q[base];
    __syncthreads();
    float sum = 0.0f;
    for (int k = 0; k < T; ++k) {
        sum += a[ty][k] * b[k][tx];
    }
    out[base] = sum;
}

int main() {
    const int n = 4 * T;
    float* m = nullptr;
    float* rs = nullptr;
    float* cs = nullptr;
    float* out = nullptr;
    cudaMalloc(&m, n * n * sizeof(float));
    cudaMalloc(&rs, n * sizeof(float));
    cudaMalloc(&cs, n * sizeof(float));
    cudaMalloc(&out, n * n * sizeof(float));
    scaleRowsCols<<<dim3(n / T, n / T), dim3(T, T)>>>(m, rs, cs, out, n);
    tileProduct<<<dim3(n / T), dim3(T, T)>>>(m, rs, out);
    cudaDeviceSynchronize();
    return 0;
}

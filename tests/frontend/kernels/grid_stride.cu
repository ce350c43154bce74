// Grid-stride loops: a fixed-size grid sweeps arrays longer than itself (saxpy, a sum of
// squares into per-block partials, and a while-loop copy).
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

static unsigned int g_seed = 65535u;
static unsigned int urand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}

__global__ void saxpy_grid_stride(int n, float a, const float* x, float* y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = a * x[i] + y[i];
    }
}

__global__ void sum_squares_partial(int n, const float* x, float* partial) {
    __shared__ float cache[256];
    float s = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        s += x[i] * x[i];
    }
    cache[threadIdx.x] = s;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            cache[threadIdx.x] += cache[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = cache[0];
    }
}

__global__ void copy_while(int n, const int* src, int* dst) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int stride = blockDim.x * gridDim.x;
    while (i < static_cast<unsigned int>(n)) {
        dst[i] = src[i];
        i += stride;
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
    const int n = 1 << 20;
    const int blocks = 64;
    const int threads = 256;
    std::vector<float> x(n), y(n);
    std::vector<int> src(n);
    for (int i = 0; i < n; ++i) {
        src[i] = static_cast<int>(urand() % 1000);
        x[i] = src[i] * (1.0f / 1024.0f);
        y[i] = 1.0f;
    }
    float *dx, *dy, *dpartial;
    int *dsrc, *ddst;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dpartial, blocks * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dsrc, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&ddst, n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dsrc, src.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dpartial, 0xFF, blocks * sizeof(float))); // poison the outputs
    CUDA_CHECK(cudaMemset(ddst, 0xFF, n * sizeof(int)));

    saxpy_grid_stride<<<blocks, threads>>>(n, 3.0f, dx, dy);
    sum_squares_partial<<<blocks, threads>>>(n, dx, dpartial);
    copy_while<<<blocks, threads>>>(n, dsrc, ddst);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> yout(n), partial(blocks);
    std::vector<int> dst(n);
    CUDA_CHECK(cudaMemcpy(yout.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(partial.data(), dpartial, blocks * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(dst.data(), ddst, n * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    double squares = 0.0;
    for (int i = 0; i < n; ++i) {
        bad += std::fabs(yout[i] - (3.0f * x[i] + 1.0f)) > 1e-5f;
        bad += dst[i] != src[i];
        squares += static_cast<double>(x[i]) * x[i];
    }
    double sum = 0.0;
    for (float p : partial) {
        sum += p;
    }
    bad += std::fabs(sum - squares) > 1e-4 * squares;
    unsigned long long hash = fnv1a(yout.data(), n * sizeof(float));
    hash = fnv1a(partial.data(), blocks * sizeof(float), hash);
    hash = fnv1a(dst.data(), n * sizeof(int), hash);
    printf("grid_stride: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", sum,
           hash);
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(dpartial);
    cudaFree(dsrc);
    cudaFree(ddst);
    return bad == 0 ? 0 : 1;
}

// Several kernels in one file, chained: fill, an in-place scale launched with the same buffer
// as input and output (aliasing), an element-wise add, and a dot product whose partial sums
// use dynamic shared memory (extern __shared__, sized at launch).
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

__global__ void fill(int n, float base, float step, float* a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] = base + step * (i % 100);
    }
}

__global__ void scale_into(int n, float s, const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = s * in[i];
    }
}

__global__ void add(int n, const float* a, const float* b, float* c) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

__global__ void dot_partial(int n, const float* a, const float* b, float* partial) {
    extern __shared__ float cache[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cache[threadIdx.x] = i < n ? a[i] * b[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            cache[threadIdx.x] += cache[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = cache[0];
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
    const int n = 100000;
    const int threads = 256;
    const int blocks = (n + threads - 1) / threads;
    float *da, *db, *dc, *dpartial;
    CUDA_CHECK(cudaMalloc(&da, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&db, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dc, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dpartial, blocks * sizeof(float)));
    CUDA_CHECK(cudaMemset(da, 0xFF, n * sizeof(float))); // poison the outputs
    CUDA_CHECK(cudaMemset(db, 0xFF, n * sizeof(float)));
    CUDA_CHECK(cudaMemset(dc, 0xFF, n * sizeof(float)));
    CUDA_CHECK(cudaMemset(dpartial, 0xFF, blocks * sizeof(float)));

    fill<<<blocks, threads>>>(n, 1.0f, 0.01f, da);
    fill<<<blocks, threads>>>(n, 0.5f, 0.02f, db);
    scale_into<<<blocks, threads>>>(n, 2.0f, da, da);
    add<<<blocks, threads>>>(n, da, db, dc);
    dot_partial<<<blocks, threads, threads * sizeof(float)>>>(n, dc, db, dpartial);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> c(n), partial(blocks);
    CUDA_CHECK(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(partial.data(), dpartial, blocks * sizeof(float), cudaMemcpyDeviceToHost));
    std::vector<float> ga(n), gb(n);
    CUDA_CHECK(cudaMemcpy(ga.data(), da, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gb.data(), db, n * sizeof(float), cudaMemcpyDeviceToHost));
    unsigned long long hash = fnv1a(ga.data(), n * sizeof(float));
    hash = fnv1a(gb.data(), n * sizeof(float), hash);
    hash = fnv1a(c.data(), n * sizeof(float), hash);
    hash = fnv1a(partial.data(), blocks * sizeof(float), hash);
    int bad = 0;
    double dot = 0.0;
    double ref = 0.0;
    for (int i = 0; i < n; ++i) {
        float a = 2.0f * (1.0f + 0.01f * (i % 100));
        float b = 0.5f + 0.02f * (i % 100);
        if (std::fabs(c[i] - (a + b)) > 1e-5f) {
            ++bad;
        }
        ref += static_cast<double>(a + b) * b;
    }
    for (float p : partial) {
        dot += p;
    }
    if (std::fabs(dot - ref) > 1e-4 * ref) {
        ++bad;
    }
    printf("multi_kernel: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", dot,
           hash);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dpartial);
    return bad == 0 ? 0 : 1;
}

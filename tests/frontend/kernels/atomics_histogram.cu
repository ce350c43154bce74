// Atomics: a histogram with global atomics, the same histogram privatised per block in
// __shared__ memory (shared atomics, then one global atomic per bin), and a global maximum.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define BINS 64

#define CUDA_CHECK(call)                                                                \
    do {                                                                                \
        cudaError_t err_ = (call);                                                      \
        if (err_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static unsigned int g_seed = 2718u;
static unsigned int urand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}

__global__ void histogram_global(int n, const unsigned char* data, unsigned int* bins) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&bins[data[i] % BINS], 1u);
    }
}

__global__ void histogram_shared(int n, const unsigned char* data, unsigned int* bins) {
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        local[b] = 0;
    }
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&local[data[i] % BINS], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        atomicAdd(bins + b, local[b]);
    }
}

__global__ void max_value(int n, const int* values, int* result) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicMax(result, values[i]);
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
    const int n = 1 << 18;
    std::vector<unsigned char> data(n);
    std::vector<int> values(n);
    for (int i = 0; i < n; ++i) {
        data[i] = static_cast<unsigned char>(urand() & 0xff);
        values[i] = static_cast<int>(urand() % 1000000);
    }
    unsigned char* ddata;
    unsigned int *dbins1, *dbins2;
    int *dvalues, *dmax;
    CUDA_CHECK(cudaMalloc(&ddata, n));
    CUDA_CHECK(cudaMalloc(&dbins1, BINS * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&dbins2, BINS * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&dvalues, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dmax, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(ddata, data.data(), n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dvalues, values.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dbins1, 0, BINS * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(dbins2, 0, BINS * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(dmax, 0, sizeof(int)));

    histogram_global<<<128, 256>>>(n, ddata, dbins1);
    histogram_shared<<<128, 256>>>(n, ddata, dbins2);
    max_value<<<128, 256>>>(n, dvalues, dmax);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<unsigned int> bins1(BINS), bins2(BINS);
    int maxv = 0;
    CUDA_CHECK(cudaMemcpy(bins1.data(), dbins1, BINS * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(bins2.data(), dbins2, BINS * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&maxv, dmax, sizeof(int), cudaMemcpyDeviceToHost));
    std::vector<unsigned int> ref(BINS, 0);
    int refmax = 0;
    for (int i = 0; i < n; ++i) {
        ++ref[data[i] % BINS];
        refmax = values[i] > refmax ? values[i] : refmax;
    }
    int bad = maxv != refmax;
    unsigned long long checksum = 0;
    for (int b = 0; b < BINS; ++b) {
        bad += bins1[b] != ref[b];
        bad += bins2[b] != ref[b];
        checksum += static_cast<unsigned long long>(bins1[b]) * (b + 1);
    }
    // The bins and the maximum accumulate from zero: they cannot be poisoned, the hash covers
    // them all.
    unsigned long long hash = fnv1a(bins1.data(), BINS * sizeof(unsigned int));
    hash = fnv1a(bins2.data(), BINS * sizeof(unsigned int), hash);
    hash = fnv1a(&maxv, sizeof(maxv), hash);
    printf("atomics_histogram: %s checksum %llu max %d outputs %016llx\n",
           bad == 0 ? "PASS" : "FAIL", checksum, maxv, hash);
    cudaFree(ddata);
    cudaFree(dbins1);
    cudaFree(dbins2);
    cudaFree(dvalues);
    cudaFree(dmax);
    return bad == 0 ? 0 : 1;
}

// Kernels calling __device__ helpers: loads and stores through helper functions (one helper
// reached with two different arrays), a one-line index helper, and a helper handed a pointer
// into the middle of an array (pointer arithmetic the analysis cannot follow).
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

static unsigned int g_seed = 6502u;
static float frand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return static_cast<float>(g_seed >> 8) * (1.0f / 16777216.0f);
}

__device__ __forceinline__ int global_id() { return blockIdx.x * blockDim.x + threadIdx.x; }

__device__ float load(const float* p, int i) { return p[i]; }

__device__ void store(float* p, int i, float v) { p[i] = v; }

__device__ float lerp_at(const float* a, const float* b, int i, float t) {
    return load(a, i) * (1.0f - t) + load(b, i) * t;
}

__device__ float row_sum(const float* row, int len) {
    float s = 0.0f;
    for (int k = 0; k < len; ++k) {
        s += row[k];
    }
    return s;
}

__global__ void blend(int n, float t, const float* a, const float* b, float* out) {
    int i = global_id();
    if (i < n) {
        store(out, i, lerp_at(a, b, i, t));
    }
}

__global__ void row_sums(int rows, int cols, const float* m, float* sums) {
    int r = global_id();
    if (r < rows) {
        sums[r] = row_sum(m + r * cols, cols);
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
    const int n = 50000;
    const int rows = 500;
    const int cols = n / rows;
    const float t = 0.25f;
    std::vector<float> a(n), b(n);
    for (int i = 0; i < n; ++i) {
        a[i] = frand();
        b[i] = frand();
    }
    float *da, *db, *dout, *dsums;
    CUDA_CHECK(cudaMalloc(&da, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&db, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dout, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dsums, rows * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dout, 0xFF, n * sizeof(float))); // poison the outputs
    CUDA_CHECK(cudaMemset(dsums, 0xFF, rows * sizeof(float)));

    blend<<<(n + 255) / 256, 256>>>(n, t, da, db, dout);
    row_sums<<<(rows + 63) / 64, 64>>>(rows, cols, dout, dsums);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> out(n), sums(rows);
    CUDA_CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(sums.data(), dsums, rows * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    double checksum = 0.0;
    for (int i = 0; i < n; ++i) {
        float ref = a[i] * (1.0f - t) + b[i] * t;
        if (std::fabs(out[i] - ref) > 1e-5f) {
            ++bad;
        }
    }
    for (int r = 0; r < rows; ++r) {
        double ref = 0.0;
        for (int c = 0; c < cols; ++c) {
            ref += out[r * cols + c];
        }
        if (std::fabs(sums[r] - ref) > 1e-3) {
            ++bad;
        }
        checksum += sums[r];
    }
    unsigned long long hash = fnv1a(out.data(), n * sizeof(float));
    hash = fnv1a(sums.data(), rows * sizeof(float), hash);
    printf("device_helpers: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL",
           checksum, hash);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dout);
    cudaFree(dsums);
    return bad == 0 ? 0 : 1;
}

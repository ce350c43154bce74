// 1-D indexing: the everyday shapes of one-dimensional kernels (unit stride, neighbours,
// stride 2, reversed). Checks every output against the CPU and prints a checksum.
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

static unsigned int g_seed = 12345u;
static float frand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return static_cast<float>(g_seed >> 8) * (1.0f / 16777216.0f);
}

__global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}

// Neighbours: a 3-point average, copying the two ends.
__global__ void smooth3(int n, const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) {
        out[i] = (in[i - 1] + in[i] + in[i + 1]) * (1.0f / 3.0f);
    } else if (i < n) {
        out[i] = in[i];
    }
}

// Stride 2 and reversed.
__global__ void even_and_reverse(int n, const float* in, float* even, float* rev) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 2) {
        even[i] = in[2 * i];
    }
    if (i < n) {
        rev[i] = in[n - 1 - i];
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
    const int n = 1 << 16;
    std::vector<float> hx(n), hy(n);
    for (int i = 0; i < n; ++i) {
        hx[i] = frand();
        hy[i] = frand();
    }
    float *dx, *dy, *dsmooth, *deven, *drev;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dsmooth, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&deven, n / 2 * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&drev, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dy, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    // Poison the outputs: an element a kernel fails to write shows in the hash.
    CUDA_CHECK(cudaMemset(dsmooth, 0xFF, n * sizeof(float)));
    CUDA_CHECK(cudaMemset(deven, 0xFF, n / 2 * sizeof(float)));
    CUDA_CHECK(cudaMemset(drev, 0xFF, n * sizeof(float)));

    saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, dx, dy);
    smooth3<<<(n + 127) / 128, 128>>>(n, dy, dsmooth);
    even_and_reverse<<<(n + 255) / 256, 256>>>(n, dsmooth, deven, drev);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> even(n / 2), rev(n);
    CUDA_CHECK(cudaMemcpy(even.data(), deven, n / 2 * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(rev.data(), drev, n * sizeof(float), cudaMemcpyDeviceToHost));

    std::vector<float> gy(n), gsmooth(n);
    CUDA_CHECK(cudaMemcpy(gy.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gsmooth.data(), dsmooth, n * sizeof(float), cudaMemcpyDeviceToHost));
    unsigned long long hash = fnv1a(gy.data(), n * sizeof(float));
    hash = fnv1a(gsmooth.data(), n * sizeof(float), hash);
    hash = fnv1a(even.data(), n / 2 * sizeof(float), hash);
    hash = fnv1a(rev.data(), n * sizeof(float), hash);

    std::vector<float> y(n), smooth(n);
    for (int i = 0; i < n; ++i) {
        y[i] = 2.0f * hx[i] + hy[i];
    }
    for (int i = 0; i < n; ++i) {
        smooth[i] = (i > 0 && i < n - 1) ? (y[i - 1] + y[i] + y[i + 1]) * (1.0f / 3.0f) : y[i];
    }
    int bad = 0;
    double checksum = 0.0;
    for (int i = 0; i < n; ++i) {
        if (i < n / 2 && std::fabs(even[i] - smooth[2 * i]) > 1e-5f) {
            ++bad;
        }
        if (std::fabs(rev[i] - smooth[n - 1 - i]) > 1e-5f) {
            ++bad;
        }
        checksum += rev[i] + (i < n / 2 ? even[i] : 0.0f);
    }
    printf("vector_1d: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", checksum,
           hash);
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(dsmooth);
    cudaFree(deven);
    cudaFree(drev);
    return bad == 0 ? 0 : 1;
}

// Kernels written back to back, with no blank line between one kernel's closing brace and the
// next kernel's header: the rewriter must close the first kernel (its descriptor) before it
// opens the second (its template header). Checks every output against the CPU and prints a
// checksum.
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

static unsigned int g_seed = 424242u;
static float frand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return static_cast<float>(g_seed >> 8) * (1.0f / 16777216.0f);
}

__global__ void scale(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i];
    }
}
__global__ void shift(int n, const float* y, float* z) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        z[i] = y[i] + 1.0f;
    }
}
// A comment between two kernels.
__global__ void mix(int n, const float* x, const float* z, float* w) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        w[i] = x[i] - z[(i + 1) % n];
    }
}
__global__ void last(int n, const float* w, float* v) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) v[i] = 2.0f * w[i]; }

static unsigned long long fnv1a(const void* data, size_t bytes,
                                unsigned long long h = 1469598103934665603ull) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

int main() {
    const int n = 1 << 14;
    const size_t bytes = n * sizeof(float);
    std::vector<float> hx(n);
    for (int i = 0; i < n; ++i) {
        hx[i] = frand();
    }
    float *dx, *dy, *dz, *dw, *dv;
    CUDA_CHECK(cudaMalloc(&dx, bytes));
    CUDA_CHECK(cudaMalloc(&dy, bytes));
    CUDA_CHECK(cudaMalloc(&dz, bytes));
    CUDA_CHECK(cudaMalloc(&dw, bytes));
    CUDA_CHECK(cudaMalloc(&dv, bytes));
    CUDA_CHECK(cudaMemcpy(dx, hx.data(), bytes, cudaMemcpyHostToDevice));
    // Poison the outputs: an element a kernel fails to write shows in the hash.
    for (float* p : {dy, dz, dw, dv}) {
        CUDA_CHECK(cudaMemset(p, 0xFF, bytes));
    }
    const int block = 128;
    const int grid = (n + block - 1) / block;
    scale<<<grid, block>>>(n, 3.0f, dx, dy);
    shift<<<grid, block>>>(n, dy, dz);
    mix<<<grid, block>>>(n, dx, dz, dw);
    last<<<grid, block>>>(n, dw, dv);
    CUDA_CHECK(cudaGetLastError());
    std::vector<float> hy(n), hz(n), hw(n), hv(n);
    CUDA_CHECK(cudaMemcpy(hy.data(), dy, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hz.data(), dz, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hw.data(), dw, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hv.data(), dv, bytes, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        const float y = 3.0f * hx[i];
        const float z = y + 1.0f;
        const float zn = 3.0f * hx[(i + 1) % n] + 1.0f;
        const float w = hx[i] - zn;
        bad += hy[i] != y || hz[i] != z || hw[i] != w || hv[i] != 2.0f * w;
    }
    unsigned long long h = fnv1a(hy.data(), bytes);
    h = fnv1a(hz.data(), bytes, h);
    h = fnv1a(hw.data(), bytes, h);
    h = fnv1a(hv.data(), bytes, h);
    printf("adjacent_kernels: %s, outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", h);
    for (float* p : {dx, dy, dz, dw, dv}) {
        CUDA_CHECK(cudaFree(p));
    }
    return bad == 0 ? 0 : 1;
}

// A program whose kernels all live in files it includes: a `.cu` file of kernels (with a host
// wrapper that launches one) and a `.cuh` header with a kernel template, both in the program's
// folder tree (included/). The frontend analyses them and the rewriter writes rewritten copies
// next to the rewritten main file (same relative names), never touching the originals. Checks
// every output against the CPU and prints a checksum.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#include "included/saxpy_kernel.cu"
#include "included/stencil.cuh"

#define CUDA_CHECK(call)                                                                \
    do {                                                                                \
        cudaError_t err_ = (call);                                                      \
        if (err_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static unsigned int g_seed = 97531u;
static float frand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return static_cast<float>(g_seed >> 8) * (1.0f / 16777216.0f);
}

static unsigned long long fnv1a(const void* data, size_t bytes,
                                unsigned long long h = 1469598103934665603ull) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

int main() {
    const int n = 1 << 13;
    const size_t bytes = n * sizeof(float);
    std::vector<float> hx(n), hy(n), hw(5);
    std::vector<int> hidx(n);
    for (int i = 0; i < n; ++i) {
        hx[i] = frand();
        hy[i] = frand();
        hidx[i] = (i * 37 + 11) % n;
    }
    for (int k = 0; k < 5; ++k) {
        hw[k] = 1.0f / static_cast<float>(2 << k); // exact products: FMA or not
    }
    float *dx, *dy, *dg, *ds, *dw;
    int* didx;
    CUDA_CHECK(cudaMalloc(&dx, bytes));
    CUDA_CHECK(cudaMalloc(&dy, bytes));
    CUDA_CHECK(cudaMalloc(&dg, bytes));
    CUDA_CHECK(cudaMalloc(&ds, bytes));
    CUDA_CHECK(cudaMalloc(&dw, 5 * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&didx, n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dx, hx.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dy, hy.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dw, hw.data(), 5 * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(didx, hidx.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    // Poison the outputs: an element a kernel fails to write shows in the hash.
    CUDA_CHECK(cudaMemset(dg, 0xFF, bytes));
    CUDA_CHECK(cudaMemset(ds, 0xFF, bytes));

    const int grid = (n + INCLUDED_BLOCK - 1) / INCLUDED_BLOCK;
    saxpyIncluded<<<grid, INCLUDED_BLOCK>>>(n, 2.0f, dx, dy);
    launchGather(n, didx, dy, dg);
    stencilIncluded<2><<<grid, INCLUDED_BLOCK>>>(n, dg, dw, ds);
    CUDA_CHECK(cudaGetLastError());

    std::vector<float> ry(n), rg(n), rs(n);
    CUDA_CHECK(cudaMemcpy(ry.data(), dy, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(rg.data(), dg, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(rs.data(), ds, bytes, cudaMemcpyDeviceToHost));
    int bad = 0;
    std::vector<float> ey(n), eg(n);
    for (int i = 0; i < n; ++i) {
        ey[i] = 2.0f * hx[i] + hy[i];
    }
    for (int i = 0; i < n; ++i) {
        eg[i] = ey[hidx[i]];
        bad += ry[i] != ey[i] || rg[i] != eg[i];
    }
    for (int i = 0; i < n; ++i) {
        float sum = 0.0f;
        for (int k = -2; k <= 2; ++k) {
            int j = i + k < 0 ? 0 : (i + k > n - 1 ? n - 1 : i + k);
            sum += hw[k + 2] * eg[j];
        }
        bad += rs[i] != sum;
    }
    unsigned long long h = fnv1a(ry.data(), bytes);
    h = fnv1a(rg.data(), bytes, h);
    h = fnv1a(rs.data(), bytes, h);
    printf("included_kernels: %s, outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", h);
    for (float* p : {dx, dy, dg, ds, dw}) {
        CUDA_CHECK(cudaFree(p));
    }
    CUDA_CHECK(cudaFree(didx));
    return bad == 0 ? 0 : 1;
}

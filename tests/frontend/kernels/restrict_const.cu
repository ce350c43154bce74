// const __restrict__ pointers: a 1-D convolution whose weights every thread reads in the same
// order, and a row scaling where the whole block reads one scale factor.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define RADIUS 4

#define CUDA_CHECK(call)                                                                \
    do {                                                                                \
        cudaError_t err_ = (call);                                                      \
        if (err_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static unsigned int g_seed = 5150u;
static float frand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return static_cast<float>(g_seed >> 8) * (1.0f / 16777216.0f);
}

__global__ void convolve1d(int n, const float* __restrict__ in, const float* __restrict__ weights,
                           float* __restrict__ out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float acc = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; ++k) {
        int j = min(max(i + k, 0), n - 1);
        acc += weights[k + RADIUS] * in[j];
    }
    out[i] = acc;
}

// One row per blockIdx.y; the block's threads all read scale[row].
__global__ void scale_rows(int cols, const float* __restrict__ scale,
                           const float* __restrict__ in, float* __restrict__ out) {
    int row = blockIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) {
        out[row * cols + c] = scale[row] * in[row * cols + c];
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
    const int n = 1 << 15;
    const int rows = 64;
    const int cols = n / rows;
    std::vector<float> in(n), w(2 * RADIUS + 1), scale(rows);
    for (int i = 0; i < n; ++i) {
        in[i] = frand();
    }
    for (int k = 0; k < 2 * RADIUS + 1; ++k) {
        w[k] = frand() / (2 * RADIUS + 1);
    }
    for (int r = 0; r < rows; ++r) {
        scale[r] = 1.0f + frand();
    }
    float *din, *dw, *dconv, *dscale, *dout;
    CUDA_CHECK(cudaMalloc(&din, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dw, (2 * RADIUS + 1) * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dconv, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dscale, rows * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dout, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(din, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dw, w.data(), (2 * RADIUS + 1) * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dscale, scale.data(), rows * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dconv, 0xFF, n * sizeof(float))); // poison the outputs
    CUDA_CHECK(cudaMemset(dout, 0xFF, n * sizeof(float)));

    convolve1d<<<(n + 255) / 256, 256>>>(n, din, dw, dconv);
    scale_rows<<<dim3((cols + 127) / 128, rows), 128>>>(cols, dscale, dconv, dout);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> out(n);
    CUDA_CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
    std::vector<float> conv(n);
    CUDA_CHECK(cudaMemcpy(conv.data(), dconv, n * sizeof(float), cudaMemcpyDeviceToHost));
    unsigned long long hash = fnv1a(conv.data(), n * sizeof(float));
    hash = fnv1a(out.data(), n * sizeof(float), hash);
    int bad = 0;
    double checksum = 0.0;
    for (int i = 0; i < n; ++i) {
        double acc = 0.0;
        for (int k = -RADIUS; k <= RADIUS; ++k) {
            int j = std::min(std::max(i + k, 0), n - 1);
            acc += static_cast<double>(w[k + RADIUS]) * in[j];
        }
        double ref = scale[i / cols] * acc;
        if (std::fabs(out[i] - ref) > 1e-4) {
            ++bad;
        }
        checksum += out[i];
    }
    printf("restrict_const: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL",
           checksum, hash);
    cudaFree(din);
    cudaFree(dw);
    cudaFree(dconv);
    cudaFree(dscale);
    cudaFree(dout);
    return bad == 0 ? 0 : 1;
}

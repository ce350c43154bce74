// __constant__ filter taps uploaded with cudaMemcpyToSymbol, a __device__ array written by the
// kernel and read back with cudaMemcpyFromSymbol, and the symbol's address range.
#include <cuda.h>
#include <cuda_runtime.h>

#include <vector>

#include "check.h"

#define TAPS 9
__constant__ float c_taps[TAPS];
__constant__ int c_params[2];
__device__ float d_blockSums[64];

__global__ void convolve(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    if (i < n) {
        for (int k = 0; k < TAPS; ++k) {
            int j = i + k - TAPS / 2;
            if (j >= 0 && j < n) s += c_taps[k] * in[j];
        }
        out[i] = s * static_cast<float>(c_params[0]) + static_cast<float>(c_params[1]);
    }
    __shared__ float partial[128];
    partial[threadIdx.x] = i < n ? out[i] : 0.0f;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (int k = 0; k < 128; ++k) t += partial[k];
        d_blockSums[blockIdx.x] = t;
    }
}

int main() {
    const int n = 1000;
    float taps[TAPS];
    for (int k = 0; k < TAPS; ++k) taps[k] = static_cast<float>(k + 1) / 45.0f;
    int params[2] = {2, -1};
    CUDA_OK(cudaMemcpyToSymbol(c_taps, taps, sizeof(taps)));
    CUDA_OK(cudaMemcpyToSymbolAsync(c_params, params, sizeof(params), 0, cudaMemcpyHostToDevice, 0));
    float *in, *out;
    CUDA_OK(cudaMallocManaged(&in, n * sizeof(float)));
    CUDA_OK(cudaMallocManaged(&out, n * sizeof(float)));
    for (int i = 0; i < n; ++i) in[i] = static_cast<float>(i % 10);
    const int blocks = (n + 127) / 128;
    MEMPLACE_LAUNCH(convolve, blocks, 128, 0, 0, in, out, n);
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<float> ref(n);
    for (int i = 0; i < n; ++i) {
        float s = 0.0f;
        for (int k = 0; k < TAPS; ++k) {
            int j = i + k - TAPS / 2;
            if (j >= 0 && j < n) s += taps[k] * in[j];
        }
        ref[i] = s * 2.0f - 1.0f;
        CHECK(out[i] == ref[i]);
    }
    float sums[64];
    CUDA_OK(cudaMemcpyFromSymbol(sums, d_blockSums, blocks * sizeof(float)));
    for (int b = 0; b < blocks; ++b) {
        float t = 0.0f;
        for (int k = 0; k < 128; ++k) t += b * 128 + k < n ? ref[b * 128 + k] : 0.0f;
        CHECK(sums[b] == t);
    }
    void* addr = nullptr;
    CUDA_OK(cudaGetSymbolAddress(&addr, c_taps));
    CUdeviceptr base;
    size_t size;
    CHECK(cuMemGetAddressRange(&base, &size, reinterpret_cast<CUdeviceptr>(addr) + 8) == CUDA_SUCCESS);
    CHECK(size == sizeof(c_taps));
    CHECK(cudaMemcpyToSymbol(c_taps, taps, sizeof(taps) + 4) == cudaErrorInvalidValue);
    return finish("constant_memory");
}

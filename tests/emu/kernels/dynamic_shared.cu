// Dynamic shared memory as the rewriter normalises it (MEMPLACE_DYNAMIC_SHARED), carved into
// two arrays, above 48 KB with cudaFuncSetAttribute, and the launch error without the opt-in.
#include <cuda_runtime.h>

#include <vector>

#include "check.h"

__global__ void transposeAndCount(const float* in, float* out, int* counts, int w) {
    MEMPLACE_DYNAMIC_SHARED(float, smem); // extern __shared__ float smem[];
    float* tile = smem;
    int* hits = reinterpret_cast<int*>(smem + w * w);
    int t = threadIdx.x;
    for (int i = t; i < w * w; i += blockDim.x) tile[i] = in[blockIdx.x * w * w + i];
    for (int i = t; i < w; i += blockDim.x) hits[i] = 0;
    __syncthreads();
    for (int i = t; i < w * w; i += blockDim.x) {
        int r = i / w, c = i % w;
        out[blockIdx.x * w * w + c * w + r] = tile[i];
        atomicAdd(&hits[r], 1);
    }
    __syncthreads();
    for (int i = t; i < w; i += blockDim.x) counts[blockIdx.x * w + i] = hits[i];
}

int main() {
    const int w = 120, blocks = 3;
    const size_t bytes = w * w * sizeof(float) + w * sizeof(int); // 58080 bytes > 48 KB
    float *in, *out;
    int* counts;
    CUDA_OK(cudaMallocManaged(&in, blocks * w * w * sizeof(float)));
    CUDA_OK(cudaMallocManaged(&out, blocks * w * w * sizeof(float)));
    CUDA_OK(cudaMallocManaged(&counts, blocks * w * sizeof(int)));
    for (int i = 0; i < blocks * w * w; ++i) in[i] = static_cast<float>(i);
    MEMPLACE_LAUNCH(transposeAndCount, blocks, 256, bytes, 0, in, out, counts, w);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue); // needs the opt-in
    CUDA_OK(cudaFuncSetAttribute(transposeAndCount, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    MEMPLACE_LAUNCH(transposeAndCount, blocks, 256, bytes, 0, in, out, counts, w);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaDeviceSynchronize());
    for (int b = 0; b < blocks; ++b)
        for (int r = 0; r < w; ++r) {
            CHECK(counts[b * w + r] == w);
            for (int c = 0; c < w; ++c) CHECK(out[b * w * w + c * w + r] == in[b * w * w + r * w + c]);
        }
    return finish("dynamic_shared");
}

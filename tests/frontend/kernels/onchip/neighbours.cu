// Shared tiles read by other threads than their writers: a three-point average over a tile with
// a halo (tile[tid], tile[tid + 1], tile[tid + 2]: the barrier is needed), a table indexed by
// data (not private: the index is read from memory), and a barrier in a helper called twice.
#include <cuda_runtime.h>

#define BLOCK 128

__global__ void average3(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float tile[BLOCK + 2];
    int tid = threadIdx.x;
    int g = blockIdx.x * BLOCK + tid;
    tile[tid + 1] = in[g];
    if (tid == 0) {
        tile[0] = g > 0 ? in[g - 1] : 0.0f;
        tile[BLOCK + 1] = g + BLOCK < n ? in[g + BLOCK] : 0.0f;
    }
    __syncthreads();
    out[g] = (tile[tid] + tile[tid + 1] + tile[tid + 2]) / 3.0f;
}

__global__ void lookup(const int* __restrict__ keys, const int* __restrict__ table,
                       int* __restrict__ out) {
    __shared__ int lut[BLOCK];
    int tid = threadIdx.x;
    lut[tid] = table[tid];
    __syncthreads();
    out[blockIdx.x * BLOCK + tid] = lut[keys[blockIdx.x * BLOCK + tid]];
}

__device__ void blockWait() {
    __syncthreads();
}

// Reverses each block's slice: thread tid reads what thread BLOCK - 1 - tid wrote.
__global__ void reverseBlock(const float* __restrict__ in, float* __restrict__ out) {
    __shared__ float rev[BLOCK];
    int tid = threadIdx.x;
    rev[tid] = in[blockIdx.x * BLOCK + tid];
    blockWait();
    out[blockIdx.x * BLOCK + tid] = rev[BLOCK - 1 - tid];
    blockWait();
}

int main() {
    const int blocks = 4;
    float* a = nullptr;
    float* b = nullptr;
    int* k = nullptr;
    int* t = nullptr;
    int* o = nullptr;
    cudaMalloc(&a, blocks * BLOCK * sizeof(float));
    cudaMalloc(&b, blocks * BLOCK * sizeof(float));
    cudaMalloc(&k, blocks * BLOCK * sizeof(int));
    cudaMalloc(&t, BLOCK * sizeof(int));
    cudaMalloc(&o, blocks * BLOCK * sizeof(int));
    average3<<<blocks, BLOCK>>>(a, b, blocks * BLOCK);
    lookup<<<blocks, BLOCK>>>(k, t, o);
    reverseBlock<<<blocks, BLOCK>>>(a, b);
    cudaDeviceSynchronize();
    return 0;
}

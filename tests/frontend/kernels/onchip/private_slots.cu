// Thread-private shared arrays: one slot per thread (acc[tid]), several slots per thread strided
// by the block size (slots[j * BLOCK + tid]: constant indices once the j loop is unrolled), and
// slots picked by a loop whose trip count is a runtime value (dyn: private, dynamic indices).
// The barrier orders nothing another thread reads: every thread reads back only what it wrote.
#include <cuda_runtime.h>

#define BLOCK 64
#define SLOTS 4

__global__ void privateSlots(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float acc[BLOCK];
    __shared__ float slots[SLOTS * BLOCK];
    __shared__ float dyn[SLOTS * BLOCK];
    int tid = threadIdx.x;
    int g = blockIdx.x * BLOCK + tid;
    acc[tid] = 0.0f;
    for (int j = 0; j < SLOTS; ++j) {
        slots[j * BLOCK + tid] = in[g] * (j + 1);
    }
    for (int k = 0; k < n; ++k) {
        dyn[k * BLOCK + tid] = in[g] - k;
    }
    __syncthreads();
    for (int j = 0; j < SLOTS; ++j) {
        acc[tid] += slots[j * BLOCK + tid];
    }
    for (int k = 0; k < n; ++k) {
        acc[tid] += dyn[k * BLOCK + tid];
    }
    out[g] = acc[tid];
}

// The same one-slot array with no launch in the file: the block's shape is unknown, so threads
// that differ only in threadIdx.y could share a slot.
__global__ void privateNoLaunch(float* data) {
    __shared__ float mine[256];
    mine[threadIdx.x] = data[threadIdx.x];
    data[threadIdx.x] = mine[threadIdx.x] * 2.0f;
}

// Dynamic shared memory: one extern array indexed by the thread is private; two extern arrays
// are the same memory, so neither is.
__global__ void externPrivate(float* data) {
    extern __shared__ float buf[];
    int g = blockIdx.x * BLOCK + threadIdx.x;
    buf[threadIdx.x] = data[g];
    data[g] = buf[threadIdx.x] + 1.0f;
}

__global__ void externTwo(float* data) {
    extern __shared__ float lo[];
    extern __shared__ float hi[];
    int g = blockIdx.x * BLOCK + threadIdx.x;
    lo[threadIdx.x] = data[g];
    hi[threadIdx.x] = data[g] * 2.0f;
    data[g] = lo[threadIdx.x] + hi[threadIdx.x];
}

int main() {
    const int blocks = 8;
    float* in = nullptr;
    float* out = nullptr;
    cudaMalloc(&in, blocks * BLOCK * sizeof(float));
    cudaMalloc(&out, blocks * BLOCK * sizeof(float));
    privateSlots<<<blocks, BLOCK>>>(in, out, 2);
    externPrivate<<<blocks, BLOCK, BLOCK * sizeof(float)>>>(out);
    externTwo<<<blocks, BLOCK, BLOCK * sizeof(float)>>>(out);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
    return 0;
}

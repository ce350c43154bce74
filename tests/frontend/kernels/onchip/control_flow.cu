// Barriers and control flow: a loop whose `continue` skips the last barrier (that barrier orders
// only a thread's own element, the other two order the neighbour's), a barrier with nothing
// after it, a call whose body is not visible beside a barrier, and slots strided by 32 with only
// `__launch_bounds__(32)` to bound the block (its shape stays unknown); inline assembly.
#include <cuda_runtime.h>

#define W 32

__device__ float external(float v); // defined in another translation unit

__global__ void skipping(const float* __restrict__ in, float* __restrict__ out, int n, int skip) {
    __shared__ float s[W + 1];
    int tx = threadIdx.x;
    float r = 0.0f;
    if (tx == 0) {
        s[W] = 0.0f;
    }
    for (int i = 0; i < n; ++i) {
        __syncthreads();
        r += s[tx + 1];
        __syncthreads();
        s[tx] = in[i * W + tx] + r;
        if (i == skip) {
            continue;
        }
        __syncthreads();
        out[i * W + tx] = s[tx];
    }
}

__global__ void tail(const float* __restrict__ in, float* __restrict__ out) {
    __shared__ float s[W];
    s[threadIdx.x] = in[blockIdx.x * W + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * W + threadIdx.x] = s[threadIdx.x];
    __syncthreads();
}

__global__ void opaque(const float* __restrict__ in, float* __restrict__ out) {
    __shared__ float s[W];
    s[threadIdx.x] = in[blockIdx.x * W + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * W + threadIdx.x] = external(s[threadIdx.x]);
}

__global__ void __launch_bounds__(W) boundedSlots(float* data) {
    __shared__ float slot[4 * W];
    for (int j = 0; j < 4; ++j) {
        slot[j * W + threadIdx.x] = data[j * W + threadIdx.x];
    }
    for (int j = 0; j < 4; ++j) {
        data[j * W + threadIdx.x] = slot[j * W + threadIdx.x] * 2.0f;
    }
}

// Inline assembly beside a barrier: it could synchronise or touch memory; the barrier stays.
__global__ void withAsm(const float* __restrict__ in, float* __restrict__ out) {
    __shared__ float s[W];
    unsigned lane = 0;
    s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    out[threadIdx.x] = s[threadIdx.x] + lane;
}

int main() {
    float* a = nullptr;
    float* b = nullptr;
    cudaMalloc(&a, 8 * W * sizeof(float));
    cudaMalloc(&b, 8 * W * sizeof(float));
    skipping<<<1, W>>>(a, b, 8, 3);
    tail<<<8, W>>>(a, b);
    opaque<<<8, W>>>(a, b);
    withAsm<<<1, W>>>(a, b);
    cudaDeviceSynchronize();
    return 0;
}

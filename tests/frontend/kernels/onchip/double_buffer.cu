// A minimum-cost path step in the manner of a dynamic-programming wavefront: `prev` holds the
// row before, `result` the row being computed. result[tx] is touched by its thread only
// (private, a register candidate), but every barrier is needed: prev[tx - 1] and prev[tx + 1]
// are read by the neighbours of the thread that writes prev[tx], both before that write (the
// second barrier) and after it in the next step (the third).
#include <cuda_runtime.h>

#define COLS 128

__global__ void minPathStep(const int* __restrict__ cost, const int* __restrict__ first,
                            int* __restrict__ last, int width, int steps) {
    __shared__ int prev[COLS];
    __shared__ int result[COLS];
    int tx = threadIdx.x;
    int x = blockIdx.x * COLS + tx;
    prev[tx] = first[x];
    __syncthreads();
    for (int s = 0; s < steps; ++s) {
        int best = prev[tx];
        if (tx > 0 && prev[tx - 1] < best) {
            best = prev[tx - 1];
        }
        if (tx < COLS - 1 && prev[tx + 1] < best) {
            best = prev[tx + 1];
        }
        result[tx] = best + cost[s * width + x];
        __syncthreads();
        prev[tx] = result[tx];
        __syncthreads();
    }
    last[x] = prev[tx];
}

int main() {
    const int blocks = 2;
    const int steps = 8;
    int* cost = nullptr;
    int* first = nullptr;
    int* last = nullptr;
    cudaMalloc(&cost, steps * blocks * COLS * sizeof(int));
    cudaMalloc(&first, blocks * COLS * sizeof(int));
    cudaMalloc(&last, blocks * COLS * sizeof(int));
    minPathStep<<<blocks, COLS>>>(cost, first, last, blocks * COLS, steps);
    cudaDeviceSynchronize();
    return 0;
}

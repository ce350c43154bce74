// A kernel that deadlocks: lane 0 of each warp waits at __syncthreads while its warp waits for
// it at __shfl_sync. The emulator must report it with the kernel and the block, not hang.
// Run with MEMPLACE_EMU_FATAL=0: the error comes back as CUDA's sticky launch failure.
#include <cuda_runtime.h>

#include "check.h"

__global__ void broadcastFromLaneZero(int* out) {
    int v = static_cast<int>(threadIdx.x);
    if ((threadIdx.x & 31) == 0) __syncthreads();
    v = __shfl_sync(0xffffffffu, v, 0);
    out[threadIdx.x] = v;
}

int main() {
    int* out;
    CUDA_OK(cudaMallocManaged(&out, 64 * sizeof(int)));
    MEMPLACE_LAUNCH(broadcastFromLaneZero, 4, 64, 0, 0, out);
    cudaError_t e = cudaDeviceSynchronize();
    std::printf("cudaDeviceSynchronize: %s\n", cudaGetErrorName(e));
    CHECK(e == cudaErrorLaunchFailure);
    CHECK(cudaMemcpy(out, out, 4, cudaMemcpyDeviceToDevice) == cudaErrorLaunchFailure); // sticky
    return finish("deadlock");
}

// Atomics across blocks that run at the same time on several OS threads (ctest runs this with
// MEMPLACE_EMU_THREADS=4): a histogram, a float maximum built from atomicCAS, a ring counter
// with atomicInc, and a lock-protected critical section.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "check.h"

__device__ float atomicMaxFloat(float* addr, float value) {
    int* a = reinterpret_cast<int*>(addr);
    int old = *a, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= value) break;
        old = atomicCAS(a, assumed, __float_as_int(value));
    } while (assumed != old);
    return __int_as_float(old);
}

__global__ void kernel(const float* x, int n, unsigned* bins, float* mx, unsigned* ring, int* lock, double* lockedSum) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float v = x[i];
        atomicAdd(&bins[static_cast<int>(v) % 64], 1u);
        atomicMaxFloat(mx, v);
        atomicInc(ring, 99u);
        if ((i & 31) == 0) { // one thread per warp takes the lock
            while (atomicCAS(lock, 0, 1) != 0) {
            }
            __threadfence();
            *lockedSum += v;
            __threadfence();
            atomicExch(lock, 0);
        }
    }
}

int main() {
    const int n = 100000;
    float* x;
    unsigned *bins, *ring;
    float* mx;
    int* lock;
    double* lockedSum;
    CUDA_OK(cudaMallocManaged(&x, n * sizeof(float)));
    CUDA_OK(cudaMallocManaged(&bins, 64 * sizeof(unsigned)));
    CUDA_OK(cudaMallocManaged(&mx, sizeof(float)));
    CUDA_OK(cudaMallocManaged(&ring, sizeof(unsigned)));
    CUDA_OK(cudaMallocManaged(&lock, sizeof(int)));
    CUDA_OK(cudaMallocManaged(&lockedSum, sizeof(double)));
    for (int i = 0; i < n; ++i) x[i] = static_cast<float>((i * 2654435761u) % 100003) / 7.0f;
    *mx = -1.0f;
    MEMPLACE_LAUNCH(kernel, 64, 128, 0, 0, x, n, bins, mx, ring, lock, lockedSum);
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<unsigned> expect(64, 0);
    double expectLocked = 0;
    for (int i = 0; i < n; ++i) {
        ++expect[static_cast<int>(x[i]) % 64];
        if ((i & 31) == 0) expectLocked += x[i];
    }
    for (int b = 0; b < 64; ++b) CHECK(bins[b] == expect[b]);
    CHECK(*mx == *std::max_element(x, x + n));
    CHECK(*ring == static_cast<unsigned>(n % 100));
    CHECK(std::fabs(*lockedSum - expectLocked) < 1e-6 * expectLocked);
    CHECK(*lock == 0);
    std::printf("worker threads: %u\n", memplace::emu::workerThreads());
    return finish("atomics_blocks");
}

// The two small kernels a sweep (host.h: Decision::Kind::Sweep) needs from the program's own
// translation unit, since the host library launches no kernels of its own: a bitwise comparison
// of two device buffers, and a busy-wait that keeps the GPU ahead of the host while it prepares
// a timed launch. Internal linkage, like the constant pool: each translation unit has its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>

#if defined(__CUDACC__) && !defined(MEMPLACE_LAUNCH)
#define MEMPLACE_LAUNCH(kernel, grid, block, sharedBytes, stream, ...)                             \
    kernel<<<grid, block, sharedBytes, stream>>>(__VA_ARGS__)
#endif

namespace memplace {
namespace {

/// Counts the 32-bit words (16-byte path) or bytes (byte path) where a and b differ.
__global__ void sweepCompareKernel(const unsigned char* a, const unsigned char* b,
                                   unsigned long long bytes, int vec16,
                                   unsigned long long* counter) {
    const unsigned long long stride =
        static_cast<unsigned long long>(gridDim.x) * static_cast<unsigned long long>(blockDim.x);
    const unsigned long long first =
        static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    unsigned long long diff = 0;
    unsigned long long tail = 0;
    if (vec16 != 0) {
        const unsigned long long vecs = bytes / 16;
        const uint4* va = reinterpret_cast<const uint4*>(a);
        const uint4* vb = reinterpret_cast<const uint4*>(b);
        for (unsigned long long i = first; i < vecs; i += stride) {
            const uint4 x = va[i];
            const uint4 y = vb[i];
            diff += (x.x != y.x) + (x.y != y.y) + (x.z != y.z) + (x.w != y.w);
        }
        tail = vecs * 16;
    }
    for (unsigned long long i = tail + first; i < bytes; i += stride) {
        diff += a[i] != b[i];
    }
    if (diff != 0) {
        atomicAdd(counter, diff);
    }
}

inline cudaError_t sweepCompare(const void* a, const void* b, std::size_t bytes,
                                unsigned long long* counter, cudaStream_t stream) {
    if (bytes == 0) {
        return cudaSuccess;
    }
    const int vec16 =
        ((reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b)) % 16) == 0 ? 1
                                                                                                : 0;
    const std::size_t units = vec16 != 0 ? bytes / 16 + 1 : bytes;
    const unsigned blocks = static_cast<unsigned>(units / 256 + 1 < 2048 ? units / 256 + 1 : 2048);
    MEMPLACE_LAUNCH(sweepCompareKernel, dim3(blocks), dim3(256), 0, stream,
                    static_cast<const unsigned char*>(a), static_cast<const unsigned char*>(b),
                    static_cast<unsigned long long>(bytes), vec16, counter);
    return cudaPeekAtLastError();
}

#if defined(MEMPLACE_EMU)
using SweepSpinFn = cudaError_t (*)(long long, cudaStream_t);
/// Under the CPU emulation layer host and "GPU" are one: no busy-wait.
inline SweepSpinFn sweepSpinFn() {
    return nullptr;
}
#else
/// One thread waits `ns` nanoseconds of the GPU's global timer.
__global__ void sweepSpinKernel(long long ns) {
    unsigned long long t0 = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    unsigned long long t = t0;
    while (static_cast<long long>(t - t0) < ns) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    }
}

inline cudaError_t sweepSpin(long long ns, cudaStream_t stream) {
    MEMPLACE_LAUNCH(sweepSpinKernel, dim3(1), dim3(1), 0, stream, ns);
    return cudaPeekAtLastError();
}

using SweepSpinFn = cudaError_t (*)(long long, cudaStream_t);
inline SweepSpinFn sweepSpinFn() {
    return &sweepSpin;
}
#endif

} // namespace
} // namespace memplace

// Prints the emulated device's properties: ctest runs it with MEMPLACE_SPEC set to check that
// the spec chooses the device, and with a bad spec to check that the failure is loud.
#include <cuda_runtime.h>

#include <cstdio>

int main() {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        std::printf("cudaGetDeviceCount: %s\n", cudaGetErrorName(e));
        return 1;
    }
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return 1;
    int l2 = 0;
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
    std::printf("%s: sm_%d%d, %d SMs, %zu bytes shared per block (opt-in), L2 %d bytes\n", p.name, p.major,
                p.minor, p.multiProcessorCount, p.sharedMemPerBlockOptin, l2);
    return 0;
}

// Unsupported features used at run time fail loudly with their names: a texture over a CUDA
// array, a device attribute the emulator does not answer, a stream attribute it does not know.
#include <cuda_runtime.h>

#include "check.h"

int main() {
    cudaResourceDesc res{};
    res.resType = cudaResourceTypeArray;
    cudaTextureDesc td{};
    cudaTextureObject_t t;
    CHECK(cudaCreateTextureObject(&t, &res, &td, nullptr) == cudaErrorNotSupported);
    int v;
    CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMemSyncDomainCount, 0) == cudaErrorNotSupported);
    cudaStreamAttrValue a{};
    CHECK(cudaStreamSetAttribute(0, cudaLaunchAttributeClusterDimension, &a) == cudaErrorNotSupported);
    CHECK(cudaGetLastError() == cudaErrorNotSupported);
    CHECK(cudaGetLastError() == cudaSuccess);
    return finish("unsupported_runtime");
}

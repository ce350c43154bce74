// Shared by included_kernels.cu and its kernel files: no kernels here, so the rewriter leaves it
// alone (no copy is written) and the rewritten kernel file still finds it through the source
// folder on the include path.
#pragma once

#define INCLUDED_BLOCK 128

__device__ __forceinline__ int includedGlobalIndex() {
    return blockIdx.x * blockDim.x + threadIdx.x;
}

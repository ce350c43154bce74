// Kernels in a `.cu` file that the main program includes (`#include "included/saxpy_kernel.cu"`),
// the way many programs split kernels from host code, with a host wrapper that launches one of
// them. Not a program of its own.
#pragma once

#include "included_common.h"

__global__ void saxpyIncluded(int n, float a, const float* x, float* y) {
    int i = includedGlobalIndex();
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}

__global__ void gatherIncluded(int n, const int* idx, const float* src, float* dst) {
    int i = includedGlobalIndex();
    if (i < n) {
        dst[i] = src[idx[i]];
    }
}

// A host wrapper in the included file: its launch is rewritten in the copy.
static void launchGather(int n, const int* idx, const float* src, float* dst) {
    gatherIncluded<<<(n + INCLUDED_BLOCK - 1) / INCLUDED_BLOCK, INCLUDED_BLOCK>>>(n, idx, src,
                                                                                  dst);
}

// A kernel template in a `.cuh` header of the program, included by the main file.
#pragma once

template <int Radius>
__global__ void stencilIncluded(int n, const float* in, const float* weights, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float sum = 0.0f;
    for (int k = -Radius; k <= Radius; ++k) {
        int j = min(max(i + k, 0), n - 1);
        sum += weights[k + Radius] * in[j];
    }
    out[i] = sum;
}

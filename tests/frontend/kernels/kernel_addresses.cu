// Kernels whose address the host takes: a cache preference set on a kernel before its launches
// (rewritten: the preference names the default instantiation, which runs the placement as
// written), a kernel chosen at run time through a function pointer and one launched with
// cudaLaunchKernel (left as written, with a warning naming the line: an instantiation over
// accessors has another type). Checks against the CPU, prints a checksum of the outputs.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                \
    do {                                                                                \
        cudaError_t err_ = (call);                                                      \
        if (err_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

// Three-point average of `in` into `out` (edges copied).
__global__ void smooth3(int n, const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0 || i == n - 1) {
        out[i] = in[i];
    } else if (i < n) {
        out[i] = (in[i - 1] + in[i] + in[i + 1]) * 0.25f + in[i] * 0.25f;
    }
}

__global__ void doubleUp(int n, const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] * 2.0f;
    }
}

__global__ void halveDown(int n, const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] * 0.5f;
    }
}

__global__ void negate(int n, float* data) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        data[i] = -data[i];
    }
}

static unsigned long long fnv1a(const void* data, size_t bytes, unsigned long long h) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

int main(int argc, char** argv) {
    const int n = 4000;
    const int block = 128;
    const int grid = (n + block - 1) / block;
    std::vector<float> hIn(n);
    for (int i = 0; i < n; ++i) {
        hIn[i] = static_cast<float>((i * 37) % 251) * 0.125f;
    }
    float *dIn, *dSmooth, *dScaled;
    CUDA_CHECK(cudaMalloc(&dIn, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dSmooth, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dScaled, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dIn, hIn.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dSmooth, 0xFF, n * sizeof(float)));
    CUDA_CHECK(cudaMemset(dScaled, 0xFF, n * sizeof(float)));

    CUDA_CHECK(cudaFuncSetCacheConfig(smooth3, cudaFuncCachePreferL1));
    smooth3<<<grid, block>>>(n, dIn, dSmooth);

    const bool up = argc < 2; // the kernel is chosen at run time
    void (*scale)(int, const float*, float*) = up ? doubleUp : halveDown;
    scale<<<grid, block>>>(n, dSmooth, dScaled);

    int count = n;
    void* args[] = {&count, &dScaled};
    CUDA_CHECK(cudaLaunchKernel(negate, dim3(grid), dim3(block), args, 0, 0));
    CUDA_CHECK(cudaGetLastError());

    std::vector<float> hSmooth(n), hScaled(n);
    CUDA_CHECK(cudaMemcpy(hSmooth.data(), dSmooth, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hScaled.data(), dScaled, n * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        float s = i == 0 || i == n - 1
                      ? hIn[i]
                      : (hIn[i - 1] + hIn[i] + hIn[i + 1]) * 0.25f + hIn[i] * 0.25f;
        bad += hSmooth[i] != s;
        bad += hScaled[i] != -(s * (up ? 2.0f : 0.5f));
    }
    unsigned long long h = 1469598103934665603ull;
    h = fnv1a(hSmooth.data(), n * sizeof(float), h);
    h = fnv1a(hScaled.data(), n * sizeof(float), h);
    printf("kernel_addresses: %s, outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", h);
    CUDA_CHECK(cudaFree(dIn));
    CUDA_CHECK(cudaFree(dSmooth));
    CUDA_CHECK(cudaFree(dScaled));
    return bad == 0 ? 0 : 1;
}

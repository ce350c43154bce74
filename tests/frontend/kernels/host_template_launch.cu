// Kernel templates launched from host function templates that let the launch deduce the
// kernel's template arguments, as image and signal libraries write them: one host template per
// element type, instantiated explicitly and implicitly; a kernel with two deduced types that
// the host template lists in the other order; a kernel with an explicit block size and a
// deduced element type. The rewriter spells the kernel's arguments with the host template's
// parameters (`scaleInto<<<...>>>(src, dst, n, f)` in `template <typename T>` becomes
// `memplace::launch<memplace_kernel_scaleInto<T>>`). (A host template whose kernel argument
// is not one of its own parameters keeps its launch as written: tests/rewrite/rewrite_test.cpp.)
// Integer and exactly representable float arithmetic: checks against the CPU, prints a checksum.
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

template <typename T>
__global__ void scaleInto(const T* src, T* dst, int n, T factor) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        dst[i] = src[i] * factor + src[n - 1 - i];
    }
}

template <class In, class Out>
__global__ void convert(const In* in, Out* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = static_cast<Out>(in[i]) - static_cast<Out>(i % 3);
    }
}

template <int BLOCK, typename T>
__global__ void blockSums(const T* in, T* sums, int n) {
    __shared__ T partial[BLOCK];
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    partial[threadIdx.x] = i < n ? in[i] : T(0);
    __syncthreads();
    if (threadIdx.x == 0) {
        T s = T(0);
        for (int k = 0; k < BLOCK; ++k) {
            s += partial[k];
        }
        sums[blockIdx.x] = s;
    }
}

template <typename T>
void scale(const T* dSrc, T* dDst, int n, T factor) {
    scaleInto<<<(n + 127) / 128, 128>>>(dSrc, dDst, n, factor);
}
template void scale<float>(const float*, float*, int, float);

template <class Out, class In>
void convertAll(const In* dIn, Out* dOut, int n) {
    convert<<<(n + 63) / 64, 64>>>(dIn, dOut, n);
}

template <typename T>
void sums(const T* dIn, T* dSums, int n) {
    blockSums<64><<<(n + 63) / 64, 64>>>(dIn, dSums, n);
}

static unsigned long long fnv1a(const void* data, size_t bytes, unsigned long long h) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

int main() {
    const int n = 500, blocks = (n + 63) / 64;
    std::vector<float> hf(n);
    std::vector<int> hi(n);
    for (int i = 0; i < n; ++i) {
        hi[i] = (i * 29 + 3) % 101 - 50;
        hf[i] = static_cast<float>(hi[i]) * 0.25f;
    }
    float *dF, *dF2, *dFs;
    int *dI, *dI2, *dIs;
    double* dD;
    CUDA_CHECK(cudaMalloc(&dF, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dF2, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dFs, blocks * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dI, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dI2, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dIs, blocks * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dD, n * sizeof(double)));
    CUDA_CHECK(cudaMemcpy(dF, hf.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dI, hi.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    scale(dF, dF2, n, 2.0f);
    scale<int>(dI, dI2, n, 3);
    convertAll<double>(dI, dD, n);
    sums(dF2, dFs, n);
    sums(dI2, dIs, n);
    CUDA_CHECK(cudaGetLastError());
    std::vector<float> gf2(n), gfs(blocks);
    std::vector<int> gi2(n), gis(blocks);
    std::vector<double> gd(n);
    CUDA_CHECK(cudaMemcpy(gf2.data(), dF2, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gfs.data(), dFs, blocks * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gi2.data(), dI2, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gis.data(), dIs, blocks * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gd.data(), dD, n * sizeof(double), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        bad += gf2[i] != hf[i] * 2.0f + hf[n - 1 - i]; // multiples of 0.25 below 2^20: exact
        bad += gi2[i] != hi[i] * 3 + hi[n - 1 - i];
        bad += gd[i] != static_cast<double>(hi[i]) - static_cast<double>(i % 3);
    }
    for (int b = 0; b < blocks; ++b) {
        float sf = 0.0f;
        int si = 0;
        for (int k = 0; k < 64 && b * 64 + k < n; ++k) {
            sf += gf2[b * 64 + k];
            si += gi2[b * 64 + k];
        }
        bad += gfs[b] != sf;
        bad += gis[b] != si;
    }
    unsigned long long h = 1469598103934665603ull;
    h = fnv1a(gf2.data(), gf2.size() * sizeof(float), h);
    h = fnv1a(gfs.data(), gfs.size() * sizeof(float), h);
    h = fnv1a(gi2.data(), gi2.size() * sizeof(int), h);
    h = fnv1a(gis.data(), gis.size() * sizeof(int), h);
    h = fnv1a(gd.data(), gd.size() * sizeof(double), h);
    printf("host_template_launch: %s, outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", h);
    CUDA_CHECK(cudaFree(dF));
    CUDA_CHECK(cudaFree(dF2));
    CUDA_CHECK(cudaFree(dFs));
    CUDA_CHECK(cudaFree(dI));
    CUDA_CHECK(cudaFree(dI2));
    CUDA_CHECK(cudaFree(dIs));
    CUDA_CHECK(cudaFree(dD));
    return bad == 0 ? 0 : 1;
}

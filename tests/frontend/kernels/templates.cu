// Templates: a kernel template instantiated for three element types, a block reduction
// templated on its type and block size (a __shared__ array of BLOCK elements), and a template
// no launch instantiates.
#include <cmath>
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

static unsigned int g_seed = 8086u;
static unsigned int urand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}

template <typename T>
__global__ void scale(int n, T factor, const T* in, T* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = factor * in[i];
    }
}

template <typename T, int BLOCK>
__global__ void block_sum(int n, const T* in, T* partial) {
    __shared__ T buf[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    buf[threadIdx.x] = i < n ? in[i] : T(0);
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) {
            buf[threadIdx.x] += buf[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = buf[0];
    }
}

template <typename T>
__global__ void fill_unused(int n, T* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = T(1);
    }
}

// FNV-1a over the bytes of the outputs: equal hashes mean bitwise-equal results.
static unsigned long long fnv1a(const void* data, size_t bytes,
                                unsigned long long h = 1469598103934665603ull) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

template <typename T>
static std::vector<T> run_scale(const std::vector<T>& in, T factor) {
    int n = static_cast<int>(in.size());
    T *din, *dout;
    CUDA_CHECK(cudaMalloc(&din, n * sizeof(T)));
    CUDA_CHECK(cudaMalloc(&dout, n * sizeof(T)));
    CUDA_CHECK(cudaMemcpy(din, in.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dout, 0xFF, n * sizeof(T))); // poison the output
    scale<T><<<(n + 255) / 256, 256>>>(n, factor, din, dout);
    CUDA_CHECK(cudaGetLastError());
    std::vector<T> out(n);
    CUDA_CHECK(cudaMemcpy(out.data(), dout, n * sizeof(T), cudaMemcpyDeviceToHost));
    cudaFree(din);
    cudaFree(dout);
    return out;
}

int main() {
    const int n = 10000;
    std::vector<float> f(n);
    std::vector<double> d(n);
    std::vector<int> k(n);
    for (int i = 0; i < n; ++i) {
        k[i] = static_cast<int>(urand() % 1000);
        f[i] = k[i] * 0.25f;
        d[i] = k[i] * 0.125;
    }
    std::vector<float> f2 = run_scale(f, 2.0f);
    std::vector<double> d2 = run_scale(d, 4.0);
    std::vector<int> k2 = run_scale(k, 3);

    // Sums: float blocks of 256, int blocks of 128 (exact: the inputs are small integers).
    const int fblocks = (n + 255) / 256;
    const int iblocks = (n + 127) / 128;
    float *df, *dfpart;
    int *dk, *dkpart;
    CUDA_CHECK(cudaMalloc(&df, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dfpart, fblocks * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dk, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dkpart, iblocks * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(df, f2.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dk, k2.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dfpart, 0xFF, fblocks * sizeof(float))); // poison the outputs
    CUDA_CHECK(cudaMemset(dkpart, 0xFF, iblocks * sizeof(int)));
    block_sum<float, 256><<<fblocks, 256>>>(n, df, dfpart);
    block_sum<int, 128><<<iblocks, 128>>>(n, dk, dkpart);
    CUDA_CHECK(cudaGetLastError());
    std::vector<float> fpart(fblocks);
    std::vector<int> kpart(iblocks);
    CUDA_CHECK(cudaMemcpy(fpart.data(), dfpart, fblocks * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(kpart.data(), dkpart, iblocks * sizeof(int), cudaMemcpyDeviceToHost));

    int bad = 0;
    double fsum = 0.0;
    long long ksum = 0;
    long long kref = 0;
    double dsum = 0.0;
    for (int i = 0; i < n; ++i) {
        bad += f2[i] != 2.0f * f[i];
        bad += d2[i] != 4.0 * d[i];
        bad += k2[i] != 3 * k[i];
        kref += 3 * k[i];
        dsum += d2[i];
    }
    for (float p : fpart) {
        fsum += p;
    }
    for (int p : kpart) {
        ksum += p;
    }
    bad += ksum != kref;
    bad += std::fabs(fsum - 2.0 * 0.25 * kref / 3.0) > 1e-3 * fsum;
    unsigned long long hash = fnv1a(f2.data(), n * sizeof(float));
    hash = fnv1a(d2.data(), n * sizeof(double), hash);
    hash = fnv1a(k2.data(), n * sizeof(int), hash);
    hash = fnv1a(fpart.data(), fblocks * sizeof(float), hash);
    hash = fnv1a(kpart.data(), iblocks * sizeof(int), hash);
    printf("templates: %s checksum %lld %.6e %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL",
           ksum, fsum, dsum, hash);
    cudaFree(df);
    cudaFree(dfpart);
    cudaFree(dk);
    cudaFree(dkpart);
    return bad == 0 ? 0 : 1;
}

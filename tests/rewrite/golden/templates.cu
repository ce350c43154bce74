// Templates: a kernel template instantiated for three element types, a block reduction
// templated on its type and block size (a __shared__ array of BLOCK elements), and a template
// no launch instantiates.
// memplace: rewritten by `memplace rewrite` from templates.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
#include "memplace/memplace.cuh"
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

template <typename T, class MP_in, class MP_out>
__global__ void scale(int n, T factor, MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[memplace::at<0>(i)] = factor * in[memplace::at<1>(i)];
    }
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'scale' (docs/rewrite-contract.md)
template <typename T>
struct memplace_kernel_scale {
    static constexpr const char* name = "scale";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"in", 2, sizeof(T), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 3, sizeof(T), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const T, T>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Not compiled just in time: a kernel template (the runtime cannot spell its template arguments
    // in an NVRTC name expression). Placements not compiled in run through the dynamic accessor.
    static constexpr const char* jitSource = nullptr;
    template <class... Acc>
    static auto kernel() { return &::scale<T, Acc...>; }
    template <class MP_in, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            T factor, MP_in in, MP_out out) {
        auto mp_kernel = kernel<MP_in, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, factor, in, out);
    }
};

template <typename T, int BLOCK, class MP_in, class MP_partial>
__global__ void block_sum(int n, MP_in in, MP_partial partial) {
    memplace::stage(in, partial);
    [&]() {
    __shared__ T buf[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    buf[threadIdx.x] = i < n ? in[memplace::at<3>(i)] : T(0);
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) {
            buf[threadIdx.x] += buf[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[memplace::at<6>(blockIdx.x)] = buf[0];
    }
    }();
    memplace::unstage(partial);
}

// memplace: what the runtime needs to know about kernel 'block_sum' (docs/rewrite-contract.md)
template <typename T, int BLOCK>
struct memplace_kernel_block_sum {
    static constexpr const char* name = "block_sum";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"in", 1, sizeof(T), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"partial", 2, sizeof(T), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const T, T>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Not compiled just in time: a kernel template (the runtime cannot spell its template arguments
    // in an NVRTC name expression). Placements not compiled in run through the dynamic accessor.
    static constexpr const char* jitSource = nullptr;
    template <class... Acc>
    static auto kernel() { return &::block_sum<T, BLOCK, Acc...>; }
    template <class MP_in, class MP_partial>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_in in, MP_partial partial) {
        auto mp_kernel = kernel<MP_in, MP_partial>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, in, partial);
    }
};

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
    memplace::launch<memplace_kernel_scale<T>>((n + 255) / 256, 256, 0, 0, n, factor, din, dout);
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
    memplace::launch<memplace_kernel_block_sum<float, 256>>(fblocks, 256, 0, 0, n, df, dfpart);
    memplace::launch<memplace_kernel_block_sum<int, 128>>(iblocks, 128, 0, 0, n, dk, dkpart);
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

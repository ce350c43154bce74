// Several kernels in one file, chained: fill, an in-place scale launched with the same buffer
// as input and output (aliasing), an element-wise add, and a dot product whose partial sums
// use dynamic shared memory (extern __shared__, sized at launch).
// memplace: rewritten by `memplace rewrite` from multi_kernel.cu: kernels are templates over
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

template <class MP_a>
__global__ void fill(int n, float base, float step, MP_a a) {
    memplace::stage(a);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[memplace::at<0>(i)] = base + step * (i % 100);
    }
    }();
    memplace::unstage(a);
}

// memplace: what the runtime needs to know about kernel 'fill' (docs/rewrite-contract.md)
struct memplace_kernel_fill {
    static constexpr const char* name = "fill";
    static constexpr int numArrays = 1;
    static constexpr memplace::ArrayDesc arrays[1] = {
        {"a", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<float>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "fill";
    static constexpr const char* jitTypes[1] = {"float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_a>
__global__ void fill(int n, float base, float step, MP_a a) {
    memplace::stage(a);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[memplace::at<0>(i)] = base + step * (i % 100);
    }
    }();
    memplace::unstage(a);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::fill<Acc...>; }
    template <class MP_a>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            float base, float step, MP_a a) {
        auto mp_kernel = kernel<MP_a>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, base, step, a);
    }
};

template <class MP_in, class MP_out>
__global__ void scale_into(int n, float s, MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[memplace::at<1>(i)] = s * in[memplace::at<2>(i)];
    }
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'scale_into' (docs/rewrite-contract.md)
struct memplace_kernel_scale_into {
    static constexpr const char* name = "scale_into";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"in", 2, sizeof(float), memplace::Mode::Read, memplace::PlaceSet{memplace::Place::Global, memplace::Place::L2Persist}, 1},
        {"out", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw_noshared, 1},
    };
    using types = memplace::Types<const float, float>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "scale_into";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_in, class MP_out>
__global__ void scale_into(int n, float s, MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[memplace::at<1>(i)] = s * in[memplace::at<2>(i)];
    }
    }();
    memplace::unstage(out);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::scale_into<Acc...>; }
    template <class MP_in, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            float s, MP_in in, MP_out out) {
        auto mp_kernel = kernel<MP_in, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, s, in, out);
    }
};

template <class MP_a, class MP_b, class MP_c>
__global__ void add(int n, MP_a a, MP_b b, MP_c c) {
    memplace::stage(a, b, c);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[memplace::at<3>(i)] = a[memplace::at<4>(i)] + b[memplace::at<5>(i)];
    }
    }();
    memplace::unstage(c);
}

// memplace: what the runtime needs to know about kernel 'add' (docs/rewrite-contract.md)
struct memplace_kernel_add {
    static constexpr const char* name = "add";
    static constexpr int numArrays = 3;
    static constexpr memplace::ArrayDesc arrays[3] = {
        {"a", 1, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"b", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"c", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::ReadOnly,
            memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "add";
    static constexpr const char* jitTypes[3] = {"const float", "const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_a, class MP_b, class MP_c>
__global__ void add(int n, MP_a a, MP_b b, MP_c c) {
    memplace::stage(a, b, c);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[memplace::at<3>(i)] = a[memplace::at<4>(i)] + b[memplace::at<5>(i)];
    }
    }();
    memplace::unstage(c);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::add<Acc...>; }
    template <class MP_a, class MP_b, class MP_c>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_a a, MP_b b, MP_c c) {
        auto mp_kernel = kernel<MP_a, MP_b, MP_c>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, a, b, c);
    }
};

template <class MP_a, class MP_b, class MP_partial>
__global__ void dot_partial(int n, MP_a a, MP_b b, MP_partial partial) {
    memplace::stage(a, b, partial);
    [&]() {
    MEMPLACE_DYNAMIC_SHARED(float, cache);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cache[threadIdx.x] = i < n ? a[memplace::at<7>(i)] * b[memplace::at<8>(i)] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            cache[threadIdx.x] += cache[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[memplace::at<11>(blockIdx.x)] = cache[0];
    }
    }();
    memplace::unstage(partial);
}

// memplace: what the runtime needs to know about kernel 'dot_partial' (docs/rewrite-contract.md)
struct memplace_kernel_dot_partial {
    static constexpr const char* name = "dot_partial";
    static constexpr int numArrays = 3;
    static constexpr memplace::ArrayDesc arrays[3] = {
        {"a", 1, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"b", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"partial", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::ReadOnly,
            memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "dot_partial";
    static constexpr const char* jitTypes[3] = {"const float", "const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_a, class MP_b, class MP_partial>
__global__ void dot_partial(int n, MP_a a, MP_b b, MP_partial partial) {
    memplace::stage(a, b, partial);
    [&]() {
    MEMPLACE_DYNAMIC_SHARED(float, cache);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cache[threadIdx.x] = i < n ? a[memplace::at<7>(i)] * b[memplace::at<8>(i)] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            cache[threadIdx.x] += cache[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[memplace::at<11>(blockIdx.x)] = cache[0];
    }
    }();
    memplace::unstage(partial);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::dot_partial<Acc...>; }
    template <class MP_a, class MP_b, class MP_partial>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_a a, MP_b b, MP_partial partial) {
        auto mp_kernel = kernel<MP_a, MP_b, MP_partial>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, a, b, partial);
    }
};

// FNV-1a over the bytes of the outputs: equal hashes mean bitwise-equal results.
static unsigned long long fnv1a(const void* data, size_t bytes,
                                unsigned long long h = 1469598103934665603ull) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

int main() {
    const int n = 100000;
    const int threads = 256;
    const int blocks = (n + threads - 1) / threads;
    float *da, *db, *dc, *dpartial;
    CUDA_CHECK(cudaMalloc(&da, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&db, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dc, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dpartial, blocks * sizeof(float)));
    CUDA_CHECK(cudaMemset(da, 0xFF, n * sizeof(float))); // poison the outputs
    CUDA_CHECK(cudaMemset(db, 0xFF, n * sizeof(float)));
    CUDA_CHECK(cudaMemset(dc, 0xFF, n * sizeof(float)));
    CUDA_CHECK(cudaMemset(dpartial, 0xFF, blocks * sizeof(float)));

    memplace::launch<memplace_kernel_fill>(blocks, threads, 0, 0, n, 1.0f, 0.01f, da);
    memplace::launch<memplace_kernel_fill>(blocks, threads, 0, 0, n, 0.5f, 0.02f, db);
    memplace::launch<memplace_kernel_scale_into>(blocks, threads, 0, 0, n, 2.0f, da, da);
    memplace::launch<memplace_kernel_add>(blocks, threads, 0, 0, n, da, db, dc);
    memplace::launch<memplace_kernel_dot_partial>(blocks, threads, threads * sizeof(float), 0, n,
        dc, db, dpartial);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> c(n), partial(blocks);
    CUDA_CHECK(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(partial.data(), dpartial, blocks * sizeof(float), cudaMemcpyDeviceToHost));
    std::vector<float> ga(n), gb(n);
    CUDA_CHECK(cudaMemcpy(ga.data(), da, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gb.data(), db, n * sizeof(float), cudaMemcpyDeviceToHost));
    unsigned long long hash = fnv1a(ga.data(), n * sizeof(float));
    hash = fnv1a(gb.data(), n * sizeof(float), hash);
    hash = fnv1a(c.data(), n * sizeof(float), hash);
    hash = fnv1a(partial.data(), blocks * sizeof(float), hash);
    int bad = 0;
    double dot = 0.0;
    double ref = 0.0;
    for (int i = 0; i < n; ++i) {
        float a = 2.0f * (1.0f + 0.01f * (i % 100));
        float b = 0.5f + 0.02f * (i % 100);
        if (std::fabs(c[i] - (a + b)) > 1e-5f) {
            ++bad;
        }
        ref += static_cast<double>(a + b) * b;
    }
    for (float p : partial) {
        dot += p;
    }
    if (std::fabs(dot - ref) > 1e-4 * ref) {
        ++bad;
    }
    printf("multi_kernel: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", dot,
           hash);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dpartial);
    return bad == 0 ? 0 : 1;
}

// Volatile idioms of warp-synchronous code: a reduction whose last warp works through a
// volatile pointer to shared memory and stores the block's sum from it
// (`out[blockIdx.x] = vsdata[0]`: a volatile right-hand side), and a kernel with a volatile
// pointer parameter (a flag other blocks may see), whose accesses must stay as written.
// Checks every output against the CPU and prints a checksum.
// memplace: rewritten by `memplace rewrite` from warp_reduce_volatile.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
#include "memplace/memplace.cuh"
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

#define BLOCK 128

static unsigned int g_seed = 777u;
static unsigned int urand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 16;
}

// Integer sums: the order of the additions cannot change the result.
template <class MP_in, class MP_out>
__global__ void block_sum(MP_in in, MP_out out, int n) {
    memplace::stage(in, out);
    [&]() {
    __shared__ unsigned int sdata[BLOCK];
    const unsigned int tid = threadIdx.x;
    const int i = blockIdx.x * BLOCK + tid;
    sdata[tid] = i < n ? in[memplace::at<1>(i)] : 0u;
    __syncthreads();
    for (unsigned int s = BLOCK / 2; s > 32; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    volatile unsigned int* vsdata = sdata;
    if (tid < 32) {
        // Each step reads what another lane wrote: __syncwarp orders them under independent
        // thread scheduling.
        for (unsigned int s = 32; s > 0; s >>= 1) {
            const unsigned int v = vsdata[tid] + vsdata[tid + s];
            __syncwarp();
            vsdata[tid] = v;
            __syncwarp();
        }
    }
    if (tid == 0) {
        out[memplace::at<4>(blockIdx.x)] = vsdata[0];
    }
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'block_sum' (docs/rewrite-contract.md)
struct memplace_kernel_block_sum {
    static constexpr const char* name = "block_sum";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"in", 0, sizeof(unsigned int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 1, sizeof(unsigned int), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const unsigned int, unsigned int>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "block_sum";
    static constexpr const char* jitTypes[2] = {"const unsigned int", "unsigned int"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

#define BLOCK 128

template <class MP_in, class MP_out>
__global__ void block_sum(MP_in in, MP_out out, int n) {
    memplace::stage(in, out);
    [&]() {
    __shared__ unsigned int sdata[BLOCK];
    const unsigned int tid = threadIdx.x;
    const int i = blockIdx.x * BLOCK + tid;
    sdata[tid] = i < n ? in[memplace::at<1>(i)] : 0u;
    __syncthreads();
    for (unsigned int s = BLOCK / 2; s > 32; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    volatile unsigned int* vsdata = sdata;
    if (tid < 32) {
        // Each step reads what another lane wrote: __syncwarp orders them under independent
        // thread scheduling.
        for (unsigned int s = 32; s > 0; s >>= 1) {
            const unsigned int v = vsdata[tid] + vsdata[tid + s];
            __syncwarp();
            vsdata[tid] = v;
            __syncwarp();
        }
    }
    if (tid == 0) {
        out[memplace::at<4>(blockIdx.x)] = vsdata[0];
    }
    }();
    memplace::unstage(out);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::block_sum<Acc...>; }
    template <class MP_in, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_in in, MP_out out, int n) {
        auto mp_kernel = kernel<MP_in, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, in, out, n);
    }
};

// `done` is volatile: the kernel reads and writes it as written, every time.
template <class MP_sums, class MP_big>
__global__ void count_and_flag(volatile int* done, MP_sums sums, MP_big big,
                               int blocks, unsigned int threshold) {
    memplace::stage(sums, big);
    [&]() {
    const int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < blocks) {
        big[memplace::at<5>(b)] = sums[memplace::at<6>(b)] > threshold ? 1u : 0u;
        done[b] = 1;
    }
    }();
    memplace::unstage(big);
}

// memplace: what the runtime needs to know about kernel 'count_and_flag' (docs/rewrite-contract.md)
struct memplace_kernel_count_and_flag {
    static constexpr const char* name = "count_and_flag";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"sums", 1, sizeof(unsigned int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"big", 2, sizeof(unsigned int), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const unsigned int, unsigned int>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // It writes through a pointer whose target is unknown: no array leaves where the program
    // keeps it (but for global and l2persist).
    static constexpr const char* unknownWrites =
        "the parameter 'done', left a raw pointer";
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "count_and_flag";
    static constexpr const char* jitTypes[2] = {"const unsigned int", "unsigned int"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_sums, class MP_big>
__global__ void count_and_flag(volatile int* done, MP_sums sums, MP_big big,
                               int blocks, unsigned int threshold) {
    memplace::stage(sums, big);
    [&]() {
    const int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < blocks) {
        big[memplace::at<5>(b)] = sums[memplace::at<6>(b)] > threshold ? 1u : 0u;
        done[b] = 1;
    }
    }();
    memplace::unstage(big);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::count_and_flag<Acc...>; }
    template <class MP_sums, class MP_big>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            volatile int *done, MP_sums sums, MP_big big, int blocks, unsigned int threshold) {
        auto mp_kernel = kernel<MP_sums, MP_big>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, done, sums, big, blocks,
            threshold);
    }
};

static unsigned long long fnv1a(const void* data, size_t bytes,
                                unsigned long long h = 1469598103934665603ull) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

int main() {
    const int n = 1 << 15;
    const int blocks = (n + BLOCK - 1) / BLOCK;
    std::vector<unsigned int> hin(n);
    for (int i = 0; i < n; ++i) {
        hin[i] = urand();
    }
    unsigned int *din, *dsums, *dbig;
    int* ddone;
    CUDA_CHECK(cudaMalloc(&din, n * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&dsums, blocks * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&dbig, blocks * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&ddone, blocks * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(din, hin.data(), n * sizeof(unsigned int), cudaMemcpyHostToDevice));
    // Poison the outputs: an element a kernel fails to write shows in the hash.
    CUDA_CHECK(cudaMemset(dsums, 0xFF, blocks * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(dbig, 0xFF, blocks * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(ddone, 0, blocks * sizeof(int)));
    memplace::launch<memplace_kernel_block_sum>(blocks, BLOCK, 0, 0, din, dsums, n);
    const unsigned int threshold = 64u * 32768u;
    memplace::launch<memplace_kernel_count_and_flag>((blocks + 63) / 64, 64, 0, 0, ddone, dsums,
        dbig, blocks, threshold);
    CUDA_CHECK(cudaGetLastError());
    std::vector<unsigned int> hsums(blocks), hbig(blocks);
    std::vector<int> hdone(blocks);
    CUDA_CHECK(cudaMemcpy(hsums.data(), dsums, blocks * sizeof(unsigned int),
                          cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hbig.data(), dbig, blocks * sizeof(unsigned int),
                          cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hdone.data(), ddone, blocks * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int b = 0; b < blocks; ++b) {
        unsigned int s = 0;
        for (int i = b * BLOCK; i < (b + 1) * BLOCK && i < n; ++i) {
            s += hin[i];
        }
        bad += hsums[b] != s || hbig[b] != (s > threshold ? 1u : 0u) || hdone[b] != 1;
    }
    unsigned long long h = fnv1a(hsums.data(), blocks * sizeof(unsigned int));
    h = fnv1a(hbig.data(), blocks * sizeof(unsigned int), h);
    h = fnv1a(hdone.data(), blocks * sizeof(int), h);
    printf("warp_reduce_volatile: %s, outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", h);
    CUDA_CHECK(cudaFree(din));
    CUDA_CHECK(cudaFree(dsums));
    CUDA_CHECK(cudaFree(dbig));
    CUDA_CHECK(cudaFree(ddone));
    return bad == 0 ? 0 : 1;
}

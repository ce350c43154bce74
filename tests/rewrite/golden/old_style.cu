/* Old-style CUDA C: <cuda_runtime.h> and <cstdio>, malloc/free, #define sizes, one loop
 * variable declared at the top of the function, pointer dereferences instead of subscripts,
 * an error macro around every runtime call. */
// memplace: rewritten by `memplace rewrite` from old_style.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
#include "memplace/memplace.cuh"
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

#define N 4096
#define THREADS 128
#define CHECK(call)                                                          \
    {                                                                        \
        cudaError_t e = call;                                                \
        if (e != cudaSuccess) {                                              \
            printf("CUDA error %s at line %d\n", cudaGetErrorString(e), __LINE__); \
            exit(1);                                                         \
        }                                                                    \
    }

template <class MP_a, class MP_b, class MP_c>
__global__ void vecmul(MP_a a, MP_b b, MP_c c, int n)
{
    memplace::stage(a, b, c);
    [&]() {
    int i;
    i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[memplace::at<0>(i)] = a[memplace::at<1>(i)] * b[memplace::at<2>(i)];
    }();
    memplace::unstage(c);
}

// memplace: what the runtime needs to know about kernel 'vecmul' (docs/rewrite-contract.md)
struct memplace_kernel_vecmul {
    static constexpr const char* name = "vecmul";
    static constexpr int numArrays = 3;
    static constexpr memplace::ArrayDesc arrays[3] = {
        {"a", 0, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"b", 1, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"c", 2, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<float, float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::ReadOnly,
            memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "vecmul";
    static constexpr const char* jitTypes[3] = {"const float", "const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_a, class MP_b, class MP_c>
__global__ void vecmul(MP_a a, MP_b b, MP_c c, int n)
{
    memplace::stage(a, b, c);
    [&]() {
    int i;
    i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[memplace::at<0>(i)] = a[memplace::at<1>(i)] * b[memplace::at<2>(i)];
    }();
    memplace::unstage(c);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::vecmul<Acc...>; }
    template <class MP_a, class MP_b, class MP_c>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_a a, MP_b b, MP_c c, int n) {
        auto mp_kernel = kernel<MP_a, MP_b, MP_c>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, a, b, c, n);
    }
};

template <class MP_a>
__global__ void twice(MP_a a, int n)
{
    memplace::stage(a);
    [&]() {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n)
        a[memplace::at<3>(i)] = a[memplace::at<4>(i)] * 2.0f;
    }();
    memplace::unstage(a);
}

// memplace: what the runtime needs to know about kernel 'twice' (docs/rewrite-contract.md)
struct memplace_kernel_twice {
    static constexpr const char* name = "twice";
    static constexpr int numArrays = 1;
    static constexpr memplace::ArrayDesc arrays[1] = {
        {"a", 0, sizeof(float), memplace::Mode::ReadWrite, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<float>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "twice";
    static constexpr const char* jitTypes[1] = {"float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_a>
__global__ void twice(MP_a a, int n)
{
    memplace::stage(a);
    [&]() {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n)
        a[memplace::at<3>(i)] = a[memplace::at<4>(i)] * 2.0f;
    }();
    memplace::unstage(a);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::twice<Acc...>; }
    template <class MP_a>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_a a, int n) {
        auto mp_kernel = kernel<MP_a>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, a, n);
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

int main(int argc, char **argv)
{
    float *a, *b, *c;
    float *da, *db, *dc;
    int i, bad;
    double checksum;

    a = (float *)malloc(N * sizeof(float));
    b = (float *)malloc(N * sizeof(float));
    c = (float *)malloc(N * sizeof(float));
    for (i = 0; i < N; i++) {
        a[i] = (float)(i % 17);
        b[i] = (float)(i % 5) * 0.5f;
    }

    CHECK(cudaMalloc((void **)&da, N * sizeof(float)));
    CHECK(cudaMalloc((void **)&db, N * sizeof(float)));
    CHECK(cudaMalloc((void **)&dc, N * sizeof(float)));
    CHECK(cudaMemcpy(da, a, N * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b, N * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dc, 0xFF, N * sizeof(float))); /* poison the output */

    memplace::launch<memplace_kernel_vecmul>((N + THREADS - 1) / THREADS, THREADS, 0, 0, da, db, dc,
        N);
    memplace::launch<memplace_kernel_twice>((N + THREADS - 1) / THREADS, THREADS, 0, 0, dc, N);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(c, dc, N * sizeof(float), cudaMemcpyDeviceToHost));

    bad = 0;
    checksum = 0.0;
    for (i = 0; i < N; i++) {
        if (c[i] != 2.0f * a[i] * b[i])
            bad++;
        checksum += c[i];
    }
    printf("old_style: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", checksum,
           fnv1a(c, N * sizeof(float)));

    free(a);
    free(b);
    free(c);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    return bad == 0 ? 0 : 1;
}

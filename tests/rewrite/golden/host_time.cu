// Host code calling time() and srand(time(NULL)) without including <time.h>, as nvcc accepts
// (its cuda_runtime.h includes <time.h> and <string.h> for host code; clang-19's CUDA headers do
// not include <time.h>): the frontend's shim makes clang parse it too. The data comes from a
// fixed seed unless a time seed is asked for, so that runs compare. Checks against the CPU,
// prints a checksum of the outputs.
// memplace: rewritten by `memplace rewrite` from host_time.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
#include "memplace/memplace.cuh"
#include <stdio.h>

#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                \
    do {                                                                                \
        cudaError_t err_ = (call);                                                      \
        if (err_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

template <class MP_noise, class MP_base, class MP_out>
__global__ void jitter(int n, MP_noise noise, MP_base base, MP_out out) {
    memplace::stage(noise, base, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[memplace::at<0>(i)] = base[memplace::at<1>(i)] + static_cast<float>(noise[memplace::at<2>(i)] % 64) * 0.015625f;
    }
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'jitter' (docs/rewrite-contract.md)
struct memplace_kernel_jitter {
    static constexpr const char* name = "jitter";
    static constexpr int numArrays = 3;
    static constexpr memplace::ArrayDesc arrays[3] = {
        {"noise", 1, sizeof(int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"base", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const int, const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::ReadOnly,
            memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "jitter";
    static constexpr const char* jitTypes[3] = {"const int", "const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_noise, class MP_base, class MP_out>
__global__ void jitter(int n, MP_noise noise, MP_base base, MP_out out) {
    memplace::stage(noise, base, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[memplace::at<0>(i)] = base[memplace::at<1>(i)] + static_cast<float>(noise[memplace::at<2>(i)] % 64) * 0.015625f;
    }
    }();
    memplace::unstage(out);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::jitter<Acc...>; }
    template <class MP_noise, class MP_base, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_noise noise, MP_base base, MP_out out) {
        auto mp_kernel = kernel<MP_noise, MP_base, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, noise, base, out);
    }
};

static unsigned long long fnv1a(const void* data, size_t bytes) {
    unsigned long long h = 1469598103934665603ull;
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

int main(int argc, char** argv) {
    const time_t started = time(NULL);
    if (argc > 1 && strcmp(argv[1], "--time-seed") == 0) {
        srand(time(NULL)); // a different run each time, as particle filters seed themselves
    } else {
        srand(2026);
    }
    const int n = 3000;
    int* hNoise = static_cast<int*>(malloc(n * sizeof(int)));
    float* hBase = static_cast<float*>(malloc(n * sizeof(float)));
    float* hOut = static_cast<float*>(malloc(n * sizeof(float)));
    for (int i = 0; i < n; ++i) {
        hNoise[i] = rand();
        hBase[i] = static_cast<float>(i % 97) * 0.5f;
    }
    int* dNoise;
    float *dBase, *dOut;
    CUDA_CHECK(cudaMalloc(&dNoise, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dBase, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dOut, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dNoise, hNoise, n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dBase, hBase, n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dOut, 0xFF, n * sizeof(float)));
    memplace::launch<memplace_kernel_jitter>((n + 255) / 256, 256, 0, 0, n, dNoise, dBase, dOut);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(hOut, dOut, n * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        bad += hOut[i] != hBase[i] + static_cast<float>(hNoise[i] % 64) * 0.015625f;
    }
    fprintf(stderr, "host_time: %.0f s\n", difftime(time(NULL), started));
    printf("host_time: %s, outputs %016llx\n", bad == 0 ? "PASS" : "FAIL",
           fnv1a(hOut, n * sizeof(float)));
    CUDA_CHECK(cudaFree(dNoise));
    CUDA_CHECK(cudaFree(dBase));
    CUDA_CHECK(cudaFree(dOut));
    free(hNoise);
    free(hBase);
    free(hOut);
    return bad == 0 ? 0 : 1;
}

// A first run that changes nothing (docs/placer.md, "First launch of a signature"): kernels
// whose traced launch would change the program's results if the tracing instantiation wrote the
// program's memory too, or whose outputs depend on how its threads interleave.
//   bump        updates its array in place (a[i] += 1): run twice on the same memory it would
//               add 2;
//   accumulate  updates a __device__ array by name (g_acc[i] += in[i]), which no argument can
//               redirect: run twice it would add twice;
//   row_sums    8 threads of a warp add to one element with a plain `+=` (a race, as in
//               PolyBench's atax and mvt): its result depends on how the 8 read-modify-writes
//               interleave, so a traced run, whose accesses meet at every load and store, differs
//               from the original's (on a GPU and under the CPU emulation layer).
// Each launch runs three times (a Placer traces the first and places the later ones). The
// program checks what it can compute (bump, accumulate); row_sums only goes into the hash.
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

constexpr int N = 1024;
constexpr int GROUP = 8; // threads of a warp adding to one element of row_sums

__device__ float g_acc[N];

// In place: every element read, then written, by one thread.
__global__ void bump(float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] += 1.0f;
    }
}

// A __device__ array updated by name, then read back into out.
__global__ void accumulate(const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) {
        return;
    }
    g_acc[i] += in[i];
    out[i] = g_acc[i] * 2.0f;
}

// GROUP consecutive threads add to one element, not atomically.
__global__ void row_sums(const float* A, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) {
        return;
    }
    y[i / GROUP] += A[i];
}

static unsigned long long fnv1a(const void* data, size_t bytes,
                                unsigned long long h = 1469598103934665603ull) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

static std::vector<float> pattern(size_t n, float scale) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) {
        v[i] = static_cast<float>((i * 37) % 101 + 1) * scale;
    }
    return v;
}

static unsigned long long g_hash = 1469598103934665603ull;
static int g_bad = 0;

static void check(const char* what, const std::vector<float>& got, const std::vector<float>& want) {
    g_hash = fnv1a(got.data(), got.size() * sizeof(float), g_hash);
    for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] != want[i]) {
            if (g_bad++ < 5) {
                printf("FAIL %s[%zu] = %g, expected %g\n", what, i, got[i], want[i]);
            }
            return;
        }
    }
}

int main() {
    const dim3 grid(N / 256), block(256);
    const std::vector<float> base = pattern(N, 0.25f);
    float* dA;
    float* dIn;
    float* dOut;
    float* dY;
    CUDA_CHECK(cudaMalloc(&dA, N * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dIn, N * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dOut, N * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dY, N / GROUP * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dA, base.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dIn, base.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpyToSymbol(g_acc, base.data(), N * sizeof(float)));
    CUDA_CHECK(cudaMemset(dY, 0, N / GROUP * sizeof(float)));

    std::vector<float> a = base;   // bump's array, as the CPU computes it
    std::vector<float> acc = base; // g_acc
    std::vector<float> got(N);
    std::vector<float> want(N);
    for (int rep = 0; rep < 3; ++rep) {
        bump<<<grid, block>>>(dA, N);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemcpy(got.data(), dA, N * sizeof(float), cudaMemcpyDeviceToHost));
        for (int i = 0; i < N; ++i) {
            a[i] += 1.0f;
        }
        check("bump.a", got, a);

        accumulate<<<grid, block>>>(dIn, dOut);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemcpy(got.data(), dOut, N * sizeof(float), cudaMemcpyDeviceToHost));
        for (int i = 0; i < N; ++i) {
            acc[i] += base[i];
            want[i] = acc[i] * 2.0f;
        }
        check("accumulate.out", got, want);
        CUDA_CHECK(cudaMemcpyFromSymbol(got.data(), g_acc, N * sizeof(float)));
        check("accumulate.g_acc", got, acc);

        row_sums<<<grid, block>>>(dA, dY);
        CUDA_CHECK(cudaGetLastError());
        std::vector<float> y(N / GROUP);
        CUDA_CHECK(cudaMemcpy(y.data(), dY, y.size() * sizeof(float), cudaMemcpyDeviceToHost));
        g_hash = fnv1a(y.data(), y.size() * sizeof(float), g_hash);
    }
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dIn));
    CUDA_CHECK(cudaFree(dOut));
    CUDA_CHECK(cudaFree(dY));
    printf("%s shadow_trace outputs %016llx\n", g_bad == 0 ? "PASS" : "FAIL", g_hash);
    return g_bad == 0 ? 0 : 1;
}

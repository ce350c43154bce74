// The program bad_input_sweep.py runs under the CPU emulation layer: a plain CUDA program (raw
// pointers, <<<...>>> launches) that the sweep rewrites with `memplace rewrite` and links with
// the Placer, then runs under every bad environment, spec, cache and report path. It prints one
// `RESULT` line per launch with a hash of every output; the sweep compares those lines with a
// run under MEMPLACE=off (the original placement), so any difference is a wrong result.
//   lookup:  a table every thread reads many times (the Placer moves it to shared or constant
//            memory);
//   alias:   a `const float*` parameter that points at a __device__ array the kernel writes by
//            name (staging `in` anywhere but where it was written gives wrong outputs).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>

constexpr int kN = 2048;
constexpr int kBlock = 128;
constexpr unsigned kMask = 1023;

__device__ float g_buf[kN];

__global__ void lookup(int n, int iters, unsigned mask, const float* table, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned h = (unsigned)i * 2654435761u;
    float acc = 0.0f;
    for (int k = 0; k < iters; ++k) {
        h = h * 1664525u + 1013904223u;
        acc += table[(h >> 7) & mask];
    }
    out[i] = acc;
}

__global__ void alias(int n, int iters, const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    g_buf[i] = in[i] * 2.0f + 1.0f;
    __syncthreads();
    float acc = 0.0f;
    unsigned h = (unsigned)i * 2654435761u;
    int base = blockIdx.x * blockDim.x;
    for (int k = 0; k < iters; ++k) {
        h = h * 1664525u + 1013904223u;
        acc += in[base + (h >> 7) % blockDim.x];
    }
    out[i] = acc;
}

static uint64_t hashOf(const std::vector<float>& v) {
    uint64_t h = 1469598103934665603ull;
    const unsigned char* p = reinterpret_cast<const unsigned char*>(v.data());
    for (size_t i = 0; i < v.size() * sizeof(float); ++i)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

// argv[1]: "lookup", "alias" or "all" (the default): the kernels to run.
int main(int argc, char** argv) {
    const char* which = argc > 1 ? argv[1] : "all";
    const bool runLookup = std::strcmp(which, "alias") != 0;
    const bool runAlias = std::strcmp(which, "lookup") != 0;
    std::vector<float> table(kMask + 1), init(kN), got(kN);
    for (unsigned i = 0; i <= kMask; ++i)
        table[i] = static_cast<float>(i % 97) * 0.25f - 3.0f;
    for (int i = 0; i < kN; ++i)
        init[i] = static_cast<float>(i % 13) - 6.0f;
    float *dtable = nullptr, *dout = nullptr, *dbuf = nullptr;
    cudaMalloc(&dtable, table.size() * sizeof(float));
    cudaMalloc(&dout, kN * sizeof(float));
    cudaMemcpy(dtable, table.data(), table.size() * sizeof(float), cudaMemcpyHostToDevice);
    cudaGetSymbolAddress(reinterpret_cast<void**>(&dbuf), g_buf);
    for (int launch = 1; runLookup && launch <= 3; ++launch) {
        cudaMemset(dout, 0, kN * sizeof(float));
        lookup<<<kN / kBlock, kBlock>>>(kN, 32, kMask, dtable, dout);
        cudaMemcpy(got.data(), dout, kN * sizeof(float), cudaMemcpyDeviceToHost);
        std::printf("RESULT lookup %d %016llx\n", launch, (unsigned long long)hashOf(got));
    }
    for (int launch = 1; runAlias && launch <= 3; ++launch) {
        cudaMemcpy(dbuf, init.data(), kN * sizeof(float), cudaMemcpyHostToDevice);
        cudaMemset(dout, 0, kN * sizeof(float));
        alias<<<kN / kBlock, kBlock>>>(kN, 64, dbuf, dout);
        cudaMemcpy(got.data(), dout, kN * sizeof(float), cudaMemcpyDeviceToHost);
        std::printf("RESULT alias %d %016llx\n", launch, (unsigned long long)hashOf(got));
    }
    cudaError_t e = cudaDeviceSynchronize();
    std::printf("RESULT status %s\n", cudaGetErrorString(e));
    cudaFree(dtable);
    cudaFree(dout);
    return 0;
}

// Aliasing: read-only parameters that point at memory the kernel writes another way -- a
// __device__ array it writes by name (directly or in a helper; the parameter
// pointing at all of it or at a sub-range), another parameter (the same buffer passed twice,
// through one or two host variables, sub-ranges of one buffer), a pointer read from a structure
// or from a __device__ pointer variable. Each kernel reads an element right after writing it
// another way, so a copy of the parameter's memory (shared staging, the constant pool, a
// texture, the read-only path) gives other results: every placement must equal the original.
// Each launch runs three times (a Placer traces the first and places the later ones).
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
constexpr int ITERS = 48;

__device__ float g_buf[3 * N];
__device__ float g_help[2 * N];
__device__ float* g_ptr;

struct Target {
    float* p;
};

// `in` is g_buf + off at launch: the kernel writes g_buf[off + i] by name, then reads in[i].
// The loop reads a part of `in` nobody writes, reused by every thread (what makes staging `in`
// pay).
__global__ void from_global(int off, const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) {
        return;
    }
    g_buf[off + i] = out[i] * 0.5f + 1.0f;
    float acc = 0.0f;
    for (int k = 0; k < ITERS; ++k) {
        acc += in[N + ((i * 7 + k * 13) & (N - 1))];
    }
    out[i] = acc + in[i];
}

// The global is updated in a helper (a launch repeated without restoring it differs).
__device__ void add(int i, float v) {
    g_help[i] += v;
}

__global__ void via_helper(const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) {
        return;
    }
    add(i, out[i] + 3.0f);
    float acc = 0.0f;
    for (int k = 0; k < ITERS; ++k) {
        acc += in[N + ((i * 3 + k * 17) & (N - 1))] * 0.5f;
    }
    out[i] = acc + in[i];
}

// Two parameters: `in` and `io` may be the same buffer, or sub-ranges of one.
__global__ void twice(const float* in, float* io) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) {
        return;
    }
    io[i] = in[i] * 2.0f;
    io[i] += in[i];
}

// Writes through a pointer read from a structure the host filled.
__global__ void via_struct(const float* in, Target t) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) {
        return;
    }
    t.p[i] = in[i] * 2.0f + 1.0f;
    t.p[i] += in[i];
}

// Writes through a __device__ pointer variable the host set.
__global__ void via_device_pointer(const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) {
        return;
    }
    g_ptr[i] = in[i] * 4.0f;
    out[i] = in[i] + g_ptr[i];
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
        v[i] = static_cast<float>((i * 37) % 101) * scale;
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

// The CPU's from_global over a 3N buffer `buf` written at `off`, `in` = buf + in0.
static void cpuFromGlobal(std::vector<float>& buf, int off, int in0, std::vector<float>& out,
                          float mul, float add, int a, int b) {
    for (int i = 0; i < N; ++i) {
        buf[off + i] = out[i] * mul + add;
    }
    for (int i = 0; i < N; ++i) {
        float acc = 0.0f;
        for (int k = 0; k < ITERS; ++k) {
            acc += buf[in0 + N + ((i * a + k * b) & (N - 1))];
        }
        out[i] = acc + buf[in0 + i];
    }
}

int main() {
    const dim3 grid(N / 256), block(256);
    const std::vector<float> base = pattern(3 * N, 0.125f);
    const std::vector<float> outInit = pattern(N, 0.5f);
    float* dOut;
    float* dBuf;
    CUDA_CHECK(cudaMalloc(&dOut, N * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dBuf, 2 * N * sizeof(float)));
    float* gBuf = nullptr;
    float* gHelp = nullptr;
    CUDA_CHECK(cudaGetSymbolAddress(reinterpret_cast<void**>(&gBuf), g_buf));
    CUDA_CHECK(cudaGetSymbolAddress(reinterpret_cast<void**>(&gHelp), g_help));
    void* gPtr = nullptr; // where g_ptr lives (set with cudaMemcpy)
    CUDA_CHECK(cudaGetSymbolAddress(&gPtr, g_ptr));
    std::vector<float> out(N);
    std::vector<float> buf(3 * N);

    for (int rep = 0; rep < 3; ++rep) {
        // A parameter pointing at the whole written global, then at a sub-range of it.
        for (int off : {0, N}) {
            CUDA_CHECK(cudaMemcpyToSymbol(g_buf, base.data(), 3 * N * sizeof(float)));
            CUDA_CHECK(cudaMemcpy(dOut, outInit.data(), N * sizeof(float), cudaMemcpyHostToDevice));
            float* in = gBuf + off; // through a host variable
            from_global<<<grid, block>>>(off, in, dOut);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaMemcpy(out.data(), dOut, N * sizeof(float), cudaMemcpyDeviceToHost));
            CUDA_CHECK(cudaMemcpyFromSymbol(buf.data(), g_buf, 3 * N * sizeof(float)));
            std::vector<float> wantBuf = base;
            std::vector<float> wantOut = outInit;
            cpuFromGlobal(wantBuf, off, off, wantOut, 0.5f, 1.0f, 7, 13);
            check("from_global.out", out, wantOut);
            check("from_global.g_buf", buf, wantBuf);
        }
        // The global written in a helper.
        CUDA_CHECK(cudaMemcpyToSymbol(g_help, base.data(), 2 * N * sizeof(float)));
        CUDA_CHECK(cudaMemcpy(dOut, outInit.data(), N * sizeof(float), cudaMemcpyHostToDevice));
        via_helper<<<grid, block>>>(gHelp, dOut);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemcpy(out.data(), dOut, N * sizeof(float), cudaMemcpyDeviceToHost));
        {
            std::vector<float> wantOut(N);
            for (int i = 0; i < N; ++i) {
                float acc = 0.0f;
                for (int k = 0; k < ITERS; ++k) {
                    acc += base[N + ((i * 3 + k * 17) & (N - 1))] * 0.5f;
                }
                wantOut[i] = acc + base[i] + outInit[i] + 3.0f;
            }
            check("via_helper.out", out, wantOut);
        }
        // Two parameters: one buffer passed twice (one host variable, then two), sub-ranges of
        // one buffer (the same one twice; disjoint ones), two buffers.
        float* d = dBuf;
        float* e = d;
        struct Case {
            const char* name;
            const float* in;
            float* io;
        };
        const Case cases[] = {{"twice.same", dBuf, dBuf},         {"twice.two_vars", d, e},
                              {"twice.subrange", dBuf + N, dBuf + N}, {"twice.disjoint", dBuf, dBuf + N},
                              {"twice.separate", dOut, dBuf}};
        for (const Case& c : cases) {
            CUDA_CHECK(cudaMemcpy(dBuf, base.data(), 2 * N * sizeof(float), cudaMemcpyHostToDevice));
            CUDA_CHECK(cudaMemcpy(dOut, outInit.data(), N * sizeof(float), cudaMemcpyHostToDevice));
            std::vector<float> host(3 * N);
            std::copy(base.begin(), base.begin() + 2 * N, host.begin());
            std::copy(outInit.begin(), outInit.end(), host.begin() + 2 * N);
            twice<<<grid, block>>>(c.in, c.io);
            CUDA_CHECK(cudaGetLastError());
            // The CPU's: in and io as offsets into [dBuf 2N | dOut N].
            auto at = [&](const float* p) {
                return p >= dOut && p < dOut + N ? 2 * N + (p - dOut) : p - dBuf;
            };
            const long in0 = at(c.in);
            const long io0 = at(c.io);
            for (int i = 0; i < N; ++i) {
                host[io0 + i] = host[in0 + i] * 2.0f;
                host[io0 + i] += host[in0 + i];
            }
            std::vector<float> got(2 * N);
            CUDA_CHECK(cudaMemcpy(got.data(), dBuf, 2 * N * sizeof(float), cudaMemcpyDeviceToHost));
            check(c.name, got, std::vector<float>(host.begin(), host.begin() + 2 * N));
        }
        // Writes through a structure's pointer and through a __device__ pointer variable, both
        // at the read-only parameter's buffer.
        CUDA_CHECK(cudaMemcpy(dBuf, base.data(), N * sizeof(float), cudaMemcpyHostToDevice));
        via_struct<<<grid, block>>>(dBuf, Target{dBuf});
        CUDA_CHECK(cudaGetLastError());
        {
            std::vector<float> got(N);
            std::vector<float> want(N);
            CUDA_CHECK(cudaMemcpy(got.data(), dBuf, N * sizeof(float), cudaMemcpyDeviceToHost));
            for (int i = 0; i < N; ++i) {
                want[i] = base[i] * 2.0f + 1.0f;
                want[i] += want[i];
            }
            check("via_struct", got, want);
        }
        CUDA_CHECK(cudaMemcpy(dBuf, base.data(), N * sizeof(float), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(gPtr, &dBuf, sizeof(float*), cudaMemcpyHostToDevice));
        via_device_pointer<<<grid, block>>>(dBuf, dOut);
        CUDA_CHECK(cudaGetLastError());
        {
            std::vector<float> got(N);
            std::vector<float> want(N);
            CUDA_CHECK(cudaMemcpy(got.data(), dOut, N * sizeof(float), cudaMemcpyDeviceToHost));
            for (int i = 0; i < N; ++i) {
                want[i] = base[i] * 4.0f * 2.0f;
            }
            check("via_device_pointer", got, want);
        }
    }
    CUDA_CHECK(cudaFree(dOut));
    CUDA_CHECK(cudaFree(dBuf));
    printf("%s aliasing outputs %016llx\n", g_bad == 0 ? "PASS" : "FAIL", g_hash);
    return g_bad == 0 ? 0 : 1;
}

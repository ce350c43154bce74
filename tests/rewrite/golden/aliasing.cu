// Aliasing: read-only parameters that point at memory the kernel writes another way -- a
// __device__ array it writes by name (directly or in a helper; the parameter
// pointing at all of it or at a sub-range), another parameter (the same buffer passed twice,
// through one or two host variables, sub-ranges of one buffer), a pointer read from a structure
// or from a __device__ pointer variable. Each kernel reads an element right after writing it
// another way, so a copy of the parameter's memory (shared staging, the constant pool, a
// texture, the read-only path) gives other results: every placement must equal the original.
// Each launch runs three times (a Placer traces the first and places the later ones).
// memplace: rewritten by `memplace rewrite` from aliasing.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
// The file declares 8 bytes of __constant__ data of its own: the constant pool
// gets the rest of the 64 KB.
#define MEMPLACE_CONSTANT_POOL_BYTES (65536 - (8 + 15) / 16 * 16)
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
template <class MP_in, class MP_out>
__global__ void from_global(int off, MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) {
        return;
    }
    g_buf[off + i] = out[memplace::at<1>(i)] * 0.5f + 1.0f;
    float acc = 0.0f;
    for (int k = 0; k < ITERS; ++k) {
        acc += in[memplace::at<2>(N + ((i * 7 + k * 13) & (N - 1)))];
    }
    out[memplace::at<3>(i)] = acc + in[memplace::at<4>(i)];
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'from_global' (docs/rewrite-contract.md)
struct memplace_kernel_from_global {
    static constexpr const char* name = "from_global";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"in", 1, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 2, sizeof(float), memplace::Mode::ReadWrite, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // The __device__ variables it accesses by name: an array that may share memory with one
    // of them stays where the program keeps it when either is written.
    static constexpr memplace::GlobalDesc globals[1] = {{"g_buf", memplace::Mode::ReadWrite}};
    static cudaError_t globalRange(int k, void** address, size_t* bytes) {
        switch (k) {
        case 0:
            return memplace::symbolRange(::g_buf, address, bytes);
        }
        return cudaErrorInvalidSymbol;
    }
    // Not compiled just in time: it uses the __device__ variable 'g_buf' (a just-in-time module
    // would have a copy of its own, and the kernel may write it). Placements not compiled in run
    // through the dynamic accessor.
    static constexpr const char* jitSource = nullptr;
    template <class... Acc>
    static auto kernel() { return &::from_global<Acc...>; }
    template <class MP_in, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            int off, MP_in in, MP_out out) {
        auto mp_kernel = kernel<MP_in, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, off, in, out);
    }
};

// The global is updated in a helper (a launch repeated without restoring it differs).
__device__ void add(int i, float v) {
    g_help[i] += v;
}

template <class MP_in, class MP_out>
__global__ void via_helper(MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) {
        return;
    }
    add(i, out[memplace::at<6>(i)] + 3.0f);
    float acc = 0.0f;
    for (int k = 0; k < ITERS; ++k) {
        acc += in[memplace::at<7>(N + ((i * 3 + k * 17) & (N - 1)))] * 0.5f;
    }
    out[memplace::at<8>(i)] = acc + in[memplace::at<9>(i)];
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'via_helper' (docs/rewrite-contract.md)
struct memplace_kernel_via_helper {
    static constexpr const char* name = "via_helper";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"in", 0, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 1, sizeof(float), memplace::Mode::ReadWrite, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // The __device__ variables it accesses by name: an array that may share memory with one
    // of them stays where the program keeps it when either is written.
    static constexpr memplace::GlobalDesc globals[1] = {{"g_help", memplace::Mode::ReadWrite}};
    static cudaError_t globalRange(int k, void** address, size_t* bytes) {
        switch (k) {
        case 0:
            return memplace::symbolRange(::g_help, address, bytes);
        }
        return cudaErrorInvalidSymbol;
    }
    // Not compiled just in time: it uses the __device__ variable 'g_help' (a just-in-time module
    // would have a copy of its own, and the kernel may write it). Placements not compiled in run
    // through the dynamic accessor.
    static constexpr const char* jitSource = nullptr;
    template <class... Acc>
    static auto kernel() { return &::via_helper<Acc...>; }
    template <class MP_in, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_in in, MP_out out) {
        auto mp_kernel = kernel<MP_in, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, in, out);
    }
};

// Two parameters: `in` and `io` may be the same buffer, or sub-ranges of one.
template <class MP_in, class MP_io>
__global__ void twice(MP_in in, MP_io io) {
    memplace::stage(in, io);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) {
        return;
    }
    io[memplace::at<10>(i)] = in[memplace::at<11>(i)] * 2.0f;
    io[memplace::at<12>(i)] += in[memplace::at<13>(i)];
    }();
    memplace::unstage(io);
}

// memplace: what the runtime needs to know about kernel 'twice' (docs/rewrite-contract.md)
struct memplace_kernel_twice {
    static constexpr const char* name = "twice";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"in", 0, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"io", 1, sizeof(float), memplace::Mode::ReadWrite, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "twice";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

constexpr int N = 1024;

template <class MP_in, class MP_io>
__global__ void twice(MP_in in, MP_io io) {
    memplace::stage(in, io);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) {
        return;
    }
    io[memplace::at<10>(i)] = in[memplace::at<11>(i)] * 2.0f;
    io[memplace::at<12>(i)] += in[memplace::at<13>(i)];
    }();
    memplace::unstage(io);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::twice<Acc...>; }
    template <class MP_in, class MP_io>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_in in, MP_io io) {
        auto mp_kernel = kernel<MP_in, MP_io>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, in, io);
    }
};

// Writes through a pointer read from a structure the host filled.
template <class MP_in>
__global__ void via_struct(MP_in in, Target t) {
    memplace::stage(in);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) {
        return;
    }
    t.p[i] = in[memplace::at<14>(i)] * 2.0f + 1.0f;
    t.p[i] += in[memplace::at<15>(i)];
    }();
}

// memplace: what the runtime needs to know about kernel 'via_struct' (docs/rewrite-contract.md)
struct memplace_kernel_via_struct {
    static constexpr const char* name = "via_struct";
    static constexpr int numArrays = 1;
    static constexpr memplace::ArrayDesc arrays[1] = {
        {"in", 0, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
    };
    using types = memplace::Types<const float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly>>;
    // It writes through a pointer whose target is unknown: no array leaves where the program
    // keeps it (but for global and l2persist).
    static constexpr const char* unknownWrites =
        "85:5: 't.p[i]': a pointer read from a structure member (and 1 more)";
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "via_struct";
    static constexpr const char* jitTypes[1] = {"const float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

constexpr int N = 1024;

struct Target {
    float* p;
};

template <class MP_in>
__global__ void via_struct(MP_in in, Target t) {
    memplace::stage(in);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) {
        return;
    }
    t.p[i] = in[memplace::at<14>(i)] * 2.0f + 1.0f;
    t.p[i] += in[memplace::at<15>(i)];
    }();
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::via_struct<Acc...>; }
    template <class MP_in>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_in in, Target t) {
        auto mp_kernel = kernel<MP_in>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, in, t);
    }
};

// Writes through a __device__ pointer variable the host set.
template <class MP_in, class MP_out>
__global__ void via_device_pointer(MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) {
        return;
    }
    g_ptr[i] = in[memplace::at<17>(i)] * 4.0f;
    out[memplace::at<18>(i)] = in[memplace::at<19>(i)] + g_ptr[i];
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'via_device_pointer' (docs/rewrite-contract.md)
struct memplace_kernel_via_device_pointer {
    static constexpr const char* name = "via_device_pointer";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"in", 0, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 1, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // The __device__ variables it accesses by name: an array that may share memory with one
    // of them stays where the program keeps it when either is written.
    static constexpr memplace::GlobalDesc globals[1] = {{"g_ptr", memplace::Mode::Read}};
    static cudaError_t globalRange(int k, void** address, size_t* bytes) {
        switch (k) {
        case 0:
            return memplace::symbolRange(::g_ptr, address, bytes);
        }
        return cudaErrorInvalidSymbol;
    }
    // It writes through a pointer whose target is unknown: no array leaves where the program
    // keeps it (but for global and l2persist).
    static constexpr const char* unknownWrites =
        "95:5: 'g_ptr[i]' through the __device__ pointer 'g_ptr', whose target the host sets";
    // It reads through a pointer whose target is unknown: no written array leaves where the
    // program keeps it (but for global and l2persist).
    static constexpr const char* unknownReads =
        "96:22: 'g_ptr[i]' through the __device__ pointer 'g_ptr', whose target the host sets";
    // Not compiled just in time: it uses the __device__ variable 'g_ptr' (a just-in-time module
    // would have a copy of its own, and the kernel may write it). Placements not compiled in run
    // through the dynamic accessor.
    static constexpr const char* jitSource = nullptr;
    template <class... Acc>
    static auto kernel() { return &::via_device_pointer<Acc...>; }
    template <class MP_in, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_in in, MP_out out) {
        auto mp_kernel = kernel<MP_in, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, in, out);
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
            memplace::launch<memplace_kernel_from_global>(grid, block, 0, 0, off, in, dOut);
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
        memplace::launch<memplace_kernel_via_helper>(grid, block, 0, 0, gHelp, dOut);
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
            memplace::launch<memplace_kernel_twice>(grid, block, 0, 0, c.in, c.io);
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
        memplace::launch<memplace_kernel_via_struct>(grid, block, 0, 0, dBuf, Target{dBuf});
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
        memplace::launch<memplace_kernel_via_device_pointer>(grid, block, 0, 0, dBuf, dOut);
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

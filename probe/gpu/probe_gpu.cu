// memplace-probe-gpu: microbenchmarks of the present GPU's memory system.
//
// Prints one JSON object with the raw measurements on stdout; `memplace probe` (probe/ library)
// fits them and writes the MSL spec. Builds with nvcc alone (no other dependency), so that it can
// be compiled on a GPU machine that has only the CUDA toolkit:
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o memplace-probe-gpu probe/gpu/probe_gpu.cu
//
// Exit codes: 0 measured; 3 no usable CUDA device (stdout: {"error": ..., "no_device": true});
// 4 a CUDA call failed (stdout: {"error": ...}); 2 bad usage.
//
// Methods (docs/probe.md has the details):
//  - latency: one thread chases pointers (each load's address is the previous load's value),
//    clock64() around the timed steps, cycles per step; the inline PTX names the cache operator
//    (ld.global.ca: L1 and L2, .cg: L2 only, .nc: read-only path), texture objects for the
//    texture path, LDC for constant memory, ld.shared for shared memory.
//  - capacity: working-set sweeps; the set is brought in (a sweep by the whole block, or a
//    sequential pass), then a random chase over it measures the fraction still resident.
//  - fetch granularity: stride sweeps over cold lines; the latency per step rises with the
//    stride until the stride reaches the unit the level fetches.
//  - banks: one warp reads shared memory at word strides; time against the conflict degree.
//  - bandwidth and calibration: full-occupancy kernels timed with CUDA events (median of 5
//    after a warm-up), with the number of transactions each serves at each level counted from
//    their design; memplace fits PORPLE's concurrency factors to them.
// Nothing here changes a device setting: clocks, power, L2 set-aside, carveout defaults are
// left as found (the L1-capacity kernels ask for a preferred carveout as a kernel attribute).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>
#include <numeric>
#include <random>
#include <string>
#include <vector>

// ------------------------------------------------------------------------------------------------
// Errors and JSON output
// ------------------------------------------------------------------------------------------------

static std::string jsonEscape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
    return out;
}

[[noreturn]] static void failCuda(const char* what, cudaError_t e, int line) {
    std::string msg = std::string(what) + " failed (line " + std::to_string(line) +
                      "): " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
    std::printf("{\"error\": \"%s\"}\n", jsonEscape(msg).c_str());
    std::fprintf(stderr, "memplace-probe-gpu: %s\n", msg.c_str());
    std::exit(4);
}

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            failCuda(#call, e_, __LINE__);                                                         \
        }                                                                                          \
    } while (0)
#define CK_LAUNCH() CK(cudaGetLastError())

/// A small JSON writer: values are appended in order; commas are handled by a stack.
class Json {
public:
    void beginObject(const char* key = nullptr) { open(key, '{'); }
    void endObject() { close('}'); }
    void beginArray(const char* key = nullptr) { open(key, '['); }
    void endArray() { close(']'); }
    void num(const char* key, double v) {
        sep(key);
        char buf[64];
        if (!std::isfinite(v)) {
            std::snprintf(buf, sizeof buf, "null");
        } else if (v == std::floor(v) && std::fabs(v) < 9e15) {
            std::snprintf(buf, sizeof buf, "%.0f", v);
        } else {
            std::snprintf(buf, sizeof buf, "%.6g", v);
        }
        out_ += buf;
    }
    void str(const char* key, const std::string& v) {
        sep(key);
        out_ += '"' + jsonEscape(v) + '"';
    }
    void boolean(const char* key, bool v) {
        sep(key);
        out_ += v ? "true" : "false";
    }
    /// A [x, y] pair inside an array.
    void pair(double x, double y) {
        beginArray();
        num(nullptr, x);
        num(nullptr, y);
        endArray();
    }
    const std::string& text() const { return out_; }

private:
    void sep(const char* key) {
        if (!first_.empty()) {
            if (!first_.back()) {
                out_ += ",";
            }
            first_.back() = false;
            out_ += "\n" + std::string(2 * first_.size(), ' ');
        }
        if (key != nullptr) {
            out_ += '"' + jsonEscape(key) + "\": ";
        }
    }
    void open(const char* key, char c) {
        sep(key);
        out_ += c;
        first_.push_back(true);
    }
    void close(char c) {
        bool empty = first_.back();
        first_.pop_back();
        if (!empty) {
            out_ += "\n" + std::string(2 * first_.size(), ' ');
        }
        out_ += c;
    }
    std::string out_;
    std::vector<bool> first_;
};

// ------------------------------------------------------------------------------------------------
// Device code
// ------------------------------------------------------------------------------------------------

enum LoadKind { kCA = 0, kCG = 1, kNC = 2 };

struct ChaseOut {
    unsigned long long cycles;
    unsigned long long sink;
};

constexpr int kConstWords = 16384; // 64 KB: all of constant memory a module may declare
__constant__ int c_buf[kConstWords];

__device__ __forceinline__ unsigned long long clockNow() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
    return t;
}

template <int KIND>
__device__ __forceinline__ unsigned long long ldU64(const void* p) {
    unsigned long long r;
    if (KIND == kCA) {
        asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(r) : "l"(p) : "memory");
    } else if (KIND == kCG) {
        asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(r) : "l"(p) : "memory");
    } else {
        asm volatile("ld.global.nc.u64 %0, [%1];" : "=l"(r) : "l"(p) : "memory");
    }
    return r;
}

template <int KIND>
__device__ __forceinline__ unsigned ldU32(const void* p) {
    unsigned r;
    if (KIND == kCA) {
        asm volatile("ld.global.ca.u32 %0, [%1];" : "=r"(r) : "l"(p) : "memory");
    } else if (KIND == kCG) {
        asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(r) : "l"(p) : "memory");
    } else {
        asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(r) : "l"(p) : "memory");
    }
    return r;
}

template <int KIND>
__device__ __forceinline__ uint4 ldV4(const void* p) {
    uint4 r;
    if (KIND == kCA) {
        asm volatile("ld.global.ca.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                     : "l"(p)
                     : "memory");
    } else if (KIND == kCG) {
        asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                     : "l"(p)
                     : "memory");
    } else {
        asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                     : "l"(p)
                     : "memory");
    }
    return r;
}

__device__ __forceinline__ unsigned ldShared(unsigned a) {
    unsigned r;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(r) : "r"(a) : "memory");
    return r;
}

/// Node k of a pointer chain at base + offs[k] holds the address of node k+1 (cyclic).
__global__ void kSetupPtrChain(char* base, const unsigned long long* offs, int n) {
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x) {
        int next = k + 1 == n ? 0 : k + 1;
        *reinterpret_cast<unsigned long long*>(base + offs[k]) =
            reinterpret_cast<unsigned long long>(base + offs[next]);
    }
}

/// Node k of an index chain at element idx[k] holds the element index of node k+1 (cyclic).
__global__ void kSetupIdxChain(int* base, const unsigned* idx, int n) {
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x) {
        int next = k + 1 == n ? 0 : k + 1;
        base[idx[k]] = static_cast<int>(idx[next]);
    }
}

/// Reads [base, base+bytes) once with KIND loads, 8 bytes a thread, across the grid.
template <int KIND>
__global__ void kSweep(const char* base, unsigned long long bytes, unsigned long long* sink) {
    unsigned long long acc = 0;
    for (unsigned long long off = (blockIdx.x * 1ull * blockDim.x + threadIdx.x) * 8; off < bytes;
         off += gridDim.x * 1ull * blockDim.x * 8) {
        acc += ldU64<KIND>(base + off);
    }
    if (acc == 0x9e3779b97f4a7c15ull) {
        *sink = acc;
    }
}

/// Thread 0 chases `warm` steps untimed, then `timed` steps between two clock reads. When
/// sweepBytes > 0 the whole block first reads [sweepBase, sweepBase+sweepBytes) with the same
/// loads (bringing it into the SM's L1), so that the chase sees what stays resident.
template <int KIND>
__global__ void kChase(const char* start, const char* sweepBase, unsigned long long sweepBytes,
                       int warm, int timed, ChaseOut* out) {
    if (sweepBytes > 0) {
        // The sum keeps the loads: ptxas removes loads whose values are never used.
        unsigned long long acc = 0;
        for (unsigned long long off = threadIdx.x * 8ull; off < sweepBytes;
             off += blockDim.x * 8ull) {
            acc += ldU64<KIND>(sweepBase + off);
        }
        if (acc == 0x9e3779b97f4a7c15ull) {
            out->sink = acc;
        }
        __syncthreads();
    }
    if (threadIdx.x != 0) {
        return;
    }
    const char* p = start;
    for (int i = 0; i < warm; i += 8) {
#pragma unroll
        for (int u = 0; u < 8; ++u) {
            p = reinterpret_cast<const char*>(ldU64<KIND>(p));
        }
    }
    unsigned long long t0 = clockNow();
    for (int i = 0; i < timed; i += 16) {
#pragma unroll
        for (int u = 0; u < 16; ++u) {
            p = reinterpret_cast<const char*>(ldU64<KIND>(p));
        }
    }
    out->sink = reinterpret_cast<unsigned long long>(p); // waits for the last load
    unsigned long long t1 = clockNow();
    out->cycles = t1 - t0;
}

/// The texture path: element indices through tex1Dfetch<int> on a linear texture object.
__global__ void kChaseTex(cudaTextureObject_t tex, int start, int sweepLo, int sweepHi, int warm,
                          int timed, ChaseOut* out) {
    if (sweepHi > sweepLo) {
        int acc = 0;
        for (int i = sweepLo + static_cast<int>(threadIdx.x); i < sweepHi; i += blockDim.x) {
            acc += tex1Dfetch<int>(tex, i);
        }
        if (acc == 0x7eadbeef) {
            out->sink = acc;
        }
        __syncthreads();
    }
    if (threadIdx.x != 0) {
        return;
    }
    int j = start;
    for (int i = 0; i < warm; i += 8) {
#pragma unroll
        for (int u = 0; u < 8; ++u) {
            j = tex1Dfetch<int>(tex, j);
        }
    }
    unsigned long long t0 = clockNow();
    for (int i = 0; i < timed; i += 16) {
#pragma unroll
        for (int u = 0; u < 16; ++u) {
            j = tex1Dfetch<int>(tex, j);
        }
    }
    out->sink = static_cast<unsigned long long>(j); // waits for the last fetch
    unsigned long long t1 = clockNow();
    out->cycles = t1 - t0;
}

__device__ __forceinline__ int constAt(int byteOffset) {
    return *reinterpret_cast<const int*>(reinterpret_cast<const char*>(c_buf) + byteOffset);
}

/// Constant memory: nodes hold the byte offset of the next node. `rounds` times: an untimed
/// pass of `warm` steps from warmStart, then a timed pass of `timed` steps from start.
__global__ void kChaseConst(int warmStart, int start, int warm, int timed, int rounds,
                            ChaseOut* out) {
    unsigned long long total = 0;
    int sink = 0;
    for (int r = 0; r < rounds; ++r) {
        int w = warmStart;
        for (int i = 0; i < warm; i += 4) {
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                w = constAt(w);
            }
        }
        sink += w;
        int j = start + (w & 0x40000000); // orders the timed pass after the warm one
        unsigned long long t0 = clockNow();
        for (int i = 0; i < timed; i += 4) {
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                j = constAt(j);
            }
        }
        out->sink = static_cast<unsigned long long>(j); // waits for the last load
        unsigned long long t1 = clockNow();
        total += t1 - t0;
        sink += j;
    }
    out->cycles = total;
    out->sink = static_cast<unsigned long long>(sink);
}

/// One warp; lane l reads the self-loop node at byte offset (l % distinct) * spacing, so each
/// warp-wide LDC has `distinct` different addresses.
__global__ void kConstLanes(int distinct, int spacing, int steps, ChaseOut* out) {
    int j = static_cast<int>(threadIdx.x % distinct) * spacing;
    for (int i = 0; i < 32; ++i) {
        j = constAt(j);
    }
    __syncwarp();
    unsigned long long t0 = clockNow();
    for (int i = 0; i < steps; i += 8) {
#pragma unroll
        for (int u = 0; u < 8; ++u) {
            j = constAt(j);
        }
    }
    if (j == -1) {
        out->sink = 1; // never: keeps j live
    }
    __syncwarp();
    unsigned long long t1 = clockNow();
    if (threadIdx.x == 0) {
        out->cycles = t1 - t0;
        out->sink = static_cast<unsigned long long>(j);
    }
}

/// Shared memory latency: node k at word perm[k]*4 holds the shared address of node k+1.
__global__ void kChaseShared(const unsigned* perm, int n, int warm, int timed, ChaseOut* out) {
    extern __shared__ unsigned sm[];
    for (int k = threadIdx.x; k < n; k += blockDim.x) {
        int next = k + 1 == n ? 0 : k + 1;
        sm[perm[k] * 4] = static_cast<unsigned>(__cvta_generic_to_shared(&sm[perm[next] * 4]));
    }
    __syncthreads();
    if (threadIdx.x != 0) {
        return;
    }
    unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(&sm[perm[0] * 4]));
    for (int i = 0; i < warm; i += 8) {
#pragma unroll
        for (int u = 0; u < 8; ++u) {
            a = ldShared(a);
        }
    }
    unsigned long long t0 = clockNow();
    for (int i = 0; i < timed; i += 16) {
#pragma unroll
        for (int u = 0; u < 16; ++u) {
            a = ldShared(a);
        }
    }
    out->sink = a; // waits for the last load
    unsigned long long t1 = clockNow();
    out->cycles = t1 - t0;
}

/// Bank conflicts: one warp, lane l chases the self-loop word (l * stride) % words.
__global__ void kSharedBanks(int stride, int words, int steps, ChaseOut* out) {
    extern __shared__ unsigned sm[];
    for (int i = threadIdx.x; i < words; i += blockDim.x) {
        sm[i] = static_cast<unsigned>(__cvta_generic_to_shared(&sm[i]));
    }
    __syncthreads();
    unsigned a = static_cast<unsigned>(
        __cvta_generic_to_shared(&sm[(static_cast<unsigned>(threadIdx.x) * stride) % words]));
    for (int i = 0; i < 16; ++i) {
        a = ldShared(a);
    }
    __syncwarp();
    unsigned long long t0 = clockNow();
    for (int i = 0; i < steps; i += 16) {
#pragma unroll
        for (int u = 0; u < 16; ++u) {
            a = ldShared(a);
        }
    }
    __syncwarp(); // waits for every lane's last load
    unsigned long long t1 = clockNow();
    if (threadIdx.x == 0) {
        out->cycles = t1 - t0;
        out->sink = a;
    }
}

/// SM clock against the global timer (ns) over a window.
__global__ void kClock(unsigned long long windowNs, unsigned long long* out) {
    unsigned long long g0;
    unsigned long long g;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0)::"memory");
    unsigned long long c0 = clockNow();
    unsigned long long c = c0;
    g = g0;
    for (int i = 0; i < (1 << 24); ++i) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g)::"memory");
        c = clockNow();
        if (g - g0 >= windowNs || c - c0 > 400000000ull) {
            break;
        }
    }
    out[0] = g - g0;
    out[1] = c - c0;
}

// --- calibration and bandwidth kernels -----------------------------------------------------------
// F dependent FMAs per loaded element make the compute-bound variant of each kernel.

template <int F>
__device__ __forceinline__ float work(float x) {
#pragma unroll
    for (int f = 0; f < F; ++f) {
        x = fmaf(x, 0.9990234375f, 0.5f);
    }
    return x;
}

/// 4-byte loads over [base, base+bytes), `reps` times. PERBLOCK: every block reads all of it
/// (a small region: the L1 kernels); otherwise the grid reads it once per rep. bytes must be a
/// multiple of 16 * (threads of the block, or of the grid).
template <int KIND, int F, bool PERBLOCK>
__global__ void kStream32(const char* base, unsigned long long bytes, int reps, float* out) {
    unsigned long long n = bytes / 4;
    unsigned long long tid = PERBLOCK ? threadIdx.x : blockIdx.x * 1ull * blockDim.x + threadIdx.x;
    unsigned long long stride = PERBLOCK ? blockDim.x : gridDim.x * 1ull * blockDim.x;
    float acc = 0.f;
    for (int r = 0; r < reps; ++r) {
        for (unsigned long long i = tid; i < n; i += 4 * stride) {
            unsigned a = ldU32<KIND>(base + 4 * i);
            unsigned b = ldU32<KIND>(base + 4 * (i + stride));
            unsigned c = ldU32<KIND>(base + 4 * (i + 2 * stride));
            unsigned d = ldU32<KIND>(base + 4 * (i + 3 * stride));
            acc += work<F>(__uint_as_float(a & 0x3f7fffffu)) +
                   work<F>(__uint_as_float(b & 0x3f7fffffu)) +
                   work<F>(__uint_as_float(c & 0x3f7fffffu)) +
                   work<F>(__uint_as_float(d & 0x3f7fffffu));
        }
    }
    if (acc == 1234.5f) {
        *out = acc;
    }
}

/// 16-byte loads across the grid (the achievable device-memory read bandwidth).
template <int KIND>
__global__ void kStream128(const char* base, unsigned long long bytes, float* out) {
    unsigned long long n = bytes / 16;
    unsigned long long tid = blockIdx.x * 1ull * blockDim.x + threadIdx.x;
    unsigned long long stride = gridDim.x * 1ull * blockDim.x;
    unsigned acc = 0;
    for (unsigned long long i = tid; i < n; i += 2 * stride) {
        uint4 a = ldV4<KIND>(base + 16 * i);
        uint4 b = ldV4<KIND>(base + 16 * (i + stride));
        acc += a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w;
    }
    if (acc == 0x12345679u) {
        *out = static_cast<float>(acc);
    }
}

/// 16-byte stores across the grid.
__global__ void kWrite128(char* base, unsigned long long bytes) {
    unsigned long long n = bytes / 16;
    unsigned long long tid = blockIdx.x * 1ull * blockDim.x + threadIdx.x;
    unsigned long long stride = gridDim.x * 1ull * blockDim.x;
    for (unsigned long long i = tid; i < n; i += stride) {
        reinterpret_cast<uint4*>(base)[i] = make_uint4(static_cast<unsigned>(i), 1u, 2u, 3u);
    }
}

/// Texture path: 4-byte fetches, like kStream32.
template <int F, bool PERBLOCK>
__global__ void kStreamTex(cudaTextureObject_t tex, int elems, int reps, float* out) {
    int tid = PERBLOCK ? threadIdx.x : blockIdx.x * blockDim.x + threadIdx.x;
    int stride = PERBLOCK ? blockDim.x : gridDim.x * blockDim.x;
    float acc = 0.f;
    for (int r = 0; r < reps; ++r) {
        for (int i = tid; i < elems; i += 4 * stride) {
            int a = tex1Dfetch<int>(tex, i);
            int b = tex1Dfetch<int>(tex, i + stride);
            int c = tex1Dfetch<int>(tex, i + 2 * stride);
            int d = tex1Dfetch<int>(tex, i + 3 * stride);
            acc +=
                work<F>(__int_as_float(a & 0x3f7fffff)) + work<F>(__int_as_float(b & 0x3f7fffff)) +
                work<F>(__int_as_float(c & 0x3f7fffff)) + work<F>(__int_as_float(d & 0x3f7fffff));
        }
    }
    if (acc == 1234.5f) {
        *out = acc;
    }
}

/// Shared memory: conflict-free 4-byte loads (consecutive lanes, consecutive words).
template <int F>
__global__ void kStreamShared(int reps, float* out) {
    __shared__ unsigned sm[2048];
    for (int i = threadIdx.x; i < 2048; i += blockDim.x) {
        sm[i] = static_cast<unsigned>(i * 2654435761u) & 0x3f7fffffu;
    }
    __syncthreads();
    unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(sm));
    float acc = 0.f;
    for (int r = 0; r < reps; ++r) {
        unsigned w = (threadIdx.x + r * 32u) & 2047u;
        unsigned a = ldShared(base + 4 * w);
        unsigned b = ldShared(base + 4 * ((w + 512) & 2047u));
        unsigned c = ldShared(base + 4 * ((w + 1024) & 2047u));
        unsigned d = ldShared(base + 4 * ((w + 1536) & 2047u));
        acc += work<F>(__uint_as_float(a)) + work<F>(__uint_as_float(b)) +
               work<F>(__uint_as_float(c)) + work<F>(__uint_as_float(d));
    }
    if (acc == 1234.5f) {
        *out = acc;
    }
}

/// Constant memory: MODE 0 broadcast (warp-uniform index in 1 KB), MODE 1 serialised (each
/// lane its own word in 1 KB), MODE 2 broadcast over 16 KB in 256-byte steps (misses the
/// first-level constant cache, hits the second).
template <int F, int MODE>
__global__ void kStreamConst(int reps, float* out) {
    float acc = 0.f;
    int lane = threadIdx.x & 31;
    int base = static_cast<int>(blockIdx.x) * 16;
    for (int r = 0; r < reps; ++r) {
        int v[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            int idx;
            if (MODE == 0) {
                idx = (base + (r * 4 + k) * 16) & 255;
            } else if (MODE == 1) {
                idx = (lane * 2 + r * 4 + k * 64) & 255;
            } else {
                idx = (base + (r * 4 + k) * 64) & 4095;
            }
            v[k] = c_buf[idx];
        }
        acc += work<F>(__int_as_float(v[0] & 0x3f7fffff)) +
               work<F>(__int_as_float(v[1] & 0x3f7fffff)) +
               work<F>(__int_as_float(v[2] & 0x3f7fffff)) +
               work<F>(__int_as_float(v[3] & 0x3f7fffff));
    }
    if (acc == 1234.5f) {
        *out = acc;
    }
}

/// Registers: 8 independent FMA chains per thread.
__global__ void kRegisters(int reps, float* out) {
    float r0 = threadIdx.x, r1 = r0 + 1, r2 = r0 + 2, r3 = r0 + 3, r4 = r0 + 4, r5 = r0 + 5,
          r6 = r0 + 6, r7 = r0 + 7;
    for (int i = 0; i < reps; ++i) {
        r0 = fmaf(r0, 0.999f, 0.5f);
        r1 = fmaf(r1, 0.999f, 0.5f);
        r2 = fmaf(r2, 0.999f, 0.5f);
        r3 = fmaf(r3, 0.999f, 0.5f);
        r4 = fmaf(r4, 0.999f, 0.5f);
        r5 = fmaf(r5, 0.999f, 0.5f);
        r6 = fmaf(r6, 0.999f, 0.5f);
        r7 = fmaf(r7, 0.999f, 0.5f);
    }
    float s = r0 + r1 + r2 + r3 + r4 + r5 + r6 + r7;
    if (s == 1234.5f) {
        *out = s;
    }
}

// ------------------------------------------------------------------------------------------------
// Host side
// ------------------------------------------------------------------------------------------------

namespace {

struct Options {
    int device = 0;
    bool quick = false; ///< fewer points and smaller sizes (for trying the program out)
};

struct Ctx {
    Options opt;
    cudaDeviceProp prop{};
    int sms = 0;
    char* chase = nullptr; ///< pointer-chase arena
    size_t chaseBytes = 0;
    size_t chaseUsed = 0; ///< bump allocator: every cold measurement gets fresh lines
    char* flush = nullptr;
    size_t flushBytes = 0;
    char* stream = nullptr; ///< device-memory streaming buffer
    size_t streamBytes = 0;
    ChaseOut* out = nullptr;
    unsigned long long* sink = nullptr;
    float* fsink = nullptr;
    unsigned long long* offsDev = nullptr;
    size_t offsCap = 0;
    cudaTextureObject_t tex = 0;
    int texElems = 0;
    std::mt19937_64 rng{12345};
    double clockMHz = 0;
};

/// Fresh lines from the chase arena, aligned to 4 KB.
char* freshRegion(Ctx& c, size_t bytes) {
    size_t start = (c.chaseUsed + 4095) & ~size_t(4095);
    if (start + bytes > c.chaseBytes) {
        start = 0; // wrap: old lines are long evicted by then (flushes in between)
    }
    c.chaseUsed = start + bytes;
    return c.chase + start;
}

void ensureOffs(Ctx& c, size_t n) {
    if (n > c.offsCap) {
        if (c.offsDev != nullptr) {
            CK(cudaFree(c.offsDev));
        }
        c.offsCap = std::max<size_t>(n, 1 << 16);
        CK(cudaMalloc(&c.offsDev, c.offsCap * sizeof(unsigned long long)));
    }
}

/// Writes a cyclic pointer chain at base + offs[k], in the order given.
void setupPtrChain(Ctx& c, char* base, const std::vector<unsigned long long>& offs) {
    ensureOffs(c, offs.size());
    CK(cudaMemcpy(c.offsDev, offs.data(), offs.size() * sizeof(offs[0]), cudaMemcpyHostToDevice));
    int n = static_cast<int>(offs.size());
    kSetupPtrChain<<<std::min(1024, (n + 255) / 256), 256>>>(base, c.offsDev, n);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
}

/// Writes a cyclic index chain at element idx[k] of int array `base`.
void setupIdxChain(Ctx& c, int* base, const std::vector<unsigned>& idx) {
    ensureOffs(c, idx.size() / 2 + 1);
    auto* dev = reinterpret_cast<unsigned*>(c.offsDev);
    CK(cudaMemcpy(dev, idx.data(), idx.size() * sizeof(idx[0]), cudaMemcpyHostToDevice));
    int n = static_cast<int>(idx.size());
    kSetupIdxChain<<<std::min(1024, (n + 255) / 256), 256>>>(base, dev, n);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
}

/// k distinct line numbers out of `lines`, in random order.
std::vector<unsigned long long> randomLines(Ctx& c, unsigned long long lines, size_t k) {
    std::vector<unsigned long long> out;
    if (k >= lines) {
        out.resize(lines);
        std::iota(out.begin(), out.end(), 0ull);
        std::shuffle(out.begin(), out.end(), c.rng);
        return out;
    }
    // Sample without replacement: a partial Fisher-Yates over the identity permutation.
    std::vector<unsigned long long> perm(lines);
    std::iota(perm.begin(), perm.end(), 0ull);
    for (size_t i = 0; i < k; ++i) {
        std::uniform_int_distribution<unsigned long long> d(i, lines - 1);
        std::swap(perm[i], perm[d(c.rng)]);
    }
    out.assign(perm.begin(), perm.begin() + static_cast<long>(k));
    return out;
}

void sweep(Ctx& c, int kind, const char* base, size_t bytes) {
    int blocks = c.sms * 4;
    if (kind == kCA) {
        kSweep<kCA><<<blocks, 256>>>(base, bytes, c.sink);
    } else if (kind == kCG) {
        kSweep<kCG><<<blocks, 256>>>(base, bytes, c.sink);
    } else {
        kSweep<kNC><<<blocks, 256>>>(base, bytes, c.sink);
    }
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
}

/// Evicts the L2: reads a buffer several times its size.
void flushL2(Ctx& c) {
    sweep(c, kCG, c.flush, c.flushBytes);
}

double runChase(Ctx& c, int kind, const char* start, const char* sweepBase, size_t sweepBytes,
                int warm, int timed) {
    warm = (warm + 7) / 8 * 8;
    timed = std::max(16, (timed + 15) / 16 * 16);
    int threads = sweepBytes > 0 ? 1024 : 1;
    if (kind == kCA) {
        kChase<kCA><<<1, threads>>>(start, sweepBase, sweepBytes, warm, timed, c.out);
    } else if (kind == kCG) {
        kChase<kCG><<<1, threads>>>(start, sweepBase, sweepBytes, warm, timed, c.out);
    } else {
        kChase<kNC><<<1, threads>>>(start, sweepBase, sweepBytes, warm, timed, c.out);
    }
    CK_LAUNCH();
    ChaseOut h{};
    CK(cudaMemcpy(&h, c.out, sizeof h, cudaMemcpyDeviceToHost));
    return static_cast<double>(h.cycles) / timed;
}

double runChaseTex(Ctx& c, int start, int sweepLo, int sweepHi, int warm, int timed) {
    warm = (warm + 7) / 8 * 8;
    timed = std::max(16, (timed + 15) / 16 * 16);
    int threads = sweepHi > sweepLo ? 1024 : 1;
    kChaseTex<<<1, threads>>>(c.tex, start, sweepLo, sweepHi, warm, timed, c.out);
    CK_LAUNCH();
    ChaseOut h{};
    CK(cudaMemcpy(&h, c.out, sizeof h, cudaMemcpyDeviceToHost));
    return static_cast<double>(h.cycles) / timed;
}

double runChaseConst(Ctx& c, int warmStart, int start, int warm, int timed, int rounds) {
    warm = (warm + 3) / 4 * 4;
    timed = std::max(4, (timed + 3) / 4 * 4);
    kChaseConst<<<1, 1>>>(warmStart, start, warm, timed, rounds, c.out);
    CK_LAUNCH();
    ChaseOut h{};
    CK(cudaMemcpy(&h, c.out, sizeof h, cudaMemcpyDeviceToHost));
    return static_cast<double>(h.cycles) / (static_cast<double>(timed) * rounds);
}

void uploadConst(const std::vector<int>& words) {
    std::vector<int> all(kConstWords, 0);
    std::copy(words.begin(), words.begin() + std::min<size_t>(words.size(), kConstWords),
              all.begin());
    CK(cudaMemcpyToSymbol(c_buf, all.data(), all.size() * sizeof(int)));
    CK(cudaDeviceSynchronize());
}

/// Reads all of constant memory through the L2-only global path (warms the L2, not the
/// constant caches).
void warmConstInL2(Ctx& c) {
    void* addr = nullptr;
    CK(cudaGetSymbolAddress(&addr, c_buf));
    sweep(c, kCG, static_cast<const char*>(addr), kConstWords * sizeof(int));
}

double median(std::vector<double> v) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double measureClockMHz(Ctx& c) {
    auto* d = reinterpret_cast<unsigned long long*>(c.offsDev);
    kClock<<<1, 1>>>(20000000ull, d);
    CK_LAUNCH();
    unsigned long long h[2] = {0, 0};
    CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    return h[0] > 0 ? static_cast<double>(h[1]) / static_cast<double>(h[0]) * 1000.0 : 0.0;
}

// --- latency ------------------------------------------------------------------------------------

struct Latency {
    std::string name, path, method;
    double cycles = 0;
    size_t bytes = 0;
    size_t stride = 0;
    int steps = 0;
};

void emitLatency(Json& j, const Latency& l) {
    j.beginObject(l.name.c_str());
    j.num("cycles", l.cycles);
    j.str("path", l.path);
    j.num("bytes", static_cast<double>(l.bytes));
    j.num("stride", static_cast<double>(l.stride));
    j.num("steps", l.steps);
    j.str("method", l.method);
    j.endObject();
}

/// Offsets of `n` nodes `stride` apart in order (a sequential chain).
std::vector<unsigned long long> strided(size_t n, size_t stride) {
    std::vector<unsigned long long> o(n);
    for (size_t i = 0; i < n; ++i) {
        o[i] = i * stride;
    }
    return o;
}

std::vector<unsigned long long> times(std::vector<unsigned long long> v, unsigned long long k) {
    for (auto& x : v) {
        x *= k;
    }
    return v;
}

/// A warm chase over `bytes` (nodes `stride` apart, random order), repeated.
double warmChase(Ctx& c, int kind, size_t bytes, size_t stride, int timed) {
    char* r = freshRegion(c, bytes);
    auto offs = times(randomLines(c, bytes / stride, bytes / stride), stride);
    setupPtrChain(c, r, offs);
    if (kind != kCA) {
        sweep(c, kind, r, bytes);
    }
    int n = static_cast<int>(offs.size());
    return runChase(c, kind, r, nullptr, 0, std::max(2 * n, 256), timed);
}

/// One cold pass over `steps` nodes `stride` apart in fresh lines. L2 state: warmed by an L2-only
/// sweep (l2Warm) or flushed.
double coldChase(Ctx& c, int kind, size_t stride, int steps, bool l2Warm, bool randomOrder) {
    size_t bytes = static_cast<size_t>(steps) * stride;
    char* r = freshRegion(c, bytes);
    auto offs = randomOrder ? times(randomLines(c, steps, steps), stride) : strided(steps, stride);
    setupPtrChain(c, r, offs);
    if (l2Warm) {
        sweep(c, kCG, r, bytes);
    } else {
        flushL2(c);
    }
    return runChase(c, kind, r, nullptr, 0, 0, steps);
}

// --- texture chains ------------------------------------------------------------------------------

/// Texture region: element range [lo, lo+elems) of the texture (which views the chase arena).
int freshTexElems(Ctx& c, size_t elems) {
    char* r = freshRegion(c, elems * 4);
    size_t lo = static_cast<size_t>(r - c.chase) / 4;
    if (lo + elems > static_cast<size_t>(c.texElems)) {
        c.chaseUsed = 0;
        r = freshRegion(c, elems * 4);
        lo = static_cast<size_t>(r - c.chase) / 4;
    }
    return static_cast<int>(lo);
}

std::vector<unsigned> idxChain(const std::vector<unsigned long long>& lines, size_t strideElems,
                               unsigned lo) {
    std::vector<unsigned> v(lines.size());
    for (size_t i = 0; i < lines.size(); ++i) {
        v[i] = lo + static_cast<unsigned>(lines[i] * strideElems);
    }
    return v;
}

// --- constant chains -----------------------------------------------------------------------------

/// Byte offsets of nodes in a chain, into a 64 KB image of constant memory (word index = off/4,
/// value = next node's byte offset), at word `slot` of each node's line.
void constChain(std::vector<int>& image, const std::vector<unsigned long long>& offs, int slot) {
    for (size_t k = 0; k < offs.size(); ++k) {
        size_t next = k + 1 == offs.size() ? 0 : k + 1;
        image[offs[k] / 4 + slot] = static_cast<int>(offs[next] + 4 * slot);
    }
}

// --- kernels timed with events ------------------------------------------------------------------

template <typename Launch>
double timeMs(Launch&& launch, int reps = 5) {
    cudaEvent_t e0;
    cudaEvent_t e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    launch(); // warm-up: module load, first touches
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
        CK(cudaEventRecord(e0));
        launch();
        CK(cudaEventRecord(e1));
        CK_LAUNCH();
        CK(cudaEventSynchronize(e1));
        float t = 0;
        CK(cudaEventElapsedTime(&t, e0, e1));
        ms.push_back(t);
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return median(ms);
}

struct KernelRun {
    std::string name, path, regime, method;
    double bytes = 0; ///< bytes the threads asked for
    double ms = 0;
    std::vector<std::pair<std::string, double>> transactions; ///< memory -> served there
};

template <typename K>
int fullGrid(Ctx& c, K kernel, int threads, size_t smem = 0) {
    int perSm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, threads, smem));
    return c.sms * std::max(1, perSm);
}

void emitKernel(Json& j, const KernelRun& k) {
    j.beginObject();
    j.str("name", k.name);
    j.str("path", k.path);
    j.str("regime", k.regime);
    j.num("bytes", k.bytes);
    j.num("ms", k.ms);
    j.str("method", k.method);
    j.beginObject("transactions");
    for (const auto& [m, n] : k.transactions) {
        j.num(m.c_str(), n);
    }
    j.endObject();
    j.endObject();
}

} // namespace

int main(int argc, char** argv) {
    Options opt;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--quick") {
            opt.quick = true;
        } else if (a == "--device" && i + 1 < argc) {
            opt.device = std::atoi(argv[++i]);
        } else if (a == "--help" || a == "-h") {
            std::printf("usage: memplace-probe-gpu [--quick] [--device N]\n"
                        "Measures the GPU's memory system; prints JSON on stdout.\n");
            return 0;
        } else {
            std::fprintf(stderr, "memplace-probe-gpu: unknown argument '%s'\n", a.c_str());
            return 2;
        }
    }
    auto wallStart = std::chrono::steady_clock::now();

    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0 || opt.device < 0 || opt.device >= count) {
        std::string why = e != cudaSuccess
                              ? std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e)
                              : (count == 0 ? std::string("no CUDA device")
                                            : "no device " + std::to_string(opt.device));
        std::printf("{\"error\": \"%s\", \"no_device\": true}\n", jsonEscape(why).c_str());
        std::fprintf(stderr, "memplace-probe-gpu: no usable CUDA GPU: %s\n", why.c_str());
        return 3;
    }
    Ctx c;
    c.opt = opt;
    CK(cudaSetDevice(opt.device));
    CK(cudaGetDeviceProperties(&c.prop, opt.device));
    auto attr = [&](cudaDeviceAttr a) {
        int v = 0;
        CK(cudaDeviceGetAttribute(&v, a, opt.device));
        return v;
    };
    c.sms = attr(cudaDevAttrMultiProcessorCount);
    int ccMajor = attr(cudaDevAttrComputeCapabilityMajor);
    int ccMinor = attr(cudaDevAttrComputeCapabilityMinor);
    int l2Bytes = attr(cudaDevAttrL2CacheSize);
    int texMaxLinear = attr(cudaDevAttrMaxTexture1DLinearWidth);
    int driver = 0;
    int runtime = 0;
    CK(cudaDriverGetVersion(&driver));
    CK(cudaRuntimeGetVersion(&runtime));
    size_t freeMem = 0;
    size_t totalMem = 0;
    CK(cudaMemGetInfo(&freeMem, &totalMem));

    Json j;
    j.beginObject();
    j.str("schema", "memplace-probe-measurements");
    j.num("version", 1);
    {
        std::time_t now = std::time(nullptr);
        char buf[32];
        std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
        j.str("date", buf);
    }
    j.boolean("quick", opt.quick);
    j.beginObject("device");
    j.str("name", c.prop.name);
    j.num("cc_major", ccMajor);
    j.num("cc_minor", ccMinor);
    j.num("sms", c.sms);
    j.num("warp_size", attr(cudaDevAttrWarpSize));
    j.num("clock_peak_khz", attr(cudaDevAttrClockRate));
    j.num("memory_clock_peak_khz", attr(cudaDevAttrMemoryClockRate));
    j.num("memory_bus_width_bits", attr(cudaDevAttrGlobalMemoryBusWidth));
    j.num("l2_bytes", l2Bytes);
    j.num("persisting_l2_max_bytes", attr(cudaDevAttrMaxPersistingL2CacheSize));
    j.num("access_policy_window_max_bytes", attr(cudaDevAttrMaxAccessPolicyWindowSize));
    j.num("max_threads_per_sm", attr(cudaDevAttrMaxThreadsPerMultiProcessor));
    j.num("max_blocks_per_sm", attr(cudaDevAttrMaxBlocksPerMultiprocessor));
    j.num("max_registers_per_sm", attr(cudaDevAttrMaxRegistersPerMultiprocessor));
    j.num("max_shared_per_sm", attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor));
    j.num("max_threads_per_block", attr(cudaDevAttrMaxThreadsPerBlock));
    j.num("max_registers_per_block", attr(cudaDevAttrMaxRegistersPerBlock));
    j.num("max_shared_per_block", attr(cudaDevAttrMaxSharedMemoryPerBlock));
    j.num("max_shared_per_block_optin", attr(cudaDevAttrMaxSharedMemoryPerBlockOptin));
    j.num("reserved_shared_per_block", attr(cudaDevAttrReservedSharedMemoryPerBlock));
    j.num("total_constant_bytes", attr(cudaDevAttrTotalConstantMemory));
    j.num("total_global_bytes", static_cast<double>(c.prop.totalGlobalMem));
    j.num("free_global_bytes", static_cast<double>(freeMem));
    j.num("max_texture_1d_linear", texMaxLinear);
    j.num("driver_version", driver);
    j.num("runtime_version", runtime);
    j.endObject();

    // Buffers: the chase arena (texture-visible part first), an L2 flush buffer of 4x the L2,
    // and a streaming buffer for device-memory bandwidth.
    c.chaseBytes = opt.quick ? (256ull << 20) : (768ull << 20);
    c.flushBytes = std::max<size_t>(4ull * static_cast<size_t>(l2Bytes), 64ull << 20);
    c.streamBytes = opt.quick ? (256ull << 20) : (1ull << 30);
    size_t need = c.chaseBytes + c.flushBytes + c.streamBytes + (64ull << 20);
    if (need > freeMem) {
        std::printf("{\"error\": \"needs %zu MB of free device memory, %zu MB free\"}\n",
                    need >> 20, freeMem >> 20);
        return 4;
    }
    CK(cudaMalloc(&c.chase, c.chaseBytes));
    CK(cudaMalloc(&c.flush, c.flushBytes));
    CK(cudaMalloc(&c.stream, c.streamBytes));
    CK(cudaMemset(c.chase, 0, c.chaseBytes));
    CK(cudaMemset(c.flush, 1, c.flushBytes));
    CK(cudaMemset(c.stream, 0x3c, c.streamBytes));
    CK(cudaMalloc(&c.out, sizeof(ChaseOut)));
    CK(cudaMalloc(&c.sink, 64));
    CK(cudaMalloc(&c.fsink, 64));
    ensureOffs(c, 1 << 20);

    {
        size_t texBytes = std::min<size_t>(c.chaseBytes, static_cast<size_t>(texMaxLinear) * 4);
        c.texElems = static_cast<int>(texBytes / 4);
        cudaResourceDesc rd{};
        rd.resType = cudaResourceTypeLinear;
        rd.res.linear.devPtr = c.chase;
        rd.res.linear.desc = cudaCreateChannelDesc<int>();
        rd.res.linear.sizeInBytes = texBytes;
        cudaTextureDesc td{};
        td.readMode = cudaReadModeElementType;
        CK(cudaCreateTextureObject(&c.tex, &rd, &td, nullptr));
    }

    // Clocks ramp up under load: stream a while first, then read the SM clock.
    for (int i = 0; i < 20; ++i) {
        kStream128<kCG><<<c.sms * 8, 256>>>(c.stream, c.streamBytes, c.fsink);
        CK_LAUNCH();
    }
    CK(cudaDeviceSynchronize());
    std::vector<double> clocks;
    clocks.push_back(measureClockMHz(c));
    c.clockMHz = clocks.back();

    // Kernels that probe L1 capacity prefer the largest L1 (the least shared memory).
    CK(cudaFuncSetAttribute(kChase<kCA>, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
    CK(cudaFuncSetAttribute(kChase<kNC>, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
    CK(cudaFuncSetAttribute(kChaseTex, cudaFuncAttributePreferredSharedMemoryCarveout, 0));

    const int kTimed = opt.quick ? 1024 : 4096;

    // ---- latencies ------------------------------------------------------------------------------
    std::vector<Latency> lat;
    auto addLat = [&](const char* name, const char* path, double cyc, size_t bytes, size_t stride,
                      int steps, const char* method) {
        lat.push_back({name, path, method, cyc, bytes, stride, steps});
    };
    addLat("l1_hit", "ld.global.ca", warmChase(c, kCA, 4096, 128, kTimed), 4096, 128, kTimed,
           "warm random chase over 4 KB (32 lines), repeated");
    addLat("readonly_hit", "ld.global.nc", warmChase(c, kNC, 4096, 128, kTimed), 4096, 128, kTimed,
           "warm random chase over 4 KB, read-only path");
    {
        // L2 only: a 4 MB set warmed by an L2-only sweep, chased with L2-only loads.
        size_t bytes = 4u << 20;
        char* r = freshRegion(c, bytes);
        auto offs = times(randomLines(c, bytes / 128, 4096), 128);
        setupPtrChain(c, r, offs);
        sweep(c, kCG, r, bytes);
        double cyc = runChase(c, kCG, r + offs[0], nullptr, 0, 0, 4096);
        addLat("l2_hit", "ld.global.cg", cyc, bytes, 128, 4096,
               "L2-only chase over 4096 random lines of a 4 MB set warmed by an L2-only sweep");
    }
    addLat("l2_via_l1", "ld.global.ca", coldChase(c, kCA, 128, kTimed, true, true),
           static_cast<size_t>(kTimed) * 128, 128, kTimed,
           "one pass over fresh lines (L1 cold) of a set warmed in L2, random order");
    addLat("dram", "ld.global.cg", coldChase(c, kCG, 128, 2048, false, true), 2048 * 128, 128, 2048,
           "L2-only chase over fresh lines after an L2 flush, random order");
    addLat("dram_via_l1", "ld.global.ca", coldChase(c, kCA, 128, 2048, false, true), 2048 * 128,
           128, 2048, "chase over fresh lines after an L2 flush (L1 and L2 miss), random order");
    {
        // A larger random set: TLB effects show here if any.
        size_t bytes = opt.quick ? (64ull << 20) : (512ull << 20);
        char* r = freshRegion(c, bytes);
        auto offs = times(randomLines(c, bytes / 128, 2048), 128);
        setupPtrChain(c, r, offs);
        flushL2(c);
        double cyc = runChase(c, kCG, r + offs[0], nullptr, 0, 0, 2048);
        addLat("dram_wide", "ld.global.cg", cyc, bytes, 128, 2048,
               "L2-only chase over 2048 random lines spread over the set, after an L2 flush");
    }
    // Texture path.
    {
        int lo = freshTexElems(c, 1024);
        auto lines = randomLines(c, 32, 32);
        auto idx = idxChain(lines, 32, static_cast<unsigned>(lo));
        setupIdxChain(c, reinterpret_cast<int*>(c.chase), idx);
        addLat("tex_hit", "tex1Dfetch", runChaseTex(c, static_cast<int>(idx[0]), 0, 0, 256, kTimed),
               4096, 128, kTimed, "warm random chase over 4 KB through a texture object");
        int steps = kTimed;
        lo = freshTexElems(c, static_cast<size_t>(steps) * 32);
        lines = randomLines(c, steps, steps);
        idx = idxChain(lines, 32, static_cast<unsigned>(lo));
        setupIdxChain(c, reinterpret_cast<int*>(c.chase), idx);
        sweep(c, kCG, c.chase + static_cast<size_t>(lo) * 4, static_cast<size_t>(steps) * 128);
        addLat("tex_l2", "tex1Dfetch", runChaseTex(c, static_cast<int>(idx[0]), 0, 0, 0, steps),
               static_cast<size_t>(steps) * 128, 128, steps,
               "one texture pass over fresh lines warmed in L2, random order");
        steps = 2048;
        lo = freshTexElems(c, static_cast<size_t>(steps) * 32);
        lines = randomLines(c, steps, steps);
        idx = idxChain(lines, 32, static_cast<unsigned>(lo));
        setupIdxChain(c, reinterpret_cast<int*>(c.chase), idx);
        flushL2(c);
        addLat("tex_dram", "tex1Dfetch", runChaseTex(c, static_cast<int>(idx[0]), 0, 0, 0, steps),
               static_cast<size_t>(steps) * 128, 128, steps,
               "one texture pass over fresh lines after an L2 flush, random order");
    }
    // Constant memory.
    {
        std::vector<int> img(kConstWords, 0);
        auto offs = times(randomLines(c, 8, 8), 64); // 512 B in 8 lines of 64 B
        constChain(img, offs, 0);
        uploadConst(img);
        addLat(
            "const_l1", "ld.const",
            runChaseConst(c, static_cast<int>(offs[0]), static_cast<int>(offs[0]), 64, kTimed, 1),
            512, 64, kTimed, "chase over 512 B (8 lines) of constant memory after a warm pass");
        img.assign(kConstWords, 0);
        offs = times(randomLines(c, 128, 128), 128); // 16 KB, one node per 128 B
        constChain(img, offs, 0);
        uploadConst(img);
        int n = static_cast<int>(offs.size());
        addLat("const_l15", "ld.const",
               runChaseConst(c, static_cast<int>(offs[0]), static_cast<int>(offs[0]), n,
                             std::max(n, 1024), 3),
               16384, 128, std::max(n, 1024),
               "chase over 16 KB of constant memory (past the first-level constant cache), "
               "random order, after a warm pass");
        img.assign(kConstWords, 0);
        offs = times(randomLines(c, 256, 256), 256); // all 64 KB, one node per 256 B
        constChain(img, offs, 0);
        uploadConst(img);
        warmConstInL2(c);
        addLat("const_l2", "ld.const", runChaseConst(c, 0, static_cast<int>(offs[0]), 0, 256, 1),
               65536, 256, 256,
               "one pass over 256 fresh constant lines (256 B apart) after the data were read "
               "into L2 through the global path");
        uploadConst(img);
        flushL2(c);
        addLat("const_dram", "ld.const", runChaseConst(c, 0, static_cast<int>(offs[0]), 0, 256, 1),
               65536, 256, 256, "one pass over 256 fresh constant lines after an L2 flush");
    }
    // Shared memory.
    {
        int n = 256;
        std::vector<unsigned> perm(n);
        std::iota(perm.begin(), perm.end(), 0u);
        std::shuffle(perm.begin(), perm.end(), c.rng);
        auto* dev = reinterpret_cast<unsigned*>(c.offsDev);
        CK(cudaMemcpy(dev, perm.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
        kChaseShared<<<1, 256, n * 16>>>(dev, n, 512, kTimed, c.out);
        CK_LAUNCH();
        ChaseOut h{};
        CK(cudaMemcpy(&h, c.out, sizeof h, cudaMemcpyDeviceToHost));
        addLat("shared", "ld.shared", static_cast<double>(h.cycles) / kTimed, n * 16, 16, kTimed,
               "chase over 256 nodes (4 KB) of shared memory, random order");
    }
    j.beginObject("latency");
    for (const auto& l : lat) {
        emitLatency(j, l);
    }
    j.endObject();

    // ---- capacity sweeps ------------------------------------------------------------------------
    j.beginObject("sweeps");
    {
        // L1 (ld.ca) and the texture path: the block sweeps the set, thread 0 chases random lines.
        std::vector<size_t> kb = {16,  32,  64,  96,  128, 160, 176, 192, 200, 208, 216,
                                  224, 232, 240, 248, 256, 264, 272, 288, 320, 384, 512};
        if (opt.quick) {
            kb = {32, 128, 192, 224, 256, 320, 512};
        }
        j.beginObject("l1_capacity");
        j.str("path", "ld.global.ca");
        j.str("method",
              "one block reads the set with ld.ca (1024 threads), then one thread chases up to "
              "1024 random 128-byte lines of it; cycles per step. Resident fraction ~ C/S");
        j.beginArray("points");
        for (size_t k : kb) {
            size_t bytes = k * 1024;
            size_t lines = bytes / 128;
            char* r = freshRegion(c, bytes);
            auto offs = times(randomLines(c, lines, std::min<size_t>(lines, 1024)), 128);
            setupPtrChain(c, r, offs);
            sweep(c, kCG, r, bytes);
            double cyc = runChase(c, kCA, r + offs[0], r, bytes, 0, static_cast<int>(offs.size()));
            j.pair(static_cast<double>(bytes), cyc);
        }
        j.endArray();
        j.endObject();

        j.beginObject("texl1_capacity");
        j.str("path", "tex1Dfetch");
        j.str("method", "as l1_capacity, through a texture object");
        j.beginArray("points");
        for (size_t k : kb) {
            size_t bytes = k * 1024;
            size_t lines = bytes / 128;
            int lo = freshTexElems(c, bytes / 4);
            auto ls = randomLines(c, lines, std::min<size_t>(lines, 1024));
            auto idx = idxChain(ls, 32, static_cast<unsigned>(lo));
            setupIdxChain(c, reinterpret_cast<int*>(c.chase), idx);
            sweep(c, kCG, c.chase + static_cast<size_t>(lo) * 4, bytes);
            double cyc =
                runChaseTex(c, static_cast<int>(idx[0]), lo, lo + static_cast<int>(bytes / 4), 0,
                            static_cast<int>(idx.size()));
            j.pair(static_cast<double>(bytes), cyc);
        }
        j.endArray();
        j.endObject();
    }
    {
        // L2: the grid sweeps the set with L2-only loads, one thread chases random lines.
        std::vector<size_t> mb = {2,  4,  8,  12, 16, 20, 24, 28, 32,  36,  40,
                                  44, 48, 52, 56, 64, 72, 80, 96, 128, 192, 256};
        if (opt.quick) {
            mb = {4, 16, 32, 48, 64, 128};
        }
        j.beginObject("l2_capacity");
        j.str("path", "ld.global.cg");
        j.str("method",
              "the grid reads the set with ld.cg, then one thread chases 2048 random "
              "128-byte lines of it with ld.cg; cycles per step. Resident fraction ~ C/S");
        j.beginArray("points");
        for (size_t m : mb) {
            size_t bytes = m << 20;
            if (bytes > c.chaseBytes / 2) {
                continue;
            }
            char* r = freshRegion(c, bytes);
            auto offs = times(randomLines(c, bytes / 128, 2048), 128);
            setupPtrChain(c, r, offs);
            sweep(c, kCG, r, bytes);
            double cyc = runChase(c, kCG, r + offs[0], nullptr, 0, 0, 2048);
            j.pair(static_cast<double>(bytes), cyc);
        }
        j.endArray();
        j.endObject();
    }
    {
        // Constant caches: per round, a sequential pass over the set (slot 0 of each 64-byte
        // line) then a timed random pass (slot 1 of the same lines).
        std::vector<size_t> sizes = {256,  512,   1024,  1536,  2048,  2560,  3072,  4096,  6144,
                                     8192, 12288, 16384, 24576, 32768, 40960, 49152, 57344, 65536};
        if (opt.quick) {
            sizes = {512, 2048, 4096, 16384, 65536};
        }
        j.beginObject("const_capacity");
        j.str("path", "ld.const");
        j.str("method", "rounds of a sequential pass over the set's 64-byte lines, then a timed "
                        "pass over the same lines in random order; cycles per step");
        j.beginArray("points");
        for (size_t bytes : sizes) {
            size_t lines = bytes / 64;
            std::vector<int> img(kConstWords, 0);
            auto seq = strided(lines, 64);
            auto rnd = times(randomLines(c, lines, lines), 64);
            constChain(img, seq, 0);
            constChain(img, rnd, 1);
            uploadConst(img);
            int n = static_cast<int>(lines);
            int timed = std::max(n, 64);
            int rounds = std::max(2, 2048 / timed);
            double cyc = runChaseConst(c, 0, static_cast<int>(rnd[0] + 4), n, timed, rounds);
            j.pair(static_cast<double>(bytes), cyc);
        }
        j.endArray();
        j.endObject();
    }
    j.endObject();

    // ---- stride sweeps (fetch granularity) ------------------------------------------------------
    std::vector<size_t> strides = {8, 16, 32, 64, 128, 256, 512};
    j.beginObject("strides");
    {
        j.beginObject("l1_fetch");
        j.str("path", "ld.global.ca");
        j.str("method", "one pass, in address order, over fresh lines warmed in L2 (L1 cold), "
                        "nodes `stride` bytes apart; cycles per step");
        j.beginArray("points");
        for (size_t s : strides) {
            j.pair(static_cast<double>(s), coldChase(c, kCA, s, 1024, true, false));
        }
        j.endArray();
        j.endObject();

        j.beginObject("l2_fetch");
        j.str("path", "ld.global.cg");
        j.str("method", "one L2-only pass, in address order, over fresh lines after an L2 flush, "
                        "nodes `stride` bytes apart; cycles per step");
        j.beginArray("points");
        for (size_t s : strides) {
            j.pair(static_cast<double>(s), coldChase(c, kCG, s, 1024, false, false));
        }
        j.endArray();
        j.endObject();

        j.beginObject("tex_fetch");
        j.str("path", "tex1Dfetch");
        j.str("method", "one texture pass, in address order, over fresh lines warmed in L2, "
                        "nodes `stride` bytes apart; cycles per step");
        j.beginArray("points");
        for (size_t s : strides) {
            int steps = 1024;
            size_t se = s / 4;
            int lo = freshTexElems(c, steps * se);
            std::vector<unsigned long long> ls(steps);
            std::iota(ls.begin(), ls.end(), 0ull);
            auto idx = idxChain(ls, se, static_cast<unsigned>(lo));
            setupIdxChain(c, reinterpret_cast<int*>(c.chase), idx);
            sweep(c, kCG, c.chase + static_cast<size_t>(lo) * 4, steps * s);
            j.pair(static_cast<double>(s),
                   runChaseTex(c, static_cast<int>(idx[0]), 0, 0, 0, steps));
        }
        j.endArray();
        j.endObject();

        j.beginObject("const_fetch");
        j.str("path", "ld.const");
        j.str("method", "one pass, in address order, over constant memory freshly written and "
                        "read into L2 through the global path, nodes `stride` bytes apart; "
                        "cycles per step");
        j.beginArray("points");
        for (size_t s : {4ul, 8ul, 16ul, 32ul, 64ul, 128ul, 256ul, 512ul, 1024ul}) {
            int steps = static_cast<int>(std::min<size_t>(1024, 65536 / s));
            std::vector<int> img(kConstWords, 0);
            constChain(img, strided(steps, s), 0);
            uploadConst(img);
            warmConstInL2(c);
            j.pair(static_cast<double>(s), runChaseConst(c, 0, 0, 0, steps, 1));
        }
        j.endArray();
        j.endObject();
    }
    j.endObject();

    // ---- shared-memory banks ----------------------------------------------------------------
    {
        j.beginObject("shared_banks");
        j.str("method", "one warp; lane l chases the self-loop word (l * stride) % 8192 of "
                        "shared memory; cycles per warp-wide load");
        j.num("words", 8192);
        j.beginArray("points");
        for (int s : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 24, 31, 32, 33, 48, 64, 128}) {
            kSharedBanks<<<1, 32, 8192 * 4>>>(s, 8192, 512, c.out);
            CK_LAUNCH();
            ChaseOut h{};
            CK(cudaMemcpy(&h, c.out, sizeof h, cudaMemcpyDeviceToHost));
            j.pair(s, static_cast<double>(h.cycles) / 512);
        }
        j.endArray();
        j.endObject();
    }

    // ---- constant broadcast vs serialised ---------------------------------------------------
    {
        j.beginObject("constant_lanes");
        j.str("method", "one warp; lane l chases the self-loop constant word at (l % distinct) * "
                        "spacing bytes, so each warp-wide load has `distinct` addresses; cycles "
                        "per load");
        for (int spacing : {4, 64}) {
            std::vector<int> img(kConstWords, 0);
            for (int l = 0; l < 32; ++l) {
                img[l * spacing / 4] = l * spacing;
            }
            uploadConst(img);
            j.beginArray(spacing == 4 ? "spacing4" : "spacing64");
            for (int d : {1, 2, 4, 8, 16, 32}) {
                kConstLanes<<<1, 32>>>(d, spacing, 512, c.out);
                CK_LAUNCH();
                ChaseOut h{};
                CK(cudaMemcpy(&h, c.out, sizeof h, cudaMemcpyDeviceToHost));
                j.pair(d, static_cast<double>(h.cycles) / 512);
            }
            j.endArray();
        }
        j.endObject();
    }

    // ---- bandwidth and calibration kernels --------------------------------------------------
    std::vector<KernelRun> runs;
    {
        std::vector<int> img(kConstWords);
        for (int i = 0; i < kConstWords; ++i) {
            img[i] = static_cast<int>(0x3c000000u + static_cast<unsigned>(i) * 7u);
        }
        uploadConst(img);
        // Device-memory streaming buffer: the first `dram` bytes. A multiple of 16 * grid threads.
        const int threads = 256;
        auto roundTo = [](size_t x, size_t m) { return x / m * m; };
        float* fs = c.fsink;

        auto stream32 = [&](const char* name, const char* path, const char* memory, auto kernel,
                            const char* base, size_t bytes, int reps, bool perBlock,
                            const char* regime, const char* method) {
            int grid = fullGrid(c, kernel, threads);
            size_t unit = 16ull * threads * (perBlock ? 1 : static_cast<size_t>(grid));
            bytes = std::max(unit, roundTo(bytes, unit));
            double ms = timeMs([&] { kernel<<<grid, threads>>>(base, bytes, reps, fs); });
            double total = static_cast<double>(bytes) * reps * (perBlock ? grid : 1);
            runs.push_back({name, path, regime, method, total, ms, {{memory, total / 32}}});
        };
        size_t dram = c.streamBytes;
        size_t l2set = std::min<size_t>(16ull << 20, static_cast<size_t>(l2Bytes) / 3);
        size_t l1set = 16 * 1024;
        int l2reps = opt.quick ? 16 : 128;
        int l1reps = opt.quick ? 256 : 2048;

        const char* mMem = "memory";
        const char* mCmp = "compute";
        stream32("dram_ld", "ld.global.ca", "global", kStream32<kCA, 0, false>, c.stream, dram, 1,
                 false, mMem, "4-byte loads, each element of the buffer once, full occupancy");
        stream32("dram_ld_fma", "ld.global.ca", "global", kStream32<kCA, 64, false>, c.stream, dram,
                 1, false, mCmp, "as dram_ld, 64 dependent FMAs per element");
        stream32("dram_ldg", "ld.global.nc", "global", kStream32<kNC, 0, false>, c.stream, dram, 1,
                 false, mMem, "as dram_ld through the read-only path");
        stream32("l2_ld", "ld.global.cg", "L2", kStream32<kCG, 0, false>, c.stream, l2set, l2reps,
                 false, mMem, "4-byte L2-only loads over a set that fits L2, repeated");
        stream32("l2_ld_fma", "ld.global.cg", "L2", kStream32<kCG, 64, false>, c.stream, l2set,
                 l2reps, false, mCmp, "as l2_ld, 64 dependent FMAs per element");
        stream32("l1_ld", "ld.global.ca", "L1", kStream32<kCA, 0, true>, c.stream, l1set, l1reps,
                 true, mMem, "every block reads the same 16 KB with 4-byte loads, repeated");
        stream32("l1_ld_fma", "ld.global.ca", "L1", kStream32<kCA, 64, true>, c.stream, l1set,
                 l1reps / 8, true, mCmp, "as l1_ld, 64 dependent FMAs per element");
        {
            auto kernel = kStream128<kCA>;
            int grid = fullGrid(c, kernel, threads);
            size_t bytes = roundTo(dram, 32ull * threads * grid);
            double ms = timeMs([&] { kernel<<<grid, threads>>>(c.stream, bytes, fs); });
            runs.push_back({"dram_ld128",
                            "ld.global.ca",
                            mMem,
                            "16-byte loads, each element once, full occupancy",
                            static_cast<double>(bytes),
                            ms,
                            {{"global", bytes / 32.0}}});
        }
        {
            int grid = c.sms * 8;
            double ms = timeMs([&] { kWrite128<<<grid, threads>>>(c.stream, dram); });
            runs.push_back({"dram_st128",
                            "st.global",
                            "none",
                            "16-byte stores over the buffer",
                            static_cast<double>(dram),
                            ms,
                            {}});
        }
        // Texture path.
        {
            auto tex32 = [&](const char* name, const char* memory, auto kernel, int elems, int reps,
                             bool perBlock, const char* regime, const char* method) {
                int grid = fullGrid(c, kernel, threads);
                int unit = 4 * threads * (perBlock ? 1 : grid);
                elems = std::max(unit, elems / unit * unit);
                double ms = timeMs([&] { kernel<<<grid, threads>>>(c.tex, elems, reps, fs); });
                double total = 4.0 * elems * reps * (perBlock ? grid : 1);
                runs.push_back(
                    {name, "tex1Dfetch", regime, method, total, ms, {{memory, total / 32}}});
            };
            int texDram = std::min(c.texElems, static_cast<int>((512ull << 20) / 4));
            CK(cudaMemset(c.chase, 0x3c, static_cast<size_t>(texDram) * 4));
            tex32("dram_tex", "global", kStreamTex<0, false>, texDram, 1, false, mMem,
                  "4-byte texture fetches, each element of 512 MB once");
            tex32("texl1_tex", "texL1", kStreamTex<0, true>, static_cast<int>(l1set / 4), l1reps,
                  true, mMem, "every block fetches the same 16 KB through the texture, repeated");
            tex32("texl1_tex_fma", "texL1", kStreamTex<64, true>, static_cast<int>(l1set / 4),
                  l1reps / 8, true, mCmp, "as texl1_tex, 64 dependent FMAs per element");
        }
        // Shared memory.
        {
            auto sh = [&](const char* name, auto kernel, int reps, const char* regime,
                          const char* method) {
                int grid = fullGrid(c, kernel, threads);
                double ms = timeMs([&] { kernel<<<grid, threads>>>(reps, fs); });
                double warpLoads = 4.0 * reps * grid * (threads / 32);
                runs.push_back({name,
                                "ld.shared",
                                regime,
                                method,
                                warpLoads * 128,
                                ms,
                                {{"shared", warpLoads}}});
            };
            int reps = opt.quick ? 2048 : 16384;
            sh("shared_ld", kStreamShared<0>, reps, mMem,
               "conflict-free 4-byte shared loads, 4 per iteration");
            sh("shared_ld_fma", kStreamShared<64>, reps / 8, mCmp,
               "as shared_ld, 64 dependent FMAs per element");
        }
        // Constant memory.
        {
            auto cst = [&](const char* name, const char* memory, auto kernel, int reps,
                           double perWarpLoad, const char* regime, const char* method) {
                int grid = fullGrid(c, kernel, threads);
                double ms = timeMs([&] { kernel<<<grid, threads>>>(reps, fs); });
                double warpLoads = 4.0 * reps * grid * (threads / 32);
                runs.push_back({name,
                                "ld.const",
                                regime,
                                method,
                                warpLoads * 128,
                                ms,
                                {{memory, warpLoads * perWarpLoad}}});
            };
            int reps = opt.quick ? 1024 : 8192;
            cst("const_bcast", "constL1", kStreamConst<0, 0>, reps, 1, mMem,
                "warp-uniform constant loads within 1 KB (one transaction per warp load)");
            cst("const_bcast_fma", "constL1", kStreamConst<64, 0>, reps / 8, 1, mCmp,
                "as const_bcast, 64 dependent FMAs per element");
            cst("const_serial", "constL1", kStreamConst<0, 1>, reps / 8, 32, mMem,
                "each lane its own constant word within 1 KB (32 transactions per warp load)");
            cst("const_l15", "constL15", kStreamConst<0, 2>, reps, 1, mMem,
                "warp-uniform constant loads over 16 KB in 256-byte steps (first-level misses)");
            cst("const_l15_fma", "constL15", kStreamConst<64, 2>, reps / 8, 1, mCmp,
                "as const_l15, 64 dependent FMAs per element");
        }
        // Registers.
        {
            int grid = fullGrid(c, kRegisters, threads);
            int reps = opt.quick ? 4096 : 32768;
            double ms = timeMs([&] { kRegisters<<<grid, threads>>>(reps, fs); });
            double warpOps = 8.0 * reps * grid * (threads / 32);
            runs.push_back({"registers",
                            "fma",
                            mMem,
                            "8 independent FMA chains per thread; one register access per warp "
                            "FMA",
                            0,
                            ms,
                            {{"registers", warpOps}}});
            runs.push_back({"registers_fma",
                            "fma",
                            mCmp,
                            "the same kernel as registers",
                            0,
                            ms,
                            {{"registers", warpOps}}});
        }
    }
    clocks.push_back(measureClockMHz(c));
    j.beginArray("clock_mhz");
    for (double m : clocks) {
        j.num(nullptr, m);
    }
    j.endArray();
    j.beginArray("kernels");
    for (const auto& k : runs) {
        emitKernel(j, k);
    }
    j.endArray();

    CK(cudaDestroyTextureObject(c.tex));
    CK(cudaFree(c.chase));
    CK(cudaFree(c.flush));
    CK(cudaFree(c.stream));
    CK(cudaFree(c.out));
    CK(cudaFree(c.sink));
    CK(cudaFree(c.fsink));
    CK(cudaFree(c.offsDev));
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    j.num("elapsed_s", elapsed);
    j.endObject();
    std::printf("%s\n", j.text().c_str());
    return 0;
}

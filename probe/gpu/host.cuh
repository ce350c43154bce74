// memplace-probe-gpu (included by probe_gpu.cu): the host context (buffers, random lines, chains)
// and the helpers that run one chase, sweep or timed kernel and write its result.
#pragma once

#include "json_output.cuh"
#include "kernels.cuh"

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
#include <optional>
#include <random>
#include <string>
#include <vector>

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
    std::vector<double> clocks; ///< SM clock readings: after the warm-up, after the kernels
    int l2Bytes = 0;
    int texMaxLinear = 0;
    size_t freeMem = 0;
    int timedSteps = 0; ///< timed steps of the warm latency chases
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

// memplace-probe-gpu (included by probe_gpu.cu): the bandwidth and calibration kernels, timed
// with CUDA events at full occupancy, each with the transactions it serves at each level counted
// from its design (the `kernels` array; memplace fits PORPLE's concurrency factors to them).
#pragma once

#include "host.cuh"
#include "json_output.cuh"
#include "kernels.cuh"

#include <cstddef>
#include <cuda_runtime.h>
#include <vector>

namespace {

constexpr const char* kMemoryBound = "memory";
constexpr const char* kComputeBound = "compute";

size_t roundTo(size_t x, size_t m) {
    return x / m * m;
}

/// What the bandwidth and calibration kernels share: block size, sets and repetitions.
struct KernelSetup {
    int threads = 256;
    float* fs = nullptr;
    size_t dram = 0; ///< device-memory streaming buffer: the first `dram` bytes
    size_t l2set = 0;
    size_t l1set = 16 * 1024;
    int l2reps = 0;
    int l1reps = 0;
};

/// Global memory: device memory, L2 and L1 streams, 16-byte loads and stores.
void streamKernels(Ctx& c, const KernelSetup& k, std::vector<KernelRun>& runs) {
    const int threads = k.threads;
    float* fs = k.fs;
    size_t dram = k.dram;
    size_t l2set = k.l2set;
    size_t l1set = k.l1set;
    int l2reps = k.l2reps;
    int l1reps = k.l1reps;
    auto stream32 = [&](const char* name, const char* path, const char* memory, auto kernel,
                        const char* base, size_t bytes, int reps, bool perBlock, const char* regime,
                        const char* method) {
        int grid = fullGrid(c, kernel, threads);
        size_t unit = 16ull * threads * (perBlock ? 1 : static_cast<size_t>(grid));
        bytes = std::max(unit, roundTo(bytes, unit));
        double ms = timeMs([&] { kernel<<<grid, threads>>>(base, bytes, reps, fs); });
        double total = static_cast<double>(bytes) * reps * (perBlock ? grid : 1);
        runs.push_back({name, path, regime, method, total, ms, {{memory, total / 32}}});
    };
    stream32("dram_ld", "ld.global.ca", "global", kStream32<kCA, 0, false>, c.stream, dram, 1,
             false, kMemoryBound, "4-byte loads, each element of the buffer once, full occupancy");
    stream32("dram_ld_fma", "ld.global.ca", "global", kStream32<kCA, 64, false>, c.stream, dram, 1,
             false, kComputeBound, "as dram_ld, 64 dependent FMAs per element");
    stream32("dram_ldg", "ld.global.nc", "global", kStream32<kNC, 0, false>, c.stream, dram, 1,
             false, kMemoryBound, "as dram_ld through the read-only path");
    stream32("l2_ld", "ld.global.cg", "L2", kStream32<kCG, 0, false>, c.stream, l2set, l2reps,
             false, kMemoryBound, "4-byte L2-only loads over a set that fits L2, repeated");
    stream32("l2_ld_fma", "ld.global.cg", "L2", kStream32<kCG, 64, false>, c.stream, l2set, l2reps,
             false, kComputeBound, "as l2_ld, 64 dependent FMAs per element");
    stream32("l1_ld", "ld.global.ca", "L1", kStream32<kCA, 0, true>, c.stream, l1set, l1reps, true,
             kMemoryBound, "every block reads the same 16 KB with 4-byte loads, repeated");
    stream32("l1_ld_fma", "ld.global.ca", "L1", kStream32<kCA, 64, true>, c.stream, l1set,
             l1reps / 8, true, kComputeBound, "as l1_ld, 64 dependent FMAs per element");
    {
        auto kernel = kStream128<kCA>;
        int grid = fullGrid(c, kernel, threads);
        size_t bytes = roundTo(dram, 32ull * threads * grid);
        double ms = timeMs([&] { kernel<<<grid, threads>>>(c.stream, bytes, fs); });
        runs.push_back({"dram_ld128",
                        "ld.global.ca",
                        kMemoryBound,
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
}

/// The texture path.
void textureKernels(Ctx& c, const KernelSetup& k, std::vector<KernelRun>& runs) {
    const int threads = k.threads;
    float* fs = k.fs;
    size_t l1set = k.l1set;
    int l1reps = k.l1reps;
    auto tex32 = [&](const char* name, const char* memory, auto kernel, int elems, int reps,
                     bool perBlock, const char* regime, const char* method) {
        int grid = fullGrid(c, kernel, threads);
        int unit = 4 * threads * (perBlock ? 1 : grid);
        elems = std::max(unit, elems / unit * unit);
        double ms = timeMs([&] { kernel<<<grid, threads>>>(c.tex, elems, reps, fs); });
        double total = 4.0 * elems * reps * (perBlock ? grid : 1);
        runs.push_back({name, "tex1Dfetch", regime, method, total, ms, {{memory, total / 32}}});
    };
    int texDram = std::min(c.texElems, static_cast<int>((512ull << 20) / 4));
    CK(cudaMemset(c.chase, 0x3c, static_cast<size_t>(texDram) * 4));
    tex32("dram_tex", "global", kStreamTex<0, false>, texDram, 1, false, kMemoryBound,
          "4-byte texture fetches, each element of 512 MB once");
    tex32("texl1_tex", "texL1", kStreamTex<0, true>, static_cast<int>(l1set / 4), l1reps, true,
          kMemoryBound, "every block fetches the same 16 KB through the texture, repeated");
    tex32("texl1_tex_fma", "texL1", kStreamTex<64, true>, static_cast<int>(l1set / 4), l1reps / 8,
          true, kComputeBound, "as texl1_tex, 64 dependent FMAs per element");
}

/// Shared memory.
void sharedKernels(Ctx& c, const KernelSetup& k, std::vector<KernelRun>& runs) {
    const int threads = k.threads;
    float* fs = k.fs;
    const Options& opt = c.opt;
    auto sh = [&](const char* name, auto kernel, int reps, const char* regime, const char* method) {
        int grid = fullGrid(c, kernel, threads);
        double ms = timeMs([&] { kernel<<<grid, threads>>>(reps, fs); });
        double warpLoads = 4.0 * reps * grid * (threads / 32);
        runs.push_back(
            {name, "ld.shared", regime, method, warpLoads * 128, ms, {{"shared", warpLoads}}});
    };
    int reps = opt.quick ? 2048 : 16384;
    sh("shared_ld", kStreamShared<0>, reps, kMemoryBound,
       "conflict-free 4-byte shared loads, 4 per iteration");
    sh("shared_ld_fma", kStreamShared<64>, reps / 8, kComputeBound,
       "as shared_ld, 64 dependent FMAs per element");
}

/// Constant memory.
void constantKernels(Ctx& c, const KernelSetup& k, std::vector<KernelRun>& runs) {
    const int threads = k.threads;
    float* fs = k.fs;
    const Options& opt = c.opt;
    auto cst = [&](const char* name, const char* memory, auto kernel, int reps, double perWarpLoad,
                   const char* regime, const char* method) {
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
    cst("const_bcast", "constL1", kStreamConst<0, 0>, reps, 1, kMemoryBound,
        "warp-uniform constant loads within 1 KB (one transaction per warp load)");
    cst("const_bcast_fma", "constL1", kStreamConst<64, 0>, reps / 8, 1, kComputeBound,
        "as const_bcast, 64 dependent FMAs per element");
    cst("const_serial", "constL1", kStreamConst<0, 1>, reps / 8, 32, kMemoryBound,
        "each lane its own constant word within 1 KB (32 transactions per warp load)");
    cst("const_l15", "constL15", kStreamConst<0, 2>, reps, 1, kMemoryBound,
        "warp-uniform constant loads over 16 KB in 256-byte steps (first-level misses)");
    cst("const_l15_fma", "constL15", kStreamConst<64, 2>, reps / 8, 1, kComputeBound,
        "as const_l15, 64 dependent FMAs per element");
}

/// Registers.
void registerKernels(Ctx& c, const KernelSetup& k, std::vector<KernelRun>& runs) {
    const int threads = k.threads;
    float* fs = k.fs;
    const Options& opt = c.opt;
    int grid = fullGrid(c, kRegisters, threads);
    int reps = opt.quick ? 4096 : 32768;
    double ms = timeMs([&] { kRegisters<<<grid, threads>>>(reps, fs); });
    double warpOps = 8.0 * reps * grid * (threads / 32);
    runs.push_back({"registers",
                    "fma",
                    kMemoryBound,
                    "8 independent FMA chains per thread; one register access per warp "
                    "FMA",
                    0,
                    ms,
                    {{"registers", warpOps}}});
    runs.push_back({"registers_fma",
                    "fma",
                    kComputeBound,
                    "the same kernel as registers",
                    0,
                    ms,
                    {{"registers", warpOps}}});
}

/// Bandwidth and calibration kernels, then the SM clock again: the `clock_mhz` array and the
/// `kernels` array.
void measureKernels(Ctx& c, Json& j) {
    const Options& opt = c.opt;
    std::vector<KernelRun> runs;
    std::vector<int> img(kConstWords);
    for (int i = 0; i < kConstWords; ++i) {
        img[i] = static_cast<int>(0x3c000000u + static_cast<unsigned>(i) * 7u);
    }
    uploadConst(img);
    KernelSetup k;
    k.fs = c.fsink;
    k.dram = c.streamBytes;
    k.l2set = std::min<size_t>(16ull << 20, static_cast<size_t>(c.l2Bytes) / 3);
    k.l2reps = opt.quick ? 16 : 128;
    k.l1reps = opt.quick ? 256 : 2048;
    streamKernels(c, k, runs);
    textureKernels(c, k, runs);
    sharedKernels(c, k, runs);
    constantKernels(c, k, runs);
    registerKernels(c, k, runs);
    c.clocks.push_back(measureClockMHz(c));
    j.beginArray("clock_mhz");
    for (double m : c.clocks) {
        j.num(nullptr, m);
    }
    j.endArray();
    j.beginArray("kernels");
    for (const auto& kr : runs) {
        emitKernel(j, kr);
    }
    j.endArray();
}

} // namespace

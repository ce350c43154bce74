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
#include "host.cuh"
#include "json_output.cuh"
#include "kernel_runs.cuh"
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
// The measurements and main
// ------------------------------------------------------------------------------------------------

namespace {

/// The latencies measured so far; called as addLat(name, path, cycles, bytes, stride, steps,
/// method) by the measurements below.
struct LatencyList {
    std::vector<Latency> lat;
    void operator()(const char* name, const char* path, double cyc, size_t bytes, size_t stride,
                    int steps, const char* method) {
        lat.push_back({name, path, method, cyc, bytes, stride, steps});
    }
};

/// Global memory through L1, the read-only path and L2-only loads, to device memory.
void globalLatencies(Ctx& c, LatencyList& addLat) {
    const int kTimed = c.timedSteps;
    const Options& opt = c.opt;
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
}

/// The texture path.
void textureLatencies(Ctx& c, LatencyList& addLat) {
    const int kTimed = c.timedSteps;
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

/// Constant memory: its first- and second-level caches, L2 and device memory.
void constantLatencies(Ctx& c, LatencyList& addLat) {
    const int kTimed = c.timedSteps;
    std::vector<int> img(kConstWords, 0);
    auto offs = times(randomLines(c, 8, 8), 64); // 512 B in 8 lines of 64 B
    constChain(img, offs, 0);
    uploadConst(img);
    addLat("const_l1", "ld.const",
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
    addLat("const_l2", "ld.const", runChaseConst(c, 0, static_cast<int>(offs[0]), 0, 256, 1), 65536,
           256, 256,
           "one pass over 256 fresh constant lines (256 B apart) after the data were read "
           "into L2 through the global path");
    uploadConst(img);
    flushL2(c);
    addLat("const_dram", "ld.const", runChaseConst(c, 0, static_cast<int>(offs[0]), 0, 256, 1),
           65536, 256, 256, "one pass over 256 fresh constant lines after an L2 flush");
}

/// Shared memory.
void sharedLatency(Ctx& c, LatencyList& addLat) {
    const int kTimed = c.timedSteps;
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

/// The `latency` object: every pointer-chase latency, in the order measured.
void measureLatencies(Ctx& c, Json& j) {
    LatencyList addLat;
    globalLatencies(c, addLat);
    textureLatencies(c, addLat);
    constantLatencies(c, addLat);
    sharedLatency(c, addLat);
    j.beginObject("latency");
    for (const auto& l : addLat.lat) {
        emitLatency(j, l);
    }
    j.endObject();
}

/// Capacity sweeps of L1 (ld.ca) and the texture path.
void sweepL1(Ctx& c, Json& j) {
    const Options& opt = c.opt;
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
        double cyc = runChaseTex(c, static_cast<int>(idx[0]), lo, lo + static_cast<int>(bytes / 4),
                                 0, static_cast<int>(idx.size()));
        j.pair(static_cast<double>(bytes), cyc);
    }
    j.endArray();
    j.endObject();
}

/// The capacity sweep of L2.
void sweepL2(Ctx& c, Json& j) {
    const Options& opt = c.opt;
    // L2: the grid sweeps the set with L2-only loads, one thread chases random lines.
    std::vector<size_t> mb = {2,  4,  8,  12, 16, 20, 24, 28, 32,  36,  40,
                              44, 48, 52, 56, 64, 72, 80, 96, 128, 192, 256};
    if (opt.quick) {
        mb = {4, 16, 32, 48, 64, 128};
    }
    j.beginObject("l2_capacity");
    j.str("path", "ld.global.cg");
    j.str("method", "the grid reads the set with ld.cg, then one thread chases 2048 random "
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

/// The capacity sweep of the constant caches.
void sweepConstant(Ctx& c, Json& j) {
    const Options& opt = c.opt;
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

/// The `sweeps` object: working-set sweeps (capacities).
void measureSweeps(Ctx& c, Json& j) {
    j.beginObject("sweeps");
    sweepL1(c, j);
    sweepL2(c, j);
    sweepConstant(c, j);
    j.endObject();
}

/// The `strides` object: stride sweeps (fetch granularity).
void measureStrides(Ctx& c, Json& j) {
    std::vector<size_t> strides = {8, 16, 32, 64, 128, 256, 512};
    j.beginObject("strides");
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
        j.pair(static_cast<double>(s), runChaseTex(c, static_cast<int>(idx[0]), 0, 0, 0, steps));
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
    j.endObject();
}

/// The `shared_banks` object: shared-memory bank conflicts.
void measureSharedBanks(Ctx& c, Json& j) {
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

/// The `constant_lanes` object: constant broadcast against serialisation.
void measureConstantLanes(Ctx& c, Json& j) {
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

/// The measurements in the order they run and are written (the output's order).
struct Measurement {
    const char* what;
    void (*run)(Ctx& c, Json& j);
};
constexpr Measurement kMeasurements[] = {
    {"latencies", measureLatencies},
    {"capacity sweeps", measureSweeps},
    {"stride sweeps", measureStrides},
    {"shared-memory banks", measureSharedBanks},
    {"constant broadcast against serialisation", measureConstantLanes},
    {"bandwidth and calibration kernels", measureKernels},
};

/// Reads the arguments into `opt`; the exit status when the program ends here (help, error).
std::optional<int> parseArgs(int argc, char** argv, Options& opt) {
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
    return std::nullopt;
}

/// The output's header and its `device` object: properties and attributes of the device (kept
/// in `c` for the buffers' sizes).
void writeDevice(Ctx& c, Json& j) {
    const Options& opt = c.opt;
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

    c.l2Bytes = l2Bytes;
    c.texMaxLinear = texMaxLinear;
    c.freeMem = freeMem;
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
}

/// The buffers and the texture object; false (an error printed) when device memory is short.
bool allocate(Ctx& c) {
    const Options& opt = c.opt;
    const int l2Bytes = c.l2Bytes;
    const size_t freeMem = c.freeMem;
    const int texMaxLinear = c.texMaxLinear;
    // Buffers: the chase arena (texture-visible part first), an L2 flush buffer of 4x the L2,
    // and a streaming buffer for device-memory bandwidth.
    c.chaseBytes = opt.quick ? (256ull << 20) : (768ull << 20);
    c.flushBytes = std::max<size_t>(4ull * static_cast<size_t>(l2Bytes), 64ull << 20);
    c.streamBytes = opt.quick ? (256ull << 20) : (1ull << 30);
    size_t need = c.chaseBytes + c.flushBytes + c.streamBytes + (64ull << 20);
    if (need > freeMem) {
        std::printf("{\"error\": \"needs %zu MB of free device memory, %zu MB free\"}\n",
                    need >> 20, freeMem >> 20);
        return false;
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

    return true;
}

/// Brings the clocks up (a first SM clock reading) and sets the L1 carve-out of the L1 probes.
void warmUp(Ctx& c) {
    // Clocks ramp up under load: stream a while first, then read the SM clock.
    for (int i = 0; i < 20; ++i) {
        kStream128<kCG><<<c.sms * 8, 256>>>(c.stream, c.streamBytes, c.fsink);
        CK_LAUNCH();
    }
    CK(cudaDeviceSynchronize());
    c.clocks.push_back(measureClockMHz(c));
    c.clockMHz = c.clocks.back();

    // Kernels that probe L1 capacity prefer the largest L1 (the least shared memory).
    CK(cudaFuncSetAttribute(kChase<kCA>, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
    CK(cudaFuncSetAttribute(kChase<kNC>, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
    CK(cudaFuncSetAttribute(kChaseTex, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
}

void release(Ctx& c) {
    CK(cudaDestroyTextureObject(c.tex));
    CK(cudaFree(c.chase));
    CK(cudaFree(c.flush));
    CK(cudaFree(c.stream));
    CK(cudaFree(c.out));
    CK(cudaFree(c.sink));
    CK(cudaFree(c.fsink));
    CK(cudaFree(c.offsDev));
}

} // namespace

int main(int argc, char** argv) {
    Options opt;
    if (std::optional<int> exitStatus = parseArgs(argc, argv, opt)) {
        return *exitStatus;
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
    Json j;
    writeDevice(c, j);
    if (!allocate(c)) {
        return 4;
    }
    warmUp(c);
    c.timedSteps = opt.quick ? 1024 : 4096;
    for (const Measurement& m : kMeasurements) {
        m.run(c, j);
    }
    release(c);
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    j.num("elapsed_s", elapsed);
    j.endObject();
    std::printf("%s\n", j.text().c_str());
    return 0;
}

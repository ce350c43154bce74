// One pass of an LSD radix sort of 32-bit keys with 32-bit values (SHOC level 1 "sort" does
// 4-bit passes): a stable counting sort on the 4-bit digit at `shift`.
//   radix_histogram  a fixed grid of 1024 blocks each owns one contiguous chunk and counts its
//                    digits (shared-memory atomics) into blockHist[digit * 1024 + block];
//   radix_scan       one block scans blockHist (16 x 1024 counts) in place: exclusive offsets;
//   radix_scatter    each block walks its chunk in tiles of 256 and writes every key and value to
//                    its offset; ranks within a tile come from warp ballots, so the pass is stable.
// Arrays: keys, vals (read), blockHist (written, scanned, read), keysOut, valsOut (written).
// Original placement: the read-only inputs `const __restrict__`; counters and offsets in shared
// memory.
#include "common/bench.h"

constexpr int kRadixBits = 4;
constexpr int kDigits = 1 << kRadixBits;
constexpr int kBlocks = 1024;
constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;
constexpr int kScanBlock = 1024;

__global__ void radix_histogram(const unsigned* __restrict__ keys, unsigned* blockHist, long long n,
                                long long chunk, int shift) {
    __shared__ unsigned sCount[kDigits];
    if (threadIdx.x < kDigits)
        sCount[threadIdx.x] = 0;
    __syncthreads();
    long long start = blockIdx.x * chunk;
    long long end = min(start + chunk, n);
    for (long long i = start + threadIdx.x; i < end; i += blockDim.x)
        atomicAdd(&sCount[(keys[i] >> shift) & (kDigits - 1)], 1u);
    __syncthreads();
    if (threadIdx.x < kDigits)
        blockHist[threadIdx.x * gridDim.x + blockIdx.x] = sCount[threadIdx.x];
}

// Exclusive scan of `count` values in place, by one block of kScanBlock threads, tile by tile.
__global__ void radix_scan(unsigned* blockHist, int count) {
    __shared__ unsigned sWarp[kScanBlock / 32];
    __shared__ unsigned sCarry;
    int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    if (tid == 0)
        sCarry = 0;
    __syncthreads();
    for (int base = 0; base < count; base += kScanBlock) {
        unsigned v = base + tid < count ? blockHist[base + tid] : 0u;
        unsigned inc = v;
        for (int off = 1; off < 32; off <<= 1) {
            unsigned t = __shfl_up_sync(0xffffffffu, inc, off);
            if (lane >= off)
                inc += t;
        }
        if (lane == 31)
            sWarp[warp] = inc;
        __syncthreads();
        if (warp == 0) {
            unsigned w = sWarp[lane];
            unsigned wi = w;
            for (int off = 1; off < 32; off <<= 1) {
                unsigned t = __shfl_up_sync(0xffffffffu, wi, off);
                if (lane >= off)
                    wi += t;
            }
            sWarp[lane] = wi - w;
        }
        __syncthreads();
        unsigned carry = sCarry;
        if (base + tid < count)
            blockHist[base + tid] = carry + sWarp[warp] + inc - v;
        __syncthreads();
        if (tid == kScanBlock - 1)
            sCarry = carry + sWarp[warp] + inc;
        __syncthreads();
    }
}

__global__ void radix_scatter(const unsigned* __restrict__ keys, const unsigned* __restrict__ vals,
                              const unsigned* __restrict__ blockHist, unsigned* keysOut,
                              unsigned* valsOut, long long n, long long chunk, int shift) {
    __shared__ unsigned sOffset[kDigits];
    __shared__ unsigned sWarpCount[kWarps][kDigits];
    __shared__ unsigned sTileCount[kDigits];
    int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    unsigned lanesBelow = (1u << lane) - 1u;
    if (tid < kDigits)
        sOffset[tid] = blockHist[tid * gridDim.x + blockIdx.x];
    __syncthreads();
    long long start = blockIdx.x * chunk;
    long long end = min(start + chunk, n);
    for (long long base = start; base < end; base += kBlock) {
        long long i = base + tid;
        bool valid = i < end;
        unsigned key = valid ? keys[i] : 0u;
        unsigned val = valid ? vals[i] : 0u;
        int digit = valid ? (int)((key >> shift) & (kDigits - 1)) : -1;
        unsigned rank = 0;
        for (int d = 0; d < kDigits; ++d) {
            unsigned m = __ballot_sync(0xffffffffu, digit == d);
            if (digit == d)
                rank = __popc(m & lanesBelow);
            if (lane == 0)
                sWarpCount[warp][d] = __popc(m);
        }
        __syncthreads();
        if (tid < kDigits) {
            unsigned acc = 0;
            for (int w = 0; w < kWarps; ++w) {
                unsigned c = sWarpCount[w][tid];
                sWarpCount[w][tid] = acc;
                acc += c;
            }
            sTileCount[tid] = acc;
        }
        __syncthreads();
        if (valid) {
            unsigned pos = sOffset[digit] + sWarpCount[warp][digit] + rank;
            keysOut[pos] = key;
            valsOut[pos] = val;
        }
        __syncthreads();
        if (tid < kDigits)
            sOffset[tid] += sTileCount[tid];
        __syncthreads();
    }
}

int main(int argc, char** argv) {
    const std::vector<bench::InputSpec> inputs = {
        {"small", 1 << 20, "1M uniform keys, digit at bit 0"},
        {"large", 64 << 20, "64M uniform keys (256 MB) + values, digit at bit 0"},
        {"skewed", 64 << 20, "64M keys, 90% share one digit (atomics contend, writes bunch up)"},
        {"presorted", 64 << 20, "64M sorted keys, digit at bit 28: the pass keeps the order"},
    };
    bench::Options opt = bench::parse(argc, argv, "radixsort", inputs);
    const long long n = opt.size;
    if (n > 0xFFFFFFFFll)
        bench::die("at most 2^32 - 1 keys");
    int shift = 0;
    const long long tiles = (n + kBlock - 1) / kBlock;
    const long long chunk = ((tiles + kBlocks - 1) / kBlocks) * kBlock;

    std::vector<unsigned> hkeys(n), hvals(n);
    bench::Rng rng(opt.seed);
    for (long long i = 0; i < n; ++i) {
        unsigned k = rng.u32();
        if (opt.input == "skewed" && rng.uniform() < 0.9)
            k &= ~0xFu; // digit 0
        hkeys[i] = k;
        hvals[i] = static_cast<unsigned>(i);
    }
    if (opt.input == "presorted") {
        std::sort(hkeys.begin(), hkeys.end());
        shift = 28;
    }

    unsigned *dkeys = nullptr, *dvals = nullptr, *dhist = nullptr, *dkeysOut = nullptr,
             *dvalsOut = nullptr;
    BENCH_CK(cudaMalloc(&dkeys, n * sizeof(unsigned)));
    BENCH_CK(cudaMalloc(&dvals, n * sizeof(unsigned)));
    BENCH_CK(cudaMalloc(&dhist, kDigits * kBlocks * sizeof(unsigned)));
    BENCH_CK(cudaMalloc(&dkeysOut, n * sizeof(unsigned)));
    BENCH_CK(cudaMalloc(&dvalsOut, n * sizeof(unsigned)));
    BENCH_CK(cudaMemcpy(dkeys, hkeys.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dvals, hvals.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));

    bench::Timer timer(opt);
    for (int run = 0; run < timer.runs(); ++run) {
        bench::poison(dhist, kDigits * kBlocks);
        bench::poison(dkeysOut, n);
        bench::poison(dvalsOut, n);
        timer.start();
        radix_histogram<<<kBlocks, kBlock>>>(dkeys, dhist, n, chunk, shift);
        timer.lap("radix_histogram");
        radix_scan<<<1, kScanBlock>>>(dhist, kDigits * kBlocks);
        timer.lap("radix_scan");
        radix_scatter<<<kBlocks, kBlock>>>(dkeys, dvals, dhist, dkeysOut, dvalsOut, n, chunk,
                                           shift);
        timer.lap("radix_scatter");
        timer.stop();
    }

    std::vector<unsigned> hkeysOut(n), hvalsOut(n);
    BENCH_CK(cudaMemcpy(hkeysOut.data(), dkeysOut, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    BENCH_CK(cudaMemcpy(hvalsOut.data(), dvalsOut, n * sizeof(unsigned), cudaMemcpyDeviceToHost));

    bench::Check check(opt.check);
    if (opt.check) {
        // Stable counting sort on the digit.
        std::vector<long long> offset(kDigits + 1, 0);
        for (long long i = 0; i < n; ++i)
            ++offset[((hkeys[i] >> shift) & (kDigits - 1)) + 1];
        for (int d = 0; d < kDigits; ++d)
            offset[d + 1] += offset[d];
        std::vector<unsigned> refKeys(n), refVals(n);
        for (long long i = 0; i < n; ++i) {
            long long pos = offset[(hkeys[i] >> shift) & (kDigits - 1)]++;
            refKeys[pos] = hkeys[i];
            refVals[pos] = hvals[i];
        }
        for (long long i = 0; i < n; ++i) {
            check.equal("keysOut", i, hkeysOut[i], refKeys[i]);
            check.equal("valsOut", i, hvalsOut[i], refVals[i]);
        }
    }
    bench::Report report(opt, timer);
    report.output("keysOut", hkeysOut);
    report.output("valsOut", hvalsOut);
    report.bytes(6.0 * n * sizeof(unsigned));
    report.param("n", static_cast<double>(n));
    report.param("shift", shift);
    int rc = report.finish(check);
    for (unsigned* p : {dkeys, dvals, dhist, dkeysOut, dvalsOut})
        BENCH_CK(cudaFree(p));
    return rc;
}

// Exclusive prefix sum of unsigned integers (SHOC level 1 "scan": reduce, top scan, bottom
// scan). A fixed grid of 1024 blocks each owns one contiguous chunk of the input:
//   scan_reduce  each block sums its chunk into blockSums[b];
//   scan_top     one block scans blockSums in place (exclusive);
//   scan_bottom  each block scans its chunk tile by tile (1024 elements, 4 per thread, staged
//                through shared memory), starting from blockSums[b].
// Arrays: in (read by two kernels), blockSums (written, scanned in place, read), out.
// Original placement: in `const __restrict__` and blockSums `const __restrict__` where a kernel
// only reads it; tiles and warp totals in shared memory.
#include "common/bench.h"

constexpr int kBlock = 256;
constexpr int kItems = 4;
constexpr int kTile = kBlock * kItems;
constexpr int kBlocks = 1024;

__device__ unsigned warpInclusiveScan(unsigned v) {
    int lane = threadIdx.x & 31;
    for (int off = 1; off < 32; off <<= 1) {
        unsigned t = __shfl_up_sync(0xffffffffu, v, off);
        if (lane >= off)
            v += t;
    }
    return v;
}

// Exclusive scan over the block (blockDim.x a multiple of 32, at most 1024). sWarp has 33
// entries; *total receives the block's sum. Ends with a barrier so sWarp can be reused.
__device__ unsigned blockExclusiveScan(unsigned v, unsigned* sWarp, unsigned* total) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    unsigned inc = warpInclusiveScan(v);
    if (lane == 31)
        sWarp[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        unsigned w = lane < nwarps ? sWarp[lane] : 0;
        unsigned wi = warpInclusiveScan(w);
        if (lane < nwarps)
            sWarp[lane] = wi - w;
        if (lane == 31)
            sWarp[32] = wi;
    }
    __syncthreads();
    unsigned result = sWarp[warp] + inc - v;
    *total = sWarp[32];
    __syncthreads();
    return result;
}

__global__ void scan_reduce(const unsigned* __restrict__ in, unsigned* blockSums, long long n,
                            long long chunk) {
    __shared__ unsigned sWarp[33];
    long long start = blockIdx.x * chunk;
    long long end = min(start + chunk, n);
    unsigned sum = 0;
    for (long long i = start + threadIdx.x; i < end; i += blockDim.x)
        sum += in[i];
    unsigned total = 0;
    blockExclusiveScan(sum, sWarp, &total);
    if (threadIdx.x == 0)
        blockSums[blockIdx.x] = total;
}

__global__ void scan_top(unsigned* blockSums, int nBlocks) {
    __shared__ unsigned sWarp[33];
    unsigned v = (int)threadIdx.x < nBlocks ? blockSums[threadIdx.x] : 0;
    unsigned total = 0;
    unsigned ex = blockExclusiveScan(v, sWarp, &total);
    if ((int)threadIdx.x < nBlocks)
        blockSums[threadIdx.x] = ex;
}

__global__ void scan_bottom(const unsigned* __restrict__ in, const unsigned* __restrict__ blockSums,
                            unsigned* out, long long n, long long chunk) {
    __shared__ unsigned sTile[kTile];
    __shared__ unsigned sWarp[33];
    int tid = threadIdx.x;
    long long start = blockIdx.x * chunk;
    long long end = min(start + chunk, n);
    unsigned carry = blockSums[blockIdx.x];
    for (long long base = start; base < end; base += kTile) {
        for (int k = 0; k < kItems; ++k) {
            long long i = base + tid + k * kBlock;
            sTile[tid + k * kBlock] = i < end ? in[i] : 0u;
        }
        __syncthreads();
        unsigned a0 = sTile[kItems * tid], a1 = sTile[kItems * tid + 1];
        unsigned a2 = sTile[kItems * tid + 2], a3 = sTile[kItems * tid + 3];
        unsigned total = 0;
        unsigned ex = carry + blockExclusiveScan(a0 + a1 + a2 + a3, sWarp, &total);
        sTile[kItems * tid] = ex;
        sTile[kItems * tid + 1] = ex + a0;
        sTile[kItems * tid + 2] = ex + a0 + a1;
        sTile[kItems * tid + 3] = ex + a0 + a1 + a2;
        __syncthreads();
        for (int k = 0; k < kItems; ++k) {
            long long i = base + tid + k * kBlock;
            if (i < end)
                out[i] = sTile[tid + k * kBlock];
        }
        carry += total;
        __syncthreads();
    }
}

int main(int argc, char** argv) {
    const std::vector<bench::InputSpec> inputs = {
        {"small", 1 << 20, "1M values (4 MB)"},
        {"large", 128 << 20, "128M values (512 MB in, 512 MB out)"},
        {"odd", 10000019, "10,000,019 values: ragged chunks and tiles"},
    };
    bench::Options opt = bench::parse(argc, argv, "scan", inputs);
    const long long n = opt.size;
    // Chunk per block: a whole number of tiles.
    const long long tiles = (n + kTile - 1) / kTile;
    const long long chunk = ((tiles + kBlocks - 1) / kBlocks) * kTile;

    std::vector<unsigned> hin(n);
    bench::Rng rng(opt.seed);
    for (unsigned& v : hin)
        v = rng.u32() & 15u;

    unsigned *din = nullptr, *dsums = nullptr, *dout = nullptr;
    BENCH_CK(cudaMalloc(&din, n * sizeof(unsigned)));
    BENCH_CK(cudaMalloc(&dsums, kBlocks * sizeof(unsigned)));
    BENCH_CK(cudaMalloc(&dout, n * sizeof(unsigned)));
    BENCH_CK(cudaMemcpy(din, hin.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));

    bench::Timer timer(opt);
    for (int run = 0; run < timer.runs(); ++run) {
        bench::poison(dsums, kBlocks);
        bench::poison(dout, n);
        timer.start();
        scan_reduce<<<kBlocks, kBlock>>>(din, dsums, n, chunk);
        timer.lap("scan_reduce");
        scan_top<<<1, kBlocks>>>(dsums, kBlocks);
        timer.lap("scan_top");
        scan_bottom<<<kBlocks, kBlock>>>(din, dsums, dout, n, chunk);
        timer.lap("scan_bottom");
        timer.stop();
    }

    std::vector<unsigned> hout(n);
    BENCH_CK(cudaMemcpy(hout.data(), dout, n * sizeof(unsigned), cudaMemcpyDeviceToHost));

    bench::Check check(opt.check);
    if (opt.check) {
        unsigned acc = 0;
        for (long long i = 0; i < n; ++i) {
            check.equal("out", i, hout[i], acc);
            acc += hin[i];
        }
    }
    bench::Report report(opt, timer);
    report.output("out", hout);
    report.bytes(3.0 * n * sizeof(unsigned));
    report.param("n", static_cast<double>(n));
    report.param("chunk", static_cast<double>(chunk));
    int rc = report.finish(check);
    BENCH_CK(cudaFree(din));
    BENCH_CK(cudaFree(dsums));
    BENCH_CK(cudaFree(dout));
    return rc;
}

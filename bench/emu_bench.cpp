// Emulation speed: emulated CUDA threads per second for a streaming kernel, a kernel with block
// barriers, a warp-shuffle reduction, and traced accesses through the warp rendezvous; with one
// and two OS threads running blocks. Recorded in docs/eval/logs/emulation.md (decision 011).
// Active profiling against full profiling (memplace/emu/profile.h): a traced launch whose
// sampled blocks are traced in full, against the same launch profiled actively and then run
// untraced; counters give the share of threads and lane accesses the profile ran.
#include "memplace/emu/cuda_emu.h"
#include "memplace/emu/profile.h"

#include <benchmark/benchmark.h>

#include <atomic>
#include <ctime>
#include <vector>

namespace {

__global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

__global__ void blockReduce(const float* in, float* out) {
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k)
            s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}

__global__ void warpReduce(const float* in, float* out) {
    float v = in[blockIdx.x * blockDim.x + threadIdx.x];
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0)
        out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;
}

__global__ void traced(const float* in, float* out, int accesses) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < accesses; ++k) {
        auto g =
            memplace::emu::warpRendezvous(memplace::emu::rendezvousKey(static_cast<unsigned>(k), 0),
                                          static_cast<unsigned long long>(k), i);
        benchmark::DoNotOptimize(g.mask);
        acc += in[i];
    }
    out[i] = acc;
}

/// What the runtime's tracing accessor does under emulation (accessors.cuh): rendezvous, and the
/// leader appends a record (counted here; the runtime writes 280 bytes).
std::atomic<unsigned long long> g_records{0};
unsigned g_sampled = 0; ///< blocks 0 .. g_sampled-1 are traced (the runtime's sample bitmap)
__device__ void access(unsigned site, unsigned array, unsigned flags, long long offset) {
    if (blockIdx.x + gridDim.x * blockIdx.y >= g_sampled)
        return;
    const memplace::emu::TraceState st = memplace::emu::traceState();
    if (st == memplace::emu::TraceState::Off)
        return;
    const memplace::emu::WarpGroup g =
        memplace::emu::warpRendezvous(memplace::emu::rendezvousKey(site, (array << 8) | flags),
                                      (static_cast<unsigned long long>(site) << 3) | flags, offset);
    if (st == memplace::emu::TraceState::Record && g.isLeader)
        g_records.fetch_add(1, std::memory_order_relaxed);
}

__global__ void tracedSaxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        access(1, 0, 1, i);
        access(2, 1, 1, i);
        access(3, 1, 2, i);
        y[i] = a * x[i] + y[i];
    }
}

__global__ void tracedLookup(const int* keys, const float* table, float* out, int tableSize) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    access(1, 0, 1, i);
    int k = keys[i] % tableSize;
    access(2, 1, 1, k);
    access(3, 2, 2, i);
    out[i] = table[k];
}

__global__ void tracedRowSum(const float* m, float* out, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0;
    for (int c = 0; c < cols; ++c) {
        access(1, 0, 1, static_cast<long long>(r) * cols + c);
        s += m[r * cols + c];
    }
    access(2, 1, 2, r);
    out[r] = s;
}

__global__ void tracedTile(const float* in, float* out) {
    __shared__ float t[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    access(1, 0, 1, i);
    t[threadIdx.x] = in[i];
    __syncthreads();
    access(2, 1, 2, i);
    out[i] = t[blockDim.x - 1 - threadIdx.x];
}

struct Buffers {
    explicit Buffers(int n) : n(n) {
        cudaMalloc(&x, n * sizeof(float));
        cudaMalloc(&y, n * sizeof(float));
    }
    ~Buffers() {
        cudaFree(x);
        cudaFree(y);
    }
    int n;
    float* x = nullptr;
    float* y = nullptr;
};

void setWorkers(benchmark::State& state) {
    memplace::emu::setWorkerThreads(static_cast<unsigned>(state.range(0)));
}

/// CPU seconds of the whole process (all OS threads): the machine may be shared, so rates per
/// CPU second are the comparable numbers; rates per wall second are given as well.
double processCpuSeconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// Runs the benchmark loop and sets "<what>/s" (wall) and "<what>/cpu-s" (process CPU).
template <class F>
void measure(benchmark::State& state, const char* what, double perIteration, F&& launch) {
    double cpu0 = processCpuSeconds();
    for (auto _ : state)
        launch();
    double cpu = processCpuSeconds() - cpu0;
    double total = perIteration * static_cast<double>(state.iterations());
    state.counters[std::string(what) + "/s"] =
        benchmark::Counter(total, benchmark::Counter::kIsRate);
    state.counters[std::string(what) + "/cpu-s"] = total / cpu;
}

void BM_Streaming(benchmark::State& state) {
    setWorkers(state);
    const int n = 1 << 18;
    Buffers b(n);
    measure(state, "threads", n,
            [&] { MEMPLACE_LAUNCH(saxpy, n / 256, 256, 0, 0, n, 2.0f, b.x, b.y); });
}

void BM_Barriers(benchmark::State& state) {
    setWorkers(state);
    const int n = 1 << 16;
    Buffers b(n);
    measure(state, "threads", n,
            [&] { MEMPLACE_LAUNCH(blockReduce, n / 256, 256, 0, 0, b.x, b.y); });
}

void BM_WarpShuffles(benchmark::State& state) {
    setWorkers(state);
    const int n = 1 << 16;
    Buffers b(n);
    measure(state, "threads", n,
            [&] { MEMPLACE_LAUNCH(warpReduce, n / 256, 256, 0, 0, b.x, b.y); });
}

void BM_TracedAccesses(benchmark::State& state) {
    setWorkers(state);
    const int n = 1 << 15, accesses = 4;
    Buffers b(n);
    measure(state, "lane accesses", static_cast<double>(n) * accesses,
            [&] { MEMPLACE_LAUNCH(traced, n / 256, 256, 0, 0, b.x, b.y, accesses); });
}

/// A traced launch of `launch` with the first `sampled` blocks sampled (as the Placer samples
/// whole SMs), profiled in full (range(0) == 0) or actively (1). Counters: the share of the
/// sampled blocks' threads the profile ran, its lane accesses (recorded and in the profile), and
/// the profile's own seconds per launch.
template <class F>
void tracedLaunch(benchmark::State& state, unsigned sampled, unsigned loops, F&& launch) {
    memplace::emu::setWorkerThreads(1);
    memplace::emu::ProfileOptions o = memplace::emu::profileOptions();
    const memplace::emu::ProfileOptions saved = o;
    o.mode =
        state.range(0) == 0 ? memplace::emu::ProfileMode::Full : memplace::emu::ProfileMode::Active;
    o.loopIterations = loops;
    o.reportPath.clear();
    memplace::emu::setProfileOptions(o);
    std::vector<uint32_t> blocks;
    g_sampled = sampled;
    for (uint32_t b = 0; b < sampled; ++b)
        blocks.push_back(b);
    double threadsRun = 0, threadsTotal = 0, profiled = 0, total = 0, seconds = 0;
    g_records = 0;
    for (auto _ : state) {
        memplace::emu::profileNextLaunch(blocks);
        launch();
        if (std::optional<memplace::emu::Profile> p = memplace::emu::takeProfile()) {
            threadsRun += static_cast<double>(p->stats.threadsRun);
            threadsTotal += static_cast<double>(p->stats.threadsTotal);
            profiled += static_cast<double>(p->stats.laneAccessesProfiled);
            total += static_cast<double>(p->stats.laneAccessesTotal);
            seconds += p->stats.profileSeconds;
        }
    }
    const double it = static_cast<double>(state.iterations());
    if (threadsTotal > 0) {
        state.counters["threads_run_share"] = threadsRun / threadsTotal;
        state.counters["lane_accesses_run"] = profiled / it;
        state.counters["lane_accesses_profile"] = total / it;
        state.counters["profile_ms"] = 1e3 * seconds / it;
    } else {
        state.counters["records"] = static_cast<double>(g_records.load()) / it;
    }
    memplace::emu::setProfileOptions(saved);
}

void BM_Profile_Streaming(benchmark::State& state) {
    const int n = 1 << 18;
    Buffers b(n);
    tracedLaunch(state, 64, 0,
                 [&] { MEMPLACE_LAUNCH(tracedSaxpy, n / 256, 256, 0, 0, n, 2.0f, b.x, b.y); });
}

void BM_Profile_Lookup(benchmark::State& state) {
    const int n = 1 << 18;
    int* keys = nullptr;
    cudaMallocManaged(&keys, n * sizeof(int));
    unsigned x = 1;
    for (int i = 0; i < n; ++i) {
        x = x * 1103515245u + 12345u;
        keys[i] = static_cast<int>(x >> 8);
    }
    Buffers b(n);
    tracedLaunch(state, 64, 0,
                 [&] { MEMPLACE_LAUNCH(tracedLookup, n / 256, 256, 0, 0, keys, b.x, b.y, 4096); });
    cudaFree(keys);
}

void BM_Profile_RowSum(benchmark::State& state) {
    const int rows = 1 << 14, cols = 64;
    float* m = nullptr;
    cudaMalloc(&m, sizeof(float) * rows * cols);
    Buffers b(rows);
    tracedLaunch(state, 32, static_cast<unsigned>(state.range(1)),
                 [&] { MEMPLACE_LAUNCH(tracedRowSum, rows / 128, 128, 0, 0, m, b.y, cols); });
    cudaFree(m);
}

void BM_Profile_Barriers(benchmark::State& state) {
    const int n = 1 << 16;
    Buffers b(n);
    tracedLaunch(state, 64, 0, [&] { MEMPLACE_LAUNCH(tracedTile, n / 256, 256, 0, 0, b.x, b.y); });
}

BENCHMARK(BM_Profile_Streaming)
    ->ArgName("active")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Profile_Lookup)
    ->ArgName("active")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Profile_RowSum)
    ->ArgNames({"active", "loops"})
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({1, 4})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Profile_Barriers)
    ->ArgName("active")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK(BM_Streaming)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Barriers)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_WarpShuffles)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TracedAccesses)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

BENCHMARK_MAIN();

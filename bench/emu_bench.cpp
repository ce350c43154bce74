// Emulation speed: emulated CUDA threads per second for a streaming kernel, a kernel with block
// barriers, a warp-shuffle reduction, and traced accesses through the warp rendezvous; with one
// and two OS threads running blocks. Recorded in docs/NOTES.md ("Emulation speed").
#include "memplace/emu/cuda_emu.h"

#include <benchmark/benchmark.h>

#include <ctime>

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

BENCHMARK(BM_Streaming)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Barriers)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_WarpShuffles)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TracedAccesses)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

BENCHMARK_MAIN();

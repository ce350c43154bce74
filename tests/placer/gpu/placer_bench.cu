// The Placer on the GPU: for the runtime's lookup and saxpy kernels at sizes that fill an H100,
// the time of the original kernel, of the first launch through the Placer (traced + engine), of
// later launches (placed), the Placer's overhead against kernel time, and the cost of the
// dynamic accessor against the specialised instantiation of the chosen placement. Then every
// placed output is compared bitwise with the original, and launches from two host threads on
// two streams are checked the same way.
//
// CUDA events, 3 warm-ups, median of 15; later launches are queued behind a spin kernel so that
// the host's own work (deciding, materialising) is not in the kernel interval, and measured
// separately on the host. Built and run by the GPU suite (tests/gpu, gpu_placer): placer_bench
// [OUT.md] [scale] (scale < 1 shrinks every size, for a quick run or under the emulation layer).
#include "kernels/harness.h"
#include "placer/placer.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

using namespace mptest;
using memplace::Place;
namespace pl = memplace::placer;

namespace {

constexpr int kWarmup = 3;
constexpr int kReps = 15;
int failures = 0;
std::ostringstream md;

__global__ void spinKernel(long long ns) {
#if !defined(MEMPLACE_EMU)
    const long long t0 = clock64();
    while (clock64() - t0 < ns) {
    }
#else
    (void)ns;
#endif
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

struct EventPair {
    cudaEvent_t a = nullptr, b = nullptr;
    EventPair() {
        MPT_CHECK(cudaEventCreate(&a));
        MPT_CHECK(cudaEventCreate(&b));
    }
    ~EventPair() {
        cudaEventDestroy(a);
        cudaEventDestroy(b);
    }
    float ms() const {
        float m = 0;
        MPT_CHECK(cudaEventElapsedTime(&m, a, b));
        return m;
    }
};

/// Times `launch` on `s`: median kernel ms (events, behind a spin kernel) and median host µs of
/// the launch call itself.
template <class F>
std::pair<double, double> timeLaunches(cudaStream_t s, F&& launch, int reps = kReps) {
    std::vector<double> ms, us;
    EventPair ev;
    for (int r = 0; r < kWarmup + reps; ++r) {
        MEMPLACE_LAUNCH(spinKernel, 1, 1, 0, s,
                        2'000'000LL); // ~1 ms: the host work hides behind it
        MPT_CHECK(cudaEventRecord(ev.a, s));
        const auto t0 = std::chrono::steady_clock::now();
        launch();
        const auto t1 = std::chrono::steady_clock::now();
        MPT_CHECK(cudaEventRecord(ev.b, s));
        MPT_CHECK(cudaStreamSynchronize(s));
        if (r >= kWarmup) {
            ms.push_back(ev.ms());
            us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        }
    }
    return {median(ms), median(us)};
}

/// One kernel and input: original, rewritten through the Placer, and checks.
struct Workload {
    std::string name;
    std::string input;
    std::function<void(cudaStream_t)> original;
    std::function<cudaError_t(cudaStream_t)> rewritten;
    std::function<void(cudaStream_t)> reset; // restores inputs/poisons outputs
    std::function<std::vector<unsigned char>()> result;
};

void runWorkload(Workload& w, cudaStream_t s) {
    // Reference output and the original's time.
    w.reset(s);
    w.original(s);
    MPT_CHECK(cudaStreamSynchronize(s));
    const auto ref = w.result();
    const auto [origMs, origUs] = timeLaunches(s, [&] { w.original(s); });

    // A fresh Placer; the first launch is traced (MEMPLACE_TRACE_AFTER=0: what a traced launch
    // costs is measured here) and runs the engine before it returns.
    pl::Options o = pl::Options::fromEnvironment();
    o.mode = pl::PlacerMode::Auto;
    o.traceAfter = 0;
    o.reportPath.clear();
    o.cacheDir.clear();
    o.timeKernels = false;
    auto placer = pl::install(o);
    w.reset(s);
    MPT_CHECK(cudaStreamSynchronize(s));
    const auto f0 = std::chrono::steady_clock::now();
    const cudaError_t st = w.rewritten(s);
    MPT_CHECK(cudaStreamSynchronize(s));
    const double firstMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - f0).count();
    const memplace::LaunchReport r1 = memplace::lastReport();
    bool ok = st == cudaSuccess && r1.dispatch == "tracing" && w.result() == ref;
    // The second launch: placed; its output must be the original's.
    w.reset(s);
    (void)w.rewritten(s);
    MPT_CHECK(cudaStreamSynchronize(s));
    const memplace::LaunchReport r2 = memplace::lastReport();
    ok = ok && w.result() == ref && r2.dispatch != "tracing" && r2.errors.empty();
    // Later launches, specialised (or whatever the runtime picks), then forced dynamic.
    const auto [placedMs, placedUs] = timeLaunches(s, [&] { (void)w.rewritten(s); });
    const memplace::LaunchReport r3 = memplace::lastReport();
    memplace::setDispatchMode(memplace::DispatchMode::Dynamic);
    const auto [dynMs, dynUs] = timeLaunches(s, [&] { (void)w.rewritten(s); });
    w.reset(s);
    (void)w.rewritten(s);
    MPT_CHECK(cudaStreamSynchronize(s));
    ok = ok && w.result() == ref && memplace::lastReport().dispatch == "dynamic";
    memplace::setDispatchMode(memplace::DispatchMode::Auto);

    const auto ks = placer->kernels();
    const pl::KernelRecord* k = ks.empty() ? nullptr : &ks.back();
    std::string decision = "?";
    double profiling = 0, engine = 0, predSpeedup = 0, collect = 0, convert = 0;
    uint64_t records = 0, sampled = 0;
    if (k != nullptr) {
        decision.clear();
        for (std::size_t i = 0; i < k->decision.size(); ++i) {
            decision += (i ? ", " : "") + k->arrays[i] + "=" +
                        std::string(memplace::placeName(k->decision[i]));
        }
        profiling = k->overheads.profilingMs;
        collect = k->overheads.collectMs;
        convert = k->overheads.convertMs;
        engine = k->overheads.engineMs;
        predSpeedup = k->predictedSeconds > 0 ? k->originalSeconds / k->predictedSeconds : 0;
        records = k->records;
        sampled = k->sampledBlocks;
    }
    // One-time overhead: the first launch's wall time beyond an original launch.
    const double oneTime = firstMs - origMs;
    const double saved = origMs - placedMs;
    char line[1024];
    std::snprintf(line, sizeof line,
                  "| %s | %s | %s | %.4f | %.2f | %.4f (%.3fx) | %.1f / %.1f | %.4f (%.3fx) | %.2f "
                  "(%llu rec, %llu blocks) | %.2f | %.2f | %s | %s |\n",
                  w.name.c_str(), w.input.c_str(), decision.c_str(), origMs, firstMs, placedMs,
                  origMs / placedMs, origUs, placedUs, dynMs, dynMs / placedMs, profiling,
                  static_cast<unsigned long long>(records),
                  static_cast<unsigned long long>(sampled), engine, oneTime / origMs,
                  saved > 0
                      ? (std::to_string(static_cast<long long>(oneTime / saved + 0.999))).c_str()
                      : "never (no gain)",
                  ok ? "pass" : "FAIL");
    md << line;
    std::printf("%s", line);
    std::printf("   %s: predicted %.3fx; first launch %.2f ms = original %.3f + profiling %.2f "
                "(collect %.2f, convert %.2f) + engine %.2f + rest; dispatch %s (%s)\n",
                w.name.c_str(), predSpeedup, firstMs, origMs, profiling, collect, convert, engine,
                r3.dispatch.c_str(), k != nullptr ? k->why.c_str() : "");
    if (!ok) {
        ++failures;
        std::printf("FAIL: %s %s (first dispatch %s, second %s, errors %zu)\n", w.name.c_str(),
                    w.input.c_str(), r1.dispatch.c_str(), r2.dispatch.c_str(), r2.errors.size());
    }
    pl::uninstall();
}

// ---- workloads -------------------------------------------------------------------------------

struct Buffers {
    std::vector<std::pair<void*, std::size_t>> all;
    template <class T>
    T* alloc(std::size_t n) {
        T* p = nullptr;
        MPT_CHECK(cudaMalloc(&p, n * sizeof(T)));
        all.emplace_back(p, n * sizeof(T));
        return p;
    }
    ~Buffers() {
        for (auto& [p, b] : all) {
            cudaFree(p);
        }
    }
};

std::vector<float> randomVector(std::size_t n, uint64_t seed) {
    std::mt19937_64 g(seed);
    std::vector<float> v(n);
    for (float& x : v) {
        x = randomFloat(g);
    }
    return v;
}

std::vector<unsigned char> bytesOf(const void* d, std::size_t bytes) {
    std::vector<unsigned char> h(bytes);
    MPT_CHECK(cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost));
    return h;
}

void lookupWorkload(bool uniform, int n, int iters, unsigned mask, cudaStream_t s) {
    Buffers b;
    float* table = b.alloc<float>(mask + 1);
    float* out = b.alloc<float>(n);
    const auto t = randomVector(mask + 1, 5);
    h2d(table, t.data(), t.size() * sizeof(float));
    Workload w;
    w.name = uniform ? "warp-uniform lookup" : "scattered lookup";
    char in[128];
    std::snprintf(in, sizeof in, "%d threads x %d, %.3g KB table", n, iters,
                  (mask + 1) * 4.0 / 1024);
    w.input = in;
    w.original = [=](cudaStream_t st) {
        if (uniform) {
            uniformLookupOriginal(n, iters, mask, table, out, st);
        } else {
            scatteredLookupOriginal(n, iters, mask, table, out, st);
        }
    };
    w.rewritten = [=](cudaStream_t st) {
        return uniform ? uniformLookupRewritten(n, iters, mask, table, out, st)
                       : scatteredLookupRewritten(n, iters, mask, table, out, st);
    };
    w.reset = [=](cudaStream_t st) { MPT_CHECK(cudaMemsetAsync(out, 0xff, n * 4ull, st)); };
    w.result = [=] {
        MPT_CHECK(cudaDeviceSynchronize());
        return bytesOf(out, n * 4ull);
    };
    runWorkload(w, s);
}

void saxpyWorkload(int n, cudaStream_t s) {
    Buffers b;
    float* x = b.alloc<float>(n);
    float* y = b.alloc<float>(n);
    const auto hx = randomVector(n, 7);
    const auto hy = randomVector(n, 8);
    h2d(x, hx.data(), n * 4ull);
    Workload w;
    w.name = "saxpy";
    char in[64];
    std::snprintf(in, sizeof in, "%d floats (%.0f MB per array)", n, n * 4.0 / (1 << 20));
    w.input = in;
    w.original = [=](cudaStream_t st) { saxpyOriginal(n, 1.7f, x, y, 256, st); };
    w.rewritten = [=](cudaStream_t st) { return saxpyRewritten(n, 1.7f, x, y, 256, st); };
    // y is updated in place: the timed launches change it; results are compared after a reset.
    w.reset = [=, &hy](cudaStream_t st) {
        MPT_CHECK(cudaMemcpyAsync(y, hy.data(), n * 4ull, cudaMemcpyHostToDevice, st));
        MPT_CHECK(cudaStreamSynchronize(st));
    };
    w.result = [=] {
        MPT_CHECK(cudaDeviceSynchronize());
        return bytesOf(y, n * 4ull);
    };
    runWorkload(w, s);
}

// ---- two host threads, two streams ------------------------------------------------------------

void concurrency(int scale4) {
    auto placer = pl::install([] {
        pl::Options o = pl::Options::fromEnvironment();
        o.mode = pl::PlacerMode::Auto;
        o.reportPath.clear();
        o.cacheDir.clear();
        return o;
    }());
    std::vector<int> bad(2, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
        threads.emplace_back([t, &bad, scale4] {
            cudaStream_t s = nullptr;
            MPT_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
            const int n = scale4 * (t == 0 ? 1 : 2);
            const int iters = 32;
            const unsigned mask = 4095;
            Buffers b;
            float* table = b.alloc<float>(mask + 1);
            float* out = b.alloc<float>(n);
            float* ref = b.alloc<float>(n);
            float* x = b.alloc<float>(n);
            float* y = b.alloc<float>(n);
            float* yref = b.alloc<float>(n);
            const auto ht = randomVector(mask + 1, 11 + t);
            const auto hx = randomVector(n, 13 + t);
            const auto hy = randomVector(n, 17 + t);
            h2d(table, ht.data(), ht.size() * 4);
            h2d(x, hx.data(), n * 4ull);
            h2d(y, hy.data(), n * 4ull);
            h2d(yref, hy.data(), n * 4ull);
            scatteredLookupOriginal(n, iters, mask, table, ref, s);
            MPT_CHECK(cudaStreamSynchronize(s));
            const auto want = bytesOf(ref, n * 4ull);
            for (int k = 0; k < 8; ++k) {
                MPT_CHECK(cudaMemsetAsync(out, 0xff, n * 4ull, s));
                (void)scatteredLookupRewritten(n, iters, mask, table, out, s);
                (void)saxpyRewritten(n, 1.5f, x, y, 256, s);
                saxpyOriginal(n, 1.5f, x, yref, 256, s);
                MPT_CHECK(cudaStreamSynchronize(s));
                bad[t] += bytesOf(out, n * 4ull) == want ? 0 : 1;
                bad[t] += bytesOf(y, n * 4ull) == bytesOf(yref, n * 4ull) ? 0 : 1;
            }
            MPT_CHECK(cudaStreamDestroy(s));
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    const auto ks = placer->kernels();
    bool once = ks.size() == 4;
    for (const auto& k : ks) {
        once = once && k.tracedLaunches == 1 && k.launches == 8;
    }
    const bool ok = bad[0] == 0 && bad[1] == 0 && once;
    md << "\n2 host threads x 2 streams, scattered lookup + saxpy, 8 rounds each, 4 signatures: "
       << (ok ? "pass" : "FAIL") << " (mismatches " << bad[0] << ", " << bad[1]
       << "; each signature traced once: " << (once ? "yes" : "no") << ")\n";
    if (!ok) {
        ++failures;
    }
    pl::uninstall();
}

} // namespace

int main(int argc, char** argv) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("SKIP: no CUDA device\n");
        return 77;
    }
    const double scale = argc > 2 ? std::atof(argv[2]) : 1.0;
    cudaDeviceProp prop{};
    MPT_CHECK(cudaGetDeviceProperties(&prop, 0));
    const std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    std::printf("device: %s (sm_%d%d, %d SMs), date %s, scale %g\n", prop.name, prop.major,
                prop.minor, prop.multiProcessorCount, date, scale);
    cudaStream_t s = nullptr;
    MPT_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    md << "device: " << prop.name << ", date " << date << ", scale " << scale << "\n\n"
       << "| kernel | input | decision | original ms | first launch ms (traced + engine) | "
          "later launches ms (speedup) | host µs per launch, original / placed | dynamic "
          "accessor ms (vs specialised) | profiling ms | engine ms | one-time overhead in "
          "original launches | launches to break even | outputs |\n"
       << "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    auto sz = [&](double v) { return std::max(256, static_cast<int>(v * scale)); };
    saxpyWorkload(sz(1 << 26), s);
    lookupWorkload(false, sz(1 << 22), 64, 4095, s);           // 16 KB table: shared
    lookupWorkload(false, sz(1 << 22), 64, (1u << 22) - 1, s); // 16 MB table: another decision
    lookupWorkload(true, sz(1 << 24), 32, 255, s);             // 1 KB warp-uniform table
    lookupWorkload(true, sz(1 << 24), 32, 4095, s);            // 16 KB warp-uniform table
    concurrency(sz(1 << 20));
    MPT_CHECK(cudaStreamDestroy(s));
    memplace::releaseResources();
    std::printf("\n%s\n", md.str().c_str());
    std::printf("%d failures\n", failures);
    if (argc > 1) {
        std::ofstream(argv[1]) << md.str() << "\n" << failures << " failures\n";
    }
    return failures == 0 ? 0 : 1;
}

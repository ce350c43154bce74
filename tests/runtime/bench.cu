// Kernel time of each place against global for the streaming and the table-lookup kernels, and
// the cost of the DynamicAccessor against the specialised instantiation of the same placement.
// CUDA events around each launch, 3 warm-up launches, median of 15. Exit 77 without a GPU.
#include "kernels/harness.h"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <sstream>

using namespace mptest;
using memplace::Place;

namespace {

__global__ void fillFloats(float* p, std::size_t n, unsigned seed) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        p[i] = static_cast<float>(h & 0xffff) / 65536.0f - 0.5f;
    }
}

/// Keeps the GPU busy while the host prepares the next launch, so that the event recorded after
/// it times the kernel alone (memplace::launch's host work is reported separately).
__global__ void spin(long long ns) {
    const long long t0 = clock64();
    while (clock64() - t0 < ns) {
    }
}

struct Timing {
    double median = 0;
    double min = 0;
    double hostMicros = 0; // median memplace::launch host time (decision + materialisation)
    std::string dispatch;
    bool placed = true;
};

template <class F>
Timing timeIt(cudaStream_t s, F&& launch, bool viaMemplace) {
    cudaEvent_t a = nullptr, b = nullptr;
    MPT_CHECK(cudaEventCreate(&a));
    MPT_CHECK(cudaEventCreate(&b));
    for (int w = 0; w < 3; ++w) {
        launch();
    }
    MPT_CHECK(cudaStreamSynchronize(s));
    MPT_CHECK(cudaGetLastError());
    std::vector<double> ms, host;
    Timing t;
    for (int r = 0; r < 15; ++r) {
        spin<<<1, 1, 0, s>>>(2000000); // about 1 ms at H100 clocks
        MPT_CHECK(cudaEventRecord(a, s));
        launch();
        MPT_CHECK(cudaEventRecord(b, s));
        MPT_CHECK(cudaEventSynchronize(b));
        float e = 0;
        MPT_CHECK(cudaEventElapsedTime(&e, a, b));
        ms.push_back(e);
        if (viaMemplace) {
            const memplace::LaunchReport rep = memplace::lastReport();
            host.push_back(rep.hostMicros);
            t.dispatch = rep.dispatch;
            t.placed = t.placed && !rep.anyFallback();
        }
    }
    MPT_CHECK(cudaGetLastError());
    std::sort(ms.begin(), ms.end());
    t.median = ms[ms.size() / 2];
    t.min = ms.front();
    if (!host.empty()) {
        std::sort(host.begin(), host.end());
        t.hostMicros = host[host.size() / 2];
    }
    MPT_CHECK(cudaEventDestroy(a));
    MPT_CHECK(cudaEventDestroy(b));
    return t;
}

std::ostringstream out;

void header(const char* kernel, const std::string& config, double original) {
    char line[256];
    std::snprintf(line, sizeof line, "\n%s (%s): original kernel %.4f ms\n\n", kernel,
                  config.c_str(), original);
    out << line
        << "| placement | specialised ms | dynamic ms | dynamic / specialised | specialised / "
           "global | host µs |\n|---|---|---|---|---|---|\n";
}

void row(const std::string& placement, const Timing& spec, const Timing& dyn, double global) {
    char line[320];
    std::snprintf(
        line, sizeof line, "| %s | %.4f | %.4f | %.3f | %.3f | %.1f |%s\n", placement.c_str(),
        spec.median, dyn.median, dyn.median / spec.median, spec.median / global, spec.hostMicros,
        spec.placed && dyn.placed && spec.dispatch == "specialized" && dyn.dispatch == "dynamic"
            ? ""
            : " (fell back or wrong dispatch!)");
    out << line;
}

template <class F>
void measure(cudaStream_t s, const char* kernel, const std::vector<std::string>& arrays,
             const std::vector<std::vector<Place>>& placements, F&& launch, double& global) {
    for (const auto& p : placements) {
        std::vector<std::pair<std::string, Place>> force;
        std::string name;
        for (std::size_t j = 0; j < p.size(); ++j) {
            force.emplace_back(arrays[j], p[j]);
            name += (j ? "," : "") + arrays[j] + "=" + std::string(memplace::placeName(p[j]));
        }
        memplace::setPlacement(kernel, force);
        memplace::setDispatchMode(memplace::DispatchMode::Auto);
        const Timing spec = timeIt(s, launch, true);
        memplace::setDispatchMode(memplace::DispatchMode::Dynamic);
        const Timing dyn = timeIt(s, launch, true);
        memplace::setDispatchMode(memplace::DispatchMode::Auto);
        if (&p == &placements.front()) {
            global = spec.median;
        }
        row(name, spec, dyn, global);
        MPT_CHECK(cudaCtxResetPersistingL2Cache());
    }
    memplace::clearPlacements();
}

} // namespace

int main(int argc, char** argv) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("SKIP: no CUDA device\n");
        return 77;
    }
    cudaDeviceProp prop{};
    MPT_CHECK(cudaGetDeviceProperties(&prop, 0));
    const std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    out << "device: " << prop.name << " (" << prop.multiProcessorCount << " SMs, L2 "
        << prop.l2CacheSize / (1024 * 1024) << " MB), date " << date
        << "; CUDA events around each launch (queued behind a 1 ms spin kernel so that the host's "
           "placement work is not timed), 3 warm-up launches, median of 15\n";
    cudaStream_t s = nullptr;
    MPT_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    double global = 0;

    // Streaming: saxpy over 2^26 floats (256 MB per array).
    {
        const int n = 1 << 26;
        float *x = nullptr, *y = nullptr;
        MPT_CHECK(cudaMalloc(&x, sizeof(float) * n));
        MPT_CHECK(cudaMalloc(&y, sizeof(float) * n));
        fillFloats<<<1024, 256, 0, s>>>(x, n, 1);
        fillFloats<<<1024, 256, 0, s>>>(y, n, 2);
        const Timing orig = timeIt(s, [&] { saxpyOriginal(n, 1.0001f, x, y, 256, s); }, false);
        header("saxpy", "n = 2^26, 256 MB per array, block 256", orig.median);
        measure(
            s, "saxpy", {"x", "y"}, {{G, G}, {RO, G}, {TEX, G}, {L2, G}, {G, L2}},
            [&] { (void)saxpyRewritten(n, 1.0001f, x, y, 256, s); }, global);
        MPT_CHECK(cudaFree(x));
        MPT_CHECK(cudaFree(y));
    }
    // Warp-uniform lookups: 2^24 threads, 32 lookups each, in a 1 KB and in a 16 KB table.
    for (unsigned mask : {255u, 4095u}) {
        const int n = 1 << 24;
        const int iters = 32;
        float *coef = nullptr, *o = nullptr;
        MPT_CHECK(cudaMalloc(&coef, sizeof(float) * (mask + 1)));
        MPT_CHECK(cudaMalloc(&o, sizeof(float) * n));
        fillFloats<<<16, 256, 0, s>>>(coef, mask + 1, 3);
        const Timing orig =
            timeIt(s, [&] { uniformLookupOriginal(n, iters, mask, coef, o, s); }, false);
        header("uniform_lookup",
               "2^24 threads x 32 warp-uniform lookups, " + std::to_string((mask + 1) / 256) +
                   " KB table",
               orig.median);
        measure(
            s, "uniform_lookup", {"coef", "out"},
            {{G, G}, {RO, G}, {TEX, G}, {CONST, G}, {SH, G}, {L2, G}},
            [&] { (void)uniformLookupRewritten(n, iters, mask, coef, o, s); }, global);
        MPT_CHECK(cudaFree(coef));
        MPT_CHECK(cudaFree(o));
    }
    // Scattered lookups: 2^22 threads, 64 pseudo-random lookups each, in a 16 KB table (fits
    // L1 and shared memory) and in a 16 MB table (L2 only: constant and shared infeasible).
    for (unsigned mask : {4095u, (1u << 22) - 1}) {
        const int n = 1 << 22;
        const int iters = 64;
        float *table = nullptr, *o = nullptr;
        MPT_CHECK(cudaMalloc(&table, sizeof(float) * (mask + 1)));
        MPT_CHECK(cudaMalloc(&o, sizeof(float) * n));
        fillFloats<<<1024, 256, 0, s>>>(table, mask + 1, 4);
        const Timing orig =
            timeIt(s, [&] { scatteredLookupOriginal(n, iters, mask, table, o, s); }, false);
        const bool small = mask < 65536;
        header("scattered_lookup",
               "2^22 threads x 64 scattered lookups, " +
                   (small ? std::string("16 KB") : std::string("16 MB")) + " table",
               orig.median);
        std::vector<std::vector<Place>> places = {{G, G}, {RO, G}, {TEX, G}, {L2, G}};
        if (small) {
            places = {{G, G}, {RO, G}, {TEX, G}, {CONST, G}, {SH, G}, {L2, G}};
        }
        measure(
            s, "scattered_lookup", {"table", "out"}, places,
            [&] { (void)scatteredLookupRewritten(n, iters, mask, table, o, s); }, global);
        MPT_CHECK(cudaFree(table));
        MPT_CHECK(cudaFree(o));
    }
    MPT_CHECK(cudaStreamDestroy(s));
    memplace::releaseResources();
    std::printf("%s\n", out.str().c_str());
    if (argc > 1) {
        std::ofstream f(argv[1]);
        f << out.str();
    }
    return 0;
}

// GPU tests of the runtime: for every hand-rewritten kernel, the original and every tested
// placement through each specialised instantiation and through the dynamic accessor, outputs
// poisoned first and compared bitwise with the original; fallbacks; the constant pool shared by
// launches on two streams; the PlacementPolicy hook; and GPU traces against hand-computed
// expectations. Exit 0: all passed; 1: a failure; 77: no GPU (skipped).
#include "kernels/harness.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace mptest;
using memplace::Place;

namespace {

int failures = 0;
int checks = 0;
std::ostringstream table;

void expect(bool ok, const std::string& what) {
    ++checks;
    if (!ok) {
        ++failures;
        std::printf("FAIL: %s\n", what.c_str());
    }
}

std::string placementName(const std::vector<std::string>& arrays, const std::vector<Place>& p) {
    std::string s;
    for (std::size_t j = 0; j < p.size(); ++j) {
        s += (j ? "," : "") + arrays[j] + "=" + std::string(memplace::placeName(p[j]));
    }
    return s;
}

void forEachPlacement(const std::vector<std::vector<Place>>& places,
                      const std::function<void(const std::vector<Place>&)>& f) {
    std::vector<std::size_t> idx(places.size(), 0);
    for (;;) {
        std::vector<Place> p;
        for (std::size_t j = 0; j < places.size(); ++j) {
            p.push_back(places[j][idx[j]]);
        }
        f(p);
        std::size_t j = 0;
        while (j < places.size() && ++idx[j] == places[j].size()) {
            idx[j] = 0;
            ++j;
        }
        if (j == places.size()) {
            return;
        }
    }
}

// ---- every placement of every case --------------------------------------------------------

void runCases(cudaStream_t s) {
    table << "| kernel | placements | specialised: pass | dynamic: pass | host µs (median) |\n"
          << "|---|---|---|---|---|\n";
    uint64_t seed = 12345;
    const char* only = std::getenv("MPT_CASES"); // comma-separated case names (racecheck runs)
    for (auto& make : registry()) {
        std::unique_ptr<Case> c = make();
        if (only != nullptr &&
            ("," + std::string(only) + ",").find("," + c->name() + ",") == std::string::npos) {
            continue;
        }
        c->setup(seed++);
        c->reset(s);
        c->runOriginal(s);
        MPT_CHECK(cudaStreamSynchronize(s));
        MPT_CHECK(cudaGetLastError());
        const auto ref = c->results();
        c->reset(s);
        c->runOriginal(s);
        MPT_CHECK(cudaStreamSynchronize(s));
        expect(c->results() == ref, c->name() + ": the original is deterministic");
        int total = 0;
        int passSpec = 0;
        int passDyn = 0;
        std::vector<double> micros;
        forEachPlacement(c->places(), [&](const std::vector<Place>& p) {
            ++total;
            std::vector<std::pair<std::string, Place>> force;
            for (std::size_t j = 0; j < p.size(); ++j) {
                force.emplace_back(c->arrays()[j], p[j]);
            }
            memplace::setPlacement(c->kernel(), force);
            for (int dyn = 0; dyn < 2; ++dyn) {
                memplace::setDispatchMode(dyn ? memplace::DispatchMode::Dynamic
                                              : memplace::DispatchMode::Auto);
                c->reset(s);
                const cudaError_t st = c->runRewritten(s);
                const cudaError_t sync = cudaStreamSynchronize(s);
                const cudaError_t last = cudaGetLastError();
                const memplace::LaunchReport rep = memplace::lastReport();
                micros.push_back(rep.hostMicros);
                const std::string what = c->name() + " [" + placementName(c->arrays(), p) + "] " +
                                         (dyn ? "dynamic" : "specialised");
                bool ok = st == cudaSuccess && sync == cudaSuccess && last == cudaSuccess;
                if (!ok) {
                    std::printf("  %s: launch %s, sync %s, last %s\n", what.c_str(),
                                cudaGetErrorName(st), cudaGetErrorName(sync),
                                cudaGetErrorName(last));
                }
                for (std::size_t j = 0; j < p.size() && ok; ++j) {
                    if (rep.arrays[j].placed != p[j]) {
                        std::printf("  %s: %s fell back: %s\n", what.c_str(),
                                    rep.arrays[j].name.c_str(), rep.arrays[j].fallback.c_str());
                        ok = false;
                    }
                }
                const std::string wantDispatch = dyn ? "dynamic" : "specialized";
                if (ok && rep.dispatch != wantDispatch) {
                    std::printf("  %s: dispatch %s\n", what.c_str(), rep.dispatch.c_str());
                    ok = false;
                }
                for (const std::string& e : rep.errors) {
                    std::printf("  %s: runtime error: %s\n", what.c_str(), e.c_str());
                    ok = false;
                }
                if (ok && c->results() != ref) {
                    std::printf("  %s: output differs from the original\n", what.c_str());
                    ok = false;
                }
                expect(ok, what);
                (dyn ? passDyn : passSpec) += ok ? 1 : 0;
            }
        });
        memplace::clearPlacements();
        memplace::setDispatchMode(memplace::DispatchMode::Auto);
        std::sort(micros.begin(), micros.end());
        char line[256];
        std::snprintf(line, sizeof line, "| %s | %d | %d/%d | %d/%d | %.1f |\n", c->name().c_str(),
                      total, passSpec, total, passDyn, total, micros[micros.size() / 2]);
        table << line;
        std::printf("%s", line);
        c->teardown();
    }
}

// ---- fallbacks -----------------------------------------------------------------------------

/// Random x and y for saxpy (a = 1.7) and the original kernel's result, on the device.
struct SaxpyData {
    int n;
    std::vector<float> hx, hy, want;
    float* x = nullptr;
    float* y = nullptr;

    SaxpyData(int count, uint64_t seed, cudaStream_t s) : n(count), hx(count), hy(count) {
        std::mt19937_64 g(seed);
        for (int i = 0; i < n; ++i) {
            hx[i] = randomFloat(g);
            hy[i] = randomFloat(g);
        }
        float* yref = nullptr;
        MPT_CHECK(cudaMalloc(&x, bytes()));
        MPT_CHECK(cudaMalloc(&y, bytes()));
        MPT_CHECK(cudaMalloc(&yref, bytes()));
        h2d(x, hx.data(), bytes());
        h2d(yref, hy.data(), bytes());
        saxpyOriginal(n, 1.7f, x, yref, 256, s);
        MPT_CHECK(cudaStreamSynchronize(s));
        want.resize(hy.size());
        MPT_CHECK(cudaMemcpy(want.data(), yref, bytes(), cudaMemcpyDeviceToHost));
        MPT_CHECK(cudaFree(yref));
    }
    ~SaxpyData() {
        cudaFree(x);
        cudaFree(y);
    }
    SaxpyData(const SaxpyData&) = delete;
    SaxpyData& operator=(const SaxpyData&) = delete;
    std::size_t bytes() const { return static_cast<std::size_t>(n) * sizeof(float); }
    void resetY() const { h2d(y, hy.data(), bytes()); }
    /// y on the device equals the original's result in its first `count` elements, bitwise.
    bool yIsWanted(int count) const {
        std::vector<float> got(static_cast<std::size_t>(count));
        MPT_CHECK(cudaMemcpy(got.data(), y, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
        return std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0;
    }
};

void fallbackTests(cudaStream_t s) {
    const int n = 100000; // 400 KB: too large for the constant pool and for shared memory
    const SaxpyData d(n, 7, s);
    float* x = d.x;
    float* y = d.y;

    struct FB {
        Place x;
        Place y;
        const char* array;
        const char* expect;
    };
    const FB cases[] = {
        {Place::Constant, Place::Global, "x", "do not fit"},
        {Place::Shared, Place::Global, "x", "shared: needs"},
        {Place::Global, Place::Texture, "y", "not among the array's feasible places"},
        {Place::Global, Place::Constant, "y", "not among the array's feasible places"},
        {Place::Registers, Place::Global, "x", "registers"},
    };
    for (const FB& f : cases) {
        memplace::setPlacement("saxpy", {{"x", f.x}, {"y", f.y}});
        d.resetY();
        const cudaError_t st = saxpyRewritten(n, 1.7f, x, y, 256, s);
        MPT_CHECK(cudaStreamSynchronize(s));
        const memplace::LaunchReport rep = memplace::lastReport();
        const int j = std::string(f.array) == "x" ? 0 : 1;
        const bool ok = st == cudaSuccess && rep.arrays[j].placed == Place::Global &&
                        rep.arrays[j].fallback.find(f.expect) != std::string::npos &&
                        d.yIsWanted(n) && cudaGetLastError() == cudaSuccess;
        expect(ok, std::string("fallback: saxpy ") + f.array + "=" +
                       std::string(memplace::placeName(j == 0 ? f.x : f.y)) + " -> global (" +
                       rep.arrays[j].fallback + ")");
        table << "| fallback | " << f.array << "=" << memplace::placeName(j == 0 ? f.x : f.y)
              << " | " << rep.arrays[j].fallback << " | " << (ok ? "pass" : "FAIL") << " |\n";
    }
    // The legacy default stream and the L2 window: either it works or it falls back, reported.
    memplace::setPlacement("saxpy", {{"x", Place::L2Persist}, {"y", Place::Global}});
    d.resetY();
    (void)saxpyRewritten(n, 1.7f, x, y, 256, nullptr);
    MPT_CHECK(cudaDeviceSynchronize());
    {
        const memplace::LaunchReport rep = memplace::lastReport();
        const bool ok =
            d.yIsWanted(n) &&
            (rep.arrays[0].placed == Place::L2Persist || !rep.arrays[0].fallback.empty()) &&
            cudaGetLastError() == cudaSuccess;
        expect(ok, "l2persist on the legacy default stream: " +
                       std::string(memplace::placeName(rep.arrays[0].placed)) + " " +
                       rep.arrays[0].fallback);
        table << "| default stream | x=l2persist | placed "
              << memplace::placeName(rep.arrays[0].placed) << " " << rep.arrays[0].fallback << " | "
              << (ok ? "pass" : "FAIL") << " |\n";
    }
    // An extent given by the program: x declared 40 KB long fits the constant pool.
    memplace::setExtent(x, 10000 * sizeof(float));
    memplace::setPlacement("saxpy", {{"x", Place::Constant}, {"y", Place::Global}});
    d.resetY();
    (void)saxpyRewritten(10000, 1.7f, x, y, 256, s);
    MPT_CHECK(cudaStreamSynchronize(s));
    {
        const memplace::LaunchReport rep = memplace::lastReport();
        const bool ok = rep.arrays[0].placed == Place::Constant &&
                        rep.arrays[0].extentBytes == 40000 && d.yIsWanted(10000);
        expect(ok, "setExtent makes x constant-feasible");
    }
    memplace::clearExtent(x);
    memplace::clearPlacements();
}

// ---- the placement as written ----------------------------------------------------------------

/// A kernel whose array the program kept on the read-only path runs there by default (the
/// default instantiation) and with MEMPLACE=off; a placement asked for replaces it.
void originalPlacementTests(cudaStream_t s) {
    const int n = 3000;
    const SaxpyData d(n, 11, s);
    struct Run {
        const char* what;
        bool setGlobal;
        Place expect;
        int instantiation;
    };
    for (const Run& run : {Run{"default", false, Place::ReadOnly, 0},
                           Run{"x=global asked for", true, Place::Global, 1}}) {
        memplace::clearPlacements();
        if (run.setGlobal) {
            memplace::setPlacement("saxpy_restrict", {{"x", Place::Global}});
        }
        d.resetY();
        const cudaError_t st = saxpyRestrictRewritten(n, 1.7f, d.x, d.y, 256, s);
        MPT_CHECK(cudaStreamSynchronize(s));
        const memplace::LaunchReport rep = memplace::lastReport();
        const bool ok = st == cudaSuccess && rep.arrays[0].placed == run.expect &&
                        rep.arrays[1].placed == Place::Global &&
                        rep.instantiation == run.instantiation && rep.dispatch == "specialized" &&
                        d.yIsWanted(n);
        expect(ok, std::string("as written: ") + run.what + ": x placed " +
                       std::string(memplace::placeName(rep.arrays[0].placed)) + ", instantiation " +
                       std::to_string(rep.instantiation));
        table << "| as written | saxpy, x `const __restrict__`, " << run.what << " | x "
              << memplace::placeName(rep.arrays[0].placed) << ", instantiation "
              << rep.instantiation << " | " << (ok ? "pass" : "FAIL") << " |\n";
    }
    memplace::clearPlacements();
}

// ---- the persisting L2 set-aside ---------------------------------------------------------------

/// An l2persist launch raises the set-aside to the window (here 16 KB: 1 MB asked), not
/// the device's maximum; the next launch that places nothing there puts it back (left raised,
/// or at the maximum, it made later kernels of a program up to 2.35x slower on an H100).
void setAsideRestoreTest(cudaStream_t s) {
    const int n = 4096;
    float *x = nullptr, *y = nullptr;
    MPT_CHECK(cudaMalloc(&x, n * sizeof(float)));
    MPT_CHECK(cudaMalloc(&y, n * sizeof(float)));
    MPT_CHECK(cudaMemset(x, 0, n * sizeof(float)));
    MPT_CHECK(cudaMemset(y, 0, n * sizeof(float)));
    // Start from no set-aside (a driver may give the context one: 9.4 MB on the H100s here), so
    // that the test sees the runtime's size and not the program's.
    std::size_t initial = 0, before = 0, during = 0, after = 0;
    MPT_CHECK(cudaDeviceGetLimit(&initial, cudaLimitPersistingL2CacheSize));
    MPT_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
    MPT_CHECK(cudaDeviceGetLimit(&before, cudaLimitPersistingL2CacheSize));
    memplace::setPlacement("saxpy", {{"x", Place::L2Persist}, {"y", Place::Global}});
    (void)saxpyRewritten(n, 1.0f, x, y, 256, s);
    MPT_CHECK(cudaStreamSynchronize(s));
    const bool persisted = memplace::lastReport().arrays[0].placed == Place::L2Persist;
    MPT_CHECK(cudaDeviceGetLimit(&during, cudaLimitPersistingL2CacheSize));
    memplace::clearPlacements();
    (void)saxpyRewritten(n, 1.0f, x, y, 256, s);
    MPT_CHECK(cudaStreamSynchronize(s));
    MPT_CHECK(cudaDeviceGetLimit(&after, cudaLimitPersistingL2CacheSize));
    // Sized to the window, not the maximum (the driver rounds the limit up to its granularity:
    // a tenth of the maximum, 3.125 MB, on the H100).
    int maxPersist = 0;
    MPT_CHECK(cudaDeviceGetAttribute(&maxPersist, cudaDevAttrMaxPersistingL2CacheSize, 0));
    const std::size_t window = n * sizeof(float);
    const bool ok = persisted && during >= window &&
                    during <= static_cast<std::size_t>(maxPersist) / 4 && after == before;
    expect(ok, "set-aside " + std::to_string(before) + " -> " + std::to_string(during) + " -> " +
                   std::to_string(after) + (persisted ? "" : " (l2persist fell back)"));
    table << "| persisting set-aside | x=l2persist (16 KB), then a launch without | " << before
          << " -> " << during << " -> " << after << " bytes | " << (ok ? "pass" : "FAIL") << " |\n";
    MPT_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, initial));
    MPT_CHECK(cudaFree(x));
    MPT_CHECK(cudaFree(y));
}

// ---- aliasing the analysis could not see ------------------------------------------------------

/// x and y are the same buffer (y = a*y + y): a place other than global for x would read memory
/// the kernel writes, so the runtime keeps it global and says why.
void aliasingTest(cudaStream_t s) {
    const int n = 5000;
    std::vector<float> hy(n);
    std::mt19937_64 g(5);
    for (float& v : hy) {
        v = randomFloat(g);
    }
    float *y = nullptr, *yref = nullptr;
    MPT_CHECK(cudaMalloc(&y, n * sizeof(float)));
    MPT_CHECK(cudaMalloc(&yref, n * sizeof(float)));
    h2d(yref, hy.data(), n * sizeof(float));
    saxpyOriginal(n, 1.7f, yref, yref, 256, s);
    std::vector<float> want(n);
    MPT_CHECK(cudaStreamSynchronize(s));
    MPT_CHECK(cudaMemcpy(want.data(), yref, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (Place px : {Place::Texture, Place::Constant, Place::Shared, Place::ReadOnly}) {
        memplace::setPlacement("saxpy", {{"x", px}, {"y", Place::Global}});
        h2d(y, hy.data(), n * sizeof(float));
        const cudaError_t st = saxpyRewritten(n, 1.7f, y, y, 256, s);
        MPT_CHECK(cudaStreamSynchronize(s));
        const memplace::LaunchReport rep = memplace::lastReport();
        std::vector<float> got(n);
        MPT_CHECK(cudaMemcpy(got.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
        const bool ok = st == cudaSuccess && rep.arrays[0].placed == Place::Global &&
                        rep.arrays[0].fallback.find("share memory with 'y'") != std::string::npos &&
                        std::memcmp(got.data(), want.data(), n * sizeof(float)) == 0;
        expect(ok, "aliasing: x=" + std::string(memplace::placeName(px)) + " with x == y -> " +
                       std::string(memplace::placeName(rep.arrays[0].placed)) + " (" +
                       rep.arrays[0].fallback + ")");
        table << "| aliasing | saxpy x == y, x=" << memplace::placeName(px) << " | "
              << rep.arrays[0].fallback << " | " << (ok ? "pass" : "FAIL") << " |\n";
    }
    memplace::clearPlacements();
    MPT_CHECK(cudaFree(y));
    MPT_CHECK(cudaFree(yref));
}

// ---- one constant pool, two streams --------------------------------------------------------

void constantPoolStreams() {
    const int n = 8192;
    cudaStream_t s1 = nullptr, s2 = nullptr;
    MPT_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    MPT_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    std::vector<float*> xs(2), ys(2), refs(2);
    std::mt19937_64 g(99);
    for (int k = 0; k < 2; ++k) {
        std::vector<float> hx(n), hy(n);
        for (int i = 0; i < n; ++i) {
            hx[i] = randomFloat(g);
            hy[i] = randomFloat(g);
        }
        MPT_CHECK(cudaMalloc(&xs[k], n * sizeof(float)));
        MPT_CHECK(cudaMalloc(&ys[k], n * sizeof(float)));
        MPT_CHECK(cudaMalloc(&refs[k], n * sizeof(float)));
        h2d(xs[k], hx.data(), n * sizeof(float));
        h2d(ys[k], hy.data(), n * sizeof(float));
        h2d(refs[k], hy.data(), n * sizeof(float));
        saxpyOriginal(n, 1.7f, xs[k], refs[k], 256, nullptr);
    }
    MPT_CHECK(cudaDeviceSynchronize());
    memplace::setPlacement("saxpy", {{"x", Place::Constant}, {"y", Place::Global}});
    for (int rep = 0; rep < 20; ++rep) {
        (void)saxpyRewritten(n, 1.7f, xs[0], ys[0], 256, s1);
        (void)saxpyRewritten(n, 1.7f, xs[1], ys[1], 256, s2);
    }
    MPT_CHECK(cudaDeviceSynchronize());
    memplace::clearPlacements();
    // ys[k] = ys[k] + 20 * 1.7 * x computed step by step; compare with 20 original launches.
    for (int k = 0; k < 2; ++k) {
        for (int rep = 1; rep < 20; ++rep) {
            saxpyOriginal(n, 1.7f, xs[k], refs[k], 256, nullptr);
        }
    }
    MPT_CHECK(cudaDeviceSynchronize());
    bool ok = true;
    for (int k = 0; k < 2; ++k) {
        std::vector<float> a(n), b(n);
        MPT_CHECK(cudaMemcpy(a.data(), ys[k], n * sizeof(float), cudaMemcpyDeviceToHost));
        MPT_CHECK(cudaMemcpy(b.data(), refs[k], n * sizeof(float), cudaMemcpyDeviceToHost));
        ok = ok && std::memcmp(a.data(), b.data(), n * sizeof(float)) == 0;
        MPT_CHECK(cudaFree(xs[k]));
        MPT_CHECK(cudaFree(ys[k]));
        MPT_CHECK(cudaFree(refs[k]));
    }
    expect(ok, "one constant pool used by launches on two streams (20 rounds)");
    table << "| constant pool, 2 streams | x=constant | 40 launches interleaved | "
          << (ok ? "pass" : "FAIL") << " |\n";
    MPT_CHECK(cudaStreamDestroy(s1));
    MPT_CHECK(cudaStreamDestroy(s2));
}

// ---- the policy hook -----------------------------------------------------------------------

struct TestPolicy : memplace::PlacementPolicy {
    int decides = 0;
    int tracedCalls = 0;
    std::size_t records = 0;
    int launchedCalls = 0;
    memplace::Decision decide(const memplace::LaunchInfo& info) override {
        memplace::Decision d;
        if (info.kernel != "saxpy") {
            return d;
        }
        ++decides;
        if (decides == 1) {
            d.kind = memplace::Decision::Kind::Trace;
            d.trace.sampleEvery = 2;
        } else {
            d.kind = memplace::Decision::Kind::Place;
            d.placement = {Place::Texture, Place::L2Persist};
        }
        return d;
    }
    void traced(const memplace::LaunchInfo&, memplace::TraceResult t) override {
        ++tracedCalls;
        records = t.records.size();
    }
    void launched(const memplace::LaunchInfo&, const memplace::LaunchReport&) override {
        ++launchedCalls;
    }
};

/// saxpy's x and y on the device, every byte set to `byte`.
void saxpyArrays(int n, int byte, float** x, float** y) {
    MPT_CHECK(cudaMalloc(x, n * sizeof(float)));
    MPT_CHECK(cudaMalloc(y, n * sizeof(float)));
    MPT_CHECK(cudaMemset(*x, byte, n * sizeof(float)));
    MPT_CHECK(cudaMemset(*y, byte, n * sizeof(float)));
    MPT_CHECK(cudaDeviceSynchronize());
}

void policyTest(cudaStream_t s) {
    const int n = 4096;
    float *x = nullptr, *y = nullptr;
    saxpyArrays(n, 0x3c, &x, &y);
    auto policy = std::make_shared<TestPolicy>();
    memplace::setPlacementPolicy(policy);
    (void)saxpyRewritten(n, 1.0f, x, y, 256, s);
    const memplace::LaunchReport r1 = memplace::lastReport();
    (void)saxpyRewritten(n, 1.0f, x, y, 256, s);
    MPT_CHECK(cudaStreamSynchronize(s));
    const memplace::LaunchReport r2 = memplace::lastReport();
    memplace::setPlacementPolicy(nullptr);
    // sampleEvery 2 over 16 blocks: 8 blocks x 8 warps x 3 sites.
    const bool ok = policy->tracedCalls == 1 && policy->records == 8 * 8 * 3 &&
                    policy->launchedCalls == 2 && r1.dispatch == "tracing" &&
                    r2.arrays[0].placed == Place::Texture &&
                    r2.arrays[1].placed == Place::L2Persist && r2.arrays[0].source == "policy" &&
                    memplace::takeTraces().empty();
    expect(ok, "PlacementPolicy: trace first, then place (records " +
                   std::to_string(policy->records) + ")");
    table << "| policy hook | trace, then texture/l2persist | " << policy->records
          << " records to traced() | " << (ok ? "pass" : "FAIL") << " |\n";
    MPT_CHECK(cudaFree(x));
    MPT_CHECK(cudaFree(y));
}

// ---- shadow launches -----------------------------------------------------------------------

/// Traces every saxpy launch with TraceOptions::Shadow::Require and keeps the traces.
struct ShadowPolicy : memplace::PlacementPolicy {
    std::vector<memplace::TraceResult> traces;
    memplace::Decision decide(const memplace::LaunchInfo& info) override {
        memplace::Decision d;
        if (info.kernel == "saxpy") {
            d.kind = memplace::Decision::Kind::Trace;
            d.trace.shadow = memplace::TraceOptions::Shadow::Require;
        }
        return d;
    }
    void traced(const memplace::LaunchInfo&, memplace::TraceResult t) override {
        traces.push_back(std::move(t));
    }
};

// A shadow launch (docs/placer.md, "First launch of a signature"): saxpy updates y in place; the
// traced run writes a scratch copy of y, the original instantiation y itself, so y is updated
// once, bitwise the original's; with x == y too. Launches that cannot be shadowed run untraced,
// saying why.
void shadowTests(cudaStream_t s) {
    const int n = 4096;
    const SaxpyData d(n, 11, s);
    auto policy = std::make_shared<ShadowPolicy>();
    memplace::setPlacementPolicy(policy);
    d.resetY();
    (void)saxpyRewritten(n, 1.7f, d.x, d.y, 256, s);
    MPT_CHECK(cudaStreamSynchronize(s));
    const memplace::LaunchReport r1 = memplace::lastReport();
    const bool shadowed = policy->traces.size() == 1 && policy->traces[0].shadowed &&
                          !policy->traces[0].outputsDiffer && !policy->traces[0].records.empty() &&
                          r1.dispatch == "tracing" && r1.notShadowed.empty() && d.yIsWanted(n);
    expect(shadowed, "shadow launch: traced, y updated once, outputs agree");
    table << "| shadow launch | saxpy y in place, Shadow::Require | traced, y the original's | "
          << (shadowed ? "pass" : "FAIL") << " |\n";
    // x and y one buffer: both point into one scratch copy, so the traced run reads its own
    // writes through x as the original does; the result is the untraced launch's.
    float* z = nullptr;
    MPT_CHECK(cudaMalloc(&z, d.bytes()));
    h2d(z, d.hy.data(), d.bytes());
    (void)saxpyRewritten(n, 1.7f, z, z, 256, s);
    MPT_CHECK(cudaStreamSynchronize(s));
    const memplace::LaunchReport r2 = memplace::lastReport();
    memplace::setPlacementPolicy(nullptr);
    d.resetY();
    (void)saxpyRewritten(n, 1.7f, d.y, d.y, 256, s);
    MPT_CHECK(cudaStreamSynchronize(s));
    memplace::setPlacementPolicy(policy);
    std::vector<float> traced(static_cast<std::size_t>(n));
    std::vector<float> untraced(static_cast<std::size_t>(n));
    MPT_CHECK(cudaMemcpy(traced.data(), z, d.bytes(), cudaMemcpyDeviceToHost));
    MPT_CHECK(cudaMemcpy(untraced.data(), d.y, d.bytes(), cudaMemcpyDeviceToHost));
    MPT_CHECK(cudaFree(z));
    const bool aliased = policy->traces.size() == 2 && policy->traces[1].shadowed &&
                         !policy->traces[1].outputsDiffer && r2.dispatch == "tracing" &&
                         std::memcmp(traced.data(), untraced.data(), d.bytes()) == 0;
    expect(aliased, "shadow launch with x == y: traced, outputs agree, the untraced result");
    table << "| shadow launch | saxpy x == y | traced, y the untraced launch's | "
          << (aliased ? "pass" : "FAIL") << " |\n";
#if defined(MEMPLACE_EMU) // a GPU cannot write the program's heap
    // y in memory the runtime cannot size (not allocated through CUDA): no scratch copy.
    std::vector<float> heap = d.hy;
    (void)saxpyRewritten(n, 1.7f, d.x, heap.data(), 256, s);
    MPT_CHECK(cudaStreamSynchronize(s));
    const memplace::LaunchReport r3 = memplace::lastReport();
    const bool unknown = policy->traces.size() == 2 && r3.dispatch != "tracing" &&
                         r3.notShadowed == "the extent of written array y is unknown" &&
                         std::memcmp(heap.data(), d.want.data(), heap.size() * sizeof(float)) == 0;
    expect(unknown, "no shadow launch for an unknown extent: untraced (" + r3.notShadowed + ")");
    table << "| shadow launch | saxpy y on the heap | untraced: " << r3.notShadowed << " | "
          << (unknown ? "pass" : "FAIL") << " |\n";
#endif
    memplace::setPlacementPolicy(nullptr);
}

// A timed launch with a busy-wait before it: the wait stays out of both timed intervals (the
// stream work and the kernel), and the launch still completes after it.
struct SpinPolicy : memplace::PlacementPolicy {
    double spinUs = 0;
    memplace::Decision decide(const memplace::LaunchInfo&) override {
        memplace::Decision d;
        d.kind = memplace::Decision::Kind::Place;
        d.placement = {Place::Constant, Place::Global}; // an upload: stream work to time
        d.time = true;
        d.spinUs = spinUs;
        return d;
    }
};

[[maybe_unused]] void spinTest(cudaStream_t s) {
    const int n = 1024;
    float *x = nullptr, *y = nullptr;
    saxpyArrays(n, 0, &x, &y);
    (void)memplace::takeKernelTimings(true);
    auto policy = std::make_shared<SpinPolicy>();
    policy->spinUs = 2000; // 2 ms: far above a 1024-element saxpy and its 4 KB upload
    memplace::setPlacementPolicy(policy);
    const auto t0 = std::chrono::steady_clock::now();
    (void)saxpyRewritten(n, 1.0f, x, y, 256, s);
    MPT_CHECK(cudaStreamSynchronize(s));
    const double wallMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const memplace::LaunchReport r = memplace::lastReport();
    memplace::setPlacementPolicy(nullptr);
    const std::vector<memplace::KernelTiming> ts = memplace::takeKernelTimings(true);
    const bool one = ts.size() == 1 && ts[0].ok;
    const double kernelMs = one ? ts[0].kernelMs : -1;
    const double streamMs = one ? ts[0].materialiseMs : -1;
    const bool ok = r.timed && one && r.arrays[0].placed == Place::Constant && kernelMs >= 0 &&
                    kernelMs < 0.5 && streamMs >= 0 && streamMs < 0.5 && wallMs >= 2.0;
    expect(ok, "a timed launch's busy-wait stays out of its timings (kernel " +
                   std::to_string(kernelMs) + " ms, stream work " + std::to_string(streamMs) +
                   " ms, wall " + std::to_string(wallMs) + " ms)");
    table << "| busy-wait before a timed launch | 2 ms asked, constant upload | kernel " << kernelMs
          << " ms, stream work " << streamMs << " ms, wall " << wallMs << " ms | "
          << (ok ? "pass" : "FAIL") << " |\n";
    MPT_CHECK(cudaFree(x));
    MPT_CHECK(cudaFree(y));
}

// A 2-D array whose rows are wider than the device's 2-D linear texture limit is not
// texture-feasible in what a policy sees (the texture would fall back to global); one within the
// limit is. Forced there anyway, it falls back and computes what the original does.
struct InfoPolicy : memplace::PlacementPolicy {
    std::vector<memplace::ArrayInfo> arrays;
    memplace::Decision decide(const memplace::LaunchInfo& info) override {
        if (info.kernel == "stencil2d") {
            arrays = info.arrays;
        }
        return {};
    }
};

void texture2DLimitTest(cudaStream_t s) {
    int maxWidth = 0;
    MPT_CHECK(cudaDeviceGetAttribute(&maxWidth, cudaDevAttrMaxTexture2DLinearWidth, 0));
    const struct {
        int w;
        bool fits;
    } shapes[] = {{128, true}, {maxWidth + 64, false}};
    for (const auto& shape : shapes) {
        std::unique_ptr<Case> c = makeStencilCase(shape.w, 2);
        c->setup(99);
        c->reset(s);
        c->runOriginal(s);
        MPT_CHECK(cudaStreamSynchronize(s));
        const auto ref = c->results();
        auto policy = std::make_shared<InfoPolicy>();
        memplace::setPlacementPolicy(policy);
        c->reset(s);
        (void)c->runRewritten(s);
        MPT_CHECK(cudaStreamSynchronize(s));
        memplace::setPlacementPolicy(nullptr);
        const bool seen = policy->arrays.size() == 2 && policy->arrays[0].dims == 2;
        const bool feasible = seen && policy->arrays[0].textureFeasible;
        memplace::setPlacement("stencil2d", {{"in", Place::Texture}, {"out", Place::Global}});
        c->reset(s);
        (void)c->runRewritten(s);
        MPT_CHECK(cudaStreamSynchronize(s));
        const memplace::LaunchReport rep = memplace::lastReport();
        memplace::clearPlacements();
        const bool placed = rep.arrays.size() == 2 && rep.arrays[0].placed == Place::Texture;
        const bool ok = seen && feasible == shape.fits && placed == shape.fits &&
                        c->results() == ref && cudaGetLastError() == cudaSuccess;
        const std::string shapeText = std::to_string(shape.w) + " x 2";
        expect(ok,
               "2-D texture limit: stencil2d " + shapeText + " texture-feasible " +
                   (feasible ? "yes" : "no") + ", forced: " +
                   (rep.arrays.empty() ? std::string("-")
                                       : std::string(memplace::placeName(rep.arrays[0].placed)) +
                                             " " + rep.arrays[0].fallback));
        table << "| 2-D texture limit (" << maxWidth << " wide) | stencil2d " << shapeText
              << " | texture-feasible " << (feasible ? "yes" : "no") << " | "
              << (ok ? "pass" : "FAIL") << " |\n";
        c->teardown();
    }
}

// ---- traces --------------------------------------------------------------------------------

const memplace::TraceResult* oneTrace(std::vector<memplace::TraceResult>& ts, const char* what) {
    expect(ts.size() == 1, std::string(what) + ": one trace collected");
    return ts.size() == 1 ? &ts[0] : nullptr;
}

unsigned fullMask(int lanes) {
    return lanes >= 32 ? 0xffffffffu : ((1u << lanes) - 1u);
}

void traceTests(cudaStream_t s) {
    using memplace::TraceRecord;
    // T1: stride-1 reads and writes (saxpy): one record per warp per site, 32 consecutive
    // offsets; the last block's warps are partial or absent.
    {
        const int n = 3990;
        std::vector<float> hx(n), hy(n);
        std::mt19937_64 g(5);
        for (int i = 0; i < n; ++i) {
            hx[i] = randomFloat(g);
            hy[i] = randomFloat(g);
        }
        float *x = nullptr, *y = nullptr, *yref = nullptr;
        MPT_CHECK(cudaMalloc(&x, n * sizeof(float)));
        MPT_CHECK(cudaMalloc(&y, n * sizeof(float)));
        MPT_CHECK(cudaMalloc(&yref, n * sizeof(float)));
        h2d(x, hx.data(), n * sizeof(float));
        h2d(y, hy.data(), n * sizeof(float));
        h2d(yref, hy.data(), n * sizeof(float));
        saxpyOriginal(n, 1.7f, x, yref, 256, s);
        memplace::traceLaunches(memplace::TraceOptions{});
        (void)saxpyRewritten(n, 1.7f, x, y, 256, s);
        MPT_CHECK(cudaStreamSynchronize(s));
        auto ts = memplace::takeTraces();
        if (const auto* t = oneTrace(ts, "T1")) {
            std::map<std::tuple<int, int, int>, int> seen;
            std::map<std::pair<int, int>, std::vector<int>> order;
            bool fields = true;
            for (const TraceRecord& r : t->records) {
                const int base = static_cast<int>(r.block) * 256 + r.warp * 32;
                const int lanes = std::min(32, n - base);
                fields = fields && r.site <= 2 && r.array == (r.site == 0 ? 0 : 1) &&
                         r.flags == (r.site == 2 ? memplace::kTraceWrite : memplace::kTraceRead) &&
                         r.activeMask == fullMask(lanes);
                for (int l = 0; l < 32 && fields; ++l) {
                    if ((r.activeMask >> l) & 1u) {
                        fields = r.offset[l] == base + l;
                    }
                }
                ++seen[{static_cast<int>(r.block), r.warp, static_cast<int>(r.site)}];
                order[{static_cast<int>(r.block), r.warp}].push_back(static_cast<int>(r.site));
            }
            bool once = seen.size() == 375;
            for (const auto& [k, v] : seen) {
                once = once && v == 1;
            }
            bool inOrder = true;
            for (const auto& [k, v] : order) {
                inOrder = inOrder && v == std::vector<int>{0, 1, 2};
            }
            std::vector<float> got(n), want(n);
            MPT_CHECK(cudaMemcpy(got.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
            MPT_CHECK(cudaMemcpy(want.data(), yref, n * sizeof(float), cudaMemcpyDeviceToHost));
            const bool result = std::memcmp(got.data(), want.data(), n * sizeof(float)) == 0;
            const bool ok = fields && once && inOrder && !t->overflow && t->produced == 375 &&
                            t->records.size() == 375 && result;
            expect(ok, "T1 stride-1: 375 records, one per warp per site, consecutive offsets, "
                       "program order, result unchanged (got " +
                           std::to_string(t->records.size()) + ")");
            table << "| trace T1 | saxpy stride-1, n=3990 | " << t->records.size()
                  << " records (375 expected) | " << (ok ? "pass" : "FAIL") << " |\n";
        }
        // T5: overflow is detected and reported, with the number dropped.
        memplace::TraceOptions small;
        small.maxRecords = 100;
        memplace::traceLaunches(small);
        (void)saxpyRewritten(n, 1.7f, x, y, 256, s);
        MPT_CHECK(cudaStreamSynchronize(s));
        ts = memplace::takeTraces();
        if (const auto* t = oneTrace(ts, "T5")) {
            const bool ok = t->overflow && t->produced == 375 && t->records.size() == 100 &&
                            t->dropped == 275 && !memplace::lastReport().errors.empty();
            expect(ok, "T5 overflow: 375 produced, 100 kept, 275 dropped, reported");
            table << "| trace T5 | overflow, capacity 100 | produced " << t->produced
                  << ", dropped " << t->dropped << " | " << (ok ? "pass" : "FAIL") << " |\n";
        }
        // T6: sampling: every 4th block, then a list of blocks.
        memplace::TraceOptions every4;
        every4.sampleEvery = 4;
        memplace::traceLaunches(every4);
        (void)saxpyRewritten(n, 1.7f, x, y, 256, s);
        memplace::TraceOptions list;
        list.blocks = {1, 5, 99};
        memplace::traceLaunches(list);
        (void)saxpyRewritten(n, 1.7f, x, y, 256, s);
        MPT_CHECK(cudaStreamSynchronize(s));
        ts = memplace::takeTraces();
        expect(ts.size() == 2, "T6: two traces");
        if (ts.size() == 2) {
            bool ok4 = ts[0].records.size() == 4 * 24 &&
                       ts[0].sampledBlocks == std::vector<uint32_t>{0, 4, 8, 12};
            for (const TraceRecord& r : ts[0].records) {
                ok4 = ok4 && r.block % 4 == 0;
            }
            bool okList = ts[1].records.size() == 2 * 24 &&
                          ts[1].sampledBlocks == std::vector<uint32_t>{1, 5};
            for (const TraceRecord& r : ts[1].records) {
                okList = okList && (r.block == 1 || r.block == 5);
            }
            expect(ok4 && okList, "T6 sampling: every 4th block; blocks {1,5}");
            table << "| trace T6 | sampling every 4th block; blocks {1,5,99} | "
                  << ts[0].records.size() << " and " << ts[1].records.size()
                  << " records (96, 48 expected) | " << (ok4 && okList ? "pass" : "FAIL") << " |\n";
        }
        MPT_CHECK(cudaFree(x));
        MPT_CHECK(cudaFree(y));
        MPT_CHECK(cudaFree(yref));
    }
    // T2: a warp-uniform read: one record per warp per iteration, 32 equal offsets.
    {
        const int n = 1000;
        const int iters = 3;
        const unsigned mask = 4095;
        float *coef = nullptr, *out = nullptr;
        MPT_CHECK(cudaMalloc(&coef, (mask + 1) * sizeof(float)));
        MPT_CHECK(cudaMalloc(&out, n * sizeof(float)));
        MPT_CHECK(cudaMemset(coef, 0x3c, (mask + 1) * sizeof(float)));
        MPT_CHECK(cudaDeviceSynchronize());
        memplace::traceLaunches(memplace::TraceOptions{});
        (void)uniformLookupRewritten(n, iters, mask, coef, out, s);
        MPT_CHECK(cudaStreamSynchronize(s));
        auto ts = memplace::takeTraces();
        if (const auto* t = oneTrace(ts, "T2")) {
            std::map<std::pair<int, int>, std::vector<long long>> reads;
            int writes = 0;
            bool fields = true;
            for (const TraceRecord& r : t->records) {
                const int base = static_cast<int>(r.block) * 256 + r.warp * 32;
                const int lanes = std::min(32, n - base);
                fields = fields && r.activeMask == fullMask(lanes);
                if (r.site == 0) {
                    const int first = __builtin_ctz(r.activeMask);
                    for (int l = 0; l < 32; ++l) {
                        if ((r.activeMask >> l) & 1u) {
                            fields = fields && r.offset[l] == r.offset[first];
                        }
                    }
                    reads[{static_cast<int>(r.block), r.warp}].push_back(r.offset[first]);
                } else {
                    ++writes;
                    fields = fields && r.site == 1 && r.flags == memplace::kTraceWrite;
                }
            }
            bool values = reads.size() == 32;
            for (const auto& [k, v] : reads) {
                const unsigned w = static_cast<unsigned>(k.first * 8 + k.second);
                std::vector<long long> want;
                for (int it = 0; it < iters; ++it) {
                    want.push_back((w + it * 97u) & mask);
                }
                values = values && v == want;
            }
            const bool ok = fields && values && writes == 32 && t->records.size() == 32 * 4;
            expect(ok, "T2 warp-uniform: one record per warp per lookup, 32 equal offsets");
            table << "| trace T2 | warp-uniform lookup, 3 per thread | " << t->records.size()
                  << " records (128 expected), equal offsets | " << (ok ? "pass" : "FAIL")
                  << " |\n";
        }
        MPT_CHECK(cudaFree(coef));
        MPT_CHECK(cudaFree(out));
    }
    // T3: a divergent branch: the two sides are separate records with complementary masks.
    {
        const int n = 256;
        float *a = nullptr, *out = nullptr;
        MPT_CHECK(cudaMalloc(&a, 2 * n * sizeof(float)));
        MPT_CHECK(cudaMalloc(&out, n * sizeof(float)));
        MPT_CHECK(cudaMemset(a, 0, 2 * n * sizeof(float)));
        MPT_CHECK(cudaDeviceSynchronize());
        memplace::traceLaunches(memplace::TraceOptions{});
        (void)divergeRewritten(n, a, out, s);
        MPT_CHECK(cudaStreamSynchronize(s));
        auto ts = memplace::takeTraces();
        if (const auto* t = oneTrace(ts, "T3")) {
            std::map<std::tuple<int, int, int>, int> seen;
            bool fields = true;
            for (const TraceRecord& r : t->records) {
                const int base = static_cast<int>(r.block) * 128 + r.warp * 32;
                const unsigned want = r.site == 0   ? 0x00000fffu
                                      : r.site == 1 ? 0xfffff000u
                                                    : 0xffffffffu;
                fields = fields && r.activeMask == want;
                for (int l = 0; l < 32; ++l) {
                    if ((r.activeMask >> l) & 1u) {
                        fields = fields && r.offset[l] == (r.site == 1 ? 2 * (base + l) : base + l);
                    }
                }
                ++seen[{static_cast<int>(r.block), r.warp, static_cast<int>(r.site)}];
            }
            bool once = seen.size() == 8 * 3;
            for (const auto& [k, v] : seen) {
                once = once && v == 1;
            }
            const bool ok = fields && once && t->records.size() == 24;
            expect(ok, "T3 divergence: sites 0 and 1 give separate records, masks 0xfff / "
                       "0xfffff000");
            table << "| trace T3 | divergent branch | " << t->records.size()
                  << " records (24 expected), masks 0x00000fff / 0xfffff000 | "
                  << (ok ? "pass" : "FAIL") << " |\n";
        }
        MPT_CHECK(cudaFree(a));
        MPT_CHECK(cudaFree(out));
    }
    // T4: atomics: `&hist[...]` is one read-write-atomic access at offset data[i] % bins.
    {
        const int n = 512;
        const int bins = 251;
        std::vector<unsigned> hd(n);
        std::mt19937_64 g(11);
        for (unsigned& v : hd) {
            v = static_cast<unsigned>(g());
        }
        unsigned *data = nullptr, *hist = nullptr;
        MPT_CHECK(cudaMalloc(&data, n * sizeof(unsigned)));
        MPT_CHECK(cudaMalloc(&hist, bins * sizeof(unsigned)));
        h2d(data, hd.data(), n * sizeof(unsigned));
        MPT_CHECK(cudaMemset(hist, 0, bins * sizeof(unsigned)));
        MPT_CHECK(cudaDeviceSynchronize());
        memplace::traceLaunches(memplace::TraceOptions{});
        (void)histogramRewritten(n, bins, data, hist, s);
        MPT_CHECK(cudaStreamSynchronize(s));
        auto ts = memplace::takeTraces();
        if (const auto* t = oneTrace(ts, "T4")) {
            bool fields = true;
            int atomics = 0;
            for (const TraceRecord& r : t->records) {
                const int base = static_cast<int>(r.block) * 256 + r.warp * 32;
                fields = fields && r.activeMask == 0xffffffffu;
                if (r.site == 1) {
                    ++atomics;
                    fields = fields && r.array == 1 &&
                             r.flags == (memplace::kTraceRead | memplace::kTraceWrite |
                                         memplace::kTraceAtomic);
                    for (int l = 0; l < 32; ++l) {
                        fields = fields && r.offset[l] == hd[base + l] % bins;
                    }
                } else {
                    fields = fields && r.site == 0 && r.flags == memplace::kTraceRead;
                }
            }
            std::vector<unsigned> hh(bins);
            MPT_CHECK(cudaMemcpy(hh.data(), hist, bins * sizeof(unsigned), cudaMemcpyDeviceToHost));
            std::vector<unsigned> want(bins, 0);
            for (unsigned v : hd) {
                ++want[v % bins];
            }
            const bool ok = fields && atomics == 16 && t->records.size() == 32 && hh == want;
            expect(ok, "T4 atomics: one read|write|atomic record per warp at data[i] % bins");
            table << "| trace T4 | histogram atomics | " << t->records.size()
                  << " records (32 expected), flags read|write|atomic | " << (ok ? "pass" : "FAIL")
                  << " |\n";
        }
        MPT_CHECK(cudaFree(data));
        MPT_CHECK(cudaFree(hist));
    }
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
    std::printf("device: %s (sm_%d%d, %d SMs), date %s\n", prop.name, prop.major, prop.minor,
                prop.multiProcessorCount, date);
    cudaStream_t s = nullptr;
    MPT_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    runCases(s);
    if (std::getenv("MPT_CASES") == nullptr) {
        table << "\n| test | configuration | observed | result |\n|---|---|---|---|\n";
        fallbackTests(s);
        originalPlacementTests(s);
        aliasingTest(s);
        setAsideRestoreTest(s);
        constantPoolStreams();
        policyTest(s);
        shadowTests(s);
        texture2DLimitTest(s);
#if !defined(MEMPLACE_EMU) // the CPU emulation layer has no GPU to keep busy
        spinTest(s);
#endif
        traceTests(s);
    }
    MPT_CHECK(cudaStreamDestroy(s));
    memplace::releaseResources();
    std::printf("\n%s\n", table.str().c_str());
    std::printf("device %s, %s: %d checks, %d failed\n", prop.name, date, checks, failures);
    if (argc > 1) {
        std::ofstream f(argv[1]);
        f << "device: " << prop.name << ", date " << date << "\n\n"
          << table.str() << "\n"
          << checks << " checks, " << failures << " failed\n";
    }
    return failures == 0 ? 0 : 1;
}

// The Placer on the hand-rewritten kernels of tests/runtime/kernels/, through the real runtime,
// under the CPU emulation layer (the emulated GPU is the built-in H100): the first launch of a
// signature is traced, later ones placed, a new signature is placed anew, outputs stay bitwise
// equal to the original kernel's, the report says what happened, decisions persist, threads.
#include "kernels/harness.h"
#include "placer/cache.h"
#include "placer/placer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <thread>

extern "C" int memplace_placer_autoinstall;

namespace memplace::placer {
namespace {

namespace fs = std::filesystem;
using mptest::randomFloat;

/// The first launch of a signature traced (MEMPLACE_TRACE_AFTER=0), as these tests check the
/// trace's outcome from the first launch on; the default's tests set traceAfter themselves.
Options testOptions() {
    Options o;
    o.mode = PlacerMode::Auto;
    o.quiet = true;
    o.specDir.clear();
    o.traceAfter = 0;
    return o;
}

fs::path tempDir(const std::string& name) {
    std::random_device rd;
    fs::path d =
        fs::temp_directory_path() / ("memplace-placer-" + name + "-" + std::to_string(rd()));
    fs::create_directories(d);
    return d;
}

template <class T>
T* deviceArray(const std::vector<T>& host) {
    T* d = nullptr;
    EXPECT_EQ(cudaMalloc(&d, host.size() * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
              cudaSuccess);
    return d;
}

template <class T>
std::vector<T> hostArray(const T* d, std::size_t n) {
    std::vector<T> h(n);
    EXPECT_EQ(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
}

/// A table lookup (warp-uniform or scattered) with its own buffers and the original's output.
class Lookup {
public:
    Lookup(bool uniform, int n, int iters, unsigned mask, uint64_t seed = 1)
        : uniform_(uniform), n_(n), iters_(iters), mask_(mask) {
        std::mt19937_64 g(seed);
        std::vector<float> t(mask + 1);
        for (float& v : t) {
            v = randomFloat(g);
        }
        table_ = deviceArray(t);
        EXPECT_EQ(cudaMalloc(&out_, n * sizeof(float)), cudaSuccess);
        EXPECT_EQ(cudaMemset(out_, 0xff, n * sizeof(float)), cudaSuccess);
        if (uniform_) {
            mptest::uniformLookupOriginal(n_, iters_, mask_, table_, out_, nullptr);
        } else {
            mptest::scatteredLookupOriginal(n_, iters_, mask_, table_, out_, nullptr);
        }
        EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        ref_ = hostArray(out_, static_cast<std::size_t>(n_));
    }
    ~Lookup() {
        (void)cudaFree(table_);
        (void)cudaFree(out_);
    }
    Lookup(const Lookup&) = delete;
    Lookup& operator=(const Lookup&) = delete;

    /// Runs the rewritten kernel (output poisoned first); true when it equals the original.
    bool run(LaunchReport* report = nullptr, cudaStream_t s = nullptr) {
        const cudaError_t e = enqueue(s);
        if (report != nullptr) {
            *report = lastReport();
        }
        EXPECT_EQ(e, cudaSuccess);
        EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
        return matches();
    }
    /// Poisons the output and queues the rewritten kernel on `s`, without synchronising.
    cudaError_t enqueue(cudaStream_t s) {
        EXPECT_EQ(cudaMemsetAsync(out_, 0xff, n_ * sizeof(float), s), cudaSuccess);
        return uniform_ ? mptest::uniformLookupRewritten(n_, iters_, mask_, table_, out_, s)
                        : mptest::scatteredLookupRewritten(n_, iters_, mask_, table_, out_, s);
    }
    /// The output equals the original's (after the stream it was queued on finished).
    bool matches() { return hostArray(out_, static_cast<std::size_t>(n_)) == ref_; }

private:
    bool uniform_;
    int n_;
    int iters_;
    unsigned mask_;
    float* table_ = nullptr;
    float* out_ = nullptr;
    std::vector<float> ref_;
};

/// saxpy on its own buffers, with the original applied as often to a reference copy.
class Saxpy {
public:
    explicit Saxpy(int n, uint64_t seed = 2) : n_(n) {
        std::mt19937_64 g(seed);
        std::vector<float> x(n), y(n);
        for (int i = 0; i < n; ++i) {
            x[i] = randomFloat(g);
            y[i] = randomFloat(g);
        }
        x_ = deviceArray(x);
        y_ = deviceArray(y);
        yref_ = deviceArray(y);
    }
    ~Saxpy() {
        (void)cudaFree(x_);
        (void)cudaFree(y_);
        (void)cudaFree(yref_);
    }
    Saxpy(const Saxpy&) = delete;
    Saxpy& operator=(const Saxpy&) = delete;
    bool run(LaunchReport* report = nullptr, cudaStream_t s = nullptr) {
        const cudaError_t e = mptest::saxpyRewritten(n_, 1.7f, x_, y_, 256, s);
        if (report != nullptr) {
            *report = lastReport();
        }
        mptest::saxpyOriginal(n_, 1.7f, x_, yref_, 256, s);
        EXPECT_EQ(e, cudaSuccess);
        EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
        return matches();
    }
    /// Queues the rewritten kernel and the original (on the reference copy) on `s`.
    cudaError_t enqueue(cudaStream_t s) {
        const cudaError_t e = mptest::saxpyRewritten(n_, 1.7f, x_, y_, 256, s);
        mptest::saxpyOriginal(n_, 1.7f, x_, yref_, 256, s);
        return e;
    }
    bool matches() {
        return hostArray(y_, static_cast<std::size_t>(n_)) ==
               hostArray(yref_, static_cast<std::size_t>(n_));
    }

private:
    int n_;
    float* x_ = nullptr;
    float* y_ = nullptr;
    float* yref_ = nullptr;
};

class PlacerTest : public ::testing::Test {
protected:
    void SetUp() override {
        clearPlacements();
        setDispatchMode(DispatchMode::Auto);
    }
    void TearDown() override {
        uninstall();
        clearPlacements();
        setKernelTiming(false);
    }
};

TEST_F(PlacerTest, LinkingTheLibraryInstalledIt) {
    // ctest runs this program with MEMPLACE unset: the static initialiser installed a Placer.
    if (std::getenv("MEMPLACE") == nullptr) {
        EXPECT_EQ(memplace_placer_autoinstall, 1);
    }
}

TEST_F(PlacerTest, ScatteredLookupTracedThenSharedThenANewSignatureAnew) {
    auto placer = install(testOptions());
    Lookup a(false, 1 << 15, 64, 4095); // 16 KB table, every block reads it 16 K times
    LaunchReport r;
    ASSERT_TRUE(a.run(&r));
    EXPECT_EQ(r.dispatch, "tracing");
    for (int k = 0; k < 3; ++k) {
        ASSERT_TRUE(a.run(&r)) << "launch " << k + 2;
        EXPECT_EQ(r.dispatch, "specialized");
        EXPECT_EQ(r.arrays[0].placed, Place::Shared) << r.arrays[0].fallback;
        EXPECT_EQ(r.arrays[0].source, "policy");
        EXPECT_EQ(r.arrays[1].placed, Place::Global);
    }
    auto ks = placer->kernels();
    ASSERT_EQ(ks.size(), 1u);
    const KernelRecord& k = ks[0];
    EXPECT_EQ(k.kernel, "scattered_lookup");
    EXPECT_EQ(k.status, RecordStatus::Placed);
    EXPECT_EQ(k.source, RecordSource::Trace);
    EXPECT_EQ(k.decision, (Placement{Place::Shared, Place::Global}));
    EXPECT_TRUE(k.compiled);
    EXPECT_EQ(k.dispatch, Dispatch::Specialized);
    EXPECT_EQ(k.launches, 4u);
    EXPECT_EQ(k.tracedLaunches, 1u);
    EXPECT_EQ(k.placedLaunches, 3u);
    EXPECT_LT(k.predictedSeconds, k.originalSeconds);
    EXPECT_EQ(k.blocks, 128u);
    EXPECT_EQ(k.sampledBlocks, 2u); // blocks 0 and 1: one per traced SM (128 blocks, 132 SMs)
    EXPECT_EQ(k.records, 2u * 8 * 65);
    EXPECT_GT(k.overheads.engineMs, 0);
    EXPECT_GE(k.overheads.profilingMs, 0);
    EXPECT_EQ(k.specName, "h100"); // from the emulated device's name
    // A new signature (another grid and extent) is traced and placed anew.
    Lookup b(false, 1 << 14, 64, 4095);
    ASSERT_TRUE(b.run(&r));
    EXPECT_EQ(r.dispatch, "tracing");
    ASSERT_TRUE(b.run(&r));
    EXPECT_EQ(r.arrays[0].placed, Place::Shared);
    // The first signature keeps its decision.
    ASSERT_TRUE(a.run(&r));
    EXPECT_EQ(r.arrays[0].placed, Place::Shared);
    ks = placer->kernels();
    ASSERT_EQ(ks.size(), 2u);
    EXPECT_EQ(ks[1].tracedLaunches, 1u);
    EXPECT_NE(ks[0].key, ks[1].key);
}

TEST_F(PlacerTest, WarpUniformTableGoesToConstantOrGlobal) {
    // A 16 KB table read warp-uniformly: constant (broadcast) or global (L1 hits); never
    // texture, and not shared, whose staging buys nothing here (measured on an H100: global
    // 0.159 ms, shared 0.170, constant 0.85; docs/eval/logs/runtime-places.md, decision 014).
    auto placer = install(testOptions());
    Lookup u(true, 1 << 15, 32, 4095);
    LaunchReport r;
    ASSERT_TRUE(u.run(&r));
    EXPECT_EQ(r.dispatch, "tracing");
    ASSERT_TRUE(u.run(&r));
    ASSERT_TRUE(u.run(&r));
    const Place p = r.arrays[0].placed;
    EXPECT_TRUE(p == Place::Constant || p == Place::Global || p == Place::ReadOnly) << placeName(p);
    auto ks = placer->kernels();
    ASSERT_EQ(ks.size(), 1u);
    std::printf("uniform lookup, 16 KB table: table=%s (%s)\n",
                std::string(placeName(ks[0].decision[0])).c_str(), ks[0].why.c_str());
    // A 1 KB table: the model may also take shared (on the H100 shared measured fastest there:
    // 0.145 ms against global 0.159 and constant 0.154); never texture.
    Lookup v(true, 1 << 15, 32, 255);
    ASSERT_TRUE(v.run(&r));
    ASSERT_TRUE(v.run(&r));
    ASSERT_TRUE(v.run(&r));
    EXPECT_NE(r.arrays[0].placed, Place::Texture);
    ks = placer->kernels();
    ASSERT_EQ(ks.size(), 2u);
    std::printf("uniform lookup, 1 KB table: table=%s (%s)\n",
                std::string(placeName(ks[1].decision[0])).c_str(), ks[1].why.c_str());
}

TEST_F(PlacerTest, StreamingStaysOriginalAndResultsMatchEveryLaunch) {
    auto placer = install(testOptions());
    Saxpy s(1 << 16);
    LaunchReport r;
    ASSERT_TRUE(s.run(&r));
    EXPECT_EQ(r.dispatch, "tracing");
    for (int k = 0; k < 3; ++k) {
        ASSERT_TRUE(s.run(&r));
        EXPECT_EQ(r.dispatch, "specialized");
        EXPECT_EQ(r.instantiation, 0); // the original placement
    }
    const auto ks = placer->kernels();
    ASSERT_EQ(ks.size(), 1u);
    EXPECT_EQ(ks[0].status, RecordStatus::Original);
    EXPECT_EQ(ks[0].decision, (Placement{Place::Global, Place::Global}));
    EXPECT_EQ(ks[0].originalLaunches, 3u);
}

TEST_F(PlacerTest, EveryHandRewrittenKernelStaysBitwiseEqual) {
    auto placer = install(testOptions());
    uint64_t seed = 77;
    for (auto& make : mptest::registry()) {
        std::unique_ptr<mptest::Case> c = make();
        c->setup(seed++);
        c->reset(nullptr);
        c->runOriginal(nullptr);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        const auto ref = c->results();
        for (int k = 0; k < 3; ++k) {
            c->reset(nullptr);
            ASSERT_EQ(c->runRewritten(nullptr), cudaSuccess);
            ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
            const LaunchReport r = lastReport();
            EXPECT_EQ(c->results(), ref)
                << c->name() << " launch " << k + 1 << " (" << r.dispatch << ")";
            if (k == 0) {
                EXPECT_EQ(r.dispatch, "tracing") << c->name();
            } else {
                EXPECT_NE(r.dispatch, "tracing") << c->name();
                EXPECT_TRUE(r.errors.empty()) << c->name() << ": " << r.errors.front();
            }
        }
        c->teardown();
    }
    for (const KernelRecord& k : placer->kernels()) {
        EXPECT_NE(k.status, RecordStatus::Failed) << k.kernel << ": " << k.failure;
        EXPECT_NE(k.status, RecordStatus::Pending) << k.kernel;
        std::string d;
        for (std::size_t i = 0; i < k.decision.size(); ++i) {
            d += " " + k.arrays[i] + "=" + std::string(placeName(k.decision[i]));
        }
        std::printf("%-18s %-9s%s (%s)\n", k.kernel.c_str(),
                    std::string(stateName(k.status)).c_str(), d.c_str(), k.why.c_str());
        // Atomics stay global (or l2persist).
        if (k.kernel == "histogram") {
            EXPECT_TRUE(k.decision[1] == Place::Global || k.decision[1] == Place::L2Persist);
        }
    }
}

TEST_F(PlacerTest, ReportHasTheDecisionPredictionsAndOverheads) {
    Options o = testOptions();
    o.timeKernels = true;
    const fs::path dir = tempDir("report");
    o.reportPath = (dir / "report.json").string();
    auto placer = install(o);
    Lookup a(false, 1 << 15, 64, 4095);
    for (int k = 0; k < 6; ++k) {
        ASSERT_TRUE(a.run());
    }
    const auto j = nlohmann::json::parse(placer->reportJson());
    EXPECT_EQ(j["format"], "memplace-placer-report");
    EXPECT_EQ(j["mode"], "auto");
    EXPECT_EQ(j["emulated"], true);
    ASSERT_EQ(j["devices"].size(), 1u);
    EXPECT_EQ(j["devices"][0]["spec"]["from"], "h100");
    EXPECT_EQ(j["devices"][0]["spec"]["source"], "built-in");
    ASSERT_EQ(j["kernels"].size(), 1u);
    const auto& k = j["kernels"][0];
    EXPECT_EQ(k["kernel"], "scattered_lookup");
    EXPECT_EQ(k["signature"]["grid"], nlohmann::json({128, 1, 1}));
    EXPECT_EQ(k["signature"]["block"], nlohmann::json({256, 1, 1}));
    EXPECT_EQ(k["signature"]["arrays"][0]["name"], "table");
    EXPECT_EQ(k["signature"]["arrays"][0]["extent_bytes"], 16384);
    EXPECT_EQ(k["status"], "placed");
    EXPECT_EQ(k["decision"]["table"], "shared");
    EXPECT_EQ(k["decision"]["out"], "global");
    EXPECT_EQ(k["dispatch"], "specialized");
    EXPECT_EQ(k["compiled"], true);
    // No NVRTC under the CPU emulation layer: nothing asked for just in time, and why.
    EXPECT_TRUE(k["jit"]["placement"].is_null());
    EXPECT_TRUE(k["jit"]["state"].is_null());
    EXPECT_NE(k["jit"]["why"].get<std::string>().find("no NVRTC"), std::string::npos)
        << k["jit"]["why"];
    EXPECT_EQ(k["overhead_ms"]["detail"]["transform_jit"], 0.0);
    EXPECT_GT(k["predicted"]["original_us"].get<double>(),
              k["predicted"]["decision_us"].get<double>());
    EXPECT_GT(k["predicted"]["speedup"].get<double>(), 1.0);
    // With MEMPLACE_TIME=1 the two launches after the trace run the original, measured.
    EXPECT_EQ(k["launches"]["traced"], 1);
    EXPECT_EQ(k["launches"]["original"], 2);
    EXPECT_EQ(k["launches"]["placed"], 3);
    EXPECT_TRUE(k["measured"]["original_ms"].is_number());
    EXPECT_TRUE(k["measured"]["placed_ms"].is_number());
    EXPECT_EQ(k["measured"]["placed_samples"], 3);
    const auto& oh = k["overhead_ms"];
    EXPECT_GT(oh["engine"].get<double>(), 0);
    EXPECT_GE(oh["profiling"].get<double>(), 0);
    EXPECT_GE(oh["transform"].get<double>(), 0);
    EXPECT_TRUE(oh["detail"]["traced_kernel"].is_number());
    EXPECT_NEAR(oh["total"].get<double>(),
                oh["profiling"].get<double>() + oh["engine"].get<double>() +
                    oh["transform"].get<double>(),
                1e-9);
    EXPECT_GT(k["trace"]["records"].get<int>(), 0);
    // Written on demand, and when uninstalled.
    std::string err;
    ASSERT_TRUE(placer->writeReport((dir / "now.json").string(), &err)) << err;
    EXPECT_EQ(nlohmann::json::parse(std::ifstream(dir / "now.json"))["kernels"].size(), 1u);
    uninstall();
    EXPECT_TRUE(fs::exists(o.reportPath));
    fs::remove_all(dir);
}

TEST_F(PlacerTest, DecisionsPersistAndACorruptCacheIsIgnored) {
    const fs::path dir = tempDir("persist");
    Options o = testOptions();
    o.cacheDir = dir.string();
    {
        install(o);
        Lookup a(false, 1 << 15, 64, 4095);
        LaunchReport r;
        ASSERT_TRUE(a.run(&r));
        EXPECT_EQ(r.dispatch, "tracing");
        ASSERT_TRUE(a.run(&r));
        EXPECT_EQ(r.arrays[0].placed, Place::Shared);
        uninstall();
    }
    // A new Placer (as a new run of the program would have): placed from the first launch.
    fs::path file;
    {
        auto placer = install(o);
        Lookup a(false, 1 << 15, 64, 4095, 9);
        LaunchReport r;
        ASSERT_TRUE(a.run(&r));
        EXPECT_EQ(r.dispatch, "specialized");
        EXPECT_EQ(r.arrays[0].placed, Place::Shared);
        const auto ks = placer->kernels();
        ASSERT_EQ(ks.size(), 1u);
        EXPECT_EQ(ks[0].source, RecordSource::Cache);
        EXPECT_EQ(ks[0].tracedLaunches, 0u);
        EXPECT_TRUE(placer->warnings().empty());
        const auto j = nlohmann::json::parse(placer->reportJson());
        file = j["devices"][0]["cache_file"].get<std::string>();
        uninstall();
    }
    ASSERT_TRUE(fs::exists(file));
    // Corrupt it: a warning, ignored, the signature traced again and the file rewritten.
    {
        std::ofstream(file) << "{\"format\": \"memplace-placer-cache\", \"version\": 1, \"bin";
        auto placer = install(o);
        Lookup a(false, 1 << 15, 64, 4095);
        LaunchReport r;
        ASSERT_TRUE(a.run(&r));
        EXPECT_EQ(r.dispatch, "tracing");
        ASSERT_TRUE(a.run(&r));
        EXPECT_EQ(r.arrays[0].placed, Place::Shared);
        const auto w = placer->warnings();
        ASSERT_EQ(w.size(), 1u);
        EXPECT_NE(w[0].find("corrupt"), std::string::npos);
        EXPECT_NE(w[0].find("ignored"), std::string::npos);
        uninstall();
    }
    {
        auto placer = install(o);
        Lookup a(false, 1 << 15, 64, 4095);
        LaunchReport r;
        ASSERT_TRUE(a.run(&r));
        EXPECT_EQ(r.dispatch, "specialized"); // the rewritten file is valid again
        EXPECT_TRUE(placer->warnings().empty());
        uninstall();
    }
    // Corrupt with bytes that are not UTF-8: the warning quotes them, and the report (which
    // used to abort the program with nlohmann's type_error) replaces them.
    {
        std::ofstream(file) << "{\"format\": \"memplace-placer-cache\xe9\xff";
        o.reportPath = (dir / "report.json").string();
        auto placer = install(o);
        Lookup a(false, 1 << 15, 64, 4095);
        LaunchReport r;
        ASSERT_TRUE(a.run(&r));
        ASSERT_EQ(placer->warnings().size(), 1u);
        std::string report;
        ASSERT_NO_THROW(report = placer->reportJson());
        EXPECT_NO_THROW((void)nlohmann::json::parse(report));
        EXPECT_NE(report.find("\xef\xbf\xbd"), std::string::npos); // U+FFFD
        uninstall();                                               // writes the report
        EXPECT_NO_THROW((void)nlohmann::json::parse(std::ifstream(o.reportPath)));
    }
    fs::remove_all(dir);
}

TEST_F(PlacerTest, TheReportGoesThroughLinksAndDevicesWithoutReplacingThem) {
    // MEMPLACE_REPORT naming a symbolic link or a device: the atomic write used to rename its
    // temporary file over either (a device node became a regular file).
    const fs::path dir = tempDir("report-paths");
    const fs::path real = dir / "real.json";
    const fs::path link = dir / "report.json";
    fs::create_symlink(real, link);
    fs::path device = dir / "null";
    if (::mknod(device.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0) {
        device.clear(); // not root: the link case only
    }
    for (const fs::path& path : {link, device}) {
        if (path.empty()) {
            continue;
        }
        Options o = testOptions();
        o.reportPath = path.string();
        install(o);
        Lookup a(false, 1 << 15, 64, 4095);
        LaunchReport r;
        ASSERT_TRUE(a.run(&r));
        uninstall(); // writes the report
    }
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
    EXPECT_EQ(nlohmann::json::parse(std::ifstream(real))["kernels"].size(), 1u);
    if (!device.empty()) {
        EXPECT_TRUE(fs::is_character_file(fs::symlink_status(device)));
    }
    fs::remove_all(dir);
}

TEST_F(PlacerTest, TraceModeTracesEveryLaunchAndChangesNothing) {
    Options o = testOptions();
    o.mode = PlacerMode::Trace;
    const fs::path dir = tempDir("traces");
    o.traceDir = dir.string();
    auto placer = install(o);
    Lookup a(false, 1 << 14, 64, 4095);
    LaunchReport r;
    for (int k = 0; k < 3; ++k) {
        ASSERT_TRUE(a.run(&r));
        EXPECT_EQ(r.dispatch, "tracing");
    }
    const auto ks = placer->kernels();
    ASSERT_EQ(ks.size(), 1u);
    EXPECT_EQ(ks[0].status, RecordStatus::Observed);
    EXPECT_EQ(ks[0].tracedLaunches, 3u);
    EXPECT_EQ(ks[0].placedLaunches, 0u);
    EXPECT_EQ(ks[0].decision[0], Place::Shared); // what auto would do
    int files = 0;
    for (const auto& f : fs::directory_iterator(dir)) {
        EXPECT_EQ(f.path().extension(), ".trace");
        ++files;
    }
    EXPECT_EQ(files, 3);
    fs::remove_all(dir);
}

TEST_F(PlacerTest, OffAndForceLeaveTheDefault) {
    Options o = testOptions();
    o.mode = PlacerMode::Off;
    EXPECT_EQ(install(o), nullptr);
    EXPECT_EQ(installed(), nullptr);
    Lookup a(false, 1 << 13, 16, 4095);
    LaunchReport r;
    ASSERT_TRUE(a.run(&r));
    EXPECT_EQ(r.dispatch, "specialized");
    EXPECT_EQ(r.instantiation, 0);
    EXPECT_EQ(r.arrays[0].source, "default");
    // The API's forced places win over the Placer's, array by array.
    install(testOptions());
    setPlacement("scattered_lookup", {{"table", Place::Texture}});
    ASSERT_TRUE(a.run(&r));
    EXPECT_EQ(r.dispatch, "tracing"); // traced launches run every array global
    ASSERT_TRUE(a.run(&r));
    EXPECT_EQ(r.arrays[0].placed, Place::Texture);
    EXPECT_EQ(r.arrays[0].source, "api");
}

TEST_F(PlacerTest, OverflowTracesAgainWithFewerBlocks) {
    Options o = testOptions();
    o.sampling.maxRecords = 500; // a block of the lookup writes 520 records
    auto placer = install(o);
    Lookup a(false, 1 << 16, 64, 4095); // 256 blocks: whole-SM sampling
    LaunchReport r;
    ASSERT_TRUE(a.run(&r));
    EXPECT_EQ(r.dispatch, "tracing");
    ASSERT_TRUE(a.run(&r));
    EXPECT_EQ(r.dispatch, "tracing"); // overflowed: traced again with one SM, one block
    ASSERT_TRUE(a.run(&r));
    ASSERT_TRUE(a.run(&r));
    EXPECT_NE(r.dispatch, "tracing");
    const auto ks = placer->kernels();
    ASSERT_EQ(ks.size(), 1u);
    EXPECT_EQ(ks[0].traceAttempts, 3); // the third is taken truncated
    EXPECT_TRUE(ks[0].truncated);
    EXPECT_EQ(ks[0].tracedLaunches, 3u);
    EXPECT_NE(ks[0].status, RecordStatus::Failed);
    bool noted = false;
    for (const std::string& n : ks[0].notes) {
        noted = noted || n.find("overflowed") != std::string::npos;
    }
    EXPECT_TRUE(noted);
}

TEST_F(PlacerTest, ConcurrentHostThreads) {
    auto placer = install(testOptions());
    constexpr int kThreads = 4;
    std::vector<int> failures(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([t, &failures] {
            cudaStream_t s = nullptr;
            if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
                ++failures[t];
                return;
            }
            // Two signatures of each kernel, shared by two threads each.
            Lookup a(false, (t % 2) != 0 ? 1 << 13 : 1 << 14, 32, 4095, static_cast<uint64_t>(t));
            Saxpy x((t % 2) != 0 ? 5000 : 7000, static_cast<uint64_t>(100 + t));
            for (int k = 0; k < 5; ++k) {
                failures[t] += a.run(nullptr, s) ? 0 : 1;
                failures[t] += x.run(nullptr, s) ? 0 : 1;
            }
            (void)cudaStreamDestroy(s);
        });
    }
    for (std::thread& th : threads) {
        th.join();
    }
    for (int t = 0; t < kThreads; ++t) {
        EXPECT_EQ(failures[t], 0) << "thread " << t;
    }
    const auto ks = placer->kernels();
    ASSERT_EQ(ks.size(), 4u);
    for (const KernelRecord& k : ks) {
        EXPECT_EQ(k.tracedLaunches, 1u) << k.signature; // each signature traced once
        EXPECT_EQ(k.launches, 10u) << k.signature;
        EXPECT_NE(k.status, RecordStatus::Failed);
    }
}

TEST_F(PlacerTest, ConcurrentThreadsEachQueueOnTwoStreamsWithoutSynchronising) {
    // Issue 7 item 5: three host threads, each queueing launches on two streams of its own and
    // synchronising only at the end of a round. Every signature is shared by the three threads,
    // so its first launches race: one is traced, the others wait for its decision or take it.
    // The scattered table goes to shared memory, the warp-uniform one to constant or global
    // (one constant pool for every stream). Every output is bitwise the original kernel's.
    auto placer = install(testOptions());
    constexpr int kThreads = 3;
    constexpr int kStreams = 2;
    constexpr int kRounds = 4;
    std::vector<int> failures(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([t, &failures] {
            std::vector<cudaStream_t> s(kStreams, nullptr);
            std::vector<std::unique_ptr<Lookup>> scattered;
            std::vector<std::unique_ptr<Lookup>> uniform;
            std::vector<std::unique_ptr<Saxpy>> saxpy;
            for (int k = 0; k < kStreams; ++k) {
                if (cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking) != cudaSuccess) {
                    ++failures[t];
                    return;
                }
                // Stream k of every thread has the same sizes: one signature per (kernel, k).
                const auto seed = static_cast<uint64_t>(10 * t + k);
                scattered.push_back(std::make_unique<Lookup>(false, 1 << (12 + k), 32, 4095, seed));
                uniform.push_back(std::make_unique<Lookup>(true, 1 << (12 + k), 16, 1023, seed));
                saxpy.push_back(std::make_unique<Saxpy>(3000 + 1000 * k, 200 + seed));
            }
            for (int round = 0; round < kRounds; ++round) {
                for (int k = 0; k < kStreams; ++k) {
                    failures[t] += scattered[k]->enqueue(s[k]) == cudaSuccess ? 0 : 1;
                    failures[t] += uniform[k]->enqueue(s[k]) == cudaSuccess ? 0 : 1;
                    failures[t] += saxpy[k]->enqueue(s[k]) == cudaSuccess ? 0 : 1;
                }
                for (int k = 0; k < kStreams; ++k) {
                    failures[t] += cudaStreamSynchronize(s[k]) == cudaSuccess ? 0 : 1;
                    // The lookups' outputs are rewritten every launch: check each round.
                    failures[t] += scattered[k]->matches() ? 0 : 1;
                    failures[t] += uniform[k]->matches() ? 0 : 1;
                    failures[t] += saxpy[k]->matches() ? 0 : 1;
                }
            }
            for (cudaStream_t x : s) {
                (void)cudaStreamDestroy(x);
            }
        });
    }
    for (std::thread& th : threads) {
        th.join();
    }
    for (int t = 0; t < kThreads; ++t) {
        EXPECT_EQ(failures[t], 0) << "thread " << t;
    }
    const auto ks = placer->kernels();
    ASSERT_EQ(ks.size(), 3u * kStreams); // three kernels, one signature per stream index
    bool sharedPlaced = false;
    for (const KernelRecord& k : ks) {
        EXPECT_EQ(k.tracedLaunches, 1u) << k.signature;
        EXPECT_EQ(k.launches, static_cast<uint64_t>(kThreads * kRounds)) << k.signature;
        EXPECT_TRUE(k.status == RecordStatus::Placed || k.status == RecordStatus::Original)
            << k.signature;
        EXPECT_EQ(k.placedLaunches + k.originalLaunches + k.tracedLaunches, k.launches);
        if (k.kernel == "scattered_lookup" && k.status == RecordStatus::Placed) {
            EXPECT_EQ(k.decision[0], Place::Shared) << k.signature;
            EXPECT_EQ(k.placedLaunches, static_cast<uint64_t>(kThreads * kRounds - 1));
            sharedPlaced = true;
        }
    }
    EXPECT_TRUE(sharedPlaced);
}

// ---- what the first run costs ---------------------------------------------------------------

/// The scattered lookup on buffers allocated once for `capacity` elements, launched over the
/// first n of them: a grid of n / 256 blocks while the arrays' extents (their allocations) stay.
class GridLookup {
public:
    explicit GridLookup(int capacity, std::size_t tableFloats = 4096) : capacity_(capacity) {
        std::mt19937_64 g(5);
        std::vector<float> t(tableFloats);
        for (float& v : t) {
            v = randomFloat(g);
        }
        table_ = deviceArray(t);
        EXPECT_EQ(cudaMalloc(&out_, capacity * sizeof(float)), cudaSuccess);
        EXPECT_EQ(cudaMalloc(&ref_, capacity * sizeof(float)), cudaSuccess);
    }
    ~GridLookup() {
        (void)cudaFree(table_);
        (void)cudaFree(out_);
        (void)cudaFree(ref_);
    }
    GridLookup(const GridLookup&) = delete;
    GridLookup& operator=(const GridLookup&) = delete;
    /// The rewritten kernel over n elements; true when its output equals the original's.
    bool run(int n, LaunchReport* report = nullptr) {
        EXPECT_EQ(cudaMemset(out_, 0, capacity_ * sizeof(float)), cudaSuccess);
        EXPECT_EQ(cudaMemset(ref_, 0, capacity_ * sizeof(float)), cudaSuccess);
        EXPECT_EQ(mptest::scatteredLookupRewritten(n, 8, 4095, table_, out_, nullptr), cudaSuccess);
        if (report != nullptr) {
            *report = lastReport();
        }
        mptest::scatteredLookupOriginal(n, 8, 4095, table_, ref_, nullptr);
        EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        return hostArray(out_, static_cast<std::size_t>(capacity_)) ==
               hostArray(ref_, static_cast<std::size_t>(capacity_));
    }

private:
    int capacity_;
    float* table_ = nullptr;
    float* out_ = nullptr;
    float* ref_ = nullptr;
};

Options defaultTraceOptions() {
    Options o = testOptions();
    o.traceAfter = Options{}.traceAfter;
    return o;
}

TEST_F(PlacerTest, AKernelLaunchedOnceIsNotTracedInThisRunOrTheNext) {
    const fs::path dir = tempDir("once");
    Options o = defaultTraceOptions();
    ASSERT_EQ(o.traceAfter, 1); // the default: traced at its 2nd launch
    o.cacheDir = dir.string();
    for (int run = 0; run < 2; ++run) {
        auto placer = install(o);
        Lookup a(false, 1 << 14, 16, 4095);
        LaunchReport r;
        ASSERT_TRUE(a.run(&r));
        EXPECT_NE(r.dispatch, "tracing") << "run " << run;
        const auto ks = placer->kernels();
        ASSERT_EQ(ks.size(), 1u);
        EXPECT_EQ(ks[0].tracedLaunches, 0u);
        EXPECT_EQ(ks[0].originalLaunches, 1u);
        EXPECT_EQ(ks[0].status, RecordStatus::Untraced);
        EXPECT_NE(ks[0].why.find("not traced: launched once"), std::string::npos) << ks[0].why;
        const auto j = nlohmann::json::parse(placer->reportJson());
        EXPECT_EQ(j["kernels"][0]["status"], "untraced");
        EXPECT_EQ(j["kernels"][0]["source"], run == 0 ? "" : "cache");
        uninstall(); // the outcome goes into the decision cache
        // The cache holds the outcome without a decision.
        const auto files = std::vector<fs::directory_entry>(fs::directory_iterator(dir), {});
        ASSERT_EQ(files.size(), 1u);
        const auto c = nlohmann::json::parse(std::ifstream(files[0].path()));
        EXPECT_EQ(c["version"], 2);
        ASSERT_EQ(c["decisions"].size(), 1u);
        EXPECT_EQ(c["decisions"][0]["status"], "untraced");
        EXPECT_EQ(c["decisions"][0]["launches"], 1);
    }
    // A run that launches it again traces its 2nd launch and places the 3rd; the decision
    // replaces the outcome in the cache.
    {
        auto placer = install(o);
        Lookup a(false, 1 << 14, 16, 4095);
        LaunchReport r;
        ASSERT_TRUE(a.run(&r));
        EXPECT_NE(r.dispatch, "tracing");
        ASSERT_TRUE(a.run(&r));
        EXPECT_EQ(r.dispatch, "tracing");
        ASSERT_TRUE(a.run(&r));
        EXPECT_EQ(r.arrays[0].placed, Place::Shared);
        EXPECT_EQ(placer->kernels()[0].status, RecordStatus::Placed);
        uninstall();
    }
    {
        auto placer = install(o);
        Lookup a(false, 1 << 14, 16, 4095);
        LaunchReport r;
        ASSERT_TRUE(a.run(&r));
        EXPECT_EQ(r.arrays[0].placed, Place::Shared); // from the cache, at the first launch
        EXPECT_EQ(placer->kernels()[0].source, RecordSource::Cache);
        uninstall();
    }
    fs::remove_all(dir);
}

TEST_F(PlacerTest, AShrinkingGridIsOneSignatureTracedOnce) {
    // An LU factorisation's kernels: the grid shrinks at every step, the arrays stay.
    auto placer = install(defaultTraceOptions());
    GridLookup g(1 << 14);
    int launches = 0;
    for (int n = 1 << 14; n > 0; n -= 1024, ++launches) {
        LaunchReport r;
        ASSERT_TRUE(g.run(n, &r)) << "n = " << n;
        EXPECT_EQ(r.dispatch == "tracing", launches == 1) << "launch " << launches + 1;
        if (launches >= 2) {
            EXPECT_EQ(r.arrays[0].placed, Place::Shared) << "n = " << n;
        }
    }
    const auto ks = placer->kernels();
    ASSERT_EQ(ks.size(), 1u);
    EXPECT_EQ(ks[0].tracedLaunches, 1u);
    EXPECT_EQ(ks[0].launches, static_cast<uint64_t>(launches));
    EXPECT_EQ(ks[0].grids, static_cast<uint64_t>(launches));
    EXPECT_EQ(ks[0].status, RecordStatus::Placed);
    EXPECT_EQ(ks[0].grid.x, 60u); // the traced launch's: (16384 - 1024) / 256
    const auto j = nlohmann::json::parse(placer->reportJson());
    EXPECT_EQ(j["kernels"][0]["signature"]["grids"], launches);
    EXPECT_EQ(j["first_run"]["trace_after"], 1);
    EXPECT_EQ(j["first_run"]["traces_per_kernel"], 4);
}

TEST_F(PlacerTest, ReportGivesTheProcessTimes) {
    // process_ms: the host time of the work no signature's overhead holds (docs/placer.md,
    // "What the first run costs"), every field there and none negative.
    auto placer = install(testOptions());
    Lookup a(false, 1 << 15, 64, 4095);
    for (int k = 0; k < 3; ++k) {
        ASSERT_TRUE(a.run());
    }
    const auto j = nlohmann::json::parse(placer->reportJson());
    ASSERT_TRUE(j["process_ms"].is_object());
    const auto& p = j["process_ms"];
    for (const char* f : {"placer_install", "device_setup", "traced_launches", "trace_setup",
                          "trace_wait", "shadow_compare", "jit_warm_up", "jit_sync",
                          "jit_background", "jit_exit_wait", "exit_store"}) {
        ASSERT_TRUE(p.contains(f)) << f;
        ASSERT_TRUE(p[f].is_number()) << f;
        EXPECT_GE(p[f].get<double>(), 0.0) << f;
    }
    EXPECT_EQ(j["kernels"][0]["launches"]["traced"], 1);
    EXPECT_GT(p["placer_install"].get<double>(), 0.0);
    EXPECT_GT(p["device_setup"].get<double>(), 0.0);
    EXPECT_GT(p["trace_setup"].get<double>(), 0.0);
    // The traced launch's wait and comparison are parts of it.
    EXPECT_GE(p["traced_launches"].get<double>(),
              p["trace_wait"].get<double>() + p["shadow_compare"].get<double>());
    // No NVRTC under the CPU emulation layer.
    EXPECT_EQ(p["jit_warm_up"].get<double>(), 0.0);
    EXPECT_EQ(p["jit_exit_wait"].get<double>(), 0.0);
    EXPECT_EQ(j["jit_background_compiles"], 0);
    EXPECT_EQ(j["kernels"][0]["tuning"]["jit_waits"], 0);
}

TEST_F(PlacerTest, TracesPerKernelAreBounded) {
    // Arrays of another size at every launch: a new signature each time, traced at most
    // tracesPerKernel times; the rest keep the original placement untraced, and say so.
    Options o = testOptions(); // every signature traced at its first launch
    o.tracesPerKernel = 2;
    auto placer = install(o);
    for (int k = 0; k < 5; ++k) {
        GridLookup g(4096 + 256 * k, 4096 + 1024 * k);
        LaunchReport r;
        ASSERT_TRUE(g.run(4096, &r));
        EXPECT_EQ(r.dispatch == "tracing", k < 2) << "signature " << k;
        ASSERT_TRUE(g.run(4096, &r));
        if (k >= 2) {
            EXPECT_EQ(r.arrays[0].placed, r.arrays[0].requested);
            EXPECT_EQ(r.arrays[0].source, "default") << "signature " << k;
        }
    }
    const auto ks = placer->kernels();
    ASSERT_EQ(ks.size(), 5u);
    for (std::size_t k = 0; k < ks.size(); ++k) {
        EXPECT_EQ(ks[k].tracedLaunches, k < 2 ? 1u : 0u) << k;
        if (k >= 2) {
            EXPECT_EQ(ks[k].status, RecordStatus::Untraced);
            EXPECT_NE(ks[k].why.find("MEMPLACE_TRACES_PER_KERNEL"), std::string::npos) << ks[k].why;
        }
    }
}

TEST_F(PlacerTest, TheCacheKeepsOriginalAndPendingOutcomes) {
    const fs::path dir = tempDir("outcomes");
    Options o = testOptions();
    o.cacheDir = dir.string();
    o.sampling.maxRecords = 500; // a block of the lookup writes 520 records: it overflows
    {
        auto placer = install(o);
        Saxpy s(1 << 12); // streaming: the original stays
        ASSERT_TRUE(s.run());
        ASSERT_TRUE(s.run());
        Lookup a(false, 1 << 16, 64, 4095);
        LaunchReport r;
        ASSERT_TRUE(a.run(&r)); // traced, overflowed; the run ends before the next attempt
        EXPECT_EQ(r.dispatch, "tracing");
        const auto ks = placer->kernels();
        ASSERT_EQ(ks.size(), 2u);
        EXPECT_EQ(ks[0].status, RecordStatus::Original);
        EXPECT_EQ(ks[1].status, RecordStatus::Pending);
        uninstall();
    }
    {
        auto placer = install(o);
        Saxpy s(1 << 12);
        LaunchReport r;
        ASSERT_TRUE(s.run(&r));
        EXPECT_NE(r.dispatch, "tracing"); // the original, from the cache
        Lookup a(false, 1 << 16, 64, 4095);
        ASSERT_TRUE(a.run(&r)); // the trace goes on where the last run stopped: 1 SM, 1 block
        EXPECT_EQ(r.dispatch, "tracing");
        ASSERT_TRUE(a.run(&r));
        ASSERT_TRUE(a.run(&r));
        EXPECT_NE(r.dispatch, "tracing");
        const auto ks = placer->kernels();
        ASSERT_EQ(ks.size(), 2u);
        EXPECT_EQ(ks[0].source, RecordSource::Cache);
        EXPECT_EQ(ks[0].status, RecordStatus::Original);
        EXPECT_EQ(ks[0].tracedLaunches, 0u);
        EXPECT_EQ(ks[1].traceAttempts, 3); // 1 in the last run, 2 in this one
        EXPECT_EQ(ks[1].tracedLaunches, 2u);
        EXPECT_NE(ks[1].status, RecordStatus::Pending);
        bool resumed = false;
        for (const std::string& n : ks[1].notes) {
            resumed = resumed || n.find("an earlier run's trace was not finished") == 0;
        }
        EXPECT_TRUE(resumed);
        uninstall();
    }
    fs::remove_all(dir);
}

TEST(JitCandidate, PaysOnlyWhenTheLaunchesSoFarRepayTheCompile) {
    // 30 launches of a 10 us kernel at a predicted 1.2x: 30 * 0.01 ms * (1 - 1/1.2) = 0.05 ms,
    // far from a compile of hundreds of milliseconds.
    EXPECT_NEAR(jitCandidateSavingMs(30, 10, 1.2), 0.05, 1e-9);
    // 10,000 launches of 1 ms at 1.25x save 2 s: a 0.5 s compile pays.
    EXPECT_NEAR(jitCandidateSavingMs(10000, 1000, 1.25), 2000, 1e-6);
    EXPECT_GE(jitCandidateSavingMs(10000, 1000, 1.25), Options{}.jitCompileSeconds * 1000);
    // Predicted no faster, or the kernel not measured: nothing to save.
    EXPECT_EQ(jitCandidateSavingMs(1000000, 1000, 1.0), 0);
    EXPECT_EQ(jitCandidateSavingMs(1000000, 1000, 0.9), 0);
    EXPECT_EQ(jitCandidateSavingMs(1000000, -1, 2.0), 0);
}

TEST(TimingSpin, FollowsTheKernelsLengthAndDisappearsForShortKernels) {
    Options o; // at most 100 us, a quarter of the kernel, none below 20 us
    EXPECT_DOUBLE_EQ(timingSpinFor(-1, o), 100); // not measured: the most
    EXPECT_DOUBLE_EQ(timingSpinFor(4, o), 0);    // too short to tune
    EXPECT_DOUBLE_EQ(timingSpinFor(19.9, o), 0);
    EXPECT_DOUBLE_EQ(timingSpinFor(40, o), 10);   // a quarter of it
    EXPECT_DOUBLE_EQ(timingSpinFor(400, o), 100); // at most MEMPLACE_TIMING_SPIN_US
    EXPECT_DOUBLE_EQ(timingSpinFor(1e6, o), 100);
    o.timingSpinUs = 0;
    EXPECT_DOUBLE_EQ(timingSpinFor(400, o), 0);
    EXPECT_DOUBLE_EQ(timingSpinFor(-1, o), 0);
    o.timingSpinUs = 100;
    o.tuneMinUs = 0;
    EXPECT_DOUBLE_EQ(timingSpinFor(4, o), 1);
}

TEST_F(PlacerTest, AKernelTooShortToTuneIsNotTuned) {
    // Tuning runs under emulation only when asked for (times say nothing about a GPU); here the
    // emulated kernel's probe decides, against a bound every emulated launch is below.
    Options o = testOptions();
    o.verify = true;
    o.tuneMinUs = 1e12;
    auto placer = install(o);
    Lookup a(false, 1 << 15, 16, 4095);
    for (int k = 0; k < 8; ++k) {
        ASSERT_TRUE(a.run()) << "launch " << k + 1;
    }
    auto ks = placer->kernels();
    ASSERT_EQ(ks.size(), 1u);
    EXPECT_EQ(ks[0].tuneState, TuneState::Skipped);
    EXPECT_NE(ks[0].tuneWhy.find("not tuned: the original launch measured"), std::string::npos)
        << ks[0].tuneWhy;
    EXPECT_EQ(ks[0].tuningLaunches, 0u);
    EXPECT_DOUBLE_EQ(ks[0].overheads.tuningMs, 0); // no candidate, no busy-wait
    const auto j = nlohmann::json::parse(placer->reportJson());
    EXPECT_EQ(j["kernels"][0]["tuning"]["state"], "skipped");
    uninstall();
    // Above the bound it is tuned: the candidates run.
    o.tuneMinUs = 0;
    placer = install(o);
    Lookup b(false, 1 << 15, 16, 4095);
    for (int k = 0; k < 40; ++k) {
        ASSERT_TRUE(b.run()) << "launch " << k + 1;
    }
    ks = placer->kernels();
    EXPECT_NE(ks[0].tuneState, TuneState::Skipped);
    EXPECT_GT(ks[0].tuningLaunches, 0u);
}

TEST(PlacerOptions, FromEnvironment) {
    struct Env {
        const char* name;
        std::string old;
        bool had;
        explicit Env(const char* n) : name(n), had(std::getenv(n) != nullptr) {
            if (had) {
                old = std::getenv(n);
            }
        }
        ~Env() {
            if (had) {
                setenv(name, old.c_str(), 1);
            } else {
                unsetenv(name);
            }
        }
    };
    Env e1("MEMPLACE"), e2("MEMPLACE_SPEC"), e3("MEMPLACE_TRACE_SMS"), e4("MEMPLACE_TIME"),
        e5("MEMPLACE_SEARCH"), e6("MEMPLACE_CACHE"), e7("MEMPLACE_REPORT"),
        e8("MEMPLACE_TIMING_SPIN_US"), e9("MEMPLACE_TRACE_AFTER"),
        e10("MEMPLACE_TRACES_PER_KERNEL"), e11("MEMPLACE_TUNE_MIN_US");
    setenv("MEMPLACE", "trace", 1);
    setenv("MEMPLACE_SPEC", "a100", 1);
    setenv("MEMPLACE_TRACE_SMS", "4", 1);
    setenv("MEMPLACE_TIME", "1", 1);
    setenv("MEMPLACE_SEARCH", "greedy", 1);
    setenv("MEMPLACE_CACHE", "/tmp/c", 1);
    setenv("MEMPLACE_REPORT", "/tmp/r.json", 1);
    setenv("MEMPLACE_TIMING_SPIN_US", "250", 1);
    setenv("MEMPLACE_TRACE_AFTER", "3", 1);
    setenv("MEMPLACE_TRACES_PER_KERNEL", "7", 1);
    setenv("MEMPLACE_TUNE_MIN_US", "50", 1);
    std::vector<std::string> w;
    Options o = Options::fromEnvironment(&w);
    EXPECT_TRUE(w.empty());
    EXPECT_EQ(o.mode, PlacerMode::Trace);
    EXPECT_EQ(o.spec, "a100");
    EXPECT_EQ(o.sampling.sms, 4u);
    EXPECT_TRUE(o.timeKernels);
    EXPECT_EQ(o.search, search::Algorithm::Greedy);
    EXPECT_EQ(o.cacheDir, "/tmp/c");
    EXPECT_EQ(o.reportPath, "/tmp/r.json");
    EXPECT_DOUBLE_EQ(o.timingSpinUs, 250);
    EXPECT_EQ(o.traceAfter, 3);
    EXPECT_EQ(o.tracesPerKernel, 7);
    EXPECT_DOUBLE_EQ(o.tuneMinUs, 50);
    setenv("MEMPLACE", "force:x=texture", 1);
    EXPECT_EQ(Options::fromEnvironment(&w).mode, PlacerMode::Off);
    setenv("MEMPLACE", "off", 1);
    EXPECT_EQ(Options::fromEnvironment(&w).mode, PlacerMode::Off);
    setenv("MEMPLACE", "auto", 1);
    setenv("MEMPLACE_TRACE_SMS", "many", 1);
    setenv("MEMPLACE_SEARCH", "best", 1);
    setenv("MEMPLACE_TIMING_SPIN_US", "-5", 1);
    o = Options::fromEnvironment(&w);
    EXPECT_EQ(o.mode, PlacerMode::Auto);
    EXPECT_EQ(o.sampling.sms, 2u);
    EXPECT_DOUBLE_EQ(o.timingSpinUs, Options{}.timingSpinUs);
    EXPECT_EQ(w.size(), 3u);
}

TEST(PlacerOptions, NanAndInfinitiesInTheEnvironmentKeepTheDefaults) {
    // MEMPLACE_TRACE_RECORDS=nan passed the range check (NaN compares false), the buffer size
    // wrapped and the trace was written past it.
    struct Env {
        const char* name;
        std::optional<std::string> old;
        Env(const char* n, const char* v) : name(n) {
            if (const char* x = std::getenv(n)) {
                old = x;
            }
            setenv(n, v, 1);
        }
        ~Env() {
            if (old) {
                setenv(name, old->c_str(), 1);
            } else {
                unsetenv(name);
            }
        }
    };
    Env e1("MEMPLACE_TRACE_RECORDS", "nan"), e2("MEMPLACE_TRACE_SMS", "inf"),
        e3("MEMPLACE_SEARCH_MS", "-nan"), e4("MEMPLACE_TUNE", "1e400"),
        e5("MEMPLACE_TRACE_WAVES", "2x"), e6("MEMPLACE_TIMING_SPIN_US", "NAN");
    std::vector<std::string> w;
    const Options o = Options::fromEnvironment(&w);
    const Options d;
    EXPECT_EQ(o.sampling.maxRecords, d.sampling.maxRecords);
    EXPECT_EQ(o.sampling.sms, d.sampling.sms);
    EXPECT_EQ(o.sampling.waves, d.sampling.waves);
    EXPECT_DOUBLE_EQ(o.searchMs, d.searchMs);
    EXPECT_EQ(o.tuneCandidates, d.tuneCandidates);
    EXPECT_DOUBLE_EQ(o.timingSpinUs, d.timingSpinUs);
    ASSERT_EQ(w.size(), 6u);
    EXPECT_NE(w[0].find("MEMPLACE_TRACE_SMS='inf'"), std::string::npos) << w[0];
    bool records = false;
    for (const std::string& s : w) {
        records |= s.find("MEMPLACE_TRACE_RECORDS='nan' is not a whole number in [1, 16777216]; "
                          "using the default (131072)") != std::string::npos;
    }
    EXPECT_TRUE(records);
}

} // namespace
} // namespace memplace::placer

// The evaluation's in-process sweep under the CPU emulation layer: the runtime's Sweep decision
// (every entry measured, outputs compared bitwise with the first entry's, written arrays
// restored or poisoned before each launch and restored after, the launch itself then decided
// again), its detection of outputs that differ, and MEMPLACE=sweep's SweepPolicy around the
// Placer (plan, JSON lines, later launches placed, results still the original's).
#include "kernels/harness.h"
#include "placer/placer.h"
#include "placer/sweep.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>

// A kernel whose output depends on state the descriptor does not describe: a raw counter that
// every launch increments. Launching it again changes its output, which a sweep must report.
__global__ void counted(int* counter, float* out) {
    const int c = counter[0];
    __syncthreads();
    out[threadIdx.x] = static_cast<float>(c + static_cast<int>(threadIdx.x));
    __syncthreads();
    if (threadIdx.x == 0) {
        counter[0] = c + 1;
    }
}

template <class MP_out>
__global__ void countedRw(int* counter, MP_out out) {
    memplace::stage(out);
    [&]() {
        const int c = counter[0];
        __syncthreads();
        out[memplace::at<0>(threadIdx.x)] = static_cast<float>(c + static_cast<int>(threadIdx.x));
        __syncthreads();
        if (threadIdx.x == 0) {
            counter[0] = c + 1;
        }
    }();
    memplace::unstage(out);
}

struct memplace_kernel_counted {
    static constexpr const char* name = "counted";
    static constexpr int numArrays = 1;
    static constexpr memplace::ArrayDesc arrays[1] = {
        {"out", 1, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<float>;
    template <class... Acc>
    static auto kernel() {
        return &countedRw<Acc...>;
    }
    template <class... Acc>
    static void launch(dim3 g, dim3 b, size_t shmem, cudaStream_t s, int* counter, Acc... acc) {
        auto k = kernel<Acc...>();
        MEMPLACE_LAUNCH(k, g, b, shmem, s, counter, acc...);
    }
};

namespace memplace::placer {
namespace {

namespace fs = std::filesystem;
using mptest::randomFloat;

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

/// A policy that asks for one sweep on its first decision and records what comes back.
struct OneSweep : PlacementPolicy {
    std::shared_ptr<SweepRequest> request = std::make_shared<SweepRequest>();
    bool alwaysSweep = false; ///< answer Sweep every time (the runtime must refuse the second)
    int decisions = 0;
    int sweeps = 0;
    int launches = 0;
    std::vector<SweepResult> results;
    Decision decide(const LaunchInfo&) override {
        ++decisions;
        Decision d;
        if (decisions == 1 || alwaysSweep) {
            d.kind = Decision::Kind::Sweep;
            d.sweep = request;
        }
        return d;
    }
    void launched(const LaunchInfo&, const LaunchReport&) override { ++launches; }
    void swept(const LaunchInfo&, std::vector<SweepResult> r) override {
        ++sweeps;
        results = std::move(r);
    }
};

class SweepTest : public ::testing::Test {
protected:
    void SetUp() override {
        uninstall();
        setPlacementPolicy(nullptr);
        clearPlacements();
        setDispatchMode(DispatchMode::Auto);
    }
    void TearDown() override {
        uninstall();
        setPlacementPolicy(nullptr);
        clearPlacements();
    }
};

TEST_F(SweepTest, EveryEntryMeasuredOutputsEqualAndArraysRestored) {
    const int n = 3000;
    std::mt19937_64 g(7);
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) {
        x[i] = randomFloat(g);
        y[i] = randomFloat(g);
    }
    float* dx = deviceArray(x);
    float* dy = deviceArray(y);
    float* dref = deviceArray(y);
    auto policy = std::make_shared<OneSweep>();
    using P = Place;
    for (const Placement& p : std::vector<Placement>{{P::Global, P::Global},
                                                     {P::ReadOnly, P::Global},
                                                     {P::Texture, P::Global},
                                                     {P::Constant, P::Global},
                                                     {P::Shared, P::Shared},
                                                     {P::Global, P::L2Persist}}) {
        policy->request->entries.push_back({p, false});
    }
    policy->request->entries.push_back({{P::Texture, P::Global}, true});
    policy->request->warmup = 1;
    policy->request->repeat = 3;
    policy->alwaysSweep = true; // the second answer must be refused
    setPlacementPolicy(policy);

    // y = 1.7 x + y: applied once more by every launch that is not restored.
    ASSERT_EQ(mptest::saxpyRewritten(n, 1.7f, dx, dy, 256, nullptr), cudaSuccess);
    mptest::saxpyOriginal(n, 1.7f, dx, dref, 256, nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    setPlacementPolicy(nullptr);

    EXPECT_EQ(policy->sweeps, 1);
    EXPECT_EQ(policy->decisions, 2); // the sweep, then the launch itself (Sweep refused)
    EXPECT_EQ(policy->launches, 1);  // sweep launches are not reported to launched()
    ASSERT_EQ(policy->results.size(), 7u);
    for (std::size_t k = 0; k < policy->results.size(); ++k) {
        const SweepResult& r = policy->results[k];
        SCOPED_TRACE("entry " + std::to_string(k));
        EXPECT_EQ(r.status, "ok") << r.detail;
        EXPECT_EQ(r.ms.size(), 3u);
        EXPECT_GE(r.medianMs, 0);
        EXPECT_TRUE(r.compared);
        EXPECT_TRUE(r.equal);
        EXPECT_EQ(r.differingWords, 0u);
        EXPECT_EQ(r.placed, r.entry.placement);
    }
    EXPECT_EQ(policy->results[0].dispatch, "specialized"); // the default is always compiled
    EXPECT_EQ(policy->results[6].dispatch, "dynamic");
    // Exactly one application of saxpy: the sweep left y as it found it.
    EXPECT_EQ(hostArray(dy, n), hostArray(dref, n));
    (void)cudaFree(dx);
    (void)cudaFree(dy);
    (void)cudaFree(dref);
}

TEST_F(SweepTest, OutputsThatDifferAreReported) {
    int* counter = nullptr;
    float* out = nullptr;
    ASSERT_EQ(cudaMalloc(&counter, sizeof(int)), cudaSuccess);
    ASSERT_EQ(cudaMemset(counter, 0, sizeof(int)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&out, 64 * sizeof(float)), cudaSuccess);
    auto policy = std::make_shared<OneSweep>();
    policy->request->entries = {
        {{Place::Global}, false}, {{Place::Shared}, false}, {{Place::Global}, true}};
    policy->request->warmup = 0;
    policy->request->repeat = 2;
    setPlacementPolicy(policy);
    ASSERT_EQ(memplace::launch<memplace_kernel_counted>(1, 64, 0, nullptr, counter, out),
              cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    setPlacementPolicy(nullptr);
    ASSERT_EQ(policy->results.size(), 3u);
    EXPECT_TRUE(policy->results[0].equal); // the reference
    for (std::size_t k = 1; k < 3; ++k) {
        EXPECT_EQ(policy->results[k].status, "ok");
        EXPECT_TRUE(policy->results[k].compared);
        EXPECT_FALSE(policy->results[k].equal) << "entry " << k;
        EXPECT_EQ(policy->results[k].differingWords, 64u); // every float differs
    }
    (void)cudaFree(counter);
    (void)cudaFree(out);
}

TEST_F(SweepTest, ABudgetSkipsTheRest) {
    const int n = 2000;
    std::vector<float> x(n, 1.0f), y(n, 2.0f);
    float* dx = deviceArray(x);
    float* dy = deviceArray(y);
    auto policy = std::make_shared<OneSweep>();
    for (int k = 0; k < 4; ++k) {
        policy->request->entries.push_back({{Place::Global, Place::Global}, k % 2 == 1});
    }
    policy->request->budgetMs = 1e-6; // spent after the first entry
    policy->request->repeat = 1;
    setPlacementPolicy(policy);
    ASSERT_EQ(mptest::saxpyRewritten(n, 1.7f, dx, dy, 256, nullptr), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    setPlacementPolicy(nullptr);
    ASSERT_EQ(policy->results.size(), 4u);
    EXPECT_EQ(policy->results[0].status, "skipped"); // the budget is checked before each entry
    EXPECT_EQ(policy->results[3].status, "skipped");
    EXPECT_EQ(policy->results[3].detail, "time budget spent");
    EXPECT_EQ(hostArray(dy, n), std::vector<float>(n, 1.7f * 1.0f + 2.0f));
    (void)cudaFree(dx);
    (void)cudaFree(dy);
}

TEST(SweepOptionsTest, PlacementListsAndEnvironment) {
    const std::vector<std::string> arrays = {"A", "B", "C"};
    EXPECT_EQ(parsePlacementList("matmul.A=readonly,B=texture,other.C=shared", "matmul", arrays),
              (Placement{Place::ReadOnly, Place::Texture, Place::Global}));
    EXPECT_EQ(parsePlacementList("", "matmul", arrays), Placement(3, Place::Global));
    setenv("MEMPLACE_SWEEP_MAX", "12", 1);
    setenv("MEMPLACE_SWEEP_REPEAT", "0", 1); // below 1: ignored with a warning
    setenv("MEMPLACE_SWEEP_KERNELS", "a,b", 1);
    std::vector<std::string> w;
    const SweepOptions o = SweepOptions::fromEnvironment(&w);
    unsetenv("MEMPLACE_SWEEP_MAX");
    unsetenv("MEMPLACE_SWEEP_REPEAT");
    unsetenv("MEMPLACE_SWEEP_KERNELS");
    EXPECT_EQ(o.maxPlacements, 12u);
    EXPECT_EQ(o.repeat, 10);
    EXPECT_EQ(o.kernels, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(w.size(), 2u); // the repeat, and no MEMPLACE_SWEEP_OUT
}

/// What a MEMPLACE=sweep run of the scattered lookup wrote.
struct SweepLines {
    nlohmann::json signature;
    std::vector<nlohmann::json> placements;
};

/// Installs a sweep with `so` (its `out` set here), launches the rewritten scattered lookup four
/// times (each result must equal the original's) and reads the JSON lines back.
SweepLines sweepScatteredLookup(SweepOptions so) {
    std::random_device rd;
    const fs::path dir = fs::temp_directory_path() / ("memplace-sweep-" + std::to_string(rd()));
    fs::create_directories(dir);
    Options o;
    o.mode = PlacerMode::Auto;
    o.quiet = true;
    o.specDir.clear();
    so.out = (dir / "sweep.jsonl").string();
    so.original = "scattered_lookup.table=readonly";
    so.maxPlacements = 64;
    so.warmup = 0;
    so.repeat = 2;
    auto sweep = installSweep(o, so);
    EXPECT_NE(sweep, nullptr);

    // A scattered lookup in a 1 KB table (shared, constant, texture... all feasible).
    const int n = 4096;
    const unsigned mask = 255;
    std::mt19937_64 g(3);
    std::vector<float> t(mask + 1);
    for (float& v : t) {
        v = randomFloat(g);
    }
    float* table = deviceArray(t);
    float* out = nullptr;
    EXPECT_EQ(cudaMalloc(&out, n * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemset(out, 0xff, n * sizeof(float)), cudaSuccess);
    mptest::scatteredLookupOriginal(n, 4, mask, table, out, nullptr);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<float> ref = hostArray(out, n);
    for (int launch = 0; launch < 4; ++launch) {
        EXPECT_EQ(cudaMemset(out, 0xff, n * sizeof(float)), cudaSuccess);
        EXPECT_EQ(mptest::scatteredLookupRewritten(n, 4, mask, table, out, nullptr), cudaSuccess);
        EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        EXPECT_EQ(hostArray(out, n), ref) << "launch " << launch;
    }
    EXPECT_EQ(sweep != nullptr ? sweep->sweeps() : 0u, 1u);
    uninstall();
    cudaFree(table);
    cudaFree(out);

    SweepLines lines;
    std::ifstream f(so.out);
    std::string line;
    while (std::getline(f, line)) {
        auto j = nlohmann::json::parse(line);
        if (j["type"] == "placement") {
            lines.placements.push_back(j);
        } else {
            lines.signature = j;
        }
    }
    fs::remove_all(dir);
    return lines;
}

std::size_t countRole(const std::vector<nlohmann::json>& placements, const std::string& role) {
    std::size_t k = 0;
    for (const auto& p : placements) {
        const auto roles = p["roles"].get<std::vector<std::string>>();
        k += std::count(roles.begin(), roles.end(), role);
    }
    return k;
}

TEST_F(SweepTest, SweepPolicyPlansMeasuresAndLeavesResultsTheOriginals) {
    const SweepLines r = sweepScatteredLookup(SweepOptions{});
    const nlohmann::json& sig = r.signature;
    const std::vector<nlohmann::json>& placements = r.placements;
    ASSERT_FALSE(sig.is_null());
    EXPECT_EQ(sig["status"], "swept");
    EXPECT_EQ(sig["kernel"], "scattered_lookup");
    EXPECT_TRUE(sig["enumerated"].get<bool>());
    EXPECT_TRUE(sig["complete"].get<bool>());
    EXPECT_EQ(sig["planned"].get<std::size_t>(), placements.size());
    EXPECT_GE(placements.size(), sig["feasible"].get<std::size_t>());
    EXPECT_EQ(sig["original"]["table"], "readonly");
    EXPECT_TRUE(sig["compare_spec"].is_null());
    ASSERT_FALSE(placements.empty());
    EXPECT_EQ(placements[0]["placement"]["table"], "readonly");
    EXPECT_EQ(placements[0]["roles"][0], "original");
    std::size_t ok = 0;
    for (const auto& p : placements) {
        if (p["status"] == "ok") {
            ++ok;
            EXPECT_TRUE(p["equal"].get<bool>()) << p["placement_text"];
            EXPECT_EQ(p["ms"].size(), 2u);
        }
        if (p["model_feasible"].get<bool>()) {
            EXPECT_FALSE(p["predicted_us"].is_null());
        }
        EXPECT_TRUE(p["compare_predicted_us"].is_null());
    }
    EXPECT_EQ(countRole(placements, "memplace"), 1u);
    EXPECT_EQ(countRole(placements, "rules"), 1u);
    EXPECT_EQ(countRole(placements, "compare_best"), 0u);
    EXPECT_EQ(ok, sig["measured"].get<std::size_t>());
    EXPECT_GE(ok, 6u);
}

// MEMPLACE_SWEEP_COMPARE_SPEC: a second spec predicts every planned placement and its best is
// planned (the probed-against-built-in comparison of issue 9); a spec that cannot be read only
// leaves a note.
TEST_F(SweepTest, CompareSpecPredictsEveryPlacementAndPlansItsBest) {
    SweepOptions so;
    so.compareSpec = "h200"; // the emulated device is an H100 (built-in h100): other numbers
    const SweepLines r = sweepScatteredLookup(so);
    ASSERT_FALSE(r.signature.is_null());
    EXPECT_EQ(r.signature["compare_spec"], "h200");
    EXPECT_EQ(countRole(r.placements, "compare_best"), 1u);
    std::size_t differing = 0;
    for (const auto& p : r.placements) {
        if (p["model_feasible"].get<bool>()) {
            ASSERT_FALSE(p["compare_predicted_us"].is_null()) << p["placement_text"];
            differing += p["compare_predicted_us"].get<double>() != p["predicted_us"].get<double>();
        }
    }
    EXPECT_GT(differing, 0u);

    so.compareSpec = "no-such-spec.msl";
    const SweepLines bad = sweepScatteredLookup(so);
    ASSERT_FALSE(bad.signature.is_null());
    EXPECT_EQ(bad.signature["status"], "swept");
    EXPECT_EQ(countRole(bad.placements, "compare_best"), 0u);
    bool noted = false;
    for (const auto& n : bad.signature["notes"]) {
        noted = noted || n.get<std::string>().find("no-such-spec.msl") != std::string::npos;
    }
    EXPECT_TRUE(noted) << bad.signature["notes"];
}

} // namespace
} // namespace memplace::placer

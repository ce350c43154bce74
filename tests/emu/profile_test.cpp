// Active profiling (memplace/emu/profile.h): the stopping rule, warp records rebuilt from lanes,
// extrapolation, and profiles of emulated kernels against their full traces.
#include "emu/src/profile_impl.h"
#include "emu_fixture.h"
#include "memplace/emu/profile.h"

#include <map>
#include <mutex>
#include <tuple>
#include <vector>

namespace {

using memplace::emu::ProfiledRecord;
using memplace::emu::TraceState;
using namespace memplace::emu::detail;

// ---- pure parts ---------------------------------------------------------------------------------

std::vector<LaneAccess> unit(unsigned long long key, std::vector<long long> values) {
    std::vector<LaneAccess> out;
    for (long long v : values)
        out.push_back({key, v, key});
    return out;
}

TEST(RunningMeans, AffineIndicesStopAfterThreeUnits) {
    RunningMeans m;
    m.addUnit(unit(1, {1000}));
    EXPECT_FALSE(m.stable(0.005));
    m.addUnit(unit(1, {1001}));
    EXPECT_FALSE(m.stable(0.005)); // one change only
    m.addUnit(unit(1, {1002}));
    EXPECT_TRUE(m.stable(0.005)); // the change repeats (and is < 0.5% of the mean)
}

TEST(RunningMeans, ChangingMeansDoNotStop) {
    RunningMeans m;
    m.addUnit(unit(1, {0}));
    m.addUnit(unit(1, {100}));
    m.addUnit(unit(1, {7}));
    EXPECT_FALSE(m.stable(0.005)); // mean 0, 50, 35.7: neither rule holds
    m.addUnit(unit(1, {90}));
    EXPECT_FALSE(m.stable(0.005));
}

TEST(RunningMeans, ConstantIndexStopsAndANewKeyDoesNot) {
    RunningMeans m;
    for (int i = 0; i < 3; ++i)
        m.addUnit(unit(1, {42}));
    EXPECT_TRUE(m.stable(0.005));
    m.addUnit(unit(2, {5})); // a site first seen now
    EXPECT_FALSE(m.stable(0.005));
}

TEST(RunningMeans, SmallChangeAgainstALargeMeanIsStable) {
    RunningMeans m;
    m.addUnit(unit(1, {100000}));
    m.addUnit(unit(1, {100300}));
    m.addUnit(unit(1, {100010}));
    // means 100000, 100150, 100103.3: the last change (-46.7) is below 0.5% of 100150
    EXPECT_TRUE(m.stable(0.005));
    EXPECT_FALSE(m.stable(0.0001));
}

TEST(ZipLanes, ConvergedLanesGiveFullRecordsInProgramOrder) {
    std::vector<LaneSequence> lanes(4);
    for (unsigned l = 0; l < 4; ++l)
        lanes[l] = {{10, l, 10}, {20, 100 + l, 20}, {10, 8 + l, 10}};
    WarpRecords w = zipLanes(lanes);
    ASSERT_EQ(w.size(), 3u);
    EXPECT_EQ(w[0].key, 10u);
    EXPECT_EQ(w[1].key, 20u);
    EXPECT_EQ(w[2].key, 10u);
    for (const WarpRecord& r : w)
        EXPECT_EQ(r.mask, 0xfu);
    EXPECT_EQ(w[1].values[3], 103);
    EXPECT_EQ(w[2].values[2], 10);
}

TEST(ZipLanes, LaneDependentTripCountsGivePerIterationGroups) {
    // lane l runs the loop (site 1) l + 1 times, then site 2 once
    std::vector<LaneSequence> lanes(3);
    for (unsigned l = 0; l < 3; ++l) {
        for (unsigned it = 0; it <= l; ++it)
            lanes[l].push_back({1, static_cast<long long>(it), 1});
        lanes[l].push_back({2, static_cast<long long>(l), 2});
    }
    WarpRecords w = zipLanes(lanes);
    ASSERT_EQ(w.size(), 4u);
    // lanes that left the loop wait at site 2 for the others, as the rendezvous makes them
    EXPECT_EQ(w[0].key, 1u);
    EXPECT_EQ(w[0].mask, 0b111u);
    EXPECT_EQ(w[1].key, 1u);
    EXPECT_EQ(w[1].mask, 0b110u);
    EXPECT_EQ(w[1].values[2], 1);
    EXPECT_EQ(w[2].key, 1u);
    EXPECT_EQ(w[2].mask, 0b100u);
    EXPECT_EQ(w[3].key, 2u);
    EXPECT_EQ(w[3].mask, 0b111u);
    EXPECT_EQ(w[3].values[1], 1);
}

TEST(Extrapolate, AffineWhenTheStepsAgreeElseCyclic) {
    bool affine = false;
    EXPECT_EQ(extrapolateValue(0, 10, 1, 14, 2, 18, 7, 0, &affine), 38);
    EXPECT_TRUE(affine);
    EXPECT_EQ(extrapolateValue(0, 100, 32, 132, 64, 164, 96, 0, &affine), 196); // slope 1 per x
    EXPECT_TRUE(affine);
    EXPECT_EQ(extrapolateValue(0, 5, 1, 9, 2, 4, 7, 1, &affine), 9);
    EXPECT_FALSE(affine);
    EXPECT_EQ(extrapolateValue(0, 5, 2, 6, 4, 7, 6, 2, &affine), 7); // slope 1/2: not integral
    EXPECT_FALSE(affine);
}

// ---- profiles of emulated kernels ---------------------------------------------------------------

struct Rec {
    unsigned block, warp;
    unsigned long long key;
    unsigned mask;
    std::vector<long long> values;
    bool operator==(const Rec&) const = default;
};
std::mutex g_mutex;
std::vector<Rec> g_full;

/// What the runtime's tracing accessor does under emulation
/// (runtime/include/memplace/accessors.cuh).
__device__ void traced(unsigned site, unsigned array, unsigned flags, long long offset) {
    const TraceState st = memplace::emu::traceState();
    if (st == TraceState::Off)
        return;
    const memplace::emu::WarpGroup g =
        memplace::emu::warpRendezvous(memplace::emu::rendezvousKey(site, (array << 8) | flags),
                                      (static_cast<unsigned long long>(site) << 3) | flags, offset);
    if (st == TraceState::Observe || !g.isLeader)
        return;
    Rec r{blockIdx.x + gridDim.x * blockIdx.y,
          g.warp,
          memplace::emu::rendezvousKey(site, (array << 8) | flags),
          g.mask,
          {}};
    for (unsigned m = g.mask; m != 0; m &= m - 1)
        r.values.push_back(g.values[__ffs(static_cast<int>(m)) - 1]);
    std::lock_guard lock(g_mutex);
    g_full.push_back(r);
}

/// Records per (block, warp) in program order, sorted by (block, warp).
std::map<std::pair<unsigned, unsigned>, std::vector<Rec>> byWarp(const std::vector<Rec>& v) {
    std::map<std::pair<unsigned, unsigned>, std::vector<Rec>> out;
    for (const Rec& r : v)
        out[{r.block, r.warp}].push_back(r);
    return out;
}
std::vector<Rec> fromProfile(const std::vector<ProfiledRecord>& p) {
    std::vector<Rec> out;
    for (const ProfiledRecord& r : p) {
        Rec x{r.block, r.warp, r.key, r.mask, {}};
        for (unsigned m = r.mask; m != 0; m &= m - 1)
            x.values.push_back(r.values[__ffs(static_cast<int>(m)) - 1]);
        out.push_back(x);
    }
    return out;
}

class Profile : public Emu {
protected:
    void SetUp() override {
        Emu::SetUp();
        g_full.clear();
        saved_ = memplace::emu::profileOptions();
        memplace::emu::ProfileOptions o = saved_;
        o.mode = memplace::emu::ProfileMode::Active;
        o.loopIterations = 0;
        o.reportPath.clear();
        memplace::emu::setProfileOptions(o);
    }
    void TearDown() override {
        memplace::emu::setProfileOptions(saved_);
        Emu::TearDown();
    }
    memplace::emu::ProfileOptions saved_;
};

__global__ void stream(const float* a, float* b, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        traced(1, 0, 1, i);
        traced(2, 1, 2, i);
        b[i] = a[i] + 1.0f;
    }
}

TEST_F(Profile, StreamingKernelRunsAFewThreadsAndEqualsTheFullTrace) {
    const int n = 16 * 256;
    float* a = managed<float>(n, 1.0f);
    float* b = managed<float>(n);
    MEMPLACE_LAUNCH(stream, 16, 256, 0, 0, a, b, n); // full: the reference
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<Rec> full = g_full;
    ASSERT_EQ(full.size(), 16u * 8u * 2u);
    g_full.clear();
    for (int i = 0; i < n; ++i)
        b[i] = 0;

    memplace::emu::profileNextLaunch({}); // every block sampled
    MEMPLACE_LAUNCH(stream, 16, 256, 0, 0, a, b, n);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_TRUE(g_full.empty()); // the real run is untraced
    for (int i = 0; i < n; ++i)
        ASSERT_EQ(b[i], 2.0f) << i; // and computes the result once
    std::optional<memplace::emu::Profile> p = memplace::emu::takeProfile();
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(byWarp(fromProfile(p->records)), byWarp(full));
    EXPECT_TRUE(p->stats.warpLevel);
    EXPECT_TRUE(p->stats.laneLevel);
    EXPECT_TRUE(p->stats.warpLevelStopped);
    EXPECT_EQ(p->stats.threadsTotal, 16u * 256u);
    EXPECT_LE(p->stats.threadsRun, 3u * 3u); // three warps of three lanes
    EXPECT_EQ(p->stats.warpsProfiled, 3u);
    EXPECT_EQ(p->stats.warpsExtrapolated, 16u * 8u - 3u);
    EXPECT_EQ(p->stats.laneAccessesTotal, 2u * 16u * 256u);
    EXPECT_EQ(p->stats.laneAccessesProfiled, 2u * 9u);
}

__global__ void lookup(const int* table, const int* keys, int* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    traced(1, 0, 1, i);
    const int k = keys[i];
    traced(2, 1, 1, k);
    traced(3, 2, 2, i);
    out[i] = table[k];
}

TEST_F(Profile, IrregularIndicesKeepProfilingUntilTheMeansSettle) {
    const int n = 8 * 128;
    int* keys = managed<int>(n);
    int* table = managed<int>(4096);
    int* out = managed<int>(n);
    unsigned x = 12345;
    for (int i = 0; i < n; ++i) {
        x = x * 1103515245u + 12345u;
        keys[i] = static_cast<int>((x >> 8) % 4096);
    }
    memplace::emu::profileNextLaunch({});
    MEMPLACE_LAUNCH(lookup, 8, 128, 0, 0, table, keys, out);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::optional<memplace::emu::Profile> p = memplace::emu::takeProfile();
    ASSERT_TRUE(p.has_value());
    EXPECT_GT(p->stats.threadsRun, 9u); // random keys need more lanes than an affine index
    EXPECT_LT(p->stats.threadsRun, p->stats.threadsTotal);
    // The affine sites are extrapolated exactly; every lane of every warp is present.
    std::map<unsigned long long, unsigned long long> lanes;
    for (const ProfiledRecord& r : p->records) {
        lanes[r.key] += static_cast<unsigned>(__popc(r.mask));
        if ((r.key & 0xffffffffULL) >> 8 == 0) { // keys[i]: affine
            for (unsigned m = r.mask; m != 0; m &= m - 1) {
                const unsigned l = static_cast<unsigned>(__ffs(static_cast<int>(m)) - 1);
                EXPECT_EQ(r.values[l], static_cast<long long>(r.block) * 128 + r.warp * 32 + l);
            }
        }
    }
    for (const auto& [k, c] : lanes)
        EXPECT_EQ(c, static_cast<unsigned long long>(n)) << k;
}

__global__ void blockReverse(const int* in, int* out) {
    __shared__ int tile[128];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    traced(1, 0, 1, i);
    tile[threadIdx.x] = in[i];
    __syncthreads();
    const int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - threadIdx.x);
    traced(2, 1, 2, j);
    out[j] += tile[threadIdx.x];
}

TEST_F(Profile, BarriersSwitchBothLevelsOffAndMemoryIsRestored) {
    const int n = 4 * 128;
    int* in = managed<int>(n);
    int* out = managed<int>(n);
    for (int i = 0; i < n; ++i)
        in[i] = i;
    MEMPLACE_LAUNCH(blockReverse, 4, 128, 0, 0, in, out);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<Rec> full = g_full;
    g_full.clear();
    for (int i = 0; i < n; ++i)
        out[i] = 0;
    memplace::emu::profileNextLaunch({0, 2});
    MEMPLACE_LAUNCH(blockReverse, 4, 128, 0, 0, in, out);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (int i = 0; i < n; ++i) {
        const int b = i / 128, t = i % 128;
        ASSERT_EQ(out[i], b * 128 + (127 - t)) << i; // += ran exactly once: memory restored
    }
    std::optional<memplace::emu::Profile> p = memplace::emu::takeProfile();
    ASSERT_TRUE(p.has_value());
    EXPECT_FALSE(p->stats.laneLevel);
    EXPECT_FALSE(p->stats.warpLevel);
    EXPECT_NE(p->stats.warpLevelOff.find("__syncthreads"), std::string::npos)
        << p->stats.warpLevelOff;
    EXPECT_NE(p->stats.laneLevelOff.find("__syncthreads"), std::string::npos)
        << p->stats.laneLevelOff;
    // Whole blocks 0 and 2: exactly the full trace's records of those blocks.
    std::vector<Rec> sampled;
    for (const Rec& r : full)
        if (r.block == 0 || r.block == 2)
            sampled.push_back(r);
    EXPECT_EQ(byWarp(fromProfile(p->records)), byWarp(sampled));
    EXPECT_EQ(p->stats.blocks, 2u);
}

__global__ void warpSum(const int* in, int* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    traced(1, 0, 1, i);
    int v = in[i];
    for (int d = 16; d > 0; d /= 2)
        v += __shfl_down_sync(0xffffffffu, v, d);
    if ((threadIdx.x & 31) == 0) {
        traced(2, 1, 2, i / 32);
        out[i / 32] = v;
    }
}

TEST_F(Profile, WarpCollectivesSwitchOnlyTheLaneLevelOff) {
    const int n = 16 * 128;
    int* in = managed<int>(n, 1);
    int* out = managed<int>(n / 32);
    memplace::emu::profileNextLaunch({});
    MEMPLACE_LAUNCH(warpSum, 16, 128, 0, 0, in, out);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (int w = 0; w < n / 32; ++w)
        ASSERT_EQ(out[w], 32) << w;
    std::optional<memplace::emu::Profile> p = memplace::emu::takeProfile();
    ASSERT_TRUE(p.has_value());
    EXPECT_FALSE(p->stats.laneLevel);
    EXPECT_NE(p->stats.laneLevelOff.find("collective"), std::string::npos);
    EXPECT_TRUE(p->stats.warpLevel);
    EXPECT_TRUE(p->stats.warpLevelStopped);
    EXPECT_LT(p->stats.warpsProfiled, 16u * 4u);
    // warp records: site 1 full warps, site 2 lane 0 only, offsets = global warp index
    for (const ProfiledRecord& r : p->records) {
        if ((r.key >> 32) == 2) {
            EXPECT_EQ(r.mask, 1u);
            EXPECT_EQ(r.values[0], static_cast<long long>(r.block) * 4 + r.warp);
        } else {
            EXPECT_EQ(r.mask, 0xffffffffu);
        }
    }
}

__global__ void histogram(const int* in, unsigned* hist, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        traced(1, 0, 1, i);
        const int b = in[i] & 15;
        traced(2, 1, 7, b);
        atomicAdd(&hist[b], 1u);
    }
}

TEST_F(Profile, AtomicsSwitchBothLevelsOff) {
    const int n = 4 * 64;
    int* in = managed<int>(n);
    unsigned* hist = managed<unsigned>(16);
    for (int i = 0; i < n; ++i)
        in[i] = i * 7;
    memplace::emu::profileNextLaunch({});
    MEMPLACE_LAUNCH(histogram, 4, 64, 0, 0, in, hist, n);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    unsigned total = 0;
    for (int b = 0; b < 16; ++b)
        total += hist[b];
    EXPECT_EQ(total, static_cast<unsigned>(n)); // counted once
    std::optional<memplace::emu::Profile> p = memplace::emu::takeProfile();
    ASSERT_TRUE(p.has_value());
    EXPECT_FALSE(p->stats.warpLevel);
    EXPECT_NE(p->stats.warpLevelOff.find("atomic"), std::string::npos);
    EXPECT_EQ(p->stats.threadsTotal, static_cast<uint64_t>(n));
}

__global__ void rowSum(const float* m, float* out, int cols) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0;
    for (int c = 0; c < cols; ++c) {
        traced(1, 0, 1, static_cast<long long>(r) * cols + c);
        s += m[r * cols + c];
    }
    traced(2, 1, 2, r);
    out[r] = s;
}

TEST_F(Profile, LoopTruncationStopsThreadsAfterTheirFirstIterations) {
    const int rows = 4 * 64, cols = 50;
    float* m = managed<float>(rows * cols, 1.0f);
    float* out = managed<float>(rows);
    memplace::emu::ProfileOptions o = memplace::emu::profileOptions();
    o.loopIterations = 4;
    memplace::emu::setProfileOptions(o);
    memplace::emu::profileNextLaunch({});
    MEMPLACE_LAUNCH(rowSum, 4, 64, 0, 0, m, out, cols);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (int r = 0; r < rows; ++r)
        ASSERT_EQ(out[r], 50.0f) << r; // the real run is not truncated
    std::optional<memplace::emu::Profile> p = memplace::emu::takeProfile();
    ASSERT_TRUE(p.has_value());
    EXPECT_GT(p->stats.truncatedThreads, 0u);
    std::map<std::pair<unsigned, unsigned>, int> loopRecords;
    for (const ProfiledRecord& r : p->records) {
        EXPECT_NE(r.key >> 32, 2u); // truncated threads never reach the store
        ++loopRecords[{r.block, r.warp}];
    }
    for (const auto& [w, c] : loopRecords)
        EXPECT_EQ(c, 4) << w.first << "/" << w.second;
}

TEST_F(Profile, FullModeLeavesTheLaunchTraced) {
    memplace::emu::ProfileOptions o = memplace::emu::profileOptions();
    o.mode = memplace::emu::ProfileMode::Full;
    memplace::emu::setProfileOptions(o);
    const int n = 256;
    float* a = managed<float>(n);
    float* b = managed<float>(n);
    memplace::emu::profileNextLaunch({});
    MEMPLACE_LAUNCH(stream, 2, 128, 0, 0, a, b, n);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_FALSE(memplace::emu::takeProfile().has_value());
    EXPECT_EQ(g_full.size(), 2u * 4u * 2u);
}

} // namespace

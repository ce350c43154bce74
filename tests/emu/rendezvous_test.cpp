// The warp rendezvous the tracing accessor uses: which lanes form one warp access record.
#include "emu_fixture.h"

#include <mutex>
#include <string>
#include <vector>

namespace {

/// One warp record as a tracer would write it: block, warp, key, mask, offsets of the lanes.
struct Record {
    unsigned block;
    unsigned warp;
    unsigned site;
    unsigned mask;
    std::vector<long long> offsets;
};

std::mutex g_mutex;
std::vector<Record> g_records;

/// What a tracing accessor does at a traced access: meet the warp, and the leader records.
__device__ void traced(unsigned site, unsigned array, long long offset) {
    memplace::emu::WarpGroup g =
        memplace::emu::warpRendezvous(memplace::emu::rendezvousKey(site, array), site, offset);
    if (g.isLeader) {
        Record r{static_cast<unsigned>(blockIdx.x), g.warp, site, g.mask, {}};
        for (unsigned m = g.mask; m != 0; m &= m - 1)
            r.offsets.push_back(g.values[__ffs(static_cast<int>(m)) - 1]);
        std::lock_guard lock(g_mutex);
        g_records.push_back(r);
    }
}

class Rendezvous : public Emu {
protected:
    void SetUp() override {
        Emu::SetUp();
        g_records.clear();
    }
};

__global__ void strideOne(const float* a, float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    traced(0, 0, i);
    float v = a[i];
    traced(1, 1, i);
    b[i] = v;
}

TEST_F(Rendezvous, StrideOneAccessIsOneGroupOf32Lanes) {
    float* a = managed<float>(256);
    float* b = managed<float>(256);
    MEMPLACE_LAUNCH(strideOne, 2, 128, 0, 0, a, b, 256);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(g_records.size(), 2u * 4u * 2u); // 2 blocks x 4 warps x 2 sites
    for (const Record& r : g_records) {
        EXPECT_EQ(r.mask, 0xffffffffu);
        ASSERT_EQ(r.offsets.size(), 32u);
        for (unsigned l = 0; l < 32; ++l)
            EXPECT_EQ(r.offsets[l], r.block * 128 + r.warp * 32 + l);
    }
    // Per warp, program order: site 0 then site 1.
    EXPECT_EQ(g_records[0].site, 0u);
    EXPECT_EQ(g_records[1].site, 1u);
}

TEST_F(Rendezvous, BoundsCheckLeavesAPartialGroup) {
    float* a = managed<float>(256);
    float* b = managed<float>(256);
    MEMPLACE_LAUNCH(strideOne, 1, 64, 0, 0, a, b, 40);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(g_records.size(), 4u);
    EXPECT_EQ(g_records[0].mask, 0xffffffffu);
    EXPECT_EQ(g_records[2].warp, 1u);
    EXPECT_EQ(g_records[2].mask, 0xffu); // lanes 32..39 of the block
}

__global__ void divergent(float*, float*) {
    int lane = threadIdx.x;
    if (lane % 2 == 0) {
        traced(0, 0, lane / 2);
    } else {
        traced(1, 1, lane * 4);
    }
    traced(2, 0, lane); // after the branch the warp is whole again
}

TEST_F(Rendezvous, DivergentBranchGivesTwoGroupsThenReconverges) {
    float* a = managed<float>(64);
    float* b = managed<float>(64);
    MEMPLACE_LAUNCH(divergent, 1, 32, 0, 0, a, b);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(g_records.size(), 3u);
    EXPECT_EQ(g_records[0].site, 0u);
    EXPECT_EQ(g_records[0].mask, 0x55555555u);
    EXPECT_EQ(g_records[0].offsets[3], 3);
    EXPECT_EQ(g_records[1].site, 1u);
    EXPECT_EQ(g_records[1].mask, 0xaaaaaaaau);
    EXPECT_EQ(g_records[1].offsets[0], 4);
    EXPECT_EQ(g_records[2].site, 2u);
    EXPECT_EQ(g_records[2].mask, 0xffffffffu);
}

__global__ void lanesDependentLoop(float*, int* trips) {
    int lane = threadIdx.x;
    int n = lane % 4 + 1;
    for (int k = 0; k < n; ++k)
        traced(0, 0, k * 32 + lane);
    trips[lane] = n;
    traced(1, 0, lane); // after the loop: all lanes together, as after reconvergence
}

TEST_F(Rendezvous, LoopWithLaneDependentTripCountGroupsPerIteration) {
    float* a = managed<float>(128);
    int* trips = managed<int>(32);
    MEMPLACE_LAUNCH(lanesDependentLoop, 1, 32, 0, 0, a, trips);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(g_records.size(), 5u);
    for (unsigned k = 0; k < 4; ++k) {
        unsigned expect = 0;
        for (unsigned l = 0; l < 32; ++l)
            expect |= (l % 4 + 1 > k ? 1u : 0u) << l;
        EXPECT_EQ(g_records[k].site, 0u);
        EXPECT_EQ(g_records[k].mask, expect) << "iteration " << k;
        EXPECT_EQ(g_records[k].offsets[0],
                  static_cast<long long>(k * 32 + __ffs(static_cast<int>(expect)) - 1));
    }
    EXPECT_EQ(g_records[4].site, 1u);
    EXPECT_EQ(g_records[4].mask, 0xffffffffu);
}

__global__ void siteInsideBarrierLoop(float* a) {
    __shared__ float s[64];
    for (int it = 0; it < 3; ++it) {
        if (threadIdx.x < 48)
            traced(0, 0, it * 100 + threadIdx.x);
        s[threadIdx.x] = a[threadIdx.x];
        __syncthreads();
    }
}

TEST_F(Rendezvous, GroupsAcrossBarriersStayPerWarp) {
    float* a = managed<float>(64);
    MEMPLACE_LAUNCH(siteInsideBarrierLoop, 1, 64, 0, 0, a);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(g_records.size(), 6u); // 3 iterations x 2 warps
    for (const Record& r : g_records)
        EXPECT_EQ(r.mask, r.warp == 0 ? 0xffffffffu : 0xffffu);
}

__global__ void twoArraysOneSite(float* a) {
    // Same site, different arrays: two records.
    traced(5, threadIdx.x % 2, threadIdx.x);
    (void)a;
}

TEST_F(Rendezvous, KeyIncludesTheArray) {
    float* a = managed<float>(32);
    MEMPLACE_LAUNCH(twoArraysOneSite, 1, 32, 0, 0, a);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(g_records.size(), 2u);
    EXPECT_EQ(g_records[0].mask | g_records[1].mask, 0xffffffffu);
    EXPECT_EQ(g_records[0].mask & g_records[1].mask, 0u);
}

// The GPU tracer's way (activemask + match_any + shuffles) also works on the emulator.
__device__ void gpuStyleTrace(unsigned site, long long offset, unsigned* masks) {
    unsigned active = __activemask();
    unsigned group = __match_any_sync(active, site);
    int leader = __ffs(static_cast<int>(group)) - 1;
    long long first = __shfl_sync(group, offset, leader);
    if (static_cast<int>(threadIdx.x & 31) == leader) {
        std::lock_guard lock(g_mutex);
        g_records.push_back(Record{0, threadIdx.x / 32, site, group, {first}});
    }
    (void)masks;
}

__global__ void gpuStyle(unsigned* masks) {
    if (threadIdx.x < 20) {
        gpuStyleTrace(0, threadIdx.x, masks);
    } else {
        gpuStyleTrace(1, threadIdx.x * 2, masks);
    }
}

TEST_F(Rendezvous, ActiveMaskAndMatchAnyGroupLikeTheGpuTracer) {
    unsigned* masks = managed<unsigned>(32);
    MEMPLACE_LAUNCH(gpuStyle, 1, 32, 0, 0, masks);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(g_records.size(), 2u);
    EXPECT_EQ(g_records[0].mask, 0x000fffffu);
    EXPECT_EQ(g_records[0].offsets[0], 0);
    EXPECT_EQ(g_records[1].mask, 0xfff00000u);
    EXPECT_EQ(g_records[1].offsets[0], 40);
}

TEST_F(Rendezvous, LaunchObserverAndBlockFilter) {
    std::vector<std::string> events;
    memplace::emu::setLaunchObserver([&](const memplace::emu::LaunchInfo& info, bool start) {
        events.push_back((start ? "start " : "end ") + info.kernel + " " +
                         std::to_string(info.grid.x));
    });
    memplace::emu::setBlockFilter([](const uint3& b) { return b.x == 1; });
    float* a = managed<float>(256);
    float* b = managed<float>(256);
    MEMPLACE_LAUNCH(strideOne, 2, 128, 0, 0, a, b, 256);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_NE(events[0].find("start"), std::string::npos);
    EXPECT_NE(events[0].find("strideOne"), std::string::npos) << events[0];
    for (const Record& r : g_records)
        EXPECT_EQ(r.block, 1u);
    EXPECT_EQ(g_records.size(), 8u);
}

} // namespace

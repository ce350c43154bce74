// Barriers, warp collectives, shared memory and faults on the fiber scheduler.
#include "emu_fixture.h"

#include <algorithm>
#include <numeric>

namespace {

// ---- barriers and shared memory --------------------------------------------------------------

__global__ void reverseBlock(const int* in, int* out) {
    __shared__ int tile[256];
    int t = threadIdx.x;
    tile[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = tile[blockDim.x - 1 - t];
}

TEST_F(Emu, SharedMemoryIsPerBlockAndBarrierOrdersIt) {
    const int n = 4 * 256;
    int* in = managed<int>(n);
    int* out = managed<int>(n, -1);
    std::iota(in, in + n, 0);
    MEMPLACE_LAUNCH(reverseBlock, 4, 256, 0, 0, in, out);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (int b = 0; b < 4; ++b) {
        for (int t = 0; t < 256; ++t)
            ASSERT_EQ(out[b * 256 + t], b * 256 + 255 - t);
    }
}

__global__ void barrierReductions(int* out) {
    int t = threadIdx.x;
    out[0 + t * 0] = 0;
    int count = __syncthreads_count(t % 3 == 0);
    int all = __syncthreads_and(t < 1000);
    int any = __syncthreads_or(t == 77);
    int none = __syncthreads_or(0);
    if (t == 5) {
        out[1] = count;
        out[2] = all;
        out[3] = any;
        out[4] = none;
    }
}

TEST_F(Emu, BarrierReductions) {
    int* out = managed<int>(5, -1);
    MEMPLACE_LAUNCH(barrierReductions, 1, 100, 0, 0, out);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(out[1], 34); // 0, 3, ..., 99
    EXPECT_EQ(out[2], 1);
    EXPECT_EQ(out[3], 1);
    EXPECT_EQ(out[4], 0);
}

__global__ void earlyExitThenBarrier(int n, int* out) {
    int t = threadIdx.x;
    if (t >= n)
        return; // exited threads do not hold the barrier (sm_70+)
    __shared__ int s[128];
    s[t] = t;
    __syncthreads();
    out[t] = s[n - 1 - t];
}

TEST_F(Emu, ExitedThreadsDoNotHoldBarriers) {
    int* out = managed<int>(128, -1);
    MEMPLACE_LAUNCH(earlyExitThenBarrier, 1, 128, 0, 0, 50, out);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (int t = 0; t < 50; ++t)
        EXPECT_EQ(out[t], 49 - t);
    EXPECT_EQ(out[50], -1);
}

__global__ void threeDimensional(int* out) {
    unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned bid = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    out[bid * (blockDim.x * blockDim.y * blockDim.z) + tid] = static_cast<int>(bid * 1000 + tid);
}

TEST_F(Emu, ThreeDimensionalGridsAndBlocks) {
    dim3 grid(2, 3, 2), block(4, 2, 3);
    int total = 12 * 24;
    int* out = managed<int>(total, -1);
    MEMPLACE_LAUNCH(threeDimensional, grid, block, 0, 0, out);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (int b = 0; b < 12; ++b) {
        for (int t = 0; t < 24; ++t)
            ASSERT_EQ(out[b * 24 + t], b * 1000 + t);
    }
}

// ---- warp collectives -------------------------------------------------------------------------

__global__ void shuffles(int* out) {
    int lane = threadIdx.x & 31;
    int base = threadIdx.x * 8;
    out[base + 0] = __shfl_sync(0xffffffffu, lane * 10, 3);
    out[base + 1] = __shfl_up_sync(0xffffffffu, lane, 2);
    out[base + 2] = __shfl_down_sync(0xffffffffu, lane, 5);
    out[base + 3] = __shfl_xor_sync(0xffffffffu, lane, 1);
    out[base + 4] = __shfl_sync(0xffffffffu, lane, lane + 1, 8); // rotate within groups of 8
    out[base + 5] = __shfl_down_sync(0xffffffffu, lane, 3, 16);  // no crossing of 16-lane groups
    out[base + 6] = __shfl_xor_sync(0xffffffffu, lane, 8, 8);    // across 8-lane groups
    double d = __shfl_sync(0xffffffffu, lane + 0.5, 31);
    out[base + 7] = static_cast<int>(d * 2);
}

TEST_F(Emu, ShufflesFollowCudaSemantics) {
    int* out = managed<int>(64 * 8, -1);
    MEMPLACE_LAUNCH(shuffles, 1, 64, 0, 0, out);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (int t = 0; t < 64; ++t) {
        int lane = t & 31;
        const int* o = out + t * 8;
        EXPECT_EQ(o[0], 30) << t;
        EXPECT_EQ(o[1], lane >= 2 ? lane - 2 : lane) << t;
        EXPECT_EQ(o[2], lane + 5 < 32 ? lane + 5 : lane) << t;
        EXPECT_EQ(o[3], lane ^ 1) << t;
        EXPECT_EQ(o[4], (lane & ~7) | ((lane + 1) & 7)) << t;
        EXPECT_EQ(o[5], (lane & 15) + 3 < 16 ? lane + 3 : lane) << t;
        int src = lane ^ 8; // later 8-lane groups give the caller's own value; earlier ones do not
        EXPECT_EQ(o[6], src > lane ? lane : src) << t;
        EXPECT_EQ(o[7], 63) << t;
    }
}

__global__ void warpReduce(const float* in, float* out) {
    float v = in[blockIdx.x * blockDim.x + threadIdx.x];
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    __shared__ float partial[32];
    if ((threadIdx.x & 31) == 0)
        partial[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        float w = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.0f;
        for (int off = 16; off > 0; off >>= 1)
            w += __shfl_down_sync(0xffffffffu, w, off);
        if (threadIdx.x == 0)
            out[blockIdx.x] = w;
    }
}

TEST_F(Emu, BlockReductionWithShuffles) {
    const int blocks = 7, threads = 256;
    float* in = managed<float>(blocks * threads);
    float* out = managed<float>(blocks, 0.0f);
    for (int i = 0; i < blocks * threads; ++i)
        in[i] = static_cast<float>(i % 13);
    MEMPLACE_LAUNCH(warpReduce, blocks, threads, 0, 0, in, out);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (int b = 0; b < blocks; ++b) {
        float expect = 0;
        for (int t = 0; t < threads; ++t)
            expect += static_cast<float>((b * threads + t) % 13);
        EXPECT_EQ(out[b], expect) << b;
    }
}

__global__ void votes(const int* pred, unsigned* out) {
    int t = threadIdx.x;
    int p = pred[t];
    unsigned ballot = __ballot_sync(0xffffffffu, p);
    int any = __any_sync(0xffffffffu, p);
    int all = __all_sync(0xffffffffu, p);
    unsigned match = __match_any_sync(0xffffffffu, t % 3);
    int allPred = 0;
    unsigned matchAll = __match_all_sync(0xffffffffu, 7, &allPred);
    int mixedPred = 1;
    unsigned matchMixed = __match_all_sync(0xffffffffu, t, &mixedPred);
    unsigned sum = __reduce_add_sync(0xffffffffu, static_cast<unsigned>(t));
    int mn = __reduce_min_sync(0xffffffffu, 10 - t);
    unsigned orr = __reduce_or_sync(0xffffffffu, 1u << (t % 4));
    unsigned* o = out + t * 10;
    o[0] = ballot;
    o[1] = any;
    o[2] = all;
    o[3] = match;
    o[4] = matchAll;
    o[5] = allPred;
    o[6] = matchMixed | (mixedPred << 1);
    o[7] = sum;
    o[8] = static_cast<unsigned>(mn);
    o[9] = orr;
}

TEST_F(Emu, VotesMatchesAndReductions) {
    int* pred = managed<int>(32);
    unsigned* out = managed<unsigned>(32 * 10);
    unsigned expectBallot = 0;
    for (int t = 0; t < 32; ++t) {
        pred[t] = (t * 7) % 5 == 0;
        expectBallot |= static_cast<unsigned>(pred[t]) << t;
    }
    MEMPLACE_LAUNCH(votes, 1, 32, 0, 0, pred, out);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (int t = 0; t < 32; ++t) {
        const unsigned* o = out + t * 10;
        unsigned expectMatch = 0;
        for (int j = 0; j < 32; ++j)
            expectMatch |= (j % 3 == t % 3 ? 1u : 0u) << j;
        EXPECT_EQ(o[0], expectBallot);
        EXPECT_EQ(o[1], 1u);
        EXPECT_EQ(o[2], 0u);
        EXPECT_EQ(o[3], expectMatch) << t;
        EXPECT_EQ(o[4], 0xffffffffu);
        EXPECT_EQ(o[5], 1u);
        EXPECT_EQ(o[6], 0u);
        EXPECT_EQ(o[7], 496u);
        EXPECT_EQ(static_cast<int>(o[8]), 10 - 31);
        EXPECT_EQ(o[9], 0xfu);
    }
}

__global__ void partialWarp(unsigned* out) {
    // A block of 40 threads: warp 1 has 8 lanes; the full mask names lanes that do not exist.
    unsigned b = __ballot_sync(0xffffffffu, 1);
    int v = __shfl_down_sync(0xffffffffu, static_cast<int>(threadIdx.x), 4);
    out[threadIdx.x * 2] = b;
    out[threadIdx.x * 2 + 1] = static_cast<unsigned>(v);
}

TEST_F(Emu, PartialWarpsHaveOnlyTheirLanes) {
    unsigned* out = managed<unsigned>(80);
    MEMPLACE_LAUNCH(partialWarp, 1, 40, 0, 0, out);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (unsigned t = 0; t < 40; ++t) {
        EXPECT_EQ(out[t * 2], t < 32 ? 0xffffffffu : 0xffu) << t;
        unsigned lane = t & 31, count = t < 32 ? 32 : 8;
        EXPECT_EQ(out[t * 2 + 1], lane + 4 < count ? t + 4 : t) << t; // missing source: own value
    }
}

__global__ void divergentShuffles(int* out) {
    int lane = threadIdx.x;
    int v = 0;
    if (lane < 16) {
        v = __shfl_xor_sync(0x0000ffffu, lane, 1);
    } else {
        __syncwarp(0xffff0000u);
        v = __shfl_sync(0xffff0000u, lane * 100, 31);
    }
    out[lane] = v;
}

TEST_F(Emu, CollectivesWithPartialMasksInDivergentCode) {
    int* out = managed<int>(32, -1);
    MEMPLACE_LAUNCH(divergentShuffles, 1, 32, 0, 0, out);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (int l = 0; l < 16; ++l)
        EXPECT_EQ(out[l], l ^ 1);
    for (int l = 16; l < 32; ++l)
        EXPECT_EQ(out[l], 3100);
}

__global__ void activeMaskKernel(unsigned* out) {
    int lane = threadIdx.x;
    unsigned m = 0;
    if (lane % 3 == 0) {
        m = __activemask();
    } else {
        m = __activemask();
    }
    unsigned all = __activemask();
    out[lane * 2] = m;
    out[lane * 2 + 1] = all;
}

TEST_F(Emu, ActiveMaskSeesTheConvergedLanes) {
    unsigned* out = managed<unsigned>(64);
    MEMPLACE_LAUNCH(activeMaskKernel, 1, 32, 0, 0, out);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    unsigned thirds = 0;
    for (int l = 0; l < 32; l += 3)
        thirds |= 1u << l;
    for (int l = 0; l < 32; ++l) {
        EXPECT_EQ(out[l * 2], l % 3 == 0 ? thirds : ~thirds) << l;
        EXPECT_EQ(out[l * 2 + 1], 0xffffffffu) << l;
    }
}

// ---- atomics ------------------------------------------------------------------------------------

__global__ void histogram(const int* data, int n, unsigned* bins, unsigned long long* total,
                          float* fsum, int* mx, int* mn) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicAdd(&bins[data[i] % 16], 1u);
        atomicAdd(total, static_cast<unsigned long long>(data[i]));
        atomicAdd(fsum, 1.0f);
        atomicMax(mx, data[i]);
        atomicMin(mn, data[i]);
    }
}

TEST_F(Emu, AtomicsAreCorrectWithSeveralOsThreads) {
    for (unsigned workers : {1u, 2u, 4u}) {
        memplace::emu::setWorkerThreads(workers);
        const int n = 20000;
        int* data = managed<int>(n);
        for (int i = 0; i < n; ++i)
            data[i] = (i * 7919) % 10007;
        unsigned* bins = managed<unsigned>(16, 0u);
        auto* total = managed<unsigned long long>(1, 0ull);
        float* fsum = managed<float>(1, 0.0f);
        int* mx = managed<int>(1, -1);
        int* mn = managed<int>(1, 1 << 30);
        MEMPLACE_LAUNCH(histogram, 37, 128, 0, 0, data, n, bins, total, fsum, mx, mn);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        unsigned expectBins[16] = {};
        unsigned long long expectTotal = 0;
        for (int i = 0; i < n; ++i) {
            ++expectBins[data[i] % 16];
            expectTotal += static_cast<unsigned long long>(data[i]);
        }
        for (int b = 0; b < 16; ++b)
            EXPECT_EQ(bins[b], expectBins[b]) << workers;
        EXPECT_EQ(*total, expectTotal);
        EXPECT_EQ(*fsum, static_cast<float>(n));
        EXPECT_EQ(*mx, *std::max_element(data, data + n));
        EXPECT_EQ(*mn, *std::min_element(data, data + n));
    }
}

__global__ void incDecCas(unsigned* inc, unsigned* dec, int* cas, unsigned long long* exch) {
    atomicInc(inc, 9u);
    atomicDec(dec, 9u);
    int old = atomicCAS(cas, static_cast<int>(threadIdx.x), static_cast<int>(threadIdx.x) + 1);
    (void)old;
    atomicExch(exch, 42ull);
}

TEST_F(Emu, AtomicIncDecCas) {
    unsigned* inc = managed<unsigned>(1, 0u);
    unsigned* dec = managed<unsigned>(1, 0u);
    int* cas = managed<int>(1, 0);
    auto* exch = managed<unsigned long long>(1, 0ull);
    MEMPLACE_LAUNCH(incDecCas, 1, 25, 0, 0, inc, dec, cas, exch);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(*inc, 25u % 10u);               // wraps to 0 after 9
    EXPECT_EQ(*dec, (10u - 25u % 10u) % 10u); // 0 -> 9 -> 8 ...
    EXPECT_EQ(*cas, 25);                      // threads run in order: each CAS succeeds
    EXPECT_EQ(*exch, 42ull);
}

__global__ void spinLock(int* lock, int* counter) {
    // Every thread of the warp takes the lock in turn: a failed atomicCAS yields.
    bool done = false;
    while (!done) {
        if (atomicCAS(lock, 0, 1) == 0) {
            int c = *counter;
            __nanosleep(10);
            *counter = c + 1;
            __threadfence();
            atomicExch(lock, 0);
            done = true;
        }
    }
}

TEST_F(Emu, SpinLocksWithinAWarpMakeProgress) {
    int* lock = managed<int>(1, 0);
    int* counter = managed<int>(1, 0);
    MEMPLACE_LAUNCH(spinLock, 3, 64, 0, 0, lock, counter);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(*counter, 192);
}

// ---- faults ------------------------------------------------------------------------------------

__global__ void deadlockKernel(int* out) {
    int v = static_cast<int>(threadIdx.x);
    if (threadIdx.x == 0)
        __syncthreads(); // lane 0 waits for the block, the others for lane 0
    v = __shfl_sync(0xffffffffu, v, 0);
    out[threadIdx.x] = v;
}

TEST_F(Emu, DeadlockIsReportedWithKernelAndBlock) {
    int* out = managed<int>(64, -1);
    testing::internal::CaptureStderr();
    MEMPLACE_LAUNCH(deadlockKernel, 2, 64, 0, 0, out);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure); // sticky
    EXPECT_NE(err.find("deadlockKernel"), std::string::npos) << err;
    EXPECT_NE(err.find("block (0,0,0)"), std::string::npos) << err;
    EXPECT_NE(err.find("deadlock"), std::string::npos) << err;
    EXPECT_NE(err.find("__syncthreads"), std::string::npos) << err;
    EXPECT_NE(err.find("__shfl_sync"), std::string::npos) << err;
    EXPECT_NE(err.find("scheduler_test.cpp"), std::string::npos) << err;
    // The later launch fails with the sticky error; after reset the device works again.
    MEMPLACE_LAUNCH(reverseBlock, 1, 1, 0, 0, out, out);
    EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
    memplace::emu::resetStickyError();
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST(EmuDeathTest, DeadlockAbortsByDefault) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            memplace::emu::setFatalErrors(true);
            int* out = nullptr;
            cudaMallocManaged(&out, 64 * sizeof(int));
            MEMPLACE_LAUNCH(deadlockKernel, 1, 64, 0, 0, out);
        },
        "deadlock");
}

__global__ void barrierInOneWarpOnly(int* out) {
    if (threadIdx.x < 32) {
        __syncthreads();
    } else {
        int v = __shfl_sync(0xffffffffu, 1, 0);
        out[threadIdx.x] = v;
        __syncwarp();
        __syncthreads_count(1); // a different kind of barrier than the first warp's
    }
}

TEST_F(Emu, MismatchedBarrierKindsAreReported) {
    int* out = managed<int>(64);
    testing::internal::CaptureStderr();
    MEMPLACE_LAUNCH(barrierInOneWarpOnly, 1, 64, 0, 0, out);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
    EXPECT_NE(err.find("different kinds of block barrier"), std::string::npos) << err;
}

__global__ void maskWithoutSelf(int* out) {
    out[threadIdx.x] = __shfl_sync(0x1u, 5, 0);
}

TEST_F(Emu, CollectiveMaskMustIncludeTheCaller) {
    int* out = managed<int>(2);
    testing::internal::CaptureStderr();
    MEMPLACE_LAUNCH(maskWithoutSelf, 1, 2, 0, 0, out);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
    EXPECT_NE(err.find("does not include the calling lane 1"), std::string::npos) << err;
}

__global__ void trapping(int* out) {
    if (threadIdx.x == 3)
        __trap();
    out[threadIdx.x] = 1;
}

__global__ void throwing(int*) {
    throw std::runtime_error("boom");
}

TEST_F(Emu, TrapAndExceptionsStopTheKernel) {
    int* out = managed<int>(8, 0);
    testing::internal::CaptureStderr();
    MEMPLACE_LAUNCH(trapping, 1, 8, 0, 0, out);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
    EXPECT_NE(err.find("__trap"), std::string::npos) << err;
    EXPECT_NE(err.find("thread (3,0,0)"), std::string::npos) << err;
    memplace::emu::resetStickyError();
    testing::internal::CaptureStderr();
    MEMPLACE_LAUNCH(throwing, 1, 8, 0, 0, out);
    err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("boom"), std::string::npos) << err;
}

__global__ void waitsForAnotherBlock(volatile int* flag) {
    if (blockIdx.x == 0) {
        while (atomicCAS(const_cast<int*>(flag), 1, 1) != 1) {
        }
    } else {
        *flag = 1;
    }
}

TEST_F(Emu, SpinningOnAnotherBlockIsReportedNotHung) {
    int* flag = managed<int>(1, 0);
    memplace::emu::setSpinTimeout(0.2);
    testing::internal::CaptureStderr();
    MEMPLACE_LAUNCH(waitsForAnotherBlock, 2, 1, 0, 0, flag);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
    EXPECT_NE(err.find("spin"), std::string::npos) << err;
    memplace::emu::setSpinTimeout(10.0);
}

__global__ void launchesAKernel(int* out) {
    MEMPLACE_LAUNCH(trapping, 1, 1, 0, 0, out);
}

TEST_F(Emu, DynamicParallelismIsRejected) {
    int* out = managed<int>(1);
    testing::internal::CaptureStderr();
    MEMPLACE_LAUNCH(launchesAKernel, 1, 1, 0, 0, out);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(cudaGetLastError(), cudaErrorNotSupported);
    EXPECT_NE(err.find("dynamic parallelism"), std::string::npos) << err;
}

// ---- several OS threads give the same results --------------------------------------------------

__global__ void stencil(const float* in, float* out, int n) {
    __shared__ float s[130];
    int g = blockIdx.x * 128 + threadIdx.x;
    s[threadIdx.x + 1] = g < n ? in[g] : 0.0f;
    if (threadIdx.x == 0)
        s[0] = g > 0 ? in[g - 1] : 0.0f;
    if (threadIdx.x == 127)
        s[129] = g + 1 < n ? in[g + 1] : 0.0f;
    __syncthreads();
    if (g < n)
        out[g] = 0.25f * s[threadIdx.x] + 0.5f * s[threadIdx.x + 1] + 0.25f * s[threadIdx.x + 2];
}

TEST_F(Emu, SeveralOsThreadsComputeTheSameResult) {
    const int n = 128 * 50 + 17;
    float* in = managed<float>(n);
    for (int i = 0; i < n; ++i)
        in[i] = static_cast<float>((i * 37) % 101);
    float* one = managed<float>(n);
    float* four = managed<float>(n);
    MEMPLACE_LAUNCH(stencil, (n + 127) / 128, 128, 0, 0, in, one, n);
    memplace::emu::setWorkerThreads(4);
    MEMPLACE_LAUNCH(stencil, (n + 127) / 128, 128, 0, 0, in, four, n);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(std::memcmp(one, four, n * sizeof(float)), 0);
    for (int i = 1; i + 1 < n; ++i)
        ASSERT_EQ(one[i], 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1]);
}

} // namespace

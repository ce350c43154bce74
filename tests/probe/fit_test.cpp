// The fits of `memplace probe`, on curves generated from known parameters.
#include "probe/fit.h"

#include <gtest/gtest.h>

#include <cmath>

namespace memplace::probe {
namespace {

constexpr double kKB = 1024;

TEST(RoundCapacity, SixteenthsOfAPowerOfTwo) {
    EXPECT_EQ(roundCapacity(248 * kKB), 248 * 1024u);
    EXPECT_EQ(roundCapacity(240.5 * kKB), 240 * 1024u);
    EXPECT_EQ(roundCapacity(2050), 2048u);
    EXPECT_EQ(roundCapacity(50.3 * kKB * kKB), 50u << 20);
    EXPECT_EQ(roundCapacity(0), 0u);
    EXPECT_EQ(roundCapacity(-5), 0u);
}

TEST(Median, OddEvenEmpty) {
    EXPECT_EQ(median({3, 1, 2}), 2);
    EXPECT_EQ(median({4, 1, 2, 3}), 2.5);
    EXPECT_EQ(median({}), 0);
}

std::vector<Point> randomAccessCurve(double capacity, double hit, double miss,
                                     const std::vector<double>& sizes) {
    std::vector<Point> pts;
    for (double s : sizes) {
        double h = std::min(1.0, capacity / s);
        pts.push_back({s, hit * h + miss * (1 - h)});
    }
    return pts;
}

TEST(EstimateCapacity, RandomAccessCurveGivesTheCapacity) {
    std::vector<double> sizes;
    for (double k : {16, 64, 128, 192, 224, 240, 256, 288, 320, 384, 512}) {
        sizes.push_back(k * kKB);
    }
    auto est = estimateCapacity(randomAccessCurve(240 * kKB, 33, 260, sizes), 33, 260);
    EXPECT_NEAR(est.bytes, 240 * kKB, 1);
    EXPECT_FALSE(est.lowerBound);
    EXPECT_EQ(est.largestFit, static_cast<uint64_t>(240 * kKB));
    EXPECT_GE(est.pointsInRange, 2);
    EXPECT_NE(est.how.find("median"), std::string::npos);
}

TEST(EstimateCapacity, CliffGivesTheLargestSetThatStaysHalfResident) {
    // LRU under a cyclic pattern: everything hits up to 2 KB, nothing past it.
    std::vector<Point> pts = {{512, 24}, {1024, 24}, {2048, 24.5}, {2560, 80}, {4096, 80}};
    auto est = estimateCapacity(pts, 24, 80);
    EXPECT_EQ(est.bytes, 2048);
    EXPECT_EQ(est.pointsInRange, 0);
    EXPECT_NE(est.how.find("sharp drop"), std::string::npos);
}

TEST(EstimateCapacity, FullPassTakesTheLargestSetBeforeTheDrop) {
    // Recorded on an H100 (constant cache, sequential then random pass over every line): the
    // C/S reading of the partial points would say 1 KB; the cache holds 2 KB.
    std::vector<Point> pts = {{1536, 29.5}, {2048, 33.9}, {2560, 69.0},
                              {3072, 76.5}, {4096, 89.6}, {8192, 96.6}};
    auto full = estimateCapacity(pts, 28.0, 98.1, 0, SweepModel::FullPass);
    EXPECT_EQ(full.bytes, 2048);
    EXPECT_NE(full.how.find("every line visited"), std::string::npos);
    auto subset = estimateCapacity(pts, 28.0, 98.1, 0, SweepModel::RandomSubset);
    EXPECT_LT(subset.bytes, 1100);
}

TEST(EstimateCapacity, EverythingFitsIsALowerBound) {
    std::vector<Point> pts = {{8192, 80}, {32768, 80.5}, {65536, 81}, {131072, 90}};
    auto est = estimateCapacity(pts, 80, 240, 65536);
    EXPECT_TRUE(est.lowerBound);
    EXPECT_EQ(est.bytes, 65536); // the point past maxBytes is ignored
}

TEST(EstimateCapacity, DegenerateInputSaysSo) {
    EXPECT_EQ(estimateCapacity({}, 10, 20).bytes, 0);
    EXPECT_EQ(estimateCapacity({{1024, 5}}, 20, 10).bytes, 0);
}

std::vector<Point> strideCurve(double block, double hit, double miss) {
    std::vector<Point> pts;
    for (double s : {8, 16, 32, 64, 128, 256, 512}) {
        pts.push_back({s, hit + (miss - hit) * std::min(1.0, s / block)});
    }
    return pts;
}

TEST(FitGranularity, RecoversTheFetchUnit) {
    for (double b : {32.0, 64.0, 128.0}) {
        auto g = fitGranularity(strideCurve(b, 33, 260), 33);
        EXPECT_EQ(g.bytes, static_cast<uint64_t>(b));
        EXPECT_NEAR(g.miss, 260, 1e-6);
        EXPECT_NEAR(g.rms, 0, 1e-6);
    }
}

TEST(FitGranularity, ToleratesNoise) {
    auto pts = strideCurve(32, 33, 260);
    pts[0].y += 3;
    pts[3].y -= 4;
    pts[6].y += 5;
    EXPECT_EQ(fitGranularity(pts, 33).bytes, 32u);
}

TEST(FitTwoLevelGranularity, RecoversBothUnits) {
    std::vector<Point> pts;
    for (double s : {4, 8, 16, 32, 64, 128, 256, 512, 1024}) {
        pts.push_back({s, 24 + 56 * std::min(1.0, s / 64) + 160 * std::min(1.0, s / 256)});
    }
    auto g = fitTwoLevelGranularity(pts, 24, 80);
    EXPECT_EQ(g.first, 64u);
    EXPECT_EQ(g.second, 256u);
    EXPECT_NEAR(g.last, 240, 1e-6);
}

TEST(ConflictDegree, FourByteWordsThirtyTwoBanks) {
    EXPECT_EQ(conflictDegree(1, 32, 32, 8192), 1u);
    EXPECT_EQ(conflictDegree(2, 32, 32, 8192), 2u);
    EXPECT_EQ(conflictDegree(3, 32, 32, 8192), 1u);
    EXPECT_EQ(conflictDegree(16, 32, 32, 8192), 16u);
    EXPECT_EQ(conflictDegree(32, 32, 32, 8192), 32u);
    EXPECT_EQ(conflictDegree(33, 32, 32, 8192), 1u);
    EXPECT_EQ(conflictDegree(1, 16, 32, 8192), 2u);
    EXPECT_EQ(conflictDegree(32, 64, 32, 8192), 16u);
    EXPECT_EQ(conflictDegree(0, 32, 32, 8192), 1u); // one word: a broadcast
}

TEST(FitBanks, RecoversTheBankCount) {
    for (uint32_t banks : {16u, 32u, 64u}) {
        std::vector<Point> pts;
        for (int s : {1, 2, 3, 4, 8, 16, 17, 31, 32, 33, 48, 64, 128}) {
            double deg = conflictDegree(s, banks, 32, 8192);
            pts.push_back({static_cast<double>(s), 30 + 2 * (deg - 1)});
        }
        auto b = fitBanks(pts);
        EXPECT_EQ(b.banks, banks);
        EXPECT_NEAR(b.base, 30, 1e-6);
        EXPECT_NEAR(b.perWay, 2, 1e-6);
    }
}

TEST(FitLine, ExactLine) {
    auto f = fitLine({{1, 5}, {2, 7}, {4, 11}});
    EXPECT_NEAR(f.intercept, 3, 1e-9);
    EXPECT_NEAR(f.slope, 2, 1e-9);
}

TEST(Nnls, SolvesAndKeepsNonNegative) {
    // Exact solution (1, 2).
    auto x = nnls({{1, 0}, {0, 1}, {1, 1}}, {1, 2, 3});
    EXPECT_NEAR(x[0], 1, 1e-9);
    EXPECT_NEAR(x[1], 2, 1e-9);
    // Unconstrained solution (-1, 2): the constraint moves it to the boundary.
    auto y = nnls({{1, 0}, {0, 1}}, {-1, 2});
    EXPECT_EQ(y[0], 0);
    EXPECT_NEAR(y[1], 2, 1e-9);
    // Badly scaled columns, as in the concurrency fit.
    auto z = nnls({{2e4, 0}, {0, 3e6}, {1e4, 1e6}}, {1, 1, 1});
    EXPECT_GT(z[0], 0);
    EXPECT_GT(z[1], 0);
}

TEST(FitConcurrency, RecoversFactorsFromKernels) {
    std::map<std::string, double> latency = {{"L1", 32}, {"global", 480}, {"L2", 260}};
    std::map<std::string, double> truth = {{"L1", 1e-4}, {"global", 4e-5}, {"L2", 5e-5}};
    double clock = 1500;
    auto kernel = [&](std::string name, std::map<std::string, double> n) {
        KernelMeasurement k;
        k.name = std::move(name);
        k.regime = "memory";
        double cycles = 0;
        for (const auto& [mem, count] : n) {
            cycles += count * latency[mem] * truth[mem];
        }
        k.ms = cycles / (clock * 1e3);
        k.transactions = std::move(n);
        return k;
    };
    std::vector<KernelMeasurement> ks = {kernel("l1", {{"L1", 1e9}}),
                                         kernel("dram", {{"global", 3e7}}),
                                         kernel("mixed", {{"L2", 1e7}, {"global", 1e7}})};
    KernelMeasurement other = ks[0];
    other.regime = "compute";
    other.ms *= 10;
    ks.push_back(other);
    auto fit = fitConcurrency(ks, "memory", latency, clock);
    ASSERT_EQ(fit.factor.size(), 3u);
    for (const auto& [mem, a] : truth) {
        EXPECT_NEAR(fit.factor[mem] / a, 1, 1e-6) << mem;
    }
    EXPECT_NEAR(fit.rmsRelativeError, 0, 1e-6);
    EXPECT_EQ(fit.kernels.size(), 3u);
    EXPECT_EQ(fit.kernelsOf["global"].size(), 2u);
    auto compute = fitConcurrency(ks, "compute", latency, clock);
    EXPECT_NEAR(compute.factor["L1"] / 1e-3, 1, 1e-6);
}

TEST(FitConcurrency, SkipsKernelsWithUnknownLatencies) {
    KernelMeasurement k;
    k.name = "x";
    k.regime = "memory";
    k.ms = 1;
    k.transactions = {{"nowhere", 10}};
    auto fit = fitConcurrency({k}, "memory", {{"L1", 30}}, 1000);
    EXPECT_TRUE(fit.factor.empty());
}

} // namespace
} // namespace memplace::probe

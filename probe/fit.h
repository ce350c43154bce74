// Fitting microbenchmark measurements: capacities from working-set sweeps, fetch granularity
// from stride sweeps, the shared-memory bank count from a conflict sweep, and PORPLE's
// concurrency factors from timed calibration kernels. Pure functions of numbers: unit-tested.
#pragma once

#include "probe/measurements.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace memplace::probe {

double median(std::vector<double> v);

/// Rounds a measured capacity to a sixteenth of its power of two (248 KB stays 248 KB, 50.3 MB
/// becomes 50 MB, 2050 B becomes 2 KB).
uint64_t roundCapacity(double bytes);

/// How a capacity sweep touched its set, which decides how the curve past capacity reads.
enum class SweepModel {
    /// The set was brought in, then a random subset of it chased once: past the capacity C the
    /// resident fraction is ~ C / S, so each point with 0.15 <= h <= 0.85 estimates C = h * S
    /// (the median is taken).
    RandomSubset,
    /// Every line of the set is visited each pass (a sequential pass, then a random one): an
    /// LRU-like cache evicts lines before their turn and the hits collapse right past the
    /// capacity, so the capacity is the largest size before h first falls below one half.
    FullPass,
};

/// Capacity of a cache from a working-set sweep (x = bytes of the set, y = cycles per access).
/// `hit` and `miss` are the latencies of a hit in this cache and in the level below; each point
/// gives the resident fraction h = (miss - y) / (miss - hit). RandomSubset falls back to the
/// FullPass rule when no point lies in its range (a cliff); when every point hits, the largest
/// size is a lower bound.
struct CapacityEstimate {
    double bytes = 0;        ///< unrounded estimate; 0 when the sweep says nothing
    bool lowerBound = false; ///< every measured size fit: the cache is at least this large
    uint64_t largestFit = 0; ///< the largest size with h >= 0.97 (all smaller ones too)
    int pointsInRange = 0;   ///< points used by the h * S estimate
    std::string how;         ///< one line for the spec comment
};
CapacityEstimate estimateCapacity(const std::vector<Point>& sweep, double hit, double miss,
                                  double maxBytes = 0, SweepModel model = SweepModel::RandomSubset);

/// Fetch granularity from a stride sweep over cold lines (x = stride, y = cycles per access):
/// y(s) = hit + (miss - hit) * min(1, s / b). `hit` is given; `miss` is fitted by least squares
/// for each candidate b (powers of two from 4 to 4096); the b with the least squared error wins.
struct GranularityEstimate {
    uint64_t bytes = 0;
    double miss = 0; ///< fitted latency of the level below
    double rms = 0;  ///< root-mean-square residual, cycles
};
GranularityEstimate fitGranularity(const std::vector<Point>& sweep, double hit);

/// Two nested levels: y(s) = l0 + (l1 - l0) min(1, s/b1) + (l2 - l1) min(1, s/b2), b1 <= b2,
/// with l0, l1 given and l2 fitted.
struct TwoLevelGranularity {
    uint64_t first = 0;
    uint64_t second = 0;
    double last = 0; ///< fitted l2
    double rms = 0;
};
TwoLevelGranularity fitTwoLevelGranularity(const std::vector<Point>& sweep, double l0, double l1);

/// The conflict degree of one warp reading 4-byte words (lane * stride) % words with `banks`
/// banks: the most distinct words that fall in one bank.
uint32_t conflictDegree(uint32_t stride, uint32_t banks, uint32_t warpSize, uint32_t words);

/// Bank count from a conflict sweep (x = word stride, y = cycles per warp load): for each
/// candidate count, y = base + perWay * (degree - 1) by least squares; the least error wins.
struct BankEstimate {
    uint32_t banks = 0;
    double base = 0;   ///< cycles of a conflict-free load
    double perWay = 0; ///< cycles each further way of a conflict adds
    double rms = 0;
    double worst = 0; ///< measured cycles of the worst (32-way) point
};
BankEstimate fitBanks(const std::vector<Point>& sweep, uint32_t warpSize = 32,
                      uint32_t words = 8192);

struct LineFit {
    double intercept = 0;
    double slope = 0;
};
LineFit fitLine(const std::vector<Point>& pts);

/// Non-negative least squares min ||A x - b|| with x >= 0, by cyclic coordinate descent (the
/// problems here have a handful of unknowns). A is row-major, rows x cols.
std::vector<double> nnls(const std::vector<std::vector<double>>& a, const std::vector<double>& b,
                         int maxSweeps = 20000);

/// PORPLE's T = sum_j N_j * T_j * a_j fitted to calibration kernels: for one regime
/// ("memory" or "compute"), a_j minimises sum_k (predicted_k / measured_k - 1)^2 with a_j >= 0,
/// where N_j is the whole grid's transactions served at level j, T_j the latency of level j in
/// cycles, and the measured time is in SM cycles (ms x clock).
struct KernelFit {
    std::string name;
    double measuredCycles = 0;
    double predictedCycles = 0;
};
struct ConcurrencyFit {
    std::map<std::string, double> factor; ///< memory -> a_j (only memories some kernel served)
    std::map<std::string, std::vector<std::string>> kernelsOf; ///< memory -> calibration kernels
    std::vector<KernelFit> kernels;
    double rmsRelativeError = 0;
};
ConcurrencyFit fitConcurrency(const std::vector<KernelMeasurement>& kernels,
                              const std::string& regime,
                              const std::map<std::string, double>& latency, double clockMHz);

} // namespace memplace::probe

// The pure parts of active profiling (memplace/emu/profile.h), tested on their own
// (tests/emu/profile_test.cpp): the stopping rule, rebuilding warp records from lanes run alone,
// and extrapolating units (lanes, warps) that were not run.
#pragma once

#include "memplace/emu/profile.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace memplace::emu::detail {

/// One lane access: the rendezvous key and the element offset.
struct LaneAccess {
    unsigned long long key = 0;
    long long value = 0;
    unsigned long long order = 0; ///< the rendezvous order (the tracing accessor's site order)
    bool operator==(const LaneAccess&) const = default;
};
using LaneSequence = std::vector<LaneAccess>;

/// A warp record before it gets its block and warp.
struct WarpRecord {
    unsigned long long key = 0;
    unsigned long long order = 0;
    uint32_t mask = 0;
    std::array<long long, 32> values{};
    bool extrapolated = false;
};
using WarpRecords = std::vector<WarpRecord>;

/// PORPLE's stopping rule over units added one at a time: per key, the running mean of every
/// value seen so far. stable() after the latest unit: every key has a mean that moved by at most
/// tol x |previous mean|, or whose move differs from the previous move by at most
/// tol x |previous move|; keys first seen in the latest unit are not stable.
class RunningMeans {
public:
    void addUnit(const std::vector<LaneAccess>& accesses);
    bool stable(double tol) const;
    unsigned units() const { return units_; }

private:
    struct Key {
        long double sum = 0;
        uint64_t count = 0;
        long double mean = 0, prevMean = 0;
        long double delta = 0, prevDelta = 0;
        unsigned seenUnits = 0; ///< units after which this key had a mean
        unsigned lastUnit = 0;
    };
    std::map<unsigned long long, Key> keys_;
    unsigned units_ = 0;
};

/// The warp's records from its lanes' own sequences (each lane run alone), as the warp rendezvous
/// would have grouped them: every lane waits at its next access, the accesses with the smallest
/// order (then the lowest lane's key) form the next record. For lanes that run the same
/// sequence of sites this is the warp's record list exactly; lanes that leave a loop early wait
/// after it for the others, as on the GPU.
WarpRecords zipLanes(const std::vector<LaneSequence>& lanes);

/// The key sequence of a lane, and the (key, mask) sequence of a warp: units with equal shapes
/// can be extrapolated element by element.
bool sameShape(const LaneSequence& a, const LaneSequence& b);
bool sameShape(const WarpRecords& a, const WarpRecords& b);

/// The value of element `j` of an extrapolated unit at position x from three profiled units at
/// positions xa < xb < xc (values va, vb, vc): affine when (va, vb, vc) are affine in x with an
/// integer slope, else the value of unit (a, b, c)[cycle % 3].
long long extrapolateValue(long long xa, long long va, long long xb, long long vb, long long xc,
                           long long vc, long long x, unsigned cycle, bool* affine);

/// Lanes `from`..`count-1` of a warp from its last three profiled lanes (same shape).
LaneSequence extrapolateLane(const LaneSequence& a, const LaneSequence& b, const LaneSequence& c,
                             unsigned lane, unsigned laneA, unsigned laneB, unsigned laneC);

/// A warp at global warp index x from the last three profiled warps (same shape) at xa, xb, xc;
/// `exists`: the lanes that exist in the new warp (a partial last warp).
WarpRecords extrapolateWarp(const WarpRecords& a, const WarpRecords& b, const WarpRecords& c,
                            long long xa, long long xb, long long xc, long long x, uint32_t exists);

/// Every lane access of a warp's records, for the running means.
std::vector<LaneAccess> laneAccesses(const WarpRecords& records);

/// Appends a finished profile's statistics to the history (and the report file at exit).
void recordProfileStats(const ProfileStats& stats);

} // namespace memplace::emu::detail

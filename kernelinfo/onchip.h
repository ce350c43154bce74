// On-chip facts: what the frontend decides about a kernel's `__shared__` arrays, its barriers and
// its loads, for the on-chip placements of issue 27 (P1 shared -> registers, P2 shared ->
// local/global, P3 thread coarsening). Plain data with the clang-free analyses that decide them
// from KernelInfo; the frontend adds what needs the AST (which accesses can run before and after
// each `__syncthreads()`). docs/onchip.md says what each fact means; decision 036 says which
// answers are conservative. Every "yes" here is a proof under the stated block bounds; every
// doubt is a "no" (not private, not constant, barrier needed) with a reason.
#pragma once

#include "common/diagnostics.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memplace::kernelinfo {

struct KernelInfo;
struct Site;
using SiteId = int;

/// One `__shared__` array (static or `extern`).
struct SharedArrayFacts {
    std::string array;
    /// No element is touched by two threads of a block (every access, read or write, over every
    /// loop iteration): the array can become per-thread storage.
    bool threadPrivate = false;
    std::string privacy; ///< why it is private, or why it is not (the first reason found)
    /// Every access's per-thread index (the index less its thread part) is a compile-time
    /// constant once loops with constant trip counts are fully unrolled: registers (P1) rather
    /// than local memory (P2). Meaningful for private arrays; computed for all.
    bool constantIndices = false;
    std::string indexReason; ///< when not constant: the first index that is not, and why
    /// Loop-weighted reference counts: each site counts the product of its loops' trip counts
    /// (kUnknownTripWeight for a loop without a constant one) times its call paths.
    uint64_t reads = 0;
    uint64_t writes = 0;
    bool estimated = false; ///< some enclosing loop has no constant trip count
    bool operator==(const SharedArrayFacts&) const = default;
};

/// One `__syncthreads()` (or `__syncthreads_count/and/or`, `__barrier_sync`) as written.
struct BarrierInfo {
    SourceLocation location; ///< the call
    std::string function;    ///< the function it is written in (the kernel or a helper)
    /// A write by one thread and an access by another of the same element can run on the two
    /// sides of it, with no other barrier between (or the analysis cannot rule that out).
    /// Each verdict assumes every other barrier stays.
    bool needed = true;
    std::string reason;
    bool operator==(const BarrierInfo&) const = default;
};

/// A load whose index does not depend on threadIdx.x or threadIdx.y: the threads that differ
/// only in that dimension load the same element (a coarsening opportunity, P3).
struct InvariantLoad {
    SiteId site = 0;
    std::string array;
    std::string dims; ///< "x", "y" or "xy": the thread dimensions the index does not use
    bool operator==(const InvariantLoad&) const = default;
};

struct OnChipFacts {
    std::optional<int64_t> maxThreads; ///< `__launch_bounds__(N)`: at most N threads per block
    /// The `extern __shared__` arrays: all of them are the block's dynamic shared memory.
    std::vector<std::string> externShared;
    std::vector<SharedArrayFacts> shared;      ///< in the order of KernelInfo::arrays
    std::vector<BarrierInfo> barriers;         ///< in source order
    std::vector<InvariantLoad> invariantLoads; ///< by site id
    bool empty() const {
        return !maxThreads && externShared.empty() && shared.empty() && barriers.empty() &&
               invariantLoads.empty();
    }
    bool operator==(const OnChipFacts&) const = default;
};

/// The weight of a loop whose trip count is not a constant (the dissertation's heuristic).
constexpr uint64_t kUnknownTripWeight = 4;

/// What is known of a block's shape: per dimension the most threads it may have, and whether
/// that is the exact size (a constant launch in the file).
struct BlockBounds {
    std::array<int64_t, 3> max{1024, 1024, 64};
    bool exact = false;
    int64_t maxThreads = 1024; ///< of the whole block
};
/// The bounds from the kernel's constant launch (KernelInfo::blockDim), else from
/// `__launch_bounds__`, else the hardware's.
BlockBounds blockBounds(const KernelInfo& k);

/// Whether access `a` by one thread and access `b` by another thread of the same block may touch
/// the same element of an array both access, over any loop iterations. False only when proven;
/// `why` says what was found either way.
bool mayTouchSameElement(const Site& a, const Site& b, const BlockBounds& bounds, std::string& why);

/// The accesses that may run on each side of one barrier with no other barrier between them.
struct BarrierSides {
    std::vector<SiteId> before, after;
    std::string opaque; ///< non-empty: something there the analysis cannot see into (what)
};
/// Why some access of the kernel may not be among its sites (a hazard that hides accesses of an
/// array, an untracked access, an access through an unknown pointer); nullopt when none.
std::optional<std::string> hiddenAccess(const KernelInfo& k);
/// The verdict on one barrier: `needed` and `reason` of a BarrierInfo.
void judgeBarrier(const KernelInfo& k, const BarrierSides& sides, BarrierInfo& out);

/// Fills k.onchip.shared and k.onchip.invariantLoads from the arrays, sites and loops.
void computeSharedFacts(KernelInfo& k);
void computeInvariantLoads(KernelInfo& k);

} // namespace memplace::kernelinfo

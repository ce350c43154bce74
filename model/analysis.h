// The expensive half of the model, done once per trace and spec: for every array, the
// transactions its accesses need in every memory it could be placed in, and its reuse-distance
// histograms at every cache level (line size and sharing scope). Evaluating a placement
// (model.h) then only combines these numbers, so a search can evaluate thousands.
//
// Streams. A cache shared by an SM sees the accesses of the blocks resident on that SM: blocks
// are given to SMs as the hardware does at launch (block b to SM b mod #SMs, R at a time, R the
// resident blocks per SM under the original placement), and the warps of co-resident blocks are
// interleaved instruction by instruction (one record each in turn). A device-wide cache (L2)
// sees the SM streams interleaved record by record. Block- and warp-scoped caches see one
// block's or one warp's records. Each array has its own stream at each level (PORPLE's
// per-array histograms); arrays sharing a cache are combined when a placement is evaluated.
//
// Writes. L1 and the other SM-scoped caches are write-through on sm_70+: writes and atomics
// skip them and are counted at the first device-scoped level (L2), in the same stack as reads.
//
// Sampling. Traces that cover some blocks only (GPU tracing samples blocks) have every count
// multiplied by blocks / traced blocks; device-scoped reuse distances are stretched by how much
// of an array's footprint the untraced blocks would add, and first touches the grid could not
// make (more than the array's lines) become reuses (see docs/trace-format.md). Traces too
// large for exact analysis can be analysed with spatially hashed line sampling (SHARDS,
// Waldspurger et al., FAST'15): only lines whose hash falls below the rate are tracked, and
// their distances and counts are divided by the rate.
#pragma once

#include "common/expected.h"
#include "model/reuse.h"
#include "spec/spec.h"
#include "trace/trace.h"

#include <string>
#include <vector>

namespace memplace::model {

/// A cache's stream: its line size and who shares one instance.
struct StreamKind {
    uint64_t lineBytes = 32;
    spec::ShareScope scope = spec::ShareScope::Device;
    bool operator==(const StreamKind&) const = default;
};

/// One array's stream at one kind of cache.
struct ArrayStream {
    bool analysed = false;     ///< false: no candidate place of the array uses this kind
    Histogram reads;           ///< reuse distances (lines) of read line references
    Histogram writes;          ///< of write/atomic line references (device scope only)
    double footprintLines = 0; ///< distinct lines per stream instance (mean over instances)
    double instances = 0;      ///< stream instances (SMs, blocks, ...) the array appears in
    /// Device scope, sampled blocks: how much longer reuse distances would be with every block
    /// running (1 when every block was traced). The model divides capacities by it.
    double extrapolation = 1.0;
};

/// Why a place is not available to an array.
struct Exclusion {
    Place place = Place::Global;
    std::string reason;
};

struct ArrayStats {
    trace::ArrayInfo info;
    PlaceSet candidates;               ///< feasible on its own (capacity, mode, spec, producer)
    std::vector<Exclusion> exclusions; ///< every other place, with the reason

    // Grid-level counts (scaled to the whole grid when blocks were sampled).
    double readRequests = 0;  ///< warp-level read accesses
    double writeRequests = 0; ///< warp-level write and atomic accesses
    double readLanes = 0;
    double writeLanes = 0;
    /// Warp reads issued after a store to another array that waited on a load of the same warp
    /// (its value, address or condition came from a load since the warp's previous store), in a
    /// kernel without shared memory (so without block barriers). Through a plain pointer
    /// (global, l2persist) the compiler cannot move such a read above that store; through the
    /// read-only path, a texture or constant memory it can (decision 023).
    double orderedReadRequests = 0;
    /// Transactions of all reads (writes) under each spec memory's serialization condition,
    /// indexed like Spec::memories; 0 for memories no candidate place uses.
    std::vector<double> readTransactions;
    std::vector<double> writeTransactions;
    std::vector<ArrayStream> streams; ///< indexed like TraceStats::kinds

    // Pattern statistics (rules baseline, reports).
    double uniformFraction = 0;        ///< warp reads whose active lanes all read one element
    double sectorsPerRequest = 0;      ///< mean distinct 32-byte sectors per warp request
    double idealSectorsPerRequest = 0; ///< what contiguous lanes would need
    double multiRowFraction = 0;       ///< 2-D arrays: warp requests touching more than one row
    double blockReuse = 0;             ///< lane accesses per distinct element, per block (mean)
    bool singleWriterBlocks = true;    ///< every written element is written by one block only
    double copyBackSectors = 0;        ///< sum over blocks of distinct written 32-byte sectors
};

struct TraceStats {
    std::string kernel;
    trace::Dim3 grid;
    trace::Dim3 block;
    uint32_t threadsPerBlock = 0;
    uint32_t warpsPerBlock = 0;
    std::optional<uint32_t> registersPerThread;
    uint64_t sharedPerBlock = 0; ///< the kernel's own, without staged arrays
    uint64_t blocks = 0;
    uint64_t tracedBlocks = 0;
    double scale = 1.0;          ///< blocks / traced blocks
    uint32_t residentBlocks = 1; ///< per SM, original placement (used to build L1 streams)
    uint64_t records = 0;
    uint64_t lanes = 0;
    double lineSampleRate = 1.0; ///< < 1: SHARDS sampling was used
    std::vector<StreamKind> kinds;
    std::vector<int> memoryKind; ///< per spec memory: index into kinds for caches, else -1
    std::vector<ArrayStats> arrays;
    double seconds = 0;                                 ///< time the analysis took
    std::vector<std::pair<std::string, double>> phases; ///< seconds per phase
    std::vector<std::string> notes;                     ///< what a reader of the result should know
};

struct AnalysisOptions {
    /// 1: exact. Below 1: SHARDS sampling of lines at this rate (e.g. 0.01).
    double lineSampleRate = 1.0;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
};

Expected<TraceStats> analyze(const trace::Trace& t, const spec::Spec& s,
                             const AnalysisOptions& options = {});

/// Ground truth for the cache-sharing policies: the read hits each array gets (per array, grid
/// level: scaled like the analysis) in one fully associative LRU cache of `capacityBytes` with
/// `lineBytes` lines per stream instance of `scope`, shared by the arrays with `shares[i]` set,
/// in the interleaving the analysis uses. `residentBlocks` as TraceStats::residentBlocks.
/// Writes bypass SM-scoped caches as in the analysis.
std::vector<double> simulateSharedLru(const trace::Trace& t, const spec::Spec& s,
                                      spec::ShareScope scope, uint64_t lineBytes,
                                      double capacityBytes, const std::vector<bool>& shares,
                                      uint32_t residentBlocks);

/// How far two analyses of one trace (exact and sampled) disagree: the mean absolute difference
/// of their hit fractions at cache sizes of 2^4 .. 2^24 lines, over every analysed stream,
/// weighted by the stream's references. 0 for identical histograms.
double hitRatioError(const TraceStats& exact, const TraceStats& sampled);

} // namespace memplace::model

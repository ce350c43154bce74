// Warp-level access traces: what a kernel launch did to each of its arrays, one record per warp
// access, in per-warp program order. One trace serves every target GPU: the spec, not the trace,
// is device-specific. docs/trace-format.md describes the types, the text form and the binary
// format.
//
// Producers (the GPU tracing accessor, the CPU emulator, the importers) fill a TraceHeader and
// hand each warp access to a TraceBuilder; finish() checks everything and gives a Trace whose
// records are grouped by (block, warp), each warp's records in the order they were added.
#pragma once

#include "common/access_mode.h"
#include "common/expected.h"
#include "common/place.h"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace memplace::trace {

/// What one warp access did. Atomic is a read-modify-write performed at L2 on sm_70+.
enum class AccessKind : uint8_t { Read = 0, Write = 1, Atomic = 2 };
std::string_view accessKindName(AccessKind k); ///< "read", "write", "atomic"

/// How the kernel uses an array as a whole (common/access_mode.h). A trace never holds None.
using ArrayMode = AccessMode;
std::string_view arrayModeName(ArrayMode m); ///< "read", "write", "readwrite", "atomic"
/// Read, Write, ReadWrite or Atomic by name ("none" is not a trace's mode).
std::optional<ArrayMode> parseArrayMode(std::string_view name);
/// The mode's number in the binary trace format (Read 0, Write 1, ReadWrite 2, Atomic 3), and
/// back (nullopt for an unknown number).
uint8_t arrayModeCode(ArrayMode m);
std::optional<ArrayMode> arrayModeFromCode(uint8_t code);

struct Dim3 {
    uint32_t x = 1;
    uint32_t y = 1;
    uint32_t z = 1;
    /// x * y * z; UINT64_MAX when the product does not fit (checkHeader rejects it).
    uint64_t count() const;
    bool operator==(const Dim3&) const = default;
};

/// The places a producer considers feasible when it does not know better: every place but
/// registers (registers need thread-private, compile-time-indexed arrays, which only the
/// frontend can tell).
inline constexpr PlaceSet kDefaultFeasible = {Place::Global,   Place::ReadOnly, Place::Texture,
                                              Place::Constant, Place::Shared,   Place::L2Persist};

/// A set of block ids kept as ascending [first, last] ranges, so that a traced range costs two
/// numbers, not one entry per block (`traced 0-1073741823` in a text trace is 20 bytes).
/// Ranges are appended in order; adjacent ones merge. Ranges that do not ascend are kept as
/// given, for checkHeader to report.
class BlockSet {
public:
    struct Range {
        uint32_t first = 0;
        uint32_t last = 0; ///< inclusive
        bool operator==(const Range&) const = default;
    };

    BlockSet() = default;
    BlockSet(std::initializer_list<uint32_t> ids);
    BlockSet(const std::vector<uint32_t>& ids); // NOLINT: a list of ids is a set of blocks

    /// Appends [first, last] (first <= last).
    void addRange(uint32_t first, uint32_t last);
    void add(uint32_t id) { addRange(id, id); }
    void clear();

    bool empty() const { return ranges_.empty(); }
    /// Number of block ids (ranges that overlap count twice; checkHeader rejects them).
    uint64_t size() const { return count_; }
    const std::vector<Range>& ranges() const { return ranges_; }
    /// Whether the ranges ascend without overlapping (what a valid trace needs).
    bool ascending() const;
    /// Whether `id` is in the set; the ranges must ascend.
    bool contains(uint32_t id) const;
    /// Every id, in order: for callers that visit each traced block anyway.
    std::vector<uint32_t> ids() const;

    bool operator==(const BlockSet&) const = default;

private:
    std::vector<Range> ranges_;
    uint64_t count_ = 0;
};

struct ArrayInfo {
    std::string name;         ///< unique within the trace; [A-Za-z_][A-Za-z0-9_.]*
    uint32_t elementSize = 4; ///< bytes, 1..4096
    uint64_t length = 0;      ///< elements, >= 1; lane offsets lie in [0, length)
    ArrayMode mode = ArrayMode::Read;
    PlaceSet feasible = kDefaultFeasible; ///< places the producer allows (the model narrows it)
    Place original = Place::Global;       ///< where the unmodified program keeps it
    uint32_t dims = 1;                    ///< 1, or 2 when the kernel indexes it as a 2-D array
    uint64_t rowLength = 0;               ///< elements per row when dims == 2, else 0

    uint64_t bytes() const { return length * elementSize; }
    bool operator==(const ArrayInfo&) const = default;
};

struct TraceHeader {
    std::string kernel; ///< kernel name; non-empty, no whitespace
    Dim3 grid;
    Dim3 block;
    std::optional<uint32_t> registersPerThread; ///< when known (ptxas, cudaFuncGetAttributes)
    std::optional<uint64_t> sharedPerBlock;     ///< bytes of the kernel's own static + dynamic
                                                ///< shared memory, without any staged array
    std::vector<ArrayInfo> arrays;              ///< at most 65535
    /// Linear ids (x + y*gx + z*gx*gy) of the blocks whose accesses were recorded, ascending.
    /// Empty means every block. A traced block that made no access belongs here too: the model
    /// scales counts by blocks / traced blocks.
    BlockSet tracedBlocks;

    uint64_t blockCount() const { return grid.count(); }
    uint32_t threadsPerBlock() const { return static_cast<uint32_t>(block.count()); }
    uint32_t warpsPerBlock(uint32_t warpSize = 32) const {
        return (threadsPerBlock() + warpSize - 1) / warpSize;
    }
    uint64_t tracedBlockCount() const {
        return tracedBlocks.empty() ? blockCount() : tracedBlocks.size();
    }
    bool sampled() const { return tracedBlockCount() < blockCount(); }
    /// Blocks / traced blocks: what sampled counts are multiplied by to stand for the grid.
    double scale() const {
        return static_cast<double>(blockCount()) / static_cast<double>(tracedBlockCount());
    }
    /// Index of the array named `name`, or nullopt.
    std::optional<uint16_t> findArray(std::string_view name) const;
    bool operator==(const TraceHeader&) const = default;
};

/// One warp access. The offsets of its active lanes are `popcount(mask)` consecutive entries of
/// Trace::offsets starting at `first`, in lane order.
struct Record {
    uint32_t block = 0; ///< linear block id
    uint32_t warp = 0;  ///< warp within the block: linear thread id / 32
    uint32_t site = 0;  ///< access site id (KernelInfo.sites[].id; any stable number)
    uint32_t mask = 0;  ///< active lanes, bit i = lane i; never 0
    uint64_t first = 0; ///< index of the first active lane's offset in Trace::offsets
    uint16_t array = 0; ///< index into TraceHeader::arrays
    AccessKind kind = AccessKind::Read;
    uint8_t lanes = 0; ///< popcount(mask)
};

/// A checked trace: records grouped by (block, warp) ascending, each warp's in program order.
class Trace {
public:
    Trace() = default;

    const TraceHeader& header() const { return header_; }
    const std::vector<Record>& records() const { return records_; }
    const std::vector<int64_t>& offsets() const { return offsets_; }
    std::span<const int64_t> lanes(const Record& r) const {
        return {offsets_.data() + r.first, r.lanes};
    }
    uint64_t laneCount() const { return offsets_.size(); }

    /// Records of each (block, warp), as [begin, end) ranges into records(), in record order.
    struct WarpRange {
        uint32_t block = 0;
        uint32_t warp = 0;
        uint32_t begin = 0;
        uint32_t end = 0;
    };
    std::vector<WarpRange> warpRanges() const;

private:
    friend class TraceBuilder;
    TraceHeader header_;
    std::vector<Record> records_;
    std::vector<int64_t> offsets_;
};

/// Collects warp accesses and checks them. Typical use by a tracer:
///
///   TraceHeader h;  h.kernel = "spmv";  h.grid = {64, 1, 1};  h.block = {256, 1, 1};
///   h.arrays.push_back({.name = "x", .elementSize = 4, .length = n, .mode = ArrayMode::Read});
///   h.tracedBlocks = {0, 1, 132, 133};               // or empty: every block
///   TraceBuilder b(std::move(h));
///   b.add(block, warp, site, array, AccessKind::Read, activeMask, offsetsOfActiveLanes);
///   Expected<Trace> t = std::move(b).finish();
///
/// add() only appends (it is called once per warp access and must be cheap); finish() checks
/// the header and every record (array index, mask, lane count, offsets within the array,
/// block within the grid and among the traced blocks, warp within the block) and reports the
/// first problems with the record's position. Records of one warp must be added in that
/// warp's program order; records of different warps may be interleaved in any way.
class TraceBuilder {
public:
    explicit TraceBuilder(TraceHeader header);

    /// One warp access: `offsets` holds the element offsets of the active lanes, lane order.
    void add(uint32_t block, uint32_t warp, uint32_t site, uint16_t array, AccessKind kind,
             uint32_t activeMask, std::span<const int64_t> offsets);
    /// Same, from a full 32-entry lane array (what a device record holds): entries of inactive
    /// lanes are ignored.
    void addLanes(uint32_t block, uint32_t warp, uint32_t site, uint16_t array, AccessKind kind,
                  uint32_t activeMask, const int64_t (&laneOffsets)[32]);

    size_t recordCount() const { return records_.size(); }
    uint64_t laneCount() const { return offsets_.size(); }
    const TraceHeader& header() const { return header_; }

    /// Checks and returns the trace. The builder is consumed. `where` names the source in
    /// messages (a file name).
    Expected<Trace> finish(std::string_view where = "trace") &&;

private:
    TraceHeader header_;
    std::vector<Record> records_;
    std::vector<int64_t> offsets_;
    std::string firstError_; ///< a problem add() could see cheaply (lane count)
};

/// Checks a header on its own: names, sizes, dimensions, traced blocks. `where` prefixes the
/// messages (a file name).
DiagnosticList checkHeader(const TraceHeader& h, std::string_view where);

/// Whether a name can be used for a kernel or an array in every form of a trace.
bool validTraceName(std::string_view name);

} // namespace memplace::trace

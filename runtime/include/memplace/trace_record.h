// The warp-level access record the tracing accessor writes, on the device and on the host alike.
// Plain, fixed-size and trivially copyable so that the host copies the device buffer back as is.
#pragma once

#include "memplace/rtc_std.h"

namespace memplace {

/// Flags of a TraceRecord.
enum TraceFlags : uint32_t {
    kTraceRead = 1u,   ///< the access reads the element
    kTraceWrite = 2u,  ///< the access writes the element
    kTraceAtomic = 4u, ///< `&a[...]` was taken (an atomic): read, write and atomic all set
};

/// One warp-level access: the lanes of one warp that performed one access site together.
///
/// - `block`: linear block index, blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z).
/// - `warp`: warp index in the block, (linear thread index) / 32.
/// - `site`: the site id from `memplace::at<Site>`; `array`: the array's index in the kernel
///   descriptor's `arrays`.
/// - `activeMask`: the lanes that made this access together (one group of
///   `__match_any_sync(__activemask(), site/array/flags)`).
/// - `offset[lane]`: element offset (index, not bytes) from the array's first element, for each
///   lane in `activeMask`; the host sets the other lanes' entries to 0.
///
/// Order: one warp's records appear in the buffer in the order the warp executed them when its
/// lanes stay converged; records of divergent groups of one warp interleave in execution order.
struct TraceRecord {
    uint32_t block;
    uint32_t site;
    uint16_t warp;
    uint16_t array;
    uint32_t activeMask;
    uint32_t flags;
    uint32_t reserved; // keeps offset[] 8-byte aligned; always 0
    int64_t offset[32];
};
static_assert(sizeof(TraceRecord) == 280, "TraceRecord layout is part of the interface");

/// Header of the device trace buffer: records[] follows it (aligned to 8).
struct TraceBufferHeader {
    unsigned long long count;    ///< records the kernel tried to write (may exceed capacity)
    unsigned long long capacity; ///< records the buffer holds
};

/// Where a traced launch writes its records (device pointers), and which blocks it samples.
struct TraceSink {
    TraceBufferHeader* header;
    TraceRecord* records;
    unsigned long long capacity;
    const unsigned* sampledBlocks; ///< bitmap over linear block ids; null: every block
};

} // namespace memplace

// The orders in which caches of each sharing scope see a trace's records (streams), and the
// reads a warp keeps behind its stores. Internal to the model's analysis (analysis.h explains
// the streams).
#pragma once

#include "trace/trace.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace memplace::model::detail {

/// A permutation of the records and where each stream instance ends.
struct Order {
    std::vector<uint32_t> idx;
    std::vector<size_t> segmentEnd;
};

struct BlockWarps {
    uint32_t block = 0;
    std::vector<std::pair<uint32_t, uint32_t>> warps; // record ranges
};

/// Each block's warps, as record ranges, in record order.
std::vector<BlockWarps> blocksOf(const trace::Trace& t);
/// SM streams: blocks b with b % sms == s, R at a time, warps interleaved.
Order smOrder(const std::vector<BlockWarps>& blocks, uint32_t sms, uint32_t resident);
/// The device stream: SM streams interleaved record by record.
Order deviceOrder(const Order& sm);
/// Block streams: each block's warps interleaved.
Order blockOrder(const std::vector<BlockWarps>& blocks);
/// Warp streams: each warp's records in order.
Order warpOrder(const trace::Trace& t);

/// Per array, the warp reads that follow (in the warp's program order) a store to another array
/// that itself waited on a load: a load of any other array since the warp's previous store. A
/// store of a constant or of a thread index waits on nothing; a load of the stored array's own
/// elements guards it at most (bfs clears mask[tid] after reading it), and a branch on a load
/// orders everything after it whatever the pointers are.
std::vector<double> orderedReads(const trace::Trace& t, size_t narrays);

} // namespace memplace::model::detail

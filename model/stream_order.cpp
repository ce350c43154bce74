// Stream orders (stream_order_internal.h) and the shared-LRU simulation that walks them
// (simulateSharedLru, the ground truth for the cache-sharing policies).
#include "model/analysis.h"
#include "model/lines_internal.h"
#include "model/stream_order_internal.h"

#include <algorithm>

namespace memplace::model {

using spec::ShareScope;
using trace::AccessKind;
using trace::Record;
using trace::Trace;

namespace detail {

namespace {

/// Round-robin over the given warp ranges, one record each in turn.
void interleave(std::vector<std::pair<uint32_t, uint32_t>>& cursors, std::vector<uint32_t>& out) {
    while (!cursors.empty()) {
        size_t k = 0;
        for (auto& c : cursors) {
            out.push_back(c.first++);
            if (c.first < c.second) {
                cursors[k++] = c;
            }
        }
        cursors.resize(k);
    }
}

} // namespace

std::vector<double> orderedReads(const Trace& t, size_t narrays) {
    std::vector<double> ordered(narrays, 0.0);
    const auto& records = t.records();
    std::vector<uint32_t> readSince; // arrays read since the warp's previous store
    std::vector<uint32_t> waited;    // arrays with a store that waited on a load
    for (const auto& w : t.warpRanges()) {
        readSince.clear();
        waited.clear();
        for (uint32_t i = w.begin; i < w.end; ++i) {
            const Record& r = records[i];
            const uint32_t a = r.array;
            if (r.kind == AccessKind::Read) {
                if (std::any_of(waited.begin(), waited.end(), [&](uint32_t b) { return b != a; })) {
                    ordered[a] += 1;
                }
                if (std::find(readSince.begin(), readSince.end(), a) == readSince.end()) {
                    readSince.push_back(a);
                }
                continue;
            }
            bool loadFed =
                std::any_of(readSince.begin(), readSince.end(), [&](uint32_t b) { return b != a; });
            if (loadFed && std::find(waited.begin(), waited.end(), a) == waited.end()) {
                waited.push_back(a);
            }
            readSince.clear();
        }
    }
    return ordered;
}

std::vector<BlockWarps> blocksOf(const Trace& t) {
    std::vector<BlockWarps> out;
    for (const auto& w : t.warpRanges()) {
        if (out.empty() || out.back().block != w.block) {
            out.push_back({w.block, {}});
        }
        out.back().warps.emplace_back(w.begin, w.end);
    }
    return out;
}

Order smOrder(const std::vector<BlockWarps>& blocks, uint32_t sms, uint32_t resident) {
    std::vector<std::vector<size_t>> perSm(sms);
    for (size_t i = 0; i < blocks.size(); ++i) {
        perSm[blocks[i].block % sms].push_back(i);
    }
    Order o;
    std::vector<std::pair<uint32_t, uint32_t>> cursors;
    for (const auto& list : perSm) {
        if (list.empty()) {
            continue;
        }
        for (size_t c = 0; c < list.size(); c += resident) {
            cursors.clear();
            for (size_t k = c; k < std::min(list.size(), c + resident); ++k) {
                for (const auto& w : blocks[list[k]].warps) {
                    cursors.push_back(w);
                }
            }
            interleave(cursors, o.idx);
        }
        o.segmentEnd.push_back(o.idx.size());
    }
    return o;
}

Order deviceOrder(const Order& sm) {
    std::vector<std::pair<uint32_t, uint32_t>> cursors;
    size_t begin = 0;
    for (size_t end : sm.segmentEnd) {
        cursors.emplace_back(static_cast<uint32_t>(begin), static_cast<uint32_t>(end));
        begin = end;
    }
    std::vector<uint32_t> positions;
    interleave(cursors, positions);
    Order o;
    o.idx.reserve(positions.size());
    for (uint32_t p : positions) {
        o.idx.push_back(sm.idx[p]);
    }
    o.segmentEnd.push_back(o.idx.size());
    return o;
}

Order blockOrder(const std::vector<BlockWarps>& blocks) {
    Order o;
    std::vector<std::pair<uint32_t, uint32_t>> cursors;
    for (const auto& b : blocks) {
        cursors = b.warps;
        interleave(cursors, o.idx);
        o.segmentEnd.push_back(o.idx.size());
    }
    return o;
}

Order warpOrder(const Trace& t) {
    Order o;
    for (const auto& w : t.warpRanges()) {
        for (uint32_t i = w.begin; i < w.end; ++i) {
            o.idx.push_back(i);
        }
        o.segmentEnd.push_back(o.idx.size());
    }
    return o;
}

} // namespace detail

using detail::Order;

std::vector<double> simulateSharedLru(const Trace& t, const spec::Spec& s, ShareScope scope,
                                      uint64_t lineBytes, double capacityBytes,
                                      const std::vector<bool>& shares, uint32_t residentBlocks) {
    const auto& h = t.header();
    const auto& records = t.records();
    const auto blocks = detail::blocksOf(t);
    const uint32_t sms = std::max<uint32_t>(1, s.processor.sms);
    Order order;
    switch (scope) {
    case ShareScope::Sm:
        order = detail::smOrder(blocks, sms, std::max<uint32_t>(1, residentBlocks));
        break;
    case ShareScope::Device:
        order = detail::deviceOrder(
            detail::smOrder(blocks, sms, std::max<uint32_t>(1, residentBlocks)));
        break;
    case ShareScope::Block:
        order = detail::blockOrder(blocks);
        break;
    default:
        order = detail::warpOrder(t);
        break;
    }
    std::vector<double> hits(h.arrays.size(), 0.0);
    StackDistance stack(uint64_t{1} << 62, t.laneCount()); // hashed: keys are (array, line)
    std::vector<uint64_t> lines;
    detail::SmallSet set;
    const double capacityLines = capacityBytes / static_cast<double>(lineBytes);
    const int shift = detail::shiftOf(lineBytes);
    size_t begin = 0;
    for (size_t end : order.segmentEnd) {
        for (size_t p = begin; p < end; ++p) {
            const Record& r = records[order.idx[p]];
            if (r.array >= shares.size() || !shares[r.array] ||
                (scope != ShareScope::Device && r.kind != AccessKind::Read)) {
                continue;
            }
            detail::linesOf(t.lanes(r), h.arrays[r.array].elementSize, lineBytes, shift, lines,
                            set);
            for (uint64_t l : lines) {
                uint64_t d = stack.access((uint64_t{r.array} << 46) ^ l);
                if (d != kColdDistance && static_cast<double>(d) < capacityLines &&
                    r.kind == AccessKind::Read) {
                    hits[r.array] += 1;
                }
            }
        }
        stack.reset();
        begin = end;
    }
    for (auto& v : hits) {
        v *= h.scale();
    }
    return hits;
}

} // namespace memplace::model

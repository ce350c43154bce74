// The analysis's one pass over the records: every array's transactions under each condition
// group its candidate places need, and its pattern statistics (distinct elements and sectors
// per block, single-writer blocks, uniform and multi-row requests). Records come grouped by
// block, so "the last block that touched this element/line" tables count distinct elements and
// lines per block in O(1) per lane.
#include "model/analysis_internal.h"

#include <algorithm>
#include <memory>

namespace memplace::model::detail {

namespace {

using trace::AccessKind;
using trace::Record;

/// The per-array tables and counters of the pass, sized for the array's traced lanes.
void allocateTables(Analysis& A) {
    const TraceStats& st = A.st;
    const size_t narrays = A.narrays;
    std::vector<double>& arrayLanes = A.arrayLanes;
    arrayLanes.assign(narrays, 0);
    for (const Record& r : A.records) {
        arrayLanes[r.array] += r.lanes;
    }
    std::vector<PerArray>& pa = A.pa;
    pa.resize(narrays);
    for (size_t a = 0; a < narrays; ++a) {
        const auto& info = A.h.arrays[a];
        auto expected = static_cast<uint64_t>(arrayLanes[a]);
        if (st.arrays[a].candidates.contains(Place::Shared)) {
            pa[a].elements = std::make_unique<KeyTable>(info.length, expected);
        }
        if (info.mode != trace::ArrayMode::Read) {
            pa[a].writers = std::make_unique<KeyTable>(info.length, expected);
            pa[a].writtenSectors =
                std::make_unique<KeyTable>((info.bytes() + 31) / 32 + 1, expected);
        }
        if (A.sampledBlocks) {
            for (size_t k : A.deviceKinds) {
                uint64_t lb = st.kinds[k].lineBytes;
                pa[a].deviceLines.push_back(
                    std::make_unique<KeyTable>((info.bytes() + lb - 1) / lb + 1, expected));
            }
            pa[a].perBlockLines.assign(A.deviceKinds.size(), 0.0);
        }
        pa[a].rtx.assign(A.groups.size(), 0.0);
        pa[a].wtx.assign(A.groups.size(), 0.0);
    }
    A.lines.reserve(4096);
    A.keys.reserve(4096);
    LineCache& cache = A.lineCache;
    cache.enabled = true;
    for (const auto& info : A.h.arrays) {
        cache.enabled = cache.enabled && info.bytes() / 32 < (uint64_t{1} << 32);
    }
    if (cache.enabled) {
        cache.start.reserve(A.records.size() + 1);
        cache.start.push_back(0);
    }
}

/// Ends the array's current block: its lane accesses per distinct element.
void closeBlock(PerArray& p) {
    if (p.block != UINT32_MAX && p.blockDistinct > 0) {
        p.reuseSum += p.blockLanes / p.blockDistinct;
        p.reuseBlocks += 1;
    }
    p.blockLanes = 0;
    p.blockDistinct = 0;
}

/// Distinct elements of this block (for arrays that could be staged); for writes, whether
/// another block wrote the element and the written sectors a copy-back would move.
void countBlockElements(PerArray& p, ArrayStats& as, const trace::ArrayInfo& info, const Record& r,
                        std::span<const int64_t> offs, uint32_t tag) {
    if (p.elements) {
        p.blockLanes += r.lanes;
        for (int64_t o : offs) {
            uint32_t& seen = p.elements->at(static_cast<uint64_t>(o));
            if (seen != tag) {
                seen = tag;
                p.blockDistinct += 1;
            }
        }
    }
    if (r.kind != AccessKind::Read) {
        for (int64_t o : offs) {
            uint32_t& w = p.writers->at(static_cast<uint64_t>(o));
            if (w != 0 && w != tag) {
                as.singleWriterBlocks = false;
            }
            w = tag;
            uint32_t& sct = p.writtenSectors->at(static_cast<uint64_t>(o) * info.elementSize / 32);
            if (sct != tag) {
                sct = tag;
                as.copyBackSectors += 1;
            }
        }
    }
}

/// Sampled blocks: the distinct lines of each device-scoped kind per block (their sum, against
/// the footprint, tells how much the blocks' footprints overlap).
void countBlockLines(Analysis& A, PerArray& p, const trace::ArrayInfo& info,
                     std::span<const int64_t> offs, uint32_t tag) {
    for (size_t dk = 0; dk < A.deviceKinds.size(); ++dk) {
        uint64_t lb = A.st.kinds[A.deviceKinds[dk]].lineBytes;
        linesOf(offs, info.elementSize, lb, shiftOf(lb), A.lines, A.set);
        for (uint64_t l : A.lines) {
            uint32_t& seen = p.deviceLines[dk]->at(l);
            if (seen != tag) {
                seen = tag;
                p.perBlockLines[dk] += 1;
            }
        }
    }
}

/// Keeps the record's 32-byte lines (A.lines) for the reuse pass, or gives the cache up once it
/// outgrows its budget.
void cacheSectorLines(LineCache& cache, const std::vector<uint64_t>& lines) {
    if (cache.lines.size() + lines.size() > LineCache::kBudget) {
        cache.enabled = false;
        cache.lines = {};
        cache.start = {};
        return;
    }
    for (uint64_t l : lines) {
        cache.lines.push_back(static_cast<uint32_t>(l));
    }
    cache.start.push_back(cache.lines.size());
}

/// Uniform reads and, for 2-D arrays, requests that touch more than one row.
void countPatterns(PerArray& p, const trace::ArrayInfo& info, bool read,
                   std::span<const int64_t> offs) {
    if (read && std::all_of(offs.begin(), offs.end(), [&](int64_t o) { return o == offs[0]; })) {
        p.uniformReads += 1;
    }
    if (info.dims == 2 && info.rowLength > 0) {
        uint64_t row0 = static_cast<uint64_t>(offs[0]) / info.rowLength;
        if (std::any_of(offs.begin(), offs.end(), [&](int64_t o) {
                return static_cast<uint64_t>(o) / info.rowLength != row0;
            })) {
            p.multiRow += 1;
        }
    }
}

void countRecord(Analysis& A, const Record& r) {
    const auto& info = A.h.arrays[r.array];
    PerArray& p = A.pa[r.array];
    ArrayStats& as = A.st.arrays[r.array];
    auto offs = A.t.lanes(r);
    const uint32_t tag = r.block + 1;
    if (r.block != p.block) {
        closeBlock(p);
        p.block = r.block;
        p.blocksTouched += 1;
    }
    countBlockElements(p, as, info, r, offs, tag);
    const bool read = r.kind == AccessKind::Read;
    if (A.sampledBlocks) {
        countBlockLines(A, p, info, offs, tag);
    }
    // Pattern statistics.
    linesOf(offs, info.elementSize, 32, 5, A.lines, A.set);
    const auto sectorCount = static_cast<uint32_t>(A.lines.size());
    p.sectors += static_cast<double>(sectorCount);
    if (A.lineCache.enabled) {
        cacheSectorLines(A.lineCache, A.lines);
    }
    p.ideal += static_cast<double>((uint64_t{r.lanes} * info.elementSize + 31) / 32);
    countPatterns(p, info, read, offs);
    // Transactions under every condition a candidate place needs.
    auto& acc = read ? p.rtx : p.wtx;
    const auto& need = A.needGroup[r.array];
    for (size_t g = 0; g < A.groups.size(); ++g) {
        if (need[g]) {
            acc[g] += A.groups[g].sectors32
                          ? sectorCount
                          : countTransactions(A.groups[g], offs, info.elementSize, A.keys, A.set);
        }
    }
    if (read) {
        as.readRequests += 1;
        as.readLanes += r.lanes;
    } else {
        as.writeRequests += 1;
        as.writeLanes += r.lanes;
    }
}

/// Per array: the transactions into every memory of its groups (scaled to the grid), the
/// pass's tables freed, and the candidates again with the pass's single-writer answer.
void finishPass(Analysis& A) {
    TraceStats& st = A.st;
    for (size_t a = 0; a < A.narrays; ++a) {
        PerArray& p = A.pa[a];
        closeBlock(p);
        ArrayStats& as = st.arrays[a];
        for (size_t g = 0; g < A.groups.size(); ++g) {
            for (size_t m : A.groups[g].memories) {
                as.readTransactions[m] = p.rtx[g] * st.scale;
                as.writeTransactions[m] = p.wtx[g] * st.scale;
            }
        }
        p.elements.reset();
        p.writers.reset();
        p.writtenSectors.reset();
        p.deviceLines.clear();
        computeCandidates(A, a, true);
        computeNeeds(A, a);
    }
}

} // namespace

void countRecords(Analysis& A) {
    allocateTables(A);
    for (const Record& r : A.records) {
        countRecord(A, r);
    }
    finishPass(A);
}

} // namespace memplace::model::detail

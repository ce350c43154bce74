#include "trace/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <numeric>
#include <unordered_set>

namespace memplace::trace {

std::string_view accessKindName(AccessKind k) {
    switch (k) {
    case AccessKind::Read:
        return "read";
    case AccessKind::Write:
        return "write";
    case AccessKind::Atomic:
        return "atomic";
    }
    return "read";
}

std::string_view arrayModeName(ArrayMode m) {
    return m == ArrayMode::None ? "read" : accessModeName(m); // None: never in a trace
}

std::optional<ArrayMode> parseArrayMode(std::string_view name) {
    std::optional<ArrayMode> m = parseAccessMode(name);
    if (m == ArrayMode::None) {
        return std::nullopt;
    }
    return m;
}

uint8_t arrayModeCode(ArrayMode m) {
    switch (m) {
    case ArrayMode::Write:
        return 1;
    case ArrayMode::ReadWrite:
        return 2;
    case ArrayMode::Atomic:
        return 3;
    case ArrayMode::None: // never in a trace
    case ArrayMode::Read:
        return 0;
    }
    return 0;
}

std::optional<ArrayMode> arrayModeFromCode(uint8_t code) {
    static constexpr std::array<ArrayMode, 4> kByCode = {ArrayMode::Read, ArrayMode::Write,
                                                         ArrayMode::ReadWrite, ArrayMode::Atomic};
    if (code >= kByCode.size()) {
        return std::nullopt;
    }
    return kByCode[code];
}

uint64_t Dim3::count() const {
    uint64_t n = 0;
    if (__builtin_mul_overflow(uint64_t{x} * y, uint64_t{z}, &n)) {
        return UINT64_MAX;
    }
    return n;
}

BlockSet::BlockSet(std::initializer_list<uint32_t> ids) {
    for (uint32_t id : ids) {
        add(id);
    }
}

BlockSet::BlockSet(const std::vector<uint32_t>& ids) {
    for (uint32_t id : ids) {
        add(id);
    }
}

void BlockSet::addRange(uint32_t first, uint32_t last) {
    count_ += uint64_t{last} - first + 1;
    if (!ranges_.empty() && ranges_.back().last < first && ranges_.back().last + 1 == first) {
        ranges_.back().last = last;
        return;
    }
    ranges_.push_back({first, last});
}

void BlockSet::clear() {
    ranges_.clear();
    count_ = 0;
}

bool BlockSet::ascending() const {
    for (size_t i = 0; i < ranges_.size(); ++i) {
        if (ranges_[i].first > ranges_[i].last ||
            (i > 0 && ranges_[i].first <= ranges_[i - 1].last)) {
            return false;
        }
    }
    return true;
}

bool BlockSet::contains(uint32_t id) const {
    auto it = std::partition_point(ranges_.begin(), ranges_.end(),
                                   [&](const Range& r) { return r.last < id; });
    return it != ranges_.end() && it->first <= id;
}

std::vector<uint32_t> BlockSet::ids() const {
    std::vector<uint32_t> out;
    out.reserve(count_);
    for (const Range& r : ranges_) {
        for (uint64_t b = r.first; b <= r.last; ++b) {
            out.push_back(static_cast<uint32_t>(b));
        }
    }
    return out;
}

std::optional<uint16_t> TraceHeader::findArray(std::string_view name) const {
    for (size_t i = 0; i < arrays.size(); ++i) {
        if (arrays[i].name == name) {
            return static_cast<uint16_t>(i);
        }
    }
    return std::nullopt;
}

bool validTraceName(std::string_view name) {
    if (name.empty() || name.size() > 256) {
        return false;
    }
    auto alpha = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    };
    if (!alpha(name[0])) {
        return false;
    }
    return std::all_of(name.begin(), name.end(), [&](char c) {
        return alpha(c) || (c >= '0' && c <= '9') || c == '.' || c == ':' || c == '<' || c == '>' ||
               c == ',';
    });
}

DiagnosticList checkHeader(const TraceHeader& h, std::string_view where) {
    DiagnosticList d;
    SourceLocation loc{std::string(where), 0, 0};
    if (!validTraceName(h.kernel)) {
        d.error(loc, fmt::format("invalid kernel name '{}'", h.kernel));
    }
    auto checkDim = [&](const Dim3& v, const char* what, uint64_t maxCount) {
        if (v.x == 0 || v.y == 0 || v.z == 0) {
            d.error(loc, fmt::format("{} dimensions {}x{}x{} contain a zero", what, v.x, v.y, v.z));
        } else if (v.count() > maxCount) {
            d.error(loc, fmt::format("{} dimensions {}x{}x{} exceed {} in all", what, v.x, v.y, v.z,
                                     maxCount));
        }
    };
    checkDim(h.grid, "grid", uint64_t{1} << 32);
    checkDim(h.block, "block", 4096);
    if (h.registersPerThread && (*h.registersPerThread == 0 || *h.registersPerThread > 1024)) {
        d.error(loc, fmt::format("registers per thread {} out of range", *h.registersPerThread));
    }
    if (h.sharedPerBlock && *h.sharedPerBlock > (uint64_t{1} << 30)) {
        d.error(loc, fmt::format("shared memory per block {} out of range", *h.sharedPerBlock));
    }
    if (h.arrays.size() > 65535) {
        d.error(loc, fmt::format("{} arrays: at most 65535", h.arrays.size()));
    }
    // A hash set: 65535 arrays compared pairwise took seconds.
    std::unordered_set<std::string_view> names;
    names.reserve(h.arrays.size());
    for (size_t i = 0; i < h.arrays.size(); ++i) {
        const auto& a = h.arrays[i];
        if (!validTraceName(a.name)) {
            d.error(loc, fmt::format("array {}: invalid name '{}'", i, a.name));
        }
        if (!names.insert(a.name).second) {
            d.error(loc, fmt::format("array '{}' is declared twice", a.name));
        }
        if (a.elementSize == 0 || a.elementSize > 4096) {
            d.error(loc, fmt::format("array '{}': element size {} out of range 1..4096", a.name,
                                     a.elementSize));
        }
        if (a.length == 0 || a.length > (uint64_t{1} << 48)) {
            d.error(loc,
                    fmt::format("array '{}': length {} out of range 1..2^48", a.name, a.length));
        }
        if (a.feasible.bits() >= (1u << kAllPlaces.size())) {
            d.error(loc, fmt::format("array '{}': unknown places in the feasible set", a.name));
        }
        if (static_cast<unsigned>(a.original) >= kAllPlaces.size()) {
            d.error(loc, fmt::format("array '{}': unknown original place", a.name));
        }
        if (a.dims != 1 && a.dims != 2) {
            d.error(loc, fmt::format("array '{}': dims {} must be 1 or 2", a.name, a.dims));
        } else if (a.dims == 2 && (a.rowLength == 0 || a.rowLength > a.length)) {
            d.error(loc,
                    fmt::format("array '{}': a 2-D array needs a row length in 1..length", a.name));
        } else if (a.dims == 1 && a.rowLength != 0) {
            d.error(loc, fmt::format("array '{}': a row length needs dims 2", a.name));
        }
    }
    const auto& traced = h.tracedBlocks.ranges();
    for (size_t i = 0; i < traced.size(); ++i) {
        if (traced[i].last >= h.grid.count()) {
            d.error(loc, fmt::format("traced block {} is outside the grid of {} blocks",
                                     traced[i].last, h.grid.count()));
            break;
        }
        if (traced[i].first > traced[i].last || (i > 0 && traced[i].first <= traced[i - 1].last)) {
            d.error(loc, "traced blocks must be listed in ascending order without repeats");
            break;
        }
    }
    return d;
}

std::vector<Trace::WarpRange> Trace::warpRanges() const {
    std::vector<WarpRange> out;
    for (uint32_t i = 0; i < records_.size();) {
        uint32_t j = i;
        while (j < records_.size() && records_[j].block == records_[i].block &&
               records_[j].warp == records_[i].warp) {
            ++j;
        }
        out.push_back({records_[i].block, records_[i].warp, i, j});
        i = j;
    }
    return out;
}

TraceBuilder::TraceBuilder(TraceHeader header) : header_(std::move(header)) {}

void TraceBuilder::add(uint32_t block, uint32_t warp, uint32_t site, uint16_t array,
                       AccessKind kind, uint32_t activeMask, std::span<const int64_t> offsets) {
    auto lanes = static_cast<unsigned>(std::popcount(activeMask));
    if (lanes != offsets.size() && firstError_.empty()) {
        firstError_ = fmt::format("record {}: mask {:#010x} has {} active lanes but {} offsets "
                                  "were given",
                                  records_.size(), activeMask, lanes, offsets.size());
    }
    Record r;
    r.block = block;
    r.warp = warp;
    r.site = site;
    r.mask = activeMask;
    r.first = offsets_.size();
    r.array = array;
    r.kind = kind;
    r.lanes = static_cast<uint8_t>(std::min<size_t>(offsets.size(), 255));
    records_.push_back(r);
    offsets_.insert(offsets_.end(), offsets.begin(), offsets.begin() + r.lanes);
}

void TraceBuilder::addLanes(uint32_t block, uint32_t warp, uint32_t site, uint16_t array,
                            AccessKind kind, uint32_t activeMask,
                            const int64_t (&laneOffsets)[32]) {
    int64_t active[32];
    size_t n = 0;
    for (uint32_t l = 0; l < 32; ++l) {
        if ((activeMask >> l) & 1u) {
            active[n++] = laneOffsets[l];
        }
    }
    add(block, warp, site, array, kind, activeMask, std::span<const int64_t>(active, n));
}

Expected<Trace> TraceBuilder::finish(std::string_view where) && {
    DiagnosticList d = checkHeader(header_, where);
    SourceLocation loc{std::string(where), 0, 0};
    if (!firstError_.empty()) {
        d.error(loc, firstError_);
    }
    if (records_.size() >= (uint64_t{1} << 32)) {
        d.error(loc, fmt::format("{} records: at most 2^32 - 1", records_.size()));
    }
    if (d.hasErrors()) {
        return Failure{std::move(d)};
    }
    const uint64_t blocks = header_.grid.count();
    const uint32_t warps = header_.warpsPerBlock();
    const auto& traced = header_.tracedBlocks;
    size_t errors = 0;
    auto report = [&](std::string msg) {
        if (++errors <= 10) {
            d.error(loc, std::move(msg));
        }
    };
    for (size_t i = 0; i < records_.size(); ++i) {
        const Record& r = records_[i];
        if (r.array >= header_.arrays.size()) {
            report(fmt::format("record {}: array index {} but the trace declares {} arrays", i,
                               r.array, header_.arrays.size()));
            continue;
        }
        const ArrayInfo& a = header_.arrays[r.array];
        if (r.mask == 0) {
            report(fmt::format("record {}: no active lane", i));
        }
        if (static_cast<unsigned>(r.kind) > 2) {
            report(fmt::format("record {}: unknown access kind", i));
        }
        if (r.block >= blocks) {
            report(fmt::format("record {}: block {} outside the grid of {} blocks", i, r.block,
                               blocks));
        } else if (!traced.empty() && !traced.contains(r.block)) {
            report(fmt::format("record {}: block {} is not among the traced blocks", i, r.block));
        }
        if (r.warp >= warps) {
            report(fmt::format("record {}: warp {} but a block has {} warps", i, r.warp, warps));
        }
        if (r.kind != AccessKind::Read && a.mode == ArrayMode::Read) {
            report(fmt::format("record {}: {} of array '{}', declared read-only", i,
                               accessKindName(r.kind), a.name));
        }
        if (r.kind == AccessKind::Read && a.mode == ArrayMode::Write) {
            report(fmt::format("record {}: read of array '{}', declared write-only", i, a.name));
        }
        for (uint32_t l = 0; l < r.lanes; ++l) {
            int64_t o = offsets_[r.first + l];
            if (o < 0 || static_cast<uint64_t>(o) >= a.length) {
                report(fmt::format("record {}: offset {} outside array '{}' of {} elements", i, o,
                                   a.name, a.length));
                break;
            }
        }
    }
    if (errors > 10) {
        d.error(loc, fmt::format("... and {} more problems", errors - 10));
    }
    if (d.hasErrors()) {
        return Failure{std::move(d)};
    }

    // Group by (block, warp), keeping each warp's order; move the offsets along so that a
    // warp's lanes are contiguous too.
    std::vector<uint32_t> order(records_.size());
    std::iota(order.begin(), order.end(), 0u);
    bool sorted =
        std::is_sorted(records_.begin(), records_.end(), [](const Record& x, const Record& y) {
            return x.block != y.block ? x.block < y.block : x.warp < y.warp;
        });
    Trace t;
    t.header_ = std::move(header_);
    if (sorted) {
        t.records_ = std::move(records_);
        t.offsets_ = std::move(offsets_);
    } else {
        std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
            const Record& a = records_[x];
            const Record& b = records_[y];
            if (a.block != b.block) {
                return a.block < b.block;
            }
            return a.warp != b.warp ? a.warp < b.warp : x < y; // stable within a warp
        });
        t.records_.reserve(records_.size());
        t.offsets_.reserve(offsets_.size());
        for (uint32_t i : order) {
            Record r = records_[i];
            uint64_t first = t.offsets_.size();
            t.offsets_.insert(t.offsets_.end(), offsets_.begin() + static_cast<int64_t>(r.first),
                              offsets_.begin() + static_cast<int64_t>(r.first + r.lanes));
            r.first = first;
            t.records_.push_back(r);
        }
    }
    return t;
}

} // namespace memplace::trace

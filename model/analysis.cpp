#include "model/analysis.h"

#include "model/occupancy.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <memory>

namespace memplace::model {

namespace {

using spec::ConditionVar;
using spec::ShareScope;
using spec::TransactionCounter;
using trace::AccessKind;
using trace::Record;
using trace::Trace;

bool isStaged(const spec::Spec& s, const spec::PlaceEntry& e) {
    const spec::Memory* m = s.findMemory(e.memory);
    return m != nullptr && m->softwareManaged && m->shareScope == ShareScope::Block;
}

uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/// A set of at most 128 keys, emptied in O(1).
class SmallSet {
public:
    static constexpr size_t kSlots = 256;
    static constexpr size_t kMaxKeys = kSlots / 2;
    void clear() {
        if (++current_ == 0) {
            std::fill(std::begin(stamp_), std::end(stamp_), 0u);
            current_ = 1;
        }
        size_ = 0;
    }
    /// True when `k` is new. Needs size() < kMaxKeys.
    bool insert(uint64_t k) {
        size_t i = mix64(k) & (kSlots - 1);
        while (stamp_[i] == current_) {
            if (keys_[i] == k) {
                return false;
            }
            i = (i + 1) & (kSlots - 1);
        }
        stamp_[i] = current_;
        keys_[i] = k;
        ++size_;
        return true;
    }
    size_t size() const { return size_; }

private:
    uint64_t keys_[kSlots] = {};
    uint32_t stamp_[kSlots] = {};
    uint32_t current_ = 0;
    size_t size_ = 0;
};

/// Removes repeats from `v`, keeping first occurrences in order.
void dedupe(std::vector<uint64_t>& v, SmallSet& set) {
    // Common case: non-decreasing (coalesced lanes).
    bool sorted = true;
    for (size_t i = 1; i < v.size(); ++i) {
        if (v[i] < v[i - 1]) {
            sorted = false;
            break;
        }
    }
    if (sorted) {
        v.erase(std::unique(v.begin(), v.end()), v.end());
        return;
    }
    if (v.size() > SmallSet::kMaxKeys) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
        return;
    }
    set.clear();
    size_t k = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        if (set.insert(v[i])) {
            v[k++] = v[i];
        }
    }
    v.resize(k);
}

/// Distinct lines the lanes touch, in order of first touch; an element that crosses a line
/// boundary touches every line it covers.
size_t linesOf(std::span<const int64_t> offs, uint64_t elem, uint64_t lineBytes, int shift,
               std::vector<uint64_t>& out, SmallSet& set) {
    out.clear();
    const bool whole = elem <= lineBytes && lineBytes % elem == 0; // never crosses a line
    if (whole) {
        // Fast path: lanes in ascending order (coalesced, strided, uniform).
        uint64_t prev = 0;
        bool ascending = true;
        for (int64_t o : offs) {
            uint64_t a = static_cast<uint64_t>(o) * elem;
            uint64_t l = shift >= 0 ? a >> shift : a / lineBytes;
            if (!out.empty()) {
                if (l == prev) {
                    continue;
                }
                if (l < prev) {
                    ascending = false;
                    break;
                }
            }
            out.push_back(l);
            prev = l;
        }
        if (ascending) {
            return out.size();
        }
        out.clear();
        set.clear();
        for (int64_t o : offs) {
            uint64_t a = static_cast<uint64_t>(o) * elem;
            uint64_t l = shift >= 0 ? a >> shift : a / lineBytes;
            if (set.insert(l)) {
                out.push_back(l);
            }
        }
        return out.size();
    }
    for (int64_t o : offs) {
        uint64_t a = static_cast<uint64_t>(o) * elem;
        uint64_t last = (a + elem - 1) / lineBytes;
        for (uint64_t l = a / lineBytes; l <= last; ++l) {
            out.push_back(l);
        }
    }
    dedupe(out, set);
    return out.size();
}

int shiftOf(uint64_t v) {
    return std::has_single_bit(v) ? std::countr_zero(v) : -1;
}

/// Memories whose serialization conditions count alike share one counting pass.
struct ConditionGroup {
    TransactionCounter counter;
    uint64_t blockSize = 32;
    uint64_t wordSize = 4;
    std::vector<size_t> memories;
    bool sectors32 = false; ///< counts distinct 32-byte lines (with spans): reuse the pass's lines
};

uint32_t countTransactions(const ConditionGroup& g, std::span<const int64_t> offs, uint64_t elem,
                           std::vector<uint64_t>& keys, SmallSet& set) {
    const TransactionCounter& c = g.counter;
    const size_t n = offs.size();
    auto keyOf = [&](int64_t o) -> uint64_t {
        switch (c.keyVariable()) {
        case ConditionVar::Address1:
        case ConditionVar::Address2:
            return static_cast<uint64_t>(o) * elem;
        case ConditionVar::Word1:
        case ConditionVar::Word2:
            return static_cast<uint64_t>(o) * elem / g.wordSize;
        default:
            return static_cast<uint64_t>(o);
        }
    };
    switch (c.strategy()) {
    case TransactionCounter::Strategy::Never:
        return n == 0 ? 0 : 1;
    case TransactionCounter::Strategy::Always:
        return static_cast<uint32_t>(n);
    case TransactionCounter::Strategy::Distinct: {
        auto d = static_cast<uint64_t>(c.keyDivisor());
        bool address =
            c.keyVariable() == ConditionVar::Address1 || c.keyVariable() == ConditionVar::Address2;
        if (address && d >= g.blockSize && elem > 1) {
            return static_cast<uint32_t>(linesOf(offs, elem, d, shiftOf(d), keys, set));
        }
        keys.clear();
        for (size_t i = 0; i < n; ++i) {
            keys.push_back(keyOf(offs[i]) / d);
        }
        dedupe(keys, set);
        return static_cast<uint32_t>(keys.size());
    }
    case TransactionCounter::Strategy::BankConflict: {
        keys.clear();
        for (size_t i = 0; i < n; ++i) {
            keys.push_back(keyOf(offs[i]));
        }
        dedupe(keys, set);
        auto banks = static_cast<uint64_t>(c.bankModulus());
        uint32_t counts[256];
        if (banks <= 256) {
            std::fill(counts, counts + banks, 0u);
            uint32_t best = 0;
            for (uint64_t w : keys) {
                best = std::max(best, ++counts[w % banks]);
            }
            return best;
        }
        for (auto& w : keys) {
            w %= banks;
        }
        std::sort(keys.begin(), keys.end());
        uint32_t best = 0;
        for (size_t i = 0; i < keys.size();) {
            size_t j = i;
            while (j < keys.size() && keys[j] == keys[i]) {
                ++j;
            }
            best = std::max(best, static_cast<uint32_t>(j - i));
            i = j;
        }
        return best;
    }
    case TransactionCounter::Strategy::General: {
        spec::LaneAccess la[32];
        for (size_t i = 0; i < n; ++i) {
            la[i] = {offs[i], offs[i] * static_cast<int64_t>(elem)};
        }
        return c.countGeneral(std::span<const spec::LaneAccess>(la, n));
    }
    }
    return 1;
}

/// A permutation of the records and where each stream instance ends.
struct Order {
    std::vector<uint32_t> idx;
    std::vector<size_t> segmentEnd;
};

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

struct BlockWarps {
    uint32_t block = 0;
    std::vector<std::pair<uint32_t, uint32_t>> warps; // record ranges
};

/// Per array, the warp reads that follow (in the warp's program order) a store to another array
/// that itself waited on a load: a load of any other array since the warp's previous store. A
/// store of a constant or of a thread index waits on nothing; a load of the stored array's own
/// elements guards it at most (bfs clears mask[tid] after reading it), and a branch on a load
/// orders everything after it whatever the pointers are.
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

/// SM streams: blocks b with b % sms == s, R at a time, warps interleaved.
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

/// The device stream: SM streams interleaved record by record.
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

uint64_t hashLine(uint64_t line, uint64_t salt) {
    uint64_t x = line ^ salt;
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

std::string placeListText(const std::vector<uint32_t>& dims) {
    std::string s;
    for (uint32_t d : dims) {
        s += (s.empty() ? "" : " or ") + std::to_string(d) + "-D";
    }
    return s;
}

} // namespace

std::vector<double> simulateSharedLru(const Trace& t, const spec::Spec& s, ShareScope scope,
                                      uint64_t lineBytes, double capacityBytes,
                                      const std::vector<bool>& shares, uint32_t residentBlocks) {
    const auto& h = t.header();
    const auto& records = t.records();
    const auto blocks = blocksOf(t);
    const uint32_t sms = std::max<uint32_t>(1, s.processor.sms);
    Order order;
    switch (scope) {
    case ShareScope::Sm:
        order = smOrder(blocks, sms, std::max<uint32_t>(1, residentBlocks));
        break;
    case ShareScope::Device:
        order = deviceOrder(smOrder(blocks, sms, std::max<uint32_t>(1, residentBlocks)));
        break;
    case ShareScope::Block:
        order = blockOrder(blocks);
        break;
    default:
        order = warpOrder(t);
        break;
    }
    std::vector<double> hits(h.arrays.size(), 0.0);
    StackDistance stack(uint64_t{1} << 62, t.laneCount()); // hashed: keys are (array, line)
    std::vector<uint64_t> lines;
    SmallSet set;
    const double capacityLines = capacityBytes / static_cast<double>(lineBytes);
    const int shift = shiftOf(lineBytes);
    size_t begin = 0;
    for (size_t end : order.segmentEnd) {
        for (size_t p = begin; p < end; ++p) {
            const Record& r = records[order.idx[p]];
            if (r.array >= shares.size() || !shares[r.array] ||
                (scope != ShareScope::Device && r.kind != AccessKind::Read)) {
                continue;
            }
            linesOf(t.lanes(r), h.arrays[r.array].elementSize, lineBytes, shift, lines, set);
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

double hitRatioError(const TraceStats& exact, const TraceStats& sampled) {
    double weighted = 0;
    double weight = 0;
    for (size_t a = 0; a < exact.arrays.size() && a < sampled.arrays.size(); ++a) {
        for (size_t k = 0; k < exact.arrays[a].streams.size(); ++k) {
            const ArrayStream& x = exact.arrays[a].streams[k];
            const ArrayStream& y = sampled.arrays[a].streams[k];
            for (auto [hx, hy] : {std::pair{&x.reads, &y.reads}, std::pair{&x.writes, &y.writes}}) {
                if (!x.analysed || hx->total() == 0) {
                    continue;
                }
                double sum = 0;
                int points = 0;
                for (int e = 4; e <= 24; ++e) {
                    double c = std::ldexp(1.0, e);
                    sum += std::abs(hx->hitFraction(c) - hy->hitFraction(c));
                    ++points;
                }
                weighted += hx->total() * sum / points;
                weight += hx->total();
            }
        }
    }
    return weight > 0 ? weighted / weight : 0;
}

namespace {

/// The bytes of the device cache partition a place keeps its lines in (the persisting L2
/// set-aside of l2persist: a device-scoped cache the global place does not pass), or 0.
uint64_t persistingSetAside(const spec::Spec& s, const spec::PlaceEntry& e) {
    const spec::PlaceEntry* global = s.findPlace(Place::Global);
    if (global == nullptr || e.place == Place::Global) {
        return 0;
    }
    for (const auto& level : e.levels) {
        const spec::Memory* m = s.findMemory(level);
        if (m != nullptr && !m->softwareManaged && m->shareScope == ShareScope::Device &&
            std::find(global->levels.begin(), global->levels.end(), level) ==
                global->levels.end()) {
            return m->size;
        }
    }
    return 0;
}

/// Lines of array a the whole grid touches at stream kind k: the traced footprint scaled to the
/// grid, at most the array's lines.
double gridLines(const TraceStats& st, size_t a, size_t k) {
    const double lineBytes = static_cast<double>(st.kinds[k].lineBytes);
    const double arrayLines = std::ceil(static_cast<double>(st.arrays[a].info.bytes()) / lineBytes);
    return std::min(arrayLines, st.arrays[a].streams[k].footprintLines * st.scale);
}

} // namespace

Expected<TraceStats> analyze(const Trace& t, const spec::Spec& s, const AnalysisOptions& options) {
    auto started = std::chrono::steady_clock::now();

    const trace::TraceHeader& h = t.header();
    const auto& records = t.records();
    const size_t narrays = h.arrays.size();
    if (s.findPlace(Place::Global) == nullptr) {
        return fail(fmt::format("spec '{}' has no global place", s.name));
    }
    if (!(options.lineSampleRate > 0 && options.lineSampleRate <= 1)) {
        return fail(fmt::format("line sample rate {} must be in (0, 1]", options.lineSampleRate));
    }

    TraceStats st;
    auto phaseStart = started;
    auto phase = [&](std::string name) {
        auto now = std::chrono::steady_clock::now();
        st.phases.emplace_back(std::move(name),
                               std::chrono::duration<double>(now - phaseStart).count());
        phaseStart = now;
    };
    st.kernel = h.kernel;
    st.grid = h.grid;
    st.block = h.block;
    st.threadsPerBlock = h.threadsPerBlock();
    st.warpsPerBlock = h.warpsPerBlock(s.processor.warpSize);
    st.registersPerThread = h.registersPerThread;
    st.sharedPerBlock = h.sharedPerBlock.value_or(0);
    st.blocks = h.blockCount();
    st.tracedBlocks = h.tracedBlockCount();
    st.scale = h.scale();
    st.records = records.size();
    st.lanes = t.laneCount();
    st.lineSampleRate = options.lineSampleRate;
    if (s.processor.warpSize != 32) {
        st.notes.push_back(fmt::format("the spec's warp size is {}; traces group lanes by 32",
                                       s.processor.warpSize));
    }

    // Memories any place reaches; caches get a stream kind.
    const size_t nmem = s.memories.size();
    std::vector<bool> used(nmem, false);
    for (const auto& e : s.places) {
        for (const auto& l : e.levels) {
            if (const spec::Memory* m = s.findMemory(l)) {
                used[static_cast<size_t>(m - s.memories.data())] = true;
            }
        }
    }
    st.memoryKind.assign(nmem, -1);
    for (size_t m = 0; m < nmem; ++m) {
        const auto& mem = s.memories[m];
        if (!used[m] || mem.softwareManaged) {
            continue;
        }
        StreamKind k{std::max<uint64_t>(1, mem.blockSize), mem.shareScope};
        auto it = std::find(st.kinds.begin(), st.kinds.end(), k);
        if (it == st.kinds.end()) {
            st.kinds.push_back(k);
            it = st.kinds.end() - 1;
        }
        st.memoryKind[m] = static_cast<int>(it - st.kinds.begin());
    }

    // Serialization conditions, grouped by what they count.
    std::vector<ConditionGroup> groups;
    std::vector<int> memoryGroup(nmem, -1);
    {
        std::vector<std::string> sigs;
        for (size_t m = 0; m < nmem; ++m) {
            if (!used[m]) {
                continue;
            }
            const auto& mem = s.memories[m];
            std::string sig = fmt::format(
                "{}|{}|{}|{}", mem.serialCondition ? mem.serialCondition->toString() : "never",
                mem.banks.value_or(0), mem.blockSize, mem.wordSize);
            auto it = std::find(sigs.begin(), sigs.end(), sig);
            if (it == sigs.end()) {
                sigs.push_back(sig);
                ConditionGroup g;
                g.counter =
                    TransactionCounter(mem.serialCondition ? &*mem.serialCondition : nullptr,
                                       {static_cast<int64_t>(mem.banks.value_or(32)),
                                        static_cast<int64_t>(std::max<uint64_t>(1, mem.blockSize)),
                                        static_cast<int64_t>(std::max<uint32_t>(1, mem.wordSize))});
                g.blockSize = std::max<uint64_t>(1, mem.blockSize);
                g.wordSize = std::max<uint32_t>(1, mem.wordSize);
                g.sectors32 = g.counter.strategy() == TransactionCounter::Strategy::Distinct &&
                              (g.counter.keyVariable() == ConditionVar::Address1 ||
                               g.counter.keyVariable() == ConditionVar::Address2) &&
                              g.counter.keyDivisor() == 32 && g.blockSize <= 32;
                groups.push_back(std::move(g));
                it = sigs.end() - 1;
            }
            auto gi = static_cast<size_t>(it - sigs.begin());
            groups[gi].memories.push_back(m);
            memoryGroup[m] = static_cast<int>(gi);
        }
    }

    // Resident blocks of the original placement: the kernel's shared memory plus the arrays it
    // already stages.
    uint64_t originalStaged = 0;
    for (const auto& a : h.arrays) {
        const spec::PlaceEntry* e = s.findPlace(a.original);
        if (e != nullptr && isStaged(s, *e)) {
            originalStaged += a.bytes();
        }
    }
    Occupancy occ0 = occupancy(s.processor, st.threadsPerBlock, st.registersPerThread,
                               st.sharedPerBlock + originalStaged);
    st.residentBlocks = std::max<uint32_t>(1, occ0.blocksPerSm);
    if (occ0.blocksPerSm == 0) {
        st.notes.push_back("the original kernel's resources do not fit one SM of this spec; "
                           "occupancy is taken as one block per SM");
    }

    st.arrays.resize(narrays);
    for (size_t a = 0; a < narrays; ++a) {
        st.arrays[a].info = h.arrays[a];
        st.arrays[a].readTransactions.assign(nmem, 0.0);
        st.arrays[a].writeTransactions.assign(nmem, 0.0);
        st.arrays[a].streams.resize(st.kinds.size());
    }

    std::vector<size_t> deviceKinds;
    for (size_t k = 0; k < st.kinds.size(); ++k) {
        if (st.kinds[k].scope == ShareScope::Device) {
            deviceKinds.push_back(k);
        }
    }
    const bool sampledBlocks = st.tracedBlocks < st.blocks;

    // --- Candidates: each place on its own ------------------------------------------------
    // Run before the pass over the records with every written array assumed single-writer (a
    // superset), and after it with the pass's answer.
    auto computeCandidates = [&](size_t a, bool finalRun) {
        ArrayStats& as = st.arrays[a];
        const auto& info = as.info;
        const bool written = info.mode != trace::ArrayMode::Read;
        as.candidates = PlaceSet{};
        as.exclusions.clear();
        for (Place p : kAllPlaces) {
            const spec::PlaceEntry* e = s.findPlace(p);
            std::string why;
            if (e == nullptr) {
                why = fmt::format("the spec has no {} place", placeName(p));
            } else if (!info.feasible.contains(p)) {
                why = "excluded by the trace's producer";
            } else if (written && !e->writable) {
                why = fmt::format("written by the kernel; {} is read-only", placeName(p));
            } else if (info.mode == trace::ArrayMode::Atomic && p != Place::Global &&
                       p != Place::L2Persist) {
                why = "atomics stay in global memory";
            } else if (!e->dims.empty() &&
                       std::find(e->dims.begin(), e->dims.end(), info.dims) == e->dims.end()) {
                why = fmt::format("{} takes {} arrays", placeName(p), placeListText(e->dims));
            } else if (e->capacity > 0 && info.bytes() > e->capacity && p != Place::Global) {
                why = fmt::format("{} bytes exceed the {} bytes {} offers", info.bytes(),
                                  e->capacity, placeName(p));
            } else if (const uint64_t setAside = persistingSetAside(s, *e);
                       setAside > 0 && info.bytes() > 2 * setAside) {
                why = fmt::format("{} bytes are more than twice the {}-byte persisting set-aside: "
                                  "a window that large thrashes it (2.0-2.4x slower on an H100)",
                                  info.bytes(), setAside);
            } else if (isStaged(s, *e)) {
                if (written && !as.singleWriterBlocks) {
                    why = "elements written by more than one block cannot be copied back";
                } else {
                    uint64_t extra = info.original == p ? 0 : info.bytes();
                    Occupancy o = occupancy(s.processor, st.threadsPerBlock, st.registersPerThread,
                                            st.sharedPerBlock + originalStaged + extra);
                    if (o.blocksPerSm < st.residentBlocks) {
                        why = fmt::format("staging {} bytes per block lowers the resident blocks "
                                          "per SM from {} to {}",
                                          info.bytes(), st.residentBlocks, o.blocksPerSm);
                    }
                }
            }
            if (why.empty()) {
                as.candidates.insert(p);
            } else {
                as.exclusions.push_back({p, std::move(why)});
            }
        }
        if (as.candidates.empty()) {
            // Global is where an array stays when nothing else works.
            as.candidates.insert(Place::Global);
            if (finalRun) {
                st.notes.push_back(
                    fmt::format("array '{}' has no feasible place; it stays global", info.name));
            }
        }
    };
    std::vector<std::vector<bool>> needGroup(narrays, std::vector<bool>(groups.size(), false));
    std::vector<std::vector<bool>> needKind(narrays, std::vector<bool>(st.kinds.size(), false));
    auto computeNeeds = [&](size_t a) {
        std::fill(needGroup[a].begin(), needGroup[a].end(), false);
        std::fill(needKind[a].begin(), needKind[a].end(), false);
        for (Place p : kAllPlaces) {
            if (!st.arrays[a].candidates.contains(p)) {
                continue;
            }
            for (const auto& l : s.findPlace(p)->levels) {
                const spec::Memory* m = s.findMemory(l);
                if (m == nullptr) {
                    continue;
                }
                auto mi = static_cast<size_t>(m - s.memories.data());
                if (memoryGroup[mi] >= 0) {
                    needGroup[a][static_cast<size_t>(memoryGroup[mi])] = true;
                }
                if (st.memoryKind[mi] >= 0) {
                    needKind[a][static_cast<size_t>(st.memoryKind[mi])] = true;
                }
            }
        }
    };
    for (size_t a = 0; a < narrays; ++a) {
        computeCandidates(a, false);
        computeNeeds(a);
    }

    // --- One pass over the records: transactions and pattern statistics ------------------
    // Records come grouped by block, so "the last block that touched this element/line" tables
    // count distinct elements and lines per block in O(1) per lane.
    std::vector<double> arrayLanes(narrays, 0);
    for (const Record& r : records) {
        arrayLanes[r.array] += r.lanes;
    }
    struct PerArray {
        std::unique_ptr<KeyTable> elements;                 // element -> last block + 1
        std::unique_ptr<KeyTable> writers;                  // element -> writing block + 1
        std::unique_ptr<KeyTable> writtenSectors;           // sector -> last block + 1
        std::vector<std::unique_ptr<KeyTable>> deviceLines; // per device kind
        double blockLanes = 0, blockDistinct = 0;
        uint32_t block = UINT32_MAX;
        double uniformReads = 0, sectors = 0, ideal = 0, multiRow = 0, reuseSum = 0,
               reuseBlocks = 0;
        double blocksTouched = 0; ///< traced blocks that access the array
        std::vector<double> perBlockLines;
        std::vector<double> rtx, wtx;
    };
    std::vector<PerArray> pa(narrays);
    for (size_t a = 0; a < narrays; ++a) {
        const auto& info = h.arrays[a];
        auto expected = static_cast<uint64_t>(arrayLanes[a]);
        if (st.arrays[a].candidates.contains(Place::Shared)) {
            pa[a].elements = std::make_unique<KeyTable>(info.length, expected);
        }
        if (info.mode != trace::ArrayMode::Read) {
            pa[a].writers = std::make_unique<KeyTable>(info.length, expected);
            pa[a].writtenSectors =
                std::make_unique<KeyTable>((info.bytes() + 31) / 32 + 1, expected);
        }
        if (sampledBlocks) {
            for (size_t k : deviceKinds) {
                uint64_t lb = st.kinds[k].lineBytes;
                pa[a].deviceLines.push_back(
                    std::make_unique<KeyTable>((info.bytes() + lb - 1) / lb + 1, expected));
            }
            pa[a].perBlockLines.assign(deviceKinds.size(), 0.0);
        }
        pa[a].rtx.assign(groups.size(), 0.0);
        pa[a].wtx.assign(groups.size(), 0.0);
    }
    std::vector<uint64_t> lines;
    std::vector<uint64_t> keys;
    lines.reserve(4096);
    keys.reserve(4096);
    SmallSet set;
    // The 32-byte lines of every record, kept for the 32-byte caches' streams when they fit a
    // budget (as 32-bit line numbers).
    constexpr size_t kLineCacheBudget = size_t{1} << 26;
    bool cacheLines = true;
    for (const auto& info : h.arrays) {
        cacheLines = cacheLines && info.bytes() / 32 < (uint64_t{1} << 32);
    }
    std::vector<uint32_t> cachedLines;
    std::vector<uint64_t> cachedStart;
    if (cacheLines) {
        cachedStart.reserve(records.size() + 1);
        cachedStart.push_back(0);
    }
    auto closeBlock = [&](PerArray& p) {
        if (p.block != UINT32_MAX && p.blockDistinct > 0) {
            p.reuseSum += p.blockLanes / p.blockDistinct;
            p.reuseBlocks += 1;
        }
        p.blockLanes = 0;
        p.blockDistinct = 0;
    };
    for (const Record& r : records) {
        const auto& info = h.arrays[r.array];
        PerArray& p = pa[r.array];
        ArrayStats& as = st.arrays[r.array];
        auto offs = t.lanes(r);
        const uint32_t tag = r.block + 1;
        if (r.block != p.block) {
            closeBlock(p);
            p.block = r.block;
            p.blocksTouched += 1;
        }
        // Distinct elements of this block (for arrays that could be staged).
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
        const bool read = r.kind == AccessKind::Read;
        if (!read) {
            for (int64_t o : offs) {
                uint32_t& w = p.writers->at(static_cast<uint64_t>(o));
                if (w != 0 && w != tag) {
                    as.singleWriterBlocks = false;
                }
                w = tag;
                uint32_t& sct =
                    p.writtenSectors->at(static_cast<uint64_t>(o) * info.elementSize / 32);
                if (sct != tag) {
                    sct = tag;
                    as.copyBackSectors += 1;
                }
            }
        }
        if (sampledBlocks) {
            for (size_t dk = 0; dk < deviceKinds.size(); ++dk) {
                uint64_t lb = st.kinds[deviceKinds[dk]].lineBytes;
                linesOf(offs, info.elementSize, lb, shiftOf(lb), lines, set);
                for (uint64_t l : lines) {
                    uint32_t& seen = p.deviceLines[dk]->at(l);
                    if (seen != tag) {
                        seen = tag;
                        p.perBlockLines[dk] += 1;
                    }
                }
            }
        }
        // Pattern statistics.
        linesOf(offs, info.elementSize, 32, 5, lines, set);
        const auto sectorCount = static_cast<uint32_t>(lines.size());
        p.sectors += static_cast<double>(sectorCount);
        if (cacheLines) {
            if (cachedLines.size() + lines.size() > kLineCacheBudget) {
                cacheLines = false;
                cachedLines = {};
                cachedStart = {};
            } else {
                for (uint64_t l : lines) {
                    cachedLines.push_back(static_cast<uint32_t>(l));
                }
                cachedStart.push_back(cachedLines.size());
            }
        }
        p.ideal += static_cast<double>((uint64_t{r.lanes} * info.elementSize + 31) / 32);
        if (read &&
            std::all_of(offs.begin(), offs.end(), [&](int64_t o) { return o == offs[0]; })) {
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
        // Transactions under every condition a candidate place needs.
        auto& acc = read ? p.rtx : p.wtx;
        const auto& need = needGroup[r.array];
        for (size_t g = 0; g < groups.size(); ++g) {
            if (need[g]) {
                acc[g] += groups[g].sectors32
                              ? sectorCount
                              : countTransactions(groups[g], offs, info.elementSize, keys, set);
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
    for (size_t a = 0; a < narrays; ++a) {
        closeBlock(pa[a]);
        ArrayStats& as = st.arrays[a];
        for (size_t g = 0; g < groups.size(); ++g) {
            for (size_t m : groups[g].memories) {
                as.readTransactions[m] = pa[a].rtx[g] * st.scale;
                as.writeTransactions[m] = pa[a].wtx[g] * st.scale;
            }
        }
        pa[a].elements.reset();
        pa[a].writers.reset();
        pa[a].writtenSectors.reset();
        pa[a].deviceLines.clear();
        computeCandidates(a, true);
        computeNeeds(a);
    }
    phase("transactions and patterns");

    // --- Reuse distances --------------------------------------------------------------------
    const uint32_t sms = std::max<uint32_t>(1, s.processor.sms);
    const auto blocks = blocksOf(t);
    std::optional<Order> orderSm, orderDevice, orderBlock, orderWarp;
    auto orderFor = [&](ShareScope scope) -> const Order& {
        switch (scope) {
        case ShareScope::Sm:
            if (!orderSm) {
                orderSm = smOrder(blocks, sms, st.residentBlocks);
            }
            return *orderSm;
        case ShareScope::Device:
            if (!orderSm) {
                orderSm = smOrder(blocks, sms, st.residentBlocks);
            }
            if (!orderDevice) {
                orderDevice = deviceOrder(*orderSm);
            }
            return *orderDevice;
        case ShareScope::Block:
            if (!orderBlock) {
                orderBlock = blockOrder(blocks);
            }
            return *orderBlock;
        case ShareScope::Warp:
        case ShareScope::Thread:
            break;
        }
        if (!orderWarp) {
            orderWarp = warpOrder(t);
        }
        return *orderWarp;
    };
    const bool sampling = options.lineSampleRate < 1.0;
    const double invRate = 1.0 / options.lineSampleRate;
    const auto threshold = static_cast<uint64_t>(options.lineSampleRate * 16777216.0);
    std::vector<uint64_t> salts(narrays);
    for (size_t a = 0; a < narrays; ++a) {
        salts[a] = hashLine(a + 1, options.seed);
    }
    // One traversal per sharing scope serves every kind (line size) of that scope.
    std::vector<ShareScope> scopes;
    for (const auto& k : st.kinds) {
        if (std::find(scopes.begin(), scopes.end(), k.scope) == scopes.end()) {
            scopes.push_back(k.scope);
        }
    }
    for (ShareScope scope : scopes) {
        struct KindState {
            size_t k;
            StreamKind kind;
            int shift;
            bool cached;
            std::vector<std::unique_ptr<StackDistance>> stacks;
            std::vector<uint8_t> sampled; ///< SHARDS for this array (large footprints only)
            std::vector<uint8_t> need;    ///< a candidate place of the array uses this kind
        };
        std::vector<KindState> ks;
        for (size_t k = 0; k < st.kinds.size(); ++k) {
            if (st.kinds[k].scope != scope) {
                continue;
            }
            bool any = false;
            for (size_t a = 0; a < narrays; ++a) {
                if (needKind[a][k]) {
                    any = true;
                    st.arrays[a].streams[k].analysed = true;
                }
            }
            if (any) {
                ks.push_back({k,
                              st.kinds[k],
                              shiftOf(st.kinds[k].lineBytes),
                              cacheLines && st.kinds[k].lineBytes == 32,
                              {},
                              {},
                              {}});
                ks.back().stacks.resize(narrays);
                // Sampling a small footprint saves little and leaves too few lines to measure:
                // only arrays with at least ~1024 expected sampled lines are sampled.
                ks.back().sampled.assign(narrays, 0);
                ks.back().need.assign(narrays, 0);
                for (size_t a = 0; a < narrays; ++a) {
                    ks.back().need[a] = needKind[a][k] ? 1 : 0;
                    double range = static_cast<double>(h.arrays[a].bytes()) /
                                   static_cast<double>(st.kinds[k].lineBytes);
                    ks.back().sampled[a] = sampling && range * options.lineSampleRate >= 1024;
                }
            }
        }
        if (ks.empty()) {
            continue;
        }
        const bool deviceScope = scope == ShareScope::Device;
        const Order& order = orderFor(scope);
        std::vector<uint8_t> touchedFlag(narrays, 0);
        std::vector<uint32_t> touched;
        size_t begin = 0;
        for (size_t end : order.segmentEnd) {
            for (size_t p = begin; p < end; ++p) {
                const uint32_t ri = order.idx[p];
                const Record& r = records[ri];
                const uint16_t a = r.array;
                if (!deviceScope && r.kind != AccessKind::Read) {
                    continue; // write-through: writes skip SM-, block- and warp-scoped caches
                }
                const auto& info = h.arrays[a];
                const bool read = r.kind == AccessKind::Read;
                for (auto& kst : ks) {
                    if (kst.need[a] == 0) {
                        continue;
                    }
                    auto& stack = kst.stacks[a];
                    const bool sampleThis = kst.sampled[a] != 0;
                    if (!stack) {
                        uint64_t range =
                            (info.bytes() + kst.kind.lineBytes - 1) / kst.kind.lineBytes + 1;
                        stack = std::make_unique<StackDistance>(
                            range,
                            static_cast<uint64_t>(arrayLanes[a] / (sampleThis ? invRate : 1.0)));
                    }
                    if (touchedFlag[a] == 0) {
                        touchedFlag[a] = 1;
                        touched.push_back(a);
                    }
                    ArrayStream& as = st.arrays[a].streams[kst.k];
                    Histogram& hist = read ? as.reads : as.writes;
                    const uint64_t* first = nullptr;
                    const uint64_t* last = nullptr;
                    const uint32_t* cfirst = nullptr;
                    const uint32_t* clast = nullptr;
                    if (kst.cached) {
                        cfirst = cachedLines.data() + cachedStart[ri];
                        clast = cachedLines.data() + cachedStart[ri + 1];
                    } else {
                        linesOf(t.lanes(r), info.elementSize, kst.kind.lineBytes, kst.shift, lines,
                                set);
                        first = lines.data();
                        last = lines.data() + lines.size();
                    }
                    StackDistance& sd = *stack;
                    if (!sampleThis) {
                        // The hot loop: exact distances.
                        for (const uint32_t* c = cfirst; c != clast; ++c) {
                            hist.add(sd.access(*c));
                        }
                        for (const uint64_t* c = first; c != last; ++c) {
                            hist.add(sd.access(*c));
                        }
                        continue;
                    }
                    auto visit = [&](uint64_t l) {
                        if ((hashLine(l, salts[a]) & 0xffffffu) >= threshold) {
                            return;
                        }
                        uint64_t d = sd.access(l);
                        hist.add(d == kColdDistance
                                     ? d
                                     : static_cast<uint64_t>(static_cast<double>(d) * invRate),
                                 invRate);
                    };
                    for (const uint32_t* c = cfirst; c != clast; ++c) {
                        visit(*c);
                    }
                    for (const uint64_t* c = first; c != last; ++c) {
                        visit(*c);
                    }
                }
            }
            for (uint32_t a : touched) {
                for (auto& kst : ks) {
                    if (!kst.stacks[a]) {
                        continue;
                    }
                    ArrayStream& as = st.arrays[a].streams[kst.k];
                    as.footprintLines += static_cast<double>(kst.stacks[a]->distinct()) *
                                         (kst.sampled[a] != 0 ? invRate : 1.0);
                    as.instances += 1;
                    kst.stacks[a]->reset();
                }
                touchedFlag[a] = 0;
            }
            touched.clear();
            begin = end;
        }
        phase(fmt::format("reuse distances, {} scope", spec::shareScopeName(scope)));
    }
    for (auto& as : st.arrays) {
        for (auto& stream : as.streams) {
            if (stream.instances > 0) {
                stream.footprintLines /= stream.instances;
            }
            stream.reads.finalize();
            stream.writes.finalize();
        }
    }

    // Sampled blocks: stretch device-scoped distances by the footprint the untraced blocks
    // would add, judged by how much the traced blocks' footprints overlap.
    if (st.tracedBlocks < st.blocks) {
        const double concurrent = std::min<double>(static_cast<double>(st.blocks),
                                                   static_cast<double>(sms) * st.residentBlocks);
        const double tracedConcurrent =
            std::min<double>(static_cast<double>(st.tracedBlocks), concurrent);
        for (size_t dk = 0; dk < deviceKinds.size(); ++dk) {
            size_t k = deviceKinds[dk];
            for (size_t a = 0; a < narrays; ++a) {
                ArrayStream& as = st.arrays[a].streams[k];
                double n = pa[a].blocksTouched;
                double sum = pa[a].perBlockLines[dk];
                if (!as.analysed || n <= 0 || sum <= 0) {
                    continue;
                }
                double overlap = std::clamp(as.footprintLines / sum, 1.0 / n, 1.0);
                double disjoint = n > 1 ? (overlap - 1.0 / n) / (1.0 - 1.0 / n) : 1.0;
                as.extrapolation = 1.0 + (concurrent / tracedConcurrent - 1.0) * disjoint;
                // First touches. The traced blocks' cold lines stand for scale times as many in
                // the grid, but the grid touches at most the array's lines (or the traced
                // footprint scaled, for arrays blocks share little of): the rest were first
                // touched by an untraced block, and are reuses spread evenly below the grid's
                // footprint (Histogram::warmCold): for gathers, a cache holding a share of the
                // array serves that share of them, not all or nothing.
                const double lines = gridLines(st, a, k);
                const double cold = (as.reads.cold() + as.writes.cold()) * st.scale;
                if (cold > lines && lines > 0) {
                    const double warm = 1.0 - lines / cold;
                    const auto distance = static_cast<uint64_t>(
                        std::max(1.0, lines / std::max(1.0, as.extrapolation)));
                    as.reads.warmCold(warm, distance);
                    as.writes.warmCold(warm, distance);
                    as.reads.finalize();
                    as.writes.finalize();
                }
            }
        }
        st.notes.push_back(fmt::format(
            "the trace covers {} of {} blocks: counts are scaled by {:.4g}, L2 reuse distances "
            "stretched by each array's footprint overlap across blocks, and first touches beyond "
            "the array's lines made L2 reuses",
            st.tracedBlocks, st.blocks, st.scale));
    }
    if (sampling) {
        st.notes.push_back(fmt::format("reuse distances from SHARDS line sampling at rate {:g}",
                                       options.lineSampleRate));
    }

    // Reads a plain pointer keeps behind a store. A kernel with shared memory synchronises its
    // block, and a barrier orders loads after stores whatever the pointers: none counted there.
    const std::vector<double> ordered =
        st.sharedPerBlock == 0 ? orderedReads(t, narrays) : std::vector<double>(narrays, 0.0);
    // Pattern statistics, per request and per block.
    for (size_t a = 0; a < narrays; ++a) {
        ArrayStats& as = st.arrays[a];
        const PerArray& p = pa[a];
        double requests = as.readRequests + as.writeRequests;
        if (requests > 0) {
            as.sectorsPerRequest = p.sectors / requests;
            as.idealSectorsPerRequest = p.ideal / requests;
            as.multiRowFraction = p.multiRow / requests;
        }
        if (as.readRequests > 0) {
            as.uniformFraction = p.uniformReads / as.readRequests;
        }
        if (p.reuseBlocks > 0) {
            as.blockReuse = p.reuseSum / p.reuseBlocks;
        }
        as.copyBackSectors *= st.scale;
        as.orderedReadRequests = ordered[a] * st.scale;
        as.readRequests *= st.scale;
        as.writeRequests *= st.scale;
        as.readLanes *= st.scale;
        as.writeLanes *= st.scale;
    }

    st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return st;
}

} // namespace memplace::model

#include "model/analysis.h"

#include "common/feasibility.h"
#include "model/analysis_internal.h"
#include "model/occupancy.h"
#include "model/staged.h"
#include "model/stream_order_internal.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace memplace::model {

namespace detail {

namespace {

using spec::ShareScope;

std::string placeListText(const std::vector<uint32_t>& dims) {
    std::string s;
    for (uint32_t d : dims) {
        s += (s.empty() ? "" : " or ") + std::to_string(d) + "-D";
    }
    return s;
}

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

} // namespace

void describeTrace(Analysis& A) {
    TraceStats& st = A.st;
    const trace::TraceHeader& h = A.h;
    const spec::Spec& s = A.s;
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
    st.records = A.records.size();
    st.lanes = A.t.laneCount();
    st.lineSampleRate = A.options.lineSampleRate;
    if (s.processor.warpSize != 32) {
        st.notes.push_back(fmt::format("the spec's warp size is {}; traces group lanes by 32",
                                       s.processor.warpSize));
    }
}

/// Memories any place reaches; caches get a stream kind.
void findStreamKinds(Analysis& A) {
    TraceStats& st = A.st;
    const spec::Spec& s = A.s;
    const size_t nmem = A.nmem;
    std::vector<bool>& used = A.used;
    used.assign(nmem, false);
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
    std::vector<size_t>& deviceKinds = A.deviceKinds;
    for (size_t k = 0; k < st.kinds.size(); ++k) {
        if (st.kinds[k].scope == ShareScope::Device) {
            deviceKinds.push_back(k);
        }
    }
}

/// Serialization conditions, grouped by what they count.
void groupConditions(Analysis& A) {
    const spec::Spec& s = A.s;
    const size_t nmem = A.nmem;
    const std::vector<bool>& used = A.used;
    std::vector<ConditionGroup>& groups = A.groups;
    std::vector<int>& memoryGroup = A.memoryGroup;
    memoryGroup.assign(nmem, -1);
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

/// Resident blocks of the original placement: the kernel's shared memory plus the arrays it
/// already stages.
void originalOccupancy(Analysis& A) {
    TraceStats& st = A.st;
    const spec::Spec& s = A.s;
    uint64_t& originalStaged = A.originalStaged;
    for (const auto& a : A.h.arrays) {
        const spec::PlaceEntry* e = s.findPlace(a.original);
        if (e != nullptr && detail::isStagedEntry(s, *e)) {
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
}

void initArrays(Analysis& A) {
    TraceStats& st = A.st;
    const size_t narrays = A.narrays;
    const size_t nmem = A.nmem;
    const trace::TraceHeader& h = A.h;
    st.arrays.resize(narrays);
    for (size_t a = 0; a < narrays; ++a) {
        st.arrays[a].info = h.arrays[a];
        st.arrays[a].readTransactions.assign(nmem, 0.0);
        st.arrays[a].writeTransactions.assign(nmem, 0.0);
        st.arrays[a].streams.resize(st.kinds.size());
    }
    A.sampledBlocks = st.tracedBlocks < st.blocks;
    A.needGroup.assign(narrays, std::vector<bool>(A.groups.size(), false));
    A.needKind.assign(narrays, std::vector<bool>(st.kinds.size(), false));
}

void computeCandidates(Analysis& A, size_t a, bool finalRun) {
    TraceStats& st = A.st;
    const spec::Spec& s = A.s;
    const uint64_t originalStaged = A.originalStaged;
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
        } else if (info.mode == trace::ArrayMode::Atomic && !placeTakesAtomics(p)) {
            why = "atomics stay in global memory";
        } else if (!e->dims.empty() &&
                   std::find(e->dims.begin(), e->dims.end(), info.dims) == e->dims.end()) {
            why = fmt::format("{} takes {} arrays", placeName(p), placeListText(e->dims));
        } else if (e->capacity > 0 && info.bytes() > e->capacity && p != Place::Global) {
            why = fmt::format("{} bytes exceed the {} bytes {} offers", info.bytes(), e->capacity,
                              placeName(p));
        } else if (const uint64_t setAside = persistingSetAside(s, *e);
                   setAside > 0 && info.bytes() > 2 * setAside) {
            why = fmt::format("{} bytes are more than twice the {}-byte persisting set-aside: "
                              "a window that large thrashes it (2.0-2.4x slower on an H100)",
                              info.bytes(), setAside);
        } else if (detail::isStagedEntry(s, *e)) {
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
}

void computeNeeds(Analysis& A, size_t a) {
    const TraceStats& st = A.st;
    const spec::Spec& s = A.s;
    const std::vector<int>& memoryGroup = A.memoryGroup;
    std::vector<std::vector<bool>>& needGroup = A.needGroup;
    std::vector<std::vector<bool>>& needKind = A.needKind;
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
}

void patternStatistics(Analysis& A) {
    TraceStats& st = A.st;
    const size_t narrays = A.narrays;
    const std::vector<PerArray>& pa = A.pa;
    // Reads a plain pointer keeps behind a store. A kernel with shared memory synchronises its
    // block, and a barrier orders loads after stores whatever the pointers: none counted there.
    const std::vector<double> ordered =
        st.sharedPerBlock == 0 ? orderedReads(A.t, narrays) : std::vector<double>(narrays, 0.0);
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
}

} // namespace detail

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

Expected<TraceStats> analyze(const trace::Trace& t, const spec::Spec& s,
                             const AnalysisOptions& options) {
    if (s.findPlace(Place::Global) == nullptr) {
        return fail(fmt::format("spec '{}' has no global place", s.name));
    }
    if (!(options.lineSampleRate > 0 && options.lineSampleRate <= 1)) {
        return fail(fmt::format("line sample rate {} must be in (0, 1]", options.lineSampleRate));
    }
    detail::Analysis A(t, s, options);
    detail::describeTrace(A);
    detail::findStreamKinds(A);
    detail::groupConditions(A);
    detail::originalOccupancy(A);
    detail::initArrays(A);
    for (size_t a = 0; a < A.narrays; ++a) {
        detail::computeCandidates(A, a, false);
        detail::computeNeeds(A, a);
    }
    detail::countRecords(A); // ends with the final candidates
    A.phase("transactions and patterns");
    detail::reuseDistances(A);
    if (A.sampledBlocks) {
        detail::stretchSampledBlocks(A);
    }
    if (options.lineSampleRate < 1.0) {
        A.st.notes.push_back(fmt::format("reuse distances from SHARDS line sampling at rate {:g}",
                                         options.lineSampleRate));
    }
    detail::patternStatistics(A);
    A.st.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - A.started).count();
    return std::move(A.st);
}

} // namespace memplace::model

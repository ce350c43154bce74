// Building a Model: the spec's units, cache pools, paths and capacity groups, and per array
// the options (one per feasible place, aliases folded) with their levels' transactions, reuse
// histograms and costs. Done once per trace and spec; model_evaluate.cpp then prices
// placements from these tables.
#include "model/model.h"
#include "model/model_internal.h"
#include "model/occupancy.h"

#include <algorithm>
#include <cmath>

namespace memplace::model {

using detail::indexOf;
using detail::isStagedEntry;
using detail::memoryIndex;
using detail::unitOf;

void Model::buildOptions(const spec::Spec& spec) {
    Layout layout;
    buildUnits(spec, layout);
    buildPools(spec, layout);
    buildPaths(spec, layout);
    buildCapacityGroups(spec, layout);
    Occupancy o0 = occupancy(processor_, stats_.threadsPerBlock, stats_.registersPerThread, 0);
    otherLimit_ = std::min({o0.byWarps, o0.byBlocks, o0.byRegisters});
    originalResident_ = stats_.residentBlocks;

    ordersReads_ = std::any_of(stats_.arrays.begin(), stats_.arrays.end(),
                               [](const ArrayStats& as) { return as.orderedReadRequests > 0; });
    for (const auto& as : stats_.arrays) {
        arrays_.push_back(buildArray(spec, as, layout));
    }
}

/// Units and their capacity (the largest memory of the unit), and the staged memory's unit.
void Model::buildUnits(const spec::Spec& spec, Layout& layout) {
    std::vector<double>& unitBytes = layout.unitBytes;
    std::vector<int>& memoryUnit = layout.memoryUnit;
    memoryUnit.assign(spec.memories.size(), -1);
    for (const auto& m : spec.memories) {
        memoryNames_.push_back(m.name);
    }
    // Units and their capacity (the largest memory of the unit).
    for (size_t m = 0; m < spec.memories.size(); ++m) {
        int u = indexOf(units_, unitOf(spec.memories[m]));
        memoryUnit[m] = u;
        if (unitBytes.size() < units_.size()) {
            unitBytes.resize(units_.size(), 0);
        }
        unitBytes[static_cast<size_t>(u)] =
            std::max(unitBytes[static_cast<size_t>(u)], static_cast<double>(spec.memories[m].size));
    }
    if (units_.size() > 64) {
        units_.resize(64); // masks are 64 bits; no real spec comes close
    }
    // The staged (shared) memory and its unit.
    for (const auto& e : spec.places) {
        if (isStagedEntry(spec, e)) {
            sharedUnit_ = memoryUnit[static_cast<size_t>(memoryIndex(spec, e.memory))];
        }
    }
}

/// Cache pools: a unit's caches share its capacity; a persisting partition is a pool of its own.
void Model::buildPools(const spec::Spec& spec, Layout& layout) {
    const std::vector<double>& unitBytes = layout.unitBytes;
    const std::vector<int>& memoryUnit = layout.memoryUnit;
    std::vector<int>& memoryPool = layout.memoryPool;
    memoryPool.assign(spec.memories.size(), -1);
    // Partitions: caches of the l2persist place that the global place does not pass.
    std::vector<bool> partition(spec.memories.size(), false);
    if (const spec::PlaceEntry* persist = spec.findPlace(Place::L2Persist)) {
        const spec::PlaceEntry* global = spec.findPlace(Place::Global);
        for (const auto& l : persist->levels) {
            int m = memoryIndex(spec, l);
            if (m >= 0 && !spec.memories[static_cast<size_t>(m)].softwareManaged &&
                std::find(global->levels.begin(), global->levels.end(), l) ==
                    global->levels.end()) {
                partition[static_cast<size_t>(m)] = true;
            }
        }
    }
    for (size_t m = 0; m < spec.memories.size(); ++m) {
        const auto& mem = spec.memories[m];
        if (mem.softwareManaged || stats_.memoryKind[m] < 0) {
            continue;
        }
        Pool p;
        p.unit = memoryUnit[m];
        p.partition = partition[m];
        p.name = p.partition ? mem.name : units_[static_cast<size_t>(p.unit)];
        p.baseBytes =
            p.partition ? static_cast<double>(mem.size) : unitBytes[static_cast<size_t>(p.unit)];
        p.carved = p.unit == sharedUnit_ && !p.partition;
        p.device = mem.shareScope == spec::ShareScope::Device;
        p.cacheBytes = static_cast<double>(mem.size);
        auto it = std::find_if(pools_.begin(), pools_.end(),
                               [&](const Pool& q) { return q.name == p.name; });
        if (it == pools_.end()) {
            pools_.push_back(p);
            it = pools_.end() - 1;
        }
        it->cacheBytes = std::max(it->cacheBytes, static_cast<double>(mem.size));
        memoryPool[m] = static_cast<int>(it - pools_.begin());
    }
    // A persisting partition matters across launches when the kernel's arrays would not stay
    // in the rest of the unit anyway (more than half of it; an H100's or H200's L2 serves its
    // two halves' SMs from separate partitions).
    double kernelBytes = 0;
    for (const auto& a : stats_.arrays) {
        kernelBytes += static_cast<double>(a.info.bytes());
    }
    for (auto& p : pools_) {
        p.outlivesLaunches =
            p.partition && kernelBytes > 0.5 * unitBytes[static_cast<size_t>(p.unit)];
    }
}

/// Paths and the units each passes.
void Model::buildPaths(const spec::Spec& spec, const Layout& layout) {
    const std::vector<int>& memoryUnit = layout.memoryUnit;
    for (const auto& e : spec.places) {
        int p = indexOf(paths_, e.path);
        if (pathUnits_.size() < paths_.size()) {
            pathUnits_.resize(paths_.size(), 0);
        }
        auto addUnit = [&](int m) {
            if (m >= 0 && memoryUnit[static_cast<size_t>(m)] < 64) {
                pathUnits_[static_cast<size_t>(p)] |= uint64_t{1}
                                                      << memoryUnit[static_cast<size_t>(m)];
            }
        };
        for (const auto& l : e.levels) {
            addUnit(memoryIndex(spec, l));
        }
        if (isStagedEntry(spec, e)) {
            for (const auto& l : spec.findPlace(Place::Global)->levels) {
                int m = memoryIndex(spec, l);
                if (m >= 0 &&
                    spec.memories[static_cast<size_t>(m)].shareScope == spec::ShareScope::Device) {
                    addUnit(m);
                }
            }
        }
    }
}

/// Capacity groups: places with a capacity.
void Model::buildCapacityGroups(const spec::Spec& spec, Layout& layout) {
    std::vector<int>& placeGroup = layout.placeGroup;
    placeGroup.assign(kAllPlaces.size(), -1);
    uint64_t allBytes = stats_.sharedPerBlock;
    for (const auto& as : stats_.arrays) {
        allBytes += as.info.bytes() + (as.info.length + 31) / 32 * 4; // with a dirty bitmap
    }
    for (const auto& e : spec.places) {
        // A capacity no placement can exceed constrains nothing; global holds the arrays the
        // program already allocated.
        if (e.capacity == 0 || e.capacity >= allBytes || e.place == Place::Global) {
            continue;
        }
        CapacityGroup g;
        g.place = std::string(placeName(e.place));
        g.capacity = e.capacity;
        g.base = isStagedEntry(spec, e) ? stats_.sharedPerBlock : 0;
        capacityGroups_.push_back(g);
        placeGroup[static_cast<size_t>(e.place)] = static_cast<int>(capacityGroups_.size() - 1);
    }
}

/// Array `as`'s options: global first, then its other candidates in Place order, each place
/// reached exactly like an earlier one folded into it as an alias.
Model::ArrayPre Model::buildArray(const spec::Spec& spec, const ArrayStats& as,
                                  const Layout& layout) {
    ArrayPre a;
    a.name = as.info.name;
    a.written = as.info.mode != trace::ArrayMode::Read;
    std::vector<Place> order;
    if (as.candidates.contains(Place::Global)) {
        order.push_back(Place::Global);
    }
    for (Place p : kAllPlaces) {
        if (p != Place::Global && as.candidates.contains(p)) {
            order.push_back(p);
        }
    }
    for (Place p : order) {
        Option o = buildOption(spec, as, p, layout);
        // A place reached exactly like an earlier one (read-only path and global on sm_70+:
        // same levels, same path, no capacity) costs the same in every placement; the
        // search keeps the first (global), which the tie-break prefers anyway.
        const int same = sameOption(a, o);
        if (same >= 0) {
            a.optionOf[static_cast<size_t>(p)] = same;
            a.aliases.push_back(p);
            continue;
        }
        a.optionOf[static_cast<size_t>(p)] = static_cast<int>(a.options.size());
        maxLevels_ = std::max(maxLevels_, o.levels.size());
        a.options.push_back(std::move(o));
        a.places.push_back(p);
    }
    a.original = a.optionOf[static_cast<size_t>(as.info.original)] >= 0 ? as.info.original
                 : a.optionOf[static_cast<size_t>(Place::Global)] >= 0  ? Place::Global
                                                                        : a.places.front();
    if (as.readRequests + as.writeRequests == 0) {
        // Never accessed: where it lives changes nothing but capacity. The search leaves it
        // where the program keeps it (its other places still evaluate).
        a.places = {a.original};
    }
    return a;
}

/// Array `as` in place `p`: its levels, nearest first, with what each costs it.
Model::Option Model::buildOption(const spec::Spec& spec, const ArrayStats& as, Place p,
                                 const Layout& layout) {
    const spec::PlaceEntry* e = spec.findPlace(p);
    Option o;
    o.place = p;
    o.path = indexOf(paths_, e->path);
    o.capacityGroup = layout.placeGroup[static_cast<size_t>(p)];
    o.bytes = as.info.bytes();
    o.persisting = p == Place::L2Persist;
    if ((p == Place::Global || p == Place::L2Persist) && as.readRequests > 0) {
        o.readSerialization = 1 + as.orderedReadRequests / as.readRequests;
    }
    if (isStagedEntry(spec, *e)) {
        bool written = as.info.mode != trace::ArrayMode::Read;
        o.stagedBytes = o.bytes + (written ? (as.info.length + 31) / 32 * 4 : 0);
        o.bytes = o.stagedBytes;
    }
    for (const auto& l : e->levels) {
        int m = memoryIndex(spec, l);
        if (m < 0) {
            continue;
        }
        const auto& mem = spec.memories[static_cast<size_t>(m)];
        LevelPre lp;
        lp.memory = m;
        lp.unit = layout.memoryUnit[static_cast<size_t>(m)];
        if (lp.unit < 64) {
            o.units |= uint64_t{1} << lp.unit;
        }
        lp.cache = !mem.softwareManaged;
        lp.readTx = as.readTransactions[static_cast<size_t>(m)];
        lp.writeTx = as.writeTransactions[static_cast<size_t>(m)];
        lp.readRequestCost = mem.requestCost * as.readRequests;
        lp.writeRequestCost = mem.requestCost * as.writeRequests;
        int k = stats_.memoryKind[static_cast<size_t>(m)];
        if (lp.cache && k >= 0) {
            const ArrayStream& st = as.streams[static_cast<size_t>(k)];
            lp.pool = layout.memoryPool[static_cast<size_t>(m)];
            lp.writeThrough = mem.shareScope != spec::ShareScope::Device;
            lp.readHist = &st.reads;
            lp.writeHist = &st.writes;
            lp.lineBytes = static_cast<double>(stats_.kinds[static_cast<size_t>(k)].lineBytes);
            lp.sizeBytes = static_cast<double>(mem.size);
            lp.extrapolation = std::max(1.0, st.extrapolation);
            lp.footprintBytes = st.footprintLines * lp.lineBytes;
            lp.refs = st.reads.total() + (lp.writeThrough ? 0.0 : st.writes.total());
            const double allRefs = st.reads.total() + st.writes.total();
            lp.writtenShare = allRefs > 0 ? st.writes.total() / allRefs : 0.0;
            lp.txPerWriteLine =
                st.writes.total() > 0 ? lp.writeTx / (st.writes.total() * stats_.scale) : 1.0;
        } else if (lp.cache) {
            lp.cache = false; // a cache without a stream: treat as pass-through storage
        }
        o.levels.push_back(lp);
    }
    return o;
}

/// The earlier option of `a` that `o` is reached exactly like, or -1.
int Model::sameOption(const ArrayPre& a, const Option& o) const {
    const Place p = o.place;
    int same = -1;
    for (size_t j = 0; j < a.options.size(); ++j) {
        const Option& q = a.options[j];
        bool equal = q.path == o.path && q.capacityGroup == o.capacityGroup &&
                     q.stagedBytes == o.stagedBytes && q.persisting == o.persisting &&
                     q.readSerialization == o.readSerialization &&
                     !(ordersReads_ && (p == Place::ReadOnly || q.place == Place::ReadOnly)) &&
                     q.levels.size() == o.levels.size();
        for (size_t l = 0; equal && l < o.levels.size(); ++l) {
            equal = q.levels[l].memory == o.levels[l].memory;
        }
        if (equal) {
            same = static_cast<int>(j);
            break;
        }
    }
    return same;
}

void Model::setCosts(const spec::Spec& spec, bool memoryBound) {
    auto factor = [&](const spec::Memory& m) {
        return memoryBound ? m.concurrency.memoryBound : m.concurrency.computeBound;
    };
    // Staging goes through the global place's device-scoped levels.
    const spec::PlaceEntry* global = spec.findPlace(Place::Global);
    const spec::Memory* l2 = nullptr;
    const spec::Memory* dram = spec.findMemory(global->memory);
    for (const auto& l : global->levels) {
        const spec::Memory* m = spec.findMemory(l);
        if (m != nullptr && !m->softwareManaged && m->shareScope == spec::ShareScope::Device) {
            l2 = m;
            break;
        }
    }
    auto unitIdx = [&](const spec::Memory* m) {
        return static_cast<int>(std::find(units_.begin(), units_.end(), unitOf(*m)) -
                                units_.begin());
    };
    for (const auto& e : spec.places) {
        launchCycles_[static_cast<size_t>(e.place)] =
            memoryBound ? e.launchCost.memoryBound : e.launchCost.computeBound;
    }
    const double blocks = static_cast<double>(stats_.blocks);
    for (size_t i = 0; i < arrays_.size(); ++i) {
        const ArrayStats& as = stats_.arrays[i];
        for (auto& o : arrays_[i].options) {
            for (auto& l : o.levels) {
                const spec::Memory& m = spec.memories[static_cast<size_t>(l.memory)];
                l.readCost = m.latency.read * factor(m);
                l.writeCost = m.latency.write * factor(m);
            }
            o.staging.clear();
            o.stagingCycles = 0;
            if (o.stagedBytes == 0) {
                continue;
            }
            const spec::Memory* sh = spec.findMemory(spec.findPlace(o.place)->memory);
            const double arrayBytes = static_cast<double>(as.info.bytes());
            const double line =
                static_cast<double>(l2 != nullptr ? l2->blockSize : dram->blockSize);
            const double sectors = std::ceil(arrayBytes / line);
            const double rowBytes =
                static_cast<double>(sh->banks.value_or(32)) * static_cast<double>(sh->wordSize);
            double dramLoads = sectors * blocks;
            double l2Loads = 0;
            if (l2 != nullptr && arrayBytes <= static_cast<double>(l2->size)) {
                dramLoads = sectors;
                l2Loads = sectors * (blocks - 1);
            }
            double sharedStores = blocks * std::ceil(arrayBytes / rowBytes);
            double l2Cycles = l2 != nullptr ? l2Loads * l2->latency.read * factor(*l2) : 0;
            double dramCycles = dramLoads * dram->latency.read * factor(*dram);
            double sharedCycles = sharedStores * sh->latency.write * factor(*sh);
            if (as.info.mode != trace::ArrayMode::Read) {
                double back = as.copyBackSectors * (32.0 / line);
                if (l2 != nullptr) {
                    l2Cycles += back * l2->latency.write * factor(*l2);
                }
                dramCycles += back * dram->latency.write * factor(*dram);
                double bitmap = static_cast<double>((as.info.length + 31) / 32 * 4);
                sharedCycles += (blocks * std::ceil(bitmap / rowBytes) + back * line / rowBytes) *
                                sh->latency.read * factor(*sh);
            }
            if (l2 != nullptr) {
                o.staging.emplace_back(unitIdx(l2), l2Cycles);
            }
            o.staging.emplace_back(unitIdx(dram), dramCycles);
            o.staging.emplace_back(unitIdx(sh), sharedCycles);
            for (const auto& [u, c] : o.staging) {
                o.stagingCycles += c;
                if (u < 64) {
                    o.units |= uint64_t{1} << u;
                }
            }
        }
    }
}

} // namespace memplace::model

#include "model/model.h"

#include "model/occupancy.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <numeric>

namespace memplace::model {

std::string_view cachePolicyName(CachePolicy p) {
    return p == CachePolicy::EqualSplit ? "equal" : "footprint";
}
std::optional<CachePolicy> parseCachePolicy(std::string_view s) {
    if (s == "equal") {
        return CachePolicy::EqualSplit;
    }
    if (s == "footprint") {
        return CachePolicy::Footprint;
    }
    return std::nullopt;
}
std::string_view pathModelName(PathModel p) {
    return p == PathModel::SharedUnits ? "shared-units" : "porple";
}
std::optional<PathModel> parsePathModel(std::string_view s) {
    if (s == "shared-units") {
        return PathModel::SharedUnits;
    }
    if (s == "porple") {
        return PathModel::Porple;
    }
    return std::nullopt;
}
std::string_view boundednessName(Boundedness b) {
    switch (b) {
    case Boundedness::Auto:
        return "auto";
    case Boundedness::Memory:
        return "memory";
    case Boundedness::Compute:
        return "compute";
    }
    return "auto";
}
std::optional<Boundedness> parseBoundedness(std::string_view s) {
    for (Boundedness b : {Boundedness::Auto, Boundedness::Memory, Boundedness::Compute}) {
        if (boundednessName(b) == s) {
            return b;
        }
    }
    return std::nullopt;
}

struct Model::Scratch {
    std::vector<double> arrayCost;
    std::vector<double> unitLoad;
    /// Per unit, the load its storage levels and staging carry: it only grows as the arrays
    /// left out of a partial placement come in and take cache capacity (lowerBound; kept only
    /// for partial placements under overlapping units).
    std::vector<double> storageLoad;
    std::vector<double> pathLoad;
    double launch = 0; ///< the placement's launch costs (Model::launchCycles)
    std::vector<double> poolCap;
    std::vector<double> setAside;
    std::vector<uint64_t> groupBytes;
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> members; // per pool: array, level
    std::vector<double> levelCap;                                    // array * maxLevels + level
    std::vector<uint32_t> order;
    struct Member {
        double ratio; ///< footprint / refs
        double refs;
        double footprint; ///< bytes, extrapolated
        uint32_t index;   ///< into the pool's member list
    };
    std::vector<Member> member;
    size_t maxLevels = 0;
};

namespace {

std::string unitOf(const spec::Memory& m) {
    return m.unit.empty() ? m.name : m.unit;
}

bool isStagedEntry(const spec::Spec& s, const spec::PlaceEntry& e) {
    const spec::Memory* m = s.findMemory(e.memory);
    return m != nullptr && m->softwareManaged && m->shareScope == spec::ShareScope::Block;
}

template <typename T>
int indexOf(std::vector<T>& v, const T& x) {
    auto it = std::find(v.begin(), v.end(), x);
    if (it == v.end()) {
        v.push_back(x);
        return static_cast<int>(v.size() - 1);
    }
    return static_cast<int>(it - v.begin());
}

} // namespace

Model::Model(const spec::Spec& spec, TraceStats stats, ModelOptions options)
    : stats_(std::move(stats)), options_(options), specName_(spec.name),
      processor_(spec.processor) {
    buildOptions(spec);
    bool memoryBound = options_.bound != Boundedness::Compute;
    setCosts(spec, memoryBound);
    if (options_.bound == Boundedness::Auto) {
        // Memory-bound when, in the original placement, device memory carries at least half
        // of the critical path's time.
        const spec::PlaceEntry* g = spec.findPlace(Place::Global);
        const spec::Memory* dram = spec.findMemory(g->memory);
        Prediction p = predict(original());
        double dramCycles = 0;
        for (const auto& u : p.units) {
            if (u.unit == unitOf(*dram)) {
                dramCycles = u.cycles;
            }
        }
        // The kernel's own time: a launch cost (the constant upload) runs before it.
        const double kernelCycles = p.cycles - p.launchCycles;
        memoryBound = !p.feasible || kernelCycles <= 0 || dramCycles >= 0.5 * kernelCycles;
        if (!memoryBound) {
            setCosts(spec, false);
        }
    }
    memoryBound_ = memoryBound;
    computeBounds();
}

void Model::buildOptions(const spec::Spec& spec) {
    for (const auto& m : spec.memories) {
        memoryNames_.push_back(m.name);
    }
    // Units and their capacity (the largest memory of the unit).
    std::vector<double> unitBytes;
    std::vector<int> memoryUnit(spec.memories.size(), -1);
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
    auto memIndex = [&](const std::string& name) -> int {
        const spec::Memory* m = spec.findMemory(name);
        return m == nullptr ? -1 : static_cast<int>(m - spec.memories.data());
    };
    // The staged (shared) memory and its unit.
    for (const auto& e : spec.places) {
        if (isStagedEntry(spec, e)) {
            sharedUnit_ = memoryUnit[static_cast<size_t>(memIndex(e.memory))];
        }
    }
    // Partitions: caches of the l2persist place that the global place does not pass.
    std::vector<bool> partition(spec.memories.size(), false);
    if (const spec::PlaceEntry* persist = spec.findPlace(Place::L2Persist)) {
        const spec::PlaceEntry* global = spec.findPlace(Place::Global);
        for (const auto& l : persist->levels) {
            int m = memIndex(l);
            if (m >= 0 && !spec.memories[static_cast<size_t>(m)].softwareManaged &&
                std::find(global->levels.begin(), global->levels.end(), l) ==
                    global->levels.end()) {
                partition[static_cast<size_t>(m)] = true;
            }
        }
    }
    std::vector<int> memoryPool(spec.memories.size(), -1);
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
    // Paths and the units each passes.
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
            addUnit(memIndex(l));
        }
        if (isStagedEntry(spec, e)) {
            for (const auto& l : spec.findPlace(Place::Global)->levels) {
                int m = memIndex(l);
                if (m >= 0 &&
                    spec.memories[static_cast<size_t>(m)].shareScope == spec::ShareScope::Device) {
                    addUnit(m);
                }
            }
        }
    }
    // Capacity groups: places with a capacity.
    std::vector<int> placeGroup(kAllPlaces.size(), -1);
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
    Occupancy o0 = occupancy(processor_, stats_.threadsPerBlock, stats_.registersPerThread, 0);
    otherLimit_ = std::min({o0.byWarps, o0.byBlocks, o0.byRegisters});
    originalResident_ = stats_.residentBlocks;

    ordersReads_ = std::any_of(stats_.arrays.begin(), stats_.arrays.end(),
                               [](const ArrayStats& as) { return as.orderedReadRequests > 0; });
    for (const auto& as : stats_.arrays) {
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
            const spec::PlaceEntry* e = spec.findPlace(p);
            Option o;
            o.place = p;
            o.path = indexOf(paths_, e->path);
            o.capacityGroup = placeGroup[static_cast<size_t>(p)];
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
                int m = memIndex(l);
                if (m < 0) {
                    continue;
                }
                const auto& mem = spec.memories[static_cast<size_t>(m)];
                LevelPre lp;
                lp.memory = m;
                lp.unit = memoryUnit[static_cast<size_t>(m)];
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
                    lp.pool = memoryPool[static_cast<size_t>(m)];
                    lp.writeThrough = mem.shareScope != spec::ShareScope::Device;
                    lp.readHist = &st.reads;
                    lp.writeHist = &st.writes;
                    lp.lineBytes =
                        static_cast<double>(stats_.kinds[static_cast<size_t>(k)].lineBytes);
                    lp.sizeBytes = static_cast<double>(mem.size);
                    lp.extrapolation = std::max(1.0, st.extrapolation);
                    lp.footprintBytes = st.footprintLines * lp.lineBytes;
                    lp.refs = st.reads.total() + (lp.writeThrough ? 0.0 : st.writes.total());
                    const double allRefs = st.reads.total() + st.writes.total();
                    lp.writtenShare = allRefs > 0 ? st.writes.total() / allRefs : 0.0;
                    lp.txPerWriteLine = st.writes.total() > 0
                                            ? lp.writeTx / (st.writes.total() * stats_.scale)
                                            : 1.0;
                } else if (lp.cache) {
                    lp.cache = false; // a cache without a stream: treat as pass-through storage
                }
                o.levels.push_back(lp);
            }
            // A place reached exactly like an earlier one (read-only path and global on sm_70+:
            // same levels, same path, no capacity) costs the same in every placement; the
            // search keeps the first (global), which the tie-break prefers anyway.
            int same = -1;
            for (size_t j = 0; j < a.options.size(); ++j) {
                const Option& q = a.options[j];
                bool equal =
                    q.path == o.path && q.capacityGroup == o.capacityGroup &&
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
        arrays_.push_back(std::move(a));
    }
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

double Model::cacheLines(const LevelPre& l, double capBytes, uint64_t arrayBytes) const {
    if (pools_[static_cast<size_t>(l.pool)].partition &&
        capBytes >= static_cast<double>(arrayBytes)) {
        // The whole array in its persisting partition: nothing else is there to evict it, so
        // every reuse hits, however far the untraced blocks would stretch its distances.
        return kInfeasible;
    }
    return capBytes / l.lineBytes / l.extrapolation;
}

bool Model::keepsDirtyLines(const LevelPre& l, double capBytes, uint64_t arrayBytes) const {
    // The program launches the kernel again on the same arrays: persisting lines stay in the
    // set-aside, so the next launch's writes land on lines still dirty there (a window over a
    // written array measured 0.82-0.96x on both cards: triad, the particle filter, scan).
    const Pool& pool = pools_[static_cast<size_t>(l.pool)];
    return pool.outlivesLaunches && capBytes >= static_cast<double>(arrayBytes);
}

double Model::requestCost(const LevelPre& l, double fr, double fw) {
    // Writes skip a write-through cache: none of them is a request there.
    return l.readRequestCost * (1 - fr) + (l.writeThrough ? 0.0 : l.writeRequestCost * (1 - fw));
}

double Model::writeBackShare(const LevelPre& l, double fw, double capBytes) {
    const double lines = capBytes / l.lineBytes / l.extrapolation;
    const double missed = 1 - std::max(fw, l.writeHist->hitFraction(lines));
    if (l.writeTx <= 0 || missed <= 0) {
        return 0;
    }
    const double resident = std::min(capBytes, l.footprintBytes * l.extrapolation);
    const double stays = resident * l.writtenShare / l.lineBytes * l.txPerWriteLine / l.writeTx;
    return std::max(0.0, missed - stays);
}

void Model::computeBounds() {
    // The most capacity an array could get in each pool: alone, no set-aside, the least shared
    // memory carved out (no staged array, the original occupancy).
    std::vector<double> maxCap(pools_.size());
    const double carve = static_cast<double>(originalResident_) *
                         static_cast<double>(sharedAllocation(processor_, stats_.sharedPerBlock));
    for (size_t p = 0; p < pools_.size(); ++p) {
        maxCap[p] = std::clamp(pools_[p].baseBytes - (pools_[p].carved ? carve : 0.0), 0.0,
                               pools_[p].cacheBytes);
    }
    for (auto& a : arrays_) {
        a.minCost = kInfeasible;
        a.leastStorage.assign(units_.size(), a.options.empty() ? 0.0 : kInfeasible);
        for (auto& o : a.options) {
            double prevR = -1, prevW = -1;
            double minR = kInfeasible, minW = kInfeasible;
            o.monotone = true;
            bool anyW = false;
            for (const auto& l : o.levels) {
                double ur = l.readTx * l.readCost;
                if (ur < prevR) {
                    o.monotone = false;
                }
                prevR = ur;
                minR = std::min(minR, ur);
                if (!l.writeThrough) {
                    double uw = l.writeTx * l.writeCost;
                    if (uw < prevW) {
                        o.monotone = false;
                    }
                    prevW = uw;
                    minW = std::min(minW, uw);
                    anyW = true;
                }
            }
            o.minCost = (o.levels.empty() ? 0 : minR) + (anyW ? minW : 0) + o.stagingCycles;
            // Hit fractions with the most capacity each cache level could give.
            std::vector<double> hmaxR, capMax;
            for (const auto& l : o.levels) {
                double hr = 0, cap = 0;
                if (l.cache) {
                    cap = std::min(maxCap[static_cast<size_t>(l.pool)], l.sizeBytes);
                    if (pools_[static_cast<size_t>(l.pool)].partition) {
                        cap = std::min(cap, static_cast<double>(o.bytes));
                    }
                    hr = l.readHist->hitFraction(cacheLines(l, cap, o.bytes));
                }
                hmaxR.push_back(hr);
                capMax.push_back(cap);
            }
            // Any context gives each cache a hit fraction between 0 and that maximum; the cost
            // is piecewise linear in them, so its least value over that box is at a corner.
            // Reads and writes move separately (their hit fractions are different functions of
            // the capacity), so each cache level has a read bit and a write bit.
            auto costAt = [&](uint32_t corner) {
                double fr = 0, fw = 0, c = o.stagingCycles;
                uint32_t bit = 0;
                for (size_t li = 0; li < o.levels.size(); ++li) {
                    const auto& l = o.levels[li];
                    c += requestCost(l, fr, fw);
                    if (l.cache) {
                        bool onR = ((corner >> bit++) & 1u) != 0;
                        bool onW = ((corner >> bit++) & 1u) != 0;
                        double nr = std::max(fr, onR ? hmaxR[li] : 0.0);
                        c += l.readTx * (nr - fr) * l.readCost;
                        fr = nr;
                        if (!l.writeThrough) {
                            // every write reaching it is served; the least write-back with
                            // the most capacity, all of them with none
                            c += l.writeTx * (1 - fw) * l.writeCost;
                            if (onW) {
                                fw = keepsDirtyLines(l, capMax[li], o.bytes)
                                         ? 1
                                         : 1 - writeBackShare(l, fw, capMax[li]);
                            }
                        }
                    } else {
                        c += l.readTx * (1 - fr) * l.readCost + l.writeTx * (1 - fw) * l.writeCost;
                    }
                }
                return c;
            };
            uint32_t bits = 0;
            for (const auto& l : o.levels) {
                bits += l.cache ? 2 : 0;
            }
            double cost = costAt(bits >= 32 ? ~0u : (1u << bits) - 1);
            double boxMin = cost;
            if (!o.monotone && bits <= 16) {
                for (uint32_t corner = 0; corner < (1u << bits); ++corner) {
                    boxMin = std::min(boxMin, costAt(corner));
                }
            } else if (!o.monotone) {
                boxMin = o.minCost;
            }
            o.minCost = std::max(o.minCost, boxMin);
            o.bestCost = o.monotone ? cost : o.minCost;
            a.minCost = std::min(a.minCost, o.bestCost);
            // Per unit, the least any option puts on its storage levels (lowerBound).
            const std::vector<double> storage = leastStorageLoads(o, hmaxR, capMax);
            for (size_t u = 0; u < units_.size(); ++u) {
                a.leastStorage[u] = std::min(a.leastStorage[u], storage[u]);
            }
        }
    }
    // Paths whose units another path passes too can never carry more load (shared units):
    // bounds look at the others only.
    boundPaths_.clear();
    for (size_t pth = 0; pth < paths_.size() && pth < 64; ++pth) {
        bool dominated = false;
        if (options_.paths == PathModel::SharedUnits) {
            for (size_t q = 0; q < paths_.size() && q < 64 && !dominated; ++q) {
                if (q == pth) {
                    continue;
                }
                bool subset = (pathUnits_[pth] & ~pathUnits_[q]) == 0;
                dominated = subset && (pathUnits_[pth] != pathUnits_[q] || q < pth);
            }
        }
        if (!dominated) {
            boundPaths_.push_back(pth);
        }
    }
    const size_t nb = boundPaths_.size();
    contribution_.assign(arrays_.size(), {});
    onBoundPath_.assign(arrays_.size(), {});
    for (size_t i = 0; i < arrays_.size(); ++i) {
        for (const auto& o : arrays_[i].options) {
            std::vector<double> c(nb, 0.0);
            uint64_t onMask = 0;
            for (size_t b = 0; b < nb; ++b) {
                size_t pth = boundPaths_[b];
                bool on = options_.paths == PathModel::Porple ? static_cast<size_t>(o.path) == pth
                                                              : (o.units & ~pathUnits_[pth]) == 0;
                c[b] = on ? o.bestCost : 0.0;
                onMask |= on ? uint64_t{1} << b : 0;
            }
            contribution_[i].push_back(std::move(c));
            onBoundPath_[i].push_back(onMask);
        }
    }
    // Weights over the bound paths: a grid on the simplex (finer for fewer paths).
    lambdas_.clear();
    const size_t grid = nb <= 1 ? 1 : nb == 2 ? 16 : nb == 3 ? 8 : nb <= 5 ? 4 : 1;
    std::vector<size_t> parts(nb, 0);
    std::function<void(size_t, size_t)> compose = [&](size_t b, size_t left) {
        if (b + 1 == nb) {
            parts[b] = left;
            std::vector<double> w(nb);
            for (size_t k = 0; k < nb; ++k) {
                w[k] = static_cast<double>(parts[k]) / static_cast<double>(grid);
            }
            lambdas_.push_back(std::move(w));
            return;
        }
        for (size_t v = 0; v <= left; ++v) {
            parts[b] = v;
            compose(b + 1, left - v);
        }
    };
    if (nb > 0) {
        compose(0, grid);
    }
    if (nb > 5) {
        lambdas_.push_back(std::vector<double>(nb, 1.0 / static_cast<double>(nb)));
    }
    // With overlapping units a path takes at least (1 - o + o / k) of its k units' summed load:
    // their maximum is at least their mean (lowerBound).
    boundScale_.assign(nb, 1.0);
    for (size_t b = 0; b < nb; ++b) {
        const auto k = static_cast<double>(std::popcount(pathUnits_[boundPaths_[b]]));
        boundScale_[b] = k > 0 ? 1 - overlap() + overlap() / k : 1.0;
    }
}

std::vector<double> Model::leastStorageLoads(const Option& o, const std::vector<double>& hmaxR,
                                             const std::vector<double>& capMax) const {
    // Storage levels serve what the caches above miss: least with the most capacity each cache
    // could give, reads unordered; staging costs what it costs anywhere.
    std::vector<double> out(units_.size(), 0.0);
    for (const auto& [u, c] : o.staging) {
        out[static_cast<size_t>(u)] += c;
    }
    double fr = 0, fw = 0;
    for (size_t li = 0; li < o.levels.size(); ++li) {
        const LevelPre& l = o.levels[li];
        if (l.cache) {
            fr = std::max(fr, hmaxR[li]);
            if (!l.writeThrough) {
                fw = keepsDirtyLines(l, capMax[li], o.bytes)
                         ? 1
                         : 1 - writeBackShare(l, fw, capMax[li]);
            }
            continue;
        }
        out[static_cast<size_t>(l.unit)] += l.readTx * (1 - fr) * l.readCost +
                                            l.writeTx * (1 - fw) * l.writeCost +
                                            requestCost(l, fr, fw);
    }
    return out;
}

double Model::overlap() const {
    return options_.paths == PathModel::SharedUnits ? processor_.unitOverlap : 0.0;
}

Placement Model::original() const {
    Placement p;
    for (const auto& a : arrays_) {
        p.push_back(a.original);
    }
    return p;
}

Placement Model::baseline() const {
    Placement p;
    for (const auto& a : arrays_) {
        p.push_back(a.places.front());
    }
    return p;
}

double Model::seconds(double cycles) const {
    // The grid's cycles are spread over the SMs it occupies.
    const double sms = static_cast<double>(
        std::max<uint64_t>(1, std::min<uint64_t>(processor_.sms, stats_.blocks)));
    const double hz = processor_.clockMHz * 1e6 * sms;
    return hz > 0 ? cycles / hz : 0;
}

bool Model::fits(const Place* places, const uint8_t* present, Scratch& s,
                 std::string* reason) const {
    s.groupBytes.assign(capacityGroups_.size(), 0);
    uint64_t staged = 0;
    uint32_t persisting = 0;
    for (size_t i = 0; i < arrays_.size(); ++i) {
        if (present != nullptr && present[i] == 0) {
            continue;
        }
        int oi = arrays_[i].optionOf[static_cast<size_t>(places[i])];
        if (oi < 0) {
            if (reason != nullptr) {
                *reason = fmt::format("{} is not feasible for array '{}'", placeName(places[i]),
                                      arrays_[i].name);
            }
            return false;
        }
        const Option& o = arrays_[i].options[static_cast<size_t>(oi)];
        if (o.capacityGroup >= 0) {
            s.groupBytes[static_cast<size_t>(o.capacityGroup)] += o.bytes;
        }
        staged += o.stagedBytes;
        persisting += o.persisting ? 1 : 0;
    }
    for (size_t g = 0; g < capacityGroups_.size(); ++g) {
        const auto& cg = capacityGroups_[g];
        if (s.groupBytes[g] > 0 && s.groupBytes[g] + cg.base > cg.capacity) {
            if (reason != nullptr) {
                *reason = fmt::format("{} needs {} bytes, {} offers {}", cg.place,
                                      s.groupBytes[g] + cg.base, cg.place, cg.capacity);
            }
            return false;
        }
    }
    if (persisting > options_.maxPersistingArrays) {
        if (reason != nullptr) {
            *reason = fmt::format("{} persisting arrays, one access-policy window per launch "
                                  "holds {}",
                                  persisting, options_.maxPersistingArrays);
        }
        return false;
    }
    if (staged > 0) {
        uint64_t shared = stats_.sharedPerBlock + staged;
        uint32_t byShared = 0;
        if (shared <= processor_.maxSharedPerBlock) {
            uint64_t alloc = sharedAllocation(processor_, shared);
            byShared = alloc == 0
                           ? processor_.maxBlocksPerSm
                           : static_cast<uint32_t>(std::min<uint64_t>(
                                 processor_.maxBlocksPerSm, processor_.maxSharedPerSm / alloc));
        }
        uint32_t resident = std::min(otherLimit_, byShared);
        if (resident < originalResident_) {
            if (reason != nullptr) {
                *reason = fmt::format("{} bytes of shared memory per block leave {} resident "
                                      "blocks per SM, the original has {}",
                                      shared, resident, originalResident_);
            }
            return false;
        }
    }
    return true;
}

double Model::evaluate(const Place* places, const uint8_t* present, Scratch& s, Prediction* out,
                       std::string* reason) const {
    const size_t n = arrays_.size();
    s.arrayCost.assign(n, 0.0);
    s.unitLoad.assign(units_.size(), 0.0);
    // Storage loads serve only lowerBound's overlap bound: not kept for whole placements.
    const bool keepStorage = present != nullptr && overlap() > 0;
    s.storageLoad.assign(keepStorage ? units_.size() : 0, 0.0);
    s.pathLoad.assign(paths_.size(), 0.0);
    s.launch = 0;
    if (!fits(places, present, s, reason)) {
        return kInfeasible;
    }
    // Pool capacities.
    uint64_t staged = 0;
    s.setAside.assign(pools_.size(), 0.0);
    if (s.members.size() < pools_.size()) {
        s.members.resize(pools_.size());
    }
    for (size_t p = 0; p < pools_.size(); ++p) {
        s.members[p].clear();
    }
    s.maxLevels = std::max<size_t>(1, maxLevels_);
    s.levelCap.assign(n * std::max<size_t>(1, s.maxLevels), 0.0);
    for (size_t i = 0; i < n; ++i) {
        if (present != nullptr && present[i] == 0) {
            continue;
        }
        const Option& o =
            arrays_[i]
                .options[static_cast<size_t>(arrays_[i].optionOf[static_cast<size_t>(places[i])])];
        staged += o.stagedBytes;
        for (uint32_t l = 0; l < o.levels.size(); ++l) {
            const LevelPre& lp = o.levels[l];
            if (lp.cache) {
                s.members[static_cast<size_t>(lp.pool)].emplace_back(static_cast<uint32_t>(i), l);
                if (pools_[static_cast<size_t>(lp.pool)].partition) {
                    s.setAside[static_cast<size_t>(lp.pool)] += static_cast<double>(o.bytes);
                }
            }
        }
    }
    const uint64_t shared = stats_.sharedPerBlock + staged;
    uint32_t resident = 1;
    {
        uint64_t alloc = sharedAllocation(processor_, shared);
        uint32_t byShared =
            alloc == 0 ? processor_.maxBlocksPerSm
                       : static_cast<uint32_t>(std::min<uint64_t>(
                             processor_.maxBlocksPerSm, processor_.maxSharedPerSm / alloc));
        resident = std::max<uint32_t>(1, std::min(otherLimit_, byShared));
    }
    const double carve =
        static_cast<double>(resident) * static_cast<double>(sharedAllocation(processor_, shared));
    s.poolCap.assign(pools_.size(), 0.0);
    for (size_t p = 0; p < pools_.size(); ++p) {
        if (pools_[p].partition) {
            s.setAside[p] = std::min(s.setAside[p], pools_[p].baseBytes);
        }
    }
    for (size_t p = 0; p < pools_.size(); ++p) {
        const Pool& pool = pools_[p];
        if (pool.partition) {
            s.poolCap[p] = s.setAside[p];
            continue;
        }
        double cap = pool.baseBytes - (pool.carved ? carve : 0.0);
        for (size_t q = 0; q < pools_.size(); ++q) {
            // The runtime sizes the persisting set-aside to the window (the persisting arrays'
            // bytes): normal accesses lose that much of the cache (docs/NOTES.md, 2026-11-25:
            // with the device's maximum set aside, writes that missed it ran up to 2.4x slower).
            if (pools_[q].partition && pools_[q].unit == pool.unit) {
                cap -= s.setAside[q];
            }
        }
        s.poolCap[p] = std::clamp(cap, 0.0, pool.cacheBytes);
    }
    // Capacity each member gets.
    for (size_t p = 0; p < pools_.size(); ++p) {
        auto& mem = s.members[p];
        const double cap = s.poolCap[p];
        if (mem.empty()) {
            continue;
        }
        auto levelOf = [&](const std::pair<uint32_t, uint32_t>& m) -> const LevelPre& {
            const ArrayPre& a = arrays_[m.first];
            return a.options[static_cast<size_t>(a.optionOf[static_cast<size_t>(places[m.first])])]
                .levels[m.second];
        };
        if (options_.cache == CachePolicy::EqualSplit || mem.size() == 1) {
            for (const auto& m : mem) {
                s.levelCap[m.first * s.maxLevels + m.second] =
                    cap / static_cast<double>(mem.size());
            }
            continue;
        }
        // Footprint composition. Order members by footprint / refs: array i's breakpoints
        // F_j * s_i / s_j come in that order for every i.
        const size_t k = mem.size();
        s.member.resize(k);
        double totalRefs = 0;
        for (size_t j = 0; j < k; ++j) {
            const LevelPre& l = levelOf(mem[j]);
            const double f = l.footprintBytes * l.extrapolation;
            s.member[j] = {l.refs > 0 ? f / l.refs : kInfeasible, l.refs, f,
                           static_cast<uint32_t>(j)};
            totalRefs += l.refs;
        }
        std::sort(s.member.begin(), s.member.end(),
                  [](const Scratch::Member& x, const Scratch::Member& y) {
                      return x.ratio != y.ratio ? x.ratio < y.ratio : x.index < y.index;
                  });
        for (size_t a = 0; a < k; ++a) {
            const Scratch::Member& mi = s.member[a];
            double x = cap;
            if (mi.refs > 0) {
                double slope = totalRefs / mi.refs;
                double constant = 0;
                for (size_t b = 0; b < k; ++b) {
                    const Scratch::Member& mj = s.member[b];
                    if (b == a || mj.refs <= 0) {
                        continue;
                    }
                    const double r = mj.refs / mi.refs;
                    if (mj.ratio * mi.refs * slope + constant >= cap) {
                        break; // breakpoint F_j / r = ratio_j * refs_i
                    }
                    slope -= r;
                    constant += mj.footprint;
                }
                x = std::max(0.0, (cap - constant) / std::max(slope, 1.0));
            }
            s.levelCap[mem[mi.index].first * s.maxLevels + mem[mi.index].second] = x;
        }
    }

    const bool ordered = readsStayOrdered(places, present);
    // Per array: walk the levels.
    if (out != nullptr) {
        out->arrays.clear();
    }
    for (size_t i = 0; i < n; ++i) {
        if (present != nullptr && present[i] == 0) {
            continue;
        }
        const ArrayPre& a = arrays_[i];
        const Option& o =
            a.options[static_cast<size_t>(a.optionOf[static_cast<size_t>(places[i])])];
        ArrayBreakdown* ab = nullptr;
        if (out != nullptr) {
            out->arrays.push_back(
                {a.name, places[i], paths_[static_cast<size_t>(o.path)], {}, 0, 0});
            ab = &out->arrays.back();
        }
        // A written array's loads stay plain whatever the others' places.
        const double serialization = ordered || a.written ? o.readSerialization : 1.0;
        double fr = 0, fw = 0, cost = 0;
        for (size_t l = 0; l < o.levels.size(); ++l) {
            const LevelPre& lp = o.levels[l];
            double sr = 0, sw = 0, capBytes = 0;
            double reachR = lp.readTx * (1 - fr);
            double reachW = lp.writeTx * (1 - fw);
            double requests = requestCost(lp, fr, fw);
            if (lp.cache) {
                capBytes = std::min(s.levelCap[i * s.maxLevels + l], lp.sizeBytes);
                double lines = cacheLines(lp, capBytes, o.bytes);
                double nr = std::max(fr, lp.readHist->hitFraction(lines));
                sr = lp.readTx * (nr - fr);
                fr = nr;
                if (!lp.writeThrough) {
                    sw = reachW; // write-allocate without fetch: every write is served here
                    fw = keepsDirtyLines(lp, capBytes, o.bytes)
                             ? 1
                             : 1 - writeBackShare(lp, fw, capBytes);
                } else {
                    reachW = 0;
                }
            } else {
                sr = reachR;
                sw = reachW;
            }
            double c = sr * lp.readCost * serialization + sw * lp.writeCost + requests;
            cost += c;
            s.unitLoad[static_cast<size_t>(lp.unit)] += c;
            if (keepStorage && !lp.cache) {
                s.storageLoad[static_cast<size_t>(lp.unit)] += c;
            }
            if (ab != nullptr) {
                ab->levels.push_back({memoryNames_[static_cast<size_t>(lp.memory)], lp.cache,
                                      capBytes, reachR, sr, reachW, sw, c});
            }
        }
        for (const auto& [u, c] : o.staging) {
            s.unitLoad[static_cast<size_t>(u)] += c;
            if (keepStorage) {
                s.storageLoad[static_cast<size_t>(u)] += c;
            }
        }
        cost += o.stagingCycles;
        s.arrayCost[i] = cost;
        if (ab != nullptr) {
            ab->stagingCycles = o.stagingCycles;
            ab->cycles = cost;
        }
        if (options_.paths == PathModel::Porple) {
            s.pathLoad[static_cast<size_t>(o.path)] += cost;
        }
    }
    if (options_.paths == PathModel::SharedUnits) {
        for (size_t p = 0; p < paths_.size(); ++p) {
            s.pathLoad[p] = overlappedLoad(p, s.unitLoad);
        }
    }
    // A NaN load compares false with everything: the placement would look free and be chosen
    // (a wrapped grid once moved an array to shared memory on -nan costs). Checked traces and
    // specs cannot produce one (tests/model/model_numbers_test.cpp); should one slip through,
    // the placement is refused, so the original one stays.
    for (size_t p = 0; p < paths_.size(); ++p) {
        if (!std::isfinite(s.pathLoad[p])) {
            if (reason != nullptr) {
                *reason =
                    fmt::format("the model's cost on path '{}' is not a finite number", paths_[p]);
            }
            return kInfeasible;
        }
    }
    double t = 0;
    size_t critical = 0;
    for (size_t p = 0; p < paths_.size(); ++p) {
        if (s.pathLoad[p] > t) {
            t = s.pathLoad[p];
            critical = p;
        }
    }
    s.launch = launchCycles(places, present);
    t += s.launch;
    if (out != nullptr) {
        out->cycles = t;
        out->launchCycles = s.launch;
        out->seconds = seconds(t);
        out->criticalPath = paths_.empty() ? "" : paths_[critical];
        out->paths.clear();
        for (size_t p = 0; p < paths_.size(); ++p) {
            PathTime pt{paths_[p], s.pathLoad[p], {}};
            for (size_t u = 0; u < units_.size() && u < 64; ++u) {
                if (options_.paths == PathModel::SharedUnits && ((pathUnits_[p] >> u) & 1u)) {
                    pt.units.push_back(units_[u]);
                }
            }
            out->paths.push_back(std::move(pt));
        }
        out->units.clear();
        for (size_t u = 0; u < units_.size(); ++u) {
            out->units.push_back({units_[u], s.unitLoad[u]});
        }
        out->residentBlocks = resident;
        out->originalResidentBlocks = originalResident_;
        out->sharedPerBlock = shared;
        out->memoryBound = memoryBound_;
    }
    return t;
}

double Model::overlappedLoad(size_t path, const std::vector<double>& unitLoad) const {
    double sum = 0, busiest = 0;
    for (size_t u = 0; u < units_.size() && u < 64; ++u) {
        if ((pathUnits_[path] >> u) & 1u) {
            sum += unitLoad[u];
            busiest = std::max(busiest, unitLoad[u]);
        }
    }
    return busiest + (1 - overlap()) * (sum - busiest);
}

double Model::launchCycles(const Place* places, const uint8_t* present) const {
    bool used[kAllPlaces.size()] = {};
    for (size_t i = 0; i < arrays_.size(); ++i) {
        if (present == nullptr || present[i] != 0) {
            used[static_cast<size_t>(places[i])] = true;
        }
    }
    double c = 0;
    for (size_t p = 0; p < kAllPlaces.size(); ++p) {
        c += used[p] ? launchCycles_[p] : 0.0;
    }
    return c;
}

bool Model::readsStayOrdered(const Place* places, const uint8_t* present) const {
    if (!ordersReads_) {
        return false;
    }
    for (size_t i = 0; i < arrays_.size(); ++i) {
        const bool free = present != nullptr && present[i] == 0;
        if (free ? arrays_[i].optionOf[static_cast<size_t>(Place::ReadOnly)] >= 0
                 : places[i] == Place::ReadOnly) {
            return false;
        }
    }
    return true;
}

bool Model::feasible(const Placement& p, std::string* reason) const {
    if (p.size() != arrays_.size()) {
        if (reason != nullptr) {
            *reason =
                fmt::format("a placement of {} arrays for a trace of {}", p.size(), arrays_.size());
        }
        return false;
    }
    Scratch s;
    return fits(p.data(), nullptr, s, reason);
}

double Model::cycles(const Placement& p) const {
    return cyclesAndSum(p).first;
}

std::pair<double, double> Model::cyclesAndSum(const Placement& p) const {
    thread_local Scratch s;
    if (p.size() != arrays_.size()) {
        return {kInfeasible, kInfeasible};
    }
    double t = evaluate(p.data(), nullptr, s, nullptr, nullptr);
    if (t == kInfeasible) {
        return {kInfeasible, kInfeasible};
    }
    double sum = std::accumulate(s.pathLoad.begin(), s.pathLoad.end(), 0.0) + s.launch;
    return {t, sum};
}

double Model::arrayCycles(const Placement& p, size_t i) const {
    thread_local Scratch s;
    if (p.size() != arrays_.size() ||
        evaluate(p.data(), nullptr, s, nullptr, nullptr) == kInfeasible) {
        return kInfeasible;
    }
    return s.arrayCost[i];
}

Prediction Model::predict(const Placement& p) const {
    Prediction out;
    if (p.size() != arrays_.size()) {
        out.feasible = false;
        out.reason =
            fmt::format("a placement of {} arrays for a trace of {}", p.size(), arrays_.size());
        return out;
    }
    Scratch s;
    std::string reason;
    double t = evaluate(p.data(), nullptr, s, &out, &reason);
    if (t == kInfeasible) {
        out.feasible = false;
        out.reason = reason;
        out.cycles = kInfeasible;
        out.seconds = kInfeasible;
    }
    return out;
}

double Model::lowerBound(const Placement& p, const std::vector<uint8_t>& fixed) const {
    thread_local Scratch s;
    const size_t n = arrays_.size();
    double t = evaluate(p.data(), fixed.data(), s, nullptr, nullptr);
    if (t == kInfeasible) {
        return kInfeasible;
    }
    // Fixed arrays: each counts fully on every bound path that passes all its units. Costs
    // computed with the free arrays absent are lower bounds only where more capacity never
    // costs more (monotone options); the others count their context-free least cost.
    const size_t nb = boundPaths_.size();
    double base[64] = {};
    for (size_t i = 0; i < n; ++i) {
        if (fixed[i] == 0) {
            continue;
        }
        const ArrayPre& a = arrays_[i];
        const int oi = a.optionOf[static_cast<size_t>(p[i])];
        const Option& o = a.options[static_cast<size_t>(oi)];
        double c = o.monotone ? s.arrayCost[i] : o.minCost;
        const uint64_t on = onBoundPath_[i][static_cast<size_t>(oi)];
        for (size_t b = 0; b < nb; ++b) {
            if ((on >> b) & 1u) {
                base[b] += c;
            }
        }
    }
    // A path's time with overlapping units (o) is o x its busiest unit's load + (1 - o) x their
    // sum S. Two bounds on it, both linear in S: (1 - o + o / k) x S (k units; the busiest
    // carries at least the mean), and o x M + (1 - o) x S with M the fixed arrays' largest
    // storage load on the path (storage loads only grow in a completion).
    const double o = overlap();
    double busiest[64] = {};
    if (o > 0) {
        // Storage loads: the fixed arrays' as evaluated, each free array's least over its
        // options, unit by unit.
        std::vector<double>& storage = s.storageLoad;
        for (size_t i = 0; i < n; ++i) {
            for (size_t u = 0; fixed[i] == 0 && u < units_.size(); ++u) {
                storage[u] += arrays_[i].leastStorage[u];
            }
        }
        for (size_t b = 0; b < nb; ++b) {
            for (size_t u = 0; u < units_.size() && u < 64; ++u) {
                if ((pathUnits_[boundPaths_[b]] >> u) & 1u) {
                    busiest[b] = std::max(busiest[b], storage[u]);
                }
            }
        }
    }
    double best = 0;
    double scaled[64] = {};
    for (const auto& w : lambdas_) {
        for (size_t b = 0; b < nb; ++b) {
            scaled[b] = w[b] * boundScale_[b];
        }
        best = std::max(best, weightedBound(scaled, base, fixed, 0.0));
        if (o > 0) {
            double m = 0;
            for (size_t b = 0; b < nb; ++b) {
                scaled[b] = w[b] * (1 - o);
                m += w[b] * o * busiest[b];
            }
            best = std::max(best, weightedBound(scaled, base, fixed, m));
        }
    }
    // The fixed arrays' places are used by every completion: their launch costs come on top.
    return best + s.launch;
}

double Model::weightedBound(const double* w, const double* base, const std::vector<uint8_t>& fixed,
                            double constant) const {
    // For weights w over the bound paths, max_p T_p >= sum_p w_p T_p; each free array adds at
    // least the cheapest weighted contribution of its options.
    double v = constant;
    for (size_t b = 0; b < boundPaths_.size(); ++b) {
        v += w[b] * base[b];
    }
    for (size_t i = 0; i < arrays_.size(); ++i) {
        if (fixed[i] != 0) {
            continue;
        }
        double least = kInfeasible;
        for (const auto& contrib : contribution_[i]) {
            double c = 0;
            for (size_t b = 0; b < boundPaths_.size(); ++b) {
                c += w[b] * contrib[b];
            }
            least = std::min(least, c);
        }
        v += least == kInfeasible ? 0.0 : least;
    }
    return v;
}

} // namespace memplace::model

// Pricing a placement: whether it fits (capacities, occupancy, persisting windows), the cache
// capacity each array gets in each pool, the walk down every array's levels, and the paths'
// times (model.h explains the model). The search calls evaluate() for every placement it tries.
#include "model/model.h"
#include "model/model_internal.h"
#include "model/occupancy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace memplace::model {

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
    uint64_t shared = 0;
    const uint32_t resident = poolCapacities(places, present, s, shared);
    shareCapacities(places, s);
    walkArrays(places, present, s, out, keepStorage);
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
        fillPrediction(t, critical, resident, shared, s, *out);
    }
    return t;
}

uint32_t Model::poolCapacities(const Place* places, const uint8_t* present, Scratch& s,
                               uint64_t& shared) const {
    const size_t n = arrays_.size();
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
    shared = stats_.sharedPerBlock + staged;
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
            // bytes): normal accesses lose that much of the cache (decision 016:
            // with the device's maximum set aside, writes that missed it ran up to 2.4x slower).
            if (pools_[q].partition && pools_[q].unit == pool.unit) {
                cap -= s.setAside[q];
            }
        }
        s.poolCap[p] = std::clamp(cap, 0.0, pool.cacheBytes);
    }
    return resident;
}

void Model::shareCapacities(const Place* places, Scratch& s) const {
    // Capacity each member gets.
    for (size_t p = 0; p < pools_.size(); ++p) {
        auto& mem = s.members[p];
        const double cap = s.poolCap[p];
        if (mem.empty()) {
            continue;
        }
        if (options_.cache == CachePolicy::EqualSplit || mem.size() == 1) {
            for (const auto& m : mem) {
                s.levelCap[m.first * s.maxLevels + m.second] =
                    cap / static_cast<double>(mem.size());
            }
            continue;
        }
        footprintComposition(places, mem, cap, s);
    }
}

void Model::footprintComposition(const Place* places,
                                 const std::vector<std::pair<uint32_t, uint32_t>>& mem, double cap,
                                 Scratch& s) const {
    auto levelOf = [&](const std::pair<uint32_t, uint32_t>& m) -> const LevelPre& {
        const ArrayPre& a = arrays_[m.first];
        return a.options[static_cast<size_t>(a.optionOf[static_cast<size_t>(places[m.first])])]
            .levels[m.second];
    };
    // Footprint composition. Order members by footprint / refs: array i's breakpoints
    // F_j * s_i / s_j come in that order for every i.
    const size_t k = mem.size();
    s.member.resize(k);
    double totalRefs = 0;
    for (size_t j = 0; j < k; ++j) {
        const LevelPre& l = levelOf(mem[j]);
        const double f = l.footprintBytes * l.extrapolation;
        s.member[j] = {l.refs > 0 ? f / l.refs : kInfeasible, l.refs, f, static_cast<uint32_t>(j)};
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

void Model::walkArrays(const Place* places, const uint8_t* present, Scratch& s, Prediction* out,
                       bool keepStorage) const {
    const size_t n = arrays_.size();
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
}

void Model::fillPrediction(double t, size_t critical, uint32_t resident, uint64_t shared,
                           const Scratch& s, Prediction& out) const {
    out.cycles = t;
    out.launchCycles = s.launch;
    out.seconds = seconds(t);
    out.criticalPath = paths_.empty() ? "" : paths_[critical];
    out.paths.clear();
    for (size_t p = 0; p < paths_.size(); ++p) {
        PathTime pt{paths_[p], s.pathLoad[p], {}};
        for (size_t u = 0; u < units_.size() && u < 64; ++u) {
            if (options_.paths == PathModel::SharedUnits && ((pathUnits_[p] >> u) & 1u)) {
                pt.units.push_back(units_[u]);
            }
        }
        out.paths.push_back(std::move(pt));
    }
    out.units.clear();
    for (size_t u = 0; u < units_.size(); ++u) {
        out.units.push_back({units_[u], s.unitLoad[u]});
    }
    out.residentBlocks = resident;
    out.originalResidentBlocks = originalResident_;
    out.sharedPerBlock = shared;
    out.memoryBound = memoryBound_;
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

} // namespace memplace::model

// Bounds for branch-and-bound: each option's context-free least cost, the paths the bounds
// look at, and lowerBound(), a bound on every completion of a partial placement.
#include "model/model.h"
#include "model/model_internal.h"
#include "model/occupancy.h"

#include <algorithm>
#include <bit>
#include <functional>

namespace memplace::model {

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
            std::vector<double> hmaxR, capMax;
            boundOption(o, maxCap, hmaxR, capMax);
            a.minCost = std::min(a.minCost, o.bestCost);
            // Per unit, the least any option puts on its storage levels (lowerBound).
            const std::vector<double> storage = leastStorageLoads(o, hmaxR, capMax);
            for (size_t u = 0; u < units_.size(); ++u) {
                a.leastStorage[u] = std::min(a.leastStorage[u], storage[u]);
            }
        }
    }
    findBoundPaths();
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
    buildLambdas();
    // With overlapping units a path takes at least (1 - o + o / k) of its k units' summed load:
    // their maximum is at least their mean (lowerBound).
    boundScale_.assign(nb, 1.0);
    for (size_t b = 0; b < nb; ++b) {
        const auto k = static_cast<double>(std::popcount(pathUnits_[boundPaths_[b]]));
        boundScale_[b] = k > 0 ? 1 - overlap() + overlap() / k : 1.0;
    }
}

void Model::boundOption(Option& o, const std::vector<double>& maxCap, std::vector<double>& hmaxR,
                        std::vector<double>& capMax) const {
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
}

void Model::findBoundPaths() {
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
}

void Model::buildLambdas() {
    const size_t nb = boundPaths_.size();
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

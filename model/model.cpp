#include "model/model.h"

#include "model/model_internal.h"
#include "model/occupancy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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

using detail::unitOf;

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

} // namespace memplace::model

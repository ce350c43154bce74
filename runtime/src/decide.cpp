// Deciding a launch's placement: what the runtime knows about the launch (LaunchInfo), the
// policy's decision, the placement requested for each array (a sweep's, the environment's force
// list, the program's setPlacement, the policy's, the program's own), why an array cannot be
// placed where it was asked, and which instantiation runs the places reached (specialised,
// just in time, dynamic). Materialising the places: place_*.cpp.
#include "common/feasibility.h"
#include "runtime/src/device.h"
#include "runtime/src/runtime_internal.h"

namespace memplace::detail {

namespace {

/// The program's setPlacement for this kernel ("" and "*": for every kernel), or null.
const std::vector<std::pair<std::string, Place>>* apiPlacementsFor(const Runtime& r,
                                                                   const char* kernel) {
    const std::vector<std::pair<std::string, Place>>* api = nullptr;
    for (const char* key : {kernel, "", "*"}) {
        auto it = r.apiPlacements.find(key);
        if (it != r.apiPlacements.end() && api == nullptr) {
            api = &it->second;
        }
    }
    return api;
}

/// The controls' placement over the program's own (not during a sweep, not under
/// MEMPLACE=off): the environment's force list, then setPlacement, then the policy's.
void applyControls(Launch& l, const Decision& decision, Placement& requested) {
    const KernelView& kv = l.kv;
    const int n = l.n;
    const bool policyPlaces = decision.kind == Decision::Kind::Place;
    if (policyPlaces && decision.placement.size() != static_cast<std::size_t>(n)) {
        warnOnce(l.r, std::string(kv.name) + ": the policy's placement has " +
                          std::to_string(decision.placement.size()) + " places for " +
                          std::to_string(n) + " arrays; ignored");
    }
    const bool usePolicy = policyPlaces && decision.placement.size() == static_cast<std::size_t>(n);
    // The policy's placement to compile just in time: placed instead once it is ready.
    const Placement* policyPlacement =
        usePolicy ? device::policyPlacement(l, decision) : &decision.placement;
    const std::vector<std::pair<std::string, Place>>* api = apiPlacementsFor(l.r, kv.name);
    for (int j = 0; j < n; ++j) {
        ArrayReport& ar = l.rep.arrays[j];
        if (auto p = forcedPlace(l.r.env.force, kv.name, kv.arrays[j].name)) {
            requested[j] = *p;
            ar.source = "env";
            continue;
        }
        bool found = false;
        if (api != nullptr) {
            for (const auto& [name, place] : *api) {
                if (name == kv.arrays[j].name) {
                    requested[j] = place;
                    ar.source = "api";
                    found = true;
                }
            }
        }
        if (!found && usePolicy) {
            requested[j] = (*policyPlacement)[j];
            ar.source = "policy";
        }
    }
}

} // namespace

/// The compiled instantiation that matches `placed`, or -1.
int compiledIndex(const KernelView& kv, const Placement& placed) {
    const int n = kv.numArrays;
    for (int c = 0; c < kv.numCompiled; ++c) {
        if (std::equal(placed.begin(), placed.end(),
                       kv.compiled + static_cast<std::ptrdiff_t>(c) * n)) {
            return c;
        }
    }
    return -1;
}

void beginLaunch(Launch& l) {
    const LaunchArgs& la = l.la;
    LaunchPlan& plan = l.plan;
    LaunchReport& rep = l.rep;
    plan.handles.assign(static_cast<std::size_t>(l.n), ArrayHandle{});
    plan.instantiation = 0;
    plan.sharedBytes = la.sharedBytes;
    rep.kernel = l.kv.name;
    rep.grid = la.grid;
    rep.block = la.block;
    rep.sharedBytesOriginal = la.sharedBytes;
    rep.sharedBytesTotal = la.sharedBytes;
    rep.dispatch = "specialized";
    rep.instantiation = 0;
    rep.arrays.resize(static_cast<std::size_t>(l.n));

    if (!check(cudaGetDevice(&l.st.device), "cudaGetDevice", rep)) {
        l.st.device = 0;
    }
    rep.launchId = ++l.r.launches;
    l.sweep = tlsSweep;
    l.st.sweepLaunch = l.sweep != nullptr;
}

void describeLaunch(Launch& l) {
    Runtime& r = l.r;
    const KernelView& kv = l.kv;
    const LaunchArgs& la = l.la;
    const int n = l.n;
    LaunchInfo& info = l.info;
    info.kernel = kv.name;
    info.grid = la.grid;
    info.block = la.block;
    info.sharedBytes = la.sharedBytes;
    info.stream = la.stream;
    info.device = l.st.device;
    info.constantPoolBytes = la.poolBytes;
    info.launchId = l.rep.launchId;
    info.arrays.resize(static_cast<std::size_t>(n));
    l.attrs = &deviceAttrs(r, l.st.device, l.rep);
    for (int j = 0; j < n; ++j) {
        const ArrayDesc& d = kv.arrays[j];
        ArrayInfo& ai = info.arrays[j];
        ai.name = d.name;
        ai.param = d.param;
        ai.elemSize = d.elemSize;
        ai.mode = d.mode;
        ai.feasible = d.places;
        ai.dims = d.dims;
        ai.original = d.original;
        ai.ptr = la.ptrs[j];
        long long regWidth = 0;
        ai.extentKnown = findExtent(r, ai.ptr, ai.extentBytes, regWidth);
        ai.width = la.widths[j] > 0 ? la.widths[j] : regWidth;
        ai.textureFeasible = kv.textureFeasible[j] && texture2DFits(*l.attrs, ai);
        ArrayReport& ar = l.rep.arrays[j];
        ar.name = d.name;
        ar.extentBytes = ai.extentBytes;
        ar.extentKnown = ai.extentKnown;
        ar.source = "default";
        l.plan.handles[j].ptr = const_cast<void*>(la.ptrs[j]);
    }
    fillAliasing(r, kv, l.st.device, info);
    info.compiled.resize(static_cast<std::size_t>(kv.numCompiled));
    for (int c = 0; c < kv.numCompiled; ++c) {
        info.compiled[c].assign(kv.compiled + static_cast<std::ptrdiff_t>(c) * n,
                                kv.compiled + static_cast<std::ptrdiff_t>(c + 1) * n);
    }

    l.off = r.env.mode == EnvConfig::Mode::Off;
    l.forcedDynamic = r.envDynamic || r.apiDispatch == DispatchMode::Dynamic;
    // Just-in-time instantiation: possible for this kernel here?
    device::describeJit(r, kv, l.forcedDynamic, info);
}

bool askPolicy(Launch& l, Decision& decision) {
    Runtime& r = l.r;
    if (!l.off && r.policy && !l.st.sweepLaunch) {
        device::describeKernelResources(l);
        decision = r.policy->decide(l.info);
    }
    if (decision.kind != Decision::Kind::Sweep) {
        return false;
    }
    if (tlsJustSwept || !decision.sweep || decision.sweep->entries.empty() ||
        r.traceRemaining > 0) {
        if (tlsJustSwept) {
            warnOnce(r, std::string(l.kv.name) +
                            ": the policy asked for a second sweep of one launch; ignored");
        }
        decision = Decision{};
        return false;
    }
    // Nothing is materialised: the template runs the sweep, then prepares again.
    LaunchPlan& plan = l.plan;
    plan.sweep = std::make_shared<SweepState>();
    plan.sweep->request = decision.sweep;
    plan.sweep->info = l.info;
    plan.instantiation = LaunchPlan::kSweep;
    plan.state.reset(); // the lock is released when prepareLaunch returns
    return true;
}

// The requested placement, array by array; by default, where the program keeps each array.
Placement requestedPlacement(Launch& l, const Decision& decision) {
    const int n = l.n;
    Placement requested(static_cast<std::size_t>(n), Place::Global);
    for (int j = 0; j < n; ++j) {
        requested[j] = l.kv.arrays[j].original;
    }
    if (l.st.sweepLaunch) {
        // A sweep's launch: its placement, whatever the controls say.
        for (int j = 0; j < n && j < static_cast<int>(l.sweep->placement->size()); ++j) {
            requested[j] = (*l.sweep->placement)[j];
            l.rep.arrays[j].source = "sweep";
        }
    } else if (!l.off) {
        applyControls(l, decision, requested);
    }
    return requested;
}

std::string placeObstacle(const Launch& l, int j, Place p) {
    const ArrayDesc& d = l.kv.arrays[j];
    const ArrayInfo& ai = l.info.arrays[j];
    std::string why;
    if (p == Place::Registers) {
        why = "registers is not a place the runtime can materialise";
    } else if (!d.places.contains(p)) {
        why = std::string(placeName(p)) + " is not among the array's feasible places";
    } else if (d.mode != Mode::Read && !placeTakesWrites(p)) {
        why = "the kernel writes this array";
    } else if (p == Place::Texture && !l.kv.textureFeasible[j]) {
        why = "the element type is not texture-feasible (size must be 1, 2, 4, 8 or 16)";
    } else if (ai.ptr == nullptr) {
        why = "the array pointer is null";
    } else if (p != Place::ReadOnly && !ai.extentKnown) {
        why = "the array's extent is unknown (not a CUDA allocation? give it with "
              "memplace::setExtent)";
    } else if (p != d.original && p != Place::L2Persist) {
        // The program as written is its author's; a place memplace chooses must not read
        // memory the kernel writes by another way (another array, a global by name, an
        // unknown pointer), nor stage memory read by another way.
        if (const std::string hazard = l.info.aliasHazard(static_cast<std::size_t>(j));
            !hazard.empty()) {
            why = std::string(placeName(p)) + ": " + hazard;
        }
    }
    return why;
}

// The instantiation: the specialised one that matches; else a just-in-time one (when it is
// compiled already, or the policy or MEMPLACE_JIT=always asks for it: docs/placer.md); else the
// dynamic accessor.
int chooseInstantiation(Launch& l) {
    const bool dynamicOnly = l.st.sweepLaunch ? l.sweep->dynamic : l.forcedDynamic;
    Placement placed(static_cast<std::size_t>(l.n));
    for (int j = 0; j < l.n; ++j) {
        placed[j] = l.rep.arrays[j].placed;
    }
    if (const int c = dynamicOnly ? -1 : compiledIndex(l.kv, placed); c >= 0) {
        return c;
    }
    l.rep.jit.clear();
    l.rep.jitDetail.clear();
    return device::chooseJit(l, placed, dynamicOnly);
}

} // namespace memplace::detail

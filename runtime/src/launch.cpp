// A launch from the library's side: prepareLaunch runs the phases in order (describe, decide,
// trace, request, materialise each place, choose the instantiation), finishLaunch undoes what
// must not outlast the launch and hands the report and the trace on. The phases: decide.cpp,
// place_*.cpp, tracing.cpp, timing.cpp; the device interface: device.h.
#include "runtime/src/device.h"
#include "runtime/src/process_times.h"
#include "runtime/src/runtime_internal.h"

namespace memplace::detail {

namespace {

/// The places that are materialised after all arrays are checked (they share a pool, a layout
/// or a window).
struct Wanted {
    std::vector<ConstantSlot> constant;
    std::vector<SharedSlot> shared;
    std::vector<int> l2;
};

/// Each array's requested place checked (placeObstacle), a texture materialised at once, the
/// others collected.
Wanted placeArrays(Launch& l, const Placement& requested) {
    Wanted wanted;
    for (int j = 0; j < l.n; ++j) {
        const ArrayInfo& ai = l.info.arrays[j];
        const Place p = requested[j];
        l.rep.arrays[j].requested = p;
        l.rep.arrays[j].placed = p;
        l.plan.handles[j].place = p;
        if (p == Place::Global) {
            continue;
        }
        if (const std::string why = placeObstacle(l, j, p); !why.empty()) {
            l.fallback(j, why);
            continue;
        }
        switch (p) {
        case Place::Texture:
            placeTexture(l, j);
            break;
        case Place::Constant: {
            ConstantSlot s;
            s.array = j;
            s.bytes = ai.extentBytes / ai.elemSize * ai.elemSize;
            wanted.constant.push_back(s);
            break;
        }
        case Place::Shared: {
            SharedSlot s;
            s.array = j;
            s.count = static_cast<long long>(ai.extentBytes / ai.elemSize);
            s.elemSize = ai.elemSize;
            s.written = l.kv.arrays[j].mode != Mode::Read;
            if (s.count == 0) {
                l.fallback(j, "shared: the array is empty");
            } else {
                wanted.shared.push_back(s);
            }
            break;
        }
        case Place::L2Persist:
            wanted.l2.push_back(j);
            break;
        default: // ReadOnly needs nothing but the instantiation
            break;
        }
    }
    return wanted;
}

/// The report's last word on the instantiation and the places; the handles' places.
void completePlan(Launch& l) {
    LaunchPlan& plan = l.plan;
    LaunchReport& rep = l.rep;
    if (plan.instantiation != LaunchPlan::kJit && !l.policyJitNote.empty()) {
        rep.jit = l.policyJitNote; // the policy's JIT placement was not placed (yet)
        rep.jitDetail = l.policyJitDetail;
    }
    if (plan.instantiation == LaunchPlan::kJit) {
        device::announceJit(l);
    }
    rep.sharedBytesTotal = plan.sharedBytes;
    rep.instantiation = plan.instantiation >= 0 ? plan.instantiation : -1;
    rep.dispatch = dispatchName(plan.instantiation);
    for (int j = 0; j < l.n; ++j) {
        plan.handles[j].place = rep.arrays[j].placed;
    }
    l.ready();
}

} // namespace

void Launch::fallback(int j, const std::string& why) {
    rep.arrays[j].placed = Place::Global;
    rep.arrays[j].fallback = why;
    ArrayHandle& h = plan.handles[j];
    h = ArrayHandle{};
    h.ptr = const_cast<void*>(la.ptrs[j]);
}

void prepareLaunch(const KernelView& kv, const LaunchArgs& la, LaunchPlan& plan) {
    Runtime& r = rt();
    auto st = std::make_shared<LaunchState>();
    st->lock = std::unique_lock<std::mutex>(r.mu);
    st->t0 = std::chrono::steady_clock::now();
    plan.state = st;
    loadEnv(r);
    Launch l(r, kv, la, plan, *st);
    beginLaunch(l);
    describeLaunch(l);
    Decision decision;
    if (askPolicy(l, decision)) {
        return; // a sweep first
    }
    if (!st->sweepLaunch) {
        tlsJustSwept = false;
    }
    l.startTiming(decision.time, decision.spinUs);
    if (traceLaunch(l, decision)) {
        return;
    }
    const Placement requested = requestedPlacement(l, decision);
    const Wanted wanted = placeArrays(l, requested);
    restorePersistingLimit(l, wanted.l2.empty());
    placeL2Window(l, wanted.l2);
    std::vector<ConstantSlot> packed = packConstants(l, wanted.constant);
    const SharedLayout layout = layoutStaging(l, wanted.shared);
    if (decision.kind == Decision::Kind::Place && !decision.jitPlacement.empty()) {
        l.policyJit = &decision.jitPlacement;
    }
    plan.instantiation = chooseInstantiation(l);
    raiseSharedLimit(l, layout);
    uploadConstants(l, std::move(packed));
    completePlan(l);
}

void finishLaunch(const KernelView& kv, const LaunchArgs& la, LaunchPlan& plan,
                  cudaError_t status) {
    Runtime& r = rt();
    LaunchState& st = *plan.state;
    LaunchReport& rep = st.report;
    rep.status = status;
    finishTiming(st, kv, la);
    if (status != cudaSuccess) {
        rep.errors.push_back(std::string("launch of ") + kv.name + " (" + rep.dispatch +
                             "): " + cudaMessage(status));
    }
    resetL2Window(st, la);
    recordPoolReader(st, la);
    recordTextureReaders(st, la);
    if (st.tracing) {
        collectTrace(r, kv, la, plan, status);
    }
    warnFallbacks(r, kv, rep);
    if (r.policy && !st.sweepLaunch) {
        r.policy->launched(st.info, rep);
    }
    tlsLastReport = rep;
    if (st.tracing) {
        // The whole traced launch on the host, the Placer's work on its trace included.
        addProcessTime(&ProcessTimes::tracedLaunchMs, std::chrono::duration<double, std::milli>(
                                                          std::chrono::steady_clock::now() - st.t0)
                                                          .count());
    }
    plan.state.reset(); // releases the lock
}

} // namespace memplace::detail

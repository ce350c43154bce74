// The device interface on the GPU (device.h): just-in-time instantiation with NVRTC (the
// instances: jit_instances.cpp; NVRTC, the disk cache and the driver: jit.cpp), the kernels'
// register and static shared memory counts from cudaFuncGetAttributes; traces come from the
// trace buffer only.
#include "runtime/src/device.h"
#include "runtime/src/jit_instances.h"

#include <cstdlib>
#include <sstream>

namespace memplace {

namespace detail::device {

void loadJitEnv(Runtime& r) {
    if (!r.jitApiCacheDir) {
        r.jitCacheDir = jit::defaultCacheDir();
    }
    r.jitExtraOptions.clear();
    if (const char* o = std::getenv("MEMPLACE_JIT_OPTIONS")) {
        std::istringstream words(o);
        for (std::string w; words >> w;) {
            r.jitExtraOptions.push_back(w);
        }
    }
}

void describeJit(const Runtime& r, const KernelView& kv, bool forcedDynamic, LaunchInfo& info) {
    if (kv.jitSource == nullptr) {
        info.jitUnavailable = "the kernel has no JIT source (docs/rewrite-contract.md)";
    } else if (r.jitPolicy == JitPolicy::Off) {
        info.jitUnavailable = "MEMPLACE_JIT=off";
    } else if (forcedDynamic) {
        info.jitUnavailable = "the dispatch is forced dynamic";
    } else if (std::string why; !jitSupportedImpl(&why)) {
        info.jitUnavailable = why;
    } else {
        info.jitAvailable = true;
    }
    info.jitSynchronous = r.jitSync;
}

const Placement* policyPlacement(Launch& l, const Decision& decision) {
    if (decision.jitPlacement.size() != static_cast<std::size_t>(l.n)) {
        return &decision.placement;
    }
    if (!l.info.jitAvailable) {
        l.policyJitNote = "unavailable";
        l.policyJitDetail = l.info.jitUnavailable;
        return &decision.placement;
    }
    JitEntry& e = jitFor(l.r, l.kv, l.la, l.st.device, decision.jitPlacement, true);
    if (e.state == JitEntry::State::Ready) {
        l.policyJitRequested = true;
        return &decision.jitPlacement;
    }
    if (e.state == JitEntry::State::Pending) {
        l.policyJitNote = "pending";
        l.policyJitDetail = "compiling " + e.request.nameExpression + " in the background";
    } else {
        l.policyJitNote = "failed";
        l.policyJitDetail = e.error;
    }
    return &decision.placement;
}

int chooseJit(Launch& l, const Placement& placed, bool dynamicOnly) {
    Runtime& r = l.r;
    LaunchReport& rep = l.rep;
    const LaunchInfo& info = l.info;
    l.chosenJit = nullptr;
    // A sweep runs JIT instantiations only under MEMPLACE_JIT=always (prepareSweepJit).
    if ((l.st.sweepLaunch && r.jitPolicy != JitPolicy::Always) || l.kv.jitSource == nullptr ||
        dynamicOnly || l.jitBlocked || r.jitPolicy == JitPolicy::Off) {
        return static_cast<int>(LaunchPlan::kDynamic);
    }
    if (!info.jitAvailable) {
        rep.jit = "unavailable";
        rep.jitDetail = info.jitUnavailable;
        if (r.jitPolicy == JitPolicy::Always) {
            warnOnce(r, std::string(l.kv.name) +
                            ": MEMPLACE_JIT=always, but just-in-time instantiation is "
                            "unavailable: " +
                            info.jitUnavailable);
        }
        return static_cast<int>(LaunchPlan::kDynamic);
    }
    // Compiled when the policy asked for this placement, or for the one requested this
    // launch (a fallback may have changed it), or MEMPLACE_JIT=always.
    JitEntry& e = jitFor(r, l.kv, l.la, l.st.device, placed,
                         (l.policyJit != nullptr && *l.policyJit == placed) ||
                             l.policyJitRequested || r.jitPolicy == JitPolicy::Always);
    switch (e.state) {
    case JitEntry::State::Ready:
        l.chosenJit = &e;
        l.plan.jitFunction = e.loaded.function;
        rep.jit = "loaded";
        return static_cast<int>(LaunchPlan::kJit);
    case JitEntry::State::Pending:
        rep.jit = "pending";
        rep.jitDetail = "compiling " + e.request.nameExpression + " in the background";
        break;
    case JitEntry::State::Failed:
        rep.jit = "failed";
        rep.jitDetail = e.error;
        break;
    case JitEntry::State::Absent:
        rep.jit = "not-requested";
        break;
    }
    return static_cast<int>(LaunchPlan::kDynamic);
}

bool raiseJitSharedLimit(Launch& l) {
    JitEntry& e = *l.chosenJit;
    const std::size_t bytes = l.plan.sharedBytes;
    if (e.sharedAttr < bytes) {
        std::string why;
        if (!jit::setMaxDynamicShared(l.plan.jitFunction, static_cast<int>(bytes), &why)) {
            l.rep.errors.push_back(why);
            return false;
        }
        e.sharedAttr = bytes;
    }
    return true;
}

std::uintptr_t jitConstantPool(const Launch& l) {
    return l.chosenJit->loaded.pool;
}

bool jitCopiesConstants(const Launch& l) {
    return !l.chosenJit->sources.empty();
}

bool copyJitConstants(Launch& l) {
    const JitEntry& e = *l.chosenJit;
    bool copied = true;
    for (std::size_t k = 0; k < e.sources.size() && copied; ++k) {
        const auto [src, bytes] = e.sources[k];
        copied = check(cudaMemcpyAsync(reinterpret_cast<void*>( // NOLINT
                                           e.loaded.constants[k].first),
                                       src, bytes, cudaMemcpyDeviceToDevice, l.la.stream),
                       "cudaMemcpyAsync(" + e.request.constants[k] + ")", l.rep);
    }
    return copied;
}

void announceJit(Launch& l) {
    JitEntry& e = *l.chosenJit;
    if (e.announced) {
        return;
    }
    // The first launch of the instantiation says how it came to be (the Placer counts the
    // compile time as transform overhead).
    e.announced = true;
    l.rep.jit = e.origin;
    l.rep.jitCompileMs = e.compileMs;
    l.rep.jitLoadMs = e.loadMs;
    l.rep.jitBackground = e.background;
}

// Under MEMPLACE_JIT=always a sweep measures every placement that is not compiled in (and not
// asked for through the dynamic accessor) as its just-in-time instantiation. They are compiled
// here, side by side (one NVRTC thread each), before the first timed launch, so the timings
// are the instantiations', never the dynamic accessor's or a compilation's.
void prepareSweepJit(Runtime& r, const KernelView& kv, const LaunchArgs& la, const LaunchInfo& info,
                     const SweepRequest& req, std::chrono::steady_clock::time_point& budgetStart) {
    if (info.jitAvailable) {
        int device = 0;
        (void)cudaGetDevice(&device);
        bool always = false;
        {
            std::lock_guard<std::mutex> g(r.mu);
            always = r.jitPolicy == JitPolicy::Always;
            if (always) {
                const bool sync = r.jitSync;
                r.jitSync = false;
                for (const SweepEntry& e : req.entries) {
                    if (!e.dynamic &&
                        e.placement.size() == static_cast<std::size_t>(kv.numArrays) &&
                        compiledIndex(kv, e.placement) < 0) {
                        (void)jitFor(r, kv, la, device, e.placement, true);
                    }
                }
                r.jitSync = sync;
            }
        }
        if (always) {
            waitJitThreads();
        }
    }
    budgetStart = std::chrono::steady_clock::now(); // the budget is for measuring
}

void releaseJit() {
    // Just-in-time modules: unloaded (compilations in flight finish into nothing; the disk
    // cache keeps their images, so the next launch loads them again).
    for (auto& [key, e] : jitEntries()) {
        if (e.loaded.module != nullptr) {
            jit::unload(e.loaded.module);
        }
    }
    jitEntries().clear();
}

void describeKernelResources(Launch& l) {
    const void* fn = l.kv.compiledFns[0];
    auto fa = l.r.funcAttrs.find({l.st.device, fn});
    if (fa == l.r.funcAttrs.end()) {
        cudaFuncAttributes attr{};
        std::pair<int, std::size_t> v{0, 0};
        if (check(cudaFuncGetAttributes(&attr, fn), "cudaFuncGetAttributes", l.rep)) {
            v = {attr.numRegs, attr.sharedSizeBytes};
        }
        fa = l.r.funcAttrs.emplace(std::make_pair(l.st.device, fn), v).first;
    }
    l.info.registers = fa->second.first;
    l.info.staticSharedBytes = fa->second.second;
}

void announceTracedLaunch(const std::vector<uint32_t>& /*sampled*/) {}

std::optional<std::vector<TraceRecord>> takeProfiledRecords(const LaunchInfo& /*info*/) {
    return std::nullopt;
}

} // namespace detail::device

namespace detail {

cudaError_t launchJit(const LaunchArgs& la, const LaunchPlan& plan, void** params) {
    return jit::launch(plan.jitFunction, la.grid, la.block, static_cast<unsigned>(plan.sharedBytes),
                       la.stream, params);
}

} // namespace detail

void waitForJit() {
    detail::waitJitThreads();
}

bool jitSupported(std::string* why) {
    return detail::jitSupportedImpl(why);
}

} // namespace memplace

// Shared memory staging: the staged arrays laid out after the program's own dynamic shared
// memory (layout.h: layoutShared), and the kernel's dynamic shared memory limit raised when
// staging needs more than the default 48 KiB.
#include "runtime/src/device.h"
#include "runtime/src/runtime_internal.h"

#include <algorithm>

namespace memplace::detail {

namespace {

/// Raises the limit of the compiled or dynamic instantiation the plan launches (once per
/// device and function and size); false when it cannot.
bool raiseFunctionLimit(Launch& l) {
    LaunchPlan& plan = l.plan;
    const void* fn =
        plan.instantiation >= 0 ? l.kv.compiledFns[plan.instantiation] : l.kv.dynamicFn;
    std::size_t& done = l.r.sharedAttr[{l.st.device, fn}];
    if (done < plan.sharedBytes) {
        if (check(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(plan.sharedBytes)),
                  "cudaFuncSetAttribute(MaxDynamicSharedMemorySize, " +
                      std::to_string(plan.sharedBytes) + ")",
                  l.rep)) {
            done = plan.sharedBytes;
        } else {
            return false;
        }
    }
    return true;
}

} // namespace

SharedLayout layoutStaging(Launch& l, const std::vector<SharedSlot>& wanted) {
    const KernelView& kv = l.kv;
    const DeviceAttrs& attrs = *l.attrs;
    std::size_t staticShared = 0;
    if (!wanted.empty()) {
        cudaFuncAttributes fa{};
        if (check(cudaFuncGetAttributes(&fa, kv.compiledFns[0]), "cudaFuncGetAttributes", l.rep)) {
            staticShared = fa.sharedSizeBytes;
        }
    }
    const SharedLayout layout =
        layoutShared(l.la.sharedBytes, wanted, staticShared,
                     static_cast<std::size_t>(std::max(attrs.optinShared, 0)));
    for (const SharedSlot& s : layout.dropped) {
        l.fallback(s.array, "shared: needs " + std::to_string(sharedFootprint(s)) +
                                " bytes; with the kernel's " + std::to_string(staticShared) +
                                " static and the other staged arrays it exceeds the " +
                                std::to_string(attrs.optinShared) + "-byte limit per block");
    }
    for (const SharedSlot& s : layout.slots) {
        ArrayHandle& h = l.plan.handles[s.array];
        h.count = s.count;
        h.sharedOffset = static_cast<unsigned>(s.offset);
        h.dirtyOffset = static_cast<unsigned>(s.dirtyOffset);
        h.copyIn = kv.arrays[s.array].mode == Mode::Write ? 0u : 1u;
    }
    l.plan.sharedBytes = layout.slots.empty() ? l.la.sharedBytes : layout.totalBytes;
    return layout;
}

void raiseSharedLimit(Launch& l, const SharedLayout& layout) {
    LaunchPlan& plan = l.plan;
    if (plan.sharedBytes <= kDefaultDynamicSharedLimit || layout.slots.empty()) {
        return;
    }
    const bool raised = plan.instantiation == LaunchPlan::kJit ? device::raiseJitSharedLimit(l)
                                                               : raiseFunctionLimit(l);
    if (!raised) {
        for (const SharedSlot& s : layout.slots) {
            l.fallback(s.array, "shared: cannot raise the kernel's dynamic shared memory "
                                "limit");
        }
        plan.sharedBytes = l.la.sharedBytes;
        plan.instantiation = chooseInstantiation(l);
    }
}

} // namespace memplace::detail

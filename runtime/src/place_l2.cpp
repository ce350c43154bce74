// L2 persisting placement: one access-policy window per stream over the arrays placed there,
// the persisting set-aside sized for it (MEMPLACE_L2_LIMIT) and put back when a later launch
// places nothing there, the stream's window reset after the launch.
#include "runtime/src/runtime_internal.h"

#include <algorithm>

namespace memplace::detail {

namespace {

/// Sets the persisting L2 set-aside for a window of windowBytes (MEMPLACE_L2_LIMIT), first
/// remembering what the program had, so that a later launch can put it back.
bool setPersistingLimit(const Runtime& r, DeviceAttrs& attrs, std::size_t windowBytes,
                        LaunchReport& rep) {
    if (!attrs.l2LimitSet &&
        !check(cudaDeviceGetLimit(&attrs.l2LimitBefore, cudaLimitPersistingL2CacheSize),
               "cudaDeviceGetLimit(PersistingL2CacheSize)", rep)) {
        return false;
    }
    const auto maxPersist = static_cast<std::size_t>(attrs.maxPersist);
    const std::size_t want = r.l2Limit == L2LimitPolicy::Window
                                 ? persistingSetAside(windowBytes, attrs.l2LimitBefore, maxPersist,
                                                      std::size_t{1} << 20, r.l2Cap)
                                 : maxPersist;
    if (attrs.l2LimitSet && want == attrs.l2SetAsideAsked) {
        return true;
    }
    if (!check(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, want),
               "cudaDeviceSetLimit(PersistingL2CacheSize)", rep)) {
        return false;
    }
    std::size_t got = 0; // what the driver made of it (rounded up); `want` if unreadable
    if (!check(cudaDeviceGetLimit(&got, cudaLimitPersistingL2CacheSize),
               "cudaDeviceGetLimit(PersistingL2CacheSize)", rep)) {
        got = want;
    }
    attrs.l2SetAsideAsked = want;
    attrs.l2SetAside = got;
    attrs.l2LimitSet = true;
    return true;
}

/// The arrays that share the window, and its span [lo, hi): as long as the span fits the
/// device's maximum window (an array larger than the maximum gets a window over its first
/// maxWindow bytes); the others fall back.
std::vector<int> windowArrays(Launch& l, const std::vector<int>& wanted, std::uintptr_t& lo,
                              std::uintptr_t& hi) {
    const DeviceAttrs& attrs = *l.attrs;
    std::string why;
    if (attrs.maxPersist <= 0 || attrs.maxWindow <= 0) {
        why = "l2persist: the device has no persisting L2 set-aside";
    }
    const auto maxWindow = static_cast<std::uintptr_t>(std::max(attrs.maxWindow, 0));
    std::vector<int> kept;
    for (int j : wanted) {
        if (!why.empty()) {
            l.fallback(j, why);
            continue;
        }
        const auto b = reinterpret_cast<std::uintptr_t>(l.info.arrays[j].ptr);
        const std::uintptr_t e = b + l.info.arrays[j].extentBytes;
        if (kept.empty()) {
            lo = b;
            hi = std::min(e, b + maxWindow);
            kept.push_back(j);
            continue;
        }
        const std::uintptr_t nlo = std::min(lo, b);
        const std::uintptr_t nhi = std::max(hi, e);
        if (nhi - nlo > maxWindow) {
            l.fallback(j, "l2persist: one window per stream, and one spanning this array and " +
                              std::string(l.kv.arrays[kept.front()].name) +
                              " would exceed the "
                              "maximum window of " +
                              std::to_string(maxWindow) + " bytes");
            continue;
        }
        lo = nlo;
        hi = nhi;
        kept.push_back(j);
    }
    return kept;
}

/// Sets the stream's access-policy window over [lo, hi), remembering the stream's own; empty
/// when done, else why not.
std::string setWindow(Launch& l, std::uintptr_t lo, std::uintptr_t hi) {
    LaunchReport& rep = l.rep;
    cudaStreamAttrValue old{};
    cudaStreamAttrValue v{};
    const std::size_t bytes = hi - lo;
    v.accessPolicyWindow.base_ptr =
        reinterpret_cast<void*>(lo); // NOLINT(performance-no-int-to-ptr)
    v.accessPolicyWindow.num_bytes = bytes;
    v.accessPolicyWindow.hitRatio =
        bytes == 0 ? 0.0f
                   : static_cast<float>(std::min(1.0, static_cast<double>(l.attrs->l2SetAside) /
                                                          static_cast<double>(bytes)));
    v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    if (!check(cudaStreamGetAttribute(l.la.stream, cudaStreamAttributeAccessPolicyWindow, &old),
               "cudaStreamGetAttribute(AccessPolicyWindow)", rep)) {
        return "l2persist: cannot read the stream's access-policy window";
    }
    if (!check(cudaStreamSetAttribute(l.la.stream, cudaStreamAttributeAccessPolicyWindow, &v),
               "cudaStreamSetAttribute(AccessPolicyWindow)", rep)) {
        return "l2persist: cannot set the stream's access-policy window";
    }
    l.st.l2Set = true;
    l.st.oldWindow = old;
    return {};
}

} // namespace

// A launch without a persisting array after one with: the set-aside goes back to what the
// program had, and lines still marked persisting become normal. Left raised, it costs every
// later kernel of the program the L2 it takes (measured on an H100: decision 016).
void restorePersistingLimit(Launch& l, bool placesNone) {
    DeviceAttrs& attrs = *l.attrs;
    LaunchReport& rep = l.rep;
    if (placesNone && attrs.l2LimitSet && l.r.l2Limit != L2LimitPolicy::Keep) {
        (void)check(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache", rep);
        if (check(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, attrs.l2LimitBefore),
                  "cudaDeviceSetLimit(PersistingL2CacheSize, restore)", rep)) {
            attrs.l2LimitSet = false;
        }
    }
}

// L2 persisting: one access-policy window per stream, so the arrays placed there share one
// window spanning them all.
void placeL2Window(Launch& l, const std::vector<int>& wanted) {
    if (wanted.empty()) {
        return;
    }
    std::uintptr_t lo = 0;
    std::uintptr_t hi = 0;
    std::vector<int> kept = windowArrays(l, wanted, lo, hi);
    std::string why;
    if (!kept.empty() && !setPersistingLimit(l.r, *l.attrs, hi - lo, l.rep)) {
        why = "l2persist: cannot set the persisting L2 size";
        for (int j : kept) {
            l.fallback(j, why);
        }
        kept.clear();
    }
    if (!kept.empty()) {
        why = setWindow(l, lo, hi);
        for (int j : kept) {
            if (!why.empty()) {
                l.fallback(j, why);
            }
        }
    }
}

void resetL2Window(LaunchState& st, const LaunchArgs& la) {
    LaunchReport& rep = st.report;
    if (st.l2Set) {
        // Kernels take the window when they are launched: resetting it now affects only later
        // launches on the stream. Lines already marked persisting keep that status until evicted.
        (void)check(
            cudaStreamSetAttribute(la.stream, cudaStreamAttributeAccessPolicyWindow, &st.oldWindow),
            "cudaStreamSetAttribute(AccessPolicyWindow reset)", rep);
    }
}

} // namespace memplace::detail

// The host library's state and controls: the Runtime (one per process, never destroyed), the
// environment it reads, the device's attributes, array extents and the globals a kernel names,
// and the public API that sets placements, dispatch, JIT and extents. Plain C++ over the CUDA
// runtime; the driver API (cuMemGetAddressRange, and jit.cpp's module functions) is reached
// through cudaGetDriverEntryPointByVersion so programs link only cudart.
#include "runtime/src/device.h"
#include "runtime/src/runtime_internal.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cuda.h>

namespace memplace {

namespace detail {

Runtime& rt() {
    static auto* r = new Runtime; // never destroyed: no teardown after the CUDA context is gone
    return *r;
}

thread_local LaunchReport tlsLastReport;
thread_local const SweepCurrent* tlsSweep = nullptr;
thread_local bool tlsJustSwept = false;

void warnOnce(Runtime& r, const std::string& msg) {
    if (r.quiet || !r.warned.insert(msg).second) {
        return;
    }
    std::fprintf(stderr, "memplace: %s\n", msg.c_str());
}

void loadEnv(Runtime& r) {
    if (r.envLoaded) {
        return;
    }
    r.envLoaded = true;
    r.env = parseMemplaceEnv(std::getenv("MEMPLACE"));
    r.quiet = env::readSwitch("MEMPLACE_QUIET", false, r.env.warnings);
    r.envDynamic = parseDispatchEnv(std::getenv("MEMPLACE_DISPATCH"), r.env.warnings);
    r.l2Limit = parseL2LimitEnv(std::getenv("MEMPLACE_L2_LIMIT"), r.env.warnings, &r.l2Cap);
    const JitPolicy jp = parseJitEnv(std::getenv("MEMPLACE_JIT"), r.env.warnings);
    const bool js =
        parseSwitchEnv("MEMPLACE_JIT_SYNC", std::getenv("MEMPLACE_JIT_SYNC"), r.env.warnings);
    if (!r.jitApiPolicy) {
        r.jitPolicy = jp;
    }
    if (!r.jitApiSync) {
        r.jitSync = js;
    }
    device::loadJitEnv(r);
    for (const std::string& w : r.env.warnings) {
        warnOnce(r, w);
    }
}

std::string cudaMessage(cudaError_t e) {
    return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

bool check(cudaError_t e, const std::string& what, LaunchReport& rep) {
    if (e == cudaSuccess) {
        return true;
    }
    (void)cudaGetLastError();
    rep.errors.push_back(what + ": " + cudaMessage(e));
    return false;
}

DeviceAttrs& deviceAttrs(Runtime& r, int dev, LaunchReport& rep) {
    auto it = r.attrs.find(dev);
    if (it != r.attrs.end()) {
        return it->second;
    }
    DeviceAttrs a;
    auto get = [&](int& v, cudaDeviceAttr attr, const char* name) {
        if (!check(cudaDeviceGetAttribute(&v, attr, dev),
                   std::string("cudaDeviceGetAttribute(") + name + ")", rep)) {
            v = 0;
        }
    };
    get(a.texAlign, cudaDevAttrTextureAlignment, "TextureAlignment");
    get(a.pitchAlign, cudaDevAttrTexturePitchAlignment, "TexturePitchAlignment");
    get(a.max2DWidth, cudaDevAttrMaxTexture2DLinearWidth, "MaxTexture2DLinearWidth");
    get(a.max2DHeight, cudaDevAttrMaxTexture2DLinearHeight, "MaxTexture2DLinearHeight");
    get(a.max2DPitch, cudaDevAttrMaxTexture2DLinearPitch, "MaxTexture2DLinearPitch");
    get(a.optinShared, cudaDevAttrMaxSharedMemoryPerBlockOptin, "MaxSharedMemoryPerBlockOptin");
    get(a.maxPersist, cudaDevAttrMaxPersistingL2CacheSize, "MaxPersistingL2CacheSize");
    get(a.maxWindow, cudaDevAttrMaxAccessPolicyWindowSize, "MaxAccessPolicyWindowSize");
    return r.attrs.emplace(dev, a).first->second;
}

using GetAddressRange = CUresult (*)(CUdeviceptr*, std::size_t*, CUdeviceptr);

GetAddressRange addressRangeFn() {
    static GetAddressRange fn = [] {
        void* p = nullptr;
        cudaDriverEntryPointQueryResult q{};
        if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &p, 12000, cudaEnableDefault,
                                             &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess) {
            (void)cudaGetLastError();
            return static_cast<GetAddressRange>(nullptr);
        }
        return reinterpret_cast<GetAddressRange>(p);
    }();
    return fn;
}

/// The extent of ptr: given with setExtent (a registered range containing ptr), else the rest
/// of its allocation (cuMemGetAddressRange).
bool findExtent(Runtime& r, const void* ptr, std::size_t& bytes, long long& width) {
    const auto p = reinterpret_cast<std::uintptr_t>(ptr);
    auto it = r.extents.upper_bound(p);
    if (it != r.extents.begin()) {
        --it;
        if (p >= it->first && p < it->first + it->second.first) {
            bytes = it->first + it->second.first - p;
            width = it->second.second;
            return true;
        }
    }
    GetAddressRange fn = addressRangeFn();
    if (fn == nullptr || ptr == nullptr) {
        return false;
    }
    CUdeviceptr base = 0;
    std::size_t size = 0;
    CUresult res = fn(&base, &size, static_cast<CUdeviceptr>(p));
    if (res == CUDA_ERROR_INVALID_CONTEXT) {
        (void)cudaFree(nullptr); // makes the runtime's primary context current on this thread
        (void)cudaGetLastError();
        res = fn(&base, &size, static_cast<CUdeviceptr>(p));
    }
    if (res != CUDA_SUCCESS) {
        return false;
    }
    bytes = static_cast<std::size_t>(base + size - p);
    return true;
}

/// What the kernel accesses besides its arrays (the descriptor's aliasing members): the device
/// memory of each global it names (found once per device; cudaGetSymbolAddress and
/// cudaGetSymbolSize through the descriptor's globalRange), and its unknown writes and reads.
void fillAliasing(Runtime& r, const KernelView& kv, int device, LaunchInfo& info) {
    info.unknownWrites = kv.unknownWrites != nullptr ? kv.unknownWrites : "";
    info.unknownReads = kv.unknownReads != nullptr ? kv.unknownReads : "";
    info.globals.clear();
    for (int k = 0; k < kv.globalCount; ++k) {
        GlobalRange g;
        g.name = kv.globals[k].name;
        g.mode = kv.globals[k].mode;
        const auto key = std::make_tuple(device, reinterpret_cast<const void*>(kv.globalRange), k);
        auto it = r.globalRanges.find(key);
        if (it == r.globalRanges.end()) {
            void* address = nullptr;
            std::size_t bytes = 0;
            const bool found = kv.globalRange != nullptr &&
                               kv.globalRange(k, &address, &bytes) == cudaSuccess &&
                               address != nullptr;
            if (!found) {
                (void)cudaGetLastError(); // the program's next cudaGetLastError is its own
            }
            it = r.globalRanges.emplace(key, std::make_tuple(address, bytes, found)).first;
        }
        std::tie(g.ptr, g.bytes, g.found) = it->second;
        info.globals.push_back(std::move(g));
    }
}

const char* dispatchName(int inst) {
    if (inst == LaunchPlan::kTracing) {
        return "tracing";
    }
    if (inst == LaunchPlan::kJit) {
        return "jit";
    }
    return inst == LaunchPlan::kDynamic ? "dynamic" : "specialized";
}

bool sticky(cudaError_t e) {
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
        return true;
    default:
        return false;
    }
}

} // namespace detail

// ---- public API: controls -------------------------------------------------------------------

using detail::rt;

void setPlacementPolicy(std::shared_ptr<PlacementPolicy> policy) {
    auto& r = rt();
    std::lock_guard<std::mutex> g(r.mu);
    r.policy = std::move(policy);
}

void setPlacement(const std::string& kernel,
                  const std::vector<std::pair<std::string, Place>>& places) {
    auto& r = rt();
    std::lock_guard<std::mutex> g(r.mu);
    r.apiPlacements[kernel] = places;
}

void clearPlacements() {
    auto& r = rt();
    std::lock_guard<std::mutex> g(r.mu);
    r.apiPlacements.clear();
}

void setDispatchMode(DispatchMode mode) {
    auto& r = rt();
    std::lock_guard<std::mutex> g(r.mu);
    r.apiDispatch = mode;
}

void setJitMode(JitMode mode) {
    auto& r = rt();
    std::lock_guard<std::mutex> g(r.mu);
    r.jitApiPolicy = true;
    r.jitPolicy = mode == JitMode::Off      ? detail::JitPolicy::Off
                  : mode == JitMode::Always ? detail::JitPolicy::Always
                                            : detail::JitPolicy::Auto;
}

void setJitSynchronous(bool on) {
    auto& r = rt();
    std::lock_guard<std::mutex> g(r.mu);
    r.jitApiSync = true;
    r.jitSync = on;
}

void setJitCacheDir(const std::string& dir) {
    auto& r = rt();
    std::lock_guard<std::mutex> g(r.mu);
    r.jitApiCacheDir = true;
    r.jitCacheDir = dir;
}

void setExtent(const void* ptr, std::size_t bytes, long long width) {
    auto& r = rt();
    std::lock_guard<std::mutex> g(r.mu);
    r.extents[reinterpret_cast<std::uintptr_t>(ptr)] = {bytes, width};
}

void clearExtent(const void* ptr) {
    auto& r = rt();
    std::lock_guard<std::mutex> g(r.mu);
    r.extents.erase(reinterpret_cast<std::uintptr_t>(ptr));
}

void releaseResources() {
    auto& r = rt();
    std::lock_guard<std::mutex> g(r.mu);
    detail::releaseTextures(r);
    detail::releasePools(r);
    r.sharedAttr.clear();
    detail::releaseTraceBuffers(r);
    r.attrs.clear();
    detail::device::releaseJit();
    (void)cudaGetLastError();
}

} // namespace memplace

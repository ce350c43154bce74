// The device interface on the CPU emulation layer (device.h; emu/, docs/emulation.md): the
// layer has no NVRTC, so no launch runs just in time and the JIT operations are never reached
// with an instance; it knows neither registers nor static shared memory; a traced launch may be
// profiled actively instead (MEMPLACE_PROFILE=active, memplace/emu/profile.h), its records
// taken from the profile. Compiled into memplace_runtime_emu instead of device_cuda.cpp (it
// lives in its own folder so that programs that compile runtime/src/*.cpp with nvcc get the
// GPU's).
#include "memplace/emu/profile.h"
#include "runtime/src/device.h"

namespace memplace {

namespace {

constexpr const char* kNoNvrtc = "the CPU emulation layer has no NVRTC";

} // namespace

namespace detail::device {

namespace {

/// An active profile's records as TraceRecords: the key is the tracing accessor's
/// rendezvousKey(site, array << 8 | flags). Extrapolated lanes outside the array's known extent
/// are dropped (a guarded tail the profile did not run), and records left without lanes.
std::vector<TraceRecord> profileRecords(const emu::Profile& prof, const LaunchInfo& info) {
    std::vector<TraceRecord> out;
    out.reserve(prof.records.size());
    for (const emu::ProfiledRecord& p : prof.records) {
        TraceRecord r{};
        r.block = p.block;
        r.warp = static_cast<uint16_t>(p.warp);
        r.site = static_cast<uint32_t>((p.key >> 32) & 0x7fffffffULL);
        r.array = static_cast<uint16_t>((p.key & 0xffffffffULL) >> 8);
        r.flags = static_cast<uint32_t>(p.key & 0xffULL);
        uint32_t mask = p.mask;
        long long length = -1;
        if (p.extrapolated && r.array < info.arrays.size()) {
            const ArrayInfo& ai = info.arrays[r.array];
            if (ai.extentKnown && ai.elemSize > 0) {
                length = static_cast<long long>(ai.extentBytes / ai.elemSize);
            }
        }
        for (uint32_t m = p.mask; m != 0; m &= m - 1) {
            const unsigned l = static_cast<unsigned>(__builtin_ctz(m));
            if (length >= 0 && (p.values[l] < 0 || p.values[l] >= length)) {
                mask &= ~(1u << l);
            } else {
                r.offset[l] = p.values[l];
            }
        }
        if (mask == 0) {
            continue;
        }
        r.activeMask = mask;
        out.push_back(r);
    }
    return out;
}

} // namespace

void loadJitEnv(Runtime& /*r*/) {}

void describeJit(const Runtime& /*r*/, const KernelView& /*kv*/, bool /*forcedDynamic*/,
                 LaunchInfo& info) {
    info.jitUnavailable = kNoNvrtc;
}

const Placement* policyPlacement(Launch& /*l*/, const Decision& decision) {
    return &decision.placement;
}

int chooseJit(Launch& /*l*/, const Placement& /*placed*/, bool /*dynamicOnly*/) {
    return static_cast<int>(LaunchPlan::kDynamic);
}

bool raiseJitSharedLimit(Launch& /*l*/) {
    return false;
}

std::uintptr_t jitConstantPool(const Launch& /*l*/) {
    return 0;
}

bool jitCopiesConstants(const Launch& /*l*/) {
    return false;
}

bool copyJitConstants(Launch& /*l*/) {
    return false;
}

void announceJit(Launch& /*l*/) {}

void prepareSweepJit(Runtime& /*r*/, const KernelView& /*kv*/, const LaunchArgs& /*la*/,
                     const LaunchInfo& /*info*/, const SweepRequest& /*req*/,
                     std::chrono::steady_clock::time_point& /*budgetStart*/) {}

void releaseJit() {}

void describeKernelResources(Launch& /*l*/) {}

void announceTracedLaunch(const std::vector<uint32_t>& sampled) {
    emu::profileNextLaunch(sampled); // MEMPLACE_PROFILE=active profiles it (emu/)
}

std::optional<std::vector<TraceRecord>> takeProfiledRecords(const LaunchInfo& info) {
    if (std::optional<emu::Profile> prof = emu::takeProfile()) {
        return profileRecords(*prof, info);
    }
    return std::nullopt;
}

} // namespace detail::device

namespace detail {

cudaError_t launchJit(const LaunchArgs& /*la*/, const LaunchPlan& /*plan*/, void** /*params*/) {
    return cudaErrorNotSupported;
}

} // namespace detail

void waitForJit() {}

bool jitSupported(std::string* why) {
    if (why != nullptr) {
        *why = kNoNvrtc;
    }
    return false;
}

} // namespace memplace

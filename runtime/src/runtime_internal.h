// What the host library's files share (internal): the runtime's state (Runtime: the controls,
// the materialised resources, the traces), one launch's bookkeeping from prepareLaunch to
// finishLaunch (LaunchState), the context prepareLaunch's phases pass along (Launch), and the
// helpers every file uses. The files: runtime.cpp (state, controls), launch.cpp (the phases in
// order), decide.cpp, place_*.cpp (one per place), timing.cpp, tracing.cpp, shadow.cpp,
// written_memory.cpp, sweep.cpp, report.cpp, and the device interface (device.h).
#pragma once

#include "memplace/handles.h"
#include "memplace/host.h"
#include "runtime/src/env.h"
#include "runtime/src/layout.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace memplace::detail {

constexpr std::size_t kDefaultDynamicSharedLimit = std::size_t{48} * 1024;

struct DeviceAttrs {
    int texAlign = 0;
    int pitchAlign = 0;
    int max2DWidth = 0;
    int max2DHeight = 0;
    int max2DPitch = 0;
    int optinShared = 0;
    int maxPersist = 0;
    int maxWindow = 0;
    std::map<std::size_t, std::size_t> max1D; // texel size -> texels
    bool l2LimitSet = false;                  ///< the runtime raised the persisting L2 limit
    std::size_t l2SetAside = 0;               ///< what it was raised to (as the driver reports)
    std::size_t l2SetAsideAsked = 0;          ///< what the runtime asked for
    std::size_t l2LimitBefore = 0; ///< what it was before (restored by the next launch without)
};

struct TexKey {
    int device;
    std::uintptr_t base;
    std::size_t bytes;
    std::size_t elem;
    std::size_t width;  // 2-D only
    std::size_t height; // 2-D only
    bool copy;
    bool operator<(const TexKey& o) const {
        return std::tie(device, base, bytes, elem, width, height, copy) <
               std::tie(o.device, o.base, o.bytes, o.elem, o.width, o.height, o.copy);
    }
};

struct TexEntry {
    cudaTextureObject_t tex = 0;
    void* pitched = nullptr; // owned pitched copy (2-D, copy) or null
    std::size_t pitch = 0;
    cudaEvent_t lastUse = nullptr; // last launch that read the pitched copy
    bool used = false;
};

struct PoolState {
    cudaEvent_t lastUse = nullptr;
    bool used = false;
};

using ExtentEntry = std::pair<std::size_t, long long>; // bytes, width

/// One just-in-time instantiation (the GPU build's device interface: jit_instances.h). The
/// launch logic only holds it by pointer.
struct JitEntry;

struct Runtime {
    std::mutex mu;
    bool envLoaded = false;
    EnvConfig env;
    bool envDynamic = false;
    bool quiet = false;
    /// MEMPLACE_L2_LIMIT: how large the persisting L2 set-aside is made, and whether it is put
    /// back before the next launch that places nothing there.
    L2LimitPolicy l2Limit = L2LimitPolicy::Window;
    std::size_t l2Cap = 0; ///< MEMPLACE_L2_LIMIT=window:SIZE: the set-aside at most SIZE
    DispatchMode apiDispatch = DispatchMode::Auto;
    std::map<std::string, std::vector<std::pair<std::string, Place>>> apiPlacements;
    std::shared_ptr<PlacementPolicy> policy;
    std::map<std::uintptr_t, ExtentEntry> extents;
    std::map<int, DeviceAttrs> attrs;
    std::map<TexKey, TexEntry> textures;
    std::map<std::pair<int, const void*>, PoolState> pools;
    std::map<std::pair<int, const void*>, std::size_t> sharedAttr;
    std::set<std::string> warned;
    uint64_t launches = 0; // launch ids handed out
    // the default instantiation's (registers, static shared bytes), per (device, function)
    std::map<std::pair<int, const void*>, std::pair<int, std::size_t>> funcAttrs;
    /// The device memory of each global a descriptor names (its globalRange), per (device,
    /// globalRange function, index): address, bytes, found.
    std::map<std::tuple<int, const void*, int>, std::tuple<const void*, std::size_t, bool>>
        globalRanges;
    // just-in-time instantiation (its instances: the device interface)
    JitPolicy jitPolicy = JitPolicy::Auto;
    bool jitApiPolicy = false; ///< setJitMode was called (the environment no longer counts)
    bool jitSync = false;
    bool jitApiSync = false;
    std::string jitCacheDir;
    bool jitApiCacheDir = false;
    /// MEMPLACE_JIT_OPTIONS: NVRTC options added to every compilation (space-separated), for
    /// what the program's nvcc flags say and NVRTC cannot see (`--fmad=false`).
    std::vector<std::string> jitExtraOptions;
    // tracing
    int traceRemaining = 0;
    TraceOptions traceOptions;
    std::vector<TraceResult> traces;
    void* traceBuf = nullptr;
    std::size_t traceBufBytes = 0;
    int traceBufDevice = -1;
    unsigned* bitmapBuf = nullptr;
    std::size_t bitmapBytes = 0;
    int bitmapDevice = -1;
};

Runtime& rt();

extern thread_local LaunchReport tlsLastReport;

/// The placement a sweep measures now (runSweep sets it around each of its launches).
struct SweepCurrent {
    const Placement* placement = nullptr;
    bool dynamic = false;
};
extern thread_local const SweepCurrent* tlsSweep;
/// Set by runSweep: the next decision of this thread may not be another sweep.
extern thread_local bool tlsJustSwept;

void warnOnce(Runtime& r, const std::string& msg);
void loadEnv(Runtime& r);
std::string cudaMessage(cudaError_t e);
/// Checks a CUDA call; a failure is recorded in the report and cleared from the last error so
/// that the program does not mistake it for its own.
bool check(cudaError_t e, const std::string& what, LaunchReport& rep);
/// Whether `e` is an error that leaves the context unusable (every later call fails).
bool sticky(cudaError_t e);
DeviceAttrs& deviceAttrs(Runtime& r, int dev, LaunchReport& rep);
/// The extent of ptr: given with setExtent (a registered range containing ptr), else the rest
/// of its allocation (cuMemGetAddressRange).
bool findExtent(Runtime& r, const void* ptr, std::size_t& bytes, long long& width);
/// What the kernel accesses besides its arrays (the descriptor's aliasing members).
void fillAliasing(Runtime& r, const KernelView& kv, int device, LaunchInfo& info);
const char* dispatchName(int inst);
std::string jsonEscape(const std::string& s);

/// One buffer a launch writes (a sweep restores it, a shadow launch copies it): a written array's
/// memory from its pointer to the end of its extent, or a `__device__` variable the kernel writes
/// by name.
struct WrittenBuffer {
    void* ptr = nullptr;
    std::size_t bytes = 0;
    bool restore = false;      ///< some array over it is read: restore it, else poison it (sweep)
    bool global = false;       ///< a variable written by name (it cannot be redirected)
    void* snapshot = nullptr;  ///< its contents before the sweep, or the shadow launch's scratch
                               ///< copy (a global: its contents before the launch)
    void* reference = nullptr; ///< its contents after the sweep's first entry, or what the
                               ///< shadow launch wrote to a global
    std::string names;
};

/// The library's bookkeeping for one launch, from prepareLaunch to finishLaunch.
struct LaunchState {
    std::unique_lock<std::mutex> lock;
    std::chrono::steady_clock::time_point t0;
    LaunchReport report;
    LaunchInfo info;
    int device = 0;
    bool l2Set = false;
    cudaStreamAttrValue oldWindow{};
    PoolState* pool = nullptr;
    std::vector<TexEntry*> copiedTextures;
    bool tracing = false;
    bool policyTrace = false;
    std::vector<uint32_t> sampled;
    std::size_t traceCapacity = 0;
    bool timed = false;
    bool sweepLaunch = false; ///< one of a sweep's launches: no policy calls, no timing
    cudaEvent_t ev[3] = {};
    /// A shadow launch (TraceOptions::Shadow): the written buffers and their scratch copies, the
    /// comparison's device counter, the tracing instantiation's own status.
    bool shadow = false;
    std::vector<WrittenBuffer> shadowBuffers;
    unsigned long long* shadowCounter = nullptr;
    cudaError_t traceStatus = cudaSuccess;
};

struct SweepState {
    std::shared_ptr<const SweepRequest> request;
    LaunchInfo info;
};

/// One launch being prepared (prepareLaunch): what its phases (decide.cpp, place_*.cpp,
/// tracing.cpp) pass along, and what they decide for the later ones.
struct Launch {
    Launch(Runtime& r, const KernelView& kv, const LaunchArgs& la, LaunchPlan& plan,
           LaunchState& st)
        : r(r), kv(kv), la(la), plan(plan), st(st), rep(st.report), info(st.info), n(kv.numArrays) {
    }

    Runtime& r;
    const KernelView& kv;
    const LaunchArgs& la;
    LaunchPlan& plan;
    LaunchState& st;
    LaunchReport& rep;
    LaunchInfo& info;
    const int n;
    DeviceAttrs* attrs = nullptr;
    const SweepCurrent* sweep = nullptr; ///< a sweep's launch: the placement it measures
    bool off = false;                    ///< MEMPLACE=off
    bool forcedDynamic = false;          ///< MEMPLACE_DISPATCH=dynamic or setDispatchMode
    // Kernel timing (timing.cpp): whether to time, whether the first event is recorded, the
    // busy-wait the policy asked for (Decision::spinUs).
    bool timingWanted = false;
    bool timingBegun = false;
    double timingSpinUs = 0;
    // Just-in-time instantiation (the device interface): the policy's JIT placement and what
    // became of it, the instantiation chosen, and whether its constants could not be copied.
    const Placement* policyJit = nullptr;
    bool policyJitRequested = false; ///< the policy's jitPlacement is this launch's request
    std::string policyJitNote;       ///< the policy's jitPlacement is not placed: why
    std::string policyJitDetail;
    JitEntry* chosenJit = nullptr;
    bool jitBlocked = false;

    /// Puts array j back in global memory, with the reason in the report.
    void fallback(int j, const std::string& why);
    /// Whether to time this launch (timing.cpp).
    void startTiming(bool asked, double spinUs);
    /// The first event, right before the first stream work of this launch (a pitched copy, a
    /// constant upload, the trace buffer) or the kernel, so that the host-only work before it
    /// (the persisting L2 limit, stream attributes, which may wait for the device) is not in the
    /// interval.
    void beginTiming();
    /// The second, right before the kernel; then the report's host time. Every prepared launch
    /// ends with it.
    void ready();
};

// ---- prepareLaunch's phases (decide.cpp) ----------------------------------------------------

/// The compiled instantiation that matches `placed`, or -1.
int compiledIndex(const KernelView& kv, const Placement& placed);
/// The report's and the plan's defaults, the device and the launch id.
void beginLaunch(Launch& l);
/// What the runtime knows about the launch and its arrays (LaunchInfo) for the policy.
void describeLaunch(Launch& l);
/// The policy's decision (none under MEMPLACE=off or during a sweep). A sweep it asks for is
/// set up in the plan (true: nothing more to prepare), or refused (the decision is Default).
bool askPolicy(Launch& l, Decision& decision);
/// The placement requested for each array: a sweep's, else the environment's force list, the
/// program's setPlacement, the policy's, by default where the program keeps it.
Placement requestedPlacement(Launch& l, const Decision& decision);
/// Why array j cannot be placed at p (empty: it can be tried).
std::string placeObstacle(const Launch& l, int j, Place p);
/// The instantiation for the places reached so far: the specialised one that matches; else a
/// just-in-time one (the device interface); else the dynamic accessor.
int chooseInstantiation(Launch& l);

// ---- materialisation, one file per place ----------------------------------------------------

/// place_texture.cpp: whether a 2-D texture can hold the array (LaunchInfo::textureFeasible).
bool texture2DFits(const DeviceAttrs& a, const ArrayInfo& ai);
/// place_texture.cpp: the texture of array j (1-D, or 2-D pitched), or its fallback.
void placeTexture(Launch& l, int j);
/// After the launch: the pitched copies' readers recorded.
void recordTextureReaders(LaunchState& st, const LaunchArgs& la);
void releaseTextures(Runtime& r);

/// place_constant.cpp: packs the constant arrays into the pool (what does not fit falls back).
std::vector<ConstantSlot> packConstants(Launch& l, const std::vector<ConstantSlot>& wanted);
/// Uploads them into the chosen instantiation's pool (and a JIT module's copies of the
/// program's __constant__ variables); may choose the instantiation again.
void uploadConstants(Launch& l, std::vector<ConstantSlot> packed);
void recordPoolReader(LaunchState& st, const LaunchArgs& la);
void releasePools(Runtime& r);

/// place_shared.cpp: lays the staged arrays out after the program's own dynamic shared memory.
SharedLayout layoutStaging(Launch& l, const std::vector<SharedSlot>& wanted);
/// Raises the kernel's dynamic shared memory limit when staging needs more than the default;
/// may choose the instantiation again.
void raiseSharedLimit(Launch& l, const SharedLayout& layout);

/// place_l2.cpp: puts the persisting set-aside back when this launch places nothing there.
void restorePersistingLimit(Launch& l, bool placesNone);
/// One access-policy window over the persisting arrays.
void placeL2Window(Launch& l, const std::vector<int>& wanted);
/// After the launch: the stream's window put back.
void resetL2Window(LaunchState& st, const LaunchArgs& la);

// ---- timing.cpp, tracing.cpp, shadow.cpp, written_memory.cpp, report.cpp -------------------

/// After the launch: the third event, and the launch's timing queued for takeKernelTimings.
void finishTiming(LaunchState& st, const KernelView& kv, const LaunchArgs& la);

/// A traced launch, asked by the program (traceLaunches) or by the policy: true when it is
/// prepared (nothing more to do), false to launch untraced.
bool traceLaunch(Launch& l, const Decision& decision);
/// After a traced launch: its records to the policy or to takeTraces.
void collectTrace(Runtime& r, const KernelView& kv, const LaunchArgs& la, LaunchPlan& plan,
                  cudaError_t status);
void releaseTraceBuffers(Runtime& r);

/// Sets up a shadow launch (empty) or says why not.
std::string prepareShadow(const KernelView& kv, const LaunchArgs& la, LaunchState& st,
                          const TraceOptions& opt);
/// The tracing instantiation's array pointers: the scratch copies of a shadow launch.
void redirectToShadow(const LaunchState& st, const LaunchArgs& la, int j, ArrayHandle& h);
/// After the traced run of a shadow launch: its outputs compared into the trace, the copies freed.
void finishShadow(Runtime& r, const KernelView& kv, const LaunchArgs& la, LaunchState& st,
                  cudaError_t status, TraceResult& tr);
void releaseShadow(LaunchState& st);

/// The memory a launch writes, as far as it can be known (`why`: the first reason it cannot).
std::vector<WrittenBuffer> writtenBuffers(const LaunchInfo& info, std::string& why);
/// Counts the 32-bit words (and tail bytes) where the device buffers a and b differ.
cudaError_t countDifferences(cudaError_t (*compare)(const void*, const void*, std::size_t,
                                                    unsigned long long*, cudaStream_t),
                             unsigned long long* counter, const void* a, const void* b,
                             std::size_t bytes, cudaStream_t s, uint64_t& diff, std::string& what);

/// The report's fallbacks, each said once on stderr.
void warnFallbacks(Runtime& r, const KernelView& kv, const LaunchReport& rep);

} // namespace memplace::detail

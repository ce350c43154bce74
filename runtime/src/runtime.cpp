// The host library: placement decisions, materialisation (texture objects, constant pool,
// dynamic shared memory, L2 window), the choice of instantiation (specialised, just in time,
// dynamic), trace collection and reports. Plain C++ over the CUDA runtime; the driver API
// (cuMemGetAddressRange, and jit.cpp's module functions) is reached through
// cudaGetDriverEntryPointByVersion so programs link only cudart.
#include "memplace/handles.h"
#include "memplace/host.h"
#include "runtime/src/env.h"
#include "runtime/src/layout.h"
#if defined(MEMPLACE_EMU)
#include "memplace/emu/profile.h"
#else
#include "runtime/src/jit.h"
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

namespace memplace {

namespace detail {

namespace {

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

#if !defined(MEMPLACE_EMU)
/// A background compilation's result, shared with its thread.
struct JitJob {
    std::mutex mu;
    bool done = false;
    jit::Binary binary;
    std::string cacheError; ///< writing the disk cache failed
};

/// One just-in-time instantiation: (device, kernel source, name expression).
struct JitEntry {
    /// Absent: not compiled (nor in the disk cache), nobody asked yet.
    enum class State : uint8_t { Absent, Pending, Ready, Failed } state = State::Absent;
    jit::CompileRequest request;
    std::string key; ///< the content address (jit::cacheKey)
    std::shared_ptr<JitJob> job;
    jit::Loaded loaded;
    std::string error;
    std::string origin; ///< "compiled" or "cached"
    double compileMs = 0;
    double loadMs = 0;
    bool background = false;
    bool announced = false; ///< a launch report said how it came to be
    /// The program's __constant__ variables its module copies (request.constants order): the
    /// device address and size of each, found from the descriptor's host shadows.
    std::vector<std::pair<const void*, std::size_t>> sources;
    std::size_t sharedAttr = 0; ///< dynamic shared memory limit raised to this
};
using JitKey = std::tuple<int, const char*, std::string>;

/// Background compilations in flight, so that waitForJit() and the process's exit can wait.
struct JitThreads {
    std::mutex mu;
    std::condition_variable cv;
    int running = 0;
};
JitThreads& jitThreads() {
    static auto* t = new JitThreads; // never destroyed
    return *t;
}
void waitJitThreads() {
    JitThreads& t = jitThreads();
    std::unique_lock<std::mutex> g(t.mu);
    t.cv.wait(g, [&] { return t.running == 0; });
}
#endif

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
    // just-in-time instantiation
    JitPolicy jitPolicy = JitPolicy::Auto;
    bool jitApiPolicy = false; ///< setJitMode was called (the environment no longer counts)
    bool jitSync = false;
    bool jitApiSync = false;
    std::string jitCacheDir;
    bool jitApiCacheDir = false;
    /// MEMPLACE_JIT_OPTIONS: NVRTC options added to every compilation (space-separated), for
    /// what the program's nvcc flags say and NVRTC cannot see (`--fmad=false`).
    std::vector<std::string> jitExtraOptions;
#if !defined(MEMPLACE_EMU)
    std::map<JitKey, JitEntry> jit;
    std::map<int, std::pair<int, int>> computeCapability;
#endif
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

Runtime& rt() {
    static auto* r = new Runtime; // never destroyed: no teardown after the CUDA context is gone
    return *r;
}

thread_local LaunchReport tlsLastReport;

/// The placement a sweep measures now (runSweep sets it around each of its launches).
struct SweepCurrent {
    const Placement* placement = nullptr;
    bool dynamic = false;
};
thread_local const SweepCurrent* tlsSweep = nullptr;
/// Set by runSweep: the next decision of this thread may not be another sweep.
thread_local bool tlsJustSwept = false;

// ---- kernel timing: its own lock, so that policies may collect timings from their hooks -----

struct PendingTiming {
    uint64_t id = 0;
    int device = 0;
    std::string kernel;
    std::string dispatch;
    cudaEvent_t ev[3] = {};
};

struct Timing {
    std::mutex mu;
    std::atomic<int> enabled{-1}; // -1: not decided yet (MEMPLACE_TIME on first use)
    std::map<int, std::vector<cudaEvent_t>> freeEvents; // per device
    std::deque<PendingTiming> pending;
};

Timing& timing() {
    static auto* t = new Timing; // never destroyed, like the runtime
    return *t;
}

bool timingOn() {
    Timing& t = timing();
    int e = t.enabled.load();
    if (e < 0) {
        std::vector<std::string> warnings;
        const int v =
            parseSwitchEnv("MEMPLACE_TIME", std::getenv("MEMPLACE_TIME"), warnings) ? 1 : 0;
        for (const std::string& w : warnings) {
            std::fprintf(stderr, "memplace: %s\n", w.c_str());
        }
        int expected = -1;
        t.enabled.compare_exchange_strong(expected, v);
        e = t.enabled.load();
    }
    return e == 1;
}

/// Three events for one launch on `device` (from the pool, or new); false when creating failed.
bool takeEvents(int device, cudaEvent_t (&ev)[3]) {
    Timing& t = timing();
    std::lock_guard<std::mutex> g(t.mu);
    std::vector<cudaEvent_t>& pool = t.freeEvents[device];
    for (cudaEvent_t& e : ev) {
        if (!pool.empty()) {
            e = pool.back();
            pool.pop_back();
        } else if (cudaEventCreate(&e) != cudaSuccess) {
            (void)cudaGetLastError();
            e = nullptr;
            for (cudaEvent_t& f : ev) {
                if (f != nullptr) {
                    pool.push_back(f);
                    f = nullptr;
                }
            }
            return false;
        }
    }
    return true;
}

void giveEvents(int device, cudaEvent_t (&ev)[3]) {
    Timing& t = timing();
    std::lock_guard<std::mutex> g(t.mu);
    for (cudaEvent_t& e : ev) {
        if (e != nullptr) {
            t.freeEvents[device].push_back(e);
            e = nullptr;
        }
    }
}

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
#if !defined(MEMPLACE_EMU)
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
#endif
    for (const std::string& w : r.env.warnings) {
        warnOnce(r, w);
    }
}

std::string cudaMessage(cudaError_t e) {
    return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

/// Checks a CUDA call; a failure is recorded in the report and cleared from the last error so
/// that the program does not mistake it for its own.
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

cudaChannelFormatDesc rawFormat(std::size_t elem) {
    switch (elem) {
    case 1:
        return cudaCreateChannelDesc(8, 0, 0, 0, cudaChannelFormatKindUnsigned);
    case 2:
        return cudaCreateChannelDesc(16, 0, 0, 0, cudaChannelFormatKindUnsigned);
    case 4:
        return cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindUnsigned);
    case 8:
        return cudaCreateChannelDesc(32, 32, 0, 0, cudaChannelFormatKindUnsigned);
    default:
        return cudaCreateChannelDesc(32, 32, 32, 32, cudaChannelFormatKindUnsigned);
    }
}

cudaTextureDesc pointTextureDesc() {
    cudaTextureDesc td{};
    td.addressMode[0] = cudaAddressModeClamp;
    td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 0;
    return td;
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

std::string jsonEscape(const std::string& s) {
    std::string o;
    for (char c : s) {
        switch (c) {
        case '"':
            o += "\\\"";
            break;
        case '\\':
            o += "\\\\";
            break;
        case '\n':
            o += "\\n";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                o += buf;
            } else {
                o += c;
            }
        }
    }
    return o;
}

#if !defined(MEMPLACE_EMU)

bool jitSupportedImpl(std::string* why) {
    // Decided once per process (the first call loads libnvrtc).
    static const std::pair<bool, std::string> supported = [] {
        std::string w;
        if (!jit::nvrtcAvailable(&w)) {
            return std::make_pair(false, w);
        }
        if (jit::embeddedHeaders().empty()) {
            return std::make_pair(
                false, std::string("the runtime library was built without the embedded device "
                                   "headers (runtime/src/*.cpp compiled alone, without "
                                   "MEMPLACE_JIT_HEADERS)"));
        }
        return std::make_pair(true, std::string());
    }();
    if (!supported.first && why != nullptr) {
        *why = supported.second;
    }
    return supported.first;
}

std::pair<int, int> computeCapabilityOf(Runtime& r, int device) {
    auto it = r.computeCapability.find(device);
    if (it == r.computeCapability.end()) {
        int major = 0;
        int minor = 0;
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) !=
                cudaSuccess ||
            cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) !=
                cudaSuccess) {
            (void)cudaGetLastError();
            major = minor = 0;
        }
        it = r.computeCapability.emplace(device, std::make_pair(major, minor)).first;
    }
    return it->second;
}

/// Loads a compiled binary into the entry: Ready, or Failed with the reason.
void jitLoad(JitEntry& e, const jit::Binary& b, const char* origin) {
    if (!b.ok) {
        e.state = JitEntry::State::Failed;
        e.error = b.error;
        return;
    }
    e.loaded = jit::load(b);
    e.loadMs += e.loaded.loadMs;
    if (!e.loaded.ok) {
        e.state = JitEntry::State::Failed;
        e.error = e.loaded.error;
        return;
    }
    if (e.loaded.poolBytes < e.request.poolBytes) {
        e.state = JitEntry::State::Failed;
        e.error = "the module's constant pool has " + std::to_string(e.loaded.poolBytes) +
                  " bytes, the translation unit's " + std::to_string(e.request.poolBytes);
        return;
    }
    e.state = JitEntry::State::Ready;
    e.origin = origin;
}

/// Compiles in a background thread (the runtime's lock is not held there); the entry becomes
/// Ready at the first launch that finds the job done.
void jitStartBackground(Runtime& r, JitEntry& e) {
    auto job = std::make_shared<JitJob>();
    e.job = job;
    e.state = JitEntry::State::Pending;
    e.background = true;
    static const bool waitsAtExit = [&] {
        // A compilation still running at exit would run inside libnvrtc while it is torn down,
        // so exit waits for them (waitJitThreads). Exit handlers run in reverse order of
        // registration, and NVRTC registers the teardown of its internal state during its
        // first compilation: registered before that, the wait ran after the teardown, and a
        // compilation still in flight crashed in nvrtcCompileProgram (SIGSEGV at the exit of
        // hydro_force in the 2026-11-25 evaluations, from the cores). So a small compilation
        // on this thread comes first.
        (void)jit::compile(jit::warmUpRequest(e.request));
        std::atexit(waitJitThreads);
        return true;
    }();
    (void)waitsAtExit;
    JitThreads& t = jitThreads();
    {
        std::lock_guard<std::mutex> g(t.mu);
        ++t.running;
    }
    std::thread([job, request = e.request, key = e.key, dir = r.jitCacheDir] {
        jit::Binary b = jit::compile(request);
        std::string cacheError;
        if (!dir.empty() && (b.ok || b.cacheable)) {
            (void)jit::writeCache(dir, key, request.nameExpression, b, &cacheError);
        }
        {
            std::lock_guard<std::mutex> g(job->mu);
            job->binary = std::move(b);
            job->cacheError = std::move(cacheError);
            job->done = true;
        }
        JitThreads& tt = jitThreads();
        std::lock_guard<std::mutex> g(tt.mu);
        --tt.running;
        tt.cv.notify_all();
    }).detach();
}

/// The just-in-time instantiation of `placed` (after fallbacks) for a launch on `device`. New
/// entries look in the disk cache first; `compile` starts a compilation when there is none
/// (synchronously with setJitSynchronous, else in the background).
JitEntry& jitFor(Runtime& r, const KernelView& kv, const LaunchArgs& la, int device,
                 const Placement& placed, bool compile) {
    std::vector<std::string> accessors;
    for (int j = 0; j < kv.numArrays; ++j) {
        accessors.push_back(jit::accessorName(placed[static_cast<std::size_t>(j)],
                                              kv.arrays[j].dims, kv.jitTypes[j]));
    }
    std::string name = jit::nameExpression(kv.jitKernel, accessors);
    JitKey key{device, kv.jitSource, name};
    auto it = r.jit.find(key);
    if (it == r.jit.end()) {
        JitEntry e;
        e.request.source = kv.jitSource;
        e.request.nameExpression = std::move(name);
        std::tie(e.request.ccMajor, e.request.ccMinor) = computeCapabilityOf(r, device);
        e.request.poolBytes = la.poolBytes;
        if (kv.jitOptions != nullptr && *kv.jitOptions != '\0') {
            e.request.extra.emplace_back(kv.jitOptions);
        }
        e.request.extra.insert(e.request.extra.end(), r.jitExtraOptions.begin(),
                               r.jitExtraOptions.end());
        for (int k = 0; k < kv.jitConstantCount; ++k) {
            e.request.constants.emplace_back(kv.jitConstants[k]);
        }
        const std::vector<std::string> options =
            jit::compileOptions(e.request, jit::nvrtcArchitectures(), nullptr);
        if (options.empty()) {
            e.state = JitEntry::State::Failed;
            e.error = "NVRTC " + jit::nvrtcVersion() +
                      " compiles for no architecture at or "
                      "below the device's sm_" +
                      std::to_string(e.request.ccMajor) + std::to_string(e.request.ccMinor);
        } else {
            e.key = jit::cacheKey(e.request, options, jit::nvrtcVersion());
            const auto t0 = std::chrono::steady_clock::now();
            const jit::CacheRead c = jit::readCache(r.jitCacheDir, e.key, e.request.nameExpression);
            e.loadMs =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count();
            if (c.status == jit::CacheRead::Status::Corrupt) {
                warnOnce(r, std::string(kv.name) + ": JIT cache entry ignored (" + c.why +
                                "); compiling anew");
            } else if (c.status == jit::CacheRead::Status::Hit) {
                jitLoad(e, c.binary, "cached");
                if (!c.binary.ok) {
                    e.error = "NVRTC failed (cached in " + r.jitCacheDir + "): " + e.error;
                }
            }
        }
        it = r.jit.emplace(std::move(key), std::move(e)).first;
    }
    JitEntry& e = it->second;
    if (e.state == JitEntry::State::Absent && compile) {
        if (r.jitSync) {
            jit::Binary b = jit::compile(e.request);
            e.compileMs = b.compileMs;
            std::string cacheError;
            if (!r.jitCacheDir.empty() && (b.ok || b.cacheable) &&
                !jit::writeCache(r.jitCacheDir, e.key, e.request.nameExpression, b, &cacheError)) {
                warnOnce(r, "JIT cache not written: " + cacheError);
            }
            jitLoad(e, b, "compiled");
        } else {
            jitStartBackground(r, e);
        }
    }
    if (e.state == JitEntry::State::Pending) {
        std::shared_ptr<JitJob> job = e.job;
        std::unique_lock<std::mutex> g(job->mu);
        if (job->done) {
            const jit::Binary b = std::move(job->binary);
            const std::string cacheError = job->cacheError;
            g.unlock();
            e.job.reset();
            e.compileMs = b.compileMs;
            if (!cacheError.empty()) {
                warnOnce(r, "JIT cache not written: " + cacheError);
            }
            jitLoad(e, b, "compiled");
        }
    }
    if (e.state == JitEntry::State::Ready && e.sources.size() != e.request.constants.size()) {
        // Where the program keeps the __constant__ variables the module copies.
        for (int k = 0; k < kv.jitConstantCount && e.state == JitEntry::State::Ready; ++k) {
            void* address = nullptr;
            std::size_t bytes = 0;
            if (cudaGetSymbolAddress(&address, kv.jitConstantShadows[k]) != cudaSuccess ||
                cudaGetSymbolSize(&bytes, kv.jitConstantShadows[k]) != cudaSuccess) {
                (void)cudaGetLastError();
                e.state = JitEntry::State::Failed;
                e.error =
                    std::string("cannot find the program's __constant__ ") + kv.jitConstants[k];
            } else if (k >= static_cast<int>(e.loaded.constants.size()) ||
                       e.loaded.constants[k].second != bytes) {
                e.state = JitEntry::State::Failed;
                e.error = std::string("the module's copy of ") + kv.jitConstants[k] +
                          " differs in size from the program's";
            } else {
                e.sources.emplace_back(address, bytes);
            }
        }
    }
    if (e.state == JitEntry::State::Failed) {
        warnOnce(r, std::string(kv.name) + ": just-in-time instantiation " +
                        e.request.nameExpression +
                        " failed; the dynamic accessor serves it: " + e.error);
    }
    return e;
}

#endif // !MEMPLACE_EMU

} // namespace

/// The library's bookkeeping for one launch, from prepareLaunch to finishLaunch.
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

namespace {

#if defined(MEMPLACE_EMU)
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
#endif

/// The memory a launch writes, as far as it can be known: one buffer per distinct pointer of a
/// written array (to the end of its extent; `restore` when an array over it is read or it is not
/// write-only), then one per `__device__` variable the kernel writes by name. `why` gets the
/// first reason it cannot all be known (an unknown extent, a global whose memory was not found,
/// writes through unknown pointers); the buffers found until then are returned.
std::vector<WrittenBuffer> writtenBuffers(const LaunchInfo& info, std::string& why) {
    const int n = static_cast<int>(info.arrays.size());
    std::vector<WrittenBuffer> bufs;
    for (int j = 0; j < n; ++j) {
        const ArrayInfo& ai = info.arrays[static_cast<std::size_t>(j)];
        if (ai.ptr == nullptr) {
            continue;
        }
        auto it = std::find_if(bufs.begin(), bufs.end(),
                               [&](const WrittenBuffer& b) { return b.ptr == ai.ptr; });
        if (ai.mode == Mode::Read) {
            if (it != bufs.end()) {
                it->restore = true;
            }
            continue;
        }
        if (!ai.extentKnown || ai.extentBytes == 0) {
            why = "the extent of written array " + ai.name + " is unknown";
            break;
        }
        if (it == bufs.end()) {
            WrittenBuffer b;
            b.ptr = const_cast<void*>(ai.ptr);
            bufs.push_back(b);
            it = bufs.end() - 1;
        }
        it->bytes = std::max(it->bytes, ai.extentBytes);
        it->restore = it->restore || ai.mode != Mode::Write;
        it->names += (it->names.empty() ? "" : "/") + ai.name;
    }
    // The __device__ variables the kernel writes by name.
    for (const GlobalRange& g : info.globals) {
        if (!why.empty() || g.mode == Mode::Read) {
            continue;
        }
        if (!g.found || g.bytes == 0) {
            why = "the memory of the global " + g.name + ", which the kernel writes, was not found";
            break;
        }
        WrittenBuffer b;
        b.ptr = const_cast<void*>(g.ptr);
        b.bytes = g.bytes;
        b.restore = true;
        b.global = true;
        b.names = g.name;
        bufs.push_back(b);
    }
    if (why.empty() && !info.unknownWrites.empty()) {
        why = "the kernel writes through a pointer whose target is unknown (" + info.unknownWrites +
              "): its launches cannot be undone";
    }
    // Read arrays that alias a written one (listed before it) are read: restore.
    for (WrittenBuffer& b : bufs) {
        for (int j = 0; j < n; ++j) {
            const ArrayInfo& ai = info.arrays[static_cast<std::size_t>(j)];
            if (ai.ptr == b.ptr && ai.mode == Mode::Read) {
                b.restore = true;
            }
        }
    }
    return bufs;
}

/// Counts the 32-bit words (and tail bytes) where the device buffers a and b, `bytes` each,
/// differ into `diff`: on the device with the translation unit's compare kernel (SweepHooks::
/// compare; `counter`: a device word) when both are there, else on the host. Synchronises the
/// stream. On a CUDA error, `what` says which call failed.
cudaError_t countDifferences(cudaError_t (*compare)(const void*, const void*, std::size_t,
                                                    unsigned long long*, cudaStream_t),
                             unsigned long long* counter, const void* a, const void* b,
                             std::size_t bytes, cudaStream_t s, uint64_t& diff, std::string& what) {
    diff = 0;
    cudaError_t e = cudaSuccess;
    auto step = [&](cudaError_t result, const char* call) {
        if (e == cudaSuccess && result != cudaSuccess) {
            e = result;
            what = call;
        }
        return e == cudaSuccess;
    };
    if (compare != nullptr && counter != nullptr) {
        unsigned long long h = 0;
        (void)(step(cudaMemsetAsync(counter, 0, sizeof h, s), "cudaMemsetAsync(counter)") &&
               step(compare(a, b, bytes, counter, s), "compare") &&
               step(cudaMemcpyAsync(&h, counter, sizeof h, cudaMemcpyDeviceToHost, s),
                    "cudaMemcpyAsync(counter)") &&
               step(cudaStreamSynchronize(s), "cudaStreamSynchronize(compare)"));
        diff = h;
        return e;
    }
    std::vector<unsigned char> x(bytes);
    std::vector<unsigned char> y(bytes);
    if (step(cudaStreamSynchronize(s), "cudaStreamSynchronize(compare)") &&
        step(cudaMemcpy(x.data(), a, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy(compare)") &&
        step(cudaMemcpy(y.data(), b, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy(compare)")) {
        for (std::size_t i = 0; i < bytes; ++i) {
            diff += x[i] != y[i];
        }
    }
    return e;
}

/// Whether `e` is an error that leaves the context unusable (every later call fails).
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

/// Frees a shadow launch's scratch copies and counter.
void releaseShadow(LaunchState& st) {
    for (WrittenBuffer& b : st.shadowBuffers) {
        if (b.snapshot != nullptr) {
            (void)cudaFree(b.snapshot);
        }
        if (b.reference != nullptr) {
            (void)cudaFree(b.reference);
        }
    }
    st.shadowBuffers.clear();
    if (st.shadowCounter != nullptr) {
        (void)cudaFree(st.shadowCounter);
        st.shadowCounter = nullptr;
    }
    st.shadow = false;
}

/// The memory a shadow launch copies: the written arrays' buffers grown into regions that take
/// in every array overlapping them (another argument into the same allocation, the same buffer
/// passed twice), merged where they overlap, then the globals. Every array in a region is
/// pointed at the region's scratch copy at its own offset, so the traced run sees through each
/// pointer what the original sees, its own writes included.
std::vector<WrittenBuffer> shadowRegions(const LaunchInfo& info, std::vector<WrittenBuffer> bufs) {
    std::vector<WrittenBuffer> regions;
    std::vector<WrittenBuffer> globals;
    for (WrittenBuffer& b : bufs) {
        (b.global ? globals : regions).push_back(std::move(b));
    }
    auto lo = [](const WrittenBuffer& b) { return reinterpret_cast<std::uintptr_t>(b.ptr); };
    auto hi = [&](const WrittenBuffer& b) { return lo(b) + b.bytes; };
    auto join = [](std::string& names, const std::string& name) {
        if (("/" + names + "/").find("/" + name + "/") == std::string::npos) {
            names += (names.empty() ? "" : "/") + name;
        }
    };
    for (bool grown = true; grown;) {
        grown = false;
        for (const ArrayInfo& a : info.arrays) {
            const auto alo = reinterpret_cast<std::uintptr_t>(a.ptr);
            const std::uintptr_t ahi = alo + (a.extentKnown ? a.extentBytes : 1);
            for (WrittenBuffer& r : regions) {
                if (a.ptr != nullptr && alo < hi(r) && lo(r) < ahi &&
                    (alo < lo(r) || ahi > hi(r))) {
                    const std::uintptr_t h = std::max(hi(r), ahi);
                    r.ptr = reinterpret_cast<void*>(std::min(lo(r), alo));
                    r.bytes = h - lo(r);
                    join(r.names, a.name);
                    grown = true;
                }
            }
        }
        for (std::size_t i = 0; i < regions.size(); ++i) {
            for (std::size_t k = i + 1; k < regions.size(); ++k) {
                if (lo(regions[k]) < hi(regions[i]) && lo(regions[i]) < hi(regions[k])) {
                    const std::uintptr_t h = std::max(hi(regions[i]), hi(regions[k]));
                    regions[i].ptr =
                        reinterpret_cast<void*>(std::min(lo(regions[i]), lo(regions[k])));
                    regions[i].bytes = h - lo(regions[i]);
                    join(regions[i].names, regions[k].names);
                    regions.erase(regions.begin() + static_cast<std::ptrdiff_t>(k));
                    grown = true;
                    break;
                }
            }
        }
    }
    for (WrittenBuffer& g : globals) {
        regions.push_back(std::move(g));
    }
    return regions;
}

/// Why this launch cannot be shadowed (TraceOptions::Shadow), or empty: every buffer it writes
/// is known (writtenBuffers), no array overlaps a global the kernel writes by name (the traced
/// run writes the global itself, the array would read its scratch copy), and the copies fit the
/// limit.
std::string shadowObstacle(const LaunchInfo& info, const std::vector<WrittenBuffer>& bufs,
                           const std::string& unknown, const TraceOptions& opt) {
    if (!unknown.empty()) {
        return unknown;
    }
    for (std::size_t j = 0; j < info.arrays.size(); ++j) {
        const ArrayInfo& a = info.arrays[j];
        const auto lo = reinterpret_cast<std::uintptr_t>(a.ptr);
        const std::uintptr_t hi = lo + (a.extentKnown ? a.extentBytes : 1);
        for (const WrittenBuffer& b : bufs) {
            const auto blo = reinterpret_cast<std::uintptr_t>(b.ptr);
            if (b.global && a.ptr != nullptr && lo < blo + b.bytes && blo < hi) {
                return "the array " + a.name + " may share memory with the global " + b.names +
                       ", which the kernel writes by name";
            }
        }
    }
    std::size_t bytes = 0;
    for (const WrittenBuffer& b : bufs) {
        bytes += b.global ? 2 * b.bytes : b.bytes; // a global: its snapshot and the traced copy
    }
    std::size_t freeBytes = 0;
    std::size_t totalBytes = 0;
    const bool known = cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess;
    if (!known) {
        (void)cudaGetLastError();
    }
    if (bytes > opt.shadowMaxBytes || (known && bytes > freeBytes / 2)) {
        return "its scratch copies would take " + std::to_string(bytes) + " bytes (the limit: " +
               std::to_string(known ? std::min(opt.shadowMaxBytes, freeBytes / 2)
                                    : opt.shadowMaxBytes) +
               ")";
    }
    return {};
}

/// Sets up a shadow launch: copies each buffer the kernel writes (arrays into scratch copies
/// the tracing instantiation will write instead, globals into snapshots restored after it) on
/// the launch's stream. Empty when done, else why not (nothing is left allocated).
std::string prepareShadow(const KernelView& kv, const LaunchArgs& la, LaunchState& st,
                          const TraceOptions& opt) {
    std::string unknown;
    std::vector<WrittenBuffer> bufs = shadowRegions(st.info, writtenBuffers(st.info, unknown));
    if (std::string why = shadowObstacle(st.info, bufs, unknown, opt); !why.empty()) {
        return why;
    }
    st.shadowBuffers = std::move(bufs);
    st.shadow = true;
    std::string failed;
    auto ok = [&](cudaError_t e, const std::string& what) {
        if (e != cudaSuccess && failed.empty()) {
            (void)cudaGetLastError();
            failed = what + ": " + cudaMessage(e);
        }
        return failed.empty();
    };
    for (WrittenBuffer& b : st.shadowBuffers) {
        if (ok(cudaMalloc(&b.snapshot, b.bytes), "cudaMalloc(scratch copy of " + b.names + ")") &&
            (!b.global ||
             ok(cudaMalloc(&b.reference, b.bytes), "cudaMalloc(copy of " + b.names + ")"))) {
            (void)ok(
                cudaMemcpyAsync(b.snapshot, b.ptr, b.bytes, cudaMemcpyDeviceToDevice, la.stream),
                "cudaMemcpyAsync(scratch copy of " + b.names + ")");
        }
    }
    if (kv.compare != nullptr) {
        (void)ok(cudaMalloc(&st.shadowCounter, sizeof(unsigned long long)),
                 "cudaMalloc(comparison counter)");
    }
    if (!failed.empty()) {
        releaseShadow(st);
    }
    return failed;
}

/// After a shadow launch's traced run: compares each buffer the tracing instantiation wrote (its
/// scratch copy, or a global's copy) with what the original instantiation wrote, into the trace.
/// A comparison that fails counts as a difference (it cannot say the outputs agree).
void compareShadow(const KernelView& kv, const LaunchArgs& la, LaunchState& st, TraceResult& tr) {
    for (const WrittenBuffer& b : st.shadowBuffers) {
        uint64_t diff = 0;
        std::string what;
        const void* traced = b.global ? b.reference : b.snapshot;
        const cudaError_t e = countDifferences(kv.compare, st.shadowCounter, b.ptr, traced, b.bytes,
                                               la.stream, diff, what);
        std::string item;
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            item = b.names + " (not compared: " + what + ": " + cudaMessage(e) + ")";
            st.report.errors.push_back("comparing the shadow launch's " + item);
        } else if (diff != 0) {
            item = b.names + " (" + std::to_string(diff) + " words)";
        }
        if (!item.empty()) {
            tr.outputsDiffer = true;
            tr.differing += (tr.differing.empty() ? "" : ", ") + item;
        }
    }
}

/// Prepares a traced launch: every array global, the trace buffer and the sample bitmap.
bool prepareTracing(Runtime& r, const KernelView& kv, const LaunchArgs& la, LaunchPlan& plan,
                    LaunchState& st, const TraceOptions& opt) {
    LaunchReport& rep = st.report;
    if (kv.tracingFn == nullptr) {
        rep.errors.emplace_back("tracing requested, but this translation unit was built with "
                                "MEMPLACE_NO_TRACING");
        return false;
    }
    const unsigned long long blocks =
        static_cast<unsigned long long>(la.grid.x) * la.grid.y * la.grid.z;
    if (blocks > 0xffffffffull) {
        rep.errors.emplace_back("tracing: more than 2^32 blocks");
        return false;
    }
    if (opt.shadow != TraceOptions::Shadow::Off) {
        std::string why = prepareShadow(kv, la, st, opt);
        if (!why.empty() && opt.shadow == TraceOptions::Shadow::Require) {
            rep.notShadowed = why;
            return false;
        }
    }
    const std::size_t cap = std::max<std::size_t>(opt.maxRecords, 1);
    const std::size_t bytes = sizeof(TraceBufferHeader) + cap * sizeof(TraceRecord);
    if (r.traceBuf == nullptr || r.traceBufBytes < bytes || r.traceBufDevice != st.device) {
        if (r.traceBuf != nullptr) {
            (void)cudaFree(r.traceBuf);
            r.traceBuf = nullptr;
            r.traceBufBytes = 0;
        }
        if (!check(cudaMalloc(&r.traceBuf, bytes), "cudaMalloc(trace buffer)", rep)) {
            r.traceBuf = nullptr;
            return false;
        }
        r.traceBufBytes = bytes;
        r.traceBufDevice = st.device;
    }
    TraceBufferHeader h{0, cap};
    if (!check(cudaMemcpyAsync(r.traceBuf, &h, sizeof h, cudaMemcpyHostToDevice, la.stream),
               "cudaMemcpyAsync(trace header)", rep)) {
        return false;
    }
    plan.sink.header = static_cast<TraceBufferHeader*>(r.traceBuf);
    plan.sink.records =
        reinterpret_cast<TraceRecord*>(static_cast<char*>(r.traceBuf) + sizeof(TraceBufferHeader));
    plan.sink.capacity = cap;
    plan.sink.sampledBlocks = nullptr;
    st.sampled.clear();
    if (!opt.blocks.empty() || opt.sampleEvery > 1) {
        std::vector<unsigned> bitmap((blocks + 31) / 32, 0u);
        auto set = [&](unsigned long long b) {
            bitmap[b >> 5] |= 1u << (b & 31u);
            st.sampled.push_back(static_cast<uint32_t>(b));
        };
        if (!opt.blocks.empty()) {
            std::vector<uint32_t> sorted = opt.blocks;
            std::sort(sorted.begin(), sorted.end());
            sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
            for (uint32_t b : sorted) {
                if (b < blocks) {
                    set(b);
                }
            }
        } else {
            for (unsigned long long b = 0; b < blocks; b += opt.sampleEvery) {
                set(b);
            }
        }
        const std::size_t bb = std::max<std::size_t>(bitmap.size(), 1) * sizeof(unsigned);
        if (r.bitmapBuf == nullptr || r.bitmapBytes < bb || r.bitmapDevice != st.device) {
            if (r.bitmapBuf != nullptr) {
                (void)cudaFree(r.bitmapBuf);
                r.bitmapBuf = nullptr;
                r.bitmapBytes = 0;
            }
            if (!check(cudaMalloc(reinterpret_cast<void**>(&r.bitmapBuf), bb),
                       "cudaMalloc(trace sample bitmap)", rep)) {
                r.bitmapBuf = nullptr;
                return false;
            }
            r.bitmapBytes = bb;
            r.bitmapDevice = st.device;
        }
        if (!bitmap.empty() &&
            !check(cudaMemcpyAsync(r.bitmapBuf, bitmap.data(), bitmap.size() * sizeof(unsigned),
                                   cudaMemcpyHostToDevice, la.stream),
                   "cudaMemcpyAsync(trace sample bitmap)", rep)) {
            return false;
        }
        plan.sink.sampledBlocks = r.bitmapBuf;
    }
    st.traceCapacity = cap;
    st.tracing = true;
    plan.instantiation = LaunchPlan::kTracing;
#if defined(MEMPLACE_EMU)
    emu::profileNextLaunch(st.sampled); // MEMPLACE_PROFILE=active profiles it (emu/)
#endif
    plan.sharedBytes = la.sharedBytes;
    for (int j = 0; j < kv.numArrays; ++j) {
        plan.handles[j] = ArrayHandle{};
        plan.handles[j].ptr = const_cast<void*>(la.ptrs[j]);
        rep.arrays[j].requested = Place::Global;
        rep.arrays[j].placed = Place::Global;
        rep.arrays[j].source = "trace";
        // A shadow launch: the tracing instantiation runs on the scratch copies.
        const auto p = reinterpret_cast<std::uintptr_t>(la.ptrs[j]);
        for (const WrittenBuffer& b : st.shadowBuffers) {
            const auto lo = reinterpret_cast<std::uintptr_t>(b.ptr);
            if (!b.global && la.ptrs[j] != nullptr && p >= lo && p < lo + b.bytes) {
                plan.handles[j].ptr = static_cast<char*>(b.snapshot) + (p - lo);
            }
        }
    }
    plan.shadow = st.shadow;
    rep.dispatch = "tracing";
    rep.instantiation = -1;
    rep.sharedBytesTotal = la.sharedBytes;
    return true;
}

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

/// Creates (or finds) the 1-D texture of array j.
bool materialiseTexture1D(Runtime& r, DeviceAttrs& a, const ArrayInfo& ai, ArrayHandle& h,
                          LaunchState& st, std::string& why) {
    LaunchReport& rep = st.report;
    auto mit = a.max1D.find(ai.elemSize);
    std::size_t maxTexels = 0;
    if (mit == a.max1D.end()) {
        cudaChannelFormatDesc fmt = rawFormat(ai.elemSize);
        if (!check(cudaDeviceGetTexture1DLinearMaxWidth(&maxTexels, &fmt, st.device),
                   "cudaDeviceGetTexture1DLinearMaxWidth", rep)) {
            why = "cannot query the 1-D linear texture limit";
            return false;
        }
        a.max1D[ai.elemSize] = maxTexels;
    } else {
        maxTexels = mit->second;
    }
    const Linear1D g = linearTexture(reinterpret_cast<std::uintptr_t>(ai.ptr), ai.extentBytes,
                                     ai.elemSize, static_cast<std::size_t>(a.texAlign), maxTexels);
    if (!g.ok) {
        why = g.why;
        return false;
    }
    const TexKey key{st.device, g.base, g.bytes, ai.elemSize, 0, 0, false};
    auto it = r.textures.find(key);
    if (it == r.textures.end()) {
        cudaResourceDesc rd{};
        rd.resType = cudaResourceTypeLinear;
        rd.res.linear.devPtr = reinterpret_cast<void*>(g.base); // NOLINT(performance-no-int-to-ptr)
        rd.res.linear.desc = rawFormat(ai.elemSize);
        rd.res.linear.sizeInBytes = g.bytes;
        const cudaTextureDesc td = pointTextureDesc();
        TexEntry e;
        if (!check(cudaCreateTextureObject(&e.tex, &rd, &td, nullptr),
                   "cudaCreateTextureObject(" + ai.name + ", 1-D)", rep)) {
            why = "cudaCreateTextureObject failed";
            return false;
        }
        it = r.textures.emplace(key, e).first;
    }
    h.tex = it->second.tex;
    h.texOffset = g.offsetElems;
    h.width = FastDiv{};
    return true;
}

/// Whether a texture can hold the array: a 2-D one (known extent and row length) only within
/// the device's 2-D linear texture limits, else materialiseTexture2D falls back to global (a
/// 4-row table of 4M-element rows, cfd's neighbour list, is 2-D and far wider). A policy that
/// asked for it anyway would waste the launch (the Placer's tuning dropped such candidates).
bool texture2DFits(const DeviceAttrs& a, const ArrayInfo& ai) {
    if (ai.dims != 2 || ai.width <= 0 || !ai.extentKnown) {
        return true;
    }
    return pitchedTexture(
               reinterpret_cast<std::uintptr_t>(ai.ptr), ai.extentBytes, ai.elemSize, ai.width,
               static_cast<std::size_t>(a.texAlign), static_cast<std::size_t>(a.pitchAlign),
               static_cast<std::size_t>(a.max2DWidth), static_cast<std::size_t>(a.max2DHeight),
               static_cast<std::size_t>(a.max2DPitch))
        .ok;
}

/// Creates (or finds) the 2-D pitched texture of array j, copying it into a pitched buffer when
/// its rows are not pitch-aligned.
bool materialiseTexture2D(Runtime& r, DeviceAttrs& a, const ArrayInfo& ai, ArrayHandle& h,
                          LaunchState& st, cudaStream_t stream, std::size_t& moved,
                          std::string& why) {
    LaunchReport& rep = st.report;
    const Pitched2D g = pitchedTexture(
        reinterpret_cast<std::uintptr_t>(ai.ptr), ai.extentBytes, ai.elemSize, ai.width,
        static_cast<std::size_t>(a.texAlign), static_cast<std::size_t>(a.pitchAlign),
        static_cast<std::size_t>(a.max2DWidth), static_cast<std::size_t>(a.max2DHeight),
        static_cast<std::size_t>(a.max2DPitch));
    if (!g.ok) {
        why = g.why;
        return false;
    }
    const auto base = reinterpret_cast<std::uintptr_t>(ai.ptr);
    const TexKey key{st.device, base, ai.extentBytes, ai.elemSize, g.width, g.height, g.copy};
    auto it = r.textures.find(key);
    if (it == r.textures.end()) {
        TexEntry e;
        void* data = const_cast<void*>(ai.ptr);
        std::size_t pitch = g.rowBytes;
        if (g.copy) {
            if (!check(cudaMallocPitch(&e.pitched, &e.pitch, g.rowBytes, g.height),
                       "cudaMallocPitch(" + ai.name + ")", rep)) {
                why = "cudaMallocPitch failed";
                return false;
            }
            if (e.pitch % static_cast<std::size_t>(std::max(a.pitchAlign, 1)) != 0 ||
                e.pitch > static_cast<std::size_t>(a.max2DPitch)) {
                (void)cudaFree(e.pitched);
                why = "cudaMallocPitch gave a pitch the texture unit does not accept";
                return false;
            }
            if (!check(cudaEventCreateWithFlags(&e.lastUse, cudaEventDisableTiming),
                       "cudaEventCreate", rep)) {
                (void)cudaFree(e.pitched);
                why = "cudaEventCreate failed";
                return false;
            }
            data = e.pitched;
            pitch = e.pitch;
        }
        cudaResourceDesc rd{};
        rd.resType = cudaResourceTypePitch2D;
        rd.res.pitch2D.devPtr = data;
        rd.res.pitch2D.desc = rawFormat(ai.elemSize);
        rd.res.pitch2D.width = g.width;
        rd.res.pitch2D.height = g.height;
        rd.res.pitch2D.pitchInBytes = pitch;
        const cudaTextureDesc td = pointTextureDesc();
        if (!check(cudaCreateTextureObject(&e.tex, &rd, &td, nullptr),
                   "cudaCreateTextureObject(" + ai.name + ", 2-D)", rep)) {
            if (e.pitched != nullptr) {
                (void)cudaFree(e.pitched);
                (void)cudaEventDestroy(e.lastUse);
            }
            why = "cudaCreateTextureObject failed";
            return false;
        }
        it = r.textures.emplace(key, e).first;
    }
    TexEntry& e = it->second;
    if (e.pitched != nullptr) {
        // The copy is refreshed on every launch: the program may have changed the array.
        if (e.used && !check(cudaStreamWaitEvent(stream, e.lastUse, 0),
                             "cudaStreamWaitEvent(pitched copy)", rep)) {
            why = "cannot order the pitched copy after its last reader";
            return false;
        }
        if (g.fullRows > 0 &&
            !check(cudaMemcpy2DAsync(e.pitched, e.pitch, ai.ptr, g.rowBytes, g.rowBytes, g.fullRows,
                                     cudaMemcpyDeviceToDevice, stream),
                   "cudaMemcpy2DAsync(" + ai.name + ")", rep)) {
            why = "the pitched copy failed";
            return false;
        }
        if (g.tailElems > 0 &&
            !check(cudaMemcpyAsync(static_cast<char*>(e.pitched) + g.fullRows * e.pitch,
                                   static_cast<const char*>(ai.ptr) + g.fullRows * g.rowBytes,
                                   g.tailElems * ai.elemSize, cudaMemcpyDeviceToDevice, stream),
                   "cudaMemcpyAsync(" + ai.name + " last row)", rep)) {
            why = "the pitched copy failed";
            return false;
        }
        moved += g.fullRows * g.rowBytes + g.tailElems * ai.elemSize;
        st.copiedTextures.push_back(&e);
    }
    h.tex = e.tex;
    h.texOffset = 0;
    h.width = FastDiv::make(static_cast<uint32_t>(g.width));
    return true;
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

void prepareLaunch(const KernelView& kv, const LaunchArgs& la, LaunchPlan& plan) {
    Runtime& r = rt();
    auto st = std::make_shared<LaunchState>();
    st->lock = std::unique_lock<std::mutex>(r.mu);
    st->t0 = std::chrono::steady_clock::now();
    plan.state = st;
    loadEnv(r);
    LaunchReport& rep = st->report;
    const int n = kv.numArrays;
    plan.handles.assign(static_cast<std::size_t>(n), ArrayHandle{});
    plan.instantiation = 0;
    plan.sharedBytes = la.sharedBytes;
    rep.kernel = kv.name;
    rep.grid = la.grid;
    rep.block = la.block;
    rep.sharedBytesOriginal = la.sharedBytes;
    rep.sharedBytesTotal = la.sharedBytes;
    rep.dispatch = "specialized";
    rep.instantiation = 0;
    rep.arrays.resize(static_cast<std::size_t>(n));

    if (!check(cudaGetDevice(&st->device), "cudaGetDevice", rep)) {
        st->device = 0;
    }
    rep.launchId = ++r.launches;
    const SweepCurrent* sweep = tlsSweep;
    st->sweepLaunch = sweep != nullptr;
    // Kernel timing: the first event right before the first stream work of this launch (a
    // pitched copy, a constant upload, the trace buffer) or the kernel, so that the host-only
    // work before it (the persisting L2 limit, stream attributes, which may wait for the
    // device) is not in the interval. startTiming says whether to time; beginTiming records.
    bool timingWanted = false;
    bool timingBegun = false;
    double timingSpinUs = 0; // the busy-wait the policy asked for (Decision::spinUs)
    auto startTiming = [&](bool asked, double spinUs) {
        timingWanted = !st->sweepLaunch && (timingOn() || asked);
        timingSpinUs = asked ? spinUs : 0;
    };
    auto beginTiming = [&] {
        if (!timingWanted || timingBegun) {
            return;
        }
        timingBegun = true;
        if (takeEvents(st->device, st->ev)) {
            if (timingSpinUs > 0 && kv.spin != nullptr &&
                kv.spin(static_cast<long long>(timingSpinUs * 1000.0), la.stream) != cudaSuccess) {
                (void)cudaGetLastError(); // timed anyway, as without the busy-wait
            }
            if (cudaEventRecord(st->ev[0], la.stream) == cudaSuccess) {
                st->timed = true;
            } else {
                (void)cudaGetLastError();
                giveEvents(st->device, st->ev);
            }
        }
    };
    // The second, right before the kernel (every return below goes through it).
    auto markKernelStart = [&] {
        beginTiming();
        if (st->timed && cudaEventRecord(st->ev[1], la.stream) != cudaSuccess) {
            (void)cudaGetLastError();
            st->timed = false;
            giveEvents(st->device, st->ev);
        }
        rep.timed = st->timed;
    };

    // What the runtime knows about the arrays.
    LaunchInfo& info = st->info;
    info.kernel = kv.name;
    info.grid = la.grid;
    info.block = la.block;
    info.sharedBytes = la.sharedBytes;
    info.stream = la.stream;
    info.device = st->device;
    info.constantPoolBytes = la.poolBytes;
    info.launchId = rep.launchId;
    info.arrays.resize(static_cast<std::size_t>(n));
    DeviceAttrs& attrs = deviceAttrs(r, st->device, rep);
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
        ai.textureFeasible = kv.textureFeasible[j] && texture2DFits(attrs, ai);
        ArrayReport& ar = rep.arrays[j];
        ar.name = d.name;
        ar.extentBytes = ai.extentBytes;
        ar.extentKnown = ai.extentKnown;
        ar.source = "default";
        plan.handles[j].ptr = const_cast<void*>(la.ptrs[j]);
    }
    fillAliasing(r, kv, st->device, info);
    info.compiled.resize(static_cast<std::size_t>(kv.numCompiled));
    for (int c = 0; c < kv.numCompiled; ++c) {
        info.compiled[c].assign(kv.compiled + static_cast<std::ptrdiff_t>(c) * n,
                                kv.compiled + static_cast<std::ptrdiff_t>(c + 1) * n);
    }

    const bool off = r.env.mode == EnvConfig::Mode::Off;
    const bool forcedDynamic = r.envDynamic || r.apiDispatch == DispatchMode::Dynamic;
    // Just-in-time instantiation: possible for this kernel here?
#if defined(MEMPLACE_EMU)
    info.jitUnavailable = "the CPU emulation layer has no NVRTC";
#else
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
#endif
    Decision decision;
    if (!off && r.policy && !st->sweepLaunch) {
#if !defined(MEMPLACE_EMU) // the emulation layer knows neither registers nor static shared memory
        auto fa = r.funcAttrs.find({st->device, kv.compiledFns[0]});
        if (fa == r.funcAttrs.end()) {
            cudaFuncAttributes attr{};
            std::pair<int, std::size_t> v{0, 0};
            if (check(cudaFuncGetAttributes(&attr, kv.compiledFns[0]), "cudaFuncGetAttributes",
                      rep)) {
                v = {attr.numRegs, attr.sharedSizeBytes};
            }
            fa = r.funcAttrs.emplace(std::make_pair(st->device, kv.compiledFns[0]), v).first;
        }
        info.registers = fa->second.first;
        info.staticSharedBytes = fa->second.second;
#endif
        decision = r.policy->decide(info);
    }
    if (decision.kind == Decision::Kind::Sweep) {
        if (tlsJustSwept || !decision.sweep || decision.sweep->entries.empty() ||
            r.traceRemaining > 0) {
            if (tlsJustSwept) {
                warnOnce(r, std::string(kv.name) +
                                ": the policy asked for a second sweep of one launch; ignored");
            }
            decision = Decision{};
        } else {
            // Nothing is materialised: the template runs the sweep, then prepares again.
            plan.sweep = std::make_shared<SweepState>();
            plan.sweep->request = decision.sweep;
            plan.sweep->info = info;
            plan.instantiation = LaunchPlan::kSweep;
            plan.state.reset(); // releases the lock
            return;
        }
    }
    if (!st->sweepLaunch) {
        tlsJustSwept = false;
    }
    startTiming(decision.time, decision.spinUs);

    // Tracing: asked by the program (traceLaunches) or by the policy.
    if (!off && !st->sweepLaunch &&
        (r.traceRemaining > 0 || decision.kind == Decision::Kind::Trace)) {
        const bool byPolicy = r.traceRemaining <= 0;
        const TraceOptions opt = byPolicy ? decision.trace : r.traceOptions;
        if (r.traceRemaining > 0) {
            --r.traceRemaining;
        }
        beginTiming(); // the trace buffer's setup is stream work
        if (prepareTracing(r, kv, la, plan, *st, opt)) {
            st->policyTrace = byPolicy;
            markKernelStart();
            const auto t1 = std::chrono::steady_clock::now();
            rep.hostMicros = std::chrono::duration<double, std::micro>(t1 - st->t0).count();
            return;
        }
        releaseShadow(*st);
        for (const std::string& e : rep.errors) {
            warnOnce(r, std::string(kv.name) + ": tracing failed, launching untraced: " + e);
        }
        plan.instantiation = 0;
    }

    // The requested placement, array by array; by default, where the program keeps each array.
    Placement requested(static_cast<std::size_t>(n), Place::Global);
    std::string policyJitNote; // the policy's jitPlacement is not placed: why
    std::string policyJitDetail;
#if !defined(MEMPLACE_EMU)
    bool policyJitRequested = false; // the policy's jitPlacement is this launch's request
#endif
    for (int j = 0; j < n; ++j) {
        requested[j] = kv.arrays[j].original;
    }
    if (st->sweepLaunch) {
        // A sweep's launch: its placement, whatever the controls say.
        for (int j = 0; j < n && j < static_cast<int>(sweep->placement->size()); ++j) {
            requested[j] = (*sweep->placement)[j];
            rep.arrays[j].source = "sweep";
        }
    } else if (!off) {
        const bool policyPlaces = decision.kind == Decision::Kind::Place;
        if (policyPlaces && decision.placement.size() != static_cast<std::size_t>(n)) {
            warnOnce(r, std::string(kv.name) + ": the policy's placement has " +
                            std::to_string(decision.placement.size()) + " places for " +
                            std::to_string(n) + " arrays; ignored");
        }
        const bool usePolicy =
            policyPlaces && decision.placement.size() == static_cast<std::size_t>(n);
        // The policy's placement to compile just in time: placed instead once it is ready.
        const Placement* policyPlacement = &decision.placement;
#if !defined(MEMPLACE_EMU)
        if (usePolicy && decision.jitPlacement.size() == static_cast<std::size_t>(n)) {
            if (!info.jitAvailable) {
                policyJitNote = "unavailable";
                policyJitDetail = info.jitUnavailable;
            } else {
                JitEntry& e = jitFor(r, kv, la, st->device, decision.jitPlacement, true);
                if (e.state == JitEntry::State::Ready) {
                    policyPlacement = &decision.jitPlacement;
                    policyJitRequested = true;
                } else if (e.state == JitEntry::State::Pending) {
                    policyJitNote = "pending";
                    policyJitDetail =
                        "compiling " + e.request.nameExpression + " in the background";
                } else {
                    policyJitNote = "failed";
                    policyJitDetail = e.error;
                }
            }
        }
#endif
        const std::vector<std::pair<std::string, Place>>* api = nullptr;
        for (const char* key : {kv.name, "", "*"}) {
            auto it = r.apiPlacements.find(key);
            if (it != r.apiPlacements.end() && api == nullptr) {
                api = &it->second;
            }
        }
        for (int j = 0; j < n; ++j) {
            ArrayReport& ar = rep.arrays[j];
            if (auto p = forcedPlace(r.env.force, kv.name, kv.arrays[j].name)) {
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

    std::vector<ConstantSlot> constantWanted;
    std::vector<SharedSlot> sharedWanted;
    std::vector<int> l2Wanted;

    auto fallback = [&](int j, const std::string& why) {
        rep.arrays[j].placed = Place::Global;
        rep.arrays[j].fallback = why;
        ArrayHandle& h = plan.handles[j];
        h = ArrayHandle{};
        h.ptr = const_cast<void*>(la.ptrs[j]);
    };

    for (int j = 0; j < n; ++j) {
        const ArrayDesc& d = kv.arrays[j];
        const ArrayInfo& ai = info.arrays[j];
        ArrayReport& ar = rep.arrays[j];
        ArrayHandle& h = plan.handles[j];
        const Place p = requested[j];
        ar.requested = p;
        ar.placed = p;
        h.place = p;
        if (p == Place::Global) {
            continue;
        }
        std::string why;
        if (p == Place::Registers) {
            why = "registers is not a place the runtime can materialise";
        } else if (!d.places.contains(p)) {
            why = std::string(placeName(p)) + " is not among the array's feasible places";
        } else if (d.mode != Mode::Read &&
                   (p == Place::ReadOnly || p == Place::Texture || p == Place::Constant)) {
            why = "the kernel writes this array";
        } else if (p == Place::Texture && !kv.textureFeasible[j]) {
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
            if (const std::string hazard = info.aliasHazard(static_cast<std::size_t>(j));
                !hazard.empty()) {
                why = std::string(placeName(p)) + ": " + hazard;
            }
        }
        if (!why.empty()) {
            fallback(j, why);
            continue;
        }
        switch (p) {
        case Place::ReadOnly:
            break;
        case Place::Texture: {
            bool ok = false;
            if (d.dims == 2) {
                std::size_t moved = 0;
                beginTiming(); // a pitched copy may be queued
                ok = materialiseTexture2D(r, attrs, ai, h, *st, la.stream, moved, why);
                ar.bytesMoved += moved;
            } else {
                ok = materialiseTexture1D(r, attrs, ai, h, *st, why);
            }
            if (!ok) {
                fallback(j, "texture: " + why);
            }
            break;
        }
        case Place::Constant: {
            ConstantSlot s;
            s.array = j;
            s.bytes = ai.extentBytes / ai.elemSize * ai.elemSize;
            constantWanted.push_back(s);
            break;
        }
        case Place::Shared: {
            SharedSlot s;
            s.array = j;
            s.count = static_cast<long long>(ai.extentBytes / ai.elemSize);
            s.elemSize = ai.elemSize;
            s.written = d.mode != Mode::Read;
            if (s.count == 0) {
                fallback(j, "shared: the array is empty");
            } else {
                sharedWanted.push_back(s);
            }
            break;
        }
        case Place::L2Persist:
            l2Wanted.push_back(j);
            break;
        default:
            break;
        }
    }

    // A launch without a persisting array after one with: the set-aside goes back to what the
    // program had, and lines still marked persisting become normal. Left raised, it costs every
    // later kernel of the program the L2 it takes (measured on an H100: docs/NOTES.md).
    if (l2Wanted.empty() && attrs.l2LimitSet && r.l2Limit != L2LimitPolicy::Keep) {
        (void)check(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache", rep);
        if (check(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, attrs.l2LimitBefore),
                  "cudaDeviceSetLimit(PersistingL2CacheSize, restore)", rep)) {
            attrs.l2LimitSet = false;
        }
    }

    // L2 persisting: one access-policy window per stream, so the arrays placed there share one
    // window spanning them all, as long as that span fits the device's maximum window (an array
    // larger than the maximum gets a window over its first maxWindow bytes).
    if (!l2Wanted.empty()) {
        std::string why;
        if (attrs.maxPersist <= 0 || attrs.maxWindow <= 0) {
            why = "l2persist: the device has no persisting L2 set-aside";
        }
        const auto maxWindow = static_cast<std::uintptr_t>(std::max(attrs.maxWindow, 0));
        std::uintptr_t lo = 0;
        std::uintptr_t hi = 0;
        std::vector<int> kept;
        for (int j : l2Wanted) {
            if (!why.empty()) {
                fallback(j, why);
                continue;
            }
            const auto b = reinterpret_cast<std::uintptr_t>(info.arrays[j].ptr);
            const std::uintptr_t e = b + info.arrays[j].extentBytes;
            if (kept.empty()) {
                lo = b;
                hi = std::min(e, b + maxWindow);
                kept.push_back(j);
                continue;
            }
            const std::uintptr_t nlo = std::min(lo, b);
            const std::uintptr_t nhi = std::max(hi, e);
            if (nhi - nlo > maxWindow) {
                fallback(j, "l2persist: one window per stream, and one spanning this array and " +
                                std::string(kv.arrays[kept.front()].name) +
                                " would exceed the "
                                "maximum window of " +
                                std::to_string(maxWindow) + " bytes");
                continue;
            }
            lo = nlo;
            hi = nhi;
            kept.push_back(j);
        }
        if (!kept.empty() && !setPersistingLimit(r, attrs, hi - lo, rep)) {
            why = "l2persist: cannot set the persisting L2 size";
            for (int j : kept) {
                fallback(j, why);
            }
            kept.clear();
        }
        if (!kept.empty()) {
            cudaStreamAttrValue old{};
            cudaStreamAttrValue v{};
            const std::size_t bytes = hi - lo;
            v.accessPolicyWindow.base_ptr =
                reinterpret_cast<void*>(lo); // NOLINT(performance-no-int-to-ptr)
            v.accessPolicyWindow.num_bytes = bytes;
            v.accessPolicyWindow.hitRatio =
                bytes == 0
                    ? 0.0f
                    : static_cast<float>(std::min(1.0, static_cast<double>(attrs.l2SetAside) /
                                                           static_cast<double>(bytes)));
            v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
            v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
            if (!check(
                    cudaStreamGetAttribute(la.stream, cudaStreamAttributeAccessPolicyWindow, &old),
                    "cudaStreamGetAttribute(AccessPolicyWindow)", rep)) {
                why = "l2persist: cannot read the stream's access-policy window";
            } else if (!check(cudaStreamSetAttribute(la.stream,
                                                     cudaStreamAttributeAccessPolicyWindow, &v),
                              "cudaStreamSetAttribute(AccessPolicyWindow)", rep)) {
                why = "l2persist: cannot set the stream's access-policy window";
            } else {
                st->l2Set = true;
                st->oldWindow = old;
            }
            for (int j : kept) {
                if (!why.empty()) {
                    fallback(j, why);
                }
            }
        }
    }

    // Constant pool: pack now (what does not fit falls back), upload once the instantiation is
    // chosen (a just-in-time module has a pool of its own).
    std::vector<ConstantSlot> packed;
    if (!constantWanted.empty()) {
        for (const ConstantSlot& s : packConstantPool(constantWanted, la.poolBytes)) {
            if (!s.fits) {
                fallback(s.array, "constant: " + std::to_string(s.bytes) +
                                      " bytes do not fit in what is left of the " +
                                      std::to_string(la.poolBytes) + "-byte pool");
            } else {
                packed.push_back(s);
            }
        }
    }

    // Shared memory: lay out after the program's own dynamic shared memory.
    std::size_t staticShared = 0;
    if (!sharedWanted.empty()) {
        cudaFuncAttributes fa{};
        if (check(cudaFuncGetAttributes(&fa, kv.compiledFns[0]), "cudaFuncGetAttributes", rep)) {
            staticShared = fa.sharedSizeBytes;
        }
    }
    const SharedLayout layout =
        layoutShared(la.sharedBytes, sharedWanted, staticShared,
                     static_cast<std::size_t>(std::max(attrs.optinShared, 0)));
    for (const SharedSlot& s : layout.dropped) {
        fallback(s.array, "shared: needs " + std::to_string(sharedFootprint(s)) +
                              " bytes; with the kernel's " + std::to_string(staticShared) +
                              " static and the other staged arrays it exceeds the " +
                              std::to_string(attrs.optinShared) + "-byte limit per block");
    }
    for (const SharedSlot& s : layout.slots) {
        ArrayHandle& h = plan.handles[s.array];
        h.count = s.count;
        h.sharedOffset = static_cast<unsigned>(s.offset);
        h.dirtyOffset = static_cast<unsigned>(s.dirtyOffset);
        h.copyIn = kv.arrays[s.array].mode == Mode::Write ? 0u : 1u;
    }
    plan.sharedBytes = layout.slots.empty() ? la.sharedBytes : layout.totalBytes;

    // The instantiation: the specialised one that matches; else a just-in-time one (when it
    // is compiled already, or the policy or MEMPLACE_JIT=always asks for it: docs/placer.md);
    // else the dynamic accessor.
#if !defined(MEMPLACE_EMU)
    const Placement* const policyJit =
        decision.kind == Decision::Kind::Place && !decision.jitPlacement.empty()
            ? &decision.jitPlacement
            : nullptr;
    JitEntry* chosenJit = nullptr;
    bool jitBlocked = false; // set when a JIT module's constants could not be copied
#endif
    auto choose = [&]() {
        const bool dynamicOnly = st->sweepLaunch ? sweep->dynamic : forcedDynamic;
        Placement placed(static_cast<std::size_t>(n));
        for (int j = 0; j < n; ++j) {
            placed[j] = rep.arrays[j].placed;
        }
        if (const int c = dynamicOnly ? -1 : compiledIndex(kv, placed); c >= 0) {
            return c;
        }
        rep.jit.clear();
        rep.jitDetail.clear();
#if !defined(MEMPLACE_EMU)
        chosenJit = nullptr;
        // A sweep runs JIT instantiations only under MEMPLACE_JIT=always (prepareSweepJit).
        if ((st->sweepLaunch && r.jitPolicy != JitPolicy::Always) || kv.jitSource == nullptr ||
            dynamicOnly || jitBlocked || r.jitPolicy == JitPolicy::Off) {
            return static_cast<int>(LaunchPlan::kDynamic);
        }
        if (!info.jitAvailable) {
            rep.jit = "unavailable";
            rep.jitDetail = info.jitUnavailable;
            if (r.jitPolicy == JitPolicy::Always) {
                warnOnce(r, std::string(kv.name) +
                                ": MEMPLACE_JIT=always, but just-in-time instantiation is "
                                "unavailable: " +
                                info.jitUnavailable);
            }
            return static_cast<int>(LaunchPlan::kDynamic);
        }
        // Compiled when the policy asked for this placement, or for the one requested this
        // launch (a fallback may have changed it), or MEMPLACE_JIT=always.
        JitEntry& e = jitFor(r, kv, la, st->device, placed,
                             (policyJit != nullptr && *policyJit == placed) || policyJitRequested ||
                                 r.jitPolicy == JitPolicy::Always);
        switch (e.state) {
        case JitEntry::State::Ready:
            chosenJit = &e;
            plan.jitFunction = e.loaded.function;
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
#endif
        return static_cast<int>(LaunchPlan::kDynamic);
    };
    plan.instantiation = choose();

    // Raise the kernel's dynamic shared memory limit when staging needs more than the default.
    if (plan.sharedBytes > kDefaultDynamicSharedLimit && !layout.slots.empty()) {
        bool raised = true;
#if !defined(MEMPLACE_EMU)
        if (plan.instantiation == LaunchPlan::kJit) {
            std::string why;
            if (chosenJit->sharedAttr < plan.sharedBytes) {
                if (jit::setMaxDynamicShared(plan.jitFunction, static_cast<int>(plan.sharedBytes),
                                             &why)) {
                    chosenJit->sharedAttr = plan.sharedBytes;
                } else {
                    rep.errors.push_back(why);
                    raised = false;
                }
            }
        } else
#endif
        {
            const void* fn =
                plan.instantiation >= 0 ? kv.compiledFns[plan.instantiation] : kv.dynamicFn;
            std::size_t& done = r.sharedAttr[{st->device, fn}];
            if (done < plan.sharedBytes) {
                if (check(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(plan.sharedBytes)),
                          "cudaFuncSetAttribute(MaxDynamicSharedMemorySize, " +
                              std::to_string(plan.sharedBytes) + ")",
                          rep)) {
                    done = plan.sharedBytes;
                } else {
                    raised = false;
                }
            }
        }
        if (!raised) {
            for (const SharedSlot& s : layout.slots) {
                fallback(s.array, "shared: cannot raise the kernel's dynamic shared memory "
                                  "limit");
            }
            plan.sharedBytes = la.sharedBytes;
            plan.instantiation = choose();
        }
    }

    // The constant pool of the chosen instantiation: wait for its last reader, upload. A failed
    // upload puts every constant array back in global memory (and the instantiation is chosen
    // again, with no constant array left to upload).
    // A just-in-time module also gets the program's __constant__ variables the kernel reads,
    // copied into its own before each launch (ordered like its pool). If they cannot be, the
    // launch does not run just in time.
    for (int attempt = 0; attempt < 3; ++attempt) {
        const bool jitCopies =
#if defined(MEMPLACE_EMU)
            false;
#else
            plan.instantiation == LaunchPlan::kJit && !chosenJit->sources.empty();
#endif
        if (packed.empty() && !jitCopies) {
            break;
        }
        const void* poolKey = la.poolSymbol;
        std::uintptr_t jitPool = 0;
#if !defined(MEMPLACE_EMU)
        if (plan.instantiation == LaunchPlan::kJit) {
            jitPool = chosenJit->loaded.pool;
            poolKey = reinterpret_cast<const void*>(jitPool); // NOLINT(performance-no-int-to-ptr)
        }
#endif
        PoolState& pool = r.pools[{st->device, poolKey}];
        std::string why;
        if (pool.lastUse == nullptr &&
            !check(cudaEventCreateWithFlags(&pool.lastUse, cudaEventDisableTiming),
                   "cudaEventCreate(constant pool)", rep)) {
            pool.lastUse = nullptr;
            why = "constant: cannot order the upload after the pool's last reader";
        }
        beginTiming(); // the upload is stream work
        if (why.empty() && pool.used &&
            !check(cudaStreamWaitEvent(la.stream, pool.lastUse, 0),
                   "cudaStreamWaitEvent(constant pool)", rep)) {
            why = "constant: cannot order the upload after the pool's last reader";
        }
        for (const ConstantSlot& s : packed) {
            if (!why.empty()) {
                break;
            }
            const ArrayInfo& ai = info.arrays[s.array];
            const cudaError_t e =
                jitPool != 0
                    ? cudaMemcpyAsync(reinterpret_cast<void*>(jitPool + s.offset), // NOLINT
                                      ai.ptr, s.bytes, cudaMemcpyDeviceToDevice, la.stream)
                    : cudaMemcpyToSymbolAsync(la.poolSymbol, ai.ptr, s.bytes, s.offset,
                                              cudaMemcpyDeviceToDevice, la.stream);
            if (!check(e,
                       (jitPool != 0 ? "cudaMemcpyAsync(" : "cudaMemcpyToSymbolAsync(") + ai.name +
                           ")",
                       rep)) {
                why = "constant: the upload failed";
                break;
            }
            plan.handles[s.array].constOffset = static_cast<unsigned>(s.offset);
            rep.arrays[s.array].bytesMoved += s.bytes;
        }
        bool copied = true;
#if !defined(MEMPLACE_EMU)
        if (jitCopies && why.empty()) {
            for (std::size_t k = 0; k < chosenJit->sources.size() && copied; ++k) {
                const auto [src, bytes] = chosenJit->sources[k];
                copied = check(cudaMemcpyAsync(reinterpret_cast<void*>( // NOLINT
                                                   chosenJit->loaded.constants[k].first),
                                               src, bytes, cudaMemcpyDeviceToDevice, la.stream),
                               "cudaMemcpyAsync(" + chosenJit->request.constants[k] + ")", rep);
            }
        }
#endif
        if (why.empty() && copied) {
            st->pool = &pool;
            break;
        }
#if !defined(MEMPLACE_EMU)
        if (!copied) {
            jitBlocked = true; // its constants are not in place: no JIT for this launch
        }
#endif
        if (!why.empty()) {
            for (const ConstantSlot& s : packed) {
                rep.arrays[s.array].bytesMoved = 0;
                fallback(s.array, why);
            }
            packed.clear();
        }
        plan.instantiation = choose();
    }
    if (plan.instantiation != LaunchPlan::kJit && !policyJitNote.empty()) {
        rep.jit = policyJitNote; // the policy's JIT placement was not placed (yet)
        rep.jitDetail = policyJitDetail;
    }
#if !defined(MEMPLACE_EMU)
    if (plan.instantiation == LaunchPlan::kJit && !chosenJit->announced) {
        // The first launch of the instantiation says how it came to be (the Placer counts the
        // compile time as transform overhead).
        chosenJit->announced = true;
        rep.jit = chosenJit->origin;
        rep.jitCompileMs = chosenJit->compileMs;
        rep.jitLoadMs = chosenJit->loadMs;
        rep.jitBackground = chosenJit->background;
    }
#endif
    rep.sharedBytesTotal = plan.sharedBytes;
    rep.instantiation = plan.instantiation >= 0 ? plan.instantiation : -1;
    rep.dispatch = dispatchName(plan.instantiation);
    for (int j = 0; j < n; ++j) {
        plan.handles[j].place = rep.arrays[j].placed;
    }
    markKernelStart();
    const auto t1 = std::chrono::steady_clock::now();
    rep.hostMicros = std::chrono::duration<double, std::micro>(t1 - st->t0).count();
}

cudaError_t launchJit(const LaunchArgs& la, const LaunchPlan& plan, void** params) {
#if defined(MEMPLACE_EMU)
    (void)la;
    (void)plan;
    (void)params;
    return cudaErrorNotSupported;
#else
    return jit::launch(plan.jitFunction, la.grid, la.block, static_cast<unsigned>(plan.sharedBytes),
                       la.stream, params);
#endif
}

void endShadowTrace(const KernelView& kv, const LaunchArgs& la, LaunchPlan& plan,
                    cudaError_t traceStatus) {
    LaunchState& st = *plan.state;
    LaunchReport& rep = st.report;
    st.traceStatus = traceStatus;
    if (traceStatus != cudaSuccess) {
        rep.errors.push_back(std::string("traced launch of ") + kv.name + ": " +
                             cudaMessage(traceStatus));
        if (!sticky(traceStatus)) {
            (void)cudaGetLastError(); // the program sees the original instantiation's status
        }
    }
    // The globals written by name: keep what the traced run wrote, put back what was there.
    for (const WrittenBuffer& b : st.shadowBuffers) {
        if (b.global) {
            (void)check(
                cudaMemcpyAsync(b.reference, b.ptr, b.bytes, cudaMemcpyDeviceToDevice, la.stream),
                "cudaMemcpyAsync(traced copy of " + b.names + ")", rep);
            (void)check(
                cudaMemcpyAsync(b.ptr, b.snapshot, b.bytes, cudaMemcpyDeviceToDevice, la.stream),
                "cudaMemcpyAsync(restoring " + b.names + ")", rep);
        }
    }
    for (int j = 0; j < kv.numArrays; ++j) {
        plan.handles[j].ptr = const_cast<void*>(la.ptrs[j]);
    }
    plan.instantiation = 0;
}

void finishLaunch(const KernelView& kv, const LaunchArgs& la, LaunchPlan& plan,
                  cudaError_t status) {
    Runtime& r = rt();
    LaunchState& st = *plan.state;
    LaunchReport& rep = st.report;
    rep.status = status;
    if (st.timed) {
        Timing& tm = timing();
        if (cudaEventRecord(st.ev[2], la.stream) == cudaSuccess) {
            PendingTiming p;
            p.id = rep.launchId;
            p.device = st.device;
            p.kernel = kv.name;
            p.dispatch = rep.dispatch;
            for (int k = 0; k < 3; ++k) {
                p.ev[k] = st.ev[k];
                st.ev[k] = nullptr;
            }
            std::lock_guard<std::mutex> g(tm.mu);
            tm.pending.push_back(std::move(p));
        } else {
            (void)cudaGetLastError();
            giveEvents(st.device, st.ev);
            rep.timed = false;
        }
    }
    if (status != cudaSuccess) {
        rep.errors.push_back(std::string("launch of ") + kv.name + " (" + rep.dispatch +
                             "): " + cudaMessage(status));
    }
    if (st.l2Set) {
        // Kernels take the window when they are launched: resetting it now affects only later
        // launches on the stream. Lines already marked persisting keep that status until evicted.
        (void)check(
            cudaStreamSetAttribute(la.stream, cudaStreamAttributeAccessPolicyWindow, &st.oldWindow),
            "cudaStreamSetAttribute(AccessPolicyWindow reset)", rep);
    }
    if (st.pool != nullptr && check(cudaEventRecord(st.pool->lastUse, la.stream),
                                    "cudaEventRecord(constant pool)", rep)) {
        st.pool->used = true;
    }
    for (TexEntry* e : st.copiedTextures) {
        if (check(cudaEventRecord(e->lastUse, la.stream), "cudaEventRecord(pitched copy)", rep)) {
            e->used = true;
        }
    }

    if (st.tracing) {
        TraceResult tr;
        tr.kernel = kv.name;
        tr.grid = la.grid;
        tr.block = la.block;
        tr.sampledBlocks = st.sampled;
        tr.capacity = st.traceCapacity;
        for (const ArrayInfo& ai : st.info.arrays) {
            TraceArray ta;
            ta.name = ai.name;
            ta.base = ai.ptr;
            ta.elemSize = ai.elemSize;
            ta.extentBytes = ai.extentBytes;
            ta.extentKnown = ai.extentKnown;
            ta.mode = ai.mode;
            tr.arrays.push_back(ta);
        }
        auto tc0 = std::chrono::steady_clock::now();
        bool profiled = false;
#if defined(MEMPLACE_EMU)
        // An active profile of this launch (MEMPLACE_PROFILE=active, memplace/emu/profile.h)
        // replaces the records: the kernel itself ran untraced.
        if (std::optional<emu::Profile> prof = emu::takeProfile()) {
            // Bounded like the device buffer, so that the policy sees the same overflow.
            profiled = true;
            tr.records = profileRecords(*prof, st.info);
            tr.produced = tr.records.size();
            if (tr.records.size() > st.traceCapacity) {
                tr.records.resize(st.traceCapacity);
                tr.overflow = true;
                tr.dropped = tr.produced - st.traceCapacity;
                const std::string msg = std::string(kv.name) +
                                        ": trace buffer overflow: " + std::to_string(tr.produced) +
                                        " records produced, " + std::to_string(st.traceCapacity) +
                                        " kept, " + std::to_string(tr.dropped) + " dropped";
                rep.errors.push_back(msg);
                if (!r.quiet) {
                    std::fprintf(stderr, "memplace: %s\n", msg.c_str());
                }
            }
        }
#endif
        if (!profiled) {
            TraceBufferHeader h{0, 0};
            bool ok = status == cudaSuccess && st.traceStatus == cudaSuccess;
            ok = ok && check(cudaMemcpyAsync(&h, plan.sink.header, sizeof h, cudaMemcpyDeviceToHost,
                                             la.stream),
                             "cudaMemcpyAsync(trace header)", rep);
            ok = ok && check(cudaStreamSynchronize(la.stream), "cudaStreamSynchronize(trace)", rep);
            tc0 = std::chrono::steady_clock::now(); // collection, not the kernel's own time
            if (ok) {
                tr.produced = h.count;
                const std::size_t kept = static_cast<std::size_t>(std::min<unsigned long long>(
                    h.count, static_cast<unsigned long long>(st.traceCapacity)));
                tr.records.resize(kept);
                if (kept > 0 &&
                    check(cudaMemcpy(tr.records.data(), plan.sink.records,
                                     kept * sizeof(TraceRecord), cudaMemcpyDeviceToHost),
                          "cudaMemcpy(trace records)", rep)) {
                    for (TraceRecord& rec : tr.records) {
                        for (unsigned l = 0; l < 32; ++l) {
                            if (((rec.activeMask >> l) & 1u) == 0) {
                                rec.offset[l] = 0;
                            }
                        }
                    }
                } else if (kept > 0) {
                    tr.records.clear();
                }
                tr.overflow = h.count > st.traceCapacity;
                tr.dropped = tr.overflow ? h.count - st.traceCapacity : 0;
                if (tr.overflow) {
                    // Never silent: stderr (unless MEMPLACE_QUIET), the result and the report.
                    const std::string msg = std::string(kv.name) +
                                            ": trace buffer overflow: " + std::to_string(h.count) +
                                            " records produced, " +
                                            std::to_string(st.traceCapacity) + " kept, " +
                                            std::to_string(tr.dropped) + " dropped";
                    rep.errors.push_back(msg);
                    if (!r.quiet) {
                        std::fprintf(stderr, "memplace: %s\n", msg.c_str());
                    }
                }
            } else {
                rep.errors.emplace_back("trace not collected");
            }
        }
        tr.collectMicros =
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - tc0)
                .count();
        if (st.shadow) {
            tr.shadowed = true;
            if (status == cudaSuccess && st.traceStatus == cudaSuccess) {
                compareShadow(kv, la, st, tr);
            }
            releaseShadow(st);
            if (tr.outputsDiffer && !(st.policyTrace && r.policy)) {
                warnOnce(r, std::string(kv.name) + ": the traced run's outputs differ from the " +
                                "original's (" + tr.differing + ")");
            }
        }
        if (st.policyTrace && r.policy) {
            r.policy->traced(st.info, std::move(tr));
        } else {
            r.traces.push_back(std::move(tr));
        }
    }

    for (const ArrayReport& ar : rep.arrays) {
        if (!ar.fallback.empty()) {
            warnOnce(r, std::string(kv.name) + ": array " + ar.name + " requested " +
                            std::string(placeName(ar.requested)) +
                            ", placed global: " + ar.fallback);
        }
    }
    if (r.policy && !st.sweepLaunch) {
        r.policy->launched(st.info, rep);
    }
    tlsLastReport = rep;
    plan.state.reset(); // releases the lock
}

namespace {

double medianOf(std::vector<double> v) {
    if (v.empty()) {
        return -1;
    }
    std::sort(v.begin(), v.end());
    const std::size_t k = v.size();
    return k % 2 == 1 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

} // namespace

#if !defined(MEMPLACE_EMU)
/// Under MEMPLACE_JIT=always a sweep measures every placement that is not compiled in (and not
/// asked for through the dynamic accessor) as its just-in-time instantiation. They are compiled
/// here, side by side (one NVRTC thread each), before the first timed launch, so the timings
/// are the instantiations', never the dynamic accessor's or a compilation's.
void prepareSweepJit(Runtime& r, const KernelView& kv, const LaunchArgs& la, const LaunchInfo& info,
                     const SweepRequest& req) {
    if (!info.jitAvailable) {
        return;
    }
    int device = 0;
    (void)cudaGetDevice(&device);
    {
        std::lock_guard<std::mutex> g(r.mu);
        if (r.jitPolicy != JitPolicy::Always) {
            return;
        }
        const bool sync = r.jitSync;
        r.jitSync = false;
        for (const SweepEntry& e : req.entries) {
            if (!e.dynamic && e.placement.size() == static_cast<std::size_t>(kv.numArrays) &&
                compiledIndex(kv, e.placement) < 0) {
                (void)jitFor(r, kv, la, device, e.placement, true);
            }
        }
        r.jitSync = sync;
    }
    waitJitThreads();
}
#endif

void runSweep(const KernelView& kv, const LaunchArgs& la, LaunchPlan& plan,
              const SweepHooks& hooks) {
    Runtime& r = rt();
    const std::shared_ptr<SweepState> state = plan.sweep;
    const SweepRequest& req = *state->request;
    const LaunchInfo& info = state->info;
    const int n = kv.numArrays;
    auto t0 = std::chrono::steady_clock::now();
    std::vector<SweepResult> results(req.entries.size());
    for (std::size_t k = 0; k < req.entries.size(); ++k) {
        results[k].entry = req.entries[k];
        results[k].status = "skipped";
    }
    std::string fatal; // set when the sweep cannot go on; the remaining entries say why

    // The written arrays, one buffer per distinct pointer, and the __device__ variables the
    // kernel writes by name: restored before each launch (and compared), so that every placement
    // starts from the program's state and the sweep leaves it as it found it; memory written
    // through pointers nobody knows cannot be: no sweep.
    std::vector<WrittenBuffer> bufs = writtenBuffers(info, fatal);
    const cudaStream_t s = la.stream;
    auto cudaOk = [&](cudaError_t e, const std::string& what) {
        if (e == cudaSuccess) {
            return true;
        }
        (void)cudaGetLastError();
        if (fatal.empty()) {
            fatal = what + ": " + cudaMessage(e);
        }
        return false;
    };
    for (WrittenBuffer& b : bufs) {
        if (!fatal.empty()) {
            break;
        }
        if (cudaOk(cudaMalloc(&b.snapshot, b.bytes),
                   "cudaMalloc(sweep snapshot of " + b.names + ")")) {
            (void)cudaOk(cudaMemcpyAsync(b.snapshot, b.ptr, b.bytes, cudaMemcpyDeviceToDevice, s),
                         "cudaMemcpyAsync(snapshot)");
        }
    }
    unsigned long long* counter = nullptr;
    if (fatal.empty() && hooks.compare != nullptr) {
        (void)cudaOk(cudaMalloc(&counter, sizeof(unsigned long long)), "cudaMalloc(counter)");
    }
    const int total = std::max(0, req.warmup) + std::max(1, req.repeat);
    std::vector<cudaEvent_t> ev(static_cast<std::size_t>(2 * total), nullptr);
    for (cudaEvent_t& e : ev) {
        if (fatal.empty()) {
            (void)cudaOk(cudaEventCreate(&e), "cudaEventCreate");
        }
    }
    auto resetBuffers = [&]() {
        for (const WrittenBuffer& b : bufs) {
            const cudaError_t e =
                b.restore ? cudaMemcpyAsync(b.ptr, b.snapshot, b.bytes, cudaMemcpyDeviceToDevice, s)
                          : cudaMemsetAsync(b.ptr, 0xFF, b.bytes, s);
            if (!cudaOk(e, "restoring " + b.names)) {
                return false;
            }
        }
        return true;
    };

#if !defined(MEMPLACE_EMU)
    if (fatal.empty()) {
        prepareSweepJit(r, kv, la, info, req);
        t0 = std::chrono::steady_clock::now(); // the budget is for measuring
    }
#endif
    bool usedL2 = false;
    for (std::size_t k = 0; k < req.entries.size() && fatal.empty(); ++k) {
        SweepResult& res = results[k];
        if (req.budgetMs > 0 &&
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count() > req.budgetMs) {
            res.detail = "time budget spent";
            continue;
        }
        if (res.entry.placement.size() != static_cast<std::size_t>(n)) {
            res.status = "error";
            res.detail = "the placement has " + std::to_string(res.entry.placement.size()) +
                         " places for " + std::to_string(n) + " arrays";
            continue;
        }
        SweepCurrent cur{&res.entry.placement, res.entry.dynamic};
        std::vector<double> hostUs;
        bool ok = true;
        for (int i = 0; i < total && ok; ++i) {
            if (!resetBuffers()) {
                ok = false;
                break;
            }
            if (hooks.spin != nullptr && req.spinUs > 0) {
                (void)cudaOk(hooks.spin(static_cast<long long>(req.spinUs * 1000.0), s),
                             "sweep busy-wait");
            }
            (void)cudaEventRecord(ev[static_cast<std::size_t>(2 * i)], s);
            tlsSweep = &cur;
            const cudaError_t status = hooks.launch(hooks.ctx);
            tlsSweep = nullptr;
            (void)cudaEventRecord(ev[static_cast<std::size_t>(2 * i + 1)], s);
            const LaunchReport& rep = tlsLastReport;
            hostUs.push_back(rep.hostMicros);
            if (i == 0) {
                res.placed.clear();
                std::string fb;
                for (const ArrayReport& ar : rep.arrays) {
                    res.placed.push_back(ar.placed);
                    if (!ar.fallback.empty()) {
                        fb += (fb.empty() ? "" : "; ") + ar.name + ": " + ar.fallback;
                    }
                    usedL2 = usedL2 || ar.placed == Place::L2Persist;
                }
                res.dispatch = rep.dispatch;
                res.instantiation = rep.instantiation;
                if (!fb.empty()) {
                    res.status = "fallback";
                    res.detail = fb;
                    ok = false;
                }
            }
            if (status != cudaSuccess) {
                (void)cudaGetLastError();
                res.status = "error";
                res.detail = cudaMessage(status);
                ok = false;
                if (sticky(status)) {
                    fatal = "launch failed: " + cudaMessage(status);
                }
            }
        }
        const cudaError_t se = cudaStreamSynchronize(s);
        if (se != cudaSuccess) {
            (void)cudaGetLastError();
            res.status = "error";
            res.detail = "kernel failed: " + cudaMessage(se);
            if (sticky(se)) {
                fatal = res.detail;
            }
            ok = false;
        }
        if (usedL2) {
            // Lines the window marked persisting would stay so for the next placements.
            (void)cudaCtxResetPersistingL2Cache();
            (void)cudaGetLastError();
            usedL2 = false;
        }
        if (!ok) {
            continue;
        }
        for (int i = std::max(0, req.warmup); i < total; ++i) {
            float ms = 0;
            if (cudaEventElapsedTime(&ms, ev[static_cast<std::size_t>(2 * i)],
                                     ev[static_cast<std::size_t>(2 * i + 1)]) == cudaSuccess) {
                res.ms.push_back(ms);
            } else {
                (void)cudaGetLastError();
            }
        }
        if (!res.ms.empty()) {
            res.medianMs = medianOf(res.ms);
            res.minMs = *std::min_element(res.ms.begin(), res.ms.end());
            res.maxMs = *std::max_element(res.ms.begin(), res.ms.end());
        }
        res.hostUsMedian = medianOf(hostUs);
        res.status = "ok";
        // Outputs: the first entry's are the reference; the others are compared with them.
        if (k == 0) {
            for (WrittenBuffer& b : bufs) {
                if (cudaOk(cudaMalloc(&b.reference, b.bytes), "cudaMalloc(sweep reference)")) {
                    (void)cudaOk(
                        cudaMemcpyAsync(b.reference, b.ptr, b.bytes, cudaMemcpyDeviceToDevice, s),
                        "cudaMemcpyAsync(reference)");
                }
            }
            res.compared = true;
            res.equal = true;
        } else if (results[0].status == "ok") {
            uint64_t diff = 0;
            bool cmpOk = true;
            for (const WrittenBuffer& b : bufs) {
                uint64_t d = 0;
                std::string what;
                const cudaError_t e = countDifferences(hooks.compare, counter, b.ptr, b.reference,
                                                       b.bytes, s, d, what);
                cmpOk = cmpOk && cudaOk(e, what);
                diff += d;
            }
            res.compared = cmpOk;
            res.equal = cmpOk && diff == 0;
            res.differingWords = diff;
        }
    }
    for (SweepResult& res : results) {
        if (res.status == "skipped" && res.detail.empty()) {
            res.detail = fatal.empty() ? "not run" : fatal;
        }
    }
    // Leave the written arrays as the program left them before this launch.
    if (sticky(cudaPeekAtLastError()) == false) {
        for (const WrittenBuffer& b : bufs) {
            if (b.snapshot != nullptr) {
                (void)cudaMemcpyAsync(b.ptr, b.snapshot, b.bytes, cudaMemcpyDeviceToDevice, s);
            }
        }
        (void)cudaStreamSynchronize(s);
    }
    for (WrittenBuffer& b : bufs) {
        if (b.snapshot != nullptr) {
            (void)cudaFree(b.snapshot);
        }
        if (b.reference != nullptr) {
            (void)cudaFree(b.reference);
        }
    }
    if (counter != nullptr) {
        (void)cudaFree(counter);
    }
    for (cudaEvent_t e : ev) {
        if (e != nullptr) {
            (void)cudaEventDestroy(e);
        }
    }
    if (!fatal.empty()) {
        warnOnce(r, std::string(kv.name) + ": sweep stopped: " + fatal);
    }
    (void)cudaGetLastError();
    tlsJustSwept = true;
    std::unique_lock<std::mutex> lock(r.mu);
    if (r.policy) {
        r.policy->swept(info, std::move(results));
    }
}

} // namespace detail

// ---- public API ----------------------------------------------------------------------------

using detail::rt;

void traceLaunches(const TraceOptions& options, int launches) {
    auto& r = rt();
    std::lock_guard<std::mutex> g(r.mu);
    r.traceOptions = options;
    r.traceRemaining = std::max(launches, 0);
}

void stopTracing() {
    auto& r = rt();
    std::lock_guard<std::mutex> g(r.mu);
    r.traceRemaining = 0;
}

std::vector<TraceResult> takeTraces() {
    auto& r = rt();
    std::lock_guard<std::mutex> g(r.mu);
    std::vector<TraceResult> out;
    out.swap(r.traces);
    return out;
}

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

void waitForJit() {
#if !defined(MEMPLACE_EMU)
    detail::waitJitThreads();
#endif
}

bool jitSupported(std::string* why) {
#if defined(MEMPLACE_EMU)
    if (why != nullptr) {
        *why = "the CPU emulation layer has no NVRTC";
    }
    return false;
#else
    return detail::jitSupportedImpl(why);
#endif
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
    for (auto& [key, e] : r.textures) {
        (void)cudaDestroyTextureObject(e.tex);
        if (e.pitched != nullptr) {
            (void)cudaFree(e.pitched);
        }
        if (e.lastUse != nullptr) {
            (void)cudaEventDestroy(e.lastUse);
        }
    }
    r.textures.clear();
    for (auto& [key, p] : r.pools) {
        if (p.lastUse != nullptr) {
            (void)cudaEventDestroy(p.lastUse);
        }
    }
    r.pools.clear();
    r.sharedAttr.clear();
    if (r.traceBuf != nullptr) {
        (void)cudaFree(r.traceBuf);
        r.traceBuf = nullptr;
        r.traceBufBytes = 0;
    }
    if (r.bitmapBuf != nullptr) {
        (void)cudaFree(r.bitmapBuf);
        r.bitmapBuf = nullptr;
        r.bitmapBytes = 0;
    }
    r.attrs.clear();
#if !defined(MEMPLACE_EMU)
    // Just-in-time modules: unloaded (compilations in flight finish into nothing; the disk
    // cache keeps their images, so the next launch loads them again).
    for (auto& [key, e] : r.jit) {
        if (e.loaded.module != nullptr) {
            detail::jit::unload(e.loaded.module);
        }
    }
    r.jit.clear();
#endif
    (void)cudaGetLastError();
}

LaunchReport lastReport() {
    return detail::tlsLastReport;
}

void setKernelTiming(bool on) {
    detail::timing().enabled.store(on ? 1 : 0);
}

bool kernelTimingEnabled() {
    return detail::timingOn();
}

std::vector<KernelTiming> takeKernelTimings(bool wait) {
    detail::Timing& t = detail::timing();
    std::lock_guard<std::mutex> g(t.mu);
    std::vector<KernelTiming> out;
    for (auto it = t.pending.begin(); it != t.pending.end();) {
        detail::PendingTiming& p = *it;
        const cudaError_t q = wait ? cudaEventSynchronize(p.ev[2]) : cudaEventQuery(p.ev[2]);
        if (q == cudaErrorNotReady) {
            ++it;
            continue;
        }
        KernelTiming kt;
        kt.launchId = p.id;
        kt.kernel = p.kernel;
        kt.dispatch = p.dispatch;
        float m = 0;
        float k = 0;
        kt.ok = q == cudaSuccess && cudaEventElapsedTime(&m, p.ev[0], p.ev[1]) == cudaSuccess &&
                cudaEventElapsedTime(&k, p.ev[1], p.ev[2]) == cudaSuccess;
        if (kt.ok) {
            kt.materialiseMs = m;
            kt.kernelMs = k;
        } else {
            (void)cudaGetLastError();
        }
        out.push_back(std::move(kt));
        for (cudaEvent_t e : p.ev) {
            t.freeEvents[p.device].push_back(e);
        }
        it = t.pending.erase(it);
    }
    std::sort(out.begin(), out.end(),
              [](const KernelTiming& a, const KernelTiming& b) { return a.launchId < b.launchId; });
    return out;
}

bool LaunchReport::anyFallback() const {
    return std::any_of(arrays.begin(), arrays.end(),
                       [](const ArrayReport& a) { return !a.fallback.empty(); });
}

// NOLINTBEGIN(modernize-raw-string-literal)
std::string LaunchReport::toJson() const {
    using detail::jsonEscape;
    std::ostringstream o;
    o << "{\"kernel\":\"" << jsonEscape(kernel) << "\",\"grid\":[" << grid.x << ',' << grid.y << ','
      << grid.z << "],\"block\":[" << block.x << ',' << block.y << ',' << block.z
      << "],\"sharedBytesOriginal\":" << sharedBytesOriginal
      << ",\"sharedBytesTotal\":" << sharedBytesTotal << ",\"dispatch\":\"" << dispatch
      << "\",\"instantiation\":" << instantiation << ",\"hostMicros\":" << hostMicros
      << ",\"status\":\"" << cudaGetErrorName(status) << "\",\"launchId\":" << launchId
      << ",\"timed\":" << (timed ? "true" : "false") << ",\"jit\":\"" << jit
      << "\",\"jitDetail\":\"" << jsonEscape(jitDetail) << "\",\"jitCompileMs\":" << jitCompileMs
      << ",\"jitBackground\":" << (jitBackground ? "true" : "false")
      << ",\"jitLoadMs\":" << jitLoadMs << ",\"notShadowed\":\"" << jsonEscape(notShadowed)
      << "\",\"arrays\":[";
    for (std::size_t j = 0; j < arrays.size(); ++j) {
        const ArrayReport& a = arrays[j];
        o << (j ? "," : "") << "{\"name\":\"" << jsonEscape(a.name) << "\",\"requested\":\""
          << placeName(a.requested) << "\",\"placed\":\"" << placeName(a.placed)
          << "\",\"source\":\"" << a.source << "\",\"fallback\":\"" << jsonEscape(a.fallback)
          << "\",\"extentBytes\":" << a.extentBytes
          << ",\"extentKnown\":" << (a.extentKnown ? "true" : "false")
          << ",\"bytesMoved\":" << a.bytesMoved << '}';
    }
    o << "],\"errors\":[";
    for (std::size_t i = 0; i < errors.size(); ++i) {
        o << (i ? "," : "") << '"' << jsonEscape(errors[i]) << '"';
    }
    o << "]}";
    return o.str();
}
// NOLINTEND(modernize-raw-string-literal)

} // namespace memplace

// Just-in-time instances (the GPU build only): the disk cache, NVRTC compilations in the
// background and their wait at exit, loading into the context (jit_instances.h).
#include "runtime/src/jit_instances.h"

#include "runtime/src/process_times.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <thread>

namespace memplace::detail {

namespace {

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

std::map<int, std::pair<int, int>>& computeCapabilities() {
    static auto* m = new std::map<int, std::pair<int, int>>; // never destroyed, like the runtime
    return *m;
}

std::pair<int, int> computeCapabilityOf(int device) {
    auto it = computeCapabilities().find(device);
    if (it == computeCapabilities().end()) {
        int major = 0;
        int minor = 0;
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) !=
                cudaSuccess ||
            cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) !=
                cudaSuccess) {
            (void)cudaGetLastError();
            major = minor = 0;
        }
        it = computeCapabilities().emplace(device, std::make_pair(major, minor)).first;
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

/// The exit's wait (registered by jitStartBackground), timed for the Placer's report.
void waitJitThreadsAtExit() {
    const ProcessTimer timer(&ProcessTimes::jitExitWaitMs);
    waitJitThreads();
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
        // hydro_force in the evaluation, from the cores: decision 017). So a small compilation
        // on this thread comes first.
        {
            const ProcessTimer timer(&ProcessTimes::jitWarmUpMs);
            (void)jit::compile(jit::warmUpRequest(e.request));
        }
        std::atexit(waitJitThreadsAtExit);
        return true;
    }();
    (void)waitsAtExit;
    JitThreads& t = jitThreads();
    {
        std::lock_guard<std::mutex> g(t.mu);
        ++t.running;
    }
    countBackgroundCompile();
    std::thread([job, request = e.request, key = e.key, dir = r.jitCacheDir] {
        jit::Binary b;
        {
            const ProcessTimer timer(&ProcessTimes::jitBackgroundMs);
            b = jit::compile(request);
        }
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

} // namespace

std::map<JitKey, JitEntry>& jitEntries() {
    static auto* m = new std::map<JitKey, JitEntry>; // never destroyed, like the runtime
    return *m;
}

void waitJitThreads() {
    JitThreads& t = jitThreads();
    std::unique_lock<std::mutex> g(t.mu);
    t.cv.wait(g, [&] { return t.running == 0; });
}

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

namespace {

/// A new entry for the name expression `name`: its request, and its binary when the disk cache
/// has it (loaded).
JitEntry newJitEntry(Runtime& r, const KernelView& kv, const LaunchArgs& la, int device,
                     std::string name) {
    JitEntry e;
    e.request.source = kv.jitSource;
    e.request.nameExpression = std::move(name);
    std::tie(e.request.ccMajor, e.request.ccMinor) = computeCapabilityOf(device);
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
        e.loadMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
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
    return e;
}

} // namespace

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
    auto it = jitEntries().find(key);
    if (it == jitEntries().end()) {
        it = jitEntries().emplace(key, newJitEntry(r, kv, la, device, std::move(name))).first;
    }
    JitEntry& e = it->second;
    if (e.state == JitEntry::State::Absent && compile) {
        if (r.jitSync) {
            jit::Binary b;
            {
                const ProcessTimer timer(&ProcessTimes::jitSyncMs);
                b = jit::compile(e.request);
            }
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

} // namespace memplace::detail

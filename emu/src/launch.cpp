// Launches: the settings, checking a launch against the device's limits, announcing it to the
// launch observer, profiling it actively when the runtime asked for it, and running its blocks
// on the launching thread or a pool of OS threads; the emulator's own interface (emu.h,
// profile.h) and the device clocks.
#include "common/env.h"
#include "scheduler_internal.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <dlfcn.h>
#include <optional>
#include <thread>

namespace memplace::emu::detail {

// ---- settings ---------------------------------------------------------------------------------

Settings::Settings() {
    std::vector<std::string> warnings;
    unsigned threads = workers;
    if (env::readNumber("MEMPLACE_EMU_THREADS", threads, warnings) && threads == 0)
        threads = std::max(1u, std::thread::hardware_concurrency());
    workers = threads;
    fatal = env::readSwitch("MEMPLACE_EMU_FATAL", fatal, warnings);
    std::size_t kb = stackBytes / 1024;
    env::readNumber("MEMPLACE_EMU_STACK_KB", kb, warnings);
    stackBytes = kb * 1024;
    double spin = spinTimeoutSeconds;
    env::readNumber("MEMPLACE_EMU_SPIN_TIMEOUT_S", spin, warnings);
    spinTimeoutSeconds = spin;
    for (const std::string& w : warnings)
        std::fprintf(stderr, "memplace emu: %s\n", w.c_str());
}

Settings& settings() {
    static Settings s;
    return s;
}

namespace {

// ---- the pool of OS threads -------------------------------------------------------------------

class ThreadPool {
public:
    ~ThreadPool() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        for (auto& t : threads_)
            t.join();
    }
    /// Runs `job` on the calling thread and on `helpers` pool threads; returns when all are done.
    void run(unsigned helpers, const std::function<void()>& job) {
        std::unique_lock lock(mutex_);
        while (threads_.size() < helpers) {
            unsigned index = static_cast<unsigned>(threads_.size());
            threads_.emplace_back([this, index] { loop(index); });
        }
        job_ = &job;
        participants_ = helpers;
        active_ = helpers;
        ++generation_;
        lock.unlock();
        wake_.notify_all();
        job();
        lock.lock();
        done_.wait(lock, [this] { return active_ == 0; });
        job_ = nullptr;
    }

private:
    void loop(unsigned index) {
        unsigned long long seen = 0;
        std::unique_lock lock(mutex_);
        for (;;) {
            wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_)
                return;
            seen = generation_;
            if (index >= participants_)
                continue;
            const std::function<void()>* job = job_;
            lock.unlock();
            (*job)();
            lock.lock();
            if (--active_ == 0)
                done_.notify_all();
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_, done_;
    std::vector<std::thread> threads_;
    const std::function<void()>* job_ = nullptr;
    unsigned participants_ = 0;
    unsigned active_ = 0;
    unsigned long long generation_ = 0;
    bool stop_ = false;
};

ThreadPool& pool() {
    static ThreadPool* p =
        new ThreadPool; // never destroyed: threads may outlive static destruction order
    return *p;
}
std::mutex g_poolLaunch; // one multi-threaded launch at a time

// ---- names, hooks ------------------------------------------------------------------------------

std::string kernelName(const LaunchRequest& r) {
    static std::mutex m;
    static std::map<const void*, std::string> cache;
    std::lock_guard lock(m);
    auto it = cache.find(r.func);
    if (it != cache.end())
        return it->second;
    std::string name = r.text != nullptr ? r.text : "?";
    Dl_info info{};
    if (r.func != nullptr && dladdr(r.func, &info) != 0 && info.dli_sname != nullptr) {
        int status = 0;
        char* demangled = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
        name = status == 0 && demangled != nullptr ? demangled : info.dli_sname;
        std::free(demangled);
    }
    cache[r.func] = name;
    return name;
}

std::mutex g_hooks;
std::function<void(const LaunchInfo&, bool)> g_observer;
std::function<bool(const uint3&)> g_filter;
std::atomic<unsigned long long> g_launches{0};
thread_local LaunchInfo t_currentLaunch;

cudaError_t launchError(const LaunchRequest& r, cudaError_t e, const std::string& why) {
    report("launch of '" + kernelName(r) + "' failed: " + why + " (" + cudaGetErrorName(e) + ")");
    return fail(e);
}

thread_local std::optional<std::vector<uint32_t>> t_profileRequest;
thread_local std::optional<Profile> t_lastProfile;

// ---- the launch ---------------------------------------------------------------------------------

/// The launch's configuration against the device's limits and the kernel's dynamic shared
/// memory: cudaSuccess, or the error (reported).
cudaError_t checkLaunch(const LaunchRequest& r) {
    if (t_lane != nullptr) {
        deviceFault(cudaErrorNotSupported,
                    "a kernel launched a kernel (dynamic parallelism is not emulated)");
    }
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    if (cudaError_t e = stickyError(); e != cudaSuccess)
        return fail(e);
    cudaDeviceProp prop{};
    int maxDynamic = 48 * 1024;
    {
        Device& d = device();
        std::lock_guard lock(d.mutex);
        prop = d.prop;
        auto it = d.funcs.find(r.func);
        if (it != d.funcs.end())
            maxDynamic = it->second.maxDynamicSharedBytes;
        maxDynamic = std::min<int>(maxDynamic, static_cast<int>(prop.sharedMemPerBlockOptin));
    }
    const unsigned long long threads = 1ULL * r.block.x * r.block.y * r.block.z;
    if (r.block.x == 0 || r.block.y == 0 || r.block.z == 0 || r.grid.x == 0 || r.grid.y == 0 ||
        r.grid.z == 0) {
        return launchError(r, cudaErrorInvalidConfiguration, "a grid or block dimension is 0");
    }
    if (threads > static_cast<unsigned long long>(prop.maxThreadsPerBlock) ||
        r.block.x > static_cast<unsigned>(prop.maxThreadsDim[0]) ||
        r.block.y > static_cast<unsigned>(prop.maxThreadsDim[1]) ||
        r.block.z > static_cast<unsigned>(prop.maxThreadsDim[2])) {
        return launchError(r, cudaErrorInvalidConfiguration,
                           "block " + dim3Text(r.block) + " has " + std::to_string(threads) +
                               " threads; the device allows " +
                               std::to_string(prop.maxThreadsPerBlock) + " per block and " +
                               std::to_string(prop.maxThreadsDim[0]) + "x" +
                               std::to_string(prop.maxThreadsDim[1]) + "x" +
                               std::to_string(prop.maxThreadsDim[2]));
    }
    if (r.grid.x > static_cast<unsigned>(prop.maxGridSize[0]) ||
        r.grid.y > static_cast<unsigned>(prop.maxGridSize[1]) ||
        r.grid.z > static_cast<unsigned>(prop.maxGridSize[2])) {
        return launchError(r, cudaErrorInvalidConfiguration,
                           "grid " + dim3Text(r.grid) + " exceeds the device's grid size");
    }
    if (r.sharedBytes > static_cast<std::size_t>(maxDynamic)) {
        return launchError(
            r, cudaErrorInvalidValue,
            std::to_string(r.sharedBytes) + " bytes of dynamic shared memory exceed the kernel's " +
                std::to_string(maxDynamic) +
                " (cudaFuncAttributeMaxDynamicSharedMemorySize; the device allows up to " +
                std::to_string(prop.sharedMemPerBlockOptin) + ")");
    }
    if (r.stream != nullptr && r.stream != cudaStreamLegacy && r.stream != cudaStreamPerThread) {
        cudaStreamAttrValue v;
        if (cudaStreamGetAttribute(r.stream, cudaStreamAttributeSynchronizationPolicy, &v) !=
            cudaSuccess) {
            return launchError(r, cudaErrorInvalidResourceHandle,
                               "the stream is not a live stream");
        }
    }
    return cudaSuccess;
}

/// Runs the launch's blocks (those the block filter keeps) on the calling thread, or with
/// MEMPLACE_EMU_THREADS=n on it and n - 1 pool threads taking blocks from a shared counter.
void runBlocks(LaunchState& state, const LaunchRequest& r) {
    auto work = [&state, &r] {
        BlockRunner& runner = runnerForThisThread();
        for (;;) {
            if (state.aborted)
                return;
            unsigned long long b = state.nextBlock.fetch_add(1);
            if (b >= state.totalBlocks)
                return;
            uint3 bid{static_cast<unsigned>(b % r.grid.x),
                      static_cast<unsigned>((b / r.grid.x) % r.grid.y),
                      static_cast<unsigned>(b / (1ULL * r.grid.x * r.grid.y))};
            if (state.filter && !state.filter(bid))
                continue;
            if (!runner.run(state, bid))
                return;
        }
    };
    const unsigned workers = settings().workers;
    if (workers <= 1 || state.totalBlocks <= 1) {
        work();
    } else {
        std::lock_guard lock(g_poolLaunch);
        const unsigned helpers =
            static_cast<unsigned>(std::min<unsigned long long>(workers - 1, state.totalBlocks - 1));
        std::function<void()> job = [&] { work(); };
        pool().run(helpers, job);
    }
}

} // namespace

cudaError_t launch(const LaunchRequest& r) {
    if (cudaError_t e = checkLaunch(r); e != cudaSuccess)
        return e;
    LaunchState state;
    state.request = &r;
    state.info.id = ++g_launches;
    state.info.kernel = kernelName(r);
    state.info.grid = r.grid;
    state.info.block = r.block;
    state.info.sharedBytes = r.sharedBytes;
    state.stackBytes = settings().stackBytes;
    state.totalBlocks = 1ULL * r.grid.x * r.grid.y * r.grid.z;
    std::function<void(const LaunchInfo&, bool)> observer;
    {
        std::lock_guard lock(g_hooks);
        observer = g_observer;
        state.filter = g_filter;
    }
    t_currentLaunch = state.info;
    if (observer)
        observer(state.info, true);

    // A traced launch the runtime announced: with MEMPLACE_PROFILE=active it is profiled first
    // (memory restored afterwards), then runs untraced.
    std::optional<Profile> profile;
    if (t_profileRequest) {
        std::vector<uint32_t> sampled = std::move(*t_profileRequest);
        t_profileRequest.reset();
        if (profileOptions().mode == ProfileMode::Active)
            profile = activeProfile(state, sampled);
    }
    runBlocks(state, r);

    if (profile)
        t_lastProfile = std::move(profile);
    if (observer)
        observer(state.info, false);
    t_currentLaunch = state.info;
    if (state.error != cudaSuccess) {
        if (settings().fatal) {
            report(
                "aborting (MEMPLACE_EMU_FATAL=0 makes kernel errors CUDA's sticky errors instead)");
            std::abort();
        }
        setStickyError(state.error);
        return state.error;
    }
    return cudaSuccess;
}

void* dynamicSharedBase() {
    struct Buffer {
        void* p = nullptr;
        ~Buffer() { std::free(p); }
    };
    thread_local Buffer buffer;
    if (buffer.p == nullptr) {
        std::size_t bytes = std::max<std::size_t>(maxDynamicSharedCapacity(), 256 * 1024);
        bytes = (bytes + 4095) / 4096 * 4096;
        buffer.p = std::aligned_alloc(4096, bytes);
        std::memset(buffer.p, 0, bytes);
    }
    return buffer.p;
}

} // namespace memplace::emu::detail

// ---- the emulator's own interface ---------------------------------------------------------------

namespace memplace::emu {

void setWorkerThreads(unsigned n) {
    detail::settings().workers = std::max(1u, n);
}
unsigned workerThreads() {
    return detail::settings().workers;
}
void setFatalErrors(bool fatal) {
    detail::settings().fatal = fatal;
}
bool fatalErrors() {
    return detail::settings().fatal;
}
void resetStickyError() {
    detail::clearStickyError();
}
void setStackSize(std::size_t bytes) {
    detail::settings().stackBytes = std::max<std::size_t>(bytes, 16 * 1024);
}
std::size_t stackSize() {
    return detail::settings().stackBytes;
}
void setSpinTimeout(double seconds) {
    detail::settings().spinTimeoutSeconds = std::max(0.001, seconds);
}

void detail::profileDependence(Dependence what) {
    if (t_lane != nullptr && t_runner != nullptr && t_profileStrict != 0)
        throw ProfileStop{what};
}

TraceState traceState() {
    const detail::BlockRunner* r = detail::t_runner;
    return r != nullptr && r->launch() != nullptr ? r->launch()->traceState : TraceState::Record;
}

void profileNextLaunch(std::vector<uint32_t> sampledBlocks) {
    detail::t_profileRequest = std::move(sampledBlocks);
    detail::t_lastProfile.reset();
}

std::optional<Profile> takeProfile() {
    detail::t_profileRequest.reset();
    std::optional<Profile> p = std::move(detail::t_lastProfile);
    detail::t_lastProfile.reset();
    return p;
}

void setLaunchObserver(std::function<void(const LaunchInfo&, bool)> observer) {
    std::lock_guard lock(detail::g_hooks);
    detail::g_observer = std::move(observer);
}
void setBlockFilter(std::function<bool(const uint3&)> filter) {
    std::lock_guard lock(detail::g_hooks);
    detail::g_filter = std::move(filter);
}
LaunchInfo currentLaunch() {
    return detail::t_currentLaunch;
}

} // namespace memplace::emu

long long clock64() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
unsigned long long __globaltimer() {
    return static_cast<unsigned long long>(clock64());
}

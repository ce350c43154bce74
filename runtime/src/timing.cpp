// Kernel timing: CUDA events around each launch (the materialisation's stream work, then the
// kernel), pooled per device and read back by takeKernelTimings. Timing has its own lock, so that
// policies may collect timings from their hooks.
#include "runtime/src/process_times.h"
#include "runtime/src/runtime_internal.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <deque>

namespace memplace {

namespace detail {

namespace {

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

struct ProcessClock {
    std::mutex mu;
    ProcessTimes times;
};

ProcessClock& processClock() {
    static auto* c = new ProcessClock; // never destroyed: the exit's handlers read it
    return *c;
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

} // namespace

ProcessTimes processTimes() {
    ProcessClock& c = processClock();
    std::lock_guard<std::mutex> g(c.mu);
    return c.times;
}

void addProcessTime(double ProcessTimes::* field, double ms) {
    ProcessClock& c = processClock();
    std::lock_guard<std::mutex> g(c.mu);
    c.times.*field += ms;
}

void countBackgroundCompile() {
    ProcessClock& c = processClock();
    std::lock_guard<std::mutex> g(c.mu);
    ++c.times.jitBackgroundCompiles;
}

void Launch::startTiming(bool asked, double spinUs) {
    timingWanted = !st.sweepLaunch && (timingOn() || asked);
    timingSpinUs = asked ? spinUs : 0;
}

void Launch::beginTiming() {
    if (!timingWanted || timingBegun) {
        return;
    }
    timingBegun = true;
    if (takeEvents(st.device, st.ev)) {
        if (timingSpinUs > 0 && kv.spin != nullptr &&
            kv.spin(static_cast<long long>(timingSpinUs * 1000.0), la.stream) != cudaSuccess) {
            (void)cudaGetLastError(); // timed anyway, as without the busy-wait
        }
        if (cudaEventRecord(st.ev[0], la.stream) == cudaSuccess) {
            st.timed = true;
        } else {
            (void)cudaGetLastError();
            giveEvents(st.device, st.ev);
        }
    }
}

void Launch::ready() {
    beginTiming();
    if (st.timed && cudaEventRecord(st.ev[1], la.stream) != cudaSuccess) {
        (void)cudaGetLastError();
        st.timed = false;
        giveEvents(st.device, st.ev);
    }
    rep.timed = st.timed;
    const auto t1 = std::chrono::steady_clock::now();
    rep.hostMicros = std::chrono::duration<double, std::micro>(t1 - st.t0).count();
}

void finishTiming(LaunchState& st, const KernelView& kv, const LaunchArgs& la) {
    LaunchReport& rep = st.report;
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
}

} // namespace detail

// ---- public API: kernel timings --------------------------------------------------------------

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

} // namespace memplace

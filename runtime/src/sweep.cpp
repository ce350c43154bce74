// Sweeps (Decision::Kind::Sweep): every placement of the policy's request measured on this
// launch's arguments (warm-up and timed launches through the program's own launch hook), the
// written memory snapshotted, restored or poisoned before each launch and compared with the
// first placement's outputs, the program's state left as it was; the results to policy.swept().
#include "runtime/src/device.h"
#include "runtime/src/runtime_internal.h"

#include <algorithm>

namespace memplace {

namespace detail {

namespace {

double medianOf(std::vector<double> v) {
    if (v.empty()) {
        return -1;
    }
    std::sort(v.begin(), v.end());
    const std::size_t k = v.size();
    return k % 2 == 1 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

/// One sweep in progress: the memory the launch writes with its snapshots, the comparison's
/// device counter, two events per launch, and the first reason it cannot go on (`fatal`; the
/// remaining entries say it).
struct Sweep {
    Sweep(const SweepHooks& hooks, const SweepRequest& req, cudaStream_t s)
        : hooks(hooks), req(req), s(s), total(std::max(0, req.warmup) + std::max(1, req.repeat)) {}

    const SweepHooks& hooks;
    const SweepRequest& req;
    cudaStream_t s;
    int total; ///< launches per entry: warm-up and timed
    std::vector<WrittenBuffer> bufs;
    unsigned long long* counter = nullptr;
    std::vector<cudaEvent_t> ev;
    std::string fatal;

    bool cudaOk(cudaError_t e, const std::string& what) {
        if (e == cudaSuccess) {
            return true;
        }
        (void)cudaGetLastError();
        if (fatal.empty()) {
            fatal = what + ": " + cudaMessage(e);
        }
        return false;
    }

    // The written arrays, one buffer per distinct pointer, and the __device__ variables the
    // kernel writes by name: restored before each launch (and compared), so that every placement
    // starts from the program's state and the sweep leaves it as it found it; memory written
    // through pointers nobody knows cannot be: no sweep.
    void setUp(const LaunchInfo& info) {
        bufs = writtenBuffers(info, fatal);
        for (WrittenBuffer& b : bufs) {
            if (!fatal.empty()) {
                break;
            }
            if (cudaOk(cudaMalloc(&b.snapshot, b.bytes),
                       "cudaMalloc(sweep snapshot of " + b.names + ")")) {
                (void)cudaOk(
                    cudaMemcpyAsync(b.snapshot, b.ptr, b.bytes, cudaMemcpyDeviceToDevice, s),
                    "cudaMemcpyAsync(snapshot)");
            }
        }
        if (fatal.empty() && hooks.compare != nullptr) {
            (void)cudaOk(cudaMalloc(&counter, sizeof(unsigned long long)), "cudaMalloc(counter)");
        }
        ev.assign(static_cast<std::size_t>(2 * total), nullptr);
        for (cudaEvent_t& e : ev) {
            if (fatal.empty()) {
                (void)cudaOk(cudaEventCreate(&e), "cudaEventCreate");
            }
        }
    }

    bool resetBuffers() {
        for (const WrittenBuffer& b : bufs) {
            const cudaError_t e =
                b.restore ? cudaMemcpyAsync(b.ptr, b.snapshot, b.bytes, cudaMemcpyDeviceToDevice, s)
                          : cudaMemsetAsync(b.ptr, 0xFF, b.bytes, s);
            if (!cudaOk(e, "restoring " + b.names)) {
                return false;
            }
        }
        return true;
    }

    /// What the first launch of an entry placed (a fallback ends the entry).
    static bool notePlaced(SweepResult& res, const LaunchReport& rep, bool& usedL2) {
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
            return false;
        }
        return true;
    }

    /// The entry's launches, each after its buffers are reset, between two events; then the
    /// stream synchronised. False when the entry failed or fell back.
    bool launchEntry(SweepResult& res, std::vector<double>& hostUs, bool& usedL2) {
        SweepCurrent cur{&res.entry.placement, res.entry.dynamic};
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
            if (i == 0 && !notePlaced(res, rep, usedL2)) {
                ok = false;
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
        return ok;
    }

    /// The timed launches' kernel times (the warm-up's are not counted).
    void measure(SweepResult& res, const std::vector<double>& hostUs) const {
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
    }

    /// Outputs: the first entry's are the reference; the others are compared with them.
    void compareOutputs(std::size_t k, SweepResult& res, const SweepResult& first) {
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
        } else if (first.status == "ok") {
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

    /// Leaves the written arrays as the program left them before this launch; frees the rest.
    void tearDown() {
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
    }
};

} // namespace

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
    Sweep sw(hooks, req, la.stream);
    sw.setUp(info);
    if (sw.fatal.empty()) {
        device::prepareSweepJit(r, kv, la, info, req, t0);
    }
    bool usedL2 = false;
    for (std::size_t k = 0; k < req.entries.size() && sw.fatal.empty(); ++k) {
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
        std::vector<double> hostUs;
        if (!sw.launchEntry(res, hostUs, usedL2)) {
            continue;
        }
        sw.measure(res, hostUs);
        sw.compareOutputs(k, res, results[0]);
    }
    for (SweepResult& res : results) {
        if (res.status == "skipped" && res.detail.empty()) {
            res.detail = sw.fatal.empty() ? "not run" : sw.fatal;
        }
    }
    sw.tearDown();
    if (!sw.fatal.empty()) {
        warnOnce(r, std::string(kv.name) + ": sweep stopped: " + sw.fatal);
    }
    (void)cudaGetLastError();
    tlsJustSwept = true;
    std::unique_lock<std::mutex> lock(r.mu);
    if (r.policy) {
        r.policy->swept(info, std::move(results));
    }
}

} // namespace detail

} // namespace memplace

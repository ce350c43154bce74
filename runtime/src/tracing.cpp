// Tracing: a traced launch runs the tracing instantiation with every array global, writing
// warp records into a device buffer (sampled blocks only, when asked), which finishLaunch reads
// back into a TraceResult for the policy or for takeTraces. Shadow launches: shadow.cpp.
#include "runtime/src/device.h"
#include "runtime/src/process_times.h"
#include "runtime/src/runtime_internal.h"

#include <algorithm>
#include <cstdio>

namespace memplace {

namespace detail {

namespace {

/// The trace buffer, `cap` records after its header, on the launch's device (kept between
/// launches, grown when too small); its header written.
bool prepareTraceBuffer(Runtime& r, const LaunchArgs& la, LaunchPlan& plan, LaunchState& st,
                        std::size_t cap) {
    LaunchReport& rep = st.report;
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
    return true;
}

/// The sampled blocks (TraceOptions::blocks, else every sampleEvery-th) into st.sampled and
/// the device bitmap the tracing accessor reads.
bool prepareSampleBitmap(Runtime& r, const LaunchArgs& la, LaunchPlan& plan, LaunchState& st,
                         const TraceOptions& opt, unsigned long long blocks) {
    LaunchReport& rep = st.report;
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
    return true;
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
    if (!prepareTraceBuffer(r, la, plan, st, cap)) {
        return false;
    }
    st.sampled.clear();
    if ((!opt.blocks.empty() || opt.sampleEvery > 1) &&
        !prepareSampleBitmap(r, la, plan, st, opt, blocks)) {
        return false;
    }
    st.traceCapacity = cap;
    st.tracing = true;
    plan.instantiation = LaunchPlan::kTracing;
    device::announceTracedLaunch(st.sampled); // the emulation layer may profile it actively
    plan.sharedBytes = la.sharedBytes;
    for (int j = 0; j < kv.numArrays; ++j) {
        plan.handles[j] = ArrayHandle{};
        plan.handles[j].ptr = const_cast<void*>(la.ptrs[j]);
        rep.arrays[j].requested = Place::Global;
        rep.arrays[j].placed = Place::Global;
        rep.arrays[j].source = "trace";
        // A shadow launch: the tracing instantiation runs on the scratch copies.
        redirectToShadow(st, la, j, plan.handles[j]);
    }
    plan.shadow = st.shadow;
    rep.dispatch = "tracing";
    rep.instantiation = -1;
    rep.sharedBytesTotal = la.sharedBytes;
    return true;
}

/// The trace's description of the launch, before its records.
TraceResult traceHeader(const KernelView& kv, const LaunchArgs& la, const LaunchState& st) {
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
    return tr;
}

/// A trace with more records than the buffer holds is never silent: stderr (unless
/// MEMPLACE_QUIET), the result and the report.
void noteOverflow(Runtime& r, const KernelView& kv, LaunchState& st, TraceResult& tr) {
    tr.overflow = tr.produced > st.traceCapacity;
    tr.dropped = tr.overflow ? tr.produced - st.traceCapacity : 0;
    if (tr.overflow) {
        const std::string msg = std::string(kv.name) +
                                ": trace buffer overflow: " + std::to_string(tr.produced) +
                                " records produced, " + std::to_string(st.traceCapacity) +
                                " kept, " + std::to_string(tr.dropped) + " dropped";
        st.report.errors.push_back(msg);
        if (!r.quiet) {
            std::fprintf(stderr, "memplace: %s\n", msg.c_str());
        }
    }
}

/// The records from the device's trace buffer (lanes outside the active mask zeroed); `tc0`
/// restarts once the kernel is done (collection, not the kernel's own time).
void readTraceBuffer(Runtime& r, const KernelView& kv, const LaunchArgs& la, const LaunchPlan& plan,
                     LaunchState& st, cudaError_t status, TraceResult& tr,
                     std::chrono::steady_clock::time_point& tc0) {
    LaunchReport& rep = st.report;
    TraceBufferHeader h{0, 0};
    const auto waited = std::chrono::steady_clock::now();
    bool ok = status == cudaSuccess && st.traceStatus == cudaSuccess;
    ok = ok &&
         check(cudaMemcpyAsync(&h, plan.sink.header, sizeof h, cudaMemcpyDeviceToHost, la.stream),
               "cudaMemcpyAsync(trace header)", rep);
    ok = ok && check(cudaStreamSynchronize(la.stream), "cudaStreamSynchronize(trace)", rep);
    tc0 = std::chrono::steady_clock::now(); // collection, not the kernel's own time
    addProcessTime(&ProcessTimes::traceWaitMs,
                   std::chrono::duration<double, std::milli>(tc0 - waited).count());
    if (!ok) {
        rep.errors.emplace_back("trace not collected");
        return;
    }
    tr.produced = h.count;
    const std::size_t kept = static_cast<std::size_t>(
        std::min<unsigned long long>(h.count, static_cast<unsigned long long>(st.traceCapacity)));
    tr.records.resize(kept);
    if (kept > 0 && check(cudaMemcpy(tr.records.data(), plan.sink.records,
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
    noteOverflow(r, kv, st, tr);
}

} // namespace

// Tracing: asked by the program (traceLaunches) or by the policy.
bool traceLaunch(Launch& l, const Decision& decision) {
    Runtime& r = l.r;
    if (l.off || l.st.sweepLaunch ||
        (r.traceRemaining <= 0 && decision.kind != Decision::Kind::Trace)) {
        return false;
    }
    const bool byPolicy = r.traceRemaining <= 0;
    const TraceOptions opt = byPolicy ? decision.trace : r.traceOptions;
    if (r.traceRemaining > 0) {
        --r.traceRemaining;
    }
    l.beginTiming(); // the trace buffer's setup is stream work
    bool prepared = false;
    {
        const ProcessTimer timer(&ProcessTimes::traceSetupMs);
        prepared = prepareTracing(r, l.kv, l.la, l.plan, l.st, opt);
    }
    if (prepared) {
        l.st.policyTrace = byPolicy;
        l.ready();
        return true;
    }
    releaseShadow(l.st);
    for (const std::string& e : l.rep.errors) {
        warnOnce(r, std::string(l.kv.name) + ": tracing failed, launching untraced: " + e);
    }
    l.plan.instantiation = 0;
    return false;
}

void collectTrace(Runtime& r, const KernelView& kv, const LaunchArgs& la, LaunchPlan& plan,
                  cudaError_t status) {
    LaunchState& st = *plan.state;
    TraceResult tr = traceHeader(kv, la, st);
    auto tc0 = std::chrono::steady_clock::now();
    // An active profile of this launch (the emulation layer's MEMPLACE_PROFILE=active) replaces
    // the records: the kernel itself ran untraced. Bounded like the device buffer, so that the
    // policy sees the same overflow.
    if (std::optional<std::vector<TraceRecord>> profiled = device::takeProfiledRecords(st.info)) {
        tr.records = std::move(*profiled);
        tr.produced = tr.records.size();
        if (tr.records.size() > st.traceCapacity) {
            tr.records.resize(st.traceCapacity);
            noteOverflow(r, kv, st, tr);
        }
    } else {
        readTraceBuffer(r, kv, la, plan, st, status, tr, tc0);
    }
    tr.collectMicros =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - tc0).count();
    if (st.shadow) {
        const ProcessTimer timer(&ProcessTimes::shadowCompareMs);
        finishShadow(r, kv, la, st, status, tr);
    }
    if (st.policyTrace && r.policy) {
        r.policy->traced(st.info, std::move(tr));
    } else {
        r.traces.push_back(std::move(tr));
    }
}

void releaseTraceBuffers(Runtime& r) {
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
}

} // namespace detail

// ---- public API: tracing ----------------------------------------------------------------------

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

} // namespace memplace

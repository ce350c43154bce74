// The Placer's launch path: what each launch gets (decide), a trace turned into a decision
// (traced), and what a launch reported (launched).

#include "placer/convert.h"
#include "placer_internal.h"
#include "trace/trace_io.h"

#include <filesystem>

namespace memplace::placer {

Placer::Placer(Options options) : impl_(std::make_unique<Impl>()) {
    impl_->options = std::move(options);
}

Placer::~Placer() = default;

const Options& Placer::options() const {
    return impl_->options;
}

Decision Placer::decide(const LaunchInfo& info) {
    Impl& m = *impl_;
    std::lock_guard<std::mutex> g(m.mu);
    Decision d;
    if (m.options.mode == PlacerMode::Off) {
        return d;
    }
    DeviceState& dev = m.device(info.device);
    if (dev.failed) {
        return d;
    }
    const std::string key = gridFamilyKey(info);
    Entry& e = m.entry(info, key, dev);
    const std::size_t ei = static_cast<std::size_t>(&e - m.entries.data());
    ++e.rec.launches;
    if (e.grids.size() < 4096) {
        e.grids.emplace(info.grid.x, info.grid.y, info.grid.z);
        e.rec.grids = e.grids.size();
    }
    if (m.options.mode == PlacerMode::Trace) {
        return m.traceLaunch(info, dev, e, ei);
    }
    switch (e.phase) {
    case Entry::Phase::NeedTrace:
        return m.traceOrWait(info, dev, e, ei);
    case Entry::Phase::Untraced:
    case Entry::Phase::Failed:
        m.launchKinds[info.launchId] = {ei, Kind::Original};
        return d;
    case Entry::Phase::Decided:
        break;
    }
    return m.decidedLaunch(info, e, ei);
}

Decision Placer::Impl::traceLaunch(const LaunchInfo& info, const DeviceState& dev, const Entry& e,
                                   std::size_t ei) {
    Decision d;
    d.kind = Decision::Kind::Trace;
    d.trace = traceOptions(info, dev.sms, e.sampling);
    // The program's results come from the original instantiation (docs/placer.md).
    d.trace.shadow = TraceOptions::Shadow::Require;
    launchKinds[info.launchId] = {ei, Kind::Traced};
    return d;
}

Decision Placer::Impl::traceOrWait(const LaunchInfo& info, const DeviceState& dev, Entry& e,
                                   std::size_t ei) {
    Decision d;
    if (!e.traceCounted) {
        // A trace pays only through the launches after it: none for the first
        // traceAfter launches, and at most tracesPerKernel signatures of a kernel.
        if (e.rec.launches <= static_cast<uint64_t>(options.traceAfter)) {
            launchKinds[info.launchId] = {ei, Kind::Original};
            return d;
        }
        int& traces = tracesOf[{info.device, info.kernel}];
        if (traces >= options.tracesPerKernel) {
            e.phase = Entry::Phase::Untraced;
            e.rec.status = RecordStatus::Untraced;
            e.rec.why = "not traced: " + std::to_string(traces) + " signature(s) of " +
                        info.kernel +
                        " were traced in this run, the bound (MEMPLACE_TRACES_PER_KERNEL); "
                        "the original placement stays";
            launchKinds[info.launchId] = {ei, Kind::Original};
            return d;
        }
        ++traces;
        e.traceCounted = true;
    }
    return traceLaunch(info, dev, e, ei);
}

Decision Placer::Impl::decidedLaunch(const LaunchInfo& info, Entry& e, std::size_t ei) {
    Decision d;
    if (!timedLaunches.empty()) {
        // Timings of earlier launches that completed since: a verified decision may revert now.
        collectTimings(false);
        maybeRevert(e);
    }
    const bool verifying = options.verify && !e.verified;
    const bool placing = e.applied != e.original || !e.jit.empty();
    if (e.tuning || (verifying && placing)) {
        // The kernel's length first: the busy-wait of the timed launches, and whether tuning
        // can pay (Options::tuneMinUs).
        if (std::optional<Decision> p = probeStep(e, ei, info)) {
            return *p;
        }
        if (e.tuning && e.kernelUs >= 0 && e.kernelUs < options.tuneMinUs) {
            skipTuning(e);
        }
    }
    if (e.tuning) {
        if (std::optional<Decision> t = tuneStep(e, ei, info)) {
            return *t;
        }
    }
    const bool checking = options.timeKernels || verifying;
    const bool measureOriginal = checking && e.originalSampled < options.originalSamples && placing;
    if (!placing || measureOriginal) {
        d.time = measureOriginal;
        d.spinUs = timedSpin(e, d.time);
        e.originalSampled += measureOriginal ? 1 : 0;
        launchKinds[info.launchId] = {ei, Kind::Original};
        return d;
    }
    d.kind = Decision::Kind::Place;
    d.placement = e.applied;
    d.jitPlacement = e.jit;
    d.time = verifying && static_cast<int>(e.rec.placedLaunches) < options.verifySamples;
    d.spinUs = timedSpin(e, d.time);
    launchKinds[info.launchId] = {ei, Kind::Placed};
    return d;
}

void Placer::traced(const LaunchInfo& info, TraceResult result) {
    Impl& m = *impl_;
    std::lock_guard<std::mutex> g(m.mu);
    try {
        tracedLocked(info, std::move(result));
    } catch (const std::exception& ex) {
        auto it = m.index.find(gridFamilyKey(info));
        if (it != m.index.end()) {
            Entry& e = m.entries[it->second];
            e.phase = Entry::Phase::Failed;
            e.rec.status = RecordStatus::Failed;
            e.rec.failure = std::string("the Placer failed: ") + ex.what();
        }
        m.warn(info.kernel + ": the Placer failed (" + ex.what() +
               "); the original placement stays");
    }
}

void Placer::tracedLocked(const LaunchInfo& info, TraceResult result) {
    Impl& m = *impl_;
    auto it = m.index.find(gridFamilyKey(info));
    if (it == m.index.end()) {
        return;
    }
    Entry& e = m.entries[it->second];
    KernelRecord& r = e.rec;
    DeviceState& dev = m.device(info.device);
    ++r.traceAttempts;
    // The grid the engine sees (of a grid family, the traced launch's).
    r.grid = info.grid;
    r.blocks = static_cast<uint64_t>(info.grid.x) * info.grid.y * info.grid.z;
    r.signature = signatureText(info);
    r.overheads.collectMs += result.collectMicros / 1000.0;
    r.sampledBlocks = result.sampledBlocks.empty() ? r.blocks : result.sampledBlocks.size();

    if (result.outputsDiffer && m.keepsOriginalForOutputs(info, result, e, dev)) {
        return;
    }
    if (result.overflow && r.traceAttempts < m.options.maxTraceAttempts &&
        m.retraceSmaller(e, result)) {
        return; // the next launch of this signature is traced again
    }
    std::optional<trace::Trace> t = m.convertTrace(info, result, e);
    if (!t) {
        return;
    }
    Expected<EngineResult> er = runEngine(*t, dev.spec.spec, info.compiled, m.options,
                                          JitContext{info.jitAvailable, info.jitSynchronous});
    if (!er) {
        e.phase = Entry::Phase::Failed;
        r.status = RecordStatus::Failed;
        r.failure = er.message();
        m.warn(info.kernel + ": " + r.failure + "; the original placement stays");
        return;
    }
    m.applyEngineResult(info, e, dev, *er);
}

/// The traced run's outputs differ from the original's: whether the signature keeps its
/// original placement for it (PlacerMode::Auto), else noted.
bool Placer::Impl::keepsOriginalForOutputs(const LaunchInfo& info, const TraceResult& result,
                                           Entry& e, DeviceState& dev) {
    KernelRecord& r = e.rec;
    // The program's results are the original instantiation's either way; a placement, whose
    // runs would differ as well, is not asked for (docs/placer.md, "Races").
    const std::string why = "the traced run's outputs differ from the original's (" +
                            result.differing +
                            "): the kernel races, is not deterministic, or its traced build "
                            "computes differently";
    if (options.mode == PlacerMode::Auto) {
        r.source = RecordSource::Trace;
        keepOriginal(e, dev, why);
        warn(info.kernel + ": " + why + "; the original placement stays");
        return true;
    }
    if (std::find(r.notes.begin(), r.notes.end(), why) == r.notes.end()) {
        r.notes.push_back(why);
        warn(info.kernel + ": " + why);
    }
    return false;
}

/// A trace that overflowed its buffer: whether a smaller sampling is left to trace again with.
bool Placer::Impl::retraceSmaller(Entry& e, const TraceResult& result) {
    KernelRecord& r = e.rec;
    const Sampling next = shrink(e.sampling, result.produced, result.capacity);
    if (next.sms != e.sampling.sms || next.blocksPerSm != e.sampling.blocksPerSm) {
        r.notes.push_back("trace " + std::to_string(r.traceAttempts) + " overflowed (" +
                          std::to_string(result.produced) + " records for " +
                          std::to_string(result.capacity) + "): traced again with " +
                          std::to_string(next.sms) + " SM(s), " + std::to_string(next.blocksPerSm) +
                          " block(s) each");
        e.sampling = next;
        return true;
    }
    return false;
}

/// The runtime's records converted to a trace (saved in Options::traceDir when set); none when
/// it does not convert (the signature failed).
std::optional<trace::Trace> Placer::Impl::convertTrace(const LaunchInfo& info,
                                                       const TraceResult& result, Entry& e) {
    KernelRecord& r = e.rec;
    auto t0 = Clock::now();
    ConvertInfo ci;
    auto t = toTrace(info, result, &ci);
    r.overheads.convertMs += msSince(t0);
    r.records = ci.records;
    r.lanes = ci.lanes;
    r.truncated = ci.truncated;
    for (const std::string& n : ci.notes) {
        r.notes.push_back(n);
    }
    if (!t) {
        e.phase = Entry::Phase::Failed;
        r.status = RecordStatus::Failed;
        r.failure = "the trace does not convert: " + t.message();
        warn(info.kernel + ": " + r.failure + "; the original placement stays");
        return std::nullopt;
    }
    if (!options.traceDir.empty()) {
        const std::string file = options.traceDir + "/" + traceName(info.kernel) + "-" +
                                 std::to_string(info.launchId) + ".trace";
        std::error_code ec;
        std::filesystem::create_directories(options.traceDir, ec);
        auto s = trace::saveTrace(*t, file, trace::TraceFormat::Binary, Overwrite::Yes);
        if (!s) {
            warn("cannot save the trace " + file + ": " + s.message());
        }
    }
    return std::move(*t);
}

/// The engine's decision recorded, applied (PlacerMode::Auto), tuned when asked, and cached.
void Placer::Impl::applyEngineResult(const LaunchInfo& info, Entry& e, DeviceState& dev,
                                     const EngineResult& er) {
    KernelRecord& r = e.rec;
    r.overheads.analysisMs += er.analysisMs;
    r.overheads.modelMs += er.modelMs;
    r.overheads.searchMs += er.searchMs;
    r.decision = er.decision;
    r.engineBest = er.best;
    r.compiled = er.compiled;
    r.predictedSeconds = er.decisionSeconds;
    r.originalSeconds = er.originalSeconds;
    r.engineBestSeconds = er.bestSeconds;
    r.why = er.why;
    r.source = RecordSource::Trace;
    r.jitPlacement = er.jitPlacement;
    r.jitPredictedSeconds = er.jitSeconds;
    r.jitWhy = !er.jitWhy.empty()  ? er.jitWhy
               : info.jitAvailable ? std::string()
                                   : "JIT unavailable: " + info.jitUnavailable;
    r.jitState = er.jitPlacement.empty() ? JitState::None : JitState::Pending;
    for (const std::string& n : er.notes) {
        if (std::find(r.notes.begin(), r.notes.end(), n) == r.notes.end()) {
            r.notes.push_back(n);
        }
    }
    if (options.mode == PlacerMode::Trace) {
        r.status = RecordStatus::Observed;
        return; // every launch is traced; nothing is applied
    }
    e.phase = Entry::Phase::Decided;
    e.applied = er.decision;
    e.jit = er.jitPlacement;
    r.candidates = er.candidates;
    e.candidates.clear();
    if (options.verify && options.tuneCandidates >= 2 && !er.candidates.empty()) {
        for (std::size_t i = 0; i < er.candidates.size(); ++i) {
            const Placement& p = er.candidates[i];
            Candidate c;
            c.p = p;
            c.predictedSpeedup = i < er.candidateSpeedups.size() ? er.candidateSpeedups[i] : 1;
            c.compiled =
                std::find(info.compiled.begin(), info.compiled.end(), p) != info.compiled.end();
            e.candidates.push_back(std::move(c));
        }
        e.tuning = true;
        r.tuneState = TuneState::Running;
    }
    r.status = er.original && e.jit.empty() ? RecordStatus::Original : RecordStatus::Placed;
    if (dev.cache) {
        storeDecision(dev, r, er.decision, er.decisionSeconds, er.jitPlacement, er.jitSeconds);
    }
}

void Placer::launched(const LaunchInfo& info, const LaunchReport& report) {
    Impl& m = *impl_;
    std::lock_guard<std::mutex> g(m.mu);
    auto lk = m.launchKinds.find(report.launchId);
    if (lk == m.launchKinds.end()) {
        return;
    }
    const auto [ei, kind] = lk->second;
    m.launchKinds.erase(lk);
    Entry& e = m.entries[ei];
    KernelRecord& r = e.rec;
    switch (kind) {
    case Kind::Traced:
        m.tracedReported(info, e, report);
        break;
    case Kind::Probe:
        if (!report.timed) {
            e.probePending = false; // no timing: the busy-wait stays the most
            e.probed = true;
        }
        [[fallthrough]];
    case Kind::Original:
        ++r.originalLaunches;
        e.originalHostUs.push_back(report.hostMicros);
        break;
    case Kind::Candidate:
        ++r.tuningLaunches;
        break;
    case Kind::Placed:
        m.placedReported(e, report);
        break;
    }
    if (kind == Kind::Candidate && !m.candidateLaunched(e, report)) {
        return; // it ran something else: its time is not the candidate's
    }
    if (report.timed) {
        m.timedLaunches[report.launchId] = {ei, kind};
        m.collectTimings(false);
        m.maybeRevert(e);
    }
}

/// A traced launch's report: traced, or why not (it cannot be shadowed, or tracing failed).
void Placer::Impl::tracedReported(const LaunchInfo& info, Entry& e, const LaunchReport& report) {
    KernelRecord& r = e.rec;
    if (dispatchOf(report) == Dispatch::Tracing) {
        ++r.tracedLaunches;
    } else if (!report.notShadowed.empty()) {
        // Not traced: the launch cannot be shadowed, so tracing it could change its results.
        ++r.originalLaunches;
        if (e.phase == Entry::Phase::NeedTrace && options.mode == PlacerMode::Auto) {
            keepOriginal(e, device(info.device), "not traced: " + report.notShadowed);
        }
    } else {
        // Tracing failed (the runtime says why): the launch ran the original untraced.
        ++r.originalLaunches;
        for (const std::string& err : report.errors) {
            warn(info.kernel + ": tracing failed: " + err);
        }
        if (e.phase == Entry::Phase::NeedTrace && options.mode == PlacerMode::Auto) {
            e.phase = Entry::Phase::Failed;
            r.status = RecordStatus::Failed;
            r.failure = "the launch could not be traced";
        }
    }
}

/// A placed launch's report: its dispatch, the JIT instantiation's state, its fallbacks.
void Placer::Impl::placedReported(Entry& e, const LaunchReport& report) {
    KernelRecord& r = e.rec;
    ++r.placedLaunches;
    e.placedHostUs.push_back(report.hostMicros);
    r.dispatch = dispatchOf(report);
    if (!e.jit.empty()) {
        if (r.dispatch == Dispatch::Jit) {
            if (!e.jitRunning) {
                // From now on placed launches run the JIT placement: measure that one.
                e.jitRunning = true;
                e.placedMs.clear();
                e.placedStreamMs.clear();
            }
            r.jitState = JitState::Ready;
            const std::optional<JitOrigin> origin = parseJitOrigin(report.jit);
            if (origin && *origin != JitOrigin::None) { // the first launch of one
                r.jitOrigin = *origin;
                r.jitCompileMs += report.jitCompileMs;
                r.jitLoadMs += report.jitLoadMs;
                r.jitBackground = report.jitBackground;
            }
        } else if (const std::optional<JitState> given = parseJitState(report.jit);
                   given == JitState::Failed || given == JitState::Unavailable) {
            // The decision stays; no more asking.
            r.jitState = *given;
            r.jitDetail = report.jitDetail;
            r.notes.push_back("just-in-time instantiation " + report.jit + ": " + report.jitDetail +
                              "; the decision stays");
            e.jit.clear();
            if (e.applied == e.original) {
                r.status = RecordStatus::Original;
            }
        } else if (given == JitState::Pending) {
            r.jitState = JitState::Pending;
        }
    }
    for (const ArrayReport& a : report.arrays) {
        if (!a.fallback.empty() && e.fallbackSet.insert(a.name + ": " + a.fallback).second) {
            r.fallbacks.push_back(a.name + " requested " + std::string(placeName(a.requested)) +
                                  ", placed " + std::string(placeName(a.placed)) + ": " +
                                  a.fallback);
        }
    }
}

void Placer::reset() {
    Impl& m = *impl_;
    std::lock_guard<std::mutex> g(m.mu);
    m.collectTimings(true);
    m.entries.clear();
    m.index.clear();
    m.tracesOf.clear();
    m.launchKinds.clear();
    m.timedLaunches.clear();
}

} // namespace memplace::placer

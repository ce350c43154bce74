// Timing and tuning: the kernel timings collected from the runtime, the revert check, the
// probe launch that sets the busy-wait, and on-line tuning of the shortlist.

#include "placer_internal.h"

#include <cstdio>

namespace memplace::placer {

int fastestMeasured(const std::vector<double>& originalMs,
                    const std::vector<std::vector<double>>& candidateMs, double margin) {
    const double o = median(originalMs);
    if (o <= 0) {
        return -1;
    }
    int best = -1;
    double bestMs = o / margin;
    for (std::size_t i = 0; i < candidateMs.size(); ++i) {
        const double c = median(candidateMs[i]);
        if (c > 0 && c < bestMs) {
            best = static_cast<int>(i);
            bestMs = c;
        }
    }
    return best;
}

double timingSpinFor(double kernelUs, const Options& options) {
    if (!(options.timingSpinUs > 0)) {
        return 0;
    }
    if (kernelUs < 0) {
        return options.timingSpinUs; // not measured: the most
    }
    if (kernelUs < options.tuneMinUs) {
        return 0; // not tuned, and its checks are not worth a busy-wait
    }
    return std::min(options.timingSpinUs, options.timingSpinShare * kernelUs);
}

double jitCandidateSavingMs(uint64_t launchesSoFar, double kernelUs, double predictedSpeedup) {
    if (!(kernelUs > 0) || !(predictedSpeedup > 1)) {
        return 0;
    }
    const double share = 1.0 - 1.0 / predictedSpeedup;
    return static_cast<double>(launchesSoFar) * kernelUs / 1000.0 * share;
}

/// Whether candidate `c` may be measured through its just-in-time instantiation: its compile
/// (NVRTC, in the background, waited for at exit) must be repaid within this run. If not, it
/// is dropped with the reason, and the run pays nothing for it.
bool Placer::Impl::jitCandidatePays(Entry& e, Candidate& c) const {
    const double savingMs = jitCandidateSavingMs(e.rec.launches, e.kernelUs, c.predictedSpeedup);
    if (savingMs >= options.jitCompileSeconds * 1000.0) {
        return true;
    }
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  " not measured: its just-in-time build (~%.0f ms) would not pay for itself in "
                  "this run (%llu launches so far of %.1f us, predicted %.3fx: %.2f ms saved)",
                  options.jitCompileSeconds * 1000.0,
                  static_cast<unsigned long long>(e.rec.launches), e.kernelUs, c.predictedSpeedup,
                  savingMs);
    e.rec.notes.push_back("tuning: " + placementText(e.rec.arrays, c.p) + buf);
    c.dropped = true;
    return false;
}

void Placer::Impl::collectTimings(bool wait) {
    if (timedLaunches.empty()) {
        return;
    }
    for (const KernelTiming& t : takeKernelTimings(wait)) {
        auto it = timedLaunches.find(t.launchId);
        if (it == timedLaunches.end()) {
            continue;
        }
        Entry& e = entries[it->second.first];
        if (t.ok) {
            switch (it->second.second) {
            case Kind::Traced:
                e.tracedMs.push_back(t.kernelMs);
                break;
            case Kind::Original:
                // A launch's GPU time: its kernel and the stream work that placed it (none
                // for the original). The tuning and the revert check compare these: a
                // constant upload before every launch is paid every launch.
                e.originalMs.push_back(t.materialiseMs + t.kernelMs);
                break;
            case Kind::Placed:
                e.placedMs.push_back(t.kernelMs);
                e.placedStreamMs.push_back(t.materialiseMs);
                break;
            case Kind::Candidate:
                break;
            case Kind::Probe:
                e.kernelUs = (t.materialiseMs + t.kernelMs) * 1000.0;
                break;
            }
        }
        if (it->second.second == Kind::Probe) {
            e.probePending = false;
            e.probed = true;
        }
        if (it->second.second == Kind::Candidate) {
            auto c = candidateOf.find(t.launchId);
            if (c != candidateOf.end()) {
                Candidate& cand = e.candidates[c->second.first];
                --cand.pending;
                if (t.ok) {
                    cand.ms.push_back(t.materialiseMs + t.kernelMs);
                }
                candidateOf.erase(c);
            }
        }
        timedLaunches.erase(it);
    }
}

void Placer::Impl::maybeRevert(Entry& e) {
#if defined(MEMPLACE_EMU)
    (void)e; // emulation times say nothing about a GPU
#else
    if (!options.revertIfSlower || !(options.timeKernels || options.verify) || e.tuning ||
        e.tuned || e.phase != Entry::Phase::Decided || (e.applied == e.original && !e.jitRunning) ||
        e.originalMs.empty() || e.placedMs.size() < 3) {
        return;
    }
    const double o = median(e.originalMs);
    std::vector<double> launchMs = e.placedMs;
    for (std::size_t i = 0; i < launchMs.size() && i < e.placedStreamMs.size(); ++i) {
        launchMs[i] += e.placedStreamMs[i];
    }
    const double p = median(launchMs);
    if (o > 0 && p > options.revertMargin * o) {
        char buf[200];
        std::snprintf(buf, sizeof buf,
                      "measured %.4f ms placed against %.4f ms original (median of %zu and "
                      "%zu launches): back to the original placement",
                      p, o, e.placedMs.size(), e.originalMs.size());
        e.rec.notes.emplace_back(buf);
        e.rec.status = RecordStatus::Reverted;
        e.applied = e.original;
        e.jit.clear();
        e.jitRunning = false;
        // Later runs start from the original too.
        auto d = devices.find(e.rec.device);
        if (d != devices.end() && d->second.cache) {
            storeDecision(d->second, e.rec, e.original, e.rec.predictedSeconds, {}, 0);
        }
    }
#endif
}

double Placer::Impl::timedSpin(Entry& e, bool timed) const {
#if defined(MEMPLACE_EMU)
    (void)e;
    (void)timed;
    return 0; // no GPU to keep busy: host and "GPU" are one
#else
    const double us = timed ? timingSpinFor(e.kernelUs, options) : 0;
    e.spinMs += us / 1000.0;
    return us;
#endif
}

std::optional<Decision> Placer::Impl::probeStep(Entry& e, std::size_t ei, const LaunchInfo& info) {
    if (e.probed) {
        return std::nullopt;
    }
    Decision d;
    if (!e.probePending) {
        d.time = true; // no busy-wait: the launch's host latency is in it, an upper bound
        e.probePending = true;
        launchKinds[info.launchId] = {ei, Kind::Probe};
        return d;
    }
    // Its time is collected when the GPU has run it; until then the original runs (what
    // these launches would run anyway), and after a few the host waits for it.
    collectTimings(++e.probeWaits > 8);
    if (e.probed) {
        return std::nullopt;
    }
    launchKinds[info.launchId] = {ei, Kind::Original};
    return d;
}

void Placer::Impl::skipTuning(Entry& e) {
    e.tuning = false;
    KernelRecord& r = e.rec;
    r.tuneState = TuneState::Skipped;
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "not tuned: the original launch measured %.1f us, below %.1f us "
                  "(MEMPLACE_TUNE_MIN_US): measuring candidates would cost more than a "
                  "placement can save; the decision is checked without busy-waits",
                  e.kernelUs, options.tuneMinUs);
    r.tuneWhy = buf;
    r.notes.emplace_back(buf);
}

std::optional<Decision> Placer::Impl::tuneStep(Entry& e, std::size_t ei, const LaunchInfo& info) {
    finishTuning(e);
    if (!e.tuning) {
        return std::nullopt;
    }
    Decision d;
    // One placement at a time, as the program will run the one kept: a warm-up launch (not
    // timed: the first launch after a change pays for it, the persisting set-aside put
    // back, a window's lines gone), then its timed launches back to back, so that reuse
    // across launches counts as it will.
    const int samples = tuneSamples();
    const bool jitOk = info.jitAvailable && options.jit;
    for (; e.tuneSlot <= e.candidates.size(); ++e.tuneSlot, e.tuneWarm = false) {
        if (e.tuneSlot == 0) {
            if (e.tuneOriginals >= samples) {
                continue;
            }
            d.time = e.tuneWarm;
            d.spinUs = timedSpin(e, d.time);
            e.tuneOriginals += e.tuneWarm ? 1 : 0;
            e.tuneWarm = true;
            launchKinds[info.launchId] = {ei, Kind::Original};
            return d;
        }
        const std::size_t ci = e.tuneSlot - 1;
        Candidate& c = e.candidates[ci];
        if (c.dropped || static_cast<int>(c.ms.size()) + c.pending >= samples) {
            continue;
        }
        if (c.launches >= samples + 1 + options.tuneMaxWaits) {
            c.dropped = true;
            e.rec.notes.push_back("tuning: " + placementText(e.rec.arrays, c.p) +
                                  " dropped: its instantiation was not ready in time");
            continue;
        }
        c.viaJit = !c.compiled && jitOk;
        // The decision's own JIT placement compiles anyway: measuring it costs no compile.
        if (c.viaJit && c.p != e.jit && !jitCandidatePays(e, c)) {
            continue;
        }
        d.kind = Decision::Kind::Place;
        if (!c.viaJit) {
            d.placement = c.p; // its instantiation, or the dynamic accessor without JIT
        } else {
            d.placement = e.applied; // until the JIT instantiation is ready
            d.jitPlacement = c.p;
        }
        d.time = c.warmed;
        d.spinUs = timedSpin(e, d.time);
        ++c.launches;
        c.pending += c.warmed ? 1 : 0;
        launchKinds[info.launchId] = {ei, Kind::Candidate};
        candidateOf[info.launchId] = {ci, c.warmed};
        return d;
    }
    return std::nullopt;
}

bool Placer::Impl::candidateLaunched(Entry& e, const LaunchReport& report) {
    auto it = candidateOf.find(report.launchId);
    if (it == candidateOf.end()) {
        return false;
    }
    Candidate& c = e.candidates[it->second.first];
    const bool timedLaunch = it->second.second;
    bool same = report.arrays.size() == c.p.size();
    bool fallback = false;
    for (std::size_t i = 0; same && i < c.p.size(); ++i) {
        same = report.arrays[i].placed == c.p[i];
        fallback = fallback || !report.arrays[i].fallback.empty();
    }
    if (c.viaJit && dispatchOf(report) != Dispatch::Jit) {
        same = false; // the decision (or the dynamic accessor) ran while it compiles
    }
    const bool waiting = report.jit == "pending" || report.jit == "not-requested";
    e.tuneJitWaits += !same && waiting ? 1 : 0;
    if (same && !fallback) {
        c.warmed = true;
        c.dispatch = dispatchOf(report);
        if (timedLaunch && report.timed) {
            return true;
        }
    }
    c.pending -= timedLaunch ? 1 : 0;
    candidateOf.erase(it);
    if (!same && !waiting && !c.dropped) {
        c.dropped = true;
        e.rec.notes.push_back("tuning: " + placementText(e.rec.arrays, c.p) +
                              " dropped: it ran as " + report.dispatch +
                              (fallback ? " with a fallback" : "") +
                              (report.jit.empty() ? "" : " (JIT " + report.jit + ")"));
    }
    finishTuning(e);
    return false;
}

void Placer::Impl::finishTuning(Entry& e) {
    if (!e.tuning) {
        return;
    }
    if (std::all_of(e.candidates.begin(), e.candidates.end(),
                    [](const Candidate& c) { return c.dropped; })) {
        e.tuning = false;
        e.rec.tuneState = TuneState::Done;
        e.rec.tuneWhy = "tuning: no candidate could be measured; the decision stays";
        e.rec.notes.push_back(e.rec.tuneWhy);
        return;
    }
    // Every original launch the tuning issued has run and been timed.
    const std::size_t ei = static_cast<std::size_t>(&e - entries.data());
    auto originalPending = [&](const auto& launches) {
        return std::any_of(launches.begin(), launches.end(), [&](const auto& kv) {
            return kv.second.first == ei && kv.second.second == Kind::Original;
        });
    };
    if (e.tuneOriginals < tuneSamples() || originalPending(launchKinds) ||
        originalPending(timedLaunches) || e.originalMs.empty()) {
        return;
    }
    std::vector<std::vector<double>> ms;
    for (const Candidate& c : e.candidates) {
        if (!c.dropped && (c.pending > 0 || static_cast<int>(c.ms.size()) < tuneSamples())) {
            return;
        }
        ms.push_back(c.dropped ? std::vector<double>{} : c.ms);
    }
    e.tuning = false;
    e.tuned = true;
    e.verified = true; // measured against the original: no revert check on top
    KernelRecord& r = e.rec;
    r.tuneState = TuneState::Done;
    r.candidateMs.clear();
    r.candidateDispatch.clear();
    for (const Candidate& c : e.candidates) {
        r.candidateMs.push_back(c.dropped ? -1.0 : median(c.ms));
        r.candidateDispatch.push_back(c.dispatch);
    }
    const int w = fastestMeasured(e.originalMs, ms, options.tuneMargin);
    char buf[200];
    if (w < 0) {
        std::snprintf(buf, sizeof buf,
                      "tuning: none of %zu candidates measured %.2fx faster than the "
                      "original (%.4f ms): the original stays",
                      e.candidates.size(), options.tuneMargin, median(e.originalMs));
        e.applied = e.original;
        e.jit.clear();
    } else {
        const Candidate& c = e.candidates[static_cast<std::size_t>(w)];
        std::snprintf(buf, sizeof buf,
                      "tuning: candidate %d of %zu measured %.4f ms against the original's "
                      "%.4f ms: placed",
                      w + 1, e.candidates.size(), median(c.ms), median(e.originalMs));
        e.applied = c.p;
        e.jit = c.compiled || c.dispatch != Dispatch::Jit ? Placement{} : c.p;
    }
    r.tuneWhy = buf;
    r.notes.emplace_back(buf);
    e.jitRunning = false;
    e.placedMs.clear();
    e.placedStreamMs.clear();
    r.status =
        e.applied == e.original && e.jit.empty() ? RecordStatus::Original : RecordStatus::Placed;
    auto d = devices.find(r.device);
    if (d != devices.end() && d->second.cache) {
        storeDecision(d->second, r, e.applied, r.predictedSeconds, e.jit, 0);
    }
}

} // namespace memplace::placer

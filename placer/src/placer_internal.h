// The Placer's insides shared by its files (placer/src only): the state of a signature
// (Entry) and of a device, and Placer::Impl, whose member functions live in signatures.cpp
// (signatures and the decision cache), tuning.cpp (timings, revert check, on-line tuning)
// and report.cpp (the report); placer.cpp holds the launch path that drives them.
#pragma once

#include "placer/cache.h"
#include "placer/device_spec.h"
#include "placer/placer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace memplace::placer {

namespace detail {

using Clock = std::chrono::steady_clock;

inline double msSince(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

inline double median(std::vector<double> v) {
    if (v.empty()) {
        return -1;
    }
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline std::string placementText(const std::vector<std::string>& names, const Placement& p) {
    std::string s;
    for (std::size_t i = 0; i < p.size() && i < names.size(); ++i) {
        s += (i == 0 ? "" : ",") + names[i] + "=" + std::string(placeName(p[i]));
    }
    return s;
}

/// Probe: an original launch timed without a busy-wait, whose time (the kernel's length, the
/// launch's host latency included) sets the busy-wait of the timed launches after it and
/// whether the signature is tuned (timingSpinFor, Options::tuneMinUs).
enum class Kind : uint8_t { Traced, Original, Placed, Candidate, Probe };

/// One placement of the tuning shortlist and its timed launches.
struct Candidate {
    Placement p;
    bool compiled = false; ///< among the compiled placements (else JIT, or dynamic without JIT)
    std::vector<double> ms;
    int pending = 0;  ///< launched, timing not collected yet
    int launches = 0; ///< launches issued for it (some ran the decision: JIT not ready)
    bool dropped = false;
    double predictedSpeedup = 1; ///< on the original (EngineResult::candidateSpeedups)
    bool viaJit = false; ///< runs as its JIT instantiation (asked for at each of its launches)
    bool warmed = false; ///< its untimed first launch ran it
    Dispatch dispatch = Dispatch::None;
};

struct Entry {
    KernelRecord rec;
    /// NeedTrace: to be traced (after Options::traceAfter launches) or its trace unfinished;
    /// Untraced: never traced (the kernel's trace bound), the original placement.
    enum class Phase : uint8_t { NeedTrace, Decided, Failed, Untraced } phase = Phase::NeedTrace;
    Sampling sampling;
    bool traceCounted = false; ///< counted in its kernel's traces (Options::tracesPerKernel)
    std::set<std::tuple<unsigned, unsigned, unsigned>> grids; ///< launched (a grid family)
    /// The outcome the decision cache holds for it (status, why), not stored again.
    std::optional<std::pair<CachedStatus, std::string>> cachedOutcome;
    /// The kernel's length in microseconds from its probe launch (Kind::Probe); -1: unknown.
    double kernelUs = -1;
    bool probePending = false; ///< its probe launch is not timed yet
    bool probed = false;       ///< probed (kernelUs < 0 after it: the timing failed)
    int probeWaits = 0;        ///< launches that ran the original while the probe's time was out
    int originalSampled = 0;   ///< timed original launches of the revert check issued
    Placement applied;         ///< what placed launches get
    Placement original;        ///< as written: what the runtime launches when no placement is given
    Placement jit;             ///< asked to be compiled just in time (empty: none, or given up)
    bool jitRunning = false;   ///< placed launches run the just-in-time instantiation
    /// The decision was checked on the GPU in an earlier run (from the decision cache): it is
    /// not timed against the original again.
    bool verified = false;
    std::vector<double> tracedMs, originalMs, placedMs, placedStreamMs;
    std::vector<double> originalHostUs, placedHostUs;
    std::set<std::string> fallbackSet;
    std::vector<Candidate> candidates; ///< on-line tuning (Options::tuneCandidates)
    bool tuning = false;               ///< the shortlist is being measured
    bool tuned = false;                ///< measured: no revert check on top
    int tuneOriginals = 0;             ///< timed original launches the tuning issued
    /// Candidate launches that ran the decision while the candidate's JIT instantiation
    /// compiled (report: tuning.jit_waits).
    int tuneJitWaits = 0;
    double spinMs = 0;        ///< busy-waits asked before timed launches (timedSpin)
    std::size_t tuneSlot = 0; ///< measured now: 0 the original, i candidate i - 1
    bool tuneWarm = false;    ///< the original's warm-up launch ran
};

struct DeviceState {
    bool failed = false;
    std::string name;
    int major = 0;
    int minor = 0;
    uint32_t sms = 1;
    DeviceSpec spec;
    std::string fingerprint;
    std::unique_ptr<DecisionCache> cache;
};

/// How a launch ran, the runtime's LaunchReport::dispatch as the Placer's state (the runtime
/// writes no other names than Dispatch's).
inline Dispatch dispatchOf(const LaunchReport& report) {
    return parseDispatch(report.dispatch).value_or(Dispatch::None);
}

/// A placement as JSON: {array name: place name}.
inline nlohmann::json placementJson(const std::vector<std::string>& names, const Placement& p) {
    nlohmann::json j = nlohmann::json::object();
    for (std::size_t i = 0; i < p.size() && i < names.size(); ++i) {
        j[names[i]] = std::string(placeName(p[i]));
    }
    return j;
}

} // namespace detail

using detail::Candidate;
using detail::Clock;
using detail::DeviceState;
using detail::dispatchOf;
using detail::Entry;
using detail::Kind;
using detail::median;
using detail::msSince;
using detail::placementJson;
using detail::placementText;

struct Placer::Impl {
    mutable std::mutex mu;
    Options options;
    std::map<int, DeviceState> devices;
    std::vector<Entry> entries;
    std::unordered_map<std::string, std::size_t> index;
    std::unordered_map<uint64_t, std::pair<std::size_t, Kind>> launchKinds;   // until launched()
    std::unordered_map<uint64_t, std::pair<std::size_t, Kind>> timedLaunches; // until timed
    /// A Candidate launch's shortlist index, and whether it is timed (else a warm-up).
    std::unordered_map<uint64_t, std::pair<std::size_t, bool>> candidateOf;
    std::vector<std::string> warnings;
    std::set<std::string> warned;
    std::string binary;
    /// Signatures traced per (device, kernel) in this run (Options::tracesPerKernel).
    std::map<std::pair<int, std::string>, int> tracesOf;
    /// First launches on each device: properties, spec and decision cache (report, process_ms).
    double deviceSetupMs = 0;

    // signatures.cpp: signatures, devices and the decision cache
    void warn(const std::string& w);
    DeviceState& device(int dev);
    Entry& entry(const LaunchInfo& info, const std::string& key, DeviceState& dev);
    /// A signature whose earlier run left no decision: not traced again for what it came to.
    void cachedOutcome(Entry& e, const CachedDecision& c);
    /// Why a signature launched `launches` times is not traced (yet): Options::traceAfter.
    std::string untracedWhy(uint64_t launches) const;
    /// Leaves the signature in its original placement for good (status `original`, `why`),
    /// cached like a decision.
    void keepOriginal(Entry& e, DeviceState& dev, const std::string& why);
    void storeDecision(DeviceState& dev, const KernelRecord& r, const Placement& placement,
                       double predictedSeconds, const Placement& jitPlacement, double jitSeconds);
    /// Whether a signature has not been traced because it was launched too few times.
    bool waitingForTrace(const Entry& e) const;

    // placer.cpp: the launch path's steps
    Decision traceLaunch(const LaunchInfo& info, const DeviceState& dev, const Entry& e,
                         std::size_t ei);
    /// A signature to be traced: its launch traced, or run as written while it waits
    /// (Options::traceAfter) or its kernel has had its traces (Options::tracesPerKernel).
    Decision traceOrWait(const LaunchInfo& info, const DeviceState& dev, Entry& e, std::size_t ei);
    /// A decided signature's launch: the probe, a tuning step, a timed original or the
    /// placement.
    Decision decidedLaunch(const LaunchInfo& info, Entry& e, std::size_t ei);
    bool keepsOriginalForOutputs(const LaunchInfo& info, const TraceResult& result, Entry& e,
                                 DeviceState& dev);
    bool retraceSmaller(Entry& e, const TraceResult& result);
    std::optional<trace::Trace> convertTrace(const LaunchInfo& info, const TraceResult& result,
                                             Entry& e);
    void applyEngineResult(const LaunchInfo& info, Entry& e, DeviceState& dev,
                           const EngineResult& er);
    void tracedReported(const LaunchInfo& info, Entry& e, const LaunchReport& report);
    void placedReported(Entry& e, const LaunchReport& report);

    // tuning.cpp: timings, the revert check and on-line tuning
    void collectTimings(bool wait);
    void maybeRevert(Entry& e);
    /// Timed launches the tuning takes of the original and of each candidate.
    int tuneSamples() const { return std::max(options.originalSamples, options.verifySamples); }
    /// The busy-wait before a launch the Placer times (Options::timingSpinUs), counted as
    /// overhead.
    double timedSpin(Entry& e, bool timed) const;
    bool jitCandidatePays(Entry& e, Candidate& c) const;
    /// The probe (Kind::Probe) before the first launch timed with a busy-wait: the launch that
    /// measures the kernel's length, or, while its time is out, an untimed original launch;
    /// nothing once the length is known (or its timing failed).
    std::optional<Decision> probeStep(Entry& e, std::size_t ei, const LaunchInfo& info);
    /// No tuning for a kernel too short to earn it back (Options::tuneMinUs).
    void skipTuning(Entry& e);
    /// On-line tuning: the launch that measures the next candidate, or nothing when every
    /// candidate waits for its timings (the decision runs meanwhile).
    std::optional<Decision> tuneStep(Entry& e, std::size_t ei, const LaunchInfo& info);
    /// A candidate's launch is over: whether it ran the candidate's own placement (not the
    /// decision while the JIT instantiation compiles, not a fallback). Its pending timing is
    /// given up when not, and the candidate dropped when it cannot run.
    bool candidateLaunched(Entry& e, const LaunchReport& report);
    /// Ends the tuning once every candidate that is left has its timings: the fastest by
    /// median becomes what placed launches get (the original unless one is tuneMargin faster).
    void finishTuning(Entry& e);

    // report.cpp: each signature's record and its JSON
    void finalise(KernelRecord& r, const Entry& e) const;
    nlohmann::json recordJson(const KernelRecord& r, const Entry& e) const;
    /// The process's host times that no signature's overhead holds (docs/placer.md,
    /// "What the first run costs").
    nlohmann::json processJson() const;
};

/// Host times of the Placer's own process-wide steps (install.cpp), for the report's
/// process_ms: installing it, and the outcomes stored in the decision cache at its end.
struct PlacerProcessTimes {
    double installMs = 0;
    double exitStoreMs = 0;
};
PlacerProcessTimes placerProcessTimes();

} // namespace memplace::placer

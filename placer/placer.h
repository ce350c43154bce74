// The online Placer (docs/placer.md): a memplace::PlacementPolicy that places a kernel's arrays for
// the GPU it runs on and the input it runs with.
//
// On a launch of a kernel with a new input signature (kernel, block, the program's dynamic
// shared memory, device, each array's element size and extent; not the grid) after the first
// (Options::traceAfter) it asks the runtime to trace that launch as a shadow launch: the tracing
// accessor (every array global) writes scratch copies, the original instantiation the program's
// memory, so the results are the original's; outputs that differ between the two (a race) leave
// the kernel original, and a launch that cannot be shadowed is not traced; whole SMs are sampled.
// The records become a trace::Trace, the engine (model::analyze, model::Model, search::search)
// runs with the present GPU's spec, and later launches with that signature get the decision: a
// specialised instantiation when the placement was compiled in, a just-in-time (NVRTC)
// instantiation when that pays, else the dynamic accessor (the runtime picks; the report says
// which). A new signature is placed anew. See docs/placer.md.
//
// Install it with install(), or link the library and it installs itself (MEMPLACE unset, auto or
// trace; not with off or force:...). Environment controls: MEMPLACE, MEMPLACE_SPEC,
// MEMPLACE_SPEC_DIR, MEMPLACE_CACHE, MEMPLACE_REPORT, MEMPLACE_TIME, MEMPLACE_TRACE_DIR,
// MEMPLACE_TRACE_SMS, MEMPLACE_TRACE_BLOCKS, MEMPLACE_TRACE_RECORDS, MEMPLACE_TRACE_AFTER,
// MEMPLACE_TRACES_PER_KERNEL, MEMPLACE_SEARCH, MEMPLACE_TUNE, MEMPLACE_TUNE_MIN_US,
// MEMPLACE_QUIET and others (Options::fromEnvironment; docs/placer.md lists them).
#pragma once

#include "common/expected.h"
#include "memplace/host.h"
#include "placer/convert.h"
#include "search/search.h"
#include "spec/spec.h"
#include "trace/trace.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memplace::placer {

/// What the Placer does with launches (not memplace::Mode, an array's access mode).
enum class PlacerMode : uint8_t {
    Off,   ///< nothing: every launch takes the default placement (MEMPLACE=off)
    Auto,  ///< trace a launch of each signature (the 2nd), place the later ones (the default)
    Trace, ///< trace every launch and run the engine, but never change the placement
};
std::string_view modeName(PlacerMode m); ///< "off", "auto", "trace"

// The states of a signature's record (KernelRecord). Each has one name table (states.cpp):
// stateName gives the name the report and the messages use, parse... reads it back ("" is
// None where a state has one).

/// KernelRecord::status.
enum class RecordStatus : uint8_t {
    Pending,  ///< "pending": to be traced, or its trace unfinished
    Untraced, ///< "untraced": launched too few times to be traced, or beyond the kernel's trace
              ///< bound: the original placement (`why` says which)
    Placed,   ///< "placed"
    Original, ///< "original": the decision is the original placement
    Reverted, ///< "reverted": measured slower, back to the original
    Observed, ///< "observed": trace mode, the decision is reported, not applied
    Failed,   ///< "failed" (see KernelRecord::failure)
};
/// KernelRecord::source: where the decision came from ("", "trace", "cache").
enum class RecordSource : uint8_t { None, Trace, Cache };
/// KernelRecord::tuneState: on-line tuning ("", "running", "done", "skipped").
enum class TuneState : uint8_t { None, Running, Done, Skipped };
/// KernelRecord::jitState: the just-in-time instantiation asked for.
enum class JitState : uint8_t {
    None,       ///< "": none asked for
    Pending,    ///< "pending"
    Ready,      ///< "ready": placed launches run it
    Failed,     ///< "failed"
    Unavailable ///< "unavailable"
};
/// KernelRecord::jitOrigin: where the instantiation came from.
enum class JitOrigin : uint8_t {
    None,     ///< ""
    Compiled, ///< "compiled": NVRTC ran
    Cached,   ///< "cached": from the disk cache
};
/// How a launch ran ("", "specialized", "dynamic", "jit", "tracing"): the runtime's
/// LaunchReport::dispatch read at the boundary (a name the runtime does not write reads as None).
enum class Dispatch : uint8_t { None, Specialized, Dynamic, Jit, Tracing };

std::string_view stateName(RecordStatus s);
std::string_view stateName(RecordSource s);
std::string_view stateName(TuneState s);
std::string_view stateName(JitState s);
std::string_view stateName(JitOrigin s);
std::string_view stateName(Dispatch s);
std::optional<RecordStatus> parseRecordStatus(std::string_view name);
std::optional<RecordSource> parseRecordSource(std::string_view name);
std::optional<TuneState> parseTuneState(std::string_view name);
std::optional<JitState> parseJitState(std::string_view name);
std::optional<JitOrigin> parseJitOrigin(std::string_view name);
std::optional<Dispatch> parseDispatch(std::string_view name);

struct Options {
    PlacerMode mode = PlacerMode::Auto;
    std::string spec; ///< MEMPLACE_SPEC: built-in name or MSL file; empty: by device
    std::string
        specDir; ///< probed specs, <dir>/<device>.msl (MEMPLACE_SPEC_DIR; see device_spec.h)
    /// MEMPLACE_CACHE (decisionCacheDir): decisions persist here; empty: not at all
    std::string cacheDir;
    std::string reportPath;   ///< MEMPLACE_REPORT: JSON report written at exit; empty: none
    std::string traceDir;     ///< MEMPLACE_TRACE_DIR: every trace saved here (binary form)
    bool timeKernels = false; ///< MEMPLACE_TIME=1: CUDA events around every launch
    Sampling sampling;        ///< MEMPLACE_TRACE_SMS, MEMPLACE_TRACE_BLOCKS, MEMPLACE_TRACE_RECORDS
    int maxTraceAttempts = 3; ///< traced launches per signature when the buffer overflows
    /// MEMPLACE_TRACE_AFTER: launches of a signature that run the original placement untraced
    /// before one is traced. A trace costs several launches' time and pays only through the
    /// launches after it, so a signature launched no more often than this is never traced (a
    /// kernel launched once costs nothing). 0: the first launch is traced.
    int traceAfter = 1;
    /// MEMPLACE_TRACES_PER_KERNEL: signatures of one kernel traced in a run; a new signature of
    /// a kernel that has had this many traces keeps the original placement, untraced (a kernel
    /// whose arrays change size at every launch is not traced at every launch).
    int tracesPerKernel = 4;
    search::Algorithm search = search::Algorithm::BranchAndBound; ///< MEMPLACE_SEARCH
    /// MEMPLACE_SEARCH_MS: branch-and-bound stops after this long with the best placement found
    /// (seeded with greedy's answer); 20 arrays took 26 s unbounded (decision 006).
    double searchMs = 50;
    /// The decision must be predicted this much faster than the original, else the original
    /// placement stays (no materialisation, no dynamic accessor for a marginal gain).
    double minSpeedup = 1.02;
    /// Predicted cost factor of a placement that was not compiled in (it runs through the
    /// dynamic accessor, measured 1.00-1.95x on an H100: decision 009): a compiled placement
    /// within this factor of the best is preferred.
    double dynamicPenalty = 1.10;
    /// Just-in-time instantiation (NVRTC) of a placement that was not compiled in, when the
    /// runtime can (LaunchInfo::jitAvailable): asked for when that placement is predicted
    /// faster than the decision without it (by minSpeedup; see docs/placer.md, "When JIT
    /// pays"). The runtime compiles in the background and places the decision meanwhile; with a
    /// synchronous compilation (the launch waits) only when the compile time is repaid within
    /// jitBreakEvenLaunches launches (jitCompileSeconds / predicted seconds saved per launch).
    bool jit = true;
    /// One placement: 0.16-0.38 s measured (NVRTC 13.0, CI host). Also what a tuning candidate
    /// measured just in time must repay within the run (jitCandidateSavingMs).
    double jitCompileSeconds = 0.5;
    double jitBreakEvenLaunches = 1000;
    /// With timeKernels: the first launches after the trace that run the original placement, so
    /// that the report has a measured original to set the decision against.
    int originalSamples = 2;
    /// With timeKernels, on a GPU: go back to the original placement when the decision measures
    /// slower than the original by more than revertMargin (median of 3 or more launches).
    bool revertIfSlower = true;
    /// MEMPLACE_VERIFY (default on; not under the CPU emulation layer): without timeKernels, still
    /// time the first originalSamples original and 3 placed launches after a decision, so that
    /// revertIfSlower can undo a decision the GPU disagrees with (a model miss costs a few
    /// launches, not the run: the 16 KB warp-uniform table placed in constant memory measured
    /// 5.4x slower on an H100).
#if defined(MEMPLACE_EMU)
    bool verify = false; // emulated times say nothing about a GPU
#else
    bool verify = true;
#endif
    int verifySamples = 3; ///< placed launches timed when verifying
    double revertMargin = 1.05;
    /// MEMPLACE_TUNE: with verify, the model's shortlist is measured on the GPU instead of its
    /// one decision: up to this many placements of distinct predicted time (the decision
    /// first, then the next best), each timed over verifySamples launches against the original
    /// (originalSamples), and the fastest by median stays (the original unless one is
    /// tuneMargin faster). 0 or 1: only the decision is checked (revertIfSlower). A model that
    /// ranks the right placement second or third costs a few launches, not the run
    /// (docs/placer.md, "On-line tuning").
    int tuneCandidates = 3;
    /// MEMPLACE_TUNE_EXPLORE: the shortlist also holds, for up to this many places, the best
    /// predicted move of one array there from the original that it does not hold yet (the
    /// fastest predicted first). The model ranks placements on one path better than it ranks
    /// paths against each other (decision 015). 0: none.
    int tuneExplore = 2;
    double tuneMargin = 1.01;
    /// MEMPLACE_TIMING_SPIN_US: the GPU busy-waits this long before every launch the Placer
    /// times (the original's and the decision's samples, the tuning's candidates), so that the
    /// host's work for the launch is not in the measured interval; the evaluation's sweep does
    /// the same. Without it a kernel of a few microseconds measured up to 3x its time in the
    /// tuning's first launches (decision 024). 0: none.
    double timingSpinUs = 100;
    /// The busy-wait is this share of the kernel's measured length (its original launch), at
    /// most timingSpinUs: enough to cover the host's work for a launch (a few microseconds) on
    /// a kernel long enough to tune, without costing a short kernel several times its length.
    double timingSpinShare = 0.25;
    /// MEMPLACE_TUNE_MIN_US: a kernel whose original launch measures below this (microseconds,
    /// the launch's host latency included) is not tuned and its timed launches get no
    /// busy-wait: what a placement can save on it cannot pay for the tuning's launches. Its
    /// decision is still checked (the revert rule, unpadded timings).
    double tuneMinUs = 20;
    /// Launches a candidate may wait for its just-in-time instantiation before it is dropped.
    int tuneMaxWaits = 64;
    bool quiet = false; ///< MEMPLACE_QUIET: no warnings on stderr (they stay in the report)

    /// The options the environment gives; what it could not parse is appended to `warnings`.
    static Options fromEnvironment(std::vector<std::string>* warnings = nullptr);
};

/// Where decisions persist: MEMPLACE_CACHE's folder; `off` (0, no, false, none): nowhere
/// (empty); unset: $XDG_CACHE_HOME/memplace/decisions, else ~/.cache/memplace/decisions.
std::string decisionCacheDir();

/// Overheads of one signature, in milliseconds, split as PORPLE reports them.
struct Overheads {
    /// Profiling: what tracing cost beyond the launch the program made anyway: the traced
    /// kernel's extra time over the original kernel (measured with MEMPLACE_TIME=1, else not
    /// counted: tracedKernelExtraMs < 0), the records' collection and their conversion.
    double profilingMs = 0;
    double tracedKernelMs = -1;      ///< the traced launches' kernel time (events), -1: not timed
    double tracedKernelExtraMs = -1; ///< tracedKernelMs - original kernel time, -1: unknown
    double collectMs = 0;            ///< copying the records back
    double convertMs = 0;            ///< TraceResult -> trace::Trace
    /// Engine: analysis + model + search.
    double engineMs = 0;
    double analysisMs = 0;
    double modelMs = 0;
    double searchMs = 0;
    /// Transform: host time of placed launches above what an original launch takes (deciding,
    /// materialising: texture objects, constant upload enqueue, attributes), plus the stream
    /// work materialisation queued (constant upload, pitched copies; measured with
    /// MEMPLACE_TIME=1). The dynamic accessor's per-launch kernel cost is not measured online
    /// (decision 009; docs/eval/logs/runtime-places.md has it per kernel).
    double transformMs = 0;
    double transformHostMs = 0;
    double transformStreamMs = 0;
    /// Just-in-time instantiation: NVRTC's compile time (also when it ran in the background)
    /// and the module's load time; part of transformMs.
    double transformJitMs = 0;
    /// On-line tuning: the candidates' timed launches beyond what the original placement takes
    /// (their kernel time less as many original medians; a candidate faster than the original
    /// saves time, never counted below zero).
    double tuningMs = 0;
    double totalMs() const { return profilingMs + engineMs + transformMs + tuningMs; }
};

/// One input signature of one kernel: its decision, launches and overheads.
struct KernelRecord {
    std::string kernel;
    std::string key;       ///< gridFamilyKey
    std::string signature; ///< signatureText (of the traced launch, else of the first)
    dim3 grid;             ///< of the traced launch (before one: of the first launch)
    dim3 block;
    uint64_t grids = 1; ///< distinct grids launched with this signature (gridFamilyKey)
    std::size_t sharedBytes = 0;
    int device = 0;
    std::vector<std::string> arrays;
    std::vector<std::size_t> extents; ///< bytes (0: unknown)
    std::vector<std::size_t> elemSizes;

    RecordStatus status = RecordStatus::Pending;
    RecordSource source = RecordSource::None;
    std::string failure;
    Placement decision;                 ///< descriptor order (empty until decided)
    Placement engineBest;               ///< the engine's best placement, compiled or not
    std::string why;                    ///< how the decision follows from the engine's result
    bool compiled = false;              ///< the decision is among the compiled placements
    double predictedSeconds = 0;        ///< of the decision
    double originalSeconds = 0;         ///< of the original placement
    double engineBestSeconds = 0;       ///< of engineBest
    Dispatch dispatch = Dispatch::None; ///< the last placed launch's
    std::vector<std::string> fallbacks; ///< arrays the runtime could not place as decided

    uint64_t launches = 0;
    uint64_t tracedLaunches = 0;
    uint64_t originalLaunches = 0; ///< launches that ran the original placement untraced
    uint64_t placedLaunches = 0;

    // the trace
    uint64_t blocks = 0;
    uint64_t sampledBlocks = 0;
    uint64_t records = 0;
    uint64_t lanes = 0;
    int traceAttempts = 0;
    bool truncated = false;

    Overheads overheads;

    // on-line tuning (Options::tuneCandidates)
    std::vector<Placement> candidates;       ///< the shortlist measured against the original
    std::vector<double> candidateMs;         ///< their medians (-1: not measured, dropped)
    std::vector<Dispatch> candidateDispatch; ///< how each ran: specialized, jit, dynamic
    TuneState tuneState = TuneState::None;
    std::string tuneWhy;         ///< the outcome
    uint64_t tuningLaunches = 0; ///< launches that ran a candidate

    // just in time (NVRTC)
    Placement jitPlacement;         ///< asked for: placed instead of `decision` once compiled
    double jitPredictedSeconds = 0; ///< of jitPlacement
    std::string jitWhy;             ///< why it was asked for (or not)
    JitState jitState = JitState::None;
    std::string jitDetail; ///< the runtime's reason, when failed or unavailable
    JitOrigin jitOrigin = JitOrigin::None;
    double jitCompileMs = 0; ///< NVRTC's time (background unless synchronous)
    double jitLoadMs = 0;    ///< reading the cache entry, loading the module
    bool jitBackground = false;

    // measured kernel times (MEMPLACE_TIME=1), milliseconds, medians; -1: none
    double originalKernelMs = -1;
    double placedKernelMs = -1;
    int originalSamples = 0;
    int placedSamples = 0;

    std::string specName; ///< the spec the engine used
    std::vector<std::string> notes;
};

/// The engine step on its own: analysis, model, search, and the choice among the engine's
/// alternatives and the compiled placements (dynamicPenalty, minSpeedup).
struct EngineResult {
    Placement decision;
    /// A placement that was not compiled in, to compile just in time and place instead of
    /// `decision` once ready (empty: none; see Options::jit).
    Placement jitPlacement;
    double jitSeconds = 0;
    std::string jitWhy;
    bool compiled = false;
    bool original = false; ///< the decision is the original placement
    Placement best;        ///< the engine's best, compiled or not
    double decisionSeconds = 0;
    double bestSeconds = 0;
    double originalSeconds = 0;
    std::string why;
    /// On-line tuning's shortlist (Options::tuneCandidates): placements of distinct predicted
    /// time other than the original, the decision as it runs first.
    std::vector<Placement> candidates;
    std::vector<double> candidateSpeedups; ///< each candidate's predicted speedup on the original
    double analysisMs = 0;
    double modelMs = 0;
    double searchMs = 0;
    std::string algorithm;
    uint64_t evaluated = 0;
    bool exact = false;
    std::vector<std::string> notes;
};
/// What the runtime offers for placements that were not compiled in (LaunchInfo).
struct JitContext {
    bool available = false;   ///< LaunchInfo::jitAvailable
    bool synchronous = false; ///< LaunchInfo::jitSynchronous: the compile stalls the launch
};
Expected<EngineResult> runEngine(const trace::Trace& trace, const spec::Spec& spec,
                                 const std::vector<Placement>& compiled, const Options& options,
                                 const JitContext& jit = {});

/// On-line tuning's exploration (Options::tuneExplore): for each place, the best predicted
/// placement that moves one array from the original there and is not in `shortlist`; the
/// `count` fastest predicted, fastest first.
std::vector<Placement> explorationMoves(const model::Model& m,
                                        const std::vector<Placement>& shortlist, int count);

/// The GPU busy-wait before a launch the Placer times (microseconds), from the kernel's
/// measured length (its original launch, microseconds; negative: not measured): none for a
/// kernel shorter than tuneMinUs, else timingSpinShare of its length, at most timingSpinUs
/// (timingSpinUs when not measured).
double timingSpinFor(double kernelUs, const Options& options);

/// What measuring a candidate through its just-in-time instantiation would save in this run:
/// the signature's launches so far, taken as the launches still to come, each saving the
/// candidate's predicted share of the kernel's measured length (microseconds; negative: not
/// measured). In milliseconds; tuning compiles the candidate only when this repays
/// Options::jitCompileSeconds (a first run pays nothing it does not earn back).
double jitCandidateSavingMs(uint64_t launchesSoFar, double kernelUs, double predictedSpeedup);

/// On-line tuning's choice: the index of the candidate with the least median time, when it is
/// `margin` faster than the original's median; -1 otherwise (the original stays) or when the
/// original has no timing. Candidates without timings are skipped.
int fastestMeasured(const std::vector<double>& originalMs,
                    const std::vector<std::vector<double>>& candidateMs, double margin);

class Placer : public PlacementPolicy {
public:
    explicit Placer(Options options = {});
    ~Placer() override;
    Placer(const Placer&) = delete;
    Placer& operator=(const Placer&) = delete;

    Decision decide(const LaunchInfo& info) override;
    void traced(const LaunchInfo& info, TraceResult trace) override;
    void launched(const LaunchInfo& info, const LaunchReport& report) override;

    const Options& options() const;
    /// Every signature seen so far, in the order first seen (kernel times collected first).
    std::vector<KernelRecord> kernels() const;
    /// The report (docs/placer.md): device, spec, mode, every signature.
    std::string reportJson() const;
    /// Writes the report atomically; false (and `error`) when it cannot.
    bool writeReport(const std::string& path, std::string* error = nullptr) const;
    /// Every warning so far (also on stderr unless quiet).
    std::vector<std::string> warnings() const;
    /// Forgets every decision and signature (the disk cache stays).
    void reset();
    /// Stores in the decision cache what the signatures without a decision came to (untraced,
    /// a trace not finished, failed), so that a later run does not pay for them again; at exit
    /// and when uninstalled. Nothing when the cache is off (MEMPLACE_CACHE=off).
    void storeOutcomes();

private:
    void tracedLocked(const LaunchInfo& info, TraceResult trace);
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// Installs a Placer with these options as the runtime's PlacementPolicy (replacing any) and
/// returns it; with PlacerMode::Off it uninstalls. timeKernels switches the runtime's kernel timing
/// on.
std::shared_ptr<Placer> install(const Options& options = Options::fromEnvironment());
/// Uninstalls the Placer (writing its report when it has a reportPath).
void uninstall();
/// The installed Placer, or null.
std::shared_ptr<Placer> installed();

} // namespace memplace::placer

#include "placer/placer.h"

#include "common/env.h"
#include "common/file_io.h"
#include "common/json.h"
#include "model/analysis.h"
#include "model/model.h"
#include "model/occupancy.h"
#include "placer/cache.h"
#include "placer/device_spec.h"
#include "trace/trace_io.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

namespace memplace::placer {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
    if (v.empty()) {
        return -1;
    }
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string placementText(const std::vector<std::string>& names, const Placement& p) {
    std::string s;
    for (std::size_t i = 0; i < p.size() && i < names.size(); ++i) {
        s += (i == 0 ? "" : ",") + names[i] + "=" + std::string(placeName(p[i]));
    }
    return s;
}

} // namespace

std::string_view modeName(Mode m) {
    switch (m) {
    case Mode::Off:
        return "off";
    case Mode::Trace:
        return "trace";
    default:
        return "auto";
    }
}

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

// ---- options -------------------------------------------------------------------------------

Options Options::fromEnvironment(std::vector<std::string>* warnings) {
    Options o;
    std::vector<std::string> w;
    const env::EnvConfig memplace = env::parseMemplaceEnv(std::getenv("MEMPLACE"));
    // The runtime reports its own parse warnings; here only the mode matters.
    switch (memplace.mode) {
    case env::EnvConfig::Mode::Off:
    case env::EnvConfig::Mode::Force:
        o.mode = Mode::Off;
        break;
    case env::EnvConfig::Mode::Trace:
        o.mode = Mode::Trace;
        break;
    default:
        o.mode = Mode::Auto;
        break;
    }
    o.spec = env::readText("MEMPLACE_SPEC").value_or(o.spec);
    o.specDir = defaultSpecDir();
    o.cacheDir = env::readText("MEMPLACE_CACHE").value_or(o.cacheDir);
    o.reportPath = env::readText("MEMPLACE_REPORT").value_or(o.reportPath);
    o.traceDir = env::readText("MEMPLACE_TRACE_DIR").value_or(o.traceDir);
    o.timeKernels = env::readSwitch("MEMPLACE_TIME", o.timeKernels, w);
#if !defined(MEMPLACE_EMU)
    o.verify = env::readSwitch("MEMPLACE_VERIFY", o.verify, w);
#endif
    o.quiet = env::readSwitch("MEMPLACE_QUIET", o.quiet, w);
    env::readNumber("MEMPLACE_TRACE_SMS", o.sampling.sms, w);
    env::readNumber("MEMPLACE_TRACE_BLOCKS", o.sampling.blocksPerSm, w);
    env::readNumber("MEMPLACE_TRACE_WAVES", o.sampling.waves, w);
    env::readNumber("MEMPLACE_TRACE_RECORDS", o.sampling.maxRecords, w);
    env::readNumber("MEMPLACE_SEARCH_MS", o.searchMs, w);
    env::readNumber("MEMPLACE_TUNE", o.tuneCandidates, w);
    env::readNumber("MEMPLACE_TUNE_EXPLORE", o.tuneExplore, w);
    env::readNumber("MEMPLACE_TIMING_SPIN_US", o.timingSpinUs, w);
    env::readNumber("MEMPLACE_TUNE_MIN_US", o.tuneMinUs, w);
    env::readNumber("MEMPLACE_TRACE_AFTER", o.traceAfter, w);
    env::readNumber("MEMPLACE_TRACES_PER_KERNEL", o.tracesPerKernel, w);
    if (const char* v = env::value("MEMPLACE_SEARCH")) {
        if (auto a = search::parseAlgorithm(v)) {
            o.search = *a;
        } else {
            w.push_back(env::badValue(*env::find("MEMPLACE_SEARCH"), v));
        }
    }
    if (warnings != nullptr) {
        warnings->insert(warnings->end(), w.begin(), w.end());
    } else if (!o.quiet) {
        for (const std::string& s : w) {
            std::fprintf(stderr, "memplace: %s\n", s.c_str());
        }
    }
    return o;
}

// ---- the engine step -----------------------------------------------------------------------

std::vector<Placement> explorationMoves(const model::Model& m,
                                        const std::vector<Placement>& shortlist, int count) {
    const Placement original = m.original();
    std::vector<std::pair<double, Placement>> moves; // the best move per place
    for (Place q : kAllPlaces) {
        std::pair<double, Placement> best{model::kInfeasible, {}};
        for (std::size_t i = 0; i < m.arrayCount(); ++i) {
            const auto& places = m.candidates(i);
            if (std::find(places.begin(), places.end(), q) == places.end() ||
                m.equivalent(i, q, original[i])) {
                continue;
            }
            Placement p = original;
            p[i] = q;
            const double c = m.cycles(p);
            if (c < best.first &&
                std::find(shortlist.begin(), shortlist.end(), p) == shortlist.end()) {
                best = {c, std::move(p)};
            }
        }
        if (best.first < model::kInfeasible) {
            moves.push_back(std::move(best));
        }
    }
    std::stable_sort(moves.begin(), moves.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Placement> out;
    for (std::size_t k = 0; k < moves.size() && static_cast<int>(k) < count; ++k) {
        out.push_back(std::move(moves[k].second));
    }
    return out;
}

Expected<EngineResult> runEngine(const trace::Trace& trace, const spec::Spec& spec,
                                 const std::vector<Placement>& compiled, const Options& options,
                                 const JitContext& jit) {
    EngineResult r;
    auto t0 = Clock::now();
    auto st = model::analyze(trace, spec);
    if (!st) {
        return std::move(st).takeFailure();
    }
    r.analysisMs = msSince(t0);
    r.notes = st->notes;
    t0 = Clock::now();
    const model::Model m(spec, std::move(*st));
    r.modelMs = msSince(t0);
    t0 = Clock::now();
    search::SearchOptions so;
    so.algorithm = options.search;
    // Ties are common (the read-only path costs what global does): enough alternatives for
    // the tuning shortlist's distinct predicted times.
    so.topK = static_cast<std::size_t>(std::max(8, 8 * options.tuneCandidates));
    so.timeLimitSeconds = options.searchMs / 1000.0;
    auto sr = search::search(m, so);
    if (!sr) {
        return std::move(sr).takeFailure();
    }
    const Placement original = m.original();
    const double originalCycles = m.cycles(original);
    r.algorithm = std::string(search::algorithmName(sr->algorithm));
    r.evaluated = sr->evaluated;
    r.exact = sr->exact;
    r.notes.insert(r.notes.end(), sr->notes.begin(), sr->notes.end());
    r.best = sr->best.placement;
    r.bestSeconds = m.seconds(sr->best.cycles);
    r.originalSeconds = m.seconds(originalCycles);

    // The choice: the engine's alternatives and every compiled placement, a placement that is
    // not compiled priced with the dynamic accessor's penalty.
    auto isCompiled = [&](const Placement& p) {
        return std::find(compiled.begin(), compiled.end(), p) != compiled.end() || p == original;
    };
    struct Option {
        Placement p;
        double cycles;
        double effective;
        bool compiled;
        std::size_t changed; ///< arrays placed other than as written
    };
    std::vector<Option> options_;
    auto add = [&](const Placement& p, double cycles) {
        for (const Option& o : options_) {
            if (o.p == p) {
                return;
            }
        }
        const bool c = isCompiled(p);
        std::size_t changed = 0;
        for (std::size_t i = 0; i < p.size(); ++i) {
            changed += p[i] != original[i] ? 1 : 0;
        }
        options_.push_back({p, cycles, cycles * (c ? 1.0 : options.dynamicPenalty), c, changed});
    };
    // Each placement also with every array that costs the same where the program keeps it put
    // back there (the model cannot tell the read-only path from global on sm_70+, the compiler
    // can: what the program's author wrote is kept unless the model sees a difference).
    auto consider = [&](const Placement& p, double cycles) {
        if (!(cycles < model::kInfeasible)) {
            return;
        }
        add(p, cycles);
        Placement q = p;
        for (std::size_t i = 0; i < q.size(); ++i) {
            if (m.equivalent(i, q[i], original[i])) {
                q[i] = original[i];
            }
        }
        if (q != p) {
            add(q, cycles);
        }
    };
    for (const search::Candidate& c : sr->alternatives) {
        consider(c.placement, c.cycles);
    }
    consider(sr->best.placement, sr->best.cycles);
    for (const Placement& p : compiled) {
        if (p.size() == m.arrayCount() && m.feasible(p)) {
            consider(p, m.cycles(p));
        }
    }
    r.searchMs = msSince(t0);
    // On-line tuning's shortlist, once the decision is known: the decision as it runs (its JIT
    // placement when there is one), then the fastest predicted placements, one per predicted
    // time (among equals a compiled one, then the fewest changes), never the original.
    auto shortlist = [&] {
        if (options.tuneCandidates < 2) {
            return;
        }
        std::vector<const Option*> order;
        for (const Option& o : options_) {
            order.push_back(&o);
        }
        std::stable_sort(order.begin(), order.end(), [](const Option* a, const Option* b) {
            return std::make_tuple(a->cycles, !a->compiled, a->changed) <
                   std::make_tuple(b->cycles, !b->compiled, b->changed);
        });
        std::vector<double> times{originalCycles};
        auto distinct = [&](double c) {
            return std::none_of(times.begin(), times.end(),
                                [&](double t) { return std::abs(c - t) <= 1e-6 * std::max(c, t); });
        };
        const Placement& first = r.jitPlacement.empty() ? r.decision : r.jitPlacement;
        if (first != original) {
            r.candidates.push_back(first);
            times.push_back(m.cycles(first));
        }
        for (const Option* o : order) {
            if (r.candidates.size() >= static_cast<std::size_t>(options.tuneCandidates)) {
                break;
            }
            if (o->p != original && distinct(o->cycles)) {
                r.candidates.push_back(o->p);
                times.push_back(o->cycles);
            }
        }
        for (const Placement& p : explorationMoves(m, r.candidates, options.tuneExplore)) {
            r.candidates.push_back(p);
        }
    };
    // The least effective time; among equals a compiled one, then the one closest to the
    // program as written.
    const Option* best = nullptr;
    for (const Option& o : options_) {
        if (best == nullptr || o.effective < best->effective ||
            (o.effective == best->effective &&
             std::make_pair(!o.compiled, o.changed) <
                 std::make_pair(!best->compiled, best->changed))) {
            best = &o;
        }
    }
    if (best == nullptr || !(originalCycles < model::kInfeasible)) {
        r.decision = original;
        r.compiled = true;
        r.original = true;
        r.decisionSeconds = r.originalSeconds;
        r.why = best == nullptr ? "no feasible placement: the original stays"
                                : "the original placement is infeasible in the model; it stays";
        return r;
    }
    // Just in time: the fastest placement that was not compiled in, when it beats the decision
    // (effective time: a placement through the dynamic accessor carries the penalty) by the
    // threshold; with a synchronous compilation only when the compile pays within the limit.
    auto considerJit = [&](double decisionEffective) {
        if (!jit.available || !options.jit) {
            return;
        }
        const Option* p = nullptr;
        for (const Option& o : options_) {
            if (!o.compiled && (p == nullptr || o.cycles < p->cycles ||
                                (o.cycles == p->cycles && o.changed < p->changed))) {
                p = &o;
            }
        }
        if (p == nullptr || !(p->cycles * options.minSpeedup < originalCycles)) {
            return;
        }
        const bool sameAsDynamic = !r.compiled && p->p == r.decision;
        if (!sameAsDynamic && !(p->cycles * options.minSpeedup < decisionEffective)) {
            return;
        }
        const double saved = m.seconds(decisionEffective) - m.seconds(p->cycles);
        char buf[240];
        if (jit.synchronous) {
            const double launches =
                saved > 0 ? options.jitCompileSeconds / saved : std::numeric_limits<double>::max();
            if (!(launches <= options.jitBreakEvenLaunches)) {
                std::snprintf(buf, sizeof buf,
                              "not compiled just in time: a synchronous compilation (%.1f s) "
                              "would take %.0f launches to pay, above the limit of %.0f",
                              options.jitCompileSeconds, launches, options.jitBreakEvenLaunches);
                r.jitWhy = buf;
                return;
            }
            std::snprintf(buf, sizeof buf,
                          "predicted %.3fx the original; compiled just in time (synchronously: "
                          "pays after about %.0f launches)",
                          originalCycles / std::max(p->cycles, 1e-30), launches);
        } else {
            std::snprintf(buf, sizeof buf,
                          "predicted %.3fx the original, %.3fx the decision's %s; compiled just in "
                          "time in the background, the decision runs meanwhile",
                          originalCycles / std::max(p->cycles, 1e-30),
                          decisionEffective / std::max(p->cycles, 1e-30),
                          r.compiled ? "instantiation" : "dynamic accessor");
        }
        r.jitPlacement = p->p;
        r.jitSeconds = m.seconds(p->cycles);
        r.jitWhy = buf;
    };
    if (!(best->effective * options.minSpeedup < originalCycles)) {
        r.decision = original;
        r.compiled = true;
        r.original = true;
        r.decisionSeconds = r.originalSeconds;
        char buf[160];
        std::snprintf(buf, sizeof buf,
                      "the best placement is predicted %.3fx the original%s, below the %.2fx "
                      "threshold: the original stays",
                      best->cycles > 0 ? originalCycles / best->cycles : 1.0,
                      best->compiled ? "" : " (not compiled)", options.minSpeedup);
        r.why = buf;
        considerJit(originalCycles);
        shortlist();
        return r;
    }
    r.decision = best->p;
    r.compiled = best->compiled;
    r.original = best->p == original;
    r.decisionSeconds = m.seconds(best->cycles);
    char buf[200];
    bool engineBest = best->p.size() == sr->best.placement.size();
    for (std::size_t i = 0; engineBest && i < best->p.size(); ++i) {
        engineBest = m.equivalent(i, best->p[i], sr->best.placement[i]);
    }
    if (engineBest) {
        std::snprintf(buf, sizeof buf, "the engine's best, predicted %.3fx the original%s",
                      originalCycles / std::max(best->cycles, 1e-30),
                      best->compiled ? ", compiled" : ", through the dynamic accessor");
    } else {
        std::snprintf(buf, sizeof buf,
                      "a compiled placement predicted %.3fx the original, preferred to the "
                      "engine's best (%.3fx, not compiled) with the %.2fx dynamic-accessor penalty",
                      originalCycles / std::max(best->cycles, 1e-30),
                      originalCycles / std::max(sr->best.cycles, 1e-30), options.dynamicPenalty);
    }
    r.why = buf;
    considerJit(best->effective);
    shortlist();
    return r;
}

// ---- the Placer ----------------------------------------------------------------------------

namespace {

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
    bool viaJit = false; ///< runs as its JIT instantiation (asked for at each of its launches)
    bool warmed = false; ///< its untimed first launch ran it
    std::string dispatch;
};

struct Entry {
    KernelRecord rec;
    /// NeedTrace: to be traced (after Options::traceAfter launches) or its trace unfinished;
    /// Untraced: never traced (the kernel's trace bound), the original placement.
    enum class Phase : uint8_t { NeedTrace, Decided, Failed, Untraced } phase = Phase::NeedTrace;
    Sampling sampling;
    bool traceCounted = false; ///< counted in its kernel's traces (Options::tracesPerKernel)
    std::set<std::tuple<unsigned, unsigned, unsigned>> grids; ///< launched (a grid family)
    /// The outcome the decision cache holds for it ("status|why"), not stored again.
    std::string cachedOutcome;
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
    double spinMs = 0;                 ///< busy-waits asked before timed launches (timedSpin)
    std::size_t tuneSlot = 0;          ///< measured now: 0 the original, i candidate i - 1
    bool tuneWarm = false;             ///< the original's warm-up launch ran
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

} // namespace

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

    void warn(const std::string& w) {
        if (!warned.insert(w).second) {
            return;
        }
        warnings.push_back(w);
        if (!options.quiet) {
            std::fprintf(stderr, "memplace placer: %s\n", w.c_str());
        }
    }

    DeviceState& device(int dev) {
        auto it = devices.find(dev);
        if (it != devices.end()) {
            return it->second;
        }
        DeviceState& d = devices[dev];
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
            (void)cudaGetLastError();
            d.failed = true;
            warn("cannot read the properties of device " + std::to_string(dev) +
                 "; its launches keep the original placement");
            return d;
        }
        d.name = prop.name;
        d.major = prop.major;
        d.minor = prop.minor;
        auto s = selectSpec(options.spec, options.specDir, d.name, d.major, d.minor);
        if (!s) {
            d.failed = true;
            warn("device " + std::to_string(dev) + " (" + d.name + "): " + s.message() +
                 "; its launches keep the original placement");
            return d;
        }
        d.spec = std::move(*s);
        for (const std::string& w : d.spec.warnings) {
            warn(w);
        }
        d.sms = d.spec.spec.processor.sms > 0
                    ? d.spec.spec.processor.sms
                    : static_cast<uint32_t>(std::max(1, prop.multiProcessorCount));
        d.fingerprint = d.spec.from + ":" + hash16(spec::printSpec(d.spec.spec));
        if (!options.cacheDir.empty()) {
            d.cache = std::make_unique<DecisionCache>(options.cacheDir, BinaryId::current(), d.name,
                                                      d.fingerprint);
            for (const std::string& w : d.cache->load()) {
                warn(w);
            }
        }
        return d;
    }

    Entry& entry(const LaunchInfo& info, const std::string& key, DeviceState& dev) {
        auto it = index.find(key);
        if (it != index.end()) {
            return entries[it->second];
        }
        index.emplace(key, entries.size());
        Entry& e = entries.emplace_back();
        KernelRecord& r = e.rec;
        r.kernel = info.kernel;
        r.key = key;
        r.signature = signatureText(info);
        r.grid = info.grid;
        r.block = info.block;
        r.sharedBytes = info.sharedBytes;
        r.device = info.device;
        r.blocks = static_cast<uint64_t>(info.grid.x) * info.grid.y * info.grid.z;
        for (const ArrayInfo& a : info.arrays) {
            r.arrays.push_back(a.name);
            r.extents.push_back(a.extentKnown ? a.extentBytes : 0);
            r.elemSizes.push_back(a.elemSize);
            e.original.push_back(a.original);
        }
        r.specName = dev.spec.from;
        // Trace the first waves of whole SMs: the resident blocks per SM of the original launch.
        const model::Occupancy occ = model::occupancy(
            dev.spec.spec.processor,
            static_cast<uint32_t>(info.block.x * info.block.y * info.block.z),
            info.registers > 0 ? std::optional<uint32_t>(static_cast<uint32_t>(info.registers))
                               : std::nullopt,
            info.staticSharedBytes + info.sharedBytes);
        e.sampling = resolveSampling(options.sampling, occ.blocksPerSm);
        const CachedDecision* c = dev.cache ? dev.cache->find(key) : nullptr;
        if (c != nullptr && c->arrays == r.arrays && !c->decided()) {
            cachedOutcome(e, *c);
        } else if (c != nullptr) {
            if (c->arrays == r.arrays && c->placement.size() == r.arrays.size()) {
                e.phase = Entry::Phase::Decided;
                e.verified = true;
                r.source = "cache";
                r.decision = c->placement;
                e.applied = c->placement;
                r.predictedSeconds = c->predictedSeconds;
                r.originalSeconds = c->originalSeconds;
                r.status = c->placement == e.original ? "original" : "placed";
                r.why = "from the decision cache " + dev.cache->file().string();
                if (!c->engineBest.empty()) {
                    r.notes.push_back("engine's best when decided: " + c->engineBest);
                }
                r.compiled = c->placement == e.original ||
                             std::find(info.compiled.begin(), info.compiled.end(), c->placement) !=
                                 info.compiled.end();
                if (info.jitAvailable && options.jit && c->jitPlacement.size() == r.arrays.size()) {
                    e.jit = c->jitPlacement;
                    r.jitPlacement = c->jitPlacement;
                    r.jitPredictedSeconds = c->jitSeconds;
                    r.jitWhy = "from the decision cache";
                    r.jitState = "pending";
                    r.status = "placed";
                }
            }
        }
        return e;
    }

    /// A signature whose earlier run left no decision: not traced again for what it came to.
    void cachedOutcome(Entry& e, const CachedDecision& c) {
        KernelRecord& r = e.rec;
        e.cachedOutcome = c.status + "|" + c.why;
        if (c.status == "failed") {
            e.phase = Entry::Phase::Failed;
            r.status = "failed";
            r.source = "cache";
            r.failure = "in an earlier run (decision cache): " + c.why;
        } else if (c.status == "untraced" && c.traceBound) {
            e.phase = Entry::Phase::Untraced;
            r.status = "untraced";
            r.source = "cache";
            r.why = c.why + " (in an earlier run; decision cache)";
        } else if (c.status == "untraced") {
            // Launched too few times to be traced: the same rule applies in this run.
            r.source = "cache";
            r.notes.push_back("an earlier run did not trace it either: " + c.why);
        } else if (c.status == "pending") {
            // Its trace overflowed and the run ended before the next attempt: this run goes on
            // from there (fewer blocks), the attempts counted across runs.
            r.traceAttempts = std::max(0, c.traceAttempts);
            if (c.sms > 0 && c.blocksPerSm > 0) {
                e.sampling.sms = c.sms;
                e.sampling.blocksPerSm = c.blocksPerSm;
            }
            r.notes.push_back("an earlier run's trace was not finished (" +
                              std::to_string(c.traceAttempts) + " attempt(s)): traced with " +
                              std::to_string(e.sampling.sms) + " SM(s), " +
                              std::to_string(e.sampling.blocksPerSm) + " block(s) each");
        }
    }

    /// Why a signature launched `launches` times is not traced (yet): Options::traceAfter.
    std::string untracedWhy(uint64_t launches) const {
        return "not traced: launched " +
               (launches == 1 ? std::string("once") : std::to_string(launches) + " times") +
               " (a signature is traced at its launch " + std::to_string(options.traceAfter + 1) +
               ": a trace pays only through the launches after it; MEMPLACE_TRACE_AFTER)";
    }

    void collectTimings(bool wait) {
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

    void maybeRevert(Entry& e) {
#if defined(MEMPLACE_EMU)
        (void)e; // emulation times say nothing about a GPU
#else
        if (!options.revertIfSlower || !(options.timeKernels || options.verify) || e.tuning ||
            e.tuned || e.phase != Entry::Phase::Decided ||
            (e.applied == e.original && !e.jitRunning) || e.originalMs.empty() ||
            e.placedMs.size() < 3) {
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
            e.rec.status = "reverted";
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

    /// Timed launches the tuning takes of the original and of each candidate.
    int tuneSamples() const { return std::max(options.originalSamples, options.verifySamples); }

    /// The busy-wait before a launch the Placer times (Options::timingSpinUs), counted as
    /// overhead.
    double timedSpin(Entry& e, bool timed) const {
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

    /// The probe (Kind::Probe) before the first launch timed with a busy-wait: the launch that
    /// measures the kernel's length, or, while its time is out, an untimed original launch;
    /// nothing once the length is known (or its timing failed).
    std::optional<Decision> probeStep(Entry& e, std::size_t ei, const LaunchInfo& info) {
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

    /// No tuning for a kernel too short to earn it back (Options::tuneMinUs).
    void skipTuning(Entry& e) {
        e.tuning = false;
        KernelRecord& r = e.rec;
        r.tuneState = "skipped";
        char buf[320];
        std::snprintf(buf, sizeof buf,
                      "not tuned: the original launch measured %.1f us, below %.1f us "
                      "(MEMPLACE_TUNE_MIN_US): measuring candidates would cost more than a "
                      "placement can save; the decision is checked without busy-waits",
                      e.kernelUs, options.tuneMinUs);
        r.tuneWhy = buf;
        r.notes.emplace_back(buf);
    }

    /// On-line tuning: the launch that measures the next candidate, or nothing when every
    /// candidate waits for its timings (the decision runs meanwhile).
    std::optional<Decision> tuneStep(Entry& e, std::size_t ei, const LaunchInfo& info) {
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
            d.kind = Decision::Kind::Place;
            c.viaJit = !c.compiled && jitOk;
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

    /// A candidate's launch is over: whether it ran the candidate's own placement (not the
    /// decision while the JIT instantiation compiles, not a fallback). Its pending timing is
    /// given up when not, and the candidate dropped when it cannot run.
    bool candidateLaunched(Entry& e, const LaunchReport& report) {
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
        if (c.viaJit && report.dispatch != "jit") {
            same = false; // the decision (or the dynamic accessor) ran while it compiles
        }
        const bool waiting = report.jit == "pending" || report.jit == "not-requested";
        if (same && !fallback) {
            c.warmed = true;
            c.dispatch = report.dispatch;
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

    /// Ends the tuning once every candidate that is left has its timings: the fastest by
    /// median becomes what placed launches get (the original unless one is tuneMargin faster).
    void finishTuning(Entry& e) {
        if (!e.tuning) {
            return;
        }
        if (std::all_of(e.candidates.begin(), e.candidates.end(),
                        [](const Candidate& c) { return c.dropped; })) {
            e.tuning = false;
            e.rec.tuneState = "done";
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
        r.tuneState = "done";
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
            e.jit = c.compiled || c.dispatch != "jit" ? Placement{} : c.p;
        }
        r.tuneWhy = buf;
        r.notes.emplace_back(buf);
        e.jitRunning = false;
        e.placedMs.clear();
        e.placedStreamMs.clear();
        r.status = e.applied == e.original && e.jit.empty() ? "original" : "placed";
        auto d = devices.find(r.device);
        if (d != devices.end() && d->second.cache) {
            storeDecision(d->second, r, e.applied, r.predictedSeconds, e.jit, 0);
        }
    }

    /// Leaves the signature in its original placement for good (status `original`, `why`),
    /// cached like a decision.
    void keepOriginal(Entry& e, DeviceState& dev, const std::string& why) {
        KernelRecord& r = e.rec;
        e.phase = Entry::Phase::Decided;
        e.applied = e.original;
        e.jit.clear();
        e.verified = true; // nothing to verify: the original runs
        r.decision = e.original;
        r.status = "original";
        r.why = why;
        if (dev.cache) {
            storeDecision(dev, r, e.original, 0, {}, 0);
        }
    }

    void storeDecision(DeviceState& dev, const KernelRecord& r, const Placement& placement,
                       double predictedSeconds, const Placement& jitPlacement, double jitSeconds) {
        CachedDecision c;
        c.key = r.key;
        c.signature = r.signature;
        c.kernel = r.kernel;
        c.arrays = r.arrays;
        c.placement = placement;
        c.predictedSeconds = predictedSeconds;
        c.originalSeconds = r.originalSeconds;
        c.engineBest = placementText(r.arrays, r.engineBest);
        c.jitPlacement = jitPlacement;
        c.jitSeconds = jitSeconds;
        if (auto w = dev.cache->store(c)) {
            warn(*w);
        }
    }

    /// Whether a signature has not been traced because it was launched too few times.
    bool waitingForTrace(const Entry& e) const {
        return options.mode == Mode::Auto && e.phase == Entry::Phase::NeedTrace && !e.traceCounted;
    }

    void finalise(KernelRecord& r, const Entry& e) const {
        if (waitingForTrace(e)) {
            r.status = "untraced";
            r.why = untracedWhy(r.launches);
        }
        r.originalKernelMs = median(e.originalMs);
        r.placedKernelMs = median(e.placedMs);
        r.originalSamples = static_cast<int>(e.originalMs.size());
        r.placedSamples = static_cast<int>(e.placedMs.size());
        Overheads& o = r.overheads;
        if (!e.tracedMs.empty()) {
            double sum = 0;
            for (double x : e.tracedMs) {
                sum += x;
            }
            o.tracedKernelMs = sum;
            if (r.originalKernelMs >= 0) {
                o.tracedKernelExtraMs = std::max(
                    0.0, sum - r.originalKernelMs * static_cast<double>(e.tracedMs.size()));
            }
        }
        o.profilingMs = std::max(0.0, o.tracedKernelExtraMs) + o.collectMs + o.convertMs;
        o.engineMs = o.analysisMs + o.modelMs + o.searchMs;
        double host = 0;
        for (double x : e.placedHostUs) {
            host += x / 1000.0;
        }
        o.transformHostMs = host;
        double stream = 0;
        for (double x : e.placedStreamMs) {
            stream += x;
        }
        o.transformStreamMs = stream;
        o.transformJitMs = r.jitCompileMs + r.jitLoadMs;
        o.transformMs = host + stream + o.transformJitMs;
        const double orig = median(e.originalMs);
        double extra = 0;
        for (const Candidate& c : e.candidates) {
            for (double x : c.ms) {
                extra += orig > 0 ? x - orig : 0;
            }
        }
        o.tuningMs = std::max(0.0, extra) + e.spinMs;
    }

    nlohmann::json recordJson(const KernelRecord& r, const Entry& e) const {
        using nlohmann::json;
        auto placementJson = [&](const Placement& p) {
            json j = json::object();
            for (std::size_t i = 0; i < p.size() && i < r.arrays.size(); ++i) {
                j[r.arrays[i]] = std::string(placeName(p[i]));
            }
            return j;
        };
        auto orNull = [](double v) { return v < 0 ? json(nullptr) : json(v); };
        json arrays = json::array();
        for (std::size_t i = 0; i < r.arrays.size(); ++i) {
            arrays.push_back({{"name", r.arrays[i]},
                              {"extent_bytes", r.extents[i]},
                              {"element_size", r.elemSizes[i]}});
        }
        json j;
        j["kernel"] = r.kernel;
        j["signature"] = {{"text", r.signature},
                          {"key", r.key},
                          {"grid", {r.grid.x, r.grid.y, r.grid.z}},
                          {"block", {r.block.x, r.block.y, r.block.z}},
                          {"shared_bytes", r.sharedBytes},
                          {"grids", r.grids},
                          {"device", r.device},
                          {"arrays", arrays}};
        j["status"] = r.status;
        j["source"] = r.source;
        if (!r.failure.empty()) {
            j["failure"] = r.failure;
        }
        j["spec"] = r.specName;
        j["decision"] = r.decision.empty() ? json(nullptr) : placementJson(r.decision);
        const Placement& applied = e.jitRunning ? e.jit : e.applied;
        j["applied"] = applied.empty() ? json(nullptr) : placementJson(applied);
        j["engine_best"] = r.engineBest.empty() ? json(nullptr) : placementJson(r.engineBest);
        j["why"] = r.why;
        j["compiled"] = r.compiled;
        j["dispatch"] = r.dispatch.empty() ? json(nullptr) : json(r.dispatch);
        json pred = json::object();
        if (!r.decision.empty()) {
            pred["decision_us"] = r.predictedSeconds * 1e6;
            pred["original_us"] = r.originalSeconds * 1e6;
            pred["engine_best_us"] = r.engineBestSeconds * 1e6;
            pred["speedup"] = r.predictedSeconds > 0 ? r.originalSeconds / r.predictedSeconds : 1.0;
        }
        j["predicted"] = pred;
        j["jit"] = {
            {"placement", r.jitPlacement.empty() ? json(nullptr) : placementJson(r.jitPlacement)},
            {"predicted_us",
             r.jitPlacement.empty() ? json(nullptr) : json(r.jitPredictedSeconds * 1e6)},
            {"why", r.jitWhy},
            {"state", r.jitState.empty() ? json(nullptr) : json(r.jitState)},
            {"detail", r.jitDetail},
            {"origin", r.jitOrigin.empty() ? json(nullptr) : json(r.jitOrigin)},
            {"compile_ms", r.jitCompileMs},
            {"load_ms", r.jitLoadMs},
            {"background", r.jitBackground}};
        json cands = json::array();
        for (std::size_t i = 0; i < r.candidates.size(); ++i) {
            cands.push_back(
                {{"placement", placementJson(r.candidates[i])},
                 {"median_ms", i < r.candidateMs.size() ? orNull(r.candidateMs[i]) : json(nullptr)},
                 {"dispatch", i < r.candidateDispatch.size() && !r.candidateDispatch[i].empty()
                                  ? json(r.candidateDispatch[i])
                                  : json(nullptr)}});
        }
        j["tuning"] = {{"state", r.tuneState.empty() ? json(nullptr) : json(r.tuneState)},
                       {"why", r.tuneWhy},
                       {"candidates", cands},
                       {"launches", r.tuningLaunches}};
        j["fallbacks"] = r.fallbacks;
        j["launches"] = {{"total", r.launches},
                         {"traced", r.tracedLaunches},
                         {"original", r.originalLaunches},
                         {"placed", r.placedLaunches}};
        j["trace"] = {{"blocks", r.blocks},          {"sampled_blocks", r.sampledBlocks},
                      {"records", r.records},        {"lanes", r.lanes},
                      {"attempts", r.traceAttempts}, {"truncated", r.truncated}};
        const Overheads& o = r.overheads;
        j["overhead_ms"] = {{"profiling", o.profilingMs},
                            {"engine", o.engineMs},
                            {"transform", o.transformMs},
                            {"tuning", o.tuningMs},
                            {"total", o.totalMs()},
                            {"detail",
                             {{"traced_kernel", orNull(o.tracedKernelMs)},
                              {"traced_kernel_extra", orNull(o.tracedKernelExtraMs)},
                              {"collect", o.collectMs},
                              {"convert", o.convertMs},
                              {"analysis", o.analysisMs},
                              {"model", o.modelMs},
                              {"search", o.searchMs},
                              {"transform_host", o.transformHostMs},
                              {"transform_stream", o.transformStreamMs},
                              {"transform_jit", o.transformJitMs},
                              {"host_us_median_original", orNull(median(e.originalHostUs))},
                              {"host_us_median_placed", orNull(median(e.placedHostUs))}}}};
        json measured = json::object();
        if (options.timeKernels) {
            measured["original_ms"] = orNull(r.originalKernelMs);
            measured["placed_ms"] = orNull(r.placedKernelMs);
            measured["traced_ms"] = orNull(median(e.tracedMs));
            measured["original_samples"] = r.originalSamples;
            measured["placed_samples"] = r.placedSamples;
            measured["speedup"] = r.originalKernelMs > 0 && r.placedKernelMs > 0
                                      ? json(r.originalKernelMs / r.placedKernelMs)
                                      : json(nullptr);
            // The launches it takes for what the decision saves to pay for the overhead.
            const double saved = r.originalKernelMs - r.placedKernelMs;
            measured["break_even_launches"] =
                r.originalKernelMs > 0 && r.placedKernelMs > 0 && saved > 0
                    ? json((o.profilingMs + o.engineMs) / saved)
                    : json(nullptr);
        }
        j["measured"] = measured;
        j["notes"] = r.notes;
        return j;
    }
};

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
    if (m.options.mode == Mode::Off) {
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
    auto trace = [&] {
        d.kind = Decision::Kind::Trace;
        d.trace = traceOptions(info, dev.sms, e.sampling);
        // The program's results come from the original instantiation (docs/placer.md).
        d.trace.shadow = TraceOptions::Shadow::Require;
        m.launchKinds[info.launchId] = {ei, Kind::Traced};
    };
    if (m.options.mode == Mode::Trace) {
        trace();
        return d;
    }
    switch (e.phase) {
    case Entry::Phase::NeedTrace:
        if (!e.traceCounted) {
            // A trace pays only through the launches after it: none for the first
            // traceAfter launches, and at most tracesPerKernel signatures of a kernel.
            if (e.rec.launches <= static_cast<uint64_t>(m.options.traceAfter)) {
                m.launchKinds[info.launchId] = {ei, Kind::Original};
                return d;
            }
            int& traces = m.tracesOf[{info.device, info.kernel}];
            if (traces >= m.options.tracesPerKernel) {
                e.phase = Entry::Phase::Untraced;
                e.rec.status = "untraced";
                e.rec.why = "not traced: " + std::to_string(traces) + " signature(s) of " +
                            info.kernel +
                            " were traced in this run, the bound (MEMPLACE_TRACES_PER_KERNEL); "
                            "the original placement stays";
                m.launchKinds[info.launchId] = {ei, Kind::Original};
                return d;
            }
            ++traces;
            e.traceCounted = true;
        }
        trace();
        return d;
    case Entry::Phase::Untraced:
    case Entry::Phase::Failed:
        m.launchKinds[info.launchId] = {ei, Kind::Original};
        return d;
    case Entry::Phase::Decided:
        break;
    }
    if (!m.timedLaunches.empty()) {
        // Timings of earlier launches that completed since: a verified decision may revert now.
        m.collectTimings(false);
        m.maybeRevert(e);
    }
    const bool verifying = m.options.verify && !e.verified;
    const bool placing = e.applied != e.original || !e.jit.empty();
    if (e.tuning || (verifying && placing)) {
        // The kernel's length first: the busy-wait of the timed launches, and whether tuning
        // can pay (Options::tuneMinUs).
        if (std::optional<Decision> p = m.probeStep(e, ei, info)) {
            return *p;
        }
        if (e.tuning && e.kernelUs >= 0 && e.kernelUs < m.options.tuneMinUs) {
            m.skipTuning(e);
        }
    }
    if (e.tuning) {
        if (std::optional<Decision> t = m.tuneStep(e, ei, info)) {
            return *t;
        }
    }
    const bool checking = m.options.timeKernels || verifying;
    const bool measureOriginal =
        checking && e.originalSampled < m.options.originalSamples && placing;
    if (!placing || measureOriginal) {
        d.time = measureOriginal;
        d.spinUs = m.timedSpin(e, d.time);
        e.originalSampled += measureOriginal ? 1 : 0;
        m.launchKinds[info.launchId] = {ei, Kind::Original};
        return d;
    }
    d.kind = Decision::Kind::Place;
    d.placement = e.applied;
    d.jitPlacement = e.jit;
    d.time = verifying && static_cast<int>(e.rec.placedLaunches) < m.options.verifySamples;
    d.spinUs = m.timedSpin(e, d.time);
    m.launchKinds[info.launchId] = {ei, Kind::Placed};
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
            e.rec.status = "failed";
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

    if (result.outputsDiffer) {
        // The program's results are the original instantiation's either way; a placement, whose
        // runs would differ as well, is not asked for (docs/placer.md, "Races").
        const std::string why = "the traced run's outputs differ from the original's (" +
                                result.differing +
                                "): the kernel races, is not deterministic, or its traced build "
                                "computes differently";
        if (m.options.mode == Mode::Auto) {
            r.source = "trace";
            m.keepOriginal(e, dev, why);
            m.warn(info.kernel + ": " + why + "; the original placement stays");
            return;
        }
        if (std::find(r.notes.begin(), r.notes.end(), why) == r.notes.end()) {
            r.notes.push_back(why);
            m.warn(info.kernel + ": " + why);
        }
    }

    if (result.overflow && r.traceAttempts < m.options.maxTraceAttempts) {
        const Sampling next = shrink(e.sampling, result.produced, result.capacity);
        if (next.sms != e.sampling.sms || next.blocksPerSm != e.sampling.blocksPerSm) {
            r.notes.push_back("trace " + std::to_string(r.traceAttempts) + " overflowed (" +
                              std::to_string(result.produced) + " records for " +
                              std::to_string(result.capacity) + "): traced again with " +
                              std::to_string(next.sms) + " SM(s), " +
                              std::to_string(next.blocksPerSm) + " block(s) each");
            e.sampling = next;
            return; // the next launch of this signature is traced again
        }
    }

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
        r.status = "failed";
        r.failure = "the trace does not convert: " + t.message();
        m.warn(info.kernel + ": " + r.failure + "; the original placement stays");
        return;
    }
    if (!m.options.traceDir.empty()) {
        const std::string file = m.options.traceDir + "/" + traceName(info.kernel) + "-" +
                                 std::to_string(info.launchId) + ".trace";
        std::error_code ec;
        std::filesystem::create_directories(m.options.traceDir, ec);
        auto s = trace::saveTrace(*t, file, trace::TraceFormat::Binary, Overwrite::Yes);
        if (!s) {
            m.warn("cannot save the trace " + file + ": " + s.message());
        }
    }
    Expected<EngineResult> er = runEngine(*t, dev.spec.spec, info.compiled, m.options,
                                          JitContext{info.jitAvailable, info.jitSynchronous});
    if (!er) {
        e.phase = Entry::Phase::Failed;
        r.status = "failed";
        r.failure = er.message();
        m.warn(info.kernel + ": " + r.failure + "; the original placement stays");
        return;
    }
    r.overheads.analysisMs += er->analysisMs;
    r.overheads.modelMs += er->modelMs;
    r.overheads.searchMs += er->searchMs;
    r.decision = er->decision;
    r.engineBest = er->best;
    r.compiled = er->compiled;
    r.predictedSeconds = er->decisionSeconds;
    r.originalSeconds = er->originalSeconds;
    r.engineBestSeconds = er->bestSeconds;
    r.why = er->why;
    r.source = "trace";
    r.jitPlacement = er->jitPlacement;
    r.jitPredictedSeconds = er->jitSeconds;
    r.jitWhy = !er->jitWhy.empty() ? er->jitWhy
               : info.jitAvailable ? std::string()
                                   : "JIT unavailable: " + info.jitUnavailable;
    r.jitState = er->jitPlacement.empty() ? std::string() : "pending";
    for (const std::string& n : er->notes) {
        if (std::find(r.notes.begin(), r.notes.end(), n) == r.notes.end()) {
            r.notes.push_back(n);
        }
    }
    if (m.options.mode == Mode::Trace) {
        r.status = "observed";
        return; // every launch is traced; nothing is applied
    }
    e.phase = Entry::Phase::Decided;
    e.applied = er->decision;
    e.jit = er->jitPlacement;
    r.candidates = er->candidates;
    e.candidates.clear();
    if (m.options.verify && m.options.tuneCandidates >= 2 && !er->candidates.empty()) {
        for (const Placement& p : er->candidates) {
            Candidate c;
            c.p = p;
            c.compiled =
                std::find(info.compiled.begin(), info.compiled.end(), p) != info.compiled.end();
            e.candidates.push_back(std::move(c));
        }
        e.tuning = true;
        r.tuneState = "running";
    }
    r.status = er->original && e.jit.empty() ? "original" : "placed";
    if (dev.cache) {
        m.storeDecision(dev, r, er->decision, er->decisionSeconds, er->jitPlacement,
                        er->jitSeconds);
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
    (void)info;
    switch (kind) {
    case Kind::Traced:
        if (report.dispatch == "tracing") {
            ++r.tracedLaunches;
        } else if (!report.notShadowed.empty()) {
            // Not traced: the launch cannot be shadowed, so tracing it could change its results.
            ++r.originalLaunches;
            if (e.phase == Entry::Phase::NeedTrace && m.options.mode == Mode::Auto) {
                m.keepOriginal(e, m.device(info.device), "not traced: " + report.notShadowed);
            }
        } else {
            // Tracing failed (the runtime says why): the launch ran the original untraced.
            ++r.originalLaunches;
            for (const std::string& err : report.errors) {
                m.warn(info.kernel + ": tracing failed: " + err);
            }
            if (e.phase == Entry::Phase::NeedTrace && m.options.mode == Mode::Auto) {
                e.phase = Entry::Phase::Failed;
                r.status = "failed";
                r.failure = "the launch could not be traced";
            }
        }
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
        ++r.placedLaunches;
        e.placedHostUs.push_back(report.hostMicros);
        r.dispatch = report.dispatch;
        if (!e.jit.empty()) {
            if (report.dispatch == "jit") {
                if (!e.jitRunning) {
                    // From now on placed launches run the JIT placement: measure that one.
                    e.jitRunning = true;
                    e.placedMs.clear();
                    e.placedStreamMs.clear();
                }
                r.jitState = "ready";
                if (report.jit == "compiled" || report.jit == "cached") {
                    r.jitOrigin = report.jit;
                    r.jitCompileMs += report.jitCompileMs;
                    r.jitLoadMs += report.jitLoadMs;
                    r.jitBackground = report.jitBackground;
                }
            } else if (report.jit == "failed" || report.jit == "unavailable") {
                // The decision stays; no more asking.
                r.jitState = report.jit;
                r.jitDetail = report.jitDetail;
                r.notes.push_back("just-in-time instantiation " + report.jit + ": " +
                                  report.jitDetail + "; the decision stays");
                e.jit.clear();
                if (e.applied == e.original) {
                    r.status = "original";
                }
            } else if (report.jit == "pending") {
                r.jitState = "pending";
            }
        }
        for (const ArrayReport& a : report.arrays) {
            if (!a.fallback.empty() && e.fallbackSet.insert(a.name + ": " + a.fallback).second) {
                r.fallbacks.push_back(a.name + " requested " + std::string(placeName(a.requested)) +
                                      ", placed " + std::string(placeName(a.placed)) + ": " +
                                      a.fallback);
            }
        }
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

std::vector<KernelRecord> Placer::kernels() const {
    Impl& m = *impl_;
    std::lock_guard<std::mutex> g(m.mu);
    m.collectTimings(true);
    std::vector<KernelRecord> out;
    out.reserve(m.entries.size());
    for (const Entry& e : m.entries) {
        KernelRecord r = e.rec;
        m.finalise(r, e);
        out.push_back(std::move(r));
    }
    return out;
}

std::string Placer::reportJson() const {
    Impl& m = *impl_;
    std::lock_guard<std::mutex> g(m.mu);
    m.collectTimings(true);
    using nlohmann::json;
    json j;
    j["format"] = "memplace-placer-report";
    j["version"] = 1;
    j["mode"] = std::string(modeName(m.options.mode));
    json devs = json::array();
    for (const auto& [index, d] : m.devices) {
        json dj = {{"index", index}, {"name", d.name}};
        if (!d.failed) {
            dj["compute_capability"] = std::to_string(d.major) + "." + std::to_string(d.minor);
            dj["spec"] = {{"name", d.spec.spec.name},
                          {"source", d.spec.source},
                          {"from", d.spec.from},
                          {"sms", d.sms}};
            if (d.cache) {
                dj["cache_file"] = d.cache->file().string();
            }
        } else {
            dj["failed"] = true;
        }
        devs.push_back(dj);
    }
    j["devices"] = devs;
    j["time_kernels"] = m.options.timeKernels;
    j["sampling"] = {{"sms", m.options.sampling.sms},
                     {"blocks_per_sm", m.options.sampling.blocksPerSm},
                     {"waves", m.options.sampling.waves},
                     {"max_records", m.options.sampling.maxRecords}};
    j["first_run"] = {{"trace_after", m.options.traceAfter},
                      {"traces_per_kernel", m.options.tracesPerKernel},
                      {"tune_min_us", m.options.tuneMinUs},
                      {"timing_spin_us", m.options.timingSpinUs}};
#if defined(MEMPLACE_EMU)
    j["emulated"] = true;
#else
    j["emulated"] = false;
#endif
    json ks = json::array();
    Overheads total;
    for (const Entry& e : m.entries) {
        KernelRecord r = e.rec;
        m.finalise(r, e);
        total.profilingMs += r.overheads.profilingMs;
        total.engineMs += r.overheads.engineMs;
        total.transformMs += r.overheads.transformMs;
        ks.push_back(m.recordJson(r, e));
    }
    j["kernels"] = ks;
    j["totals"] = {{"signatures", m.entries.size()},
                   {"overhead_ms",
                    {{"profiling", total.profilingMs},
                     {"engine", total.engineMs},
                     {"transform", total.transformMs},
                     {"total", total.totalMs()}}}};
    j["warnings"] = m.warnings;
    return dumpJson(j, 2) + "\n";
}

bool Placer::writeReport(const std::string& path, std::string* error) const {
    const std::string text = reportJson();
    auto w = writeFileAtomic(path, text, Overwrite::Yes);
    if (!w) {
        if (error != nullptr) {
            *error = w.message();
        }
        return false;
    }
    return true;
}

std::vector<std::string> Placer::warnings() const {
    std::lock_guard<std::mutex> g(impl_->mu);
    return impl_->warnings;
}

void Placer::storeOutcomes() {
    Impl& m = *impl_;
    std::lock_guard<std::mutex> g(m.mu);
    if (m.options.mode != Mode::Auto) {
        return; // trace mode decides nothing
    }
    std::map<int, std::vector<CachedDecision>> outcomes; // per device
    for (const Entry& e : m.entries) {
        const KernelRecord& r = e.rec;
        auto dev = m.devices.find(r.device);
        if (dev == m.devices.end() || !dev->second.cache) {
            continue;
        }
        CachedDecision c;
        c.key = r.key;
        c.signature = r.signature;
        c.kernel = r.kernel;
        c.arrays = r.arrays;
        c.launches = r.launches;
        if (e.phase == Entry::Phase::NeedTrace && r.traceAttempts > 0) {
            c.status = "pending";
            c.why = "the trace overflowed and the run ended before it was finished";
            c.traceAttempts = r.traceAttempts;
            c.sms = e.sampling.sms;
            c.blocksPerSm = e.sampling.blocksPerSm;
        } else if (e.phase == Entry::Phase::NeedTrace) {
            c.status = "untraced";
            c.why = m.untracedWhy(r.launches);
        } else if (e.phase == Entry::Phase::Untraced) {
            c.status = "untraced";
            c.why = r.why;
            c.traceBound = true;
        } else if (e.phase == Entry::Phase::Failed && r.source != "cache") {
            c.status = "failed";
            c.why = r.failure;
        } else {
            continue;
        }
        if (e.cachedOutcome == c.status + "|" + c.why) {
            continue; // the cache says so already
        }
        outcomes[r.device].push_back(std::move(c));
    }
    for (auto& [device, list] : outcomes) {
        if (auto w = m.devices[device].cache->store(list)) {
            m.warn(*w);
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

// ---- installation --------------------------------------------------------------------------

namespace {

std::mutex& installMutex() {
    static auto* mu = new std::mutex;
    return *mu;
}

std::shared_ptr<Placer>& installedSlot() {
    static auto* p = new std::shared_ptr<Placer>;
    return *p;
}

/// A Placer's end (exit, uninstalled, replaced): what its signatures came to goes into the
/// decision cache, and its report is written.
void writeReportOf(const std::shared_ptr<Placer>& p) {
    if (!p) {
        return;
    }
    p->storeOutcomes();
    if (p->options().reportPath.empty()) {
        return;
    }
    std::string err;
    if (!p->writeReport(p->options().reportPath, &err) && !p->options().quiet) {
        std::fprintf(stderr, "memplace placer: cannot write the report %s: %s\n",
                     p->options().reportPath.c_str(), err.c_str());
    }
}

void atExit() {
    std::shared_ptr<Placer> p;
    {
        std::lock_guard<std::mutex> g(installMutex());
        p = installedSlot();
    }
    writeReportOf(p);
}

/// The report is written at exit by a handler registered after the first launch: after the CUDA
/// runtime registered its own teardown, so that ours runs first and events can still be read.
struct ExitHook : PlacementPolicy {
    std::shared_ptr<Placer> inner;
    std::once_flag once;
    explicit ExitHook(std::shared_ptr<Placer> p) : inner(std::move(p)) {}
    Decision decide(const LaunchInfo& info) override { return inner->decide(info); }
    void traced(const LaunchInfo& info, TraceResult trace) override {
        inner->traced(info, std::move(trace));
    }
    void launched(const LaunchInfo& info, const LaunchReport& report) override {
        std::call_once(once, [] { std::atexit(atExit); });
        inner->launched(info, report);
    }
};

} // namespace

std::shared_ptr<Placer> install(const Options& options) {
    if (options.mode == Mode::Off) {
        uninstall();
        return nullptr;
    }
    auto p = std::make_shared<Placer>(options);
    std::shared_ptr<Placer> old;
    {
        std::lock_guard<std::mutex> g(installMutex());
        old = installedSlot();
        installedSlot() = p;
    }
    if (options.timeKernels) {
        setKernelTiming(true);
    }
    setPlacementPolicy(std::make_shared<ExitHook>(p));
    if (old && old->options().reportPath != options.reportPath) {
        writeReportOf(old);
    } else if (old) {
        old->storeOutcomes();
    }
    return p;
}

void uninstall() {
    std::shared_ptr<Placer> old;
    {
        std::lock_guard<std::mutex> g(installMutex());
        old = installedSlot();
        installedSlot().reset();
    }
    if (old) {
        setPlacementPolicy(nullptr);
        writeReportOf(old);
    }
}

std::shared_ptr<Placer> installed() {
    std::lock_guard<std::mutex> g(installMutex());
    return installedSlot();
}

} // namespace memplace::placer

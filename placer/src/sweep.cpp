#include "placer/sweep.h"

#include "common/env.h"
#include "common/file_io.h"
#include "common/json.h"
#include "model/analysis.h"
#include "placer/convert.h"
#include "placer/device_spec.h"
#include "placer_internal.h"
#include "search/search.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>

namespace memplace::placer {

namespace {

uint64_t saturatingMul(uint64_t a, uint64_t b) {
    if (a != 0 && b > UINT64_MAX / a) {
        return UINT64_MAX;
    }
    return a * b;
}

/// Models the trace with the compare spec into `out`; returns why it could not (empty: done).
std::string emplaceCompareModel(std::optional<model::Model>& out, const std::string& name,
                                const trace::Trace& t, const char* device, int major, int minor) {
    auto spec = selectSpec(name, "", device, major, minor);
    if (!spec) {
        return "compare spec '" + name + "': " + spec.message();
    }
    auto st = model::analyze(t, spec->spec);
    if (!st) {
        return "compare spec '" + name + "': analysis failed: " + st.message();
    }
    out.emplace(spec->spec, std::move(*st));
    return {};
}

} // namespace

SweepOptions SweepOptions::fromEnvironment(std::vector<std::string>* warnings) {
    SweepOptions o;
    std::vector<std::string> w;
    o.out = env::readText("MEMPLACE_SWEEP_OUT").value_or(o.out);
    o.original = env::readText("MEMPLACE_SWEEP_ORIGINAL").value_or(o.original);
    o.compareSpec = env::readText("MEMPLACE_SWEEP_COMPARE_SPEC").value_or(o.compareSpec);
    if (const char* v = env::value("MEMPLACE_SWEEP_KERNELS")) {
        std::string s = v;
        std::size_t pos = 0;
        while (pos <= s.size()) {
            const std::size_t c = s.find(',', pos);
            const std::string item =
                s.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
            if (!item.empty()) {
                o.kernels.push_back(item);
            }
            if (c == std::string::npos) {
                break;
            }
            pos = c + 1;
        }
    }
    env::readNumber("MEMPLACE_SWEEP_MAX", o.maxPlacements, w);
    env::readNumber("MEMPLACE_SWEEP_TOP", o.top, w);
    env::readNumber("MEMPLACE_SWEEP_BUDGET_MS", o.budgetMs, w);
    env::readNumber("MEMPLACE_SWEEP_WARMUP", o.warmup, w);
    env::readNumber("MEMPLACE_SWEEP_REPEAT", o.repeat, w);
    env::readNumber("MEMPLACE_SWEEP_SPIN_US", o.spinUs, w);
    env::readNumber("MEMPLACE_SWEEP_SEED", o.seed, w);
    o.dynamicBaselines = !env::readSwitch("MEMPLACE_SWEEP_NO_DYNAMIC", !o.dynamicBaselines, w);
    if (o.out.empty()) {
        w.emplace_back("MEMPLACE=sweep without MEMPLACE_SWEEP_OUT: results go to stdout");
    }
    if (warnings != nullptr) {
        warnings->insert(warnings->end(), w.begin(), w.end());
    }
    return o;
}

Placement parsePlacementList(const std::string& list, const std::string& kernel,
                             const std::vector<std::string>& arrays, const Placement& base) {
    Placement p = base.size() == arrays.size() ? base : Placement(arrays.size(), Place::Global);
    const env::EnvConfig cfg = env::parseMemplaceEnv(("force:" + list).c_str());
    for (std::size_t i = 0; i < arrays.size(); ++i) {
        if (auto f = env::forcedPlace(cfg.force, kernel, arrays[i])) {
            p[i] = *f;
        }
    }
    return p;
}

// ---- the plan ------------------------------------------------------------------------------

namespace {

/// A sweep's plan under construction: the places of each array, the named placements, then
/// the rest of the space (enumerated or sampled) up to SweepOptions::maxPlacements.
struct PlanBuilder {
    const model::Model& m;
    const PlanInputs& in;
    const SweepOptions& o;
    const model::Model* compare;
    const std::size_t n;
    Plan plan;

    struct Scored {
        Placement p;
        double seconds;
    };

    PlanBuilder(const model::Model& m, const PlanInputs& in, const SweepOptions& o,
                const model::Model* compare)
        : m(m), in(in), o(o), compare(compare), n(m.arrayCount()) {}

    /// The places of each array: what the model considers (its candidates and their aliases),
    /// within what the runtime can materialise.
    void places() {
        plan.places.resize(n);
        plan.space = 1;
        for (std::size_t i = 0; i < n; ++i) {
            std::set<Place> ps;
            for (Place p : m.candidates(i)) {
                ps.insert(p);
            }
            for (Place p : m.aliases(i)) {
                ps.insert(p);
            }
            for (Place p : ps) {
                if (i >= in.masks.size() || in.masks[i].contains(p)) {
                    plan.places[i].push_back(p);
                }
            }
            if (plan.places[i].empty()) {
                plan.places[i].push_back(Place::Global);
            }
            plan.space = saturatingMul(plan.space, plan.places[i].size());
        }
    }

    bool isCompiled(const Placement& p) const {
        return std::find(in.compiled.begin(), in.compiled.end(), p) != in.compiled.end() ||
               std::all_of(p.begin(), p.end(), [](Place x) { return x == Place::Global; });
    }

    void add(const Placement& p, const std::string& role, bool dynamic = false) {
        if (p.size() != n) {
            return;
        }
        for (PlanEntry& e : plan.entries) {
            if (e.placement == p && e.dynamic == dynamic) {
                if (std::find(e.roles.begin(), e.roles.end(), role) == e.roles.end()) {
                    e.roles.push_back(role);
                }
                return;
            }
        }
        PlanEntry e;
        e.placement = p;
        e.dynamic = dynamic;
        e.compiled = isCompiled(p);
        e.roles.push_back(role);
        e.modelFeasible = m.feasible(p, &e.infeasibleReason);
        if (e.modelFeasible) {
            e.predictedSeconds = m.seconds(m.cycles(p));
        }
        if (compare != nullptr && compare->feasible(p)) {
            e.comparePredictedSeconds = compare->seconds(compare->cycles(p));
        }
        plan.entries.push_back(std::move(e));
    }

    /// The placements every plan has, the reference first.
    void named() {
        const Placement original =
            in.original.size() == n ? in.original : Placement(n, Place::Global);
        add(original, "original");
        add(Placement(n, Place::Global), "default");
        if (!in.memplace.empty()) {
            add(in.memplace, "memplace");
        }
        if (!in.engineBest.empty()) {
            add(in.engineBest, "engine_best");
        }
        for (std::size_t k = 0; k < in.candidates.size(); ++k) {
            add(in.candidates[k], "candidate" + std::to_string(k + 1));
        }
        searched();
        for (const Placement& p : in.compiled) {
            if (p.size() == n && m.feasible(p)) {
                add(p, "compiled");
            }
        }
        if (o.dynamicBaselines) {
            add(original, "original_dynamic", true);
            add(Placement(n, Place::Global), "default_dynamic", true);
        }
    }

    /// The search's placements: the rules', the compared model's best, the top alternatives.
    void searched() {
        search::SearchOptions ro;
        ro.algorithm = search::Algorithm::Rules;
        ro.topK = 1;
        if (auto r = search::search(m, ro)) {
            plan.rules = r->best.placement;
            add(plan.rules, "rules");
        } else {
            plan.notes.push_back("rules: " + r.message());
        }
        if (compare != nullptr) {
            search::SearchOptions co;
            co.algorithm = search::Algorithm::BranchAndBound;
            co.topK = 1;
            if (auto r = search::search(*compare, co)) {
                add(r->best.placement, "compare_best");
            } else {
                plan.notes.push_back("compare_best: " + r.message());
            }
        }
        if (o.top > 0) {
            search::SearchOptions bo;
            bo.algorithm = search::Algorithm::BranchAndBound;
            bo.topK = o.top;
            if (auto r = search::search(m, bo)) {
                // The alternatives hold candidate places only; each is planned as found.
                for (std::size_t k = 0; k < r->alternatives.size(); ++k) {
                    add(r->alternatives[k].placement, "top" + std::to_string(k + 1));
                }
            } else {
                plan.notes.push_back("top: " + r.message());
            }
        }
    }

    /// The rest of the space: every feasible placement when it fits, else a sample spread over
    /// the predicted times (quantiles), so that the rank correlation sees the whole range.
    std::vector<Scored> scoredPool() {
        std::vector<Scored> pool;
        auto feasibleScored = [&](const Placement& p) {
            const double c = m.cycles(p);
            if (c < model::kInfeasible) {
                pool.push_back({p, m.seconds(c)});
            }
        };
        if (plan.space <= o.enumerateLimit) {
            plan.enumerated = true;
            std::vector<std::size_t> idx(n, 0);
            Placement p(n);
            for (;;) {
                for (std::size_t i = 0; i < n; ++i) {
                    p[i] = plan.places[i][idx[i]];
                }
                feasibleScored(p);
                std::size_t i = 0;
                while (i < n && ++idx[i] == plan.places[i].size()) {
                    idx[i] = 0;
                    ++i;
                }
                if (i == n) {
                    break;
                }
            }
            plan.feasible = pool.size();
        } else {
            std::mt19937_64 rng(o.seed);
            std::set<Placement> seen;
            for (uint64_t k = 0; k < o.samples; ++k) {
                Placement p(n);
                for (std::size_t i = 0; i < n; ++i) {
                    std::uniform_int_distribution<std::size_t> d(0, plan.places[i].size() - 1);
                    p[i] = plan.places[i][d(rng)];
                }
                if (seen.insert(p).second) {
                    feasibleScored(p);
                }
            }
            plan.notes.push_back("space of " + std::to_string(plan.space) +
                                 " placements: sampled " + std::to_string(o.samples) +
                                 " at random (seed " + std::to_string(o.seed) + "), " +
                                 std::to_string(pool.size()) + " distinct and feasible");
        }
        plan.pool = pool.size();
        // Stable order: by predicted time, then by places.
        std::sort(pool.begin(), pool.end(), [](const Scored& a, const Scored& b) {
            return a.seconds != b.seconds ? a.seconds < b.seconds : a.p < b.p;
        });
        return pool;
    }

    bool planned(const Placement& p) const {
        for (const PlanEntry& e : plan.entries) {
            if (!e.dynamic && e.placement == p) {
                return true;
            }
        }
        return false;
    }

    /// The pool's placements not planned yet, all of them when there is room, else `room`
    /// quantiles of the predicted times, the fastest and the slowest included.
    void addRest(const std::vector<Scored>& pool) {
        std::vector<const Scored*> rest;
        for (const Scored& s : pool) {
            if (!planned(s.p)) {
                rest.push_back(&s);
            }
        }
        const std::size_t room =
            o.maxPlacements > plan.entries.size() ? o.maxPlacements - plan.entries.size() : 0;
        if (rest.size() <= room) {
            for (const Scored* s : rest) {
                add(s->p, plan.enumerated ? "all" : "sample");
            }
            plan.complete = plan.enumerated;
        } else if (room > 0) {
            std::size_t last = SIZE_MAX;
            for (std::size_t k = 0; k < room; ++k) {
                const std::size_t at =
                    room == 1 ? 0 : static_cast<std::size_t>((k * (rest.size() - 1)) / (room - 1));
                if (at != last) {
                    add(rest[at]->p, "sample");
                    last = at;
                }
            }
        }
    }
};

} // namespace

Plan buildPlan(const model::Model& m, const PlanInputs& in, const SweepOptions& o,
               const model::Model* compare) {
    PlanBuilder b(m, in, o, compare);
    b.places();
    b.named();
    const std::vector<PlanBuilder::Scored> pool = b.scoredPool();
    b.addRest(pool);
    return std::move(b.plan);
}

// ---- the policy ----------------------------------------------------------------------------

struct SweepPolicy::Impl {
    std::shared_ptr<Placer> placer;
    SweepOptions options;
    mutable std::mutex mu;
    enum class Phase : uint8_t { Waiting, Ready, Swept, Failed };
    struct Sig {
        Phase phase = Phase::Waiting;
        std::shared_ptr<SweepRequest> request;
        Plan plan;
        std::vector<std::string> arrays;
        KernelRecord record; ///< the Placer's, when the plan was made
        double planMs = 0;
        Clock::time_point sweepStart;
    };
    std::map<std::string, Sig> sigs;
    std::size_t sweeps = 0;
    std::once_flag exitOnce;

    bool selected(const std::string& kernel) const {
        return options.kernels.empty() || std::find(options.kernels.begin(), options.kernels.end(),
                                                    kernel) != options.kernels.end();
    }

    void write(const nlohmann::json& j) {
        const std::string line = dumpJson(j) + "\n";
        if (options.out.empty()) {
            std::fputs(line.c_str(), stdout);
            return;
        }
        auto written = appendToFile(options.out, line);
        if (!written && !placer->options().quiet) {
            std::fprintf(stderr, "memplace sweep: %s", written.message().c_str());
        }
    }

    /// The Placer's record of this signature, if it has one.
    std::optional<KernelRecord> record(const std::string& key) const {
        for (KernelRecord& r : placer->kernels()) {
            if (r.key == key) {
                return r;
            }
        }
        return std::nullopt;
    }
};

SweepPolicy::SweepPolicy(std::shared_ptr<Placer> placer, SweepOptions options)
    : impl_(std::make_unique<Impl>()) {
    impl_->placer = std::move(placer);
    impl_->options = std::move(options);
}

SweepPolicy::~SweepPolicy() = default;

std::size_t SweepPolicy::sweeps() const {
    std::lock_guard<std::mutex> g(impl_->mu);
    return impl_->sweeps;
}

Decision SweepPolicy::decide(const LaunchInfo& info) {
    Impl& m = *impl_;
    {
        std::lock_guard<std::mutex> g(m.mu);
        auto it = m.sigs.find(signatureKey(info));
        if (it != m.sigs.end() && it->second.phase == Impl::Phase::Ready) {
            it->second.phase = Impl::Phase::Swept;
            it->second.sweepStart = Clock::now();
            Decision d;
            d.kind = Decision::Kind::Sweep;
            d.sweep = it->second.request;
            return d;
        }
    }
    return m.placer->decide(info);
}

namespace {

/// What a signature's plan starts from: the runtime's masks, the placement as written (or
/// --original's), the Placer's decision, engine's best and candidates, the compiled ones.
PlanInputs planInputs(const LaunchInfo& info, const std::vector<std::string>& arrays,
                      const std::optional<KernelRecord>& rec, const SweepOptions& options) {
    PlanInputs in;
    for (const ArrayInfo& a : info.arrays) {
        in.masks.push_back(a.feasible);
    }
    Placement asWritten;
    for (const ArrayInfo& a : info.arrays) {
        asWritten.push_back(a.original);
    }
    in.original = parsePlacementList(options.original, info.kernel, arrays, asWritten);
    if (rec && !rec->decision.empty()) {
        // What the Placer's launches run once settled: its JIT placement when it asked for one
        // (placed instead of the decision once compiled), else the decision.
        in.memplace =
            rec->jitPlacement.size() == rec->decision.size() ? rec->jitPlacement : rec->decision;
    }
    if (rec && !rec->engineBest.empty()) {
        in.engineBest = rec->engineBest;
    }
    if (rec) {
        in.candidates = rec->candidates;
    }
    in.compiled = info.compiled;
    return in;
}

} // namespace

void SweepPolicy::traced(const LaunchInfo& info, TraceResult trace) {
    Impl& m = *impl_;
    if (!m.selected(info.kernel)) {
        m.placer->traced(info, std::move(trace));
        return;
    }
    const TraceResult copy = trace;
    m.placer->traced(info, std::move(trace));
    const std::string key = signatureKey(info);
    const std::optional<KernelRecord> rec = m.record(gridFamilyKey(info)); // the Placer's key
    if (rec && rec->status == RecordStatus::Pending) {
        return; // the Placer traces again (overflow)
    }
    std::lock_guard<std::mutex> g(m.mu);
    Impl::Sig& sig = m.sigs[key];
    if (sig.phase != Impl::Phase::Waiting) {
        return;
    }
    const auto t0 = Clock::now();
    for (const ArrayInfo& a : info.arrays) {
        sig.arrays.push_back(a.name);
    }
    if (rec) {
        sig.record = *rec;
    }
    auto fail = [&](const std::string& why) {
        sig.phase = Impl::Phase::Failed;
        m.write({{"type", "signature"},
                 {"kernel", info.kernel},
                 {"signature", signatureText(info)},
                 {"status", "failed"},
                 {"failure", why}});
        if (!m.placer->options().quiet) {
            std::fprintf(stderr, "memplace sweep: %s: %s\n", info.kernel.c_str(), why.c_str());
        }
    };
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, info.device) != cudaSuccess) {
        (void)cudaGetLastError();
        fail("cannot read the device's properties");
        return;
    }
    auto spec = selectSpec(m.placer->options().spec, m.placer->options().specDir, prop.name,
                           prop.major, prop.minor);
    if (!spec) {
        fail("no spec: " + spec.message());
        return;
    }
    auto t = toTrace(info, copy);
    if (!t) {
        fail("the trace does not convert: " + t.message());
        return;
    }
    auto st = model::analyze(*t, spec->spec);
    if (!st) {
        fail("analysis failed: " + st.message());
        return;
    }
    const model::Model model(spec->spec, std::move(*st));
    std::optional<model::Model> compare;
    const std::string compareNote = m.options.compareSpec.empty()
                                        ? std::string()
                                        : emplaceCompareModel(compare, m.options.compareSpec, *t,
                                                              prop.name, prop.major, prop.minor);
    const PlanInputs in = planInputs(info, sig.arrays, rec, m.options);
    sig.plan = buildPlan(model, in, m.options, compare ? &*compare : nullptr);
    if (!compareNote.empty()) {
        sig.plan.notes.push_back(compareNote);
    }
    sig.planMs = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    auto req = std::make_shared<SweepRequest>();
    for (const PlanEntry& e : sig.plan.entries) {
        req->entries.push_back({e.placement, e.dynamic});
    }
    req->warmup = m.options.warmup;
    req->repeat = m.options.repeat;
    req->budgetMs = m.options.budgetMs;
    req->spinUs = m.options.spinUs;
    sig.request = std::move(req);
    sig.phase = Impl::Phase::Ready;
}

void SweepPolicy::launched(const LaunchInfo& info, const LaunchReport& report) {
    Impl& m = *impl_;
    std::call_once(m.exitOnce, [] {
        std::atexit([] {
            if (auto p = installed(); p && !p->options().reportPath.empty()) {
                (void)p->writeReport(p->options().reportPath);
            }
        });
    });
    m.placer->launched(info, report);
}

namespace {

/// The sweep's line for one placement of the plan: what was planned and what it measured.
nlohmann::json placementLine(const LaunchInfo& info, const std::string& text,
                             const std::vector<std::string>& arrays, std::size_t k,
                             const PlanEntry& e, const SweepResult& r) {
    using nlohmann::json;
    auto pj = [&](const Placement& p) { return placementJson(arrays, p); };
    return {
        {"type", "placement"},
        {"kernel", info.kernel},
        {"signature", text},
        {"index", k},
        {"placement", pj(e.placement)},
        {"placement_text", placementText(arrays, e.placement)},
        {"roles", e.roles},
        {"dynamic_requested", e.dynamic},
        {"compiled", e.compiled},
        {"model_feasible", e.modelFeasible},
        {"infeasible_reason", e.infeasibleReason},
        {"predicted_us", e.predictedSeconds < 0 ? json(nullptr) : json(e.predictedSeconds * 1e6)},
        {"compare_predicted_us",
         e.comparePredictedSeconds < 0 ? json(nullptr) : json(e.comparePredictedSeconds * 1e6)},
        {"status", r.status},
        {"detail", r.detail},
        {"dispatch", r.dispatch},
        {"placed", r.placed.empty() ? json(nullptr) : pj(r.placed)},
        {"median_ms", r.medianMs < 0 ? json(nullptr) : json(r.medianMs)},
        {"min_ms", r.minMs < 0 ? json(nullptr) : json(r.minMs)},
        {"max_ms", r.maxMs < 0 ? json(nullptr) : json(r.maxMs)},
        {"ms", r.ms},
        {"host_us", r.hostUsMedian < 0 ? json(nullptr) : json(r.hostUsMedian)},
        {"compared", r.compared},
        {"equal", r.equal},
        {"differing_words", r.differingWords}};
}

} // namespace

void SweepPolicy::swept(const LaunchInfo& info, std::vector<SweepResult> results) {
    Impl& m = *impl_;
    using nlohmann::json;
    std::lock_guard<std::mutex> g(m.mu);
    const std::string key = signatureKey(info);
    auto it = m.sigs.find(key);
    if (it == m.sigs.end()) {
        return;
    }
    Impl::Sig& sig = it->second;
    ++m.sweeps;
    const double sweepMs =
        std::chrono::duration<double, std::milli>(Clock::now() - sig.sweepStart).count();
    auto pj = [&](const Placement& p) { return placementJson(sig.arrays, p); };
    const std::string text = signatureText(info);
    std::size_t ok = 0;
    std::size_t unequal = 0;
    for (std::size_t k = 0; k < results.size() && k < sig.plan.entries.size(); ++k) {
        const SweepResult& r = results[k];
        const PlanEntry& e = sig.plan.entries[k];
        ok += r.status == "ok";
        unequal += r.status == "ok" && r.compared && !r.equal;
        m.write(placementLine(info, text, sig.arrays, k, e, r));
    }
    const KernelRecord& rec = sig.record;
    json places = json::object();
    for (std::size_t i = 0; i < sig.plan.places.size() && i < sig.arrays.size(); ++i) {
        json a = json::array();
        for (Place p : sig.plan.places[i]) {
            a.push_back(std::string(placeName(p)));
        }
        places[sig.arrays[i]] = a;
    }
    m.write(
        {{"type", "signature"},
         {"kernel", info.kernel},
         {"signature", text},
         {"key", key},
         {"status", "swept"},
         {"arrays", sig.arrays},
         {"places", places},
         {"space", sig.plan.space},
         {"feasible", sig.plan.enumerated ? json(sig.plan.feasible) : json(nullptr)},
         {"enumerated", sig.plan.enumerated},
         {"complete", sig.plan.complete},
         {"pool", sig.plan.pool},
         {"planned", sig.plan.entries.size()},
         {"measured", ok},
         {"unequal", unequal},
         {"original", pj(sig.plan.entries.empty() ? Placement{} : sig.plan.entries[0].placement)},
         {"memplace", rec.decision.empty() ? json(nullptr) : pj(rec.decision)},
         {"memplace_status", std::string(stateName(rec.status))},
         {"memplace_compiled", rec.compiled},
         {"memplace_why", rec.why},
         {"engine_best", rec.engineBest.empty() ? json(nullptr) : pj(rec.engineBest)},
         {"rules", sig.plan.rules.empty() ? json(nullptr) : pj(sig.plan.rules)},
         {"compiled_count", info.compiled.size()},
         {"compare_spec",
          m.options.compareSpec.empty() ? json(nullptr) : json(m.options.compareSpec)},
         {"plan_ms", sig.planMs},
         {"sweep_ms", sweepMs},
         {"warmup", m.options.warmup},
         {"repeat", m.options.repeat},
         {"notes", sig.plan.notes}});
}

std::shared_ptr<SweepPolicy> installSweep(const Options& options, const SweepOptions& sweep) {
    Options o = options;
    if (o.mode != PlacerMode::Auto) {
        o.mode = PlacerMode::Auto;
    }
    // Every signature is swept from its first launch: an evaluation program may launch a kernel
    // once, and what a trace costs does not matter here.
    o.traceAfter = 0;
    o.tracesPerKernel = std::numeric_limits<int>::max();
    std::shared_ptr<Placer> p = install(o);
    auto s = std::make_shared<SweepPolicy>(p, sweep);
    setPlacementPolicy(s);
    return s;
}

} // namespace memplace::placer

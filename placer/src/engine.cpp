// The engine step: a trace analysed, modelled and searched, and the decision among the
// search's placements and the compiled ones (with the JIT candidate and the tuning shortlist).

#include "model/analysis.h"
#include "model/model.h"
#include "placer_internal.h"
#include "search/search.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>
#include <tuple>

namespace memplace::placer {

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
    // Cheapest first; equal costs keep the places' order. (std::sort with the position as the
    // tie-break: libstdc++ 12's std::stable_sort uses the deprecated get_temporary_buffer, which
    // clang warns about wherever it is instantiated.)
    std::vector<std::size_t> byCost(moves.size());
    std::iota(byCost.begin(), byCost.end(), std::size_t{0});
    std::sort(byCost.begin(), byCost.end(), [&](std::size_t a, std::size_t b) {
        return moves[a].first != moves[b].first ? moves[a].first < moves[b].first : a < b;
    });
    std::vector<Placement> out;
    for (std::size_t k = 0; k < byCost.size() && static_cast<int>(k) < count; ++k) {
        out.push_back(std::move(moves[byCost[k]].second));
    }
    return out;
}

namespace {

/// The choice of one engine step among the search's placements and the compiled ones: the
/// decision, its JIT candidate and the tuning shortlist, written into `r`.
struct EngineChoice {
    struct Option {
        Placement p;
        double cycles;
        double effective;
        bool compiled;
        std::size_t changed; ///< arrays placed other than as written
    };

    const model::Model& m;
    const search::SearchResult* sr;
    const std::vector<Placement>& compiled;
    const Options& options;
    const JitContext& jit;
    EngineResult& r;
    const Placement original;
    const double originalCycles;
    std::vector<Option> options_;

    EngineChoice(const model::Model& m, const search::SearchResult& sr,
                 const std::vector<Placement>& compiled, const Options& options,
                 const JitContext& jit, EngineResult& r)
        : m(m), sr(&sr), compiled(compiled), options(options), jit(jit), r(r),
          original(m.original()), originalCycles(m.cycles(original)) {
        r.algorithm = std::string(search::algorithmName(sr.algorithm));
        r.evaluated = sr.evaluated;
        r.exact = sr.exact;
        r.notes.insert(r.notes.end(), sr.notes.begin(), sr.notes.end());
        r.best = sr.best.placement;
        r.bestSeconds = m.seconds(sr.best.cycles);
        r.originalSeconds = m.seconds(originalCycles);
    }

    bool isCompiled(const Placement& p) const {
        return std::find(compiled.begin(), compiled.end(), p) != compiled.end() || p == original;
    }

    void add(const Placement& p, double cycles) {
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
    }

    /// Each placement also with every array that costs the same where the program keeps it put
    /// back there (the model cannot tell the read-only path from global on sm_70+, the compiler
    /// can: what the program's author wrote is kept unless the model sees a difference).
    void consider(const Placement& p, double cycles) {
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
    }

    /// The choice: the engine's alternatives and every compiled placement, a placement that is
    /// not compiled priced with the dynamic accessor's penalty.
    void gather() {
        for (const search::Candidate& c : sr->alternatives) {
            consider(c.placement, c.cycles);
        }
        consider(sr->best.placement, sr->best.cycles);
        for (const Placement& p : compiled) {
            if (p.size() == m.arrayCount() && m.feasible(p)) {
                consider(p, m.cycles(p));
            }
        }
    }

    /// On-line tuning's shortlist, once the decision is known: the decision as it runs (its JIT
    /// placement when there is one), then the fastest predicted placements, one per predicted
    /// time (among equals a compiled one, then the fewest changes), never the original.
    void shortlist() {
        if (options.tuneCandidates < 2) {
            return;
        }
        std::vector<const Option*> order;
        for (const Option& o : options_) {
            order.push_back(&o);
        }
        // Ties keep the options' order: `order` points into options_ in order, so the pointers
        // break them (no std::stable_sort, see explorationMoves).
        std::sort(order.begin(), order.end(), [](const Option* a, const Option* b) {
            const auto ka = std::make_tuple(a->cycles, !a->compiled, a->changed);
            const auto kb = std::make_tuple(b->cycles, !b->compiled, b->changed);
            return ka != kb ? ka < kb : std::less<>{}(a, b);
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
        for (const Placement& p : r.candidates) {
            r.candidateSpeedups.push_back(originalCycles / std::max(m.cycles(p), 1e-30));
        }
    }

    /// The least effective time; among equals a compiled one, then the one closest to the
    /// program as written.
    const Option* bestOption() const {
        const Option* best = nullptr;
        for (const Option& o : options_) {
            if (best == nullptr || o.effective < best->effective ||
                (o.effective == best->effective &&
                 std::make_pair(!o.compiled, o.changed) <
                     std::make_pair(!best->compiled, best->changed))) {
                best = &o;
            }
        }
        return best;
    }

    /// Just in time: the fastest placement that was not compiled in, when it beats the decision
    /// (effective time: a placement through the dynamic accessor carries the penalty) by the
    /// threshold; with a synchronous compilation only when the compile pays within the limit.
    void considerJit(double decisionEffective) {
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
    }

    void keepOriginal() {
        r.decision = original;
        r.compiled = true;
        r.original = true;
        r.decisionSeconds = r.originalSeconds;
    }

    /// The decision: the best option when it beats the original by Options::minSpeedup, else the
    /// original; then the JIT candidate and the shortlist.
    void decide() {
        const Option* best = bestOption();
        if (best == nullptr || !(originalCycles < model::kInfeasible)) {
            keepOriginal();
            r.why = best == nullptr ? "no feasible placement: the original stays"
                                    : "the original placement is infeasible in the model; it stays";
            return;
        }
        if (!(best->effective * options.minSpeedup < originalCycles)) {
            keepOriginal();
            char buf[160];
            std::snprintf(buf, sizeof buf,
                          "the best placement is predicted %.3fx the original%s, below the %.2fx "
                          "threshold: the original stays",
                          best->cycles > 0 ? originalCycles / best->cycles : 1.0,
                          best->compiled ? "" : " (not compiled)", options.minSpeedup);
            r.why = buf;
            considerJit(originalCycles);
            shortlist();
            return;
        }
        r.decision = best->p;
        r.compiled = best->compiled;
        r.original = best->p == original;
        r.decisionSeconds = m.seconds(best->cycles);
        r.why = placedWhy(*best);
        considerJit(best->effective);
        shortlist();
    }

    std::string placedWhy(const Option& best) const {
        char buf[200];
        bool engineBest = best.p.size() == sr->best.placement.size();
        for (std::size_t i = 0; engineBest && i < best.p.size(); ++i) {
            engineBest = m.equivalent(i, best.p[i], sr->best.placement[i]);
        }
        if (engineBest) {
            std::snprintf(buf, sizeof buf, "the engine's best, predicted %.3fx the original%s",
                          originalCycles / std::max(best.cycles, 1e-30),
                          best.compiled ? ", compiled" : ", through the dynamic accessor");
        } else {
            std::snprintf(
                buf, sizeof buf,
                "a compiled placement predicted %.3fx the original, preferred to the "
                "engine's best (%.3fx, not compiled) with the %.2fx dynamic-accessor penalty",
                originalCycles / std::max(best.cycles, 1e-30),
                originalCycles / std::max(sr->best.cycles, 1e-30), options.dynamicPenalty);
        }
        return buf;
    }
};

} // namespace

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
    EngineChoice choice(m, *sr, compiled, options, jit, r);
    choice.gather();
    r.searchMs = msSince(t0);
    choice.decide();
    return r;
}

} // namespace memplace::placer

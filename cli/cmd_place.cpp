// memplace place TRACE --spec NAME|FILE [--search exhaustive|bnb|greedy|rules] [--top K] [--json]
//                [--evaluate PLACEMENT]... [--time-limit S]
#include "cli/command.h"
#include "cli/table.h"
#include "common/json.h"
#include "model/analysis.h"
#include "model/model.h"
#include "model/report.h"
#include "search/search.h"
#include "spec/spec.h"
#include "trace/trace_io.h"

#include <fmt/format.h>

#include <cmath>
#include <iostream>

namespace memplace::cli {

namespace {

using nlohmann::json;

struct PlaceOptions {
    std::string trace;
    std::string spec;
    std::string search = "bnb";
    size_t top = 5;
    bool json = false;
    bool brief = false;
    std::string cache = "footprint";
    std::string paths = "shared-units";
    std::string bound = "auto";
    double sample = 1.0;
    std::string format;
    std::vector<std::string> evaluate; ///< placements to predict besides the search's
    /// Branch-and-bound stops after this many seconds with the best placement found, reported as
    /// not proven optimal (0: no limit): 20 alike arrays take minutes to prove.
    double timeLimit = 5;
};

std::string cyclesText(double c) {
    if (c >= 1e9) {
        return fmt::format("{:.3g}G", c / 1e9);
    }
    if (c >= 1e6) {
        return fmt::format("{:.3g}M", c / 1e6);
    }
    if (c >= 1e3) {
        return fmt::format("{:.3g}k", c / 1e3);
    }
    return fmt::format("{:.3g}", c);
}

std::string timeText(double s) {
    if (s >= 1) {
        return fmt::format("{:.3g} s", s);
    }
    if (s >= 1e-3) {
        return fmt::format("{:.3g} ms", s * 1e3);
    }
    return fmt::format("{:.3g} us", s * 1e6);
}

std::string placementText(const model::Model& m, const model::Placement& p) {
    std::string s;
    for (size_t i = 0; i < p.size(); ++i) {
        s += fmt::format("{}{}={}", i == 0 ? "" : " ", m.arrayName(i), placeName(p[i]));
    }
    return s;
}

/// `default` (every array global where it can be), `original`, or `array=place,...` with the
/// arrays not named global; `kernel.array` names are accepted for the model's kernel.
std::optional<model::Placement> parseEvaluated(const model::Model& m, const std::string& text,
                                               std::string& error) {
    if (text == "default" || text == "baseline") {
        return m.baseline();
    }
    if (text == "original") {
        return m.original();
    }
    model::Placement p = m.baseline();
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t comma = text.find(',', pos);
        std::string item = text.substr(pos, comma == std::string::npos ? comma : comma - pos);
        pos = comma == std::string::npos ? text.size() + 1 : comma + 1;
        size_t eq = item.find('=');
        if (eq == std::string::npos) {
            error = fmt::format("'{}' is not array=place", item);
            return std::nullopt;
        }
        std::string name = item.substr(0, eq);
        const std::string prefix = m.stats().kernel + ".";
        if (name.starts_with(prefix)) {
            name = name.substr(prefix.size());
        }
        std::optional<Place> place = parsePlace(item.substr(eq + 1));
        if (!place) {
            error = fmt::format("unknown place '{}' in '{}'", item.substr(eq + 1), item);
            return std::nullopt;
        }
        size_t i = 0;
        while (i < m.arrayCount() && m.arrayName(i) != name) {
            ++i;
        }
        if (i == m.arrayCount()) {
            error = fmt::format("kernel {} has no array '{}'", m.stats().kernel, name);
            return std::nullopt;
        }
        p[i] = *place;
    }
    return p;
}

std::string countersText(const model::Prediction& p) {
    std::string s;
    for (const auto& c : model::memoryCounters(p)) {
        if (c.readRequests <= 0 && c.writeRequests <= 0) {
            continue;
        }
        s += fmt::format("{}{} read {}", s.empty() ? "" : ", ", c.memory,
                         cyclesText(c.readRequests));
        if (c.cache && c.readRequests > 0) {
            s += fmt::format(" ({:.1f}% hit)", 100 * c.readHitRate());
        }
        if (c.writeRequests > 0) {
            s += fmt::format(" write {}", cyclesText(c.writeRequests));
        }
    }
    return s;
}

/// What `place` computed and prints: the model, the search's answer and the predictions.
struct PlaceOutcome {
    const PlaceOptions& o;
    const spec::Spec* s;
    const model::Model& m;
    const model::ModelOptions& mo;
    const search::SearchResult* r;
    const model::Prediction& best;
    const model::Placement& orig;
    const model::Prediction& original;
    const std::vector<std::pair<model::Placement, model::Prediction>>& evaluated;
    double analysisSeconds;
    /// Branch-and-bound that hit its time or node limit: the answer is the best found.
    bool stoppedEarly;

    void printJson() const;
    void printBrief() const;
    void printText() const;
};

void PlaceOutcome::printJson() const {
    json out;
    out["kernel"] = m.stats().kernel;
    out["spec"] = s->name;
    out["placement"] = model::placementJson(m, r->best.placement);
    out["predicted_time"] = best.seconds;
    out["predicted_cycles"] = best.cycles;
    out["breakdown"] = model::predictionJson(best);
    json orj;
    orj["placement"] = model::placementJson(m, orig);
    orj["feasible"] = original.feasible;
    if (original.feasible) {
        orj["predicted_time"] = original.seconds;
        orj["predicted_cycles"] = original.cycles;
        orj["speedup"] = best.cycles > 0 ? original.cycles / best.cycles : 1.0;
    } else {
        orj["reason"] = original.reason;
    }
    out["original"] = std::move(orj);
    json alts = json::array();
    for (const auto& c : r->alternatives) {
        alts.push_back({{"placement", model::placementJson(m, c.placement)},
                        {"predicted_time", m.seconds(c.cycles)},
                        {"predicted_cycles", c.cycles}});
    }
    out["alternatives"] = std::move(alts);
    if (!evaluated.empty()) {
        json ev = json::array();
        for (size_t k = 0; k < evaluated.size(); ++k) {
            const auto& [pl, pr] = evaluated[k];
            ev.push_back({{"request", o.evaluate[k]},
                          {"placement", model::placementJson(m, pl)},
                          {"feasible", pr.feasible},
                          {"predicted_time", pr.feasible ? json(pr.seconds) : json(nullptr)},
                          {"breakdown", model::predictionJson(pr)}});
        }
        out["evaluated"] = std::move(ev);
    }
    out["search"] = {{"algorithm", std::string(search::algorithmName(r->algorithm))},
                     {"evaluated", r->evaluated},
                     {"nodes", r->nodes},
                     {"seconds", r->seconds},
                     {"exact", r->exact},
                     {"proven_optimal", r->exact},
                     {"time_limit_seconds", o.timeLimit},
                     {"space", search::spaceSize(m)},
                     {"notes", r->notes}};
    out["model"] = {{"cache_policy", std::string(model::cachePolicyName(mo.cache))},
                    {"paths", std::string(model::pathModelName(mo.paths))},
                    {"bound", m.memoryBound() ? "memory" : "compute"},
                    {"analysis_seconds", analysisSeconds}};
    out["analysis"] = model::statsJson(m.stats(), false);
    std::cout << dumpJson(out, 2) << "\n";
}

void PlaceOutcome::printBrief() const {
    std::cout << fmt::format(
        "{} {} {}: {} {}{}\n", m.stats().kernel, search::algorithmName(r->algorithm),
        timeText(best.seconds), placementText(m, r->best.placement),
        original.feasible ? fmt::format("({:.2f}x the original)",
                                        best.cycles > 0 ? original.cycles / best.cycles : 1.0)
                          : "",
        stoppedEarly ? " (not proven optimal)" : "");
}

/// The placement's arrays: place, path, cycles and the requests and hits of each level.
void printArrays(const model::Prediction& best, const model::Placement& orig) {
    Table placement({"array", "place", "original", "path", "cycles", "levels (requests/hits)"});
    for (size_t i = 0; i < best.arrays.size(); ++i) {
        const auto& a = best.arrays[i];
        std::string levels;
        for (const auto& l : a.levels) {
            double req = l.readRequests + l.writeRequests;
            double hits = l.readHits + l.writeHits;
            if (req <= 0) {
                continue;
            }
            levels += fmt::format("{}{} {}/{}", levels.empty() ? "" : ", ", l.memory,
                                  cyclesText(req), cyclesText(hits));
        }
        if (a.stagingCycles > 0) {
            levels += fmt::format(", staging {}", cyclesText(a.stagingCycles));
        }
        placement.add({a.name, std::string(placeName(a.place)), std::string(placeName(orig[i])),
                       a.path, cyclesText(a.cycles), levels});
    }
    std::cout << placement.format();
}

void PlaceOutcome::printText() const {
    const auto& st2 = m.stats();
    std::cout << fmt::format("kernel {} on {}: grid {}x{}x{}, block {}x{}x{}, {} of {} blocks "
                             "traced, {} records, {} lanes\n",
                             st2.kernel, s->name, st2.grid.x, st2.grid.y, st2.grid.z, st2.block.x,
                             st2.block.y, st2.block.z, st2.tracedBlocks, st2.blocks, st2.records,
                             st2.lanes);
    for (const auto& n : st2.notes) {
        std::cout << "  note: " << n << "\n";
    }
    std::cout << fmt::format("model: {}-bound, cache sharing {}, paths {}\n\n",
                             m.memoryBound() ? "memory" : "compute",
                             model::cachePolicyName(mo.cache), model::pathModelName(mo.paths));
    printArrays(best, orig);
    std::cout << fmt::format("\npredicted: {} ({} cycles), critical path {}",
                             timeText(best.seconds), cyclesText(best.cycles), best.criticalPath);
    if (original.feasible) {
        std::cout << fmt::format("; original {} ({:.2f}x)", timeText(original.seconds),
                                 best.cycles > 0 ? original.cycles / best.cycles : 1.0);
    }
    std::cout << "\npaths:";
    for (const auto& p : best.paths) {
        std::cout << fmt::format(" {}={}", p.path, cyclesText(p.cycles));
    }
    if (best.launchCycles > 0) {
        std::cout << fmt::format("; before the kernel {}", cyclesText(best.launchCycles));
    }
    std::cout << fmt::format("\noccupancy: {} blocks per SM (original {}), {} bytes of shared "
                             "memory per block\n",
                             best.residentBlocks, best.originalResidentBlocks, best.sharedPerBlock);
    std::cout << "counters: " << countersText(best) << "\n";
    for (const auto& [pl, pr] : evaluated) {
        std::cout << fmt::format("\nevaluated {}: ", placementText(m, pl));
        if (!pr.feasible) {
            std::cout << "infeasible: " << pr.reason << "\n";
            continue;
        }
        std::cout << fmt::format("predicted {} ({} cycles)\ncounters: {}\n", timeText(pr.seconds),
                                 cyclesText(pr.cycles), countersText(pr));
    }
    if (r->alternatives.size() > 1) {
        std::cout << "\nalternatives:\n";
        Table alts({"#", "predicted", "placement"});
        for (size_t k = 0; k < r->alternatives.size(); ++k) {
            const auto& c = r->alternatives[k];
            alts.add({std::to_string(k + 1), timeText(m.seconds(c.cycles)),
                      placementText(m, c.placement)});
        }
        std::cout << alts.format();
    }
    std::cout << fmt::format(
        "\nsearch: {}{}, {} placements evaluated{}, {:.3g} ms; analysis "
        "{:.3g} ms\n",
        search::algorithmName(r->algorithm),
        r->exact ? " (exact)" : (stoppedEarly ? " (not proven optimal)" : ""), r->evaluated,
        r->nodes > 0 ? fmt::format(", {} partial placements bounded", r->nodes) : "",
        r->seconds * 1e3, analysisSeconds * 1e3);
    for (const auto& n : r->notes) {
        std::cout << "  " << n << "\n";
    }
}

int runPlace(const PlaceOptions& o) {
    std::optional<trace::TraceFormat> format;
    if (!o.format.empty() && o.format != "auto") {
        format = trace::parseTraceFormat(o.format);
        if (!format) {
            std::cerr << fmt::format("error: unknown trace format '{}' (binary, text, porple)\n",
                                     o.format);
            return kExitBadInput;
        }
    }
    auto algorithm = search::parseAlgorithm(o.search);
    auto cache = model::parseCachePolicy(o.cache);
    auto paths = model::parsePathModel(o.paths);
    auto bound = model::parseBoundedness(o.bound);
    if (!algorithm || !cache || !paths || !bound) {
        std::cerr << "error: bad --search, --cache, --paths or --bound value\n";
        return kExitBadInput;
    }
    if (!std::isfinite(o.timeLimit) || o.timeLimit < 0) {
        std::cerr << fmt::format("error: --time-limit {}: not a number of seconds >= 0 (0: none)\n",
                                 o.timeLimit);
        return kExitBadInput;
    }
    auto s = spec::loadSpec(o.spec);
    if (!s) {
        printDiagnostics(s.diagnostics());
        return kExitBadInput;
    }
    auto t = trace::loadTrace(o.trace, format);
    if (!t) {
        printDiagnostics(t.diagnostics());
        return kExitBadInput;
    }
    model::AnalysisOptions ao;
    ao.lineSampleRate = o.sample;
    auto st = model::analyze(*t, *s, ao);
    if (!st) {
        printDiagnostics(st.diagnostics());
        return kExitBadInput;
    }
    model::ModelOptions mo;
    mo.cache = *cache;
    mo.paths = *paths;
    mo.bound = *bound;
    const double analysisSeconds = st->seconds;
    model::Model m(*s, std::move(*st), mo);
    search::SearchOptions so;
    so.algorithm = *algorithm;
    so.topK = std::max<size_t>(1, o.top);
    so.timeLimitSeconds = o.timeLimit;
    auto r = search::search(m, so);
    if (!r) {
        printDiagnostics(r.diagnostics());
        return kExitFailure;
    }
    model::Prediction best = m.predict(r->best.placement);
    model::Placement orig = m.original();
    model::Prediction original = m.predict(orig);
    std::vector<std::pair<model::Placement, model::Prediction>> evaluated;
    for (const auto& e : o.evaluate) {
        std::string error;
        auto p = parseEvaluated(m, e, error);
        if (!p) {
            std::cerr << fmt::format("error: --evaluate '{}': {}\n", e, error);
            return kExitBadInput;
        }
        evaluated.emplace_back(*p, m.predict(*p));
    }

    const PlaceOutcome x{o,
                         &*s,
                         m,
                         mo,
                         &*r,
                         best,
                         orig,
                         original,
                         evaluated,
                         analysisSeconds,
                         r->algorithm == search::Algorithm::BranchAndBound && !r->exact};
    if (o.json) {
        x.printJson();
    } else if (o.brief) {
        x.printBrief();
    } else {
        x.printText();
    }
    return kExitSuccess;
}

} // namespace

static void addPlaceCommands(CLI::App& app, CommandContext& ctx) {
    auto o = std::make_shared<PlaceOptions>();
    auto* cmd = app.add_subcommand(
        "place", "Choose the memory of every array of a traced kernel for a GPU spec");
    cmd->add_option("trace", o->trace, "Trace file (binary, text or PORPLE form)")->required();
    cmd->add_option("--spec", o->spec, "Built-in spec name (see `spec list`) or MSL file")
        ->required();
    cmd->add_option("--search", o->search, "exhaustive, bnb (default), greedy or rules");
    cmd->add_option("--top", o->top, "Alternatives to list (default 5)");
    cmd->add_option("--cache", o->cache,
                    "Cache sharing: footprint (default) or equal (PORPLE's equal split)");
    cmd->add_option("--paths", o->paths,
                    "Path model: shared-units (default) or porple (arrays on a path only)");
    cmd->add_option("--bound", o->bound, "Concurrency factors: auto (default), memory, compute");
    cmd->add_option("--sample", o->sample,
                    "SHARDS line sampling rate for reuse distances (default 1: exact)");
    cmd->add_option("--format", o->format, "Trace form: auto (default), binary, text, porple");
    cmd->add_option("--evaluate", o->evaluate,
                    "Also predict this placement (default, original, or array=place,...; arrays "
                    "not named are global) with its per-memory counters; repeatable")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd->add_option("--time-limit", o->timeLimit,
                    "Seconds branch-and-bound may search before it answers with the best "
                    "placement found, reported as not proven optimal (default 5; 0: no limit)");
    cmd->add_flag("--json", o->json, "Print JSON");
    cmd->add_flag("--brief", o->brief, "Print one line: the placement and its predicted time");
    cmd->callback([&ctx, o] { ctx.exitCode = runPlace(*o); });
}

static const CommandRegistration kRegisterPlace{"place", 30, addPlaceCommands};

} // namespace memplace::cli

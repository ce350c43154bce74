// memplace trace info | convert | synth
#include "cli/command.h"
#include "cli/table.h"
#include "common/json.h"
#include "model/analysis.h"
#include "model/report.h"
#include "spec/spec.h"
#include "trace/synth.h"
#include "trace/trace_io.h"

#include <fmt/format.h>

#include <iostream>

namespace memplace::cli {

namespace {

using nlohmann::json;

struct TraceOptions {
    std::string input;
    std::string output;
    std::string from;
    std::string to;
    std::string spec;
    std::string name;
    uint32_t tracedSms = 1;
    uint64_t seed = 1;
    bool force = false;
    bool json = false;
    bool list = false;
};

std::optional<trace::TraceFormat> formatOf(const std::string& s, bool& bad) {
    bad = false;
    if (s.empty() || s == "auto") {
        return std::nullopt;
    }
    auto f = trace::parseTraceFormat(s);
    bad = !f;
    return f;
}

/// What `trace convert` and `trace synth` say about the file they wrote.
void printWritten(const TraceOptions& o, const trace::Trace& t, trace::TraceFormat form) {
    if (o.json) {
        const json out = {{"file", o.output},
                          {"kernel", t.header().kernel},
                          {"records", t.records().size()},
                          {"lanes", t.laneCount()},
                          {"form", std::string(trace::traceFormatName(form))}};
        std::cout << dumpJson(out, 2) << "\n";
        return;
    }
    std::cout << fmt::format("{}: {} records, {} lanes, {} form\n", o.output, t.records().size(),
                             t.laneCount(), trace::traceFormatName(form));
}

/// The trace's header, arrays and (with --spec) analysis as JSON.
json infoJson(const trace::Trace& t, const std::vector<double>& requests,
              const std::vector<double>& lanes, const std::optional<model::TraceStats>& st) {
    const auto& h = t.header();
    json out;
    out["kernel"] = h.kernel;
    out["grid"] = {h.grid.x, h.grid.y, h.grid.z};
    out["block"] = {h.block.x, h.block.y, h.block.z};
    if (h.registersPerThread) {
        out["registers"] = *h.registersPerThread;
    }
    if (h.sharedPerBlock) {
        out["shared"] = *h.sharedPerBlock;
    }
    out["blocks"] = h.blockCount();
    out["traced_blocks"] = h.tracedBlockCount();
    out["records"] = t.records().size();
    out["lanes"] = t.laneCount();
    json arrays = json::array();
    for (size_t i = 0; i < h.arrays.size(); ++i) {
        const auto& a = h.arrays[i];
        arrays.push_back({{"name", a.name},
                          {"element_size", a.elementSize},
                          {"length", a.length},
                          {"mode", std::string(trace::arrayModeName(a.mode))},
                          {"requests", requests[i]},
                          {"lanes", lanes[i]}});
    }
    out["arrays"] = std::move(arrays);
    if (st) {
        out["analysis"] = model::statsJson(*st, true);
    }
    return out;
}

/// The same as a table.
void printInfo(const TraceOptions& o, const trace::Trace& t, const std::vector<double>& requests,
               const std::vector<double>& lanes, const std::optional<model::TraceStats>& st) {
    const auto& h = t.header();
    std::cout << fmt::format("kernel {}: grid {}x{}x{}, block {}x{}x{}, {} of {} blocks traced, "
                             "{} records, {} lanes\n",
                             h.kernel, h.grid.x, h.grid.y, h.grid.z, h.block.x, h.block.y,
                             h.block.z, h.tracedBlockCount(), h.blockCount(), t.records().size(),
                             t.laneCount());
    Table table({"array", "elem", "length", "mode", "requests", "lanes/request"});
    for (size_t i = 0; i < h.arrays.size(); ++i) {
        const auto& a = h.arrays[i];
        table.add({a.name, std::to_string(a.elementSize), std::to_string(a.length),
                   std::string(trace::arrayModeName(a.mode)), fmt::format("{}", requests[i]),
                   requests[i] > 0 ? fmt::format("{:.1f}", lanes[i] / requests[i]) : "-"});
    }
    std::cout << table.format();
    if (st) {
        std::cout << fmt::format("\nanalysis for {} ({:.3g} ms):\n", o.spec, st->seconds * 1e3);
        Table at({"array", "candidates", "uniform", "sectors/req", "block reuse"});
        for (const auto& a : st->arrays) {
            std::string c;
            for (Place p : kAllPlaces) {
                if (a.candidates.contains(p)) {
                    c += (c.empty() ? "" : ",") + std::string(placeName(p));
                }
            }
            at.add({a.info.name, c, fmt::format("{:.2f}", a.uniformFraction),
                    fmt::format("{:.2f} (ideal {:.2f})", a.sectorsPerRequest,
                                a.idealSectorsPerRequest),
                    fmt::format("{:.2f}", a.blockReuse)});
        }
        std::cout << at.format();
        for (const auto& n : st->notes) {
            std::cout << "note: " << n << "\n";
        }
    }
}

int runInfo(const TraceOptions& o) {
    bool bad = false;
    auto from = formatOf(o.from, bad);
    if (bad) {
        std::cerr << fmt::format("error: unknown trace format '{}'\n", o.from);
        return kExitBadInput;
    }
    auto t = trace::loadTrace(o.input, from);
    if (!t) {
        printDiagnostics(t.diagnostics());
        return kExitBadInput;
    }
    const auto& h = t->header();
    std::vector<double> requests(h.arrays.size(), 0), lanes(h.arrays.size(), 0);
    for (const auto& r : t->records()) {
        requests[r.array] += 1;
        lanes[r.array] += r.lanes;
    }
    std::optional<model::TraceStats> st;
    if (!o.spec.empty()) {
        auto s = spec::loadSpec(o.spec);
        if (!s) {
            printDiagnostics(s.diagnostics());
            return kExitBadInput;
        }
        auto a = model::analyze(*t, *s);
        if (!a) {
            printDiagnostics(a.diagnostics());
            return kExitBadInput;
        }
        st = std::move(*a);
    }
    if (o.json) {
        std::cout << dumpJson(infoJson(*t, requests, lanes, st), 2) << "\n";
        return kExitSuccess;
    }
    printInfo(o, *t, requests, lanes, st);
    return kExitSuccess;
}

int runConvert(const TraceOptions& o) {
    bool bad1 = false, bad2 = false;
    auto from = formatOf(o.from, bad1);
    auto to = formatOf(o.to, bad2);
    if (bad1 || bad2 || (to && *to == trace::TraceFormat::Porple)) {
        std::cerr << "error: --from takes binary, text or porple; --to binary or text\n";
        return kExitBadInput;
    }
    auto t = trace::loadTrace(o.input, from);
    if (!t) {
        printDiagnostics(t.diagnostics());
        return kExitBadInput;
    }
    trace::TraceFormat target = to.value_or(
        o.output.ends_with(".trace") || o.output.ends_with(".txt") ? trace::TraceFormat::Text
                                                                   : trace::TraceFormat::Binary);
    auto w = trace::saveTrace(*t, o.output, target, o.force ? Overwrite::Yes : Overwrite::No);
    if (!w) {
        printDiagnostics(w.diagnostics());
        return kExitBadInput;
    }
    printWritten(o, *t, target);
    return kExitSuccess;
}

int runSynth(const TraceOptions& o) {
    const auto& kernels = trace::synth::exampleKernels();
    if (o.list || o.name.empty()) {
        if (o.json) {
            json list = json::array();
            for (const auto& k : kernels) {
                list.push_back({{"name", k.name}, {"description", k.description}});
            }
            std::cout << dumpJson(list, 2) << "\n";
        } else {
            for (const auto& k : kernels) {
                std::cout << fmt::format("{:14} {}\n", k.name, k.description);
            }
        }
        return o.list ? kExitSuccess : kExitBadInput;
    }
    auto it = std::find_if(kernels.begin(), kernels.end(),
                           [&](const auto& k) { return o.name == k.name; });
    if (it == kernels.end()) {
        std::cerr << fmt::format("error: unknown example '{}' (see `trace synth --list`)\n",
                                 o.name);
        return kExitBadInput;
    }
    if (o.output.empty()) {
        std::cerr << "error: -o FILE is required\n";
        return kExitBadInput;
    }
    trace::synth::ExampleOptions eo;
    eo.tracedSms = o.tracedSms;
    eo.seed = o.seed;
    auto t = it->make(eo);
    if (!t) {
        printDiagnostics(t.diagnostics());
        return kExitFailure;
    }
    bool bad = false;
    auto to = formatOf(o.to, bad);
    trace::TraceFormat target = to.value_or(trace::TraceFormat::Text);
    auto w = trace::saveTrace(*t, o.output, target, o.force ? Overwrite::Yes : Overwrite::No);
    if (!w) {
        printDiagnostics(w.diagnostics());
        return kExitBadInput;
    }
    printWritten(o, *t, target);
    return kExitSuccess;
}

} // namespace

static void addTraceCommands(CLI::App& app, CommandContext& ctx) {
    auto o = std::make_shared<TraceOptions>();
    auto* cmd = app.add_subcommand("trace", "Warp-level access traces: inspect, convert, generate");
    cmd->require_subcommand(1);

    auto* info = cmd->add_subcommand("info", "Summarise a trace; with --spec, analyse it too");
    info->add_option("trace", o->input, "Trace file")->required();
    info->add_option("--spec", o->spec, "Spec to analyse the trace for (reuse histograms)");
    info->add_option("--from", o->from, "Trace form: auto (default), binary, text, porple");
    info->add_flag("--json", o->json, "Print JSON");
    info->callback([&ctx, o] { ctx.exitCode = runInfo(*o); });

    auto* convert = cmd->add_subcommand("convert", "Convert between the binary and text forms, "
                                                   "or import a PORPLE trace");
    convert->add_option("input", o->input, "Input trace")->required();
    convert->add_option("-o,--output", o->output, "Output file")->required();
    convert->add_option("--from", o->from, "Input form: auto (default), binary, text, porple");
    convert->add_option("--to", o->to,
                        "Output form: binary or text (default: by extension, "
                        ".trace and .txt are text)");
    convert->add_flag("--force", o->force, "Replace an existing output file");
    convert->add_flag("--json", o->json, "Print what was written as JSON");
    convert->callback([&ctx, o] { ctx.exitCode = runConvert(*o); });

    auto* synth = cmd->add_subcommand("synth", "Write one of the bundled example traces");
    synth->add_option("name", o->name, "Example kernel (see --list)");
    synth->add_option("-o,--output", o->output, "Output file");
    synth->add_option("--to", o->to, "text (default) or binary");
    synth->add_option("--traced-sms", o->tracedSms, "SMs whose blocks are traced (default 1)");
    synth->add_option("--seed", o->seed, "Random seed (default 1)");
    synth->add_flag("--list", o->list, "List the examples");
    synth->add_flag("--force", o->force, "Replace an existing output file");
    synth->add_flag("--json", o->json, "Print what was written (or the --list) as JSON");
    synth->callback([&ctx, o] { ctx.exitCode = runSynth(*o); });
}

static const CommandRegistration kRegisterTrace{"trace", 20, addTraceCommands};

} // namespace memplace::cli

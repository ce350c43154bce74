// memplace probe: measure the present GPU with microbenchmarks and write its MSL spec.
#include "cli/command.h"
#include "cli/table.h"
#include "common/file_io.h"
#include "common/json.h"
#include "probe/probe.h"
#include "probe/runner.h"
#include "spec/spec.h"

#include <fmt/format.h>

#include <iostream>

namespace memplace::cli {

namespace {

using nlohmann::json;

struct ProbeOptions {
    std::string output;
    bool force = false;
    bool json = false;
    std::string measurements;     ///< fit these instead of running the GPU program
    std::string saveMeasurements; ///< keep the raw JSON
    std::string gpuProgram;
    bool quick = false;
    std::string compare;
    double timeoutSeconds = 300;
};

/// Runs the GPU program, or reads recorded measurements. Sets `exitCode` on failure.
std::optional<std::string> measurementsText(const ProbeOptions& o, int& exitCode,
                                            std::string& source) {
    if (!o.measurements.empty()) {
        auto text = readFile(o.measurements);
        if (!text) {
            printDiagnostics(text.diagnostics());
            exitCode = kExitBadInput;
            return std::nullopt;
        }
        source = o.measurements;
        return *text;
    }
    auto program = probe::findGpuProgram(o.gpuProgram);
    if (!program) {
        if (!o.gpuProgram.empty()) {
            std::cerr << fmt::format("error: {}: no such GPU probe program\n", o.gpuProgram);
        } else if (!probe::hasNvidiaDeviceNode()) {
            std::cerr << fmt::format(
                "error: no GPU: this machine has no NVIDIA device (/dev/nvidiactl), and the GPU "
                "probe program {} was not found next to memplace (it is built only where nvcc "
                "is); `--measurements FILE` fits recorded measurements instead\n",
                probe::kGpuProgramName);
        } else {
            std::cerr << fmt::format(
                "error: the GPU probe program {} was not found next to memplace (it is built "
                "only where nvcc is found); name it with --gpu-program or ${}\n",
                probe::kGpuProgramName, probe::kGpuProgramEnv);
        }
        exitCode = kExitBadInput;
        return std::nullopt;
    }
    std::vector<std::string> args;
    if (o.quick) {
        args.emplace_back("--quick");
    }
    auto run = probe::runProgram(*program, args, o.timeoutSeconds);
    if (!run) {
        printDiagnostics(run.diagnostics());
        exitCode = kExitFailure;
        return std::nullopt;
    }
    source = *program;
    if (run->timedOut) {
        std::cerr << fmt::format("error: {} did not finish in {:.0f} s and was stopped\n", *program,
                                 o.timeoutSeconds);
        exitCode = kExitFailure;
        return std::nullopt;
    }
    if (run->exitCode != 0) {
        // The program's JSON says why; anything else it printed is not worth quoting.
        std::string why;
        json j = json::parse(run->out, nullptr, /*allow_exceptions=*/false);
        if (j.is_object() && j.contains("error") && j["error"].is_string()) {
            why = j["error"].get<std::string>();
        }
        if (run->exitCode == probe::kGpuExitNoDevice) {
            std::cerr << fmt::format("error: no GPU: {}\n", why.empty() ? "no CUDA device" : why);
            exitCode = kExitBadInput;
        } else {
            std::cerr << fmt::format("error: {} failed (exit {}){}{}\n", *program, run->exitCode,
                                     why.empty() ? "" : ": ", why);
            exitCode = kExitFailure;
        }
        return std::nullopt;
    }
    return run->out;
}

std::string comparisonTable(const std::vector<probe::SpecDifference>& diffs,
                            const std::string& reference) {
    Table t({"entry", "field", "probed", reference, "probed/" + reference});
    for (const auto& d : diffs) {
        t.add({d.entry, d.field, d.probed, d.reference,
               d.ratio != 0 ? fmt::format("{:.2f}", d.ratio) : ""});
    }
    return t.format();
}

int runProbe(const ProbeOptions& o) {
    int exitCode = kExitSuccess;
    std::string source;
    auto text = measurementsText(o, exitCode, source);
    if (!text) {
        return exitCode;
    }
    if (!o.saveMeasurements.empty()) {
        auto saved =
            writeFileAtomic(o.saveMeasurements, *text, o.force ? Overwrite::Yes : Overwrite::No);
        if (!saved) {
            printDiagnostics(saved.diagnostics());
            return kExitBadInput;
        }
    }
    auto m = probe::parseMeasurements(*text, source);
    if (!m) {
        printDiagnostics(m.diagnostics());
        return o.measurements.empty() ? kExitFailure : kExitBadInput;
    }
    auto r = probe::analyze(*m);
    if (!r) {
        printDiagnostics(r.diagnostics());
        return o.measurements.empty() ? kExitFailure : kExitBadInput;
    }
    std::optional<std::vector<probe::SpecDifference>> diffs;
    if (!o.compare.empty()) {
        auto reference = spec::loadSpec(o.compare);
        if (!reference) {
            printDiagnostics(reference.diagnostics());
            return kExitBadInput;
        }
        auto probed = spec::parseSpec(r->msl, "probed.msl");
        diffs = probe::compareSpecs(*probed, *reference);
    }
    if (!o.output.empty()) {
        auto written = writeFileAtomic(o.output, r->msl, o.force ? Overwrite::Yes : Overwrite::No);
        if (!written) {
            printDiagnostics(written.diagnostics());
            return kExitBadInput;
        }
    }
    if (o.json) {
        json j = probe::toJson(*r);
        j["output"] = o.output.empty() ? json(nullptr) : json(o.output);
        if (diffs) {
            json d = json::array();
            for (const auto& x : *diffs) {
                d.push_back({{"entry", x.entry},
                             {"field", x.field},
                             {"probed", x.probed},
                             {"reference", x.reference},
                             {"ratio", x.ratio}});
            }
            j["comparison"] = {{"reference", o.compare}, {"differences", d}};
        }
        std::cout << dumpJson(j, 2) << "\n";
        return kExitSuccess;
    }
    // Without -o the spec goes to stdout and the summary to stderr.
    std::ostream& info = o.output.empty() ? std::cerr : std::cout;
    if (o.output.empty()) {
        std::cout << r->msl;
    }
    info << probe::summaryText(*r);
    if (diffs) {
        info << fmt::format("\ndifferences from {} ({}):\n", o.compare, diffs->size())
             << comparisonTable(*diffs, o.compare);
    }
    if (!o.output.empty()) {
        info << fmt::format("wrote {}\n", o.output);
    }
    return kExitSuccess;
}

} // namespace

static void addProbeCommands(CLI::App& app, CommandContext& ctx) {
    auto o = std::make_shared<ProbeOptions>();
    auto* cmd = app.add_subcommand(
        "probe", "Measure the present GPU with microbenchmarks and write its MSL spec (exit 2 "
                 "without a GPU)");
    cmd->add_option("-o,--output", o->output,
                    "Write the spec to this file (atomically; an existing file only with "
                    "--force). Without it the spec goes to stdout");
    cmd->add_flag("--force", o->force, "Replace existing output files");
    cmd->add_flag("--json", o->json,
                  "Print JSON: every fitted number, the bandwidths and the spec");
    cmd->add_option("--measurements", o->measurements,
                    "Fit recorded measurements (the GPU program's JSON) instead of running it");
    cmd->add_option("--save-measurements", o->saveMeasurements,
                    "Also write the raw measurements (JSON) to this file");
    cmd->add_option("--gpu-program", o->gpuProgram,
                    fmt::format("The microbenchmark program (default: ${}, else {} next to "
                                "memplace)",
                                probe::kGpuProgramEnv, probe::kGpuProgramName));
    cmd->add_flag("--quick", o->quick, "Fewer points and smaller sets (to try the probe out)");
    cmd->add_option("--compare", o->compare,
                    "List the fields that differ from this spec (a built-in name or an MSL file)");
    cmd->add_option("--timeout", o->timeoutSeconds,
                    "Stop the GPU program after this many seconds (default 300)");
    cmd->callback([&ctx, o] { ctx.exitCode = runProbe(*o); });
}

static const CommandRegistration kRegisterProbe{"probe", 40, addProbeCommands};

} // namespace memplace::cli

// memplace rewrite FILE.cu -o DIR [--kernel NAME] [--force] [--launches-only] [--json]
//                  [-- extra clang args]
#ifdef MEMPLACE_HAVE_FRONTEND

#include "cli/command.h"
#include "cli/table.h"
#include "common/file_io.h"
#include "common/json.h"
#include "rewrite/rewrite.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace memplace::cli {

namespace {

namespace fs = std::filesystem;

struct RewriteOptionsCli {
    std::string file;
    std::string outDir;
    std::string kernel;
    bool force = false;
    bool launchesOnly = false;
    bool json = false;
    std::string compileFile;
    std::vector<std::string> clangArgs;
};

std::string placesList(const PlaceSet& s) {
    std::string out;
    for (Place p : kAllPlaces) {
        if (s.contains(p)) {
            out += (out.empty() ? "" : " ") + std::string(placeName(p));
        }
    }
    return out;
}

/// One line per file written: the main file, then each included file of the program with what
/// was rewritten in it.
std::string writtenFiles(const rewrite::RewriteResult& r, const std::string& out,
                         const std::vector<std::string>& includedOut) {
    std::string s = fmt::format("wrote {}\n", out);
    for (size_t i = 0; i < r.included.size() && i < includedOut.size(); ++i) {
        const rewrite::IncludedOutput& f = r.included[i];
        std::string what = "copied unchanged (no kernel, launch or extern __shared__ rewritten)";
        if (f.rewritten) {
            auto joined = [](const std::vector<std::string>& names) {
                std::string out;
                for (const auto& n : names) {
                    out += (out.empty() ? "" : ", ") + n;
                }
                return out;
            };
            const std::string kernels = joined(f.kernels);
            what = fmt::format("rewritten: {} kernel{}{}{}, {} launch{}", f.kernels.size(),
                               f.kernels.size() == 1 ? "" : "s", kernels.empty() ? "" : " ",
                               kernels, f.launches, f.launches == 1 ? "" : "es");
            // A header of prototypes or helpers holds no kernel definition but is rewritten.
            if (!f.prototypes.empty()) {
                what += fmt::format(", the prototype{} of {}", f.prototypes.size() == 1 ? "" : "s",
                                    joined(f.prototypes));
            }
            if (!f.helpers.empty()) {
                what += fmt::format(", {} helper{} made template{} over accessors ({})",
                                    f.helpers.size(), f.helpers.size() == 1 ? "" : "s",
                                    f.helpers.size() == 1 ? "" : "s", joined(f.helpers));
            }
        }
        s += fmt::format("wrote {} (from {}): {}\n", includedOut[i], f.file, what);
    }
    return s;
}

std::string humanSummary(const rewrite::RewriteResult& r, const std::string& out,
                         const std::vector<std::string>& includedOut) {
    std::string s = writtenFiles(r, out, includedOut);
    for (const auto& k : r.kernels) {
        std::string name =
            k.instantiations.size() > 1 || k.instantiations.empty() || k.instantiations[0] == k.name
                ? k.name
                : k.instantiations[0];
        if (!k.rewritten) {
            s += fmt::format("\nkernel {}: left as written ({})\n", name, k.reason);
            continue;
        }
        s += fmt::format("\nkernel {}: rewritten ({}), {} launch{}\n", name, k.descriptor,
                         k.launches, k.launches == 1 ? "" : "es");
        Table t({"array", "mode", "places", "note"});
        for (const auto& a : k.arrays) {
            t.add({a.name, a.accessor ? a.mode : "raw pointer",
                   a.accessor ? placesList(a.places) : "global",
                   a.accessor ? "likely " + a.likely : a.reason});
        }
        std::string table = t.format();
        size_t pos = 0;
        while (pos < table.size()) {
            size_t nl = table.find('\n', pos);
            s += "  " + table.substr(pos, nl - pos) + "\n";
            pos = nl == std::string::npos ? table.size() : nl + 1;
        }
    }
    s += fmt::format("\nlaunches: {} through memplace::launch, {} as MEMPLACE_LAUNCH, {} left "
                     "as <<<...>>>; {} extern __shared__ rewritten\n",
                     r.runtimeLaunches, r.macroLaunches, r.untouchedLaunches, r.dynamicShared);
    return s;
}

/// Reads --compile's file into `opts.compile`: {"kernel": [{"array": "place", ...}, ...], ...}.
/// False (the error printed) when it cannot be read or is not of that form.
bool readCompileFile(const RewriteOptionsCli& o, rewrite::RewriteOptions& opts) {
    // {"kernel": [{"array": "place", ...}, ...], ...}
    auto text = readFile(o.compileFile);
    if (!text) {
        printDiagnostics(text.diagnostics());
        return false;
    }
    const nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        std::cerr << fmt::format("error: {}: not a JSON object of kernel -> list of "
                                 "{{array: place}}\n",
                                 o.compileFile);
        return false;
    }
    for (const auto& [kernel, list] : j.items()) {
        if (!list.is_array()) {
            std::cerr << fmt::format("error: {}: '{}' is not a list of placements\n", o.compileFile,
                                     kernel);
            return false;
        }
        for (const auto& one : list) {
            rewrite::RewriteOptions::ExtraPlacement x;
            x.kernel = kernel;
            if (!one.is_object()) {
                std::cerr << fmt::format("error: {}: a placement of '{}' is not an object\n",
                                         o.compileFile, kernel);
                return false;
            }
            for (const auto& [array, place] : one.items()) {
                auto p = place.is_string() ? parsePlace(place.get<std::string>())
                                           : std::optional<Place>{};
                if (!p || *p == Place::Registers) {
                    std::cerr << fmt::format("error: {}: {}.{}: unknown place {}\n", o.compileFile,
                                             kernel, array, dumpJson(place));
                    return false;
                }
                x.places.emplace_back(array, *p);
            }
            opts.compile.push_back(std::move(x));
        }
    }
    return true;
}

// Every output (the main file, then the program's included files at their relative names)
// is checked before any is written: a refused run writes nothing.
struct Output {
    fs::path path;
    std::string original;
    const std::string* text = nullptr;
    bool included = false;
};

/// The files to write, each checked: none is the input, none is replaced without --force (an
/// included file's copy with the same text excepted). Nothing (the error printed) when one fails.
std::optional<std::vector<Output>> plannedOutputs(const RewriteOptionsCli& o,
                                                  const rewrite::RewriteResult& result) {
    std::error_code ec;
    std::vector<Output> outputs = {
        {fs::path(o.outDir) / fs::path(o.file).filename(), o.file, &result.output}};
    // The included program files go along only when one of them is rewritten: then the copies
    // must include each other through their relative names. Otherwise the rewritten main file
    // includes the originals through the source folder on the include path, as before.
    const bool anyIncludedRewritten =
        std::any_of(result.included.begin(), result.included.end(),
                    [](const rewrite::IncludedOutput& f) { return f.rewritten; });
    // (The outputs point into `result`: the copies are its included files, not a copy of them.)
    const std::vector<rewrite::IncludedOutput> none;
    const std::vector<rewrite::IncludedOutput>& copies =
        anyIncludedRewritten ? result.included : none;
    for (const auto& f : copies) {
        fs::path rel = fs::path(f.relative).lexically_normal();
        if (rel.empty() || rel.is_absolute() || *rel.begin() == "..") {
            std::cerr << fmt::format("error: {}: an included file outside the main file's folder "
                                     "({}); nothing written\n",
                                     f.file, f.relative);
            return std::nullopt;
        }
        outputs.push_back({fs::path(o.outDir) / rel, f.path, &f.output, true});
    }
    for (const Output& out : outputs) {
        if (fs::exists(out.path) && fs::equivalent(out.path, out.original, ec)) {
            std::cerr << fmt::format("error: {} is the input {} itself: the rewriter never "
                                     "writes its input; choose another folder\n",
                                     out.path.string(), out.original);
            return std::nullopt;
        }
        // An included file's copy already there with the same text (another main file of the
        // same folder wrote it) replaces nothing.
        bool same = false;
        if (out.included && fs::exists(out.path)) {
            auto existing = readFile(out.path);
            same = existing && *existing == *out.text;
        }
        if (!o.force && fs::exists(out.path) && !same) {
            std::cerr << fmt::format(
                "error: {} already exists; nothing written\nnote: use --force to "
                "replace it\n",
                out.path.string());
            return std::nullopt;
        }
    }
    return outputs;
}

/// Writes the planned outputs; false (the error printed) when one cannot be written.
bool writeOutputs(const RewriteOptionsCli& o, const std::vector<Output>& outputs) {
    std::error_code ec;
    for (const Output& out : outputs) {
        if (out.included && !o.force && fs::exists(out.path)) {
            continue; // the same text (checked above)
        }
        fs::create_directories(out.path.parent_path(), ec);
        auto written =
            writeFileAtomic(out.path, *out.text, o.force ? Overwrite::Yes : Overwrite::No);
        if (!written) {
            printDiagnostics(written.diagnostics());
            if (fs::exists(out.path) && !o.force) {
                std::cerr << "note: use --force to replace it\n";
            }
            return false;
        }
    }
    return true;
}

int runRewrite(const RewriteOptionsCli& o) {
    rewrite::RewriteOptions opts;
    opts.file = o.file;
    opts.extraArgs = o.clangArgs;
    opts.kernel = o.kernel;
    opts.launchesOnly = o.launchesOnly;
    if (!o.compileFile.empty() && !readCompileFile(o, opts)) {
        return kExitBadInput;
    }
    auto result = rewrite::rewriteFile(opts);
    if (!result) {
        printDiagnostics(result.diagnostics());
        return kExitBadInput;
    }
    std::error_code ec;
    fs::create_directories(o.outDir, ec);
    if (ec) {
        std::cerr << fmt::format("error: cannot create the output folder {}: {}\n", o.outDir,
                                 ec.message());
        return kExitBadInput;
    }
    const std::optional<std::vector<Output>> planned = plannedOutputs(o, *result);
    if (!planned) {
        return kExitBadInput;
    }
    const std::vector<Output>& outputs = *planned;
    if (!writeOutputs(o, outputs)) {
        return kExitBadInput;
    }
    std::vector<std::string> includedOut;
    for (size_t i = 1; i < outputs.size(); ++i) {
        includedOut.push_back(outputs[i].path.string());
    }
    printDiagnostics(result->warnings);
    if (o.json) {
        std::cout << dumpJson(rewrite::toJson(*result, outputs[0].path.string(), includedOut), 2)
                  << '\n';
    } else {
        std::cout << humanSummary(*result, outputs[0].path.string(), includedOut);
    }
    return kExitSuccess;
}

} // namespace

static void addRewriteCommand(CLI::App& app, CommandContext& ctx) {
    auto o = std::make_shared<RewriteOptionsCli>();
    auto* cmd = app.add_subcommand(
        "rewrite", "Rewrite a .cu file into its placement-agnostic form (kernels templated on "
                   "accessors, launches through the runtime); the input is never modified");
    cmd->add_option("file", o->file, "The .cu file")->required();
    cmd->add_option("-o,--output", o->outDir,
                    "The folder the rewritten file is written to (same file name); the files it "
                    "includes from its own folder tree go there too, at the same relative names")
        ->required();
    cmd->add_option("clang-args", o->clangArgs,
                    "Extra clang arguments, after `--` (e.g. -- -DN=1024 -Iinclude)");
    cmd->add_option("--kernel", o->kernel,
                    "Only this kernel (name, qualified name or instantiation); the others are "
                    "left as written and their launches become MEMPLACE_LAUNCH");
    cmd->add_flag("--force", o->force, "Replace existing output files");
    cmd->add_flag("--launches-only", o->launchesOnly,
                  "Only rewrite launches (MEMPLACE_LAUNCH) and extern __shared__ "
                  "(MEMPLACE_DYNAMIC_SHARED): the original program, runnable under the CPU "
                  "emulation layer");
    cmd->add_option("--compile", o->compileFile,
                    "JSON file of extra placements to compile as specialised instantiations: "
                    "{\"kernel\": [{\"array\": \"place\", ...}, ...]} (arrays not named: global)");
    cmd->add_flag("--json", o->json,
                  "Print what was rewritten as JSON (kernels, arrays, places, compiled "
                  "placements, warnings)");
    cmd->footer("Exit codes: 0 written; 2 the file cannot be read or parsed, no CUDA "
                "installation is found, or the output exists (without --force).");
    cmd->callback([&ctx, o] { ctx.exitCode = runRewrite(*o); });
}

static const CommandRegistration kRegisterRewrite{"rewrite", 25, addRewriteCommand};

} // namespace memplace::cli

#endif // MEMPLACE_HAVE_FRONTEND

// memplace analyze FILE.cu [--kernel NAME] [--json] [-- extra clang args]
#ifdef MEMPLACE_HAVE_FRONTEND

#include "cli/command.h"
#include "cli/table.h"
#include "frontend/frontend.h"
#include "kernelinfo/kernel_info_json.h"

#include <fmt/format.h>

#include <iostream>

namespace memplace::cli {

namespace {

namespace ki = memplace::kernelinfo;

std::string formatBytes(uint64_t b) {
    if (b >= uint64_t{1024} * 1024 && b % 1024 == 0) {
        return fmt::format("{:g} MB", static_cast<double>(b) / (1024.0 * 1024.0));
    }
    if (b >= 1024) {
        return fmt::format("{:g} KB", static_cast<double>(b) / 1024.0);
    }
    return fmt::format("{} B", b);
}

std::string coeffTimes(const ki::Poly& c, const std::string& var) {
    if (c == ki::Poly::constant(1)) {
        return var;
    }
    if (c == ki::Poly::constant(-1)) {
        return "-" + var;
    }
    std::string s = c.toString();
    return c.monomials().size() > 1 ? fmt::format("({})*{}", s, var) : s + "*" + var;
}

std::string describeIndex(const ki::IndexInfo& ix) {
    switch (ix.kind) {
    case ki::IndexKind::Affine: {
        std::string out;
        for (const auto& t : ix.terms) {
            std::string term = coeffTimes(t.coeff, t.var);
            if (out.empty()) {
                out = term;
            } else if (term.starts_with("-")) {
                out += " - " + term.substr(1);
            } else {
                out += " + " + term;
            }
        }
        if (!ix.offset.isZero() || out.empty()) {
            std::string off = ix.offset.toString();
            out += out.empty() ? off : (off.starts_with("-") ? " - " + off.substr(1) : " + " + off);
        }
        return "affine: " + out;
    }
    case ki::IndexKind::Indirect: {
        std::string via;
        for (const auto& v : ix.via) {
            via += (via.empty() ? "" : ", ") + v;
        }
        std::string sites;
        for (int s : ix.viaSites) {
            sites += (sites.empty() ? "" : ", ") + std::to_string(s);
        }
        return sites.empty() ? fmt::format("indirect via {}", via)
                             : fmt::format("indirect via {} (site {})", via, sites);
    }
    case ki::IndexKind::Unknown:
        return "unknown: " + ix.reason;
    }
    return "";
}

std::string placesList(const PlaceSet& s) {
    std::string out;
    for (Place p : kAllPlaces) {
        if (s.contains(p)) {
            out += (out.empty() ? "" : " ") + std::string(placeName(p));
        }
    }
    return out;
}

std::string launchValue(const ki::LaunchValue& v) {
    if (v.text.empty()) {
        return v.value.size() == 1 ? std::to_string(v.value[0]) : "-";
    }
    if (v.value.size() == 3) {
        return fmt::format("{} = ({},{},{})", v.text, v.value[0], v.value[1], v.value[2]);
    }
    if (v.value.size() == 1 && v.text != std::to_string(v.value[0])) {
        return fmt::format("{} = {}", v.text, v.value[0]);
    }
    return v.text;
}

/// A table's lines indented by two spaces.
std::string indent(const std::string& table) {
    std::string r;
    size_t pos = 0;
    while (pos < table.size()) {
        size_t nl = table.find('\n', pos);
        r += "  " + table.substr(pos, nl - pos) + "\n";
        pos = nl + 1;
    }
    return r;
}

/// The arrays table and the places each array is excluded from.
std::string humanArrays(const ki::KernelInfo& k) {
    std::string out;
    out += "\n  arrays\n";
    Table arrays(
        {"name", "kind", "element", "mode", "extent", "dims", "as written", "feasible places"});
    for (const auto& a : k.arrays) {
        std::string elem = (a.isConst ? "const " : "") + a.elementType +
                           (a.elementSize != 0 ? fmt::format(" ({} B)", a.elementSize) : "");
        std::string extent = a.extent.bytes ? formatBytes(*a.extent.bytes) : "dynamic";
        std::string dims = a.dimensionality >= 2 && a.rowLength
                               ? fmt::format("2-D, rows of {}", a.rowLength->toString())
                               : std::to_string(a.dimensionality) + "-D";
        if (!a.dims.empty()) {
            dims.clear();
            for (uint64_t d : a.dims) {
                dims += fmt::format("[{}]", d == 0 ? std::string() : std::to_string(d));
            }
        }
        arrays.add({a.name, std::string(ki::arrayKindName(a.kind)), elem,
                    std::string(ki::accessModeName(a.mode)), extent, dims,
                    std::string(placeName(a.original)), placesList(a.feasible)});
    }
    out += indent(arrays.format());
    bool anyExcluded = false;
    for (const auto& a : k.arrays) {
        for (const auto& [place, reason] : a.excluded) {
            if (!anyExcluded) {
                out += "  excluded places:\n";
                anyExcluded = true;
            }
            out += fmt::format("    {} not {}: {}\n", a.name, placeName(place), reason);
        }
    }

    return out;
}

/// The access sites table.
std::string humanSites(const ki::KernelInfo& k, const std::string& file) {
    std::string out;
    out += fmt::format("\n  sites ({})\n", k.sites.size());
    if (!k.sites.empty()) {
        Table sites({"id", "array", "at", "access", "loops", "index"});
        for (const auto& s : k.sites) {
            std::string at = ki::formatLocation(s.location, file);
            if (!s.callPath.empty()) {
                at += " in " + s.function;
            }
            std::string loops;
            for (int l : s.loops) {
                loops += (loops.empty() ? "" : ",") + std::to_string(l);
            }
            std::string array = s.array + s.member;
            if (s.form != ki::SiteForm::Subscript) {
                array +=
                    fmt::format(" [{}]", s.intrinsic.empty() ? std::string(ki::siteFormName(s.form))
                                                             : s.intrinsic);
            }
            sites.add({std::to_string(s.id), array, at, std::string(ki::accessModeName(s.access)),
                       loops.empty() ? "-" : loops, describeIndex(s.index)});
        }
        out += indent(sites.format());
    }

    return out;
}

/// The loops table, when there are loops.
std::string humanLoops(const ki::KernelInfo& k, const std::string& file) {
    std::string out;
    if (!k.loops.empty()) {
        out += fmt::format("\n  loops ({})\n", k.loops.size());
        Table loops({"id", "kind", "at", "var", "init", "step", "bound", "trips"});
        for (const auto& l : k.loops) {
            loops.add({std::to_string(l.id), l.kind, ki::formatLocation(l.location, file),
                       l.var.empty() ? "-" : l.var, l.init ? l.init->toString() : "-",
                       l.step ? l.step->toString() : "-", l.bound.empty() ? "-" : l.bound,
                       l.tripCount ? std::to_string(*l.tripCount) : "?"});
        }
        out += indent(loops.format());
    }

    return out;
}

/// The launches table.
std::string humanLaunches(const ki::KernelInfo& k, const std::string& file) {
    std::string out;
    out += fmt::format("\n  launches ({})\n", k.launches.size());
    if (!k.launches.empty()) {
        Table launches({"at", "in", "grid", "block", "shared", "stream"});
        for (const auto& l : k.launches) {
            launches.add({ki::formatLocation(l.location, file), l.function, launchValue(l.grid),
                          launchValue(l.block), launchValue(l.sharedBytes),
                          l.stream.text.empty() ? "-" : l.stream.text});
        }
        out += indent(launches.format());
    }
    return out;
}

/// Hazards and untracked accesses, when there are any.
std::string humanFindings(const ki::KernelInfo& k, const std::string& file) {
    std::string out;
    if (!k.hazards.empty()) {
        out += fmt::format("\n  hazards ({})\n", k.hazards.size());
        for (const auto& h : k.hazards) {
            out += fmt::format("    {} {}: {} ({})\n", ki::formatLocation(h.location, file),
                               h.array, h.message, ki::hazardKindName(h.kind));
        }
    }
    if (!k.untracked.empty()) {
        out += fmt::format("\n  untracked accesses ({})\n", k.untracked.size());
        for (const auto& u : k.untracked) {
            out += "    " + u + "\n";
        }
    }
    return out;
}

/// The on-chip facts (kernelinfo/onchip.h, docs/onchip.md), when there are any.
std::string humanOnChip(const ki::KernelInfo& k, const std::string& file) {
    const ki::OnChipFacts& f = k.onchip;
    std::string out;
    if (!f.shared.empty()) {
        out += fmt::format("\n  shared arrays ({})\n", f.shared.size());
        Table t({"array", "private", "indices", "reads", "writes", "candidate"});
        for (const auto& s : f.shared) {
            std::string weight = s.estimated ? "~" : "";
            t.add({s.array, s.threadPrivate ? "yes" : "no",
                   s.constantIndices ? "constant" : "dynamic", weight + std::to_string(s.reads),
                   weight + std::to_string(s.writes),
                   !s.threadPrivate    ? "global (P2)"
                   : s.constantIndices ? "registers (P1)"
                                       : "local (P2)"});
        }
        out += indent(t.format());
        for (const auto& s : f.shared) {
            out += fmt::format("    {}: {}\n", s.array, s.privacy);
            if (!s.indexReason.empty()) {
                out += fmt::format("    {}: {}\n", s.array, s.indexReason);
            }
        }
    }
    if (!f.barriers.empty()) {
        out += fmt::format("\n  barriers ({})\n", f.barriers.size());
        for (const auto& b : f.barriers) {
            out += fmt::format("    {}{} {}: {}\n", ki::formatLocation(b.location, file),
                               b.function == k.name ? "" : " in " + b.function,
                               b.needed ? "needed" : "not needed", b.reason);
        }
    }
    if (!f.invariantLoads.empty()) {
        out += fmt::format("\n  loads the same for threads along a dimension ({})\n",
                           f.invariantLoads.size());
        for (const auto& l : f.invariantLoads) {
            out += fmt::format("    site {} {}: {}\n", l.site, l.array, l.dims);
        }
    }
    return out;
}

std::string humanKernel(const ki::KernelInfo& k, const std::string& file) {
    std::string out = fmt::format("kernel {} ({}:{}:{})\n", k.instantiation,
                                  k.location.file.empty() ? file : k.location.file, k.location.line,
                                  k.location.column);
    std::string params;
    for (const auto& p : k.params) {
        params += (params.empty() ? "" : ", ") + p.type + " " + p.name;
    }
    out += fmt::format("  parameters: {}\n", params.empty() ? "none" : params);
    if (k.blockDim) {
        out += fmt::format("  block: ({},{},{})", (*k.blockDim)[0], (*k.blockDim)[1],
                           (*k.blockDim)[2]);
        out += k.gridDim ? fmt::format("  grid: ({},{},{})\n", (*k.gridDim)[0], (*k.gridDim)[1],
                                       (*k.gridDim)[2])
                         : "\n";
    }

    out += humanArrays(k);
    out += humanSites(k, file);
    out += humanLoops(k, file);
    out += humanLaunches(k, file);
    out += humanFindings(k, file);
    out += humanOnChip(k, file);
    return out;
}

struct AnalyzeOptionsCli {
    std::string file;
    std::string kernel;
    bool json = false;
    std::vector<std::string> clangArgs;
};

int runAnalyze(const AnalyzeOptionsCli& o) {
    frontend::AnalyzeOptions opts;
    opts.file = o.file;
    opts.extraArgs = o.clangArgs;
    DiagnosticList warnings;
    auto info = frontend::analyzeFile(opts, &warnings);
    if (!info) {
        printDiagnostics(info.diagnostics());
        return kExitBadInput;
    }
    printDiagnostics(warnings);
    ki::FileInfo out = *info;
    if (!o.kernel.empty()) {
        std::vector<ki::KernelInfo> kept;
        auto unqualified = [](const std::string& n) {
            size_t p = n.rfind("::", n.find('<'));
            return p == std::string::npos ? n : n.substr(p + 2);
        };
        for (auto& k : out.kernels) {
            if (k.name == o.kernel || k.instantiation == o.kernel ||
                unqualified(k.name) == o.kernel || unqualified(k.instantiation) == o.kernel) {
                kept.push_back(std::move(k));
            }
        }
        if (kept.empty()) {
            std::string names;
            for (const auto& k : info->kernels) {
                names += (names.empty() ? "" : ", ") + k.instantiation;
            }
            std::cerr << fmt::format("{}: error: no kernel named '{}' (kernels: {})\n", o.file,
                                     o.kernel, names.empty() ? "none" : names);
            return kExitBadInput;
        }
        out.kernels = std::move(kept);
    }
    if (o.json) {
        std::cout << ki::formatJson(ki::toJson(out));
        return kExitSuccess;
    }
    if (out.kernels.empty()) {
        std::cout << fmt::format("{}: no kernels\n", o.file);
    }
    bool first = true;
    for (const auto& k : out.kernels) {
        std::cout << (first ? "" : "\n") << humanKernel(k, o.file);
        first = false;
    }
    return kExitSuccess;
}

} // namespace

static void addAnalyzeCommand(CLI::App& app, CommandContext& ctx) {
    auto o = std::make_shared<AnalyzeOptionsCli>();
    auto* cmd = app.add_subcommand(
        "analyze", "Analyse the CUDA kernels of a .cu file: arrays, access sites, feasible places");
    cmd->add_option("file", o->file, "The .cu file")->required();
    cmd->add_option("clang-args", o->clangArgs,
                    "Extra clang arguments, after `--` (e.g. -- -DN=1024 -Iinclude "
                    "--cuda-path=/opt/cuda)");
    cmd->add_option("--kernel", o->kernel,
                    "Only this kernel: its name (with or without namespaces) or one "
                    "instantiation (\"scale<float>\")");
    cmd->add_flag("--json", o->json, "Print JSON");
    cmd->footer("Exit codes: 0 analysed; 2 the file cannot be read or parsed, or no CUDA "
                "installation is found.");
    cmd->callback([&ctx, o] { ctx.exitCode = runAnalyze(*o); });
}

static const CommandRegistration kRegisterAnalyze{"analyze", 20, addAnalyzeCommand};

} // namespace memplace::cli

#endif // MEMPLACE_HAVE_FRONTEND

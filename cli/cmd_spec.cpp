// memplace spec list | show | check | eval
#include "cli/command.h"
#include "cli/table.h"
#include "common/file_io.h"
#include "common/json.h"
#include "spec/spec.h"
#include "spec/spec_json.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <random>

namespace memplace::cli {

namespace {

using nlohmann::json;
using spec::Spec;

std::string formatSize(uint64_t b) {
    if (b >= (1ull << 30) && b % (1ull << 20) == 0) {
        return fmt::format("{:g} GB", static_cast<double>(b) / (1ull << 30));
    }
    if (b >= (1ull << 20)) {
        return fmt::format("{:g} MB", static_cast<double>(b) / (1ull << 20));
    }
    if (b >= 1024) {
        return fmt::format("{:g} KB", static_cast<double>(b) / 1024);
    }
    return fmt::format("{} B", b);
}

int runList(bool asJson) {
    json out = json::array();
    Table table({"name", "processor", "arch", "SMs", "L2"});
    for (const auto& name : spec::builtinSpecNames()) {
        auto s = spec::loadSpec(name);
        if (!s) {
            // A built-in that does not parse is a bug in this build, not bad input.
            printDiagnostics(s.diagnostics());
            return kExitFailure;
        }
        const spec::Memory* l2 = s->findMemory("L2");
        std::string l2Size = l2 != nullptr ? formatSize(l2->size) : "-";
        out.push_back({{"name", name},
                       {"processor", s->processor.name},
                       {"arch", s->processor.arch},
                       {"sms", s->processor.sms}});
        table.add(
            {name, s->processor.name, s->processor.arch, std::to_string(s->processor.sms), l2Size});
    }
    std::cout << (asJson ? dumpJson(out, 2) + "\n" : table.format());
    return kExitSuccess;
}

std::string humanSpec(const Spec& s) {
    const auto& p = s.processor;
    std::string out = fmt::format(
        "{} ({}): {} SMs at {} MHz, warp {}, {} threads/{} blocks/{} regs/{} shared per SM, "
        "{} threads/{} shared per block, unit overlap {:g}\n\n",
        p.name.empty() ? s.name : p.name, p.arch.empty() ? "?" : p.arch, p.sms, p.clockMHz,
        p.warpSize, p.maxThreadsPerSm, p.maxBlocksPerSm, p.maxRegistersPerSm,
        formatSize(p.maxSharedPerSm), p.maxThreadsPerBlock, formatSize(p.maxSharedPerBlock),
        p.unitOverlap);
    Table memories({"memory", "id", "managed", "rw", "size", "block", "banks", "latency r/w",
                    "scope", "concurrency", "below", "serialization"});
    for (const auto& m : s.memories) {
        memories.add(
            {m.name, std::to_string(m.id), m.softwareManaged ? "yes" : "no",
             m.writable ? "rw" : "r", formatSize(m.size), formatSize(m.blockSize),
             m.banks ? std::to_string(*m.banks) : "-",
             fmt::format("{}/{}", m.latency.read, m.latency.write),
             std::string(spec::shareScopeName(m.shareScope)),
             fmt::format("{}/{}", m.concurrency.memoryBound, m.concurrency.computeBound),
             m.lowerLevels.empty() ? "-" : fmt::format("{}", fmt::join(m.lowerLevels, ",")),
             m.serialCondition ? m.serialCondition->toString() : "never"});
    }
    out += memories.format();
    out += "\n";
    Table places(
        {"place", "memory", "levels (nearest first)", "path", "rw", "capacity", "launch cost"});
    for (const auto& e : s.places) {
        const bool launch = e.launchCost.memoryBound != 0 || e.launchCost.computeBound != 0;
        places.add(
            {std::string(placeName(e.place)), e.memory,
             fmt::format("{}", fmt::join(e.levels, " > ")), e.path, e.writable ? "rw" : "r",
             fmt::format("{} per {}", formatSize(e.capacity),
                         spec::shareScopeName(e.capacityScope)),
             launch ? fmt::format("{:g}/{:g}", e.launchCost.memoryBound, e.launchCost.computeBound)
                    : "-"});
    }
    out += places.format();
    if (!s.assumptions.empty()) {
        out += "\nassumptions:\n";
        for (const auto& a : s.assumptions) {
            out += fmt::format("  {}:{}: {}\n", a.location.line, a.location.column, a.text);
        }
    }
    return out;
}

int runShow(const std::string& nameOrPath, bool asJson, bool asMsl) {
    auto s = spec::loadSpec(nameOrPath);
    if (!s) {
        printDiagnostics(s.diagnostics());
        return kExitBadInput;
    }
    if (asJson) {
        std::cout << dumpJson(spec::toJson(*s), 2) << "\n";
    } else if (asMsl) {
        std::cout << spec::printSpec(*s);
    } else {
        std::cout << humanSpec(*s);
    }
    return kExitSuccess;
}

int runCheck(const std::vector<std::string>& files, bool asJson) {
    json out = json::array();
    int exitCode = kExitSuccess;
    for (const auto& file : files) {
        auto text = readFile(file);
        Expected<Spec> s = text ? spec::parseSpec(*text, file) : std::move(text).takeFailure();
        json entry = {{"file", file}, {"ok", s.ok()}};
        if (s) {
            entry["memories"] = s->memories.size();
            entry["places"] = s->places.size();
            entry["assumptions"] = spec::toJson(*s)["assumptions"];
            if (!asJson) {
                std::cout << fmt::format("{}: ok ({} memories, {} places, {} assumptions)\n", file,
                                         s->memories.size(), s->places.size(),
                                         s->assumptions.size());
            }
        } else {
            exitCode = kExitBadInput;
            json errors = json::array();
            for (const auto& d : s.diagnostics().all()) {
                errors.push_back({{"line", d.location.line},
                                  {"column", d.location.column},
                                  {"severity", severityName(d.severity)},
                                  {"message", d.message}});
            }
            entry["diagnostics"] = std::move(errors);
            if (!asJson) {
                printDiagnostics(s.diagnostics());
                std::cerr << fmt::format("{}: {} error(s)\n", file, s.diagnostics().errorCount());
            }
        }
        out.push_back(std::move(entry));
    }
    if (asJson) {
        std::cout << dumpJson(out, 2) << "\n";
    }
    return exitCode;
}

/// Lanes of one warp access from a pattern: stride:K, same, random:SEED or list:i,j,...
Expected<std::vector<spec::LaneAccess>> lanesFor(const std::string& pattern, int64_t elementSize,
                                                 uint32_t warpSize) {
    std::vector<spec::LaneAccess> lanes;
    auto add = [&](int64_t index) { lanes.push_back({index, index * elementSize}); };
    auto colon = pattern.find(':');
    std::string kind = pattern.substr(0, colon);
    std::string arg = colon == std::string::npos ? "" : pattern.substr(colon + 1);
    try {
        if (kind == "stride") {
            int64_t k = arg.empty() ? 1 : std::stoll(arg);
            for (uint32_t l = 0; l < warpSize; ++l) {
                add(static_cast<int64_t>(l) * k);
            }
        } else if (kind == "same") {
            for (uint32_t l = 0; l < warpSize; ++l) {
                add(arg.empty() ? 0 : std::stoll(arg));
            }
        } else if (kind == "random") {
            std::mt19937_64 rng(arg.empty() ? 1 : std::stoull(arg));
            std::uniform_int_distribution<int64_t> dist(0, 1 << 20);
            for (uint32_t l = 0; l < warpSize; ++l) {
                add(dist(rng));
            }
        } else if (kind == "list") {
            size_t start = 0;
            while (start <= arg.size()) {
                size_t comma = arg.find(',', start);
                add(std::stoll(arg.substr(start, comma - start)));
                if (comma == std::string::npos) {
                    break;
                }
                start = comma + 1;
            }
        } else {
            return fail(fmt::format("unknown access pattern '{}' (stride:K, same[:I], "
                                    "random[:SEED], list:I,J,...)",
                                    pattern));
        }
    } catch (const std::exception&) {
        return fail(fmt::format("malformed access pattern '{}'", pattern));
    }
    return lanes;
}

int runEval(const std::string& nameOrPath, const std::vector<std::string>& patterns,
            int64_t elementSize, bool asJson) {
    auto s = spec::loadSpec(nameOrPath);
    if (!s) {
        printDiagnostics(s.diagnostics());
        return kExitBadInput;
    }
    if (elementSize <= 0) {
        std::cerr << "error: --element-size must be positive\n";
        return kExitBadInput;
    }
    json out = json::array();
    Table table({"access", "memory", "condition", "transactions"});
    for (const auto& pattern : patterns) {
        auto lanes = lanesFor(pattern, elementSize, s->processor.warpSize);
        if (!lanes) {
            printDiagnostics(lanes.diagnostics());
            return kExitBadInput;
        }
        for (const auto& m : s->memories) {
            if (!m.softwareManaged || m.name == "registers") {
                continue;
            }
            spec::TransactionCounter counter(
                m.serialCondition ? &*m.serialCondition : nullptr,
                {m.banks.value_or(0), static_cast<int64_t>(m.blockSize), m.wordSize});
            uint32_t n = counter.count(*lanes);
            std::string cond = m.serialCondition ? m.serialCondition->toString() : "never";
            out.push_back({{"access", pattern},
                           {"memory", m.name},
                           {"condition", cond},
                           {"transactions", n}});
            table.add({pattern, m.name, cond, std::to_string(n)});
        }
    }
    std::cout << (asJson ? dumpJson(out, 2) + "\n" : table.format());
    return kExitSuccess;
}

} // namespace

static void addSpecCommands(CLI::App& app, CommandContext& ctx) {
    // Options live as long as the callbacks that read them.
    struct Options {
        bool json = false;
        bool msl = false;
        std::string spec;
        std::vector<std::string> files;
        std::vector<std::string> patterns;
        int64_t elementSize = 4;
    };
    auto o = std::make_shared<Options>();

    auto* specCmd = app.add_subcommand("spec", "Built-in and user memory specifications (MSL)");
    specCmd->require_subcommand(1);

    auto* list = specCmd->add_subcommand("list", "List the built-in specs");
    list->add_flag("--json", o->json, "Print JSON");
    list->callback([&ctx, o] { ctx.exitCode = runList(o->json); });

    auto* show = specCmd->add_subcommand("show", "Show a spec: a built-in name or an MSL file");
    show->add_option("spec", o->spec, "Built-in name (see `spec list`) or MSL file")->required();
    show->add_flag("--json", o->json, "Print JSON");
    show->add_flag("--msl", o->msl, "Print canonical MSL (every field, `?` and `om` resolved)");
    show->callback([&ctx, o] { ctx.exitCode = runShow(o->spec, o->json, o->msl); });

    auto* check = specCmd->add_subcommand(
        "check", "Check MSL files; every error is reported with file:line:col (exit 2 on errors)");
    check->add_option("files", o->files, "MSL files")->required();
    check->add_flag("--json", o->json, "Print JSON");
    check->callback([&ctx, o] { ctx.exitCode = runCheck(o->files, o->json); });

    auto* eval = specCmd->add_subcommand(
        "eval", "Count the transactions of warp accesses in each software-managed memory");
    eval->add_option("spec", o->spec, "Built-in name or MSL file")->required();
    eval->add_option("--access", o->patterns,
                     "Lane indices of one warp access: stride:K, same[:I], random[:SEED], "
                     "list:I,J,... (repeatable)")
        ->required();
    eval->add_option("--element-size", o->elementSize, "Bytes per element (default 4)");
    eval->add_flag("--json", o->json, "Print JSON");
    eval->callback(
        [&ctx, o] { ctx.exitCode = runEval(o->spec, o->patterns, o->elementSize, o->json); });
}

static const CommandRegistration kRegisterSpec{"spec", 10, addSpecCommands};

} // namespace memplace::cli

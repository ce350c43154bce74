// Printing specs as MSL, equality, and loading by built-in name or file.
#include "spec/spec.h"

#include "common/file_io.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace memplace::spec {

namespace {

/// The largest binary unit that keeps the size whole.
std::string formatBytes(uint64_t b) {
    constexpr uint64_t kKb = 1024;
    if (b != 0 && b % (kKb * kKb * kKb) == 0) {
        return fmt::format("{} GB", b / (kKb * kKb * kKb));
    }
    if (b != 0 && b % (kKb * kKb) == 0) {
        return fmt::format("{} MB", b / (kKb * kKb));
    }
    if (b != 0 && b % kKb == 0) {
        return fmt::format("{} KB", b / kKb);
    }
    return fmt::format("{} B", b);
}

/// Shortest text that reads back as the same double.
std::string formatNumber(double x) {
    return fmt::format("{}", x);
}

std::string formatList(const std::vector<std::string>& names) {
    return names.empty() ? "na" : fmt::format("({})", fmt::join(names, ", "));
}

std::string quoted(const std::string& s) {
    return fmt::format("\"{}\"", s);
}

} // namespace

std::string printSpec(const Spec& spec) {
    std::string out;
    auto line = [&](std::string_view field, const std::string& value) {
        out += fmt::format("    {} = {};\n", field, value);
    };
    const Processor& p = spec.processor;
    out += "processor {\n";
    if (!p.name.empty()) {
        line("name", quoted(p.name));
    }
    if (!p.arch.empty()) {
        line("arch", quoted(p.arch));
    }
    line("sms", std::to_string(p.sms));
    line("warpSize", std::to_string(p.warpSize));
    line("clock", formatNumber(p.clockMHz) + " MHz");
    line("maxThreadsPerSm", std::to_string(p.maxThreadsPerSm));
    line("maxBlocksPerSm", std::to_string(p.maxBlocksPerSm));
    line("maxWarpsPerSm", std::to_string(p.maxWarpsPerSm));
    line("maxRegistersPerSm", std::to_string(p.maxRegistersPerSm));
    line("maxSharedPerSm", formatBytes(p.maxSharedPerSm));
    line("maxThreadsPerBlock", std::to_string(p.maxThreadsPerBlock));
    line("maxRegistersPerBlock", std::to_string(p.maxRegistersPerBlock));
    line("maxRegistersPerThread", std::to_string(p.maxRegistersPerThread));
    line("maxSharedPerBlock", formatBytes(p.maxSharedPerBlock));
    line("reservedSharedPerBlock", formatBytes(p.reservedSharedPerBlock));
    line("registerAllocationUnit", std::to_string(p.registerAllocationUnit));
    line("sharedAllocationUnit", formatBytes(p.sharedAllocationUnit));
    if (p.unitOverlap != 0) {
        line("unitOverlap", formatNumber(p.unitOverlap));
    }
    out += "}\n";

    for (const Memory& m : spec.memories) {
        out += fmt::format("\nmemory {} {{\n", m.name);
        line("id", std::to_string(m.id));
        line("swmng", m.softwareManaged ? "yes" : "no");
        line("rw", m.writable ? "rw" : "r");
        line("dim", m.dim ? std::to_string(*m.dim) : "na");
        line("size", formatBytes(m.size));
        line("blockSize", formatBytes(m.blockSize));
        line("banks", m.banks ? std::to_string(*m.banks) : "na");
        line("latency",
             fmt::format("({}, {})", formatNumber(m.latency.read), formatNumber(m.latency.write)));
        line("upperLevels", formatList(m.upperLevels));
        line("lowerLevels", formatList(m.lowerLevels));
        line("shareScope", std::string(shareScopeName(m.shareScope)));
        line("concurrencyFactor", fmt::format("({}, {})", formatNumber(m.concurrency.memoryBound),
                                              formatNumber(m.concurrency.computeBound)));
        line("serialCondition", m.serialCondition ? m.serialCondition->toString() : "na");
        if (m.unit != m.name) {
            line("unit", m.unit);
        }
        if (m.wordSize != 4) {
            line("wordSize", formatBytes(m.wordSize));
        }
        if (m.requestCost != 0) {
            line("requestCost", formatNumber(m.requestCost));
        }
        out += "}\n";
    }

    for (const PlaceEntry& e : spec.places) {
        out += fmt::format("\nplace {} {{\n", placeName(e.place));
        line("memory", e.memory);
        line("levels", formatList(e.levels));
        line("path", e.path);
        line("rw", e.writable ? "rw" : "r");
        std::vector<std::string> dims;
        for (auto d : e.dims) {
            dims.push_back(std::to_string(d));
        }
        line("dim", formatList(dims));
        line("capacity", formatBytes(e.capacity));
        line("capacityScope", std::string(shareScopeName(e.capacityScope)));
        if (e.launchCost.memoryBound != 0 || e.launchCost.computeBound != 0) {
            line("launchCost", fmt::format("({}, {})", formatNumber(e.launchCost.memoryBound),
                                           formatNumber(e.launchCost.computeBound)));
        }
        out += "}\n";
    }
    return out;
}

bool operator==(const Processor& a, const Processor& b) {
    return a.name == b.name && a.arch == b.arch && a.sms == b.sms && a.warpSize == b.warpSize &&
           a.clockMHz == b.clockMHz && a.maxThreadsPerSm == b.maxThreadsPerSm &&
           a.maxBlocksPerSm == b.maxBlocksPerSm && a.maxWarpsPerSm == b.maxWarpsPerSm &&
           a.maxRegistersPerSm == b.maxRegistersPerSm && a.maxSharedPerSm == b.maxSharedPerSm &&
           a.maxThreadsPerBlock == b.maxThreadsPerBlock &&
           a.maxRegistersPerBlock == b.maxRegistersPerBlock &&
           a.maxRegistersPerThread == b.maxRegistersPerThread &&
           a.maxSharedPerBlock == b.maxSharedPerBlock && a.unitOverlap == b.unitOverlap &&
           a.reservedSharedPerBlock == b.reservedSharedPerBlock &&
           a.registerAllocationUnit == b.registerAllocationUnit &&
           a.sharedAllocationUnit == b.sharedAllocationUnit;
}

bool operator==(const Memory& a, const Memory& b) {
    return a.name == b.name && a.id == b.id && a.softwareManaged == b.softwareManaged &&
           a.writable == b.writable && a.dim == b.dim && a.size == b.size &&
           a.blockSize == b.blockSize && a.banks == b.banks && a.wordSize == b.wordSize &&
           a.requestCost == b.requestCost && a.latency.read == b.latency.read &&
           a.latency.write == b.latency.write && a.upperLevels == b.upperLevels &&
           a.lowerLevels == b.lowerLevels && a.shareScope == b.shareScope &&
           a.concurrency.memoryBound == b.concurrency.memoryBound &&
           a.concurrency.computeBound == b.concurrency.computeBound && a.unit == b.unit &&
           a.serialCondition == b.serialCondition;
}

bool operator==(const PlaceEntry& a, const PlaceEntry& b) {
    return a.place == b.place && a.memory == b.memory && a.levels == b.levels && a.path == b.path &&
           a.writable == b.writable && a.dims == b.dims && a.capacity == b.capacity &&
           a.capacityScope == b.capacityScope &&
           a.launchCost.memoryBound == b.launchCost.memoryBound &&
           a.launchCost.computeBound == b.launchCost.computeBound;
}

bool equivalent(const Spec& a, const Spec& b) {
    return a.processor == b.processor && a.memories == b.memories && a.places == b.places;
}

Expected<Spec> loadSpec(std::string_view nameOrPath) {
    if (auto text = builtinSpecText(nameOrPath)) {
        auto spec = parseSpec(*text, fmt::format("<builtin>/{}.msl", nameOrPath));
        if (spec) {
            spec->name = std::string(nameOrPath);
        }
        return spec;
    }
    std::string path(nameOrPath);
    auto text = readFile(path);
    if (!text) {
        bool looksLikeName =
            path.find('/') == std::string::npos && path.find('.') == std::string::npos;
        if (looksLikeName) {
            return fail(fmt::format("unknown spec '{}': not a built-in ({}) and not a file", path,
                                    fmt::join(builtinSpecNames(), ", ")));
        }
        return std::move(text).takeFailure();
    }
    return parseSpec(*text, path);
}

} // namespace memplace::spec

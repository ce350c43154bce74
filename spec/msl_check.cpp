// The MSL checker: gives the syntax tree's values their meaning, checks each entry and the
// relations between entries, resolves `om`, replaces `?` by the defaults of docs/msl.md and
// records each as an assumption. This file: the whole spec's check (Checker::run), the fields
// of an entry, the processor entry, and parseSpec.
#include "spec/msl_check_internal.h"

#include <fmt/format.h>

#include <algorithm>

namespace memplace::spec::msl {

EntryFields::EntryFields(const Entry& e, std::string_view what, const std::vector<FieldRule>& rules,
                         Reporter& r) {
    std::vector<std::string> known;
    for (const auto& rule : rules) {
        known.emplace_back(rule.name);
    }
    for (const auto& f : e.fields) {
        bool isKnown = std::find(known.begin(), known.end(), f.name) != known.end();
        if (!isKnown) {
            r.error(f.location, fmt::format("unknown field '{}' in {}{}", f.name, what,
                                            suggestion(f.name, known)));
            continue;
        }
        auto [it, inserted] = byName_.emplace(f.name, &f);
        if (!inserted) {
            r.error(f.location, fmt::format("field '{}' given twice in {} (first at line {})",
                                            f.name, what, it->second->location.line));
        }
    }
    for (const auto& rule : rules) {
        if (rule.need == Need::Required && byName_.count(std::string(rule.name)) == 0) {
            r.error(e.location, fmt::format("{} lacks the required field '{}'", what, rule.name));
        }
    }
}

const std::vector<FieldRule>& processorRules() {
    static const std::vector<FieldRule> rules = {
        {"name", Need::Optional},
        {"arch", Need::Optional},
        {"sms", Need::Required},
        {"warpSize", Need::Required},
        {"clock", Need::Required},
        {"maxThreadsPerSm", Need::Required},
        {"maxBlocksPerSm", Need::Required},
        {"maxWarpsPerSm", Need::Optional},
        {"maxRegistersPerSm", Need::Required},
        {"maxSharedPerSm", Need::Required},
        {"maxThreadsPerBlock", Need::Required},
        {"maxRegistersPerBlock", Need::Required},
        {"maxRegistersPerThread", Need::Optional},
        {"maxSharedPerBlock", Need::Required},
        {"reservedSharedPerBlock", Need::Optional},
        {"registerAllocationUnit", Need::Optional},
        {"sharedAllocationUnit", Need::Optional},
        {"unitOverlap", Need::Optional},
    };
    return rules;
}

Spec Checker::run() {
    const Entry* processor = nullptr;
    for (const auto& e : tree_.entries) {
        switch (e.kind) {
        case Entry::Kind::Processor:
            if (processor != nullptr) {
                r_.error(e.location, fmt::format("second processor entry (the first is at "
                                                 "line {})",
                                                 processor->location.line));
            } else {
                processor = &e;
                checkProcessor(e);
            }
            break;
        case Entry::Kind::Memory:
            checkMemory(e);
            break;
        case Entry::Kind::Place:
            break; // after all memories are known
        }
    }
    if (processor == nullptr) {
        r_.error({spec_.name, 1, 1}, "no processor entry");
    }
    resolveLevels();
    for (auto& pm : memories_) {
        spec_.memories.push_back(pm.memory);
    }
    checkCycles();
    for (const auto& e : tree_.entries) {
        if (e.kind == Entry::Kind::Place) {
            checkPlace(e);
        }
    }
    if (spec_.findPlace(Place::Global) == nullptr && !r_.diagnostics().hasErrors()) {
        r_.error({spec_.name, 1, 1}, "no 'global' place: every array must be able to stay in "
                                     "global memory");
    }
    return std::move(spec_);
}

void Checker::checkProcessor(const Entry& e) {
    EntryFields fields(e, "the processor entry", processorRules(), r_);
    Processor& p = spec_.processor;
    // Every max is below 2^32: the casts keep the value.
    auto u32 = [&](std::string_view name, uint32_t& out, uint64_t min, uint64_t max) {
        if (const Field* f = fields.get(name)) {
            if (auto v = read_.count(*f, min, max)) {
                out = static_cast<uint32_t>(*v);
            }
        }
    };
    auto size = [&](std::string_view name, uint64_t& out, uint64_t min, uint64_t max) {
        if (const Field* f = fields.get(name)) {
            if (auto v = read_.bytes(*f, min, max)) {
                out = *v;
            }
        }
    };
    if (const Field* f = fields.get("name")) {
        p.name = read_.text(*f).value_or("");
    }
    if (const Field* f = fields.get("arch")) {
        p.arch = read_.text(*f).value_or("");
    }
    u32("sms", p.sms, 1, kMaxSms);
    u32("warpSize", p.warpSize, 1, kMaxWarpSize);
    if (const Field* f = fields.get("clock")) {
        p.clockMHz = read_.megahertz(*f).value_or(0);
    }
    u32("maxThreadsPerSm", p.maxThreadsPerSm, 1, kMaxThreads);
    u32("maxBlocksPerSm", p.maxBlocksPerSm, 1, kMaxBlocksPerSm);
    u32("maxRegistersPerSm", p.maxRegistersPerSm, 1, kMaxRegisters);
    size("maxSharedPerSm", p.maxSharedPerSm, 0, kMaxSharedBytes);
    u32("maxThreadsPerBlock", p.maxThreadsPerBlock, 1, kMaxThreads);
    u32("maxRegistersPerBlock", p.maxRegistersPerBlock, 1, kMaxRegisters);
    u32("maxRegistersPerThread", p.maxRegistersPerThread, 1, kMaxRegistersPerThread);
    size("maxSharedPerBlock", p.maxSharedPerBlock, 0, kMaxSharedBytes);
    size("reservedSharedPerBlock", p.reservedSharedPerBlock, 0, kMaxSharedBytes);
    u32("registerAllocationUnit", p.registerAllocationUnit, 1, kMaxAllocationUnit);
    uint64_t sharedUnit = p.sharedAllocationUnit;
    size("sharedAllocationUnit", sharedUnit, 1, kMaxSharedUnit);
    p.sharedAllocationUnit = static_cast<uint32_t>(sharedUnit);
    if (const Field* f = fields.get("unitOverlap")) {
        p.unitOverlap = read_.nonNegative(*f, 1).value_or(0);
    }
    const Field* warps = fields.get("maxWarpsPerSm");
    if (warps != nullptr && warps->value.kind != Kind::Omitted) {
        u32("maxWarpsPerSm", p.maxWarpsPerSm, 1, kMaxBlocksPerSm);
    } else if (p.warpSize > 0) {
        p.maxWarpsPerSm = p.maxThreadsPerSm / p.warpSize;
        if (warps != nullptr) {
            read_.assume(warps->value.location,
                         fmt::format("maxWarpsPerSm inferred as maxThreadsPerSm / warpSize = "
                                     "{}",
                                     p.maxWarpsPerSm));
        }
    }
    auto atMost = [&](std::string_view small, uint64_t a, std::string_view big, uint64_t b) {
        if (a > b && fields.get(small) != nullptr) {
            r_.error(fields.get(small)->value.location,
                     fmt::format("'{}' ({}) exceeds '{}' ({})", small, a, big, b));
        }
    };
    atMost("maxThreadsPerBlock", p.maxThreadsPerBlock, "maxThreadsPerSm", p.maxThreadsPerSm);
    atMost("maxSharedPerBlock", p.maxSharedPerBlock, "maxSharedPerSm", p.maxSharedPerSm);
    atMost("maxRegistersPerBlock", p.maxRegistersPerBlock, "maxRegistersPerSm",
           p.maxRegistersPerSm);
}

} // namespace memplace::spec::msl

namespace memplace::spec {

std::string_view shareScopeName(ShareScope s) {
    switch (s) {
    case ShareScope::Thread:
        return "thread";
    case ShareScope::Warp:
        return "warp";
    case ShareScope::Block:
        return "block";
    case ShareScope::Sm:
        return "sm";
    case ShareScope::Device:
        return "device";
    }
    return "device";
}

const Memory* Spec::findMemory(std::string_view nameOrId) const {
    for (const auto& m : memories) {
        if (m.name == nameOrId || std::to_string(m.id) == nameOrId) {
            return &m;
        }
    }
    return nullptr;
}

const PlaceEntry* Spec::findPlace(Place p) const {
    for (const auto& e : places) {
        if (e.place == p) {
            return &e;
        }
    }
    return nullptr;
}

Expected<Spec> parseSpec(std::string_view text, std::string_view fileName) {
    DiagnosticList diags;
    msl::Reporter reporter(text, diags);
    msl::SyntaxTree tree = msl::parse(text, fileName, reporter);
    Spec spec = msl::Checker(tree, reporter, fileName).run();
    reporter.finish(fileName);
    if (diags.hasErrors()) {
        return Failure{std::move(diags)};
    }
    return spec;
}

} // namespace memplace::spec

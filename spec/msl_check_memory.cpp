// Memory entries: their sizes, geometry, banks and conditions, the levels above and below them
// (`om` resolved from the other entries), and cycles in the levels.
#include "spec/msl_check_internal.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <set>

namespace memplace::spec::msl {

const std::vector<FieldRule>& memoryRules() {
    static const std::vector<FieldRule> rules = {
        {"id", Need::Required},
        {"swmng", Need::Required},
        {"rw", Need::Required},
        {"dim", Need::Required},
        {"size", Need::Required},
        {"blockSize", Need::Required},
        {"banks", Need::Required},
        {"latency", Need::Required},
        {"upperLevels", Need::Required},
        {"lowerLevels", Need::Required},
        {"shareScope", Need::Required},
        {"concurrencyFactor", Need::Required},
        {"serialCondition", Need::Required},
        {"unit", Need::Optional},
        {"wordSize", Need::Optional},
        {"requestCost", Need::Optional},
    };
    return rules;
}

namespace {

bool usesVariable(const ConditionExpr& e, ConditionVar v) {
    // Iterative: the walk must not depend on the parser's bound on the tree's depth.
    std::vector<int32_t> pending;
    if (!e.empty()) {
        pending.push_back(e.root());
    }
    while (!pending.empty()) {
        const auto& n = e.node(pending.back());
        pending.pop_back();
        if (n.kind == ConditionExpr::Kind::Variable && n.var == v) {
            return true;
        }
        if (n.kind == ConditionExpr::Kind::Unary || n.kind == ConditionExpr::Kind::Binary) {
            pending.push_back(n.lhs);
        }
        if (n.kind == ConditionExpr::Kind::Binary) {
            pending.push_back(n.rhs);
        }
    }
    return false;
}

} // namespace

void Checker::checkMemory(const Entry& e) {
    std::string what = fmt::format("memory '{}'", e.name);
    EntryFields fields(e, what, memoryRules(), r_);
    PendingMemory pm;
    pm.entry = &e;
    Memory& m = pm.memory;
    m.name = e.name;
    m.unit = e.name;
    for (const auto& other : memories_) {
        if (other.memory.name == e.name) {
            r_.error(e.nameLocation, fmt::format("memory '{}' defined twice (first at line {})",
                                                 e.name, other.entry->location.line));
        }
    }
    if (const Field* f = fields.get("id")) {
        if (auto v = read_.count(*f, 0, kMaxMemoryId)) {
            m.id = static_cast<int>(*v);
            for (const auto& other : memories_) {
                if (other.memory.id == m.id && other.memory.name != m.name) {
                    r_.error(f->value.location,
                             fmt::format("id {} of memory '{}' is already the id of '{}'", m.id,
                                         m.name, other.memory.name));
                }
            }
        }
    }
    if (const Field* f = fields.get("swmng")) {
        m.softwareManaged = read_.yesNo(*f).value_or(false);
    }
    if (const Field* f = fields.get("rw")) {
        m.writable = read_.readWrite(*f).value_or(true);
    }
    if (const Field* f = fields.get("dim")) {
        readDim(*f, m);
    }
    if (const Field* f = fields.get("size")) {
        m.size = read_.bytes(*f, 1, kMaxMemoryBytes).value_or(0);
    }
    if (const Field* f = fields.get("blockSize")) {
        m.blockSize = read_.bytes(*f, 1, kMaxBlockSize).value_or(0);
    }
    if (const Field* f = fields.get("wordSize")) {
        m.wordSize = static_cast<uint32_t>(read_.bytes(*f, 1, kMaxBlockSize).value_or(4));
    }
    if (const Field* f = fields.get("banks")) {
        readBanks(*f, m);
    }
    if (const Field* f = fields.get("latency")) {
        m.latency = read_.latency(*f, m.name).value_or(Latency{});
    }
    pm.upper = readLevels(fields.get("upperLevels"));
    pm.lower = readLevels(fields.get("lowerLevels"));
    if (const Field* f = fields.get("shareScope")) {
        m.shareScope = read_.scope(*f).value_or(ShareScope::Device);
    }
    if (const Field* f = fields.get("concurrencyFactor")) {
        m.concurrency = read_.concurrency(*f, m.name).value_or(ConcurrencyFactor{});
    }
    if (const Field* f = fields.get("unit")) {
        m.unit = read_.identifier(*f).value_or(m.name);
    }
    if (const Field* f = fields.get("serialCondition")) {
        readCondition(*f, m);
    }
    if (const Field* f = fields.get("requestCost")) {
        m.requestCost = read_.nonNegative(*f, 1e7).value_or(0.0);
    }
    memories_.push_back(std::move(pm));
}

void Checker::readDim(const Field& f, Memory& m) {
    if (f.value.kind == Kind::Unknown) {
        read_.assume(f.value.location,
                     fmt::format("dim of '{}' unknown: assumed to apply to arrays of any "
                                 "dimensionality",
                                 m.name));
    } else if (f.value.kind != Kind::NotApplicable) {
        if (auto v = read_.count(f, 1, INT64_MAX)) {
            m.dim = static_cast<uint32_t>(std::min<uint64_t>(*v, 3));
            if (*v > 3) {
                r_.error(f.value.location, "'dim' must be 1, 2 or 3");
            }
        }
    }
}

void Checker::readBanks(const Field& f, Memory& m) {
    if (f.value.kind == Kind::Unknown) {
        m.banks = kDefaultBanks;
        read_.assume(f.value.location,
                     fmt::format("banks of '{}' unknown: assumed {}", m.name, kDefaultBanks));
    } else if (f.value.kind != Kind::NotApplicable) {
        if (auto v = read_.count(f, 1, kMaxBanks)) {
            m.banks = static_cast<uint32_t>(*v);
        }
    }
}

void Checker::readCondition(const Field& f, Memory& m) {
    if (f.value.kind == Kind::NotApplicable) {
        return;
    }
    if (f.value.kind != Kind::Condition) {
        if (read_.isSpecial(f.value)) {
            read_.specialNotAllowed(f);
        } else {
            read_.expected(f, "warp{...}, block{...}, grid{...} or na");
        }
        return;
    }
    m.serialCondition = f.value.condition;
    if (!m.banks && usesVariable(f.value.condition.expr, ConditionVar::Banks)) {
        r_.error(f.value.location,
                 fmt::format("the serialization condition of '{}' uses 'banks', but its "
                             "banks are 'na'",
                             m.name));
    }
}

LevelField Checker::readLevels(const Field* f) {
    LevelField lf;
    lf.field = f;
    if (f == nullptr) {
        return lf;
    }
    if (f->value.kind == Kind::Omitted) {
        lf.omitted = true;
        return lf;
    }
    if (auto refs = read_.names(*f)) {
        lf.refs = std::move(*refs);
    }
    return lf;
}

PendingMemory* Checker::lookup(std::string_view nameOrId) {
    for (auto& pm : memories_) {
        if (pm.memory.name == nameOrId || std::to_string(pm.memory.id) == nameOrId) {
            return &pm;
        }
    }
    return nullptr;
}

std::vector<std::string> Checker::memoryNames() const {
    std::vector<std::string> names;
    for (const auto& pm : memories_) {
        names.push_back(pm.memory.name);
    }
    return names;
}

void Checker::resolveLevels() {
    auto resolve = [&](PendingMemory& pm, LevelField& lf, std::vector<std::string>& out) {
        for (const auto& ref : lf.refs) {
            PendingMemory* target = lookup(ref.text);
            if (target == nullptr) {
                r_.error(ref.location,
                         fmt::format("unknown memory '{}' in '{}'{}", ref.text, lf.field->name,
                                     suggestion(ref.text, memoryNames())));
            } else if (target == &pm) {
                r_.error(ref.location, fmt::format("memory '{}' lists itself in '{}'",
                                                   pm.memory.name, lf.field->name));
            } else {
                out.push_back(target->memory.name);
            }
        }
    };
    for (auto& pm : memories_) {
        resolve(pm, pm.upper, pm.memory.upperLevels);
        resolve(pm, pm.lower, pm.memory.lowerLevels);
    }
    // Copies of the explicit lists, so inference reads only what was written.
    std::map<std::string, std::vector<std::string>> explicitUpper;
    std::map<std::string, std::vector<std::string>> explicitLower;
    for (auto& pm : memories_) {
        if (!pm.upper.omitted) {
            explicitUpper[pm.memory.name] = pm.memory.upperLevels;
        }
        if (!pm.lower.omitted) {
            explicitLower[pm.memory.name] = pm.memory.lowerLevels;
        }
    }
    for (auto& pm : memories_) {
        inferOrCheck(pm, pm.upper, pm.memory.upperLevels, explicitLower, "upperLevels",
                     "lowerLevels");
        inferOrCheck(pm, pm.lower, pm.memory.lowerLevels, explicitUpper, "lowerLevels",
                     "upperLevels");
    }
}

void Checker::inferOrCheck(PendingMemory& pm, const LevelField& lf, std::vector<std::string>& mine,
                           const std::map<std::string, std::vector<std::string>>& theirs,
                           std::string_view mineName, std::string_view theirName) {
    std::vector<std::string> implied;
    for (const auto& [other, list] : theirs) {
        if (std::find(list.begin(), list.end(), pm.memory.name) != list.end()) {
            implied.push_back(other);
        }
    }
    if (lf.omitted) {
        // Keep declaration order for a stable result.
        for (const auto& other : memories_) {
            if (std::find(implied.begin(), implied.end(), other.memory.name) != implied.end()) {
                mine.push_back(other.memory.name);
            }
        }
        read_.assume(
            lf.field->value.location,
            fmt::format("{} of '{}' inferred from the other entries: {}", mineName, pm.memory.name,
                        mine.empty() ? "none" : fmt::format("({})", fmt::join(mine, ", "))));
        return;
    }
    if (lf.field == nullptr) {
        return;
    }
    for (const auto& other : implied) {
        if (std::find(mine.begin(), mine.end(), other) == mine.end()) {
            r_.error(lf.field->value.location,
                     fmt::format("'{}' lists '{}' in its {}, but {} of '{}' does not list "
                                 "'{}' (write it, or use om)",
                                 other, pm.memory.name, theirName, mineName, pm.memory.name,
                                 other));
        }
    }
}

void Checker::checkCycles() {
    std::map<std::string, int> state; // 0 new, 1 on stack, 2 done
    std::vector<std::string> stack;
    std::function<void(const Memory&)> visit = [&](const Memory& m) {
        state[m.name] = 1;
        stack.push_back(m.name);
        for (const auto& lower : m.lowerLevels) {
            const Memory* next = spec_.findMemory(lower);
            if (next == nullptr) {
                continue;
            }
            if (state[lower] == 1) {
                auto from = std::find(stack.begin(), stack.end(), lower);
                std::vector<std::string> cycle(from, stack.end());
                cycle.push_back(lower);
                PendingMemory* pm = lookup(m.name);
                SourceLocation loc = pm->lower.field != nullptr ? pm->lower.field->value.location
                                                                : pm->entry->location;
                r_.error(loc, fmt::format("the memory hierarchy has a cycle: {}",
                                          fmt::join(cycle, " -> ")));
            } else if (state[lower] == 0) {
                visit(*next);
            }
        }
        stack.pop_back();
        state[m.name] = 2;
    };
    for (const auto& m : spec_.memories) {
        if (state[m.name] == 0) {
            visit(m);
        }
    }
}

} // namespace memplace::spec::msl

// The MSL checker: gives the syntax tree's values their meaning, checks each entry and the
// relations between entries, resolves `om`, replaces `?` by the defaults of docs/msl.md and
// records each as an assumption.
#include "spec/msl_syntax.h"
#include "spec/spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace memplace::spec {

namespace {

using msl::Entry;
using msl::Field;
using msl::Reporter;
using msl::Value;
using Kind = msl::Value::Kind;

constexpr double kDefaultConcurrency = 0.2;
constexpr double kMaxLaunchCost = 1e12; // model cycles: far above any launch's stream work
constexpr uint32_t kDefaultBanks = 32;

// What a device can have, generously: the model sizes vectors by some of these (one entry per
// SM, per lane, per bank), so an absurd value must be an error, not gigabytes (docs/msl.md).
constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;
constexpr uint64_t kGiB = 1024 * kMiB;
constexpr uint64_t kMaxSms = 1024;
constexpr uint64_t kMaxWarpSize = 64;
constexpr double kMaxClockMHz = 10000;
constexpr uint64_t kMaxThreads = 16384;              // per SM and per block
constexpr uint64_t kMaxBlocksPerSm = 1024;           // also maxWarpsPerSm
constexpr uint64_t kMaxRegisters = 16 * 1024 * 1024; // per SM and per block
constexpr uint64_t kMaxRegistersPerThread = 1024;
constexpr uint64_t kMaxAllocationUnit = 64 * 1024; // registers
constexpr uint64_t kMaxSharedBytes = kGiB;         // per SM, per block, reserved
constexpr uint64_t kMaxSharedUnit = kMiB;
constexpr uint64_t kMaxMemoryBytes = uint64_t{1} << 50; // 1 PiB: any memory's size or capacity
constexpr uint64_t kMaxBlockSize = kMiB;                // a line, sector or word
constexpr uint64_t kMaxBanks = 1024;
constexpr uint64_t kMaxMemoryId = INT32_MAX;

// Names longer than this get no "did you mean": the edit distance is quadratic in the lengths,
// and a 200,000-character name is not a typo.
constexpr size_t kMaxSuggestionLength = 64;

size_t editDistance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t up = row[j];
            bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

/// "; did you mean 'x'?" when a candidate is close, else "".
std::string suggestion(std::string_view word, const std::vector<std::string>& candidates) {
    if (word.size() > kMaxSuggestionLength) {
        return {};
    }
    std::string best;
    size_t bestDistance = std::max<size_t>(2, word.size() / 3) + 1;
    for (const auto& c : candidates) {
        // The distance is at least the difference of the lengths: skip what cannot be close
        // (and with it every candidate longer than the cap).
        size_t lengthGap = c.size() > word.size() ? c.size() - word.size() : word.size() - c.size();
        if (lengthGap >= bestDistance) {
            continue;
        }
        size_t d = editDistance(word, c);
        if (d < bestDistance) {
            bestDistance = d;
            best = c;
        }
    }
    return best.empty() ? std::string{} : fmt::format("; did you mean '{}'?", best);
}

enum class Need { Required, Optional };

struct FieldRule {
    std::string_view name;
    Need need;
};

/// The fields of one entry by name, after duplicate, unknown and missing fields are reported.
class EntryFields {
public:
    EntryFields(const Entry& e, std::string_view what, const std::vector<FieldRule>& rules,
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
                r.error(e.location,
                        fmt::format("{} lacks the required field '{}'", what, rule.name));
            }
        }
    }

    const Field* get(std::string_view name) const {
        auto it = byName_.find(std::string(name));
        return it == byName_.end() ? nullptr : it->second;
    }

private:
    std::map<std::string, const Field*> byName_;
};

// ---- value readers: each reports a mistyped value and returns nullopt ----

class ValueReader {
public:
    ValueReader(Reporter& r, Spec& spec) : r_(r), spec_(spec) {}

    void assume(const SourceLocation& loc, std::string text) {
        spec_.assumptions.push_back({loc, std::move(text)});
    }

    void expected(const Field& f, std::string_view what) {
        r_.error(f.value.location,
                 fmt::format("'{}' expects {}, found {}", f.name, what, f.value.describe()));
    }

    void specialNotAllowed(const Field& f) {
        std::string_view reason = f.value.kind == Kind::Unknown   ? "cannot be unknown ('?')"
                                  : f.value.kind == Kind::Omitted ? "cannot be inferred ('om')"
                                                                  : "cannot be 'na'";
        r_.error(f.value.location, fmt::format("'{}' {}", f.name, reason));
    }

    bool isSpecial(const Value& v) const {
        return v.kind == Kind::Unknown || v.kind == Kind::Omitted || v.kind == Kind::NotApplicable;
    }

    std::optional<uint64_t> count(const Field& f, uint64_t min, uint64_t max) {
        const Value& v = f.value;
        if (isSpecial(v)) {
            specialNotAllowed(f);
            return std::nullopt;
        }
        if (v.kind != Kind::Number || !v.isInteger || !v.unit.empty()) {
            expected(f, "a whole number");
            return std::nullopt;
        }
        if (v.integer < static_cast<int64_t>(min) || static_cast<uint64_t>(v.integer) > max) {
            r_.error(v.location,
                     fmt::format("'{}' must be in {}..{}, found {}", f.name, min, max, v.integer));
            return std::nullopt;
        }
        return static_cast<uint64_t>(v.integer);
    }

    /// Bytes: a whole number with an optional B/KB/MB/GB (1024-based) suffix.
    std::optional<uint64_t> bytes(const Field& f, const Value& v, uint64_t min, uint64_t max) {
        if (isSpecial(v)) {
            specialNotAllowed(f);
            return std::nullopt;
        }
        if (v.kind != Kind::Number) {
            expected(f, "a size such as 64 KB");
            return std::nullopt;
        }
        double scale = 1;
        if (v.unit.empty() || v.unit == "B") {
            scale = 1;
        } else if (v.unit == "KB" || v.unit == "KiB") {
            scale = 1024.0;
        } else if (v.unit == "MB" || v.unit == "MiB") {
            scale = 1024.0 * 1024;
        } else if (v.unit == "GB" || v.unit == "GiB") {
            scale = 1024.0 * 1024 * 1024;
        } else {
            expected(f, "a size in B, KB, MB or GB");
            return std::nullopt;
        }
        // max <= 2^50 is exact in a double, and a NaN or an infinity fails every comparison
        // but the first.
        double b = v.number * scale;
        if (!std::isfinite(b) || b != std::floor(b) || b < static_cast<double>(min) ||
            b > static_cast<double>(max)) {
            r_.error(v.location, fmt::format("'{}' must be a whole number of bytes in {}..{}",
                                             f.name, describeBytes(min), describeBytes(max)));
            return std::nullopt;
        }
        return static_cast<uint64_t>(b);
    }
    std::optional<uint64_t> bytes(const Field& f, uint64_t min, uint64_t max) {
        return bytes(f, f.value, min, max);
    }

    /// 1024 -> "1 KB": the limits in messages, as a reader writes them.
    static std::string describeBytes(uint64_t b) {
        for (auto [unit, scale] : {std::pair{"GB", kGiB}, {"MB", kMiB}, {"KB", kKiB}}) {
            if (b >= scale && b % scale == 0) {
                return fmt::format("{} {}", b / scale, unit);
            }
        }
        return fmt::format("{}", b);
    }

    std::optional<double> megahertz(const Field& f) {
        const Value& v = f.value;
        if (isSpecial(v)) {
            specialNotAllowed(f);
            return std::nullopt;
        }
        if (v.kind != Kind::Number || (v.unit != "MHz" && v.unit != "GHz")) {
            expected(f, "a positive frequency such as 1755 MHz");
            return std::nullopt;
        }
        double mhz = v.unit == "GHz" ? v.number * 1000 : v.number;
        if (!(mhz > 0 && mhz <= kMaxClockMHz)) { // false for NaN too
            r_.error(v.location, fmt::format("'{}' must be in (0, {}] MHz, found {} {}", f.name,
                                             kMaxClockMHz, v.number, v.unit));
            return std::nullopt;
        }
        return mhz;
    }

    std::optional<bool> yesNo(const Field& f) {
        const Value& v = f.value;
        if (v.kind == Kind::Identifier && (v.text == "yes" || v.text == "true")) {
            return true;
        }
        if (v.kind == Kind::Identifier && (v.text == "no" || v.text == "false")) {
            return false;
        }
        if (isSpecial(v)) {
            specialNotAllowed(f);
        } else {
            expected(f, "yes or no");
        }
        return std::nullopt;
    }

    /// `r` (read-only) or `rw`: true when writable.
    std::optional<bool> readWrite(const Field& f) {
        const Value& v = f.value;
        if (v.kind == Kind::Identifier && (v.text == "r" || v.text == "rw")) {
            return v.text == "rw";
        }
        if (isSpecial(v)) {
            specialNotAllowed(f);
        } else {
            expected(f, "r or rw");
        }
        return std::nullopt;
    }

    std::optional<ShareScope> scope(const Field& f) {
        const Value& v = f.value;
        if (v.kind == Kind::Identifier) {
            for (ShareScope s : {ShareScope::Thread, ShareScope::Warp, ShareScope::Block,
                                 ShareScope::Sm, ShareScope::Device}) {
                if (shareScopeName(s) == v.text) {
                    return s;
                }
            }
        }
        if (isSpecial(v)) {
            specialNotAllowed(f);
        } else {
            expected(f, "thread, warp, block, sm or device");
        }
        return std::nullopt;
    }

    /// A number in (0, max], no unit.
    std::optional<double> positive(const Field& f, const Value& v, double max) {
        return numberUpTo(f, v, max, false);
    }

    /// A number in [0, max], no unit.
    std::optional<double> nonNegative(const Field& f, double max) {
        if (isSpecial(f.value)) {
            specialNotAllowed(f);
            return std::nullopt;
        }
        return numberUpTo(f, f.value, max, true);
    }

    /// A number without a unit in [0, max] (`zero`) or (0, max].
    std::optional<double> numberUpTo(const Field& f, const Value& v, double max, bool zero) {
        const bool below = zero ? v.number < 0 : v.number <= 0;
        if (v.kind != Kind::Number || !v.unit.empty() || below || v.number > max ||
            !std::isfinite(v.number)) {
            r_.error(v.location, fmt::format("'{}' expects a number in {}0, {}], found {}", f.name,
                                             zero ? "[" : "(", max,
                                             v.kind == Kind::Number ? fmt::format("{}", v.number)
                                                                    : v.describe()));
            return std::nullopt;
        }
        return v.number;
    }

    /// `(read, write)`, `(read, om)` or a single number for both.
    std::optional<Latency> latency(const Field& f, std::string_view memory) {
        const Value& v = f.value;
        if (v.kind == Kind::Number) {
            auto x = positive(f, v, 1e7);
            if (!x) {
                return std::nullopt;
            }
            return Latency{*x, *x};
        }
        if (v.kind != Kind::Tuple || v.items.size() != 2) {
            if (isSpecial(v)) {
                specialNotAllowed(f);
            } else {
                expected(f, "(read, write) in cycles");
            }
            return std::nullopt;
        }
        auto read = positive(f, v.items[0], 1e7);
        if (!read) {
            return std::nullopt;
        }
        if (v.items[1].kind == Kind::Omitted) {
            assume(v.items[1].location,
                   fmt::format("write latency of '{}' inferred equal to its read latency, {} "
                               "cycles",
                               memory, *read));
            return Latency{*read, *read};
        }
        auto write = positive(f, v.items[1], 1e7);
        if (!write) {
            return std::nullopt;
        }
        return Latency{*read, *write};
    }

    /// `(memory-bound, compute-bound)` model cycles, each in [0, 1e12]; one number: both.
    std::optional<LaunchCost> launchCost(const Field& f) {
        const Value& v = f.value;
        if (v.kind == Kind::Tuple && v.items.size() == 2) {
            auto mb = numberUpTo(f, v.items[0], kMaxLaunchCost, true);
            auto cb = numberUpTo(f, v.items[1], kMaxLaunchCost, true);
            if (!mb || !cb) {
                return std::nullopt;
            }
            return LaunchCost{*mb, *cb};
        }
        if (v.kind == Kind::Tuple) {
            r_.error(v.location, fmt::format("'{}' expects (memory-bound, compute-bound) or one "
                                             "number, found {} items",
                                             f.name, v.items.size()));
            return std::nullopt;
        }
        auto x = nonNegative(f, kMaxLaunchCost);
        if (!x) {
            return std::nullopt;
        }
        return LaunchCost{*x, *x};
    }

    /// `(memory-bound, compute-bound)`, one number for both, or `?` anywhere for 0.2.
    std::optional<ConcurrencyFactor> concurrency(const Field& f, std::string_view memory) {
        const Value& v = f.value;
        auto one = [&](const Value& x, std::string_view which) -> std::optional<double> {
            if (x.kind == Kind::Unknown) {
                assume(x.location, fmt::format("{}concurrency factor of '{}' unknown: assumed {}",
                                               which, memory, kDefaultConcurrency));
                return kDefaultConcurrency;
            }
            return positive(f, x, 1.0);
        };
        if (v.kind == Kind::Tuple && v.items.size() == 2) {
            auto mb = one(v.items[0], "memory-bound ");
            std::optional<double> cb;
            if (v.items[1].kind == Kind::Omitted && mb) {
                cb = mb;
                assume(v.items[1].location,
                       fmt::format("compute-bound concurrency factor of '{}' inferred equal to "
                                   "the memory-bound one, {}",
                                   memory, *mb));
            } else {
                cb = one(v.items[1], "compute-bound ");
            }
            if (!mb || !cb) {
                return std::nullopt;
            }
            return ConcurrencyFactor{*mb, *cb};
        }
        if (v.kind == Kind::Number || v.kind == Kind::Unknown) {
            auto x = one(v, "");
            if (!x) {
                return std::nullopt;
            }
            return ConcurrencyFactor{*x, *x};
        }
        if (isSpecial(v)) {
            specialNotAllowed(f);
        } else {
            expected(f, "(memory-bound, compute-bound) factors");
        }
        return std::nullopt;
    }

    /// Names or ids: `(L1, 4)`, a single name, or `na`/`()` for none.
    struct NameRef {
        std::string text;
        SourceLocation location;
    };
    std::optional<std::vector<NameRef>> names(const Field& f) {
        const Value& v = f.value;
        std::vector<NameRef> out;
        auto one = [&](const Value& x) {
            if (x.kind == Kind::Identifier) {
                out.push_back({x.text, x.location});
                return true;
            }
            if (x.kind == Kind::Number && x.isInteger && x.unit.empty()) {
                out.push_back({std::to_string(x.integer), x.location});
                return true;
            }
            r_.error(x.location, fmt::format("'{}' expects memory names or ids, found {}", f.name,
                                             x.describe()));
            return false;
        };
        if (v.kind == Kind::NotApplicable) {
            return out;
        }
        if (v.kind == Kind::Tuple) {
            bool ok = true;
            for (const auto& item : v.items) {
                ok = one(item) && ok;
            }
            return ok ? std::optional(out) : std::nullopt;
        }
        if (v.kind == Kind::Unknown) {
            specialNotAllowed(f);
            return std::nullopt;
        }
        return one(v) ? std::optional(out) : std::nullopt;
    }

    std::optional<std::string> identifier(const Field& f) {
        if (f.value.kind == Kind::Identifier) {
            return f.value.text;
        }
        expected(f, "a name");
        return std::nullopt;
    }

    std::optional<std::string> text(const Field& f) {
        if (f.value.kind == Kind::String || f.value.kind == Kind::Identifier) {
            return f.value.text;
        }
        expected(f, "a string");
        return std::nullopt;
    }

private:
    Reporter& r_;
    Spec& spec_;
};

// ---- entries ----

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

const std::vector<FieldRule>& placeRules() {
    static const std::vector<FieldRule> rules = {
        {"memory", Need::Required},        {"levels", Need::Optional},
        {"path", Need::Optional},          {"rw", Need::Optional},
        {"dim", Need::Optional},           {"capacity", Need::Optional},
        {"capacityScope", Need::Optional}, {"launchCost", Need::Optional},
    };
    return rules;
}

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

/// Where a level list came from, to resolve `om` and report inconsistencies.
struct LevelField {
    bool omitted = false;
    const Field* field = nullptr;
    std::vector<ValueReader::NameRef> refs;
};

struct PendingMemory {
    Memory memory;
    const Entry* entry = nullptr;
    LevelField upper;
    LevelField lower;
};

class Checker {
public:
    Checker(const msl::SyntaxTree& tree, Reporter& r, std::string_view fileName)
        : tree_(tree), r_(r), read_(r, spec_) {
        spec_.name = std::string(fileName);
    }

    Spec run() {
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

private:
    // ---- processor ----

    void checkProcessor(const Entry& e) {
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

    // ---- memories ----

    void checkMemory(const Entry& e) {
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

    void readDim(const Field& f, Memory& m) {
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

    void readBanks(const Field& f, Memory& m) {
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

    void readCondition(const Field& f, Memory& m) {
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

    LevelField readLevels(const Field* f) {
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

    PendingMemory* lookup(std::string_view nameOrId) {
        for (auto& pm : memories_) {
            if (pm.memory.name == nameOrId || std::to_string(pm.memory.id) == nameOrId) {
                return &pm;
            }
        }
        return nullptr;
    }

    std::vector<std::string> memoryNames() const {
        std::vector<std::string> names;
        for (const auto& pm : memories_) {
            names.push_back(pm.memory.name);
        }
        return names;
    }

    /// Resolves names and ids, infers `om` lists from the other direction, checks agreement.
    void resolveLevels() {
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

    /// `mine` is upperLevels (or lowerLevels) of pm; `theirs` holds every memory's explicit
    /// opposite list. An omitted list is inferred; an explicit one must agree.
    void inferOrCheck(PendingMemory& pm, const LevelField& lf, std::vector<std::string>& mine,
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
                fmt::format("{} of '{}' inferred from the other entries: {}", mineName,
                            pm.memory.name,
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

    /// The hierarchy must be acyclic: follow lowerLevels (upperLevels are their inverse).
    void checkCycles() {
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
                    SourceLocation loc = pm->lower.field != nullptr
                                             ? pm->lower.field->value.location
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

    // ---- places ----

    void checkPlace(const Entry& e) {
        std::string what = fmt::format("place '{}'", e.name);
        EntryFields fields(e, what, placeRules(), r_);
        auto kind = parsePlace(e.name);
        if (!kind) {
            std::vector<std::string> names;
            for (Place p : kAllPlaces) {
                names.emplace_back(placeName(p));
            }
            r_.error(e.nameLocation,
                     fmt::format("unknown place '{}' (places: {}){}", e.name,
                                 fmt::join(names, ", "), suggestion(e.name, names)));
            return;
        }
        if (spec_.findPlace(*kind) != nullptr) {
            r_.error(e.nameLocation, fmt::format("place '{}' defined twice", e.name));
            return;
        }
        PlaceEntry p;
        p.place = *kind;
        p.path = e.name;
        const Memory* storage = nullptr;
        if (const Field* f = fields.get("memory")) {
            if (auto name = read_.identifier(*f)) {
                storage = spec_.findMemory(*name);
                if (storage == nullptr) {
                    r_.error(f->value.location, fmt::format("unknown memory '{}'{}", *name,
                                                            suggestion(*name, memoryNames())));
                } else if (!storage->softwareManaged) {
                    r_.error(f->value.location,
                             fmt::format("place '{}' keeps data in '{}', which is not "
                                         "software-managed (swmng = no)",
                                         e.name, storage->name));
                    storage = nullptr;
                }
            }
        }
        if (storage == nullptr) {
            return;
        }
        p.memory = storage->name;
        p.writable = storage->writable;
        p.capacity = storage->size;
        p.capacityScope = storage->shareScope;
        if (storage->dim) {
            p.dims = {*storage->dim};
        }
        readPlaceLevels(fields.get("levels"), p, *storage);
        if (const Field* f = fields.get("path")) {
            p.path = read_.identifier(*f).value_or(p.path);
        }
        if (const Field* f = fields.get("rw")) {
            if (auto w = read_.readWrite(*f)) {
                if (*w && !storage->writable) {
                    r_.error(f->value.location,
                             fmt::format("place '{}' cannot be written: its memory '{}' is "
                                         "read-only",
                                         e.name, storage->name));
                }
                p.writable = *w && storage->writable;
            }
        }
        if (const Field* f = fields.get("dim")) {
            readPlaceDims(*f, p);
        }
        if (const Field* f = fields.get("capacity")) {
            if (auto c = read_.bytes(*f, 0, kMaxMemoryBytes)) {
                p.capacity = *c;
            }
        }
        if (const Field* f = fields.get("capacityScope")) {
            p.capacityScope = read_.scope(*f).value_or(p.capacityScope);
        }
        if (const Field* f = fields.get("launchCost")) {
            p.launchCost = read_.launchCost(*f).value_or(LaunchCost{});
        }
        spec_.places.push_back(std::move(p));
    }

    void readPlaceLevels(const Field* f, PlaceEntry& p, const Memory& storage) {
        if (f == nullptr || f->value.kind == Kind::Omitted) {
            // Walk up from the storage while the way is unique.
            std::vector<std::string> chain{storage.name};
            const Memory* m = &storage;
            while (!m->upperLevels.empty()) {
                if (m->upperLevels.size() > 1) {
                    r_.error(f != nullptr ? f->value.location : SourceLocation{spec_.name, 1, 1},
                             fmt::format("levels of place '{}' cannot be inferred: '{}' has "
                                         "several upper levels ({}); list the levels",
                                         placeName(p.place), m->name,
                                         fmt::join(m->upperLevels, ", ")));
                    return;
                }
                m = spec_.findMemory(m->upperLevels.front());
                if (m == nullptr || chain.size() > spec_.memories.size()) {
                    return; // an unknown name or a cycle, reported already
                }
                chain.insert(chain.begin(), m->name);
            }
            p.levels = std::move(chain);
            if (f != nullptr) {
                read_.assume(f->value.location,
                             fmt::format("levels of place '{}' inferred: ({})", placeName(p.place),
                                         fmt::join(p.levels, ", ")));
            }
            return;
        }
        auto refs = read_.names(*f);
        if (!refs) {
            return;
        }
        for (const auto& ref : *refs) {
            const Memory* m = spec_.findMemory(ref.text);
            if (m == nullptr) {
                r_.error(ref.location, fmt::format("unknown memory '{}' in 'levels'{}", ref.text,
                                                   suggestion(ref.text, memoryNames())));
                return;
            }
            if (!p.levels.empty()) {
                const Memory* above = spec_.findMemory(p.levels.back());
                if (std::find(above->lowerLevels.begin(), above->lowerLevels.end(), m->name) ==
                    above->lowerLevels.end()) {
                    r_.error(ref.location,
                             fmt::format("'{}' is not a lower level of '{}' (its lowerLevels "
                                         "are ({}))",
                                         m->name, above->name,
                                         fmt::join(above->lowerLevels, ", ")));
                    return;
                }
            }
            p.levels.push_back(m->name);
        }
        if (p.levels.empty() || p.levels.back() != storage.name) {
            r_.error(f->value.location,
                     fmt::format("the levels of place '{}' must end at its memory '{}'",
                                 placeName(p.place), storage.name));
        }
    }

    void readPlaceDims(const Field& f, PlaceEntry& p) {
        if (f.value.kind == Kind::NotApplicable || f.value.kind == Kind::Unknown) {
            p.dims.clear();
            return;
        }
        std::vector<const Value*> items;
        if (f.value.kind == Kind::Tuple) {
            for (const auto& v : f.value.items) {
                items.push_back(&v);
            }
        } else {
            items.push_back(&f.value);
        }
        p.dims.clear();
        for (const Value* v : items) {
            if (v->kind != Kind::Number || !v->isInteger || v->integer < 1 || v->integer > 3) {
                r_.error(v->location,
                         fmt::format("'dim' expects 1, 2 or 3, found {}", v->describe()));
                return;
            }
            p.dims.push_back(static_cast<uint32_t>(v->integer));
        }
    }

    const msl::SyntaxTree& tree_;
    Reporter& r_;
    Spec spec_;
    ValueReader read_;
    std::vector<PendingMemory> memories_;
};

} // namespace

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
    Spec spec = Checker(tree, reporter, fileName).run();
    reporter.finish(fileName);
    if (diags.hasErrors()) {
        return Failure{std::move(diags)};
    }
    return spec;
}

} // namespace memplace::spec

// The value readers: a field's value as a count, a size in bytes, a clock, a latency, a scope, a
// list of names, ...; each reports a mistyped value. Also the "did you mean" of unknown names.
#include "spec/msl_check_internal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace memplace::spec::msl {

namespace {

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

} // namespace

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

void ValueReader::assume(const SourceLocation& loc, std::string text) {
    spec_.assumptions.push_back({loc, std::move(text)});
}

void ValueReader::expected(const Field& f, std::string_view what) {
    r_.error(f.value.location,
             fmt::format("'{}' expects {}, found {}", f.name, what, f.value.describe()));
}

void ValueReader::specialNotAllowed(const Field& f) {
    std::string_view reason = f.value.kind == Kind::Unknown   ? "cannot be unknown ('?')"
                              : f.value.kind == Kind::Omitted ? "cannot be inferred ('om')"
                                                              : "cannot be 'na'";
    r_.error(f.value.location, fmt::format("'{}' {}", f.name, reason));
}

bool ValueReader::isSpecial(const Value& v) const {
    return v.kind == Kind::Unknown || v.kind == Kind::Omitted || v.kind == Kind::NotApplicable;
}

std::optional<uint64_t> ValueReader::count(const Field& f, uint64_t min, uint64_t max) {
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

std::optional<uint64_t> ValueReader::bytes(const Field& f, const Value& v, uint64_t min,
                                           uint64_t max) {
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
        r_.error(v.location, fmt::format("'{}' must be a whole number of bytes in {}..{}", f.name,
                                         describeBytes(min), describeBytes(max)));
        return std::nullopt;
    }
    return static_cast<uint64_t>(b);
}

std::optional<uint64_t> ValueReader::bytes(const Field& f, uint64_t min, uint64_t max) {
    return bytes(f, f.value, min, max);
}

std::string ValueReader::describeBytes(uint64_t b) {
    for (auto [unit, scale] : {std::pair{"GB", kGiB}, {"MB", kMiB}, {"KB", kKiB}}) {
        if (b >= scale && b % scale == 0) {
            return fmt::format("{} {}", b / scale, unit);
        }
    }
    return fmt::format("{}", b);
}

std::optional<double> ValueReader::megahertz(const Field& f) {
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

std::optional<bool> ValueReader::yesNo(const Field& f) {
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

std::optional<bool> ValueReader::readWrite(const Field& f) {
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

std::optional<ShareScope> ValueReader::scope(const Field& f) {
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

std::optional<double> ValueReader::positive(const Field& f, const Value& v, double max) {
    return numberUpTo(f, v, max, false);
}

std::optional<double> ValueReader::nonNegative(const Field& f, double max) {
    if (isSpecial(f.value)) {
        specialNotAllowed(f);
        return std::nullopt;
    }
    return numberUpTo(f, f.value, max, true);
}

std::optional<double> ValueReader::numberUpTo(const Field& f, const Value& v, double max,
                                              bool zero) {
    const bool below = zero ? v.number < 0 : v.number <= 0;
    if (v.kind != Kind::Number || !v.unit.empty() || below || v.number > max ||
        !std::isfinite(v.number)) {
        r_.error(v.location,
                 fmt::format("'{}' expects a number in {}0, {}], found {}", f.name,
                             zero ? "[" : "(", max,
                             v.kind == Kind::Number ? fmt::format("{}", v.number) : v.describe()));
        return std::nullopt;
    }
    return v.number;
}

std::optional<Latency> ValueReader::latency(const Field& f, std::string_view memory) {
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

std::optional<LaunchCost> ValueReader::launchCost(const Field& f) {
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

std::optional<ConcurrencyFactor> ValueReader::concurrency(const Field& f, std::string_view memory) {
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

std::optional<std::vector<ValueReader::NameRef>> ValueReader::names(const Field& f) {
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
        r_.error(x.location,
                 fmt::format("'{}' expects memory names or ids, found {}", f.name, x.describe()));
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

std::optional<std::string> ValueReader::identifier(const Field& f) {
    if (f.value.kind == Kind::Identifier) {
        return f.value.text;
    }
    expected(f, "a name");
    return std::nullopt;
}

std::optional<std::string> ValueReader::text(const Field& f) {
    if (f.value.kind == Kind::String || f.value.kind == Kind::Identifier) {
        return f.value.text;
    }
    expected(f, "a string");
    return std::nullopt;
}

} // namespace memplace::spec::msl

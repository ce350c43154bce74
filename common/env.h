// Every MEMPLACE_* environment variable in one table (name, kind, what it accepts, default,
// meaning) and the typed readers that every stage uses to read them. A value that does not
// parse, is out of range, NaN or infinite gets one warning naming the variable, what it accepts
// and the default that is used instead; it is never used.
//
// Header-only and standard C++ only: programs compile runtime/src/*.cpp with nvcc alone
// (tests/runtime/build.sh), and the runtime reads its variables through this header.
#pragma once

#include "common/place.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace memplace::env {

enum class Kind {
    Switch,  ///< 1, on, yes, true / 0, off, no, false
    Integer, ///< a whole number in [lo, hi]
    Real,    ///< a finite number in [lo, hi]
    Choice,  ///< one of the words in `accepts`
    Text,    ///< a path, a name or a list: taken as given
};

struct Variable {
    std::string_view name;
    Kind kind;
    double lo = 0;             ///< Integer, Real: the least value accepted
    double hi = 0;             ///< Integer, Real: the largest value accepted
    std::string_view accepts;  ///< Choice: the words; Text: what it names
    std::string_view fallback; ///< the default (unset, empty or a bad value)
    std::string_view meaning;  ///< one line
};

// clang-format off
/// Every variable memplace reads. docs/placer.md lists them all (tests/common/env_test.cpp
/// checks it, and that every MEMPLACE_* name in the sources is here).
inline constexpr Variable kVariables[] = {
    // The runtime and the online Placer (docs/placer.md, "Controls")
    {"MEMPLACE", Kind::Choice, 0, 0, "auto, trace, sweep, off, force:[kernel.]array=place,...", "auto", "the Placer's mode, or placements forced array by array"},
    {"MEMPLACE_SPEC", Kind::Text, 0, 0, "a built-in spec name or an MSL file", "the probed or nearest built-in spec (emulation: h100)", "the device spec"},
    {"MEMPLACE_SPEC_DIR", Kind::Text, 0, 0, "a folder", "$XDG_CONFIG_HOME/memplace/specs, else ~/.config/memplace/specs", "where probed specs are looked up"},
    {"MEMPLACE_CACHE", Kind::Text, 0, 0, "a folder, or off", "$XDG_CACHE_HOME/memplace/decisions, else ~/.cache/memplace/decisions", "decisions persist there"},
    {"MEMPLACE_REPORT", Kind::Text, 0, 0, "a file (a device or FIFO is written through)", "none", "the JSON report written at exit"},
    {"MEMPLACE_TRACE_DIR", Kind::Text, 0, 0, "a folder", "none", "every trace is saved there"},
    {"MEMPLACE_TIME", Kind::Switch, 0, 0, "", "0", "CUDA events around every launch"},
    {"MEMPLACE_VERIFY", Kind::Switch, 0, 0, "", "1", "time the original and the decision, revert a slower decision"},
    {"MEMPLACE_QUIET", Kind::Switch, 0, 0, "", "0", "no warnings on stderr"},
    {"MEMPLACE_TUNE", Kind::Integer, 0, 16, "", "3", "placements of the shortlist measured on the GPU"},
    {"MEMPLACE_TUNE_EXPLORE", Kind::Integer, 0, 8, "", "2", "single-array moves the tuning also measures"},
    {"MEMPLACE_TIMING_SPIN_US", Kind::Real, 0, 100000, "", "100", "the most GPU busy-wait before a timed launch, microseconds"},
    {"MEMPLACE_TUNE_MIN_US", Kind::Real, 0, 1000000, "", "20", "a kernel measured shorter is not tuned, its timed launches not padded, microseconds"},
    {"MEMPLACE_TRACE_AFTER", Kind::Integer, 0, 1000000, "", "1", "launches of a signature run untraced before one is traced"},
    {"MEMPLACE_TRACES_PER_KERNEL", Kind::Integer, 1, 1000000, "", "4", "signatures of one kernel traced in a run"},
    {"MEMPLACE_TRACE_SMS", Kind::Integer, 1, 1024, "", "2", "SMs whose blocks a traced launch records"},
    {"MEMPLACE_TRACE_BLOCKS", Kind::Integer, 1, 65536, "", "waves x resident blocks", "blocks per traced SM"},
    {"MEMPLACE_TRACE_WAVES", Kind::Integer, 1, 1024, "", "2", "waves per traced SM"},
    {"MEMPLACE_TRACE_RECORDS", Kind::Integer, 1, 1 << 24, "", "131072", "the trace buffer, in records of 280 bytes"},
    {"MEMPLACE_SEARCH", Kind::Choice, 0, 0, "bnb, exhaustive, greedy, rules", "bnb", "the search algorithm"},
    {"MEMPLACE_SEARCH_MS", Kind::Real, 1, 3600000, "", "50", "branch-and-bound's time limit, milliseconds"},
    {"MEMPLACE_DISPATCH", Kind::Choice, 0, 0, "auto, dynamic", "auto", "every placed launch through the dynamic accessor"},
    {"MEMPLACE_JIT", Kind::Choice, 0, 0, "auto, always, off (1, 0)", "auto", "just-in-time instantiation"},
    {"MEMPLACE_JIT_SYNC", Kind::Switch, 0, 0, "", "0", "compile in the launch instead of in the background"},
    {"MEMPLACE_JIT_CACHE", Kind::Text, 0, 0, "a folder, or off", "$MEMPLACE_CACHE/jit, else $XDG_CACHE_HOME/memplace/jit, else ~/.cache/memplace/jit", "where compiled instantiations persist"},
    {"MEMPLACE_NVRTC", Kind::Text, 0, 0, "a library path, or none", "libnvrtc.so.13, .12, libnvrtc.so", "the NVRTC library"},
    {"MEMPLACE_JIT_OPTIONS", Kind::Text, 0, 0, "NVRTC options, space-separated", "none", "added to every JIT compilation"},
    {"MEMPLACE_L2_LIMIT", Kind::Choice, 0, 0, "window, window:SIZE (bytes, KB, MB), max, keep", "window", "the persisting L2 set-aside"},
    // The evaluation's in-process sweep (MEMPLACE=sweep, placer/sweep.h)
    {"MEMPLACE_SWEEP_OUT", Kind::Text, 0, 0, "a file (appended to)", "stdout", "the sweep's JSON lines"},
    {"MEMPLACE_SWEEP_ORIGINAL", Kind::Text, 0, 0, "a placement list array=place,...", "none", "the program's original placement"},
    {"MEMPLACE_SWEEP_COMPARE_SPEC", Kind::Text, 0, 0, "a built-in spec name or an MSL file", "none", "a second spec whose predictions are recorded"},
    {"MEMPLACE_SWEEP_KERNELS", Kind::Text, 0, 0, "kernel names, comma-separated", "all", "the kernels swept"},
    {"MEMPLACE_SWEEP_MAX", Kind::Integer, 1, 1e7, "", "64", "placements measured per signature"},
    {"MEMPLACE_SWEEP_TOP", Kind::Integer, 0, 1e4, "", "8", "the engine's best placements, always measured"},
    {"MEMPLACE_SWEEP_BUDGET_MS", Kind::Real, 0, 1e9, "", "0 (none)", "time per signature, milliseconds"},
    {"MEMPLACE_SWEEP_WARMUP", Kind::Integer, 0, 1e4, "", "2", "untimed launches per placement"},
    {"MEMPLACE_SWEEP_REPEAT", Kind::Integer, 1, 1e5, "", "10", "timed launches per placement"},
    {"MEMPLACE_SWEEP_SPIN_US", Kind::Real, 0, 1e6, "", "500", "GPU busy-wait before each launch, microseconds"},
    {"MEMPLACE_SWEEP_SEED", Kind::Integer, 0, 1e18, "", "1", "the sample's random seed"},
    {"MEMPLACE_SWEEP_NO_DYNAMIC", Kind::Switch, 0, 0, "", "0", "no dynamic-accessor baselines"},
    // The CPU emulation layer (docs/emulation.md)
    {"MEMPLACE_EMU_THREADS", Kind::Integer, 0, 1024, "", "1", "OS threads that run blocks (0: one per core)"},
    {"MEMPLACE_EMU_FATAL", Kind::Switch, 0, 0, "", "1", "a kernel error aborts (0: CUDA's sticky error)"},
    {"MEMPLACE_EMU_STACK_KB", Kind::Integer, 16, 1 << 20, "", "128", "fiber stack per emulated thread, KB"},
    {"MEMPLACE_EMU_SPIN_TIMEOUT_S", Kind::Real, 0.01, 86400, "", "10", "seconds of spinning before a block is reported deadlocked"},
    {"MEMPLACE_PROFILE", Kind::Choice, 0, 0, "full, active", "full", "how a traced launch collects its records"},
    {"MEMPLACE_PROFILE_TOLERANCE", Kind::Real, 0, 0.999, "", "0.005", "active profiling's stopping tolerance"},
    {"MEMPLACE_PROFILE_MIN_UNITS", Kind::Integer, 3, 1000000, "", "3", "units before a level may stop"},
    {"MEMPLACE_PROFILE_LOOPS", Kind::Integer, 0, 1000000, "", "0 (off)", "loop truncation"},
    {"MEMPLACE_PROFILE_REPORT", Kind::Text, 0, 0, "a file", "none", "one JSON line per actively profiled launch"},
    // memplace probe (docs/probe.md)
    {"MEMPLACE_PROBE_GPU", Kind::Text, 0, 0, "a program", "memplace-probe-gpu next to memplace", "the GPU micro-benchmark program"},
};
// clang-format on

/// The table's entry for `name`, or null.
inline const Variable* find(std::string_view name) {
    for (const Variable& v : kVariables) {
        if (v.name == name) {
            return &v;
        }
    }
    return nullptr;
}

inline std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
        s.remove_suffix(1);
    }
    return s;
}

/// The variable's value, or null when it is unset or empty (both mean "the default").
inline const char* value(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? v : nullptr;
}

/// What the variable accepts, as a warning says it: "a whole number in [1, 1024]".
inline std::string acceptsText(const Variable& v) {
    auto number = [](double x) {
        if (x == std::floor(x) && std::fabs(x) < 9e18) {
            return std::to_string(static_cast<long long>(x));
        }
        std::string s = std::to_string(x);
        while (s.size() > 1 && s.back() == '0') {
            s.pop_back();
        }
        return s;
    };
    switch (v.kind) {
    case Kind::Switch:
        return "1, on, yes, true, 0, off, no or false";
    case Kind::Integer:
        return "a whole number in [" + number(v.lo) + ", " + number(v.hi) + "]";
    case Kind::Real:
        return "a number in [" + number(v.lo) + ", " + number(v.hi) + "]";
    case Kind::Choice:
    case Kind::Text:
        return std::string(v.accepts);
    }
    return {};
}

/// The one warning for a bad value: "NAME='text' is not <what it accepts>; using the default
/// (<default>)".
inline std::string badValue(const Variable& v, std::string_view text) {
    return std::string(v.name) + "='" + std::string(text) + "' is not " + acceptsText(v) +
           "; using the default (" + std::string(v.fallback) + ")";
}

// ---- parsing a value (no environment: unit-testable) ---------------------------------------

/// 1, on, yes, true -> true; 0, off, no, false -> false; anything else: nullopt.
inline std::optional<bool> parseSwitch(std::string_view text) {
    const std::string_view v = trim(text);
    if (v == "1" || v == "on" || v == "yes" || v == "true") {
        return true;
    }
    if (v == "0" || v == "off" || v == "no" || v == "false") {
        return false;
    }
    return std::nullopt;
}

/// A finite decimal number with nothing after it; nullopt for NaN, infinities, hexadecimal,
/// trailing characters and values beyond double.
inline std::optional<double> parseReal(std::string_view text) {
    const std::string s(trim(text));
    if (s.empty() || s.find_first_not_of("+-.0123456789eE") != std::string::npos) {
        return std::nullopt; // no nan, inf, 0x...: strtod would take them
    }
    errno = 0;
    char* end = nullptr;
    const double x = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(x)) {
        return std::nullopt;
    }
    return x;
}

/// A whole number in [lo, hi] (decimal, optionally signed); nullopt otherwise, overflow
/// included.
inline std::optional<long double> parseWhole(std::string_view text, double lo, double hi) {
    std::string_view s = trim(text);
    if (!s.empty() && s.front() == '+') {
        s.remove_prefix(1);
    }
    long long n = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) {
        return std::nullopt;
    }
    const auto x = static_cast<long double>(n);
    if (x < lo || x > hi) {
        return std::nullopt;
    }
    return x;
}

/// "12MB", "512KB", "4096" -> bytes (1024-based suffixes); nullopt when not a positive size
/// that fits in size_t.
inline std::optional<std::size_t> parseSize(std::string_view s) {
    s = trim(s);
    std::size_t unit = 1;
    for (const auto& [suffix, factor] :
         {std::pair<std::string_view, std::size_t>{"MB", std::size_t{1} << 20}, {"KB", 1024}}) {
        if (s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix) {
            s.remove_suffix(suffix.size());
            unit = factor;
            break;
        }
    }
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc{} || end != s.data() + s.size() || n == 0 ||
        n > std::numeric_limits<std::size_t>::max() / unit) {
        return std::nullopt;
    }
    return n * unit;
}

// ---- reading the environment ---------------------------------------------------------------

namespace detail {
inline const Variable& entry(const char* name) {
    static const Variable unknown{"(not in common/env.h's table)", Kind::Text, 0, 0, "", "", ""};
    const Variable* v = find(name);
    return v != nullptr ? *v : unknown;
}
} // namespace detail

/// A switch: `fallback` when unset or empty; a bad value warns and gives `fallback`.
inline bool readSwitch(const char* name, bool fallback, std::vector<std::string>& warnings) {
    const char* v = value(name);
    if (v == nullptr) {
        return fallback;
    }
    if (auto b = parseSwitch(v)) {
        return *b;
    }
    warnings.push_back(badValue(detail::entry(name), v));
    return fallback;
}

/// A number within the table's range for `name` into `field` (which holds the default and keeps
/// it when the variable is unset, empty or bad; a bad value warns). Integer variables take
/// whole numbers only. True when a value was read.
template <class T>
bool readNumber(const char* name, T& field, std::vector<std::string>& warnings) {
    static_assert(std::is_arithmetic_v<T>);
    const char* v = value(name);
    if (v == nullptr) {
        return false;
    }
    const Variable& var = detail::entry(name);
    std::optional<long double> x;
    if (var.kind == Kind::Integer) {
        x = parseWhole(v, var.lo, var.hi);
    } else if (auto r = parseReal(v); r && *r >= var.lo && *r <= var.hi) {
        x = *r;
    }
    // The range is the table's; it must also fit the field (a table bug otherwise).
    if (!x || *x < static_cast<long double>(std::numeric_limits<T>::lowest()) ||
        *x > static_cast<long double>(std::numeric_limits<T>::max())) {
        warnings.push_back(badValue(var, v));
        return false;
    }
    field = static_cast<T>(*x);
    return true;
}

/// One of `choices` (unset or empty: nullopt); anything else warns and gives nullopt.
inline std::optional<std::string_view> readChoice(const char* name,
                                                  std::initializer_list<std::string_view> choices,
                                                  std::vector<std::string>& warnings) {
    const char* v = value(name);
    if (v == nullptr) {
        return std::nullopt;
    }
    for (std::string_view c : choices) {
        if (trim(v) == c) {
            return c;
        }
    }
    warnings.push_back(badValue(detail::entry(name), v));
    return std::nullopt;
}

/// Text as given (unset or empty: nullopt).
inline std::optional<std::string> readText(const char* name) {
    const char* v = value(name);
    return v != nullptr ? std::optional<std::string>(v) : std::nullopt;
}

/// A folder variable's value that turns its folder off: off, 0, no, false, none.
inline bool isOffWord(std::string_view text) {
    const std::string_view t = trim(text);
    return t == "none" || parseSwitch(t) == std::optional<bool>(false);
}

/// The user's folder `$XDG_VAR/sub`, else `~/homeDir/sub` (the XDG base directory rule), or
/// empty when neither variable is set.
inline std::string userFolder(const char* xdgVar, std::string_view homeDir, std::string_view sub) {
    const char* x = std::getenv(xdgVar);
    if (x != nullptr && *x != '\0') {
        return std::string(x) + "/" + std::string(sub);
    }
    const char* h = std::getenv("HOME");
    if (h != nullptr && *h != '\0') {
        return std::string(h) + "/" + std::string(homeDir) + "/" + std::string(sub);
    }
    return {};
}

// ---- MEMPLACE itself: read by the runtime and by the Placer -------------------------------

struct ForceEntry {
    std::string kernel; ///< empty: any kernel
    std::string array;
    Place place = Place::Global;
};

struct EnvConfig {
    /// Default: MEMPLACE unset or empty. Auto, Trace: the Placer's modes (the runtime asks the
    /// installed policy as in Default). Off: no policy, no tracing. Force: the entries below.
    enum class Mode { Default, Off, Auto, Trace, Sweep, Force } mode = Mode::Default;
    std::vector<ForceEntry> force;
    std::vector<std::string> warnings; ///< what was ignored, and why
};

/// The places a force entry may name, for its warning.
inline std::string placeNames() {
    std::string out;
    for (Place p : kAllPlaces) {
        if (p == Place::Registers) {
            continue;
        }
        if (!out.empty()) {
            out += ", ";
        }
        out += placeName(p);
    }
    return out;
}

/// Parses the value of MEMPLACE (null or empty: Default).
inline EnvConfig parseMemplaceEnv(const char* value) {
    EnvConfig cfg;
    if (value == nullptr) {
        return cfg;
    }
    const std::string_view v = trim(value);
    if (v.empty()) {
        return cfg;
    }
    if (v == "auto") {
        cfg.mode = EnvConfig::Mode::Auto;
        return cfg;
    }
    if (v == "off") {
        cfg.mode = EnvConfig::Mode::Off;
        return cfg;
    }
    if (v == "trace") {
        cfg.mode = EnvConfig::Mode::Trace;
        return cfg;
    }
    if (v == "sweep") {
        cfg.mode = EnvConfig::Mode::Sweep;
        return cfg;
    }
    constexpr std::string_view kForce = "force:";
    if (v.substr(0, kForce.size()) != kForce) {
        cfg.warnings.push_back(badValue(*find("MEMPLACE"), v));
        return cfg;
    }
    cfg.mode = EnvConfig::Mode::Force;
    std::string_view rest = v.substr(kForce.size());
    while (!rest.empty()) {
        const std::size_t comma = rest.find(',');
        const std::string_view item = trim(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        if (item.empty()) {
            continue;
        }
        const std::size_t eq = item.find('=');
        if (eq == std::string_view::npos) {
            cfg.warnings.push_back("MEMPLACE force entry '" + std::string(item) +
                                   "' has no '=place'; ignored");
            continue;
        }
        const std::string_view lhs = trim(item.substr(0, eq));
        const std::string_view rhs = trim(item.substr(eq + 1));
        const std::optional<Place> place = parsePlace(rhs);
        if (!place || *place == Place::Registers) {
            cfg.warnings.push_back("MEMPLACE force entry '" + std::string(item) +
                                   "': unknown place '" + std::string(rhs) + "' (one of " +
                                   placeNames() + "); ignored");
            continue;
        }
        ForceEntry e;
        const std::size_t dot = lhs.rfind('.');
        if (dot == std::string_view::npos) {
            e.array = std::string(lhs);
        } else {
            e.kernel = std::string(trim(lhs.substr(0, dot)));
            e.array = std::string(trim(lhs.substr(dot + 1)));
        }
        if (e.array.empty()) {
            cfg.warnings.push_back("MEMPLACE force entry '" + std::string(item) +
                                   "' names no array; ignored");
            continue;
        }
        e.place = *place;
        cfg.force.push_back(std::move(e));
    }
    return cfg;
}

/// The forced place for kernel/array, if an entry names it (a kernel-qualified entry wins over
/// an unqualified one).
inline std::optional<Place> forcedPlace(const std::vector<ForceEntry>& entries,
                                        std::string_view kernel, std::string_view array) {
    std::optional<Place> any;
    for (const ForceEntry& e : entries) {
        if (e.array != array) {
            continue;
        }
        if (e.kernel == kernel) {
            return e.place;
        }
        if (e.kernel.empty() || e.kernel == "*") {
            any = e.place;
        }
    }
    return any;
}

} // namespace memplace::env

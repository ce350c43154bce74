#include "runtime/src/env.h"

#include <charconv>
#include <limits>
#include <optional>
#include <string>
#include <utility>

namespace memplace::detail {

namespace {

using env::trim;

std::string placeNames() {
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

} // namespace

EnvConfig parseMemplaceEnv(const char* value) {
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
        cfg.warnings.push_back(env::badValue(*env::find("MEMPLACE"), v));
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

std::optional<Place> forcedPlace(const std::vector<ForceEntry>& entries, std::string_view kernel,
                                 std::string_view array) {
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

bool parseSwitchEnv(const char* variable, const char* value, std::vector<std::string>& warnings) {
    if (value == nullptr || trim(value).empty()) {
        return false;
    }
    if (auto b = env::parseSwitch(value)) {
        return *b;
    }
    const env::Variable* v = env::find(variable);
    warnings.push_back(v != nullptr ? env::badValue(*v, trim(value))
                                    : std::string(variable) + "='" + std::string(trim(value)) +
                                          "' is not 0 or 1; taken as 0");
    return false;
}

bool parseDispatchEnv(const char* value, std::vector<std::string>& warnings) {
    if (value == nullptr) {
        return false;
    }
    const std::string_view v = trim(value);
    if (v == "dynamic") {
        return true;
    }
    if (!v.empty() && v != "auto") {
        warnings.push_back(env::badValue(*env::find("MEMPLACE_DISPATCH"), v));
    }
    return false;
}

JitPolicy parseJitEnv(const char* value, std::vector<std::string>& warnings) {
    if (value == nullptr) {
        return JitPolicy::Auto;
    }
    const std::string_view v = trim(value);
    if (v == "off" || v == "0") {
        return JitPolicy::Off;
    }
    if (v == "always") {
        return JitPolicy::Always;
    }
    if (!v.empty() && v != "auto" && v != "1") {
        warnings.push_back(env::badValue(*env::find("MEMPLACE_JIT"), v));
    }
    return JitPolicy::Auto;
}

L2LimitPolicy parseL2LimitEnv(const char* value, std::vector<std::string>& warnings,
                              std::size_t* capBytes) {
    if (capBytes != nullptr) {
        *capBytes = 0;
    }
    if (value == nullptr) {
        return L2LimitPolicy::Window;
    }
    const std::string_view v = trim(value);
    if (v.substr(0, 7) == "window:") {
        const auto cap = env::parseSize(trim(v.substr(7)));
        if (!cap) {
            warnings.push_back("MEMPLACE_L2_LIMIT='" + std::string(v) +
                               "': the cap is not a size (bytes, or with KB or MB); no cap");
        } else if (capBytes != nullptr) {
            *capBytes = *cap;
        }
        return L2LimitPolicy::Window;
    }
    if (v == "max") {
        return L2LimitPolicy::Max;
    }
    if (v == "keep") {
        return L2LimitPolicy::Keep;
    }
    if (!v.empty() && v != "window") {
        warnings.push_back(env::badValue(*env::find("MEMPLACE_L2_LIMIT"), v));
    }
    return L2LimitPolicy::Window;
}

} // namespace memplace::detail

#include "runtime/src/env.h"

#include <charconv>
#include <limits>
#include <optional>
#include <string>
#include <utility>

namespace memplace::detail {

using env::trim;

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

#include "placer/device_spec.h"

#include "common/env.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace memplace::placer {

namespace {

std::string lower(std::string_view s) {
    std::string o(s);
    for (char& c : o) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return o;
}

} // namespace

std::optional<std::string> builtinForDeviceName(std::string_view deviceName) {
    const std::string n = lower(deviceName);
    struct Match {
        const char* token;
        const char* spec;
    };
    // Longer tokens first where one contains another.
    static constexpr Match kMatches[] = {
        {"h200", "h200"},   {"h100", "h100"},   {"a100", "a100"},
        {"v100", "v100"},   {"k20", "k20c"},    {"m2075", "m2075"},
        {"m2070", "m2075"}, {"m2090", "m2075"}, {"c1060", "c1060"},
    };
    for (const Match& m : kMatches) {
        if (n.find(m.token) != std::string::npos) {
            return std::string(m.spec);
        }
    }
    return std::nullopt;
}

std::optional<std::string> builtinForArch(int major, int minor) {
    (void)minor;
    if (major >= 10) {
        return "h200";
    }
    switch (major) {
    case 9:
        return "h100";
    case 8:
        return "a100";
    case 7:
        return "v100";
    case 3:
        return "k20c";
    case 2:
        return "m2075";
    case 1:
        return "c1060";
    default:
        return std::nullopt;
    }
}

std::string specFileName(std::string_view deviceName) {
    std::string o;
    bool dash = false;
    for (char c : deviceName) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) != 0) {
            if (dash && !o.empty()) {
                o += '-';
            }
            dash = false;
            o += static_cast<char>(std::tolower(u));
        } else {
            dash = true;
        }
    }
    if (o.empty()) {
        o = "device";
    }
    return o + ".msl";
}

std::string defaultSpecDir() {
    if (const char* d = std::getenv("MEMPLACE_SPEC_DIR"); d != nullptr && *d != '\0') {
        return d;
    }
    return env::userFolder("XDG_CONFIG_HOME", ".config", "memplace/specs");
}

Expected<DeviceSpec> selectSpec(const std::string& explicitSpec, const std::string& specDir,
                                std::string_view deviceName, int major, int minor) {
    DeviceSpec d;
    if (!explicitSpec.empty()) {
        auto s = spec::loadSpec(explicitSpec);
        if (!s) {
            return std::move(s).takeFailure();
        }
        d.spec = std::move(*s);
        d.source = "MEMPLACE_SPEC";
        d.from = explicitSpec;
        return d;
    }
    if (!specDir.empty()) {
        const std::filesystem::path f = std::filesystem::path(specDir) / specFileName(deviceName);
        std::error_code ec;
        if (std::filesystem::is_regular_file(f, ec)) {
            auto s = spec::loadSpec(f.string());
            if (s) {
                d.spec = std::move(*s);
                d.source = "probed";
                d.from = f.string();
                return d;
            }
            d.warnings.push_back("the probed spec " + f.string() +
                                 " does not load; using a built-in one:\n" + s.message());
        }
    }
    if (auto b = builtinForDeviceName(deviceName)) {
        auto s = spec::loadSpec(*b);
        if (s) {
            d.spec = std::move(*s);
            d.source = "built-in";
            d.from = *b;
            return d;
        }
    }
    if (auto b = builtinForArch(major, minor)) {
        auto s = spec::loadSpec(*b);
        if (s) {
            d.spec = std::move(*s);
            d.source = "nearest";
            d.from = *b;
            d.warnings.push_back(
                "no spec for '" + std::string(deviceName) + "' (sm_" + std::to_string(major) +
                std::to_string(minor) + "); modelling it as the built-in " + *b +
                " (run `memplace probe -o " + (specDir.empty() ? std::string("<dir>") : specDir) +
                "/" + specFileName(deviceName) + "` for a measured one)");
            return d;
        }
    }
    return fail("no memory specification for '" + std::string(deviceName) + "' (sm_" +
                std::to_string(major) + std::to_string(minor) +
                "): set MEMPLACE_SPEC to a built-in name or an MSL file");
}

} // namespace memplace::placer

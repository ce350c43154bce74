#include "probe/measurements.h"

#include "common/json.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace memplace::probe {

using nlohmann::json;

namespace {

std::vector<Point> points(const json& arr) {
    std::vector<Point> out;
    for (const auto& p : arr) {
        if (p.is_array() && p.size() == 2 && p[0].is_number() && p[1].is_number()) {
            out.push_back({p[0].get<double>(), p[1].get<double>()});
        }
    }
    return out;
}

Sweep sweep(const json& j) {
    Sweep s;
    s.path = j.value("path", "");
    s.method = j.value("method", "");
    if (j.contains("points")) {
        s.points = points(j["points"]);
    }
    return s;
}

template <typename T>
T num(const json& j, const char* key) {
    if (!j.contains(key) || !j[key].is_number()) {
        return T{};
    }
    return static_cast<T>(j[key].get<double>());
}

} // namespace

Expected<double> Measurements::cycles(std::string_view name) const {
    auto it = latency.find(std::string(name));
    if (it == latency.end() || !(it->second.cycles > 0)) {
        return fail(fmt::format("{}: the measurements lack the latency '{}'", source, name));
    }
    return it->second.cycles;
}

namespace {

/// The `device` object (json exceptions for malformed fields).
DeviceInfo parseDevice(const json& d) {
    DeviceInfo dev;
    dev.name = d.value("name", "");
    dev.ccMajor = num<int>(d, "cc_major");
    dev.ccMinor = num<int>(d, "cc_minor");
    dev.sms = num<uint32_t>(d, "sms");
    dev.warpSize = num<uint32_t>(d, "warp_size");
    dev.clockPeakKHz = num<double>(d, "clock_peak_khz");
    dev.memoryClockPeakKHz = num<double>(d, "memory_clock_peak_khz");
    dev.memoryBusWidthBits = num<uint32_t>(d, "memory_bus_width_bits");
    dev.l2Bytes = num<uint64_t>(d, "l2_bytes");
    dev.persistingL2MaxBytes = num<uint64_t>(d, "persisting_l2_max_bytes");
    dev.accessPolicyWindowMaxBytes = num<uint64_t>(d, "access_policy_window_max_bytes");
    dev.maxThreadsPerSm = num<uint32_t>(d, "max_threads_per_sm");
    dev.maxBlocksPerSm = num<uint32_t>(d, "max_blocks_per_sm");
    dev.maxRegistersPerSm = num<uint32_t>(d, "max_registers_per_sm");
    dev.maxSharedPerSm = num<uint64_t>(d, "max_shared_per_sm");
    dev.maxThreadsPerBlock = num<uint32_t>(d, "max_threads_per_block");
    dev.maxRegistersPerBlock = num<uint32_t>(d, "max_registers_per_block");
    dev.maxSharedPerBlock = num<uint64_t>(d, "max_shared_per_block");
    dev.maxSharedPerBlockOptin = num<uint64_t>(d, "max_shared_per_block_optin");
    dev.reservedSharedPerBlock = num<uint64_t>(d, "reserved_shared_per_block");
    dev.totalConstantBytes = num<uint64_t>(d, "total_constant_bytes");
    dev.totalGlobalBytes = num<uint64_t>(d, "total_global_bytes");
    dev.driverVersion = num<int>(d, "driver_version");
    dev.runtimeVersion = num<int>(d, "runtime_version");
    return dev;
}

LatencyMeasurement parseLatency(const std::string& name, const json& l) {
    LatencyMeasurement lm;
    lm.name = name;
    lm.path = l.value("path", "");
    lm.method = l.value("method", "");
    lm.cycles = num<double>(l, "cycles");
    lm.bytes = num<uint64_t>(l, "bytes");
    lm.stride = num<uint64_t>(l, "stride");
    lm.steps = num<int>(l, "steps");
    return lm;
}

KernelMeasurement parseKernel(const json& k) {
    KernelMeasurement km;
    km.name = k.value("name", "");
    km.path = k.value("path", "");
    km.regime = k.value("regime", "");
    km.method = k.value("method", "");
    km.bytes = num<double>(k, "bytes");
    km.ms = num<double>(k, "ms");
    if (k.contains("transactions")) {
        for (const auto& [mem, n] : k["transactions"].items()) {
            if (n.is_number()) {
                km.transactions[mem] = n.get<double>();
            }
        }
    }
    return km;
}

} // namespace

Expected<Measurements> parseMeasurements(std::string_view text, std::string_view source) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        return fail(fmt::format("{}: not JSON: {}", source, e.what()));
    }
    if (!j.is_object()) {
        return fail(fmt::format("{}: expected a JSON object", source));
    }
    if (j.contains("error")) {
        return fail(fmt::format("{}: {}", source,
                                j["error"].is_string() ? j["error"].get<std::string>()
                                                       : dumpJson(j["error"])));
    }
    if (j.value("schema", "") != "memplace-probe-measurements") {
        return fail(fmt::format("{}: not memplace-probe measurements (schema '{}')", source,
                                j.value("schema", "")));
    }
    if (j.value("version", 0) != 1) {
        return fail(
            fmt::format("{}: unsupported measurements version {}", source, j.value("version", 0)));
    }
    try {
        Measurements m;
        m.source = std::string(source);
        m.date = j.value("date", "");
        m.quick = j.value("quick", false);
        const json& d = j.at("device");
        DeviceInfo& dev = m.device;
        dev = parseDevice(d);
        if (dev.sms == 0 || dev.warpSize == 0) {
            return fail(fmt::format("{}: the device entry lacks sms or warp_size", source));
        }
        if (j.contains("clock_mhz")) {
            for (const auto& c : j["clock_mhz"]) {
                if (c.is_number()) {
                    m.clockMHz.push_back(c.get<double>());
                }
            }
        }
        if (j.contains("latency")) {
            for (const auto& [name, l] : j["latency"].items()) {
                LatencyMeasurement lm = parseLatency(name, l);
                m.latency[name] = lm;
            }
        }
        if (j.contains("sweeps")) {
            for (const auto& [name, s] : j["sweeps"].items()) {
                m.sweeps[name] = sweep(s);
            }
        }
        if (j.contains("strides")) {
            for (const auto& [name, s] : j["strides"].items()) {
                m.strides[name] = sweep(s);
            }
        }
        if (j.contains("shared_banks")) {
            m.sharedBanks = sweep(j["shared_banks"]);
            m.sharedBankWords = j["shared_banks"].value("words", 8192u);
        }
        if (j.contains("constant_lanes")) {
            for (const auto& [name, v] : j["constant_lanes"].items()) {
                if (v.is_array()) {
                    m.constantLanes[name] = points(v);
                }
            }
        }
        if (j.contains("kernels")) {
            for (const auto& k : j["kernels"]) {
                KernelMeasurement km = parseKernel(k);
                m.kernels.push_back(std::move(km));
            }
        }
        m.elapsedSeconds = num<double>(j, "elapsed_s");
        return m;
    } catch (const json::exception& e) {
        return fail(fmt::format("{}: malformed measurements: {}", source, e.what()));
    }
}

} // namespace memplace::probe

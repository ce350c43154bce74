#include "probe/probe.h"

#include "probe/spec_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace memplace::probe {

using nlohmann::json;

namespace {

constexpr double kMinFactor = 1e-7; // a fitted factor of 0 is not a valid MSL value

const std::vector<Point>* findPoints(const std::map<std::string, Sweep>& sweeps,
                                     const std::string& name) {
    auto it = sweeps.find(name);
    return it == sweeps.end() || it->second.points.empty() ? nullptr : &it->second.points;
}

double clamped(double a) {
    return std::clamp(a, kMinFactor, 1.0);
}

/// Capacities, fetch granularities, shared-memory banks and constant broadcast, fitted.
void fitCaches(const Measurements& m, ProbeResult& r) {
    const DeviceInfo& dev = m.device;
    // Capacities.
    auto capacity = [&](const char* sweep, double hit, double miss, double maxBytes,
                        SweepModel model) {
        const auto* pts = findPoints(m.sweeps, sweep);
        if (pts == nullptr) {
            CapacityEstimate e;
            e.how = fmt::format("no {} sweep in the measurements", sweep);
            return e;
        }
        return estimateCapacity(*pts, hit, miss, maxBytes, model);
    };
    // The GPU program brings the L1 and L2 sets in with a sweep and chases a random subset of
    // their lines; the constant sets are chased whole, a sequential then a random pass.
    r.l1 = capacity("l1_capacity", measuredCycles(m, "l1_hit"), measuredCycles(m, "l2_via_l1"), 0,
                    SweepModel::RandomSubset);
    r.texL1 = capacity("texl1_capacity", measuredCycles(m, "tex_hit"), measuredCycles(m, "tex_l2"),
                       0, SweepModel::RandomSubset);
    r.constL1 = capacity("const_capacity", measuredCycles(m, "const_l1"),
                         measuredCycles(m, "const_l15"), 0, SweepModel::FullPass);
    r.constL15 =
        capacity("const_capacity", measuredCycles(m, "const_l15"), measuredCycles(m, "const_l2"),
                 static_cast<double>(dev.totalConstantBytes), SweepModel::FullPass);
    r.l2 = capacity("l2_capacity", measuredCycles(m, "l2_hit"), measuredCycles(m, "dram"), 0,
                    SweepModel::RandomSubset);

    // Fetch granularity.
    auto granularity = [&](const char* sweep, double hit) {
        const auto* pts = findPoints(m.strides, sweep);
        return pts == nullptr ? GranularityEstimate{} : fitGranularity(*pts, hit);
    };
    r.l1Fetch = granularity("l1_fetch", measuredCycles(m, "l1_hit"));
    r.l2Fetch = granularity("l2_fetch", measuredCycles(m, "l2_hit"));
    r.texFetch = granularity("tex_fetch", measuredCycles(m, "tex_hit"));
    if (const auto* pts = findPoints(m.strides, "const_fetch")) {
        r.constFetch = fitTwoLevelGranularity(*pts, measuredCycles(m, "const_l1"),
                                              measuredCycles(m, "const_l15"));
    }

    // Shared-memory banks.
    if (!m.sharedBanks.points.empty()) {
        r.banks = fitBanks(m.sharedBanks.points, dev.warpSize, m.sharedBankWords);
    }

    // Constant broadcast against serialisation.
    if (auto it = m.constantLanes.find("spacing4"); it != m.constantLanes.end()) {
        r.constLanes = fitLine(it->second);
        for (const auto& p : it->second) {
            if (p.x == 1) {
                r.constBroadcast = p.y;
            }
            if (p.x == dev.warpSize) {
                r.constSerial = p.y;
            }
        }
    }
}

/// Concurrency factors fitted on the calibration kernels, and the bandwidth of each path.
void fitConcurrencyAndBandwidth(const Measurements& m, ProbeResult& r) {
    const DeviceInfo& dev = m.device;
    // Concurrency factors.
    r.memoryBoundFit = fitConcurrency(m.kernels, "memory", r.latency, r.clockMHz);
    r.computeBoundFit = fitConcurrency(m.kernels, "compute", r.latency, r.clockMHz);
    const std::vector<std::string> memories = {"registers", "shared",   "L1", "texL1",
                                               "constL1",   "constL15", "L2", "L2persist",
                                               "global",    "constant"};
    auto fitted = [](const ConcurrencyFit& f, const std::string& mem) -> double {
        auto it = f.factor.find(mem);
        return it == f.factor.end() ? -1 : it->second;
    };
    for (const auto& mem : memories) {
        std::string from = mem == "L2persist" ? "L2" : mem == "constant" ? "global" : mem;
        double mb = fitted(r.memoryBoundFit, from);
        double cb = fitted(r.computeBoundFit, from);
        if (mb < 0) {
            r.warnings.push_back(fmt::format(
                "no calibration kernel served '{}': PORPLE's (0.1, 0.5) is used for it", mem));
            r.concurrency[mem] = {0.1, 0.5};
            continue;
        }
        if (cb < 0) {
            cb = mb;
        }
        r.concurrency[mem] = {clamped(mb), clamped(cb)};
    }
    for (const auto* f : {&r.memoryBoundFit, &r.computeBoundFit}) {
        for (const auto& k : f->kernels) {
            double ratio = k.predictedCycles / k.measuredCycles;
            if (ratio < 0.7 || ratio > 1.3) {
                r.warnings.push_back(fmt::format("the path model predicts {:.2f}x the measured "
                                                 "time of calibration kernel {}",
                                                 ratio, k.name));
            }
        }
    }

    // Bandwidth per path.
    for (const auto& k : m.kernels) {
        if (k.regime == "compute" || !(k.bytes > 0) || !(k.ms > 0)) {
            continue;
        }
        double seconds = k.ms * 1e-3;
        r.bandwidth.push_back({k.name, k.path, k.bytes / seconds / 1e9,
                               k.bytes / (seconds * r.clockMHz * 1e6) / dev.sms});
    }
}

} // namespace

Expected<ProbeResult> analyze(const Measurements& m) {
    ProbeResult r;
    r.measurements = m;
    const DeviceInfo& dev = m.device;

    // Latencies the spec needs.
    const std::vector<std::pair<std::string, std::string>> latencyOf = {
        {"shared", "shared"},      {"L1", "l1_hit"},          {"texL1", "tex_hit"},
        {"constL1", "const_l1"},   {"constL15", "const_l15"}, {"L2", "l2_via_l1"},
        {"global", "dram_via_l1"}, {"constant", "const_dram"}};
    DiagnosticList missing;
    for (const auto& [memory, name] : latencyOf) {
        auto c = m.cycles(name);
        if (!c) {
            missing.append(c.diagnostics());
            continue;
        }
        r.latency[memory] = *c;
    }
    for (const char* name : {"l2_hit", "dram", "tex_l2", "const_l2"}) {
        auto c = m.cycles(name);
        if (!c) {
            missing.append(c.diagnostics());
        }
    }
    if (missing.hasErrors()) {
        return Failure{missing};
    }
    r.latency["registers"] = 1;
    r.latency["L2persist"] = r.latency["L2"];

    // The clock: median of the readings during the run, else the attribute's peak.
    std::vector<double> clocks;
    for (double c : m.clockMHz) {
        if (c > 0) {
            clocks.push_back(c);
        }
    }
    double peakMHz = dev.clockPeakKHz / 1000;
    r.clockMHz = clocks.empty() ? peakMHz : median(clocks);
    if (!(r.clockMHz > 0)) {
        return fail(fmt::format("{}: no SM clock: neither measured nor reported", m.source));
    }
    if (clocks.empty()) {
        r.warnings.emplace_back("the SM clock was not measured: the peak clock is used");
    } else if (peakMHz > 0 && r.clockMHz < 0.9 * peakMHz) {
        r.warnings.push_back(fmt::format("the SM clock ran at {:.0f} MHz, below its peak of {:.0f} "
                                         "MHz: latencies of L2 and device memory in cycles "
                                         "depend on it",
                                         r.clockMHz, peakMHz));
    }
    if (m.quick) {
        r.warnings.emplace_back("quick measurements (--quick): fewer points, smaller sets");
    }

    fitCaches(m, r);
    fitConcurrencyAndBandwidth(m, r);

    r.msl = writeSpec(m, r, clocks, peakMHz);

    // The written spec must pass the checker.
    auto parsed = spec::parseSpec(r.msl, "probed.msl");
    if (!parsed) {
        DiagnosticList d;
        d.error({}, "the probed spec does not pass the MSL checker (a bug in memplace probe):");
        d.append(parsed.diagnostics());
        return Failure{d};
    }
    return r;
}

json toJson(const ProbeResult& r) {
    const auto& m = r.measurements;
    json j;
    j["device"] = {{"name", m.device.name},
                   {"arch", fmt::format("sm_{}{}", m.device.ccMajor, m.device.ccMinor)},
                   {"sms", m.device.sms},
                   {"driver_version", m.device.driverVersion},
                   {"runtime_version", m.device.runtimeVersion}};
    j["date"] = m.date;
    j["source"] = m.source;
    j["quick"] = m.quick;
    j["elapsed_s"] = m.elapsedSeconds;
    j["clock_mhz"] = r.clockMHz;
    j["clock_readings_mhz"] = m.clockMHz;
    json lat = json::object();
    for (const auto& [name, l] : m.latency) {
        lat[name] = {{"cycles", l.cycles}, {"path", l.path}, {"method", l.method}};
    }
    j["latency_cycles"] = lat;
    j["spec_latency_cycles"] = r.latency;
    auto cap = [](const CapacityEstimate& e) {
        return json{{"bytes", e.bytes},
                    {"rounded_bytes", roundCapacity(e.bytes)},
                    {"lower_bound", e.lowerBound},
                    {"largest_fit_bytes", e.largestFit},
                    {"points_in_range", e.pointsInRange},
                    {"how", e.how}};
    };
    j["capacity"] = {{"L1", cap(r.l1)},
                     {"texL1", cap(r.texL1)},
                     {"constL1", cap(r.constL1)},
                     {"constL15", cap(r.constL15)},
                     {"L2", cap(r.l2)}};
    auto gran = [](const GranularityEstimate& g) {
        return json{{"bytes", g.bytes}, {"miss_cycles", g.miss}, {"rms_cycles", g.rms}};
    };
    j["fetch_granularity"] = {
        {"L1", gran(r.l1Fetch)},           {"texL1", gran(r.texFetch)},
        {"L2", gran(r.l2Fetch)},           {"constL1", r.constFetch.first},
        {"constL15", r.constFetch.second}, {"const_rms_cycles", r.constFetch.rms}};
    j["shared_banks"] = {{"banks", r.banks.banks},
                         {"conflict_free_cycles", r.banks.base},
                         {"cycles_per_way", r.banks.perWay},
                         {"worst_cycles", r.banks.worst},
                         {"rms_cycles", r.banks.rms}};
    j["constant"] = {{"broadcast_cycles", r.constBroadcast},
                     {"serialised_cycles", r.constSerial},
                     {"cycles_per_address", r.constLanes.slope}};
    json bw = json::array();
    for (const auto& b : r.bandwidth) {
        bw.push_back({{"kernel", b.kernel},
                      {"path", b.path},
                      {"gb_per_s", b.gbPerS},
                      {"bytes_per_cycle_per_sm", b.bytesPerCycleSm}});
    }
    j["bandwidth"] = bw;
    auto fit = [](const ConcurrencyFit& f) {
        json k = json::array();
        for (const auto& kf : f.kernels) {
            k.push_back({{"kernel", kf.name},
                         {"measured_cycles", kf.measuredCycles},
                         {"predicted_cycles", kf.predictedCycles}});
        }
        return json{
            {"factors", f.factor}, {"kernels", k}, {"rms_relative_error", f.rmsRelativeError}};
    };
    j["concurrency_fit"] = {{"memory", fit(r.memoryBoundFit)}, {"compute", fit(r.computeBoundFit)}};
    json conc = json::object();
    for (const auto& [mem, p] : r.concurrency) {
        conc[mem] = {p.first, p.second};
    }
    j["concurrency"] = conc;
    j["warnings"] = r.warnings;
    j["spec"] = r.msl;
    return j;
}

std::string summaryText(const ProbeResult& r) {
    const auto& m = r.measurements;
    std::string s = fmt::format(
        "{} (sm_{}{}), {} SMs, SM clock {:.0f} MHz; measured {} in {:.1f} s\n", m.device.name,
        m.device.ccMajor, m.device.ccMinor, m.device.sms, r.clockMHz, m.date, m.elapsedSeconds);
    s += "latency (cycles):";
    for (const char* name : {"shared", "l1_hit", "tex_hit", "const_l1", "const_l15", "l2_via_l1",
                             "l2_hit", "dram_via_l1", "const_dram"}) {
        auto it = m.latency.find(name);
        if (it != m.latency.end()) {
            s += fmt::format(" {} {:.1f};", name, it->second.cycles);
        }
    }
    s += "\n";
    s += fmt::format("capacity: L1 {}, texL1 {}, constL1 {}, constL15 {}{}, L2 sweep {}\n",
                     approxSize(r.l1.bytes), approxSize(r.texL1.bytes), approxSize(r.constL1.bytes),
                     r.constL15.lowerBound ? ">= " : "", approxSize(r.constL15.bytes),
                     approxSize(r.l2.bytes));
    s += fmt::format("fetch unit: L1 {} B, texL1 {} B, L2 {} B, constant {} B / {} B; shared "
                     "banks {}\n",
                     r.l1Fetch.bytes, r.texFetch.bytes, r.l2Fetch.bytes, r.constFetch.first,
                     r.constFetch.second, r.banks.banks);
    s += fmt::format("constant: broadcast {:.1f} cycles, 32 addresses {:.1f}\n", r.constBroadcast,
                     r.constSerial);
    s += "bandwidth (GB/s):";
    for (const auto& b : r.bandwidth) {
        s += fmt::format(" {} {:.0f};", b.kernel, b.gbPerS);
    }
    s += "\n";
    for (const auto& w : r.warnings) {
        s += "warning: " + w + "\n";
    }
    return s;
}

namespace {

void compareNumber(std::vector<SpecDifference>& out, const std::string& entry,
                   const std::string& field, double a, double b) {
    double scale = std::max(std::fabs(a), std::fabs(b));
    if (scale == 0 || std::fabs(a - b) <= 0.005 * scale) {
        return;
    }
    out.push_back(
        {entry, field, fmt::format("{:g}", a), fmt::format("{:g}", b), b != 0 ? a / b : 0});
}

void compareText(std::vector<SpecDifference>& out, const std::string& entry,
                 const std::string& field, const std::string& a, const std::string& b) {
    if (a != b) {
        out.push_back({entry, field, a, b, 0});
    }
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) {
        s += (s.empty() ? "" : ",") + x;
    }
    return s;
}

} // namespace

std::vector<SpecDifference> compareSpecs(const spec::Spec& a, const spec::Spec& b) {
    std::vector<SpecDifference> out;
    const auto& p = a.processor;
    const auto& q = b.processor;
    const std::string proc = "processor";
    compareText(out, proc, "name", p.name, q.name);
    compareText(out, proc, "arch", p.arch, q.arch);
    compareNumber(out, proc, "sms", p.sms, q.sms);
    compareNumber(out, proc, "warpSize", p.warpSize, q.warpSize);
    compareNumber(out, proc, "clock (MHz)", p.clockMHz, q.clockMHz);
    compareNumber(out, proc, "maxThreadsPerSm", p.maxThreadsPerSm, q.maxThreadsPerSm);
    compareNumber(out, proc, "maxBlocksPerSm", p.maxBlocksPerSm, q.maxBlocksPerSm);
    compareNumber(out, proc, "maxWarpsPerSm", p.maxWarpsPerSm, q.maxWarpsPerSm);
    compareNumber(out, proc, "maxRegistersPerSm", p.maxRegistersPerSm, q.maxRegistersPerSm);
    compareNumber(out, proc, "maxSharedPerSm", static_cast<double>(p.maxSharedPerSm),
                  static_cast<double>(q.maxSharedPerSm));
    compareNumber(out, proc, "maxThreadsPerBlock", p.maxThreadsPerBlock, q.maxThreadsPerBlock);
    compareNumber(out, proc, "maxRegistersPerBlock", p.maxRegistersPerBlock,
                  q.maxRegistersPerBlock);
    compareNumber(out, proc, "maxRegistersPerThread", p.maxRegistersPerThread,
                  q.maxRegistersPerThread);
    compareNumber(out, proc, "maxSharedPerBlock", static_cast<double>(p.maxSharedPerBlock),
                  static_cast<double>(q.maxSharedPerBlock));
    compareNumber(out, proc, "reservedSharedPerBlock",
                  static_cast<double>(p.reservedSharedPerBlock),
                  static_cast<double>(q.reservedSharedPerBlock));
    for (const auto& ma : a.memories) {
        const spec::Memory* mb = b.findMemory(ma.name);
        if (mb == nullptr) {
            out.push_back({ma.name, "(memory)", "present", "absent", 0});
            continue;
        }
        compareNumber(out, ma.name, "id", ma.id, mb->id);
        compareNumber(out, ma.name, "size", static_cast<double>(ma.size),
                      static_cast<double>(mb->size));
        compareNumber(out, ma.name, "blockSize", static_cast<double>(ma.blockSize),
                      static_cast<double>(mb->blockSize));
        compareNumber(out, ma.name, "banks", ma.banks.value_or(0), mb->banks.value_or(0));
        compareNumber(out, ma.name, "latency read", ma.latency.read, mb->latency.read);
        compareNumber(out, ma.name, "latency write", ma.latency.write, mb->latency.write);
        compareNumber(out, ma.name, "concurrency memory-bound", ma.concurrency.memoryBound,
                      mb->concurrency.memoryBound);
        compareNumber(out, ma.name, "concurrency compute-bound", ma.concurrency.computeBound,
                      mb->concurrency.computeBound);
        compareText(out, ma.name, "lowerLevels", joined(ma.lowerLevels), joined(mb->lowerLevels));
        compareText(out, ma.name, "upperLevels", joined(ma.upperLevels), joined(mb->upperLevels));
        compareText(out, ma.name, "shareScope", std::string(spec::shareScopeName(ma.shareScope)),
                    std::string(spec::shareScopeName(mb->shareScope)));
        compareText(out, ma.name, "unit", ma.unit, mb->unit);
        compareText(out, ma.name, "serialCondition",
                    ma.serialCondition ? ma.serialCondition->toString() : "na",
                    mb->serialCondition ? mb->serialCondition->toString() : "na");
    }
    for (const auto& mb : b.memories) {
        if (a.findMemory(mb.name) == nullptr) {
            out.push_back({mb.name, "(memory)", "absent", "present", 0});
        }
    }
    for (const auto& pa : a.places) {
        std::string entry = "place " + std::string(placeName(pa.place));
        const spec::PlaceEntry* pb = b.findPlace(pa.place);
        if (pb == nullptr) {
            out.push_back({entry, "(place)", "present", "absent", 0});
            continue;
        }
        compareText(out, entry, "memory", pa.memory, pb->memory);
        compareText(out, entry, "levels", joined(pa.levels), joined(pb->levels));
        compareText(out, entry, "path", pa.path, pb->path);
        compareNumber(out, entry, "capacity", static_cast<double>(pa.capacity),
                      static_cast<double>(pb->capacity));
    }
    for (const auto& pb : b.places) {
        if (a.findPlace(pb.place) == nullptr) {
            out.push_back(
                {"place " + std::string(placeName(pb.place)), "(place)", "absent", "present", 0});
        }
    }
    return out;
}

} // namespace memplace::probe

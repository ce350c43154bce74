#include "probe/probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace memplace::probe {

using nlohmann::json;

namespace {

constexpr double kMinFactor = 1e-7; // a fitted factor of 0 is not a valid MSL value

std::string sizeText(uint64_t b) {
    constexpr uint64_t kKB = 1024;
    constexpr uint64_t kMB = kKB * 1024;
    constexpr uint64_t kGB = kMB * 1024;
    if (b >= kGB && b % kGB == 0) {
        return fmt::format("{} GB", b / kGB);
    }
    if (b >= kMB && b % kMB == 0) {
        return fmt::format("{} MB", b / kMB);
    }
    if (b >= kKB && b % kKB == 0) {
        return fmt::format("{} KB", b / kKB);
    }
    return fmt::format("{} B", b);
}

/// A size for a comment: exact units when they divide, else KB/MB with one decimal.
std::string approxSize(double b) {
    if (b >= 1024.0 * 1024) {
        return fmt::format("{:.1f} MB", b / (1024.0 * 1024));
    }
    if (b >= 1024) {
        return fmt::format("{:.1f} KB", b / 1024);
    }
    return fmt::format("{:.0f} B", b);
}

std::string cyc(double c) {
    return fmt::format("{:.1f}", c);
}

std::string factorText(double a) {
    return fmt::format("{:.3g}", a);
}

/// MSL strings cannot hold '"' or a newline.
std::string mslString(std::string s) {
    for (char& ch : s) {
        if (ch == '"' || ch == '\n' || ch == '\r') {
            ch = '\'';
        }
    }
    return s;
}

/// Writes entries as `    name = value;` with the comment aligned after it.
class MslWriter {
public:
    void line(const std::string& text = {}) { out_ += text + "\n"; }
    void open(const std::string& head) { out_ += head + " {\n"; }
    void close() { out_ += "}\n\n"; }
    void field(const std::string& name, const std::string& value, const std::string& comment = {}) {
        std::string f = fmt::format("    {} = {};", name, value);
        if (!comment.empty()) {
            if (f.size() < 36) {
                f.append(36 - f.size(), ' ');
            } else {
                f += ' ';
            }
            f += "# " + comment;
        }
        out_ += f + "\n";
    }
    const std::string& text() const { return out_; }

private:
    std::string out_;
};

const LatencyMeasurement* findLatency(const Measurements& m, const std::string& name) {
    auto it = m.latency.find(name);
    return it == m.latency.end() || !(it->second.cycles > 0) ? nullptr : &it->second;
}

const std::vector<Point>* findPoints(const std::map<std::string, Sweep>& sweeps,
                                     const std::string& name) {
    auto it = sweeps.find(name);
    return it == sweeps.end() || it->second.points.empty() ? nullptr : &it->second.points;
}

double clamped(double a) {
    return std::clamp(a, kMinFactor, 1.0);
}

std::string kernelList(const ConcurrencyFit& fit, const std::string& memory) {
    auto it = fit.kernelsOf.find(memory);
    if (it == fit.kernelsOf.end()) {
        return "-";
    }
    std::string s;
    for (const auto& k : it->second) {
        for (const auto& kf : fit.kernels) {
            if (kf.name == k) {
                s += fmt::format("{}{} ({:.2f})", s.empty() ? "" : ", ", k,
                                 kf.predictedCycles / kf.measuredCycles);
            }
        }
    }
    return s;
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
    auto lat = [&](const char* name) { return *m.cycles(name); };

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
    r.l1 = capacity("l1_capacity", lat("l1_hit"), lat("l2_via_l1"), 0, SweepModel::RandomSubset);
    r.texL1 =
        capacity("texl1_capacity", lat("tex_hit"), lat("tex_l2"), 0, SweepModel::RandomSubset);
    r.constL1 =
        capacity("const_capacity", lat("const_l1"), lat("const_l15"), 0, SweepModel::FullPass);
    r.constL15 = capacity("const_capacity", lat("const_l15"), lat("const_l2"),
                          static_cast<double>(dev.totalConstantBytes), SweepModel::FullPass);
    r.l2 = capacity("l2_capacity", lat("l2_hit"), lat("dram"), 0, SweepModel::RandomSubset);

    // Fetch granularity.
    auto granularity = [&](const char* sweep, double hit) {
        const auto* pts = findPoints(m.strides, sweep);
        return pts == nullptr ? GranularityEstimate{} : fitGranularity(*pts, hit);
    };
    r.l1Fetch = granularity("l1_fetch", lat("l1_hit"));
    r.l2Fetch = granularity("l2_fetch", lat("l2_hit"));
    r.texFetch = granularity("tex_fetch", lat("tex_hit"));
    if (const auto* pts = findPoints(m.strides, "const_fetch")) {
        r.constFetch = fitTwoLevelGranularity(*pts, lat("const_l1"), lat("const_l15"));
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

    // ---- the spec ----------------------------------------------------------------------------
    auto bwOf = [&](const std::string& kernel) -> std::string {
        for (const auto& b : r.bandwidth) {
            if (b.kernel == kernel) {
                return fmt::format("{:.0f} GB/s", b.gbPerS);
            }
        }
        return "-";
    };
    auto capBytes = [&](const CapacityEstimate& e, uint64_t fallback, const char* what) {
        uint64_t b = roundCapacity(e.bytes);
        if (b == 0) {
            r.warnings.push_back(fmt::format("{}: no capacity estimate ({}): {} is used", what,
                                             e.how, sizeText(fallback)));
            return fallback;
        }
        return b;
    };
    auto blockBytes = [&](uint64_t b, uint64_t fallback, const char* what) {
        if (b == 0) {
            r.warnings.push_back(fmt::format("{}: no fetch-granularity estimate: {} is used", what,
                                             sizeText(fallback)));
            return fallback;
        }
        return b;
    };
    auto latText = [&](const std::string& mem) {
        return fmt::format("({}, om)", std::llround(r.latency.at(mem)));
    };
    auto concText = [&](const std::string& mem) {
        auto [mb, cb] = r.concurrency.at(mem);
        return fmt::format("({}, {})", factorText(mb), factorText(cb));
    };
    auto concComment = [&](const std::string& mem) {
        std::string from = mem == "L2persist" ? "L2" : mem == "constant" ? "global" : mem;
        if (r.memoryBoundFit.factor.count(from) == 0) {
            return std::string("[PORPLE] no calibration kernel: PORPLE's values");
        }
        std::string s = mem == from ? "[fit]" : fmt::format("[fit] as {}:", from);
        s += fmt::format(" memory-bound from {}", kernelList(r.memoryBoundFit, from));
        if (r.computeBoundFit.factor.count(from) != 0) {
            s += fmt::format("; compute-bound from {}", kernelList(r.computeBoundFit, from));
        }
        s += " (predicted/measured)";
        return s;
    };

    const std::string arch = fmt::format("sm_{}{}", dev.ccMajor, dev.ccMinor);
    MslWriter w;
    w.line(fmt::format("# {} ({}), probed by `memplace probe` on {}.", mslString(dev.name), arch,
                       m.date.empty() ? "an unknown date" : m.date));
    w.line(fmt::format("# Driver {}, runtime {}; the measurements took {:.1f} s.",
                       dev.driverVersion, dev.runtimeVersion, m.elapsedSeconds));
    w.line("#");
    w.line("# Every number carries the measured value and the method that gave it:");
    w.line("#   [attr]   cudaDeviceGetAttribute / cudaGetDeviceProperties");
    w.line("#   [clock]  clock64() against %globaltimer over 20 ms, during the run");
    w.line("#   [chase]  pointer chasing: one thread, each load's address is the previous load's "
           "value,");
    w.line("#            clock64() around the timed steps; cycles per load. Stores cannot be "
           "timed this");
    w.line("#            way: write latencies are `om` (equal to the read latency)");
    w.line("#   [sweep]  working-set sweep: the set is brought in, then chased in random order; "
           "the");
    w.line("#            resident fraction h = (miss - t) / (miss - hit) is ~ C / S past the "
           "capacity C");
    w.line("#   [stride] stride sweep over cold lines: t(s) = hit + (miss - hit) min(1, s / b), "
           "b fitted");
    w.line("#   [banks]  one warp reads shared words lane * stride: cycles against the conflict "
           "degree");
    w.line("#   [lanes]  one warp reads constant words at 1 to 32 distinct addresses");
    w.line("#   [fit]    PORPLE's concurrency factor a_j, fitted so that sum_j N_j * T_j * a_j "
           "matches the");
    w.line("#            measured time (SM cycles) of calibration kernels, by non-negative least "
           "squares on");
    w.line("#            the relative error. N_j counts the whole grid's transactions served at "
           "level j,");
    w.line("#            T_j is the latency written here. Memory-bound: full occupancy, "
           "independent loads;");
    w.line("#            compute-bound: the same kernels with 64 dependent FMAs per loaded "
           "element");
    w.line("#   [doc]    not measurable from a kernel: the CUDA C++ Programming Guide's value");
    w.line("#");
    w.line("# Achievable bandwidth (GB/s, and bytes per cycle per SM):");
    for (const auto& b : r.bandwidth) {
        w.line(fmt::format("#   {:<18} {:<14} {:8.0f} GB/s  {:7.2f} B/cycle/SM", b.kernel, b.path,
                           b.gbPerS, b.bytesPerCycleSm));
    }
    if (!r.warnings.empty()) {
        w.line("#");
        w.line("# Warnings:");
        for (const auto& warn : r.warnings) {
            w.line("#   " + warn);
        }
    }
    w.line();

    // Processor.
    w.open("processor");
    w.field("name", fmt::format("\"{}\"", mslString(dev.name)), "[attr] cudaDeviceProp::name");
    w.field("arch", fmt::format("\"{}\"", arch),
            fmt::format("[attr] compute capability {}.{}", dev.ccMajor, dev.ccMinor));
    w.field("sms", std::to_string(dev.sms), "[attr] cudaDevAttrMultiProcessorCount");
    w.field("warpSize", std::to_string(dev.warpSize), "[attr] cudaDevAttrWarpSize");
    {
        std::string readings;
        for (double c : clocks) {
            readings += fmt::format("{}{:.0f}", readings.empty() ? "" : ", ", c);
        }
        w.field(
            "clock", fmt::format("{:.0f} MHz", r.clockMHz),
            clocks.empty()
                ? fmt::format("[attr] cudaDevAttrClockRate (peak; not measured)")
                : fmt::format("[clock] median of {} MHz; peak (cudaDevAttrClockRate) {:.0f} MHz",
                              readings, peakMHz));
    }
    w.field("maxThreadsPerSm", std::to_string(dev.maxThreadsPerSm),
            "[attr] cudaDevAttrMaxThreadsPerMultiProcessor");
    w.field("maxBlocksPerSm", std::to_string(dev.maxBlocksPerSm),
            "[attr] cudaDevAttrMaxBlocksPerMultiprocessor");
    w.field("maxWarpsPerSm", "om",
            fmt::format("{} / {} = {}", dev.maxThreadsPerSm, dev.warpSize,
                        dev.maxThreadsPerSm / std::max(1u, dev.warpSize)));
    w.field("maxRegistersPerSm", std::to_string(dev.maxRegistersPerSm),
            "[attr] cudaDevAttrMaxRegistersPerMultiprocessor");
    w.field("maxSharedPerSm", sizeText(dev.maxSharedPerSm),
            fmt::format("[attr] cudaDevAttrMaxSharedMemoryPerMultiprocessor, {} B",
                        dev.maxSharedPerSm));
    w.field("maxThreadsPerBlock", std::to_string(dev.maxThreadsPerBlock),
            "[attr] cudaDevAttrMaxThreadsPerBlock");
    w.field("maxRegistersPerBlock", std::to_string(dev.maxRegistersPerBlock),
            "[attr] cudaDevAttrMaxRegistersPerBlock");
    w.field("maxRegistersPerThread", "255", "[doc] compute capability 5.0 and later");
    uint64_t sharedPerBlock =
        dev.maxSharedPerBlockOptin > 0 ? dev.maxSharedPerBlockOptin : dev.maxSharedPerBlock;
    w.field("maxSharedPerBlock", sizeText(sharedPerBlock),
            fmt::format("[attr] cudaDevAttrMaxSharedMemoryPerBlockOptin, {} B (without opt-in "
                        "{} B)",
                        dev.maxSharedPerBlockOptin, dev.maxSharedPerBlock));
    w.field("reservedSharedPerBlock", sizeText(dev.reservedSharedPerBlock),
            "[attr] cudaDevAttrReservedSharedMemoryPerBlock");
    w.field("registerAllocationUnit", "256", "[doc] occupancy calculator: registers per warp");
    w.field("sharedAllocationUnit", "128 B", "[doc] occupancy calculator");
    w.close();

    const LatencyMeasurement* l1Hit = findLatency(m, "l1_hit");
    const LatencyMeasurement* roHit = findLatency(m, "readonly_hit");

    // registers
    w.open("memory registers");
    w.field("id", "0");
    w.field("swmng", "yes");
    w.field("rw", "rw");
    w.field("dim", "na");
    w.field("size", sizeText(static_cast<uint64_t>(dev.maxRegistersPerSm) * 4),
            fmt::format("[attr] {} registers of 4 B per SM", dev.maxRegistersPerSm));
    w.field("blockSize", "4 B", "one register");
    w.field("banks", "na");
    w.field("latency", "(1, 1)", "operand read, no memory transaction (not measured)");
    w.field("upperLevels", "na");
    w.field("lowerLevels", "na");
    w.field("shareScope", "thread");
    w.field("concurrencyFactor", concText("registers"), concComment("registers"));
    w.field("serialCondition", "na", "thread-private: nothing to serialize");
    w.close();

    // shared
    w.open("memory shared");
    w.field("id", "1");
    w.field("swmng", "yes");
    w.field("rw", "rw");
    w.field("dim", "na");
    w.field("size", sizeText(dev.maxSharedPerSm),
            "[attr] cudaDevAttrMaxSharedMemoryPerMultiprocessor");
    w.field("blockSize", "4 B", "one bank word (the bank fit below uses 4-byte words)");
    if (r.banks.banks > 0) {
        w.field("banks", std::to_string(r.banks.banks),
                fmt::format("[banks] {} banks fit best (rms {:.1f} cycles): conflict-free {} "
                            "cycles, +{} per further way, 32-way {}",
                            r.banks.banks, r.banks.rms, cyc(r.banks.base), cyc(r.banks.perWay),
                            cyc(r.banks.worst)));
    } else {
        r.warnings.emplace_back("no bank-conflict sweep: 32 banks assumed");
        w.field("banks", "32", "[doc] no bank sweep in the measurements");
    }
    w.field("latency", latText("shared"),
            fmt::format("[chase] shared {} cycles: {}", cyc(lat("shared")),
                        findLatency(m, "shared")->method));
    w.field("upperLevels", "na");
    w.field("lowerLevels", "na");
    w.field("shareScope", "block");
    w.field("concurrencyFactor", concText("shared"), concComment("shared"));
    w.field("serialCondition", "block{ word1 != word2 && word1 % banks == word2 % banks }");
    w.field("unit", "L1TEX", "shares the SRAM of each SM with L1");
    w.close();

    // L1
    uint64_t l1Size = capBytes(r.l1, dev.maxSharedPerSm, "L1");
    uint64_t l1Block = blockBytes(r.l1Fetch.bytes, 32, "L1");
    w.open("memory L1");
    w.field("id", "2");
    w.field("swmng", "no");
    w.field("rw", "rw");
    w.field("dim", "na");
    w.field("size", sizeText(l1Size),
            fmt::format("[sweep] l1_capacity, carveout preference: largest L1: {}", r.l1.how));
    w.field("blockSize", sizeText(l1Block),
            fmt::format("[stride] l1_fetch: fetch unit {} B fitted (rms {:.1f} cycles, miss {})",
                        r.l1Fetch.bytes, r.l1Fetch.rms, cyc(r.l1Fetch.miss)));
    w.field("banks", "na");
    w.field("latency", latText("L1"),
            fmt::format("[chase] l1_hit {} cycles: {}; read-only path (ld.global.nc) {}",
                        cyc(lat("l1_hit")), l1Hit->method,
                        roHit != nullptr ? cyc(roHit->cycles) : "-"));
    w.field("upperLevels", "na");
    w.field("lowerLevels", "(L2, L2persist)");
    w.field("shareScope", "sm");
    w.field("concurrencyFactor", concText("L1"), concComment("L1"));
    w.field("serialCondition", fmt::format("warp{{ address1 / {0} != address2 / {0} }}", l1Block),
            "requests are in fetch units (blockSize)");
    w.field("unit", "L1TEX");
    w.close();

    // texL1
    uint64_t texSize = capBytes(r.texL1, l1Size, "texL1");
    uint64_t texBlock = blockBytes(r.texFetch.bytes, 32, "texL1");
    w.open("memory texL1");
    w.field("id", "3");
    w.field("swmng", "no");
    w.field("rw", "r");
    w.field("dim", "na");
    w.field("size", sizeText(texSize), fmt::format("[sweep] texl1_capacity: {}", r.texL1.how));
    w.field("blockSize", sizeText(texBlock),
            fmt::format("[stride] tex_fetch: fetch unit {} B fitted (rms {:.1f} cycles, miss {})",
                        r.texFetch.bytes, r.texFetch.rms, cyc(r.texFetch.miss)));
    w.field("banks", "na");
    w.field("latency", latText("texL1"),
            fmt::format("[chase] tex_hit {} cycles: {}", cyc(lat("tex_hit")),
                        findLatency(m, "tex_hit")->method));
    w.field("upperLevels", "na");
    w.field("lowerLevels", "(L2)");
    w.field("shareScope", "sm");
    w.field("concurrencyFactor", concText("texL1"), concComment("texL1"));
    w.field("serialCondition", fmt::format("warp{{ address1 / {0} != address2 / {0} }}", texBlock),
            "requests are in fetch units (blockSize)");
    w.field("unit", "L1TEX");
    w.close();

    // constL1
    uint64_t c1Size = capBytes(r.constL1, 2048, "constL1");
    uint64_t c1Block = blockBytes(r.constFetch.first, 64, "constL1");
    uint64_t c15Block = blockBytes(r.constFetch.second, 256, "constL15");
    w.open("memory constL1");
    w.field("id", "4");
    w.field("swmng", "no");
    w.field("rw", "r");
    w.field("dim", "na");
    w.field("size", sizeText(c1Size), fmt::format("[sweep] const_capacity: {}", r.constL1.how));
    w.field("blockSize", sizeText(c1Block),
            fmt::format("[stride] const_fetch, two levels fitted: {} B here, {} B below (rms "
                        "{:.1f} cycles, L2 {})",
                        r.constFetch.first, r.constFetch.second, r.constFetch.rms,
                        cyc(r.constFetch.last)));
    w.field("banks", "na");
    w.field("latency", latText("constL1"),
            fmt::format("[chase] const_l1 {} cycles: {}", cyc(lat("const_l1")),
                        findLatency(m, "const_l1")->method));
    w.field("upperLevels", "na");
    w.field("lowerLevels", "(constL15)");
    w.field("shareScope", "sm");
    w.field("concurrencyFactor", concText("constL1"), concComment("constL1"));
    w.field("serialCondition", "warp{ address1 != address2 }",
            r.constBroadcast > 0
                ? fmt::format("[lanes] 1 address {} cycles, {} addresses {} (+{} per further "
                              "address): serialised per address",
                              cyc(r.constBroadcast), dev.warpSize, cyc(r.constSerial),
                              cyc(r.constLanes.slope))
                : std::string("[doc] broadcast, else one address at a time"));
    w.close();

    // constL15
    uint64_t c15Size = capBytes(r.constL15, 65536, "constL15");
    w.open("memory constL15");
    w.field("id", "5");
    w.field("swmng", "no");
    w.field("rw", "r");
    w.field("dim", "na");
    w.field("size", sizeText(c15Size),
            fmt::format("[sweep] const_capacity: {}{}", r.constL15.how,
                        r.constL15.lowerBound ? " (all of constant memory)" : ""));
    w.field("blockSize", sizeText(c15Block), "[stride] const_fetch, the second level's unit");
    w.field("banks", "na");
    w.field("latency", latText("constL15"),
            fmt::format("[chase] const_l15 {} cycles: {}", cyc(lat("const_l15")),
                        findLatency(m, "const_l15")->method));
    w.field("upperLevels", "om");
    w.field("lowerLevels", "(L2)");
    w.field("shareScope", "sm");
    w.field("concurrencyFactor", concText("constL15"), concComment("constL15"));
    w.field("serialCondition", "warp{ address1 != address2 }");
    w.close();

    // L2
    uint64_t l2Block = blockBytes(r.l2Fetch.bytes, 32, "L2");
    uint64_t l2Size = dev.l2Bytes > 0 ? dev.l2Bytes : capBytes(r.l2, 1ull << 20, "L2");
    w.open("memory L2");
    w.field("id", "6");
    w.field("swmng", "no");
    w.field("rw", "rw");
    w.field("dim", "na");
    w.field("size", sizeText(l2Size),
            fmt::format("[attr] cudaDevAttrL2CacheSize {} B; [sweep] l2_capacity: {}", dev.l2Bytes,
                        r.l2.how));
    w.field("blockSize", sizeText(l2Block),
            fmt::format("[stride] l2_fetch: fill unit from device memory {} B fitted (rms {:.1f} "
                        "cycles, miss {})",
                        r.l2Fetch.bytes, r.l2Fetch.rms, cyc(r.l2Fetch.miss)));
    w.field("banks", "na");
    w.field("latency", latText("L2"),
            fmt::format("[chase] l2_via_l1 {} cycles (L1 miss, L2 hit); L2-only loads (ld.cg) "
                        "{}, texture {}, constant {}",
                        cyc(lat("l2_via_l1")), cyc(lat("l2_hit")), cyc(lat("tex_l2")),
                        cyc(lat("const_l2"))));
    w.field("upperLevels", "om");
    w.field("lowerLevels", "(global, constant)");
    w.field("shareScope", "device");
    w.field("concurrencyFactor", concText("L2"), concComment("L2"));
    w.field("serialCondition", fmt::format("warp{{ address1 / {0} != address2 / {0} }}", l1Block),
            "requests from L1 are in L1 fetch units");
    w.close();

    // L2persist
    w.open("memory L2persist");
    w.field("id", "7");
    w.field("swmng", "no");
    w.field("rw", "rw");
    w.field("dim", "na");
    w.field("size",
            sizeText(dev.persistingL2MaxBytes > 0 ? dev.persistingL2MaxBytes : l2Size * 3 / 4),
            fmt::format("[attr] cudaDevAttrMaxPersistingL2CacheSize {} B (access-policy window "
                        "up to {} B); not set here",
                        dev.persistingL2MaxBytes, dev.accessPolicyWindowMaxBytes));
    w.field("blockSize", sizeText(l2Block), "as L2");
    w.field("banks", "na");
    w.field("latency", latText("L2persist"), "as L2: the same cache");
    w.field("upperLevels", "om");
    w.field("lowerLevels", "(global)");
    w.field("shareScope", "device");
    w.field("concurrencyFactor", concText("L2persist"), concComment("L2persist"));
    w.field("serialCondition", fmt::format("warp{{ address1 / {0} != address2 / {0} }}", l1Block));
    w.field("unit", "L2");
    w.close();

    // global
    w.open("memory global");
    w.field("id", "8");
    w.field("swmng", "yes");
    w.field("rw", "rw");
    w.field("dim", "na");
    w.field("size", sizeText(dev.totalGlobalBytes),
            fmt::format("[attr] cudaDeviceProp::totalGlobalMem {} B", dev.totalGlobalBytes));
    w.field("blockSize", sizeText(l2Block), "[stride] l2_fetch, as L2: the unit read from DRAM");
    w.field("banks", "na");
    {
        const auto* wide = findLatency(m, "dram_wide");
        const auto* tex = findLatency(m, "tex_dram");
        w.field("latency", latText("global"),
                fmt::format("[chase] dram_via_l1 {} cycles (L1 and L2 miss, after an L2 flush); "
                            "L2-only loads {}, over {}: {}; texture {}",
                            cyc(lat("dram_via_l1")), cyc(lat("dram")),
                            wide != nullptr ? approxSize(static_cast<double>(wide->bytes)) : "-",
                            wide != nullptr ? cyc(wide->cycles) : "-",
                            tex != nullptr ? cyc(tex->cycles) : "-"));
    }
    w.field("upperLevels", "om");
    w.field("lowerLevels", "na");
    w.field("shareScope", "device");
    w.field("concurrencyFactor", concText("global"),
            concComment("global") +
                fmt::format("; read {}, 16-byte loads {}", bwOf("dram_ld"), bwOf("dram_ld128")));
    w.field("serialCondition", fmt::format("warp{{ address1 / {0} != address2 / {0} }}", l1Block));
    w.close();

    // constant
    w.open("memory constant");
    w.field("id", "9");
    w.field("swmng", "yes");
    w.field("rw", "r");
    w.field("dim", "na");
    w.field("size", sizeText(dev.totalConstantBytes), "[attr] cudaDevAttrTotalConstantMemory");
    w.field("blockSize", "4 B", "one word");
    w.field("banks", "na");
    w.field("latency", latText("constant"),
            fmt::format("[chase] const_dram {} cycles: {}", cyc(lat("const_dram")),
                        findLatency(m, "const_dram")->method));
    w.field("upperLevels", "om");
    w.field("lowerLevels", "na");
    w.field("shareScope", "device");
    w.field("concurrencyFactor", concText("constant"),
            concComment("constant") + " (its misses are compulsory: at most 64 KB)");
    w.field("serialCondition", "warp{ address1 != address2 }", "broadcast, else one per address");
    w.close();

    w.line("place global    { memory = global;    levels = (L1, L2, global);              "
           "path = ldst; }");
    w.line("place readonly  { memory = global;    levels = (L1, L2, global);              "
           "path = ldst;  rw = r; }");
    w.line("place texture   { memory = global;    levels = (texL1, L2, global);           "
           "path = tex;   rw = r; dim = (1, 2); }  # 1-D and 2-D texture objects");
    w.line("place constant  { memory = constant;  levels = (constL1, constL15, L2, constant); "
           "path = const; }");
    w.line(fmt::format("place shared    {{ memory = shared;    levels = (shared);                "
                       "      path = ldst;  capacity = {}; capacityScope = block; }}  # "
                       "[attr] opt-in shared memory per block",
                       sizeText(sharedPerBlock)));
    w.line("place l2persist { memory = global;    levels = (L1, L2persist, global);       "
           "path = ldst; }");
    w.line("place registers { memory = registers; levels = (registers);                   "
           "path = ldst;  capacity = 1020 B; capacityScope = thread; }  # [doc] 255 "
           "registers of 4 B");
    r.msl = w.text();

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

// The probed spec's text: an MSL writer and one function per entry (header, processor, each
// memory, the places), run in the order of kSpecEntries.
#include "probe/spec_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace memplace::probe {

double measuredCycles(const Measurements& m, const char* name) {
    return *m.cycles(name);
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

namespace {

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

/// Writes the probed spec, one entry at a time (kSpecEntries), from the fitted result: what the
/// entries share (sizes and fetch units several of them use) is kept here. Capacity and fetch-unit
/// fallbacks add warnings in the entries' order.
struct SpecWriter {
    const Measurements& m;
    ProbeResult& r;
    const DeviceInfo& dev;
    const std::vector<double>& clocks; ///< SM clock readings during the run
    double peakMHz;
    MslWriter w;
    std::string arch;
    uint64_t sharedPerBlock = 0;
    uint64_t l1Size = 0;
    uint64_t l1Block = 0;
    uint64_t c15Block = 0;
    uint64_t l2Block = 0;
    uint64_t l2Size = 0;

    SpecWriter(const Measurements& m, ProbeResult& r, const std::vector<double>& clocks,
               double peakMHz)
        : m(m), r(r), dev(m.device), clocks(clocks), peakMHz(peakMHz) {}

    double lat(const char* name) const { return measuredCycles(m, name); }
    std::string bwOf(const std::string& kernel) const {
        for (const auto& b : r.bandwidth) {
            if (b.kernel == kernel) {
                return fmt::format("{:.0f} GB/s", b.gbPerS);
            }
        }
        return "-";
    }
    uint64_t capBytes(const CapacityEstimate& e, uint64_t fallback, const char* what) {
        uint64_t b = roundCapacity(e.bytes);
        if (b == 0) {
            r.warnings.push_back(fmt::format("{}: no capacity estimate ({}): {} is used", what,
                                             e.how, sizeText(fallback)));
            return fallback;
        }
        return b;
    }
    uint64_t blockBytes(uint64_t b, uint64_t fallback, const char* what) {
        if (b == 0) {
            r.warnings.push_back(fmt::format("{}: no fetch-granularity estimate: {} is used", what,
                                             sizeText(fallback)));
            return fallback;
        }
        return b;
    }
    std::string latText(const std::string& mem) const {
        return fmt::format("({}, om)", std::llround(r.latency.at(mem)));
    }
    std::string concText(const std::string& mem) const {
        auto [mb, cb] = r.concurrency.at(mem);
        return fmt::format("({}, {})", factorText(mb), factorText(cb));
    }
    std::string concComment(const std::string& mem) const {
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
    }

    /// The comment at the head of the spec: the device, the methods, bandwidths, warnings.
    void header() {
        arch = fmt::format("sm_{}{}", dev.ccMajor, dev.ccMinor);
        w.line(fmt::format("# {} ({}), probed by `memplace probe` on {}.", mslString(dev.name),
                           arch, m.date.empty() ? "an unknown date" : m.date));
        w.line(fmt::format("# Driver {}, runtime {}; the measurements took {:.1f} s.",
                           dev.driverVersion, dev.runtimeVersion, m.elapsedSeconds));
        w.line("#");
        w.line("# Every number carries the measured value and the method that gave it:");
        w.line("#   [attr]   cudaDeviceGetAttribute / cudaGetDeviceProperties");
        w.line("#   [clock]  clock64() against %globaltimer over 20 ms, during the run");
        w.line(
            "#   [chase]  pointer chasing: one thread, each load's address is the previous load's "
            "value,");
        w.line("#            clock64() around the timed steps; cycles per load. Stores cannot be "
               "timed this");
        w.line("#            way: write latencies are `om` (equal to the read latency)");
        w.line(
            "#   [sweep]  working-set sweep: the set is brought in, then chased in random order; "
            "the");
        w.line("#            resident fraction h = (miss - t) / (miss - hit) is ~ C / S past the "
               "capacity C");
        w.line(
            "#   [stride] stride sweep over cold lines: t(s) = hit + (miss - hit) min(1, s / b), "
            "b fitted");
        w.line(
            "#   [banks]  one warp reads shared words lane * stride: cycles against the conflict "
            "degree");
        w.line("#   [lanes]  one warp reads constant words at 1 to 32 distinct addresses");
        w.line("#   [fit]    PORPLE's concurrency factor a_j, fitted so that sum_j N_j * T_j * a_j "
               "matches the");
        w.line(
            "#            measured time (SM cycles) of calibration kernels, by non-negative least "
            "squares on");
        w.line(
            "#            the relative error. N_j counts the whole grid's transactions served at "
            "level j,");
        w.line("#            T_j is the latency written here. Memory-bound: full occupancy, "
               "independent loads;");
        w.line("#            compute-bound: the same kernels with 64 dependent FMAs per loaded "
               "element");
        w.line("#   [doc]    not measurable from a kernel: the CUDA C++ Programming Guide's value");
        w.line("#");
        w.line("# Achievable bandwidth (GB/s, and bytes per cycle per SM):");
        for (const auto& b : r.bandwidth) {
            w.line(fmt::format("#   {:<18} {:<14} {:8.0f} GB/s  {:7.2f} B/cycle/SM", b.kernel,
                               b.path, b.gbPerS, b.bytesPerCycleSm));
        }
        if (!r.warnings.empty()) {
            w.line("#");
            w.line("# Warnings:");
            for (const auto& warn : r.warnings) {
                w.line("#   " + warn);
            }
        }
        w.line();
    }

    /// The processor entry.
    void processor() {
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
            w.field("clock", fmt::format("{:.0f} MHz", r.clockMHz),
                    clocks.empty()
                        ? fmt::format("[attr] cudaDevAttrClockRate (peak; not measured)")
                        : fmt::format(
                              "[clock] median of {} MHz; peak (cudaDevAttrClockRate) {:.0f} MHz",
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
        sharedPerBlock =
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
    }

    /// memory registers
    void memoryRegisters() {
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
    }

    /// memory shared
    void memoryShared() {
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
    }

    /// memory L1
    void memoryL1() {
        const LatencyMeasurement* l1Hit = findLatency(m, "l1_hit");
        const LatencyMeasurement* roHit = findLatency(m, "readonly_hit");
        l1Size = capBytes(r.l1, dev.maxSharedPerSm, "L1");
        l1Block = blockBytes(r.l1Fetch.bytes, 32, "L1");
        w.open("memory L1");
        w.field("id", "2");
        w.field("swmng", "no");
        w.field("rw", "rw");
        w.field("dim", "na");
        w.field("size", sizeText(l1Size),
                fmt::format("[sweep] l1_capacity, carveout preference: largest L1: {}", r.l1.how));
        w.field(
            "blockSize", sizeText(l1Block),
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
        w.field("serialCondition",
                fmt::format("warp{{ address1 / {0} != address2 / {0} }}", l1Block),
                "requests are in fetch units (blockSize)");
        w.field("unit", "L1TEX");
        w.close();
    }

    /// memory texL1
    void memoryTexL1() {
        uint64_t texSize = capBytes(r.texL1, l1Size, "texL1");
        uint64_t texBlock = blockBytes(r.texFetch.bytes, 32, "texL1");
        w.open("memory texL1");
        w.field("id", "3");
        w.field("swmng", "no");
        w.field("rw", "r");
        w.field("dim", "na");
        w.field("size", sizeText(texSize), fmt::format("[sweep] texl1_capacity: {}", r.texL1.how));
        w.field(
            "blockSize", sizeText(texBlock),
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
        w.field("serialCondition",
                fmt::format("warp{{ address1 / {0} != address2 / {0} }}", texBlock),
                "requests are in fetch units (blockSize)");
        w.field("unit", "L1TEX");
        w.close();
    }

    /// memory constL1
    void memoryConstL1() {
        uint64_t c1Size = capBytes(r.constL1, 2048, "constL1");
        uint64_t c1Block = blockBytes(r.constFetch.first, 64, "constL1");
        c15Block = blockBytes(r.constFetch.second, 256, "constL15");
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
    }

    /// memory constL15
    void memoryConstL15() {
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
    }

    /// memory L2
    void memoryL2() {
        l2Block = blockBytes(r.l2Fetch.bytes, 32, "L2");
        l2Size = dev.l2Bytes > 0 ? dev.l2Bytes : capBytes(r.l2, 1ull << 20, "L2");
        w.open("memory L2");
        w.field("id", "6");
        w.field("swmng", "no");
        w.field("rw", "rw");
        w.field("dim", "na");
        w.field("size", sizeText(l2Size),
                fmt::format("[attr] cudaDevAttrL2CacheSize {} B; [sweep] l2_capacity: {}",
                            dev.l2Bytes, r.l2.how));
        w.field(
            "blockSize", sizeText(l2Block),
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
        w.field("serialCondition",
                fmt::format("warp{{ address1 / {0} != address2 / {0} }}", l1Block),
                "requests from L1 are in L1 fetch units");
        w.close();
    }

    /// memory L2persist
    void memoryL2persist() {
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
        w.field("serialCondition",
                fmt::format("warp{{ address1 / {0} != address2 / {0} }}", l1Block));
        w.field("unit", "L2");
        w.close();
    }

    /// memory global
    void memoryGlobal() {
        w.open("memory global");
        w.field("id", "8");
        w.field("swmng", "yes");
        w.field("rw", "rw");
        w.field("dim", "na");
        w.field("size", sizeText(dev.totalGlobalBytes),
                fmt::format("[attr] cudaDeviceProp::totalGlobalMem {} B", dev.totalGlobalBytes));
        w.field("blockSize", sizeText(l2Block),
                "[stride] l2_fetch, as L2: the unit read from DRAM");
        w.field("banks", "na");
        {
            const auto* wide = findLatency(m, "dram_wide");
            const auto* tex = findLatency(m, "tex_dram");
            w.field(
                "latency", latText("global"),
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
                concComment("global") + fmt::format("; read {}, 16-byte loads {}", bwOf("dram_ld"),
                                                    bwOf("dram_ld128")));
        w.field("serialCondition",
                fmt::format("warp{{ address1 / {0} != address2 / {0} }}", l1Block));
        w.close();
    }

    /// memory constant
    void memoryConstant() {
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
        w.field("serialCondition", "warp{ address1 != address2 }",
                "broadcast, else one per address");
        w.close();
    }

    /// The places: each a memory and its levels.
    void places() {
        w.line("place global    { memory = global;    levels = (L1, L2, global);              "
               "path = ldst; }");
        w.line("place readonly  { memory = global;    levels = (L1, L2, global);              "
               "path = ldst;  rw = r; }");
        w.line("place texture   { memory = global;    levels = (texL1, L2, global);           "
               "path = tex;   rw = r; dim = (1, 2); }  # 1-D and 2-D texture objects");
        w.line("place constant  { memory = constant;  levels = (constL1, constL15, L2, constant); "
               "path = const; }");
        w.line(
            fmt::format("place shared    {{ memory = shared;    levels = (shared);                "
                        "      path = ldst;  capacity = {}; capacityScope = block; }}  # "
                        "[attr] opt-in shared memory per block",
                        sizeText(sharedPerBlock)));
        w.line("place l2persist { memory = global;    levels = (L1, L2persist, global);       "
               "path = ldst; }");
        w.line("place registers { memory = registers; levels = (registers);                   "
               "path = ldst;  capacity = 1020 B; capacityScope = thread; }  # [doc] 255 "
               "registers of 4 B");
    }
};

/// The spec's entries in the order written.
constexpr void (SpecWriter::* kSpecEntries[])() = {
    &SpecWriter::header,          &SpecWriter::processor,      &SpecWriter::memoryRegisters,
    &SpecWriter::memoryShared,    &SpecWriter::memoryL1,       &SpecWriter::memoryTexL1,
    &SpecWriter::memoryConstL1,   &SpecWriter::memoryConstL15, &SpecWriter::memoryL2,
    &SpecWriter::memoryL2persist, &SpecWriter::memoryGlobal,   &SpecWriter::memoryConstant,
    &SpecWriter::places,
};

} // namespace

std::string writeSpec(const Measurements& m, ProbeResult& r, const std::vector<double>& clocks,
                      double peakMHz) {
    SpecWriter writer(m, r, clocks, peakMHz);
    for (auto entry : kSpecEntries) {
        (writer.*entry)();
    }
    return writer.w.text();
}

} // namespace memplace::probe

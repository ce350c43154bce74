#include "placer/convert.h"

#include "common/feasibility.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace memplace::placer {

namespace {

std::string bytesText(std::size_t b) {
    char buf[32];
    if (b >= (std::size_t{1} << 30)) {
        std::snprintf(buf, sizeof buf, "%.3gGB", static_cast<double>(b) / (1u << 30));
    } else if (b >= (std::size_t{1} << 20)) {
        std::snprintf(buf, sizeof buf, "%.3gMB", static_cast<double>(b) / (1u << 20));
    } else if (b >= 1024) {
        std::snprintf(buf, sizeof buf, "%.3gKB", static_cast<double>(b) / 1024);
    } else {
        std::snprintf(buf, sizeof buf, "%zuB", b);
    }
    return buf;
}

trace::ArrayMode widen(trace::ArrayMode m, bool reads, bool writes, bool atomics) {
    if (atomics) {
        return trace::ArrayMode::Atomic;
    }
    if (m == trace::ArrayMode::Write && reads) {
        return trace::ArrayMode::ReadWrite;
    }
    if (m == trace::ArrayMode::Read && writes) {
        return trace::ArrayMode::ReadWrite;
    }
    return m;
}

trace::ArrayMode fromMode(Mode m) {
    switch (m) {
    case Mode::Read:
        return trace::ArrayMode::Read;
    case Mode::Write:
        return trace::ArrayMode::Write;
    default:
        return trace::ArrayMode::ReadWrite;
    }
}

} // namespace

namespace {

std::string keyOf(const LaunchInfo& info, bool withGrid) {
    std::string k;
    k.reserve(96 + info.arrays.size() * 24);
    k += info.kernel;
    k += '|';
    auto num = [&](unsigned long long v) {
        char buf[24];
        std::snprintf(buf, sizeof buf, "%llu", v);
        k += buf;
    };
    auto dim = [&](const dim3& d) {
        num(d.x);
        k += 'x';
        num(d.y);
        k += 'x';
        num(d.z);
    };
    if (withGrid) {
        dim(info.grid);
    } else {
        k += '*';
    }
    k += '|';
    dim(info.block);
    k += "|s";
    num(info.sharedBytes);
    k += "|d";
    num(static_cast<unsigned long long>(info.device));
    for (const ArrayInfo& a : info.arrays) {
        k += '|';
        k += a.name;
        k += ':';
        num(a.elemSize);
        k += ':';
        if (a.extentKnown) {
            num(a.extentBytes);
        } else {
            k += '?';
        }
        if (a.dims == 2) {
            k += ":w";
            num(static_cast<unsigned long long>(a.width));
        }
    }
    return k;
}

} // namespace

std::string signatureKey(const LaunchInfo& info) {
    return keyOf(info, true);
}

std::string gridFamilyKey(const LaunchInfo& info) {
    return keyOf(info, false);
}

std::string signatureText(const LaunchInfo& info) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s grid %ux%ux%u block %ux%ux%u", info.kernel.c_str(),
                  info.grid.x, info.grid.y, info.grid.z, info.block.x, info.block.y, info.block.z);
    std::string t = buf;
    if (info.sharedBytes > 0) {
        t += " shared " + bytesText(info.sharedBytes);
    }
    for (const ArrayInfo& a : info.arrays) {
        t += " " + a.name + ":" + (a.extentKnown ? bytesText(a.extentBytes) : std::string("?"));
    }
    return t;
}

Sampling resolveSampling(const Sampling& s, uint32_t residentBlocks) {
    Sampling r = s;
    if (r.blocksPerSm == 0) {
        const uint64_t b =
            uint64_t{std::max<uint32_t>(s.waves, 1)} * std::max<uint32_t>(residentBlocks, 1);
        r.blocksPerSm = static_cast<uint32_t>(std::min<uint64_t>(b, 64));
    }
    return r;
}

std::vector<uint32_t> sampledBlocks(uint64_t blocks, uint32_t gpuSms, const Sampling& s) {
    const uint64_t sms = std::max<uint32_t>(gpuSms, 1);
    const uint64_t tracedSms = std::min<uint64_t>(std::max<uint32_t>(s.sms, 1), sms);
    const uint64_t perSm = std::max<uint32_t>(s.blocksPerSm, 1);
    std::vector<uint32_t> out;
    // Every block when the sample would be as large as the grid: tracing all is whole SMs too.
    if (blocks <= tracedSms * perSm) {
        return out;
    }
    for (uint64_t k = 0; k < perSm; ++k) {
        for (uint64_t sm = 0; sm < tracedSms; ++sm) {
            const uint64_t b = sm + k * sms;
            if (b < blocks) {
                out.push_back(static_cast<uint32_t>(b));
            }
        }
    }
    std::sort(out.begin(), out.end());
    if (out.size() >= blocks) {
        out.clear();
    }
    return out;
}

TraceOptions traceOptions(const LaunchInfo& info, uint32_t gpuSms, const Sampling& s) {
    TraceOptions o;
    o.maxRecords = std::max<std::size_t>(s.maxRecords, 1);
    const uint64_t blocks = static_cast<uint64_t>(info.grid.x) * info.grid.y * info.grid.z;
    o.blocks = sampledBlocks(blocks, gpuSms, s);
    o.sampleEvery = 1;
    return o;
}

Sampling shrink(const Sampling& s, uint64_t produced, uint64_t capacity) {
    Sampling n = s;
    if (produced <= capacity || produced == 0) {
        return n;
    }
    // Records scale with the traced blocks: aim at 80% of the capacity.
    const double ratio = 0.8 * static_cast<double>(capacity) / static_cast<double>(produced);
    const double blocks = static_cast<double>(std::max<uint32_t>(s.sms, 1)) *
                          static_cast<double>(std::max<uint32_t>(s.blocksPerSm, 1)) * ratio;
    if (blocks >= 2.0 && s.sms > 1) {
        // Keep two SMs as long as each keeps at least one block.
        n.sms = 2;
        n.blocksPerSm = static_cast<uint32_t>(std::max(1.0, blocks / 2.0));
    } else {
        n.sms = 1;
        n.blocksPerSm = static_cast<uint32_t>(std::max(1.0, blocks));
    }
    if (n.sms == s.sms && n.blocksPerSm >= s.blocksPerSm) {
        n.blocksPerSm = std::max<uint32_t>(1, s.blocksPerSm / 2);
    }
    return n;
}

std::string traceName(const std::string& name) {
    if (name.empty()) {
        return "_";
    }
    std::string out;
    out.reserve(name.size() + 1);
    auto ok = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
               (c >= '0' && c <= '9') || c == '.' || c == ':' || c == '<' || c == '>' || c == ',';
    };
    const char c0 = name[0];
    if (!((c0 >= 'a' && c0 <= 'z') || (c0 >= 'A' && c0 <= 'Z') || c0 == '_')) {
        out += '_';
    }
    for (char c : name) {
        out += ok(c) ? c : '_';
    }
    if (out.size() > 256) {
        out.resize(256);
    }
    return out;
}

namespace {

/// The places the engine may choose for array `j` of the launch: what the runtime can
/// materialise for it (Global always added by the caller).
PlaceSet traceFeasible(const LaunchInfo& info, std::size_t j, uint64_t length) {
    const ArrayInfo& a = info.arrays[j];
    PlaceSet f;
    const bool aliased = !info.aliasHazard(j).empty();
    for (Place p : kAllPlaces) {
        if (!a.feasible.contains(p) || p == Place::Registers) {
            continue;
        }
        if (aliased && p != Place::Global && p != Place::L2Persist && p != a.original) {
            continue; // the runtime would fall back: see LaunchInfo::aliasHazard
        }
        if (!a.extentKnown && p != Place::Global && p != Place::ReadOnly) {
            continue;
        }
        if (p == Place::Texture && (!a.textureFeasible || (a.dims == 2 && a.width <= 0))) {
            continue;
        }
        if (p == Place::Constant && info.constantPoolBytes > 0 &&
            length * a.elemSize > info.constantPoolBytes) {
            continue;
        }
        if (a.mode != Mode::Read && !placeTakesWrites(p)) {
            continue;
        }
        f.insert(p);
    }
    return f;
}

/// The records, each access kind of a record as its own access, into the trace.
void addRecords(trace::TraceBuilder& b, const TraceResult& result, ConvertInfo& ci) {
    for (const TraceRecord& r : result.records) {
        if (r.activeMask == 0) {
            continue;
        }
        const auto arr = static_cast<uint16_t>(r.array);
        if ((r.flags & kTraceAtomic) != 0) {
            b.addLanes(r.block, r.warp, r.site, arr, trace::AccessKind::Atomic, r.activeMask,
                       r.offset);
        } else {
            if ((r.flags & kTraceRead) != 0) {
                b.addLanes(r.block, r.warp, r.site, arr, trace::AccessKind::Read, r.activeMask,
                           r.offset);
            }
            if ((r.flags & kTraceWrite) != 0) {
                b.addLanes(r.block, r.warp, r.site, arr, trace::AccessKind::Write, r.activeMask,
                           r.offset);
            }
        }
        ++ci.records;
        ci.lanes += static_cast<uint64_t>(__builtin_popcount(r.activeMask));
    }
}

} // namespace

Expected<trace::Trace> toTrace(const LaunchInfo& info, const TraceResult& result,
                               ConvertInfo* convertInfo) {
    ConvertInfo ci;
    const std::size_t n = info.arrays.size();
    if (result.arrays.size() != n) {
        return fail("trace of " + info.kernel + ": " + std::to_string(result.arrays.size()) +
                    " arrays in the trace, " + std::to_string(n) + " in the launch");
    }
    // What the records say about each array: kinds of access, the largest offset.
    std::vector<bool> reads(n, false);
    std::vector<bool> writes(n, false);
    std::vector<bool> atomics(n, false);
    std::vector<int64_t> maxOffset(n, -1);
    for (const TraceRecord& r : result.records) {
        if (r.array >= n) {
            return fail("trace of " + info.kernel + ": a record names array " +
                        std::to_string(r.array) + " of " + std::to_string(n));
        }
        if ((r.flags & kTraceAtomic) != 0) {
            atomics[r.array] = true;
        } else {
            if ((r.flags & kTraceRead) != 0) {
                reads[r.array] = true;
            }
            if ((r.flags & kTraceWrite) != 0) {
                writes[r.array] = true;
            }
        }
        for (unsigned l = 0; l < 32; ++l) {
            if (((r.activeMask >> l) & 1u) != 0) {
                maxOffset[r.array] = std::max<int64_t>(maxOffset[r.array], r.offset[l]);
            }
        }
    }

    trace::TraceHeader h;
    h.kernel = traceName(info.kernel);
    h.grid = {info.grid.x, info.grid.y, info.grid.z};
    h.block = {info.block.x, info.block.y, info.block.z};
    if (info.registers > 0) {
        h.registersPerThread = static_cast<uint32_t>(info.registers);
    }
    h.sharedPerBlock = static_cast<uint64_t>(info.staticSharedBytes + info.sharedBytes);
    std::set<std::string> names;
    for (std::size_t j = 0; j < n; ++j) {
        const ArrayInfo& a = info.arrays[j];
        trace::ArrayInfo t;
        t.name = traceName(a.name);
        while (!names.insert(t.name).second) {
            t.name += "_";
        }
        if (a.elemSize == 0 || a.elemSize > 4096) {
            return fail("trace of " + info.kernel + ": array " + a.name + " has element size " +
                        std::to_string(a.elemSize));
        }
        t.elementSize = static_cast<uint32_t>(a.elemSize);
        uint64_t length = a.extentKnown ? a.extentBytes / a.elemSize : 0;
        if (!a.extentKnown || length == 0) {
            length = static_cast<uint64_t>(std::max<int64_t>(maxOffset[j] + 1, 1));
            ci.notes.push_back("array " + a.name + ": extent unknown, length taken from the " +
                               "largest offset traced (" + std::to_string(length) + ")");
        }
        t.length = length;
        t.mode = widen(fromMode(a.mode), reads[j], writes[j], atomics[j]);
        PlaceSet f = traceFeasible(info, j, length);
        f.insert(Place::Global);
        t.feasible = f;
        t.original = f.contains(a.original) ? a.original : Place::Global;
        t.dims = a.dims == 2 && a.width > 0 ? 2 : 1;
        t.rowLength = t.dims == 2 ? static_cast<uint64_t>(a.width) : 0;
        h.arrays.push_back(std::move(t));
    }
    std::vector<uint32_t> traced = result.sampledBlocks;
    std::sort(traced.begin(), traced.end());
    traced.erase(std::unique(traced.begin(), traced.end()), traced.end());
    h.tracedBlocks = traced;

    trace::TraceBuilder b(std::move(h));
    addRecords(b, result, ci);
    ci.truncated = result.overflow;
    if (result.overflow) {
        ci.notes.push_back("the trace buffer overflowed: " + std::to_string(result.dropped) +
                           " of " + std::to_string(result.produced) +
                           " records dropped; the trace is the first part of the sampled blocks");
    }
    auto t = std::move(b).finish("trace of " + info.kernel);
    if (convertInfo != nullptr) {
        *convertInfo = std::move(ci);
    }
    return t;
}

} // namespace memplace::placer

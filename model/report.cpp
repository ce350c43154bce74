#include "model/report.h"

#include <algorithm>
#include <cmath>

namespace memplace::model {

using nlohmann::json;

namespace {
json number(double v) {
    if (std::isinf(v) || std::isnan(v)) {
        return nullptr;
    }
    return v;
}
std::string scopeName(spec::ShareScope s) {
    return std::string(spec::shareScopeName(s));
}
} // namespace

std::vector<MemoryCounters> memoryCounters(const Prediction& p) {
    std::vector<MemoryCounters> out;
    for (const auto& a : p.arrays) {
        for (const auto& l : a.levels) {
            auto it = std::find_if(out.begin(), out.end(),
                                   [&](const MemoryCounters& c) { return c.memory == l.memory; });
            if (it == out.end()) {
                out.push_back({l.memory, l.cache});
                it = out.end() - 1;
            }
            it->readRequests += l.readRequests;
            it->readHits += l.readHits;
            it->writeRequests += l.writeRequests;
            it->writeHits += l.writeHits;
        }
    }
    return out;
}

json placementJson(const Model& m, const Placement& p) {
    json out = json::object();
    for (size_t i = 0; i < p.size() && i < m.arrayCount(); ++i) {
        out[m.arrayName(i)] = std::string(placeName(p[i]));
    }
    return out;
}

json predictionJson(const Prediction& p) {
    json out;
    out["feasible"] = p.feasible;
    if (!p.feasible) {
        out["reason"] = p.reason;
        return out;
    }
    out["cycles"] = number(p.cycles);
    out["seconds"] = number(p.seconds);
    out["critical_path"] = p.criticalPath;
    out["launch_cycles"] = number(p.launchCycles);
    out["memory_bound"] = p.memoryBound;
    out["resident_blocks"] = p.residentBlocks;
    out["original_resident_blocks"] = p.originalResidentBlocks;
    out["shared_per_block"] = p.sharedPerBlock;
    json paths = json::array();
    for (const auto& t : p.paths) {
        paths.push_back({{"path", t.path}, {"cycles", number(t.cycles)}, {"units", t.units}});
    }
    out["paths"] = std::move(paths);
    json units = json::array();
    for (const auto& u : p.units) {
        units.push_back({{"unit", u.unit}, {"cycles", number(u.cycles)}});
    }
    out["units"] = std::move(units);
    json arrays = json::array();
    for (const auto& a : p.arrays) {
        json levels = json::array();
        for (const auto& l : a.levels) {
            json lj = {{"memory", l.memory},
                       {"cache", l.cache},
                       {"read_requests", number(l.readRequests)},
                       {"read_hits", number(l.readHits)},
                       {"write_requests", number(l.writeRequests)},
                       {"write_hits", number(l.writeHits)},
                       {"cycles", number(l.cycles)}};
            if (l.cache) {
                lj["capacity_bytes"] = number(l.capacityBytes);
            }
            levels.push_back(std::move(lj));
        }
        arrays.push_back({{"name", a.name},
                          {"place", std::string(placeName(a.place))},
                          {"path", a.path},
                          {"cycles", number(a.cycles)},
                          {"staging_cycles", number(a.stagingCycles)},
                          {"levels", std::move(levels)}});
    }
    out["arrays"] = std::move(arrays);
    json counters = json::array();
    for (const auto& m : memoryCounters(p)) {
        counters.push_back({{"memory", m.memory},
                            {"cache", m.cache},
                            {"read_requests", number(m.readRequests)},
                            {"read_hits", number(m.readHits)},
                            {"write_requests", number(m.writeRequests)},
                            {"write_hits", number(m.writeHits)},
                            {"read_hit_rate", number(m.readHitRate())}});
    }
    out["counters"] = std::move(counters);
    return out;
}

json statsJson(const TraceStats& st, bool histograms) {
    json out;
    out["kernel"] = st.kernel;
    out["grid"] = {st.grid.x, st.grid.y, st.grid.z};
    out["block"] = {st.block.x, st.block.y, st.block.z};
    out["blocks"] = st.blocks;
    out["traced_blocks"] = st.tracedBlocks;
    out["scale"] = st.scale;
    out["resident_blocks"] = st.residentBlocks;
    out["records"] = st.records;
    out["lanes"] = st.lanes;
    out["line_sample_rate"] = st.lineSampleRate;
    out["seconds"] = st.seconds;
    out["notes"] = st.notes;
    json kinds = json::array();
    for (const auto& k : st.kinds) {
        kinds.push_back({{"line_bytes", k.lineBytes}, {"scope", scopeName(k.scope)}});
    }
    out["stream_kinds"] = kinds;
    json arrays = json::array();
    for (const auto& a : st.arrays) {
        json cands = json::array();
        for (Place p : kAllPlaces) {
            if (a.candidates.contains(p)) {
                cands.push_back(std::string(placeName(p)));
            }
        }
        json excl = json::array();
        for (const auto& e : a.exclusions) {
            excl.push_back({{"place", std::string(placeName(e.place))}, {"reason", e.reason}});
        }
        json aj = {{"name", a.info.name},
                   {"element_size", a.info.elementSize},
                   {"length", a.info.length},
                   {"mode", std::string(trace::arrayModeName(a.info.mode))},
                   {"candidates", cands},
                   {"excluded", excl},
                   {"read_requests", a.readRequests},
                   {"write_requests", a.writeRequests},
                   {"read_lanes", a.readLanes},
                   {"write_lanes", a.writeLanes},
                   {"uniform_fraction", a.uniformFraction},
                   {"sectors_per_request", a.sectorsPerRequest},
                   {"ideal_sectors_per_request", a.idealSectorsPerRequest},
                   {"block_reuse", a.blockReuse},
                   {"single_writer_blocks", a.singleWriterBlocks}};
        if (histograms) {
            json streams = json::array();
            for (size_t k = 0; k < a.streams.size(); ++k) {
                const auto& s = a.streams[k];
                if (!s.analysed) {
                    continue;
                }
                streams.push_back({{"line_bytes", st.kinds[k].lineBytes},
                                   {"scope", scopeName(st.kinds[k].scope)},
                                   {"read_refs", s.reads.total()},
                                   {"read_cold", s.reads.cold()},
                                   {"read_log2_buckets", s.reads.log2Buckets()},
                                   {"write_refs", s.writes.total()},
                                   {"write_cold", s.writes.cold()},
                                   {"write_log2_buckets", s.writes.log2Buckets()},
                                   {"footprint_lines", s.footprintLines},
                                   {"instances", s.instances},
                                   {"extrapolation", s.extrapolation}});
            }
            aj["streams"] = std::move(streams);
        }
        arrays.push_back(std::move(aj));
    }
    out["arrays"] = std::move(arrays);
    return out;
}

} // namespace memplace::model

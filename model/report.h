// JSON forms of the model's results, shared by the CLI and the Placer's reports.
#pragma once

#include "model/analysis.h"
#include "model/model.h"

#include <nlohmann/json.hpp>

namespace memplace::model {

/// What a placement makes each memory do, summed over the arrays (the counters a profiler
/// reports): the transactions (sectors for 32-byte memories) that reach the memory and those it
/// serves, reads and writes apart. Memories in the order they first appear in the breakdown.
struct MemoryCounters {
    std::string memory;
    bool cache = false;
    double readRequests = 0;
    double readHits = 0;
    double writeRequests = 0;
    double writeHits = 0;
    /// readHits / readRequests; 0 when nothing was read here.
    double readHitRate() const { return readRequests > 0 ? readHits / readRequests : 0.0; }
};
std::vector<MemoryCounters> memoryCounters(const Prediction& p);

/// {"array": "place", ...} in trace order.
nlohmann::json placementJson(const Model& m, const Placement& p);
/// The breakdown: paths, units, arrays with their levels, occupancy, and the per-memory totals
/// of memoryCounters() as "counters".
nlohmann::json predictionJson(const Prediction& p);
/// Per array: candidates, exclusions with reasons, counts and pattern statistics, and, when
/// `histograms`, the log2 reuse-distance buckets of every analysed stream.
nlohmann::json statsJson(const TraceStats& st, bool histograms);

} // namespace memplace::model

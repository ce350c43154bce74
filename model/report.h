// JSON forms of the model's results, shared by the CLI and the Placer's reports.
#pragma once

#include "model/analysis.h"
#include "model/model.h"

#include <nlohmann/json.hpp>

namespace memplace::model {

/// {"array": "place", ...} in trace order.
nlohmann::json placementJson(const Model& m, const Placement& p);
/// The breakdown: paths, units, arrays with their levels, occupancy.
nlohmann::json predictionJson(const Prediction& p);
/// Per array: candidates, exclusions with reasons, counts and pattern statistics, and, when
/// `histograms`, the log2 reuse-distance buckets of every analysed stream.
nlohmann::json statsJson(const TraceStats& st, bool histograms);

} // namespace memplace::model

// `memplace probe`: from the GPU program's measurements to a complete MSL spec.
//
//   auto m = parseMeasurements(json, "run");      // or runProbeProgram(...)
//   auto r = analyze(*m);                          // fits, the MSL text, a summary
//   spec::parseSpec(r->msl, "probed.msl");         // always parses (analyze checks it)
//
// The spec has the memories and places of the built-in h100.msl (same names, ids, levels and
// paths), so that the model can use either; every number in it carries a comment with the
// measured value and the method.
#pragma once

#include "common/expected.h"
#include "probe/fit.h"
#include "probe/measurements.h"
#include "spec/spec.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace memplace::probe {

/// Achievable bandwidth of one path, from a timed kernel.
struct Bandwidth {
    std::string kernel;
    std::string path;
    double gbPerS = 0;          ///< 1e9 bytes per second
    double bytesPerCycleSm = 0; ///< per SM per SM-clock cycle
};

struct ProbeResult {
    Measurements measurements;
    double clockMHz = 0; ///< the SM clock the spec uses (measured median, else the peak)
    std::map<std::string, double> latency; ///< memory -> read latency in the spec, cycles
    CapacityEstimate l1, texL1, constL1, constL15, l2;
    GranularityEstimate l1Fetch, texFetch, l2Fetch;
    TwoLevelGranularity constFetch;
    BankEstimate banks;
    LineFit constLanes;        ///< cycles per constant load against distinct addresses (spacing 4)
    double constBroadcast = 0; ///< cycles of a warp load with one address
    double constSerial = 0;    ///< cycles of a warp load with 32 addresses
    ConcurrencyFit memoryBoundFit, computeBoundFit;
    std::map<std::string, std::pair<double, double>> concurrency; ///< memory -> (memory, compute)
    std::vector<Bandwidth> bandwidth;
    std::vector<std::string> warnings;
    std::string msl; ///< the spec, checked to parse
};

/// Fits the measurements and writes the spec. Fails when a latency the spec needs is missing or
/// the written spec does not pass the MSL checker (a bug, reported with its diagnostics).
Expected<ProbeResult> analyze(const Measurements& m);

/// Every fitted number, the bandwidths, the calibration residuals and the warnings.
nlohmann::json toJson(const ProbeResult& r);

/// A few human lines: device, clock, latencies, capacities, bandwidth.
std::string summaryText(const ProbeResult& r);

/// One field that differs between two specs.
struct SpecDifference {
    std::string entry; ///< "processor", a memory name, or "place NAME"
    std::string field;
    std::string probed;
    std::string reference;
    double ratio = 0; ///< probed / reference for numbers, 0 otherwise
};

/// Fields that differ (numbers by more than 0.5%), and memories or places one spec lacks.
std::vector<SpecDifference> compareSpecs(const spec::Spec& probed, const spec::Spec& reference);

} // namespace memplace::probe

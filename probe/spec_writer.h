// The probe's spec writer, shared by probe.cpp (internal to the probe library): the probed
// spec's MSL text from the fitted result, and the helpers the fits and the summary share.
#pragma once

#include "probe/probe.h"

#include <string>
#include <vector>

namespace memplace::probe {

/// A latency the analysis checked is there (Measurements::cycles), in cycles.
double measuredCycles(const Measurements& m, const char* name);

/// A size for a comment: exact units when they divide, else KB/MB with one decimal.
std::string approxSize(double b);

/// The spec's MSL text. Capacities and fetch units that were not estimated fall back to
/// documented values, each with a warning added to `r.warnings`.
std::string writeSpec(const Measurements& m, ProbeResult& r, const std::vector<double>& clocks,
                      double peakMHz);

} // namespace memplace::probe

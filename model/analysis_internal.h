// What the phases of analyze() share: the inputs, the TraceStats being filled, and the tables one
// phase builds for the next. Internal to the model's analysis: analysis.cpp runs the phases in
// order (setup and candidates there, the record pass in analysis_pass.cpp, reuse distances in
// analysis_reuse.cpp).
#pragma once

#include "model/analysis.h"
#include "model/lines_internal.h"
#include "model/reuse.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace memplace::model::detail {

/// The record pass's running counts for one array.
struct PerArray {
    std::unique_ptr<KeyTable> elements;                 // element -> last block + 1
    std::unique_ptr<KeyTable> writers;                  // element -> writing block + 1
    std::unique_ptr<KeyTable> writtenSectors;           // sector -> last block + 1
    std::vector<std::unique_ptr<KeyTable>> deviceLines; // per device kind
    double blockLanes = 0, blockDistinct = 0;
    uint32_t block = UINT32_MAX;
    double uniformReads = 0, sectors = 0, ideal = 0, multiRow = 0, reuseSum = 0, reuseBlocks = 0;
    double blocksTouched = 0; ///< traced blocks that access the array
    std::vector<double> perBlockLines;
    std::vector<double> rtx, wtx;
};

/// The 32-byte lines of every record, kept by the record pass for the 32-byte caches' streams
/// when they fit a budget (as 32-bit line numbers).
struct LineCache {
    static constexpr size_t kBudget = size_t{1} << 26;
    bool enabled = true;
    std::vector<uint32_t> lines;
    std::vector<uint64_t> start; ///< per record, where its lines begin in `lines` (+ the end)
};

struct Analysis {
    Analysis(const trace::Trace& trace, const spec::Spec& spec, const AnalysisOptions& opts)
        : t(trace), s(spec), options(opts), h(trace.header()), records(trace.records()),
          narrays(trace.header().arrays.size()), nmem(spec.memories.size()),
          sms(std::max<uint32_t>(1, spec.processor.sms)) {}

    const trace::Trace& t;
    const spec::Spec& s;
    const AnalysisOptions& options;
    const trace::TraceHeader& h;
    const std::vector<trace::Record>& records;
    const size_t narrays;
    const size_t nmem;
    const uint32_t sms; ///< at least 1

    TraceStats st;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point phaseStart = started;
    /// Records the seconds since the previous phase ended under `name` (TraceStats::phases).
    void phase(std::string name) {
        auto now = std::chrono::steady_clock::now();
        st.phases.emplace_back(std::move(name),
                               std::chrono::duration<double>(now - phaseStart).count());
        phaseStart = now;
    }

    std::vector<bool> used; ///< per spec memory: some place reaches it
    /// Serialization conditions, grouped by what they count; each used memory's group.
    std::vector<ConditionGroup> groups;
    std::vector<int> memoryGroup;
    uint64_t originalStaged = 0;     ///< bytes per block the original placement stages
    std::vector<size_t> deviceKinds; ///< stream kinds of device scope
    bool sampledBlocks = false;      ///< the trace covers some of the blocks only
    /// Per array: the condition groups (stream kinds) some candidate place of it uses.
    std::vector<std::vector<bool>> needGroup;
    std::vector<std::vector<bool>> needKind;

    std::vector<double> arrayLanes; ///< per array, traced lane accesses
    std::vector<PerArray> pa;
    LineCache lineCache;

    // Scratch for the passes.
    std::vector<uint64_t> lines;
    std::vector<uint64_t> keys;
    SmallSet set;
};

// Phases of analyze(), in the order it runs them.

/// analysis.cpp: the kernel's shape, the caches' stream kinds, the condition groups, the
/// original placement's occupancy and the per-array tables.
void describeTrace(Analysis& A);
void findStreamKinds(Analysis& A);
void groupConditions(Analysis& A);
void originalOccupancy(Analysis& A);
void initArrays(Analysis& A);
/// Array a's candidate places, each place on its own. Run before the record pass with every
/// written array assumed single-writer (a superset), and after it with the pass's answer
/// (`finalRun`: notes an array left without a place).
void computeCandidates(Analysis& A, size_t a, bool finalRun);
/// Which condition groups and stream kinds array a's candidates need.
void computeNeeds(Analysis& A, size_t a);

/// analysis_pass.cpp: one pass over the records: transactions and pattern statistics.
void countRecords(Analysis& A);

/// analysis_reuse.cpp: reuse distances per sharing scope, then (sampled blocks) their stretch.
void reuseDistances(Analysis& A);
void stretchSampledBlocks(Analysis& A);

/// analysis.cpp: per-request and per-block pattern statistics, scaled to the grid.
void patternStatistics(Analysis& A);

} // namespace memplace::model::detail

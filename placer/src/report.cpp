// The Placer's report: each signature's record finalised (overheads, medians) and the JSON
// report (docs/placer.md, "The report").

#include "common/file_io.h"
#include "common/json.h"
#include "placer_internal.h"
#include "runtime/src/process_times.h"

namespace memplace::placer {

void Placer::Impl::finalise(KernelRecord& r, const Entry& e) const {
    if (waitingForTrace(e)) {
        r.status = RecordStatus::Untraced;
        r.why = untracedWhy(r.launches);
    }
    r.originalKernelMs = median(e.originalMs);
    r.placedKernelMs = median(e.placedMs);
    r.originalSamples = static_cast<int>(e.originalMs.size());
    r.placedSamples = static_cast<int>(e.placedMs.size());
    Overheads& o = r.overheads;
    if (!e.tracedMs.empty()) {
        double sum = 0;
        for (double x : e.tracedMs) {
            sum += x;
        }
        o.tracedKernelMs = sum;
        if (r.originalKernelMs >= 0) {
            o.tracedKernelExtraMs =
                std::max(0.0, sum - r.originalKernelMs * static_cast<double>(e.tracedMs.size()));
        }
    }
    o.profilingMs = std::max(0.0, o.tracedKernelExtraMs) + o.collectMs + o.convertMs;
    o.engineMs = o.analysisMs + o.modelMs + o.searchMs;
    double host = 0;
    for (double x : e.placedHostUs) {
        host += x / 1000.0;
    }
    o.transformHostMs = host;
    double stream = 0;
    for (double x : e.placedStreamMs) {
        stream += x;
    }
    o.transformStreamMs = stream;
    o.transformJitMs = r.jitCompileMs + r.jitLoadMs;
    o.transformMs = host + stream + o.transformJitMs;
    const double orig = median(e.originalMs);
    double extra = 0;
    for (const Candidate& c : e.candidates) {
        for (double x : c.ms) {
            extra += orig > 0 ? x - orig : 0;
        }
    }
    o.tuningMs = std::max(0.0, extra) + e.spinMs;
}

namespace {

using nlohmann::json;

json orNull(double v) {
    return v < 0 ? json(nullptr) : json(v);
}

/// A state's name; null for None (no JIT asked for, no tuning, no placed launch).
template <class State>
json stateOrNull(State s) {
    return s == State::None ? json(nullptr) : json(std::string(stateName(s)));
}

/// The record's launch signature: its kernel's grid family and arrays.
json signatureJson(const KernelRecord& r) {
    json arrays = json::array();
    for (std::size_t i = 0; i < r.arrays.size(); ++i) {
        arrays.push_back({{"name", r.arrays[i]},
                          {"extent_bytes", r.extents[i]},
                          {"element_size", r.elemSizes[i]}});
    }
    return {{"text", r.signature},
            {"key", r.key},
            {"grid", {r.grid.x, r.grid.y, r.grid.z}},
            {"block", {r.block.x, r.block.y, r.block.z}},
            {"shared_bytes", r.sharedBytes},
            {"grids", r.grids},
            {"device", r.device},
            {"arrays", arrays}};
}

/// The just-in-time instantiation and the on-line tuning of a record.
void addJitAndTuning(json& j, const KernelRecord& r) {
    j["jit"] = {{"placement",
                 r.jitPlacement.empty() ? json(nullptr) : placementJson(r.arrays, r.jitPlacement)},
                {"predicted_us",
                 r.jitPlacement.empty() ? json(nullptr) : json(r.jitPredictedSeconds * 1e6)},
                {"why", r.jitWhy},
                {"state", stateOrNull(r.jitState)},
                {"detail", r.jitDetail},
                {"origin", stateOrNull(r.jitOrigin)},
                {"compile_ms", r.jitCompileMs},
                {"load_ms", r.jitLoadMs},
                {"background", r.jitBackground}};
    json cands = json::array();
    for (std::size_t i = 0; i < r.candidates.size(); ++i) {
        cands.push_back(
            {{"placement", placementJson(r.arrays, r.candidates[i])},
             {"median_ms", i < r.candidateMs.size() ? orNull(r.candidateMs[i]) : json(nullptr)},
             {"dispatch", i < r.candidateDispatch.size() ? stateOrNull(r.candidateDispatch[i])
                                                         : json(nullptr)}});
    }
    j["tuning"] = {{"state", stateOrNull(r.tuneState)},
                   {"why", r.tuneWhy},
                   {"candidates", cands},
                   {"launches", r.tuningLaunches}};
}

json overheadJson(const KernelRecord& r, const Entry& e) {
    const Overheads& o = r.overheads;
    return {{"profiling", o.profilingMs},
            {"engine", o.engineMs},
            {"transform", o.transformMs},
            {"tuning", o.tuningMs},
            {"total", o.totalMs()},
            {"detail",
             {{"traced_kernel", orNull(o.tracedKernelMs)},
              {"traced_kernel_extra", orNull(o.tracedKernelExtraMs)},
              {"collect", o.collectMs},
              {"convert", o.convertMs},
              {"analysis", o.analysisMs},
              {"model", o.modelMs},
              {"search", o.searchMs},
              {"transform_host", o.transformHostMs},
              {"transform_stream", o.transformStreamMs},
              {"transform_jit", o.transformJitMs},
              {"host_us_median_original", orNull(median(e.originalHostUs))},
              {"host_us_median_placed", orNull(median(e.placedHostUs))}}}};
}

} // namespace

nlohmann::json Placer::Impl::recordJson(const KernelRecord& r, const Entry& e) const {
    json j;
    j["kernel"] = r.kernel;
    j["signature"] = signatureJson(r);
    j["status"] = std::string(stateName(r.status));
    j["source"] = std::string(stateName(r.source));
    if (!r.failure.empty()) {
        j["failure"] = r.failure;
    }
    j["spec"] = r.specName;
    j["decision"] = r.decision.empty() ? json(nullptr) : placementJson(r.arrays, r.decision);
    const Placement& applied = e.jitRunning ? e.jit : e.applied;
    j["applied"] = applied.empty() ? json(nullptr) : placementJson(r.arrays, applied);
    j["engine_best"] = r.engineBest.empty() ? json(nullptr) : placementJson(r.arrays, r.engineBest);
    j["why"] = r.why;
    j["compiled"] = r.compiled;
    j["dispatch"] = stateOrNull(r.dispatch);
    json pred = json::object();
    if (!r.decision.empty()) {
        pred["decision_us"] = r.predictedSeconds * 1e6;
        pred["original_us"] = r.originalSeconds * 1e6;
        pred["engine_best_us"] = r.engineBestSeconds * 1e6;
        pred["speedup"] = r.predictedSeconds > 0 ? r.originalSeconds / r.predictedSeconds : 1.0;
    }
    j["predicted"] = pred;
    addJitAndTuning(j, r);
    j["tuning"]["jit_waits"] = e.tuneJitWaits;
    j["fallbacks"] = r.fallbacks;
    j["launches"] = {{"total", r.launches},
                     {"traced", r.tracedLaunches},
                     {"original", r.originalLaunches},
                     {"placed", r.placedLaunches}};
    j["trace"] = {{"blocks", r.blocks},          {"sampled_blocks", r.sampledBlocks},
                  {"records", r.records},        {"lanes", r.lanes},
                  {"attempts", r.traceAttempts}, {"truncated", r.truncated}};
    const Overheads& o = r.overheads;
    j["overhead_ms"] = overheadJson(r, e);
    json measured = json::object();
    if (options.timeKernels) {
        measured["original_ms"] = orNull(r.originalKernelMs);
        measured["placed_ms"] = orNull(r.placedKernelMs);
        measured["traced_ms"] = orNull(median(e.tracedMs));
        measured["original_samples"] = r.originalSamples;
        measured["placed_samples"] = r.placedSamples;
        measured["speedup"] = r.originalKernelMs > 0 && r.placedKernelMs > 0
                                  ? json(r.originalKernelMs / r.placedKernelMs)
                                  : json(nullptr);
        // The launches it takes for what the decision saves to pay for the overhead.
        const double saved = r.originalKernelMs - r.placedKernelMs;
        measured["break_even_launches"] =
            r.originalKernelMs > 0 && r.placedKernelMs > 0 && saved > 0
                ? json((o.profilingMs + o.engineMs) / saved)
                : json(nullptr);
    }
    j["measured"] = measured;
    j["notes"] = r.notes;
    return j;
}

nlohmann::json Placer::Impl::processJson() const {
    const ::memplace::detail::ProcessTimes rt = ::memplace::detail::processTimes();
    const PlacerProcessTimes pl = placerProcessTimes();
    return {{"placer_install", pl.installMs},       {"device_setup", deviceSetupMs},
            {"traced_launches", rt.tracedLaunchMs}, {"trace_setup", rt.traceSetupMs},
            {"trace_wait", rt.traceWaitMs},         {"shadow_compare", rt.shadowCompareMs},
            {"jit_warm_up", rt.jitWarmUpMs},        {"jit_sync", rt.jitSyncMs},
            {"jit_background", rt.jitBackgroundMs}, {"jit_exit_wait", rt.jitExitWaitMs},
            {"exit_store", pl.exitStoreMs}};
}

std::vector<KernelRecord> Placer::kernels() const {
    Impl& m = *impl_;
    std::lock_guard<std::mutex> g(m.mu);
    m.collectTimings(true);
    std::vector<KernelRecord> out;
    out.reserve(m.entries.size());
    for (const Entry& e : m.entries) {
        KernelRecord r = e.rec;
        m.finalise(r, e);
        out.push_back(std::move(r));
    }
    return out;
}

std::string Placer::reportJson() const {
    Impl& m = *impl_;
    std::lock_guard<std::mutex> g(m.mu);
    m.collectTimings(true);
    using nlohmann::json;
    json j;
    j["format"] = "memplace-placer-report";
    j["version"] = 1;
    j["mode"] = std::string(modeName(m.options.mode));
    json devs = json::array();
    for (const auto& [index, d] : m.devices) {
        json dj = {{"index", index}, {"name", d.name}};
        if (!d.failed) {
            dj["compute_capability"] = std::to_string(d.major) + "." + std::to_string(d.minor);
            dj["spec"] = {{"name", d.spec.spec.name},
                          {"source", d.spec.source},
                          {"from", d.spec.from},
                          {"sms", d.sms}};
            if (d.cache) {
                dj["cache_file"] = d.cache->file().string();
            }
        } else {
            dj["failed"] = true;
        }
        devs.push_back(dj);
    }
    j["devices"] = devs;
    j["time_kernels"] = m.options.timeKernels;
    j["sampling"] = {{"sms", m.options.sampling.sms},
                     {"blocks_per_sm", m.options.sampling.blocksPerSm},
                     {"waves", m.options.sampling.waves},
                     {"max_records", m.options.sampling.maxRecords}};
    j["first_run"] = {{"trace_after", m.options.traceAfter},
                      {"traces_per_kernel", m.options.tracesPerKernel},
                      {"tune_min_us", m.options.tuneMinUs},
                      {"timing_spin_us", m.options.timingSpinUs}};
#if defined(MEMPLACE_EMU)
    j["emulated"] = true;
#else
    j["emulated"] = false;
#endif
    json ks = json::array();
    Overheads total;
    for (const Entry& e : m.entries) {
        KernelRecord r = e.rec;
        m.finalise(r, e);
        total.profilingMs += r.overheads.profilingMs;
        total.engineMs += r.overheads.engineMs;
        total.transformMs += r.overheads.transformMs;
        ks.push_back(m.recordJson(r, e));
    }
    j["kernels"] = ks;
    j["totals"] = {{"signatures", m.entries.size()},
                   {"overhead_ms",
                    {{"profiling", total.profilingMs},
                     {"engine", total.engineMs},
                     {"transform", total.transformMs},
                     {"total", total.totalMs()}}}};
    j["process_ms"] = m.processJson();
    j["jit_background_compiles"] = ::memplace::detail::processTimes().jitBackgroundCompiles;
    j["warnings"] = m.warnings;
    return dumpJson(j, 2) + "\n";
}

bool Placer::writeReport(const std::string& path, std::string* error) const {
    const std::string text = reportJson();
    auto w = writeFileAtomic(path, text, Overwrite::Yes);
    if (!w) {
        if (error != nullptr) {
            *error = w.message();
        }
        return false;
    }
    return true;
}

std::vector<std::string> Placer::warnings() const {
    std::lock_guard<std::mutex> g(impl_->mu);
    return impl_->warnings;
}

} // namespace memplace::placer

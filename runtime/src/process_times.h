// Process-wide host times of the runtime's work that no launch report times: the first run's
// tracing, shadow and just-in-time costs, and the exit's wait (docs/placer.md, "What the first
// run costs"). The Placer's report gives them as `process_ms`. Both builds (GPU and emulation);
// the JIT times stay 0 under emulation.
#pragma once

#include <chrono>

namespace memplace::detail {

struct ProcessTimes {
    double tracedLaunchMs = 0;  ///< traced launches, prepareLaunch to the end of finishLaunch
    double traceSetupMs = 0;    ///< prepareTracing: shadow copies, trace buffer, sample bitmap
    double traceWaitMs = 0;     ///< the wait for the traced launch (readTraceBuffer's sync)
    double shadowCompareMs = 0; ///< finishShadow: comparisons, scratch copies freed
    double jitWarmUpMs = 0;     ///< NVRTC's warm-up before the first background compilation
    double jitSyncMs = 0;       ///< compilations on the launch path (MEMPLACE_JIT_SYNC)
    double jitBackgroundMs = 0; ///< background compilations' NVRTC time, summed over threads
    int jitBackgroundCompiles = 0;
    double jitExitWaitMs = 0; ///< the exit's wait for background compilations still running
};

/// A copy of the process's times so far.
ProcessTimes processTimes();
/// Adds `ms` to one field (thread-safe; background compilations add from their threads).
void addProcessTime(double ProcessTimes::* field, double ms);
/// One more background compilation started.
void countBackgroundCompile();

/// Adds the wall time of its scope to one field of the process's times.
class ProcessTimer {
public:
    explicit ProcessTimer(double ProcessTimes::* field)
        : field_(field), t0_(std::chrono::steady_clock::now()) {}
    ProcessTimer(const ProcessTimer&) = delete;
    ProcessTimer& operator=(const ProcessTimer&) = delete;
    ~ProcessTimer() {
        addProcessTime(field_, std::chrono::duration<double, std::milli>(
                                   std::chrono::steady_clock::now() - t0_)
                                   .count());
    }

private:
    double ProcessTimes::* field_;
    std::chrono::steady_clock::time_point t0_;
};

} // namespace memplace::detail

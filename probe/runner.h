// Finding and running the GPU program (memplace-probe-gpu) from the memplace binary.
#pragma once

#include "common/expected.h"

#include <optional>
#include <string>
#include <vector>

namespace memplace::probe {

/// The GPU program's file name; CMake builds it next to `memplace`.
inline constexpr const char* kGpuProgramName = "memplace-probe-gpu";
/// The environment variable that names the GPU program.
inline constexpr const char* kGpuProgramEnv = "MEMPLACE_PROBE_GPU";

/// The GPU program: `explicitPath` when given, else $MEMPLACE_PROBE_GPU, else the file next to
/// the running executable. nullopt when none exists.
std::optional<std::string> findGpuProgram(const std::string& explicitPath = {});

/// Whether this machine shows an NVIDIA device node (/dev/nvidiactl or /dev/nvidia0).
bool hasNvidiaDeviceNode();

struct ProgramRun {
    int exitCode = -1; ///< -1: killed or did not exit normally
    bool timedOut = false;
    std::string out; ///< stdout (stderr goes to ours)
};

/// Runs `program args...` without a shell, captures stdout, kills it after `timeoutSeconds`.
Expected<ProgramRun> runProgram(const std::string& program, const std::vector<std::string>& args,
                                double timeoutSeconds);

/// Exit codes of memplace-probe-gpu.
inline constexpr int kGpuExitNoDevice = 3;
inline constexpr int kGpuExitCudaError = 4;

} // namespace memplace::probe

// The raw measurements of `memplace-probe-gpu` (probe/gpu/probe_gpu.cu), read from its JSON.
//
// The GPU program only measures; everything that turns numbers into a spec (fits, rounding,
// comments) is in this library, so that it is tested in CI on recorded measurements.
#pragma once

#include "common/expected.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace memplace::probe {

/// One point of a sweep: x is a working-set size, a stride, a lane count...; y in cycles.
struct Point {
    double x = 0;
    double y = 0;
};

/// cudaDeviceGetAttribute / cudaGetDeviceProperties values, as the GPU program read them.
struct DeviceInfo {
    std::string name;
    int ccMajor = 0;
    int ccMinor = 0;
    uint32_t sms = 0;
    uint32_t warpSize = 32;
    double clockPeakKHz = 0;
    double memoryClockPeakKHz = 0;
    uint32_t memoryBusWidthBits = 0;
    uint64_t l2Bytes = 0;
    uint64_t persistingL2MaxBytes = 0;
    uint64_t accessPolicyWindowMaxBytes = 0;
    uint32_t maxThreadsPerSm = 0;
    uint32_t maxBlocksPerSm = 0;
    uint32_t maxRegistersPerSm = 0;
    uint64_t maxSharedPerSm = 0;
    uint32_t maxThreadsPerBlock = 0;
    uint32_t maxRegistersPerBlock = 0;
    uint64_t maxSharedPerBlock = 0;
    uint64_t maxSharedPerBlockOptin = 0;
    uint64_t reservedSharedPerBlock = 0;
    uint64_t totalConstantBytes = 0;
    uint64_t totalGlobalBytes = 0;
    int driverVersion = 0;
    int runtimeVersion = 0;
};

/// A pointer-chasing latency: cycles per dependent load.
struct LatencyMeasurement {
    std::string name;
    std::string path; ///< the instruction or cache operator, e.g. "ld.global.ca"
    std::string method;
    double cycles = 0;
    uint64_t bytes = 0;
    uint64_t stride = 0;
    int steps = 0;
};

struct Sweep {
    std::string path;
    std::string method;
    std::vector<Point> points;
};

/// A kernel timed with CUDA events, with the transactions it serves at each level (whole grid).
struct KernelMeasurement {
    std::string name;
    std::string path;
    std::string regime; ///< "memory", "compute" or "none" (bandwidth only)
    std::string method;
    double bytes = 0; ///< bytes its threads asked for
    double ms = 0;
    std::map<std::string, double> transactions; ///< memory name -> transactions served there
};

struct Measurements {
    std::string source; ///< file name or "memplace-probe-gpu"
    std::string date;   ///< UTC, ISO 8601
    bool quick = false;
    DeviceInfo device;
    std::vector<double> clockMHz; ///< SM clock read against the global timer during the run
    std::map<std::string, LatencyMeasurement> latency;
    std::map<std::string, Sweep> sweeps;  ///< capacity sweeps: x = bytes
    std::map<std::string, Sweep> strides; ///< fetch-granularity sweeps: x = stride in bytes
    Sweep sharedBanks;                    ///< x = word stride, y = cycles per warp load
    uint32_t sharedBankWords = 8192;
    std::map<std::string, std::vector<Point>> constantLanes; ///< x = distinct addresses
    std::vector<KernelMeasurement> kernels;
    double elapsedSeconds = 0;

    /// The latency `name` in cycles, or an error naming what is missing.
    Expected<double> cycles(std::string_view name) const;
};

/// Parses the GPU program's JSON. An `{"error": ...}` object becomes a failure with its message.
Expected<Measurements> parseMeasurements(std::string_view json, std::string_view source);

} // namespace memplace::probe

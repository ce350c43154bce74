// Just-in-time instances (the GPU build only, internal): one entry per (device, kernel source,
// name expression), looked up in the disk cache, compiled with NVRTC (synchronously or in a
// background thread), loaded into the context. jit.h knows NVRTC, the cache format and the
// driver; this file keeps the instances; device_cuda.cpp uses them for the launch logic.
#pragma once

#include "runtime/src/jit.h"
#include "runtime/src/runtime_internal.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace memplace::detail {

/// A background compilation's result, shared with its thread.
struct JitJob {
    std::mutex mu;
    bool done = false;
    jit::Binary binary;
    std::string cacheError; ///< writing the disk cache failed
};

/// One just-in-time instantiation: (device, kernel source, name expression).
struct JitEntry {
    /// Absent: not compiled (nor in the disk cache), nobody asked yet.
    enum class State : uint8_t { Absent, Pending, Ready, Failed } state = State::Absent;
    jit::CompileRequest request;
    std::string key; ///< the content address (jit::cacheKey)
    std::shared_ptr<JitJob> job;
    jit::Loaded loaded;
    std::string error;
    std::string origin; ///< "compiled" or "cached"
    double compileMs = 0;
    double loadMs = 0;
    bool background = false;
    bool announced = false; ///< a launch report said how it came to be
    /// The program's __constant__ variables its module copies (request.constants order): the
    /// device address and size of each, found from the descriptor's host shadows.
    std::vector<std::pair<const void*, std::size_t>> sources;
    std::size_t sharedAttr = 0; ///< dynamic shared memory limit raised to this
};
using JitKey = std::tuple<int, const char*, std::string>;

/// Whether NVRTC and the embedded device headers are there (decided once per process).
bool jitSupportedImpl(std::string* why);
/// The instances, under the runtime's lock.
std::map<JitKey, JitEntry>& jitEntries();
/// The just-in-time instantiation of `placed` (after fallbacks) for a launch on `device`. New
/// entries look in the disk cache first; `compile` starts a compilation when there is none
/// (synchronously with setJitSynchronous, else in the background).
JitEntry& jitFor(Runtime& r, const KernelView& kv, const LaunchArgs& la, int device,
                 const Placement& placed, bool compile);
/// Waits for the background compilations in flight.
void waitJitThreads();

} // namespace memplace::detail

// The Placer's pure functions, each tested on its own: a launch's input signature, the blocks a
// traced launch samples, and the conversion of the runtime's TraceResult (device records) into
// the engine's trace::Trace (TraceBuilder).
#pragma once

#include "common/expected.h"
#include "memplace/host.h"
#include "trace/trace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memplace::placer {

/// The input signature of a launch as one string: kernel, grid, block, the program's dynamic
/// shared memory, device, and per array its element size, extent in bytes (or "?") and row
/// length. Launches with equal keys get the same decision; pointers are not part of it (a
/// program that swaps two buffers keeps its decision).
std::string signatureKey(const LaunchInfo& info);

/// The Placer's signature: signatureKey without the grid. Launches of one kernel whose grid
/// changes from launch to launch while block, shared memory, device and arrays stay the same (an
/// LU factorisation's shrinking grid per step) share one decision: a decision places arrays,
/// and what materialising it takes (shared staging of an array's extent, a texture, the constant
/// pool, a persisting window) depends on the arrays, not on the grid.
std::string gridFamilyKey(const LaunchInfo& info);

/// The same signature as a short human-readable text, for reports and messages:
/// `saxpy grid 1024x1x1 block 256x1x1 x:4MB y:4MB`.
std::string signatureText(const LaunchInfo& info);

/// How a traced launch samples blocks.
struct Sampling {
    uint32_t sms = 2; ///< SMs whose blocks are traced (whole SMs: L1 streams are exact)
    /// At most this many of each SM's blocks (its first waves); 0: `waves` times the blocks
    /// resident on an SM (the Placer computes them with the occupancy calculator), at most 64.
    uint32_t blocksPerSm = 0;
    uint32_t waves = 2;
    std::size_t maxRecords = std::size_t{1} << 17; ///< device buffer (280 bytes a record)
};

/// `s` with blocksPerSm set: kept when given, else waves x residentBlocks, within [1, 64].
Sampling resolveSampling(const Sampling& s, uint32_t residentBlocks);

/// The blocks to trace in a grid of `blocks` blocks on a GPU of `gpuSms` SMs, the way the model
/// assigns them (block b runs on SM b mod gpuSms, in order): the first `blocksPerSm` blocks of
/// SMs 0 .. sms-1. Every block when that is all of them (empty result: every block). Sorted.
std::vector<uint32_t> sampledBlocks(uint64_t blocks, uint32_t gpuSms, const Sampling& s);

/// The runtime's TraceOptions for a launch.
TraceOptions traceOptions(const LaunchInfo& info, uint32_t gpuSms, const Sampling& s);

/// After an overflow (`produced` records for `capacity` kept): a sampling with fewer blocks that
/// should fit, or the same one when it cannot shrink further (one block of one SM).
Sampling shrink(const Sampling& s, uint64_t produced, uint64_t capacity);

/// What toTrace adds to the conversion.
struct ConvertInfo {
    uint64_t records = 0;   ///< device records converted
    uint64_t lanes = 0;     ///< lane accesses
    bool truncated = false; ///< the device buffer overflowed: the trace is a prefix
    std::vector<std::string> notes;
};

/// Converts the records of a traced launch into a trace for the engine (trace/trace.h):
///  - header: kernel, grid, block, registers (info.registers when known), the kernel's own
///    shared memory (static + the program's dynamic), the sampled blocks;
///  - arrays in descriptor order: element size, length (extent / element size; when the extent
///    is unknown, the largest offset seen + 1), mode (the descriptor's, widened by what the
///    records show: reads of a write-only array make it read-write, atomics make it atomic),
///    feasible places (the descriptor's mask less what the runtime could not materialise:
///    texture for element types it cannot fetch or 2-D arrays without a row length; constant
///    beyond the constant pool; anything but global and read-only without an extent), dims and
///    row length;
///  - one record per device record (a read-and-write record without the atomic flag becomes a
///    read then a write), lanes in lane order, warps in buffer order (their program order).
/// Names that a trace cannot hold (`ns::k<float>`) have their other characters replaced by `_`.
Expected<trace::Trace> toTrace(const LaunchInfo& info, const TraceResult& result,
                               ConvertInfo* convertInfo = nullptr);

/// A name valid in a trace (trace::validTraceName): other characters become '_', a leading
/// digit gets a '_' in front, an empty name becomes "_".
std::string traceName(const std::string& name);

} // namespace memplace::placer

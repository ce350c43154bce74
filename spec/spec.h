// The memory specification of a GPU, read from MSL (docs/msl.md) or built in.
//
// A Spec has one processor entry, the memories of the GPU (storage and caches, each with the
// fields of PORPLE's MSL) and the places an array can be put in, each naming the memories an
// access to it passes through. Everything downstream (model, search, runtime) reads only this.
#pragma once

#include "common/expected.h"
#include "common/place.h"
#include "spec/condition.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memplace::spec {

enum class ShareScope { Thread, Warp, Block, Sm, Device };
std::string_view shareScopeName(ShareScope s);

struct Processor {
    std::string name; ///< marketing name, e.g. "NVIDIA H100 SXM5 80GB"
    std::string arch; ///< e.g. "sm_90"
    uint32_t sms = 0; ///< streaming multiprocessors
    uint32_t warpSize = 32;
    double clockMHz = 0; ///< SM clock used to turn cycles into seconds
    uint32_t maxThreadsPerSm = 0;
    uint32_t maxBlocksPerSm = 0;
    uint32_t maxWarpsPerSm = 0; ///< om: maxThreadsPerSm / warpSize
    uint32_t maxRegistersPerSm = 0;
    uint64_t maxSharedPerSm = 0; ///< bytes
    uint32_t maxThreadsPerBlock = 0;
    uint32_t maxRegistersPerBlock = 0;
    uint32_t maxRegistersPerThread = 255;
    uint64_t maxSharedPerBlock = 0;        ///< bytes, with opt-in
    uint64_t reservedSharedPerBlock = 0;   ///< bytes the system takes from each block (1 KB sm_80+)
    uint32_t registerAllocationUnit = 256; ///< registers are given to warps in these units
    uint32_t sharedAllocationUnit = 128;   ///< bytes
    /// The share of a path's other units' load hidden behind its busiest unit's: the units
    /// (L1TEX, L2, DRAM, ...) work at once, so a path takes max + (1 - unitOverlap) x the rest.
    /// 0 (the default) adds them up, as PORPLE does.
    double unitOverlap = 0;
};

struct Latency {
    double read = 0;  ///< cycles
    double write = 0; ///< cycles
};

struct ConcurrencyFactor {
    double memoryBound = 0.2;
    double computeBound = 0.2;
};

/// One memory of the GPU: a storage (global, constant, shared, ...) or a cache (L1, L2, ...).
struct Memory {
    std::string name;
    int id = 0;
    bool softwareManaged = false; ///< swmng: data can be put there explicitly
    bool writable = true;         ///< rw: a kernel can write it
    std::optional<uint32_t> dim;  ///< applies only to arrays of this dimensionality; none = any
    uint64_t size = 0;            ///< bytes (per instance: per SM for an SM-scoped cache)
    uint64_t blockSize = 0;       ///< bytes of a line, sector or word: the unit of transfer
    std::optional<uint32_t> banks;
    uint32_t wordSize = 4; ///< bytes of a "word" in serialization conditions
    Latency latency;
    std::vector<std::string> upperLevels; ///< memories closer to the cores
    std::vector<std::string> lowerLevels; ///< memories further from the cores
    ShareScope shareScope = ShareScope::Device;
    ConcurrencyFactor concurrency;
    std::string unit; ///< physical unit; memories with one unit share its capacity (default: name)
    /// Model cycles every warp-level request reaching this memory costs on its unit, hit or
    /// miss: a pipeline slower than the others (the texture pipeline). 0: none.
    double requestCost = 0;
    std::optional<SerialCondition> serialCondition; ///< none: never serializes
};

/// Model cycles a launch pays once for the runtime's stream work before the kernel when an array
/// of the kernel is in a place (the constant bank's upload), as (memory-bound, compute-bound):
/// the model's cycles stand for more time in a compute-bound kernel, as its concurrency
/// factors do.
struct LaunchCost {
    double memoryBound = 0;
    double computeBound = 0;
};

/// How an array placed in `place` is reached.
struct PlaceEntry {
    Place place = Place::Global;
    std::string memory;              ///< the storage the data lives in
    std::vector<std::string> levels; ///< memories an access passes through, nearest first
    std::string path;                ///< data-transfer path for the path-based time
    bool writable = true;            ///< whether arrays written by the kernel may go here
    std::vector<uint32_t> dims;      ///< array dimensionalities allowed (empty: any)
    uint64_t capacity = 0;           ///< bytes available to the arrays placed here
    ShareScope capacityScope = ShareScope::Device; ///< the capacity is per block, per device, ...
    LaunchCost launchCost;                         ///< none by default
};

/// A fact the reader should know: a `?` replaced by a default, an `om` inferred.
struct Assumption {
    SourceLocation location;
    std::string text;
};

struct Spec {
    std::string name; ///< the built-in name or the file it came from
    Processor processor;
    std::vector<Memory> memories;
    std::vector<PlaceEntry> places;
    std::vector<Assumption> assumptions;

    const Memory* findMemory(std::string_view nameOrId) const;
    const PlaceEntry* findPlace(Place p) const;
};

/// Parses and checks MSL text. All errors of the text are reported, each with
/// `fileName:line:col`, the quoted line and a caret.
Expected<Spec> parseSpec(std::string_view text, std::string_view fileName);

/// A built-in name ("h100", ...) or a path to an MSL file.
Expected<Spec> loadSpec(std::string_view nameOrPath);

/// MSL text that parses back to the same Spec (assumptions aside: they are resolved).
std::string printSpec(const Spec& spec);

/// Names of the built-in specs, in a stable order.
const std::vector<std::string>& builtinSpecNames();
/// The MSL source of a built-in spec, or nullopt.
std::optional<std::string_view> builtinSpecText(std::string_view name);

/// Structural equality (used by round-trip tests).
bool operator==(const Processor&, const Processor&);
bool operator==(const Memory&, const Memory&);
bool operator==(const PlaceEntry&, const PlaceEntry&);
bool equivalent(const Spec& a, const Spec& b);

} // namespace memplace::spec

// Decisions on disk (MEMPLACE_CACHE, by default in the user's cache folder): one JSON file per
// (binary, device), written atomically (temporary file and rename), holding one decision per
// input signature. A file that does not parse is corrupt, one written for another build of the
// binary (size or modification time), another device, another spec, or by another memplace or
// under another CUDA driver is stale: either is ignored with a warning and replaced at the next
// store. Besides decisions it keeps the outcomes that are not
// one (a signature not traced, a trace not finished, a failure), so that a later run does not
// pay for them again.
#pragma once

#include "common/place.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memplace::placer {

/// The running program's identity: its executable's path, size and modification time.
struct BinaryId {
    std::string path;
    uint64_t size = 0;
    int64_t mtime = 0; ///< nanoseconds since the epoch of the file clock
    bool operator==(const BinaryId&) const = default;
    /// /proc/self/exe (resolved); empty path when it cannot be read.
    static BinaryId current();
    /// The identity of the file at `path`.
    static BinaryId of(const std::filesystem::path& path);
};

/// A stored outcome's status: a decision (a placement: Placed, Original) or none: Untraced
/// (launched too few times to be traced, or beyond the kernel's trace bound), Pending (its trace
/// overflowed and was not finished), Failed. Its names are the file's "status" values.
enum class CachedStatus : uint8_t { Placed, Original, Untraced, Pending, Failed };
std::string_view stateName(CachedStatus s); ///< "placed", "original", "untraced", ...
std::optional<CachedStatus> parseCachedStatus(std::string_view name);

/// One signature's outcome as stored: a decision (a placement, `status` Placed or Original),
/// or none: Untraced, Pending (`traceAttempts` made, the next one with `sms` x `blocksPerSm`),
/// Failed (`why`).
struct CachedDecision {
    std::string key;       ///< gridFamilyKey
    std::string signature; ///< signatureText (for people reading the file)
    std::string kernel;
    std::vector<std::string> arrays; ///< names, descriptor order
    std::vector<Place> placement;    ///< descriptor order
    double predictedSeconds = 0;     ///< of the placement
    double originalSeconds = 0;      ///< of the original placement
    std::string engineBest;          ///< the engine's unconstrained best, as text
    std::vector<Place> jitPlacement; ///< to compile just in time (empty: none)
    double jitSeconds = 0;           ///< its predicted time
    CachedStatus status = CachedStatus::Placed;
    std::string why;          ///< untraced, pending, failed: what happened
    uint64_t launches = 0;    ///< launches in the run that stored it
    int traceAttempts = 0;    ///< pending: traced launches made
    uint32_t sms = 0;         ///< pending: the next trace's SMs
    uint32_t blocksPerSm = 0; ///< pending: and blocks per SM
    bool traceBound = false;  ///< untraced: its kernel had had its traces (tracesPerKernel)
    /// A placement to apply (placed or original); else the outcome without one.
    bool decided() const {
        return status == CachedStatus::Placed || status == CachedStatus::Original;
    }
};

/// 64-bit FNV-1a, as 16 hex digits (file names, spec fingerprints).
std::string hash16(std::string_view text);

class DecisionCache {
public:
    /// `writer`: what wrote the file besides the binary ("memplace 0.1.0, driver 13000"); a
    /// file by another writer is stale.
    DecisionCache(std::filesystem::path dir, BinaryId binary, std::string device,
                  std::string specFingerprint, std::string writer = {});

    /// The file this cache reads and writes.
    const std::filesystem::path& file() const { return file_; }
    /// Reads the file (absent: empty, no warning). Returns warnings (corrupt, stale).
    std::vector<std::string> load();
    const CachedDecision* find(const std::string& key) const;
    /// Adds or replaces a decision and writes the file atomically, merged with what other
    /// processes wrote meanwhile (when that is valid for this binary and device). Returns a
    /// warning when the write failed.
    std::optional<std::string> store(const CachedDecision& d);
    /// Several at once, one write (the outcomes left at exit).
    std::optional<std::string> store(const std::vector<CachedDecision>& ds);
    size_t size() const { return entries_.size(); }

private:
    /// Parses a file's text into entries; an error message when corrupt or stale.
    std::optional<std::string> parse(const std::string& text,
                                     std::map<std::string, CachedDecision>& out) const;
    std::string serialise() const;

    std::filesystem::path dir_;
    std::filesystem::path file_;
    BinaryId binary_;
    std::string device_;
    std::string spec_;
    std::string writer_;
    std::map<std::string, CachedDecision> entries_;
};

} // namespace memplace::placer

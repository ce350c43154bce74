// Decisions on disk (MEMPLACE_CACHE=<dir>): one JSON file per (binary, device), written
// atomically (temporary file and rename), holding one decision per input signature. A file
// that does not parse is corrupt, one written for another build of the binary (size or
// modification time), another device or another spec is stale: either is ignored with a
// warning and replaced at the next store.
#pragma once

#include "common/place.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
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

/// One decision as stored.
struct CachedDecision {
    std::string key;       ///< signatureKey
    std::string signature; ///< signatureText (for people reading the file)
    std::string kernel;
    std::vector<std::string> arrays; ///< names, descriptor order
    std::vector<Place> placement;    ///< descriptor order
    double predictedSeconds = 0;     ///< of the placement
    double originalSeconds = 0;      ///< of the original placement
    std::string engineBest;          ///< the engine's unconstrained best, as text
    std::vector<Place> jitPlacement; ///< to compile just in time (empty: none)
    double jitSeconds = 0;           ///< its predicted time
};

/// 64-bit FNV-1a, as 16 hex digits (file names, spec fingerprints).
std::string hash16(std::string_view text);

class DecisionCache {
public:
    DecisionCache(std::filesystem::path dir, BinaryId binary, std::string device,
                  std::string specFingerprint);

    /// The file this cache reads and writes.
    const std::filesystem::path& file() const { return file_; }
    /// Reads the file (absent: empty, no warning). Returns warnings (corrupt, stale).
    std::vector<std::string> load();
    const CachedDecision* find(const std::string& key) const;
    /// Adds or replaces a decision and writes the file atomically, merged with what other
    /// processes wrote meanwhile (when that is valid for this binary and device). Returns a
    /// warning when the write failed.
    std::optional<std::string> store(const CachedDecision& d);
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
    std::map<std::string, CachedDecision> entries_;
};

} // namespace memplace::placer

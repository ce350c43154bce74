#include "placer/cache.h"

#include "common/file_io.h"
#include "common/json.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <sys/file.h>
#include <system_error>
#include <unistd.h>

namespace memplace::placer {

namespace {

constexpr const char* kFormat = "memplace-placer-cache";
// 2: keys without the grid (gridFamilyKey), outcomes that are not decisions (`status`).
constexpr int kVersion = 2;

} // namespace

std::string hash16(std::string_view text) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (char c : text) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ull;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

BinaryId BinaryId::of(const std::filesystem::path& path) {
    BinaryId id;
    std::error_code ec;
    const std::filesystem::path p = std::filesystem::canonical(path, ec);
    if (ec) {
        return id;
    }
    id.path = p.string();
    id.size = std::filesystem::file_size(p, ec);
    if (ec) {
        id.size = 0;
    }
    const auto t = std::filesystem::last_write_time(p, ec);
    if (!ec) {
        id.mtime = static_cast<int64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
    }
    return id;
}

BinaryId BinaryId::current() {
    return of("/proc/self/exe");
}

DecisionCache::DecisionCache(std::filesystem::path dir, BinaryId binary, std::string device,
                             std::string specFingerprint, std::string writer)
    : dir_(std::move(dir)), binary_(std::move(binary)), device_(std::move(device)),
      spec_(std::move(specFingerprint)), writer_(std::move(writer)) {
    const std::string base = binary_.path.empty()
                                 ? std::string("program")
                                 : std::filesystem::path(binary_.path).filename().string();
    file_ = dir_ / (base + "-" + hash16(binary_.path + "\n" + device_) + ".json");
}

std::optional<std::string> DecisionCache::parse(const std::string& text,
                                                std::map<std::string, CachedDecision>& out) const {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const std::exception& e) {
        return std::string("corrupt (") + e.what() + ")";
    }
    try {
        if (!j.is_object() || j.value("format", std::string()) != kFormat) {
            return std::string("corrupt (not a memplace placer cache)");
        }
        if (j.at("version").get<int>() != kVersion) {
            return "stale (version " + dumpJson(j.at("version")) + ", this program writes " +
                   std::to_string(kVersion) + ")";
        }
        const auto& b = j.at("binary");
        BinaryId id;
        id.path = b.at("path").get<std::string>();
        id.size = b.at("size").get<uint64_t>();
        id.mtime = b.at("mtime").get<int64_t>();
        if (!(id == binary_)) {
            return "stale (written for another build of " + id.path + ")";
        }
        if (j.at("device").get<std::string>() != device_) {
            return "stale (written for device " + j.at("device").get<std::string>() + ")";
        }
        if (j.at("spec").get<std::string>() != spec_) {
            return std::string("stale (written with another memory specification)");
        }
        if (const std::string w = j.value("writer", std::string()); w != writer_) {
            return "stale (written by " + (w.empty() ? std::string("an older memplace") : w) + ")";
        }
        std::map<std::string, CachedDecision> entries;
        for (const auto& e : j.at("decisions")) {
            CachedDecision d;
            d.key = e.at("key").get<std::string>();
            d.signature = e.value("signature", std::string());
            d.kernel = e.at("kernel").get<std::string>();
            d.arrays = e.at("arrays").get<std::vector<std::string>>();
            const auto status = parseCachedStatus(e.value("status", std::string("placed")));
            if (!status) {
                return "corrupt (unknown status " + dumpJson(e.at("status")) + ")";
            }
            d.status = *status;
            d.why = e.value("why", std::string());
            d.launches = e.value("launches", uint64_t{0});
            d.traceAttempts = e.value("trace_attempts", 0);
            d.sms = e.value("sms", 0u);
            d.blocksPerSm = e.value("blocks_per_sm", 0u);
            d.traceBound = e.value("trace_bound", false);
            for (const auto& p : e.at("placement")) {
                const auto place = parsePlace(p.get<std::string>());
                if (!place) {
                    return "corrupt (unknown place " + dumpJson(p) + ")";
                }
                d.placement.push_back(*place);
            }
            if (d.decided() && d.placement.size() != d.arrays.size()) {
                return std::string("corrupt (a placement and its arrays differ in length)");
            }
            d.predictedSeconds = e.value("predicted_seconds", 0.0);
            d.originalSeconds = e.value("original_seconds", 0.0);
            d.engineBest = e.value("engine_best", std::string());
            if (e.contains("jit_placement")) { // optional: written since the JIT
                for (const auto& p : e.at("jit_placement")) {
                    const auto place = parsePlace(p.get<std::string>());
                    if (!place) {
                        return "corrupt (unknown place " + dumpJson(p) + ")";
                    }
                    d.jitPlacement.push_back(*place);
                }
                if (!d.jitPlacement.empty() && d.jitPlacement.size() != d.arrays.size()) {
                    return std::string("corrupt (a JIT placement and its arrays differ in length)");
                }
                d.jitSeconds = e.value("jit_seconds", 0.0);
            }
            entries[d.key] = std::move(d);
        }
        out = std::move(entries);
    } catch (const std::exception& e) {
        return std::string("corrupt (") + e.what() + ")";
    }
    return std::nullopt;
}

namespace {

/// The cache is a regular file (or a link to one) or nothing: opening a FIFO would block the
/// program, and writing over a device or socket is not the cache's to do.
bool isCacheFile(const std::filesystem::path& file) {
    std::error_code ec;
    return std::filesystem::is_regular_file(file, ec);
}

/// An exclusive advisory lock on the cache folder while it is held: the stores of several
/// processes (read, merge, write) take turns, so that none drops what another just wrote. Best
/// effort: where the folder cannot be locked the store goes on (the rename keeps the file whole
/// either way).
class FolderLock {
public:
    explicit FolderLock(const std::filesystem::path& dir)
        : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
        while (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
        }
    }
    ~FolderLock() {
        if (fd_ >= 0) {
            ::close(fd_); // releases the lock
        }
    }
    FolderLock(const FolderLock&) = delete;
    FolderLock& operator=(const FolderLock&) = delete;

private:
    int fd_;
};

} // namespace

std::vector<std::string> DecisionCache::load() {
    std::vector<std::string> warnings;
    entries_.clear();
    std::error_code ec;
    if (!std::filesystem::exists(file_, ec)) {
        return warnings;
    }
    if (!isCacheFile(file_)) {
        warnings.push_back("decision cache " + file_.string() +
                           " is not a regular file; ignored (decisions are not cached)");
        return warnings;
    }
    auto text = readFile(file_);
    if (!text) {
        warnings.push_back("decision cache " + file_.string() + " cannot be read; ignored");
        return warnings;
    }
    if (auto why = parse(*text, entries_)) {
        entries_.clear();
        warnings.push_back("decision cache " + file_.string() + " is " + *why +
                           "; ignored (it is replaced at the next decision)");
    }
    return warnings;
}

const CachedDecision* DecisionCache::find(const std::string& key) const {
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : &it->second;
}

std::string DecisionCache::serialise() const {
    nlohmann::json j;
    j["format"] = kFormat;
    j["version"] = kVersion;
    j["binary"] = {{"path", binary_.path}, {"size", binary_.size}, {"mtime", binary_.mtime}};
    j["device"] = device_;
    j["spec"] = spec_;
    if (!writer_.empty()) {
        j["writer"] = writer_;
    }
    nlohmann::json ds = nlohmann::json::array();
    for (const auto& [key, d] : entries_) {
        nlohmann::json p = nlohmann::json::array();
        for (Place pl : d.placement) {
            p.push_back(std::string(placeName(pl)));
        }
        ds.push_back({{"key", d.key},
                      {"signature", d.signature},
                      {"kernel", d.kernel},
                      {"arrays", d.arrays},
                      {"placement", p},
                      {"predicted_seconds", d.predictedSeconds},
                      {"original_seconds", d.originalSeconds},
                      {"engine_best", d.engineBest},
                      {"status", std::string(stateName(d.status))}});
        if (!d.decided()) {
            ds.back()["why"] = d.why;
            ds.back()["launches"] = d.launches;
        }
        if (d.traceBound) {
            ds.back()["trace_bound"] = true;
        }
        if (d.status == CachedStatus::Pending) {
            ds.back()["trace_attempts"] = d.traceAttempts;
            ds.back()["sms"] = d.sms;
            ds.back()["blocks_per_sm"] = d.blocksPerSm;
        }
        if (!d.jitPlacement.empty()) {
            nlohmann::json jp = nlohmann::json::array();
            for (Place pl : d.jitPlacement) {
                jp.push_back(std::string(placeName(pl)));
            }
            ds.back()["jit_placement"] = std::move(jp);
            ds.back()["jit_seconds"] = d.jitSeconds;
        }
    }
    j["decisions"] = std::move(ds);
    return dumpJson(j, 1) + "\n";
}

std::optional<std::string> DecisionCache::store(const CachedDecision& d) {
    return store(std::vector<CachedDecision>{d});
}

std::optional<std::string> DecisionCache::store(const std::vector<CachedDecision>& ds) {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) {
        return "decision cache: cannot create " + dir_.string() + ": " + ec.message();
    }
    if (std::filesystem::exists(file_, ec) && !isCacheFile(file_)) {
        return "decision cache: " + file_.string() + " is not a regular file; not written";
    }
    const FolderLock lock(dir_);
    // Merge what other processes of this binary stored meanwhile.
    if (std::filesystem::exists(file_, ec)) {
        if (auto text = readFile(file_)) {
            std::map<std::string, CachedDecision> theirs;
            if (!parse(*text, theirs)) {
                for (auto& [k, v] : theirs) {
                    entries_.emplace(k, std::move(v));
                }
            }
        }
    }
    for (const CachedDecision& d : ds) {
        // An outcome without a decision never replaces a decision (another process's, or one
        // this run loaded).
        auto it = entries_.find(d.key);
        if (!d.decided() && it != entries_.end() && it->second.decided()) {
            continue;
        }
        entries_[d.key] = d;
    }
    auto w = writeFileAtomic(file_, serialise(), Overwrite::Yes);
    if (!w) {
        return "decision cache: cannot write " + file_.string() + ": " + w.message();
    }
    return std::nullopt;
}

} // namespace memplace::placer

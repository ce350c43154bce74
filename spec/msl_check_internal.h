// The MSL checker's internals (spec library only): the limits values are checked against, the
// fields of an entry, the value readers, and the Checker whose members are defined by what they
// check: msl_check.cpp (the processor entry, the whole spec), msl_check_memory.cpp (memory
// entries, their levels and cycles), msl_check_place.cpp (place entries); the value readers are
// in msl_values.cpp.
#pragma once

#include "spec/msl_syntax.h"
#include "spec/spec.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memplace::spec::msl {

using Kind = Value::Kind;

constexpr double kDefaultConcurrency = 0.2;
constexpr double kMaxLaunchCost = 1e12; // model cycles: far above any launch's stream work
constexpr uint32_t kDefaultBanks = 32;

// What a device can have, generously: the model sizes vectors by some of these (one entry per
// SM, per lane, per bank), so an absurd value must be an error, not gigabytes (docs/msl.md).
constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;
constexpr uint64_t kGiB = 1024 * kMiB;
constexpr uint64_t kMaxSms = 1024;
constexpr uint64_t kMaxWarpSize = 64;
constexpr double kMaxClockMHz = 10000;
constexpr uint64_t kMaxThreads = 16384;              // per SM and per block
constexpr uint64_t kMaxBlocksPerSm = 1024;           // also maxWarpsPerSm
constexpr uint64_t kMaxRegisters = 16 * 1024 * 1024; // per SM and per block
constexpr uint64_t kMaxRegistersPerThread = 1024;
constexpr uint64_t kMaxAllocationUnit = 64 * 1024; // registers
constexpr uint64_t kMaxSharedBytes = kGiB;         // per SM, per block, reserved
constexpr uint64_t kMaxSharedUnit = kMiB;
constexpr uint64_t kMaxMemoryBytes = uint64_t{1} << 50; // 1 PiB: any memory's size or capacity
constexpr uint64_t kMaxBlockSize = kMiB;                // a line, sector or word
constexpr uint64_t kMaxBanks = 1024;
constexpr uint64_t kMaxMemoryId = INT32_MAX;

/// "; did you mean 'x'?" when one of `candidates` is close to `word`; "" otherwise.
std::string suggestion(std::string_view word, const std::vector<std::string>& candidates);

enum class Need { Required, Optional };

struct FieldRule {
    std::string_view name;
    Need need;
};

/// The fields of one entry by name, after duplicate, unknown and missing fields are reported.
class EntryFields {
public:
    EntryFields(const Entry& e, std::string_view what, const std::vector<FieldRule>& rules,
                Reporter& r);
    const Field* get(std::string_view name) const {
        auto it = byName_.find(std::string(name));
        return it == byName_.end() ? nullptr : it->second;
    }

private:
    std::map<std::string, const Field*> byName_;
};

// ---- value readers: each reports a mistyped value and returns nullopt ----

class ValueReader {
public:
    ValueReader(Reporter& r, Spec& spec) : r_(r), spec_(spec) {}

    void assume(const SourceLocation& loc, std::string text);
    void expected(const Field& f, std::string_view what);
    void specialNotAllowed(const Field& f);
    bool isSpecial(const Value& v) const;
    std::optional<uint64_t> count(const Field& f, uint64_t min, uint64_t max);

    /// Bytes: a whole number with an optional B/KB/MB/GB (1024-based) suffix.
    std::optional<uint64_t> bytes(const Field& f, const Value& v, uint64_t min, uint64_t max);
    std::optional<uint64_t> bytes(const Field& f, uint64_t min, uint64_t max);

    /// 1024 -> "1 KB": the limits in messages, as a reader writes them.
    static std::string describeBytes(uint64_t b);
    std::optional<double> megahertz(const Field& f);
    std::optional<bool> yesNo(const Field& f);

    /// `r` (read-only) or `rw`: true when writable.
    std::optional<bool> readWrite(const Field& f);
    std::optional<ShareScope> scope(const Field& f);

    /// A number in (0, max], no unit.
    std::optional<double> positive(const Field& f, const Value& v, double max);

    /// A number in [0, max], no unit.
    std::optional<double> nonNegative(const Field& f, double max);

    /// A number without a unit in [0, max] (`zero`) or (0, max].
    std::optional<double> numberUpTo(const Field& f, const Value& v, double max, bool zero);

    /// `(read, write)`, `(read, om)` or a single number for both.
    std::optional<Latency> latency(const Field& f, std::string_view memory);

    /// `(memory-bound, compute-bound)` model cycles, each in [0, 1e12]; one number: both.
    std::optional<LaunchCost> launchCost(const Field& f);

    /// `(memory-bound, compute-bound)`, one number for both, or `?` anywhere for 0.2.
    std::optional<ConcurrencyFactor> concurrency(const Field& f, std::string_view memory);

    /// Names or ids: `(L1, 4)`, a single name, or `na`/`()` for none.
    struct NameRef {
        std::string text;
        SourceLocation location;
    };
    std::optional<std::vector<NameRef>> names(const Field& f);
    std::optional<std::string> identifier(const Field& f);
    std::optional<std::string> text(const Field& f);

private:
    Reporter& r_;
    Spec& spec_;
};

// The fields each entry may have.
const std::vector<FieldRule>& processorRules();
const std::vector<FieldRule>& memoryRules();
const std::vector<FieldRule>& placeRules();

/// Where a level list came from, to resolve `om` and report inconsistencies.
struct LevelField {
    bool omitted = false;
    const Field* field = nullptr;
    std::vector<ValueReader::NameRef> refs;
};

struct PendingMemory {
    Memory memory;
    const Entry* entry = nullptr;
    LevelField upper;
    LevelField lower;
};

class Checker {
public:
    Checker(const msl::SyntaxTree& tree, Reporter& r, std::string_view fileName)
        : tree_(tree), r_(r), read_(r, spec_) {
        spec_.name = std::string(fileName);
    }

    Spec run();

private:
    // ---- processor ----

    void checkProcessor(const Entry& e);

    // ---- memories ----

    void checkMemory(const Entry& e);
    void readDim(const Field& f, Memory& m);
    void readBanks(const Field& f, Memory& m);
    void readCondition(const Field& f, Memory& m);
    LevelField readLevels(const Field* f);
    PendingMemory* lookup(std::string_view nameOrId);
    std::vector<std::string> memoryNames() const;

    /// Resolves names and ids, infers `om` lists from the other direction, checks agreement.
    void resolveLevels();

    /// `mine` is upperLevels (or lowerLevels) of pm; `theirs` holds every memory's explicit
    /// opposite list. An omitted list is inferred; an explicit one must agree.
    void inferOrCheck(PendingMemory& pm, const LevelField& lf, std::vector<std::string>& mine,
                      const std::map<std::string, std::vector<std::string>>& theirs,
                      std::string_view mineName, std::string_view theirName);

    /// The hierarchy must be acyclic: follow lowerLevels (upperLevels are their inverse).
    void checkCycles();

    // ---- places ----

    void checkPlace(const Entry& e);
    void readPlaceLevels(const Field* f, PlaceEntry& p, const Memory& storage);
    void readPlaceDims(const Field& f, PlaceEntry& p);

    const msl::SyntaxTree& tree_;
    Reporter& r_;
    Spec spec_;
    ValueReader read_;
    std::vector<PendingMemory> memories_;
};

} // namespace memplace::spec::msl

// Active profiling (PORPLE's Procedure 2; decision 011): a traced launch's records collected by
// running only as much of the sampled blocks as it takes for the accessed indices to settle,
// warp by warp and lane by lane, then extrapolating the rest. A trace-collection strategy of the
// emulator: the runtime's tracing accessor feeds it through the warp rendezvous, the runtime
// announces traced launches and takes the profile back (runtime/src/emu/device_emu.cpp, the
// emulator's side of the runtime's device interface). docs/emulation.md, "Active profiling", has
// the procedure and its limits.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memplace::emu {

enum class ProfileMode : uint8_t {
    Full,   ///< a traced launch records every access of its sampled blocks (the default)
    Active, ///< a traced launch is profiled actively, then runs untraced
};

struct ProfileOptions {
    ProfileMode mode = ProfileMode::Full; ///< MEMPLACE_PROFILE=full|active
    /// The stopping rule's tolerance (MEMPLACE_PROFILE_TOLERANCE, default 0.005): a level stops
    /// when, for every (site, array, kind), the running mean of the accessed element offsets
    /// changed by at most tolerance x |previous mean|, or its change differs from the previous
    /// change by at most tolerance x |previous change|.
    double tolerance = 0.005;
    /// Units (lanes, warps) profiled at a level before it may stop (at least 3: the rule needs
    /// two changes, extrapolation three points). MEMPLACE_PROFILE_MIN_UNITS.
    unsigned minUnits = 3;
    /// Loop truncation (MEMPLACE_PROFILE_LOOPS, 0 = off): a thread run alone or in its warp alone
    /// is stopped after it made this many accesses at one site. Not applied to whole blocks.
    unsigned loopIterations = 0;
    /// MEMPLACE_PROFILE_REPORT: every launch's ProfileStats as JSON lines, written at exit.
    std::string reportPath;

    /// The environment's options; what it cannot parse is reported on stderr and ignored.
    static ProfileOptions fromEnvironment();
};

/// The options in force (initially fromEnvironment()).
ProfileOptions profileOptions();
void setProfileOptions(const ProfileOptions& options);

/// How much an active profile ran, and why a level was switched off.
struct ProfileStats {
    unsigned long long launchId = 0;
    std::string kernel;
    uint64_t blocks = 0;            ///< sampled blocks
    uint64_t threadsTotal = 0;      ///< threads of the sampled blocks (what full profiling runs)
    uint64_t threadsRun = 0;        ///< threads the profile ran (a thread run twice counts twice)
    uint64_t warpsTotal = 0;        ///< warps of the sampled blocks
    uint64_t warpsProfiled = 0;     ///< warps run (alone, lane by lane, or in their block)
    uint64_t warpsExtrapolated = 0; ///< warps filled in by extrapolation
    uint64_t lanesExtrapolated = 0; ///< lanes of profiled warps filled in by extrapolation
    uint64_t laneAccessesProfiled = 0; ///< lane accesses recorded by running threads
    uint64_t laneAccessesTotal = 0;    ///< lane accesses of the profile (recorded + extrapolated)
    uint64_t records = 0;              ///< warp records of the profile
    uint64_t truncatedThreads = 0;     ///< threads stopped by loop truncation
    unsigned runs = 0;                 ///< partial runs
    bool warpLevel = true;             ///< warp-by-warp profiling stayed on
    bool laneLevel = true;             ///< lane-by-lane profiling stayed on
    std::string warpLevelOff;          ///< why warp level was switched off (empty: it was not)
    std::string laneLevelOff;
    bool warpLevelStopped = false; ///< the stopping rule ended the warp level (else: ran out)
    std::string notes;             ///< limits of extrapolation for this launch's shape
    double profileSeconds = 0;     ///< the profile: snapshot, partial runs, restore, extrapolation

    std::string toJson() const;
};

/// One warp access of a profile: `key` is the tracing accessor's rendezvous key
/// (rendezvousKey(site, array << 8 | flags)); `values[lane]` for the lanes of `mask`.
struct ProfiledRecord {
    uint32_t block = 0; ///< linear block id
    uint32_t warp = 0;
    unsigned long long key = 0;
    uint32_t mask = 0;
    bool extrapolated = false; ///< some of its lanes were not run but extrapolated
    std::array<long long, 32> values{};
};

struct Profile {
    ProfileStats stats;
    std::vector<ProfiledRecord> records; ///< grouped by (block, warp) in block order, each
                                         ///< warp's records in program order
};

/// What the tracing accessor does at an access (traceState()):
enum class TraceState : uint8_t {
    Record,  ///< rendezvous and write the record (a launch traced in full)
    Observe, ///< rendezvous only: an active profile collects the groups
    Off,     ///< plain access: the real run after an active profile
};
TraceState traceState();

/// The runtime announces that its next launch is traced with these sampled blocks (linear ids,
/// ascending; empty: every block). With ProfileMode::Active that launch is profiled actively and
/// then runs untraced; with Full nothing changes.
void profileNextLaunch(std::vector<uint32_t> sampledBlocks);
/// The active profile of the launch announced last (consumes it; also forgets an announcement
/// no launch took). nullopt when it ran in full.
std::optional<Profile> takeProfile();
/// Every active profile's statistics so far, oldest first.
std::vector<ProfileStats> profileHistory();

} // namespace memplace::emu

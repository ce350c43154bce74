// Active profiling of a traced launch (memplace/emu/profile.h, docs/emulation.md "Active
// profiling"): runs the sampled blocks' warps and lanes alone until the running means settle,
// extrapolates the rest, and restores the memory the partial runs wrote. The pure parts (means,
// zipping, extrapolation) are in profile.cpp.
#include "scheduler_internal.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <optional>

namespace memplace::emu::detail {
namespace {

/// A copy of the memory the partial runs of an active profile can write, so that they leave no
/// trace: every allocation a pointer among the launch's arguments points into (the closure's
/// 8-byte words are scanned conservatively; accessors hold plain pointers), and every symbol
/// (`__device__` and `__constant__` variables the program registered). Other allocations are
/// left alone: other host threads may be writing them.
class MemorySnapshot {
public:
    explicit MemorySnapshot(const LaunchRequest& r) {
        std::vector<std::uintptr_t> words;
        const auto* bytes = static_cast<const unsigned char*>(r.closure);
        for (std::size_t o = 0; o + sizeof(std::uintptr_t) <= r.closureBytes;
             o += sizeof(std::uintptr_t)) {
            std::uintptr_t w = 0;
            std::memcpy(&w, bytes + o, sizeof w);
            words.push_back(w);
        }
        Device& d = device();
        std::lock_guard lock(d.mutex);
        for (const auto& [base, a] : d.allocations) {
            bool used = a.kind == AllocKind::Symbol;
            for (std::size_t i = 0; !used && i < words.size(); ++i)
                used = words[i] >= a.base && words[i] < a.base + std::max<std::size_t>(a.size, 1);
            if (!used)
                continue;
            Saved s;
            s.base = reinterpret_cast<unsigned char*>(a.base);
            s.bytes.assign(s.base, s.base + a.size);
            saved_.push_back(std::move(s));
        }
    }
    void restore() const {
        for (const Saved& s : saved_)
            std::memcpy(s.base, s.bytes.data(), s.bytes.size());
    }

private:
    struct Saved {
        unsigned char* base = nullptr;
        std::vector<unsigned char> bytes;
    };
    std::vector<Saved> saved_;
};

const char* dependenceName(Dependence d) {
    switch (d) {
    case Dependence::Barrier:
        return "a block barrier (__syncthreads)";
    case Dependence::Atomic:
        return "an atomic";
    case Dependence::Fence:
        return "a memory fence";
    case Dependence::Collective:
        return "a warp collective (shuffle, vote, __syncwarp, __activemask)";
    }
    return "communication";
}

/// Active profiling of one traced launch (docs/emulation.md, "Active profiling"): the sampled
/// blocks' warps one after another, each warp's lanes one after another, until the running means
/// settle; the rest is extrapolated. Memory is as before when run() returns.
class ActiveProfiler {
public:
    ActiveProfiler(LaunchState& state, const std::vector<uint32_t>& sampled);
    /// nullopt: a partial run faulted (the launch then runs traced in full and reports it).
    std::optional<Profile> run();

private:
    unsigned laneCount(unsigned w) const { return std::min(32u, n_ - w * 32); }
    uint32_t existsMask(unsigned w) const {
        const unsigned c = laneCount(w);
        return c == 32 ? ~0u : (1u << c) - 1;
    }
    bool runUnit(uint32_t b, std::function<bool(unsigned)> filter, int strict, unsigned threads,
                 unsigned loopLimit);
    void extrapolateWarpAt(uint32_t b, unsigned w);
    void profileBlock(uint32_t b);
    bool profileLanes(uint32_t b, unsigned w, WarpRecords& recs);
    bool profileWarp(uint32_t b, unsigned w, WarpRecords& recs);
    void addProfiledWarp(uint32_t b, unsigned w, WarpRecords recs);
    void collectRecords();

    const std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
    const ProfileOptions opt_ = profileOptions();
    LaunchState& state_;
    const LaunchRequest& req_;
    const unsigned n_;      ///< threads per block
    const unsigned nWarps_; ///< warps per block
    std::vector<uint32_t> blocks_;
    Profile prof_;
    ProfileStats& st_ = prof_.stats;
    bool block1D_ = false, grid1D_ = false;
    std::optional<MemorySnapshot> snapshot_;
    BlockRunner& runner_ = runnerForThisThread();
    ProfileCollector col_;
    bool faulted_ = false;

    std::map<uint32_t, std::vector<WarpRecords>> result_;     // block -> warps
    std::vector<std::pair<long long, WarpRecords>> profiled_; // global warp index, records
    RunningMeans warpMeans_;
    bool warpStopped_ = false;
};

ActiveProfiler::ActiveProfiler(LaunchState& state, const std::vector<uint32_t>& sampled)
    : state_(state), req_(*state.request), n_(req_.block.x * req_.block.y * req_.block.z),
      nWarps_((n_ + 31) / 32), blocks_(sampled) {
    if (blocks_.empty()) {
        for (unsigned long long b = 0; b < state_.totalBlocks; ++b)
            blocks_.push_back(static_cast<uint32_t>(b));
    }
    st_.launchId = state_.info.id;
    st_.kernel = state_.info.kernel;
    st_.blocks = blocks_.size();
    st_.threadsTotal = st_.blocks * n_;
    st_.warpsTotal = st_.blocks * nWarps_;

    // Extrapolation is affine in the lane id and in the global warp index: exact for indices
    // affine in threadIdx.x and blockIdx.x. A warp whose lanes span rows of the block
    // (blockDim.x not a multiple of 32) is run whole; warps of a 2-D or 3-D block are all run
    // (no warp is extrapolated); in a 2-D or 3-D grid the warp level starts over in every block.
    const bool lanes1D = req_.block.x % 32 == 0;
    block1D_ = req_.block.y == 1 && req_.block.z == 1;
    grid1D_ = req_.grid.y == 1 && req_.grid.z == 1;
    if (!lanes1D) {
        st_.laneLevel = false;
        st_.laneLevelOff = "blockDim.x is not a multiple of 32: a warp's lanes span rows";
    }
    if (!block1D_)
        st_.notes = "2-D/3-D block: every warp of the sampled blocks is run";
    else if (!grid1D_)
        st_.notes = "2-D/3-D grid: the warp level starts over in every sampled block";
    snapshot_.emplace(req_);
}

/// One partial run of block b: true when it completed without communicating.
bool ActiveProfiler::runUnit(uint32_t b, std::function<bool(unsigned)> filter, int strict,
                             unsigned threads, unsigned loopLimit) {
    col_.reset(nWarps_, loopLimit);
    state_.threadFilter = std::move(filter);
    state_.aborted = false;
    state_.dependence = false;
    const uint3 bid{static_cast<unsigned>(b % req_.grid.x),
                    static_cast<unsigned>((b / req_.grid.x) % req_.grid.y),
                    static_cast<unsigned>(b / (1ULL * req_.grid.x * req_.grid.y))};
    t_profileStrict = strict;
    runner_.run(state_, bid);
    t_profileStrict = 0;
    ++st_.runs;
    st_.threadsRun += threads;
    if (state_.error != cudaSuccess)
        faulted_ = true;
    return !state_.dependence && !faulted_;
}

void ActiveProfiler::extrapolateWarpAt(uint32_t b, unsigned w) {
    const auto& a = profiled_[profiled_.size() - 3];
    const auto& bb = profiled_[profiled_.size() - 2];
    const auto& c = profiled_[profiled_.size() - 1];
    const long long x = static_cast<long long>(b) * nWarps_ + w;
    result_[b][w] = extrapolateWarp(a.second, bb.second, c.second, a.first, bb.first, c.first, x,
                                    existsMask(w));
    ++st_.warpsExtrapolated;
}

/// The lane level: warp w's lanes run one at a time until their means settle, the rest
/// extrapolated. False when a lane communicated (the lane level is then off for the launch) or a
/// run faulted.
bool ActiveProfiler::profileLanes(uint32_t b, unsigned w, WarpRecords& recs) {
    const unsigned count = laneCount(w);
    std::vector<LaneSequence> lanes(count);
    RunningMeans laneMeans;
    bool laneStopped = false;
    uint32_t extra = 0;
    bool ok = true;
    unsigned last = 0;
    for (unsigned l = 0; l < count; ++l) {
        if (laneStopped) {
            lanes[l] = extrapolateLane(lanes[last - 2], lanes[last - 1], lanes[last], l, last - 2,
                                       last - 1, last);
            extra |= 1u << l;
            ++st_.lanesExtrapolated;
            continue;
        }
        const unsigned tid = w * 32 + l;
        ok = runUnit(b, [tid](unsigned t) { return t == tid; }, 2, 1, opt_.loopIterations);
        if (!ok)
            break;
        for (const WarpRecord& r : col_.perWarp[w])
            lanes[l].push_back({r.key, r.values[l], r.order});
        laneMeans.addUnit(lanes[l]);
        last = l;
        if (l + 1 >= opt_.minUnits && laneMeans.stable(opt_.tolerance) &&
            sameShape(lanes[l - 2], lanes[l - 1]) && sameShape(lanes[l - 1], lanes[l]))
            laneStopped = true;
    }
    if (faulted_)
        return false;
    if (!ok) {
        st_.laneLevel = false;
        st_.laneLevelOff = std::string("lane ") + std::to_string(w * 32) + "+ of block " +
                           std::to_string(b) + " reached " + dependenceName(state_.dependenceKind);
        snapshot_->restore();
        return false;
    }
    recs = zipLanes(lanes);
    for (WarpRecord& r : recs)
        r.extrapolated = (r.mask & extra) != 0;
    return true;
}

/// The warp level: warp w runs alone. False when it communicated (the warp level is then off for
/// the launch) or the run faulted.
bool ActiveProfiler::profileWarp(uint32_t b, unsigned w, WarpRecords& recs) {
    const bool ok =
        runUnit(b, [w](unsigned t) { return t / 32 == w; }, 1, laneCount(w), opt_.loopIterations);
    if (faulted_)
        return false;
    if (!ok) {
        st_.warpLevel = false;
        st_.warpLevelOff = std::string("warp ") + std::to_string(w) + " of block " +
                           std::to_string(b) + " reached " + dependenceName(state_.dependenceKind);
        snapshot_->restore();
        return false;
    }
    recs = std::move(col_.perWarp[w]);
    return true;
}

/// Adds a profiled warp to the warp level's means; stops the warp level once they settle.
void ActiveProfiler::addProfiledWarp(uint32_t b, unsigned w, WarpRecords recs) {
    ++st_.warpsProfiled;
    warpMeans_.addUnit(laneAccesses(recs));
    profiled_.emplace_back(static_cast<long long>(b) * nWarps_ + w, recs);
    result_[b][w] = std::move(recs);
    const std::size_t p = profiled_.size();
    if (block1D_ && p >= opt_.minUnits && warpMeans_.stable(opt_.tolerance) &&
        sameShape(profiled_[p - 3].second, profiled_[p - 2].second) &&
        sameShape(profiled_[p - 2].second, profiled_[p - 1].second)) {
        warpStopped_ = true;
        st_.warpLevelStopped = true;
    }
}

void ActiveProfiler::profileBlock(uint32_t b) {
    result_[b].assign(nWarps_, {});
    if (warpStopped_ && !grid1D_) {
        warpStopped_ = false; // extrapolate within a block only
        profiled_.clear();
        warpMeans_ = RunningMeans{};
    }
    if (warpStopped_) {
        for (unsigned w = 0; w < nWarps_; ++w)
            extrapolateWarpAt(b, w);
        return;
    }
    bool wholeBlock = !st_.warpLevel;
    for (unsigned w = 0; w < nWarps_ && !wholeBlock && !faulted_; ++w) {
        if (warpStopped_) {
            extrapolateWarpAt(b, w);
            continue;
        }
        WarpRecords recs;
        bool done = st_.laneLevel && profileLanes(b, w, recs);
        if (faulted_)
            return;
        if (!done) {
            done = profileWarp(b, w, recs);
            if (faulted_)
                return;
            if (!done) {
                wholeBlock = true;
                break;
            }
        }
        addProfiledWarp(b, w, std::move(recs));
    }
    if (wholeBlock && !faulted_) {
        // Warps of this block depend on each other: the block runs whole, untruncated.
        runUnit(b, {}, 0, n_, 0);
        if (faulted_)
            return;
        result_[b] = col_.perWarp;
        st_.warpsProfiled += nWarps_;
    }
}

void ActiveProfiler::collectRecords() {
    st_.truncatedThreads = col_.truncated;
    st_.laneAccessesProfiled = col_.laneAccesses;
    for (auto& [b, warps] : result_) {
        for (unsigned w = 0; w < warps.size(); ++w) {
            for (const WarpRecord& r : warps[w]) {
                ProfiledRecord pr;
                pr.block = b;
                pr.warp = w;
                pr.key = r.key;
                pr.mask = r.mask;
                pr.extrapolated = r.extrapolated;
                pr.values = r.values;
                prof_.records.push_back(pr);
                st_.laneAccessesTotal += static_cast<uint64_t>(std::popcount(r.mask));
            }
        }
    }
    st_.records = prof_.records.size();
}

std::optional<Profile> ActiveProfiler::run() {
    t_collector = &col_;
    state_.traceState = TraceState::Observe;
    for (uint32_t b : blocks_) {
        if (faulted_)
            break;
        profileBlock(b);
    }
    t_collector = nullptr;
    state_.threadFilter = {};
    state_.aborted = false;
    state_.dependence = false;
    snapshot_->restore();
    if (faulted_) {
        state_.traceState = TraceState::Record;
        return std::nullopt;
    }
    state_.traceState = TraceState::Off;
    collectRecords();
    st_.profileSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    recordProfileStats(st_);
    return std::move(prof_);
}

} // namespace

std::optional<Profile> activeProfile(LaunchState& state, const std::vector<uint32_t>& sampled) {
    return ActiveProfiler(state, sampled).run();
}

} // namespace memplace::emu::detail

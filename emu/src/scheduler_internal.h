// What the scheduler's files share (block_runner.cpp, warp_sync.cpp, launch.cpp,
// active_profile.cpp): the settings, fiber stacks, the per-lane, per-warp and per-launch state,
// and the BlockRunner that runs one block's threads as fibers on one OS thread.
#pragma once

#include "profile_impl.h"
#include "state.h"

#include <boost/context/fiber.hpp>
#include <boost/context/stack_context.hpp>

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <source_location>
#include <string>
#include <utility>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEMPLACE_EMU_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define MEMPLACE_EMU_ASAN 1
#endif
#ifdef MEMPLACE_EMU_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace ctx = boost::context;

namespace memplace::emu::detail {

// ---- settings ---------------------------------------------------------------------------------

/// The MEMPLACE_EMU_* settings, read once (launch.cpp); the setters of memplace/emu/emu.h
/// change them.
struct Settings {
    std::atomic<unsigned> workers{1};
    std::atomic<bool> fatal{true};
    std::atomic<std::size_t> stackBytes{128 * 1024};
    std::atomic<double> spinTimeoutSeconds{10.0};
    Settings();
};
Settings& settings();

// ---- fiber stacks: mmap'd with a guard page, pooled per OS thread ------------------------------

class StackPool {
public:
    ~StackPool();
    ctx::stack_context allocate(std::size_t size);
    void deallocate(ctx::stack_context& sc);

    void* lastBottom = nullptr; ///< the stack allocate() handed out last

private:
    std::vector<std::pair<void*, std::size_t>> free_;
};

struct PooledStack {
    StackPool* pool;
    std::size_t size;
    ctx::stack_context allocate() { return pool->allocate(size); }
    void deallocate(ctx::stack_context& sc) noexcept { pool->deallocate(sc); }
};

// ---- per-lane and per-warp state --------------------------------------------------------------

enum class Status : unsigned char { NotStarted, Running, Ready, Blocked, Yielded, Exited };
enum class Wait : unsigned char { None, Barrier, Collective, Rendezvous };

struct Lane : LaneContext {
    ctx::fiber fiber; ///< the lane's continuation while it is suspended
    ctx::fiber sched; ///< the scheduler's continuation while the lane runs
    Status status = Status::NotStarted;
    Wait wait = Wait::None;
    // collective
    Coll op = Coll::SyncWarp;
    unsigned mask = 0;
    int arg = 0;
    int width = 32;
    unsigned long long value = 0;
    unsigned long long result = 0;
    // barrier
    BarrierKind barrier = BarrierKind::Sync;
    int predicate = 0;
    int barrierResult = 0;
    // rendezvous
    unsigned long long key = 0;
    unsigned long long order = 0;
    long long rendezvousValue = 0;
    WarpGroup group;
    bool stopRequested = false; ///< active profiling's loop truncation: exit after the rendezvous
    // where it waits, for reports
    const char* waitName = nullptr;
    std::source_location location;
#ifdef MEMPLACE_EMU_ASAN
    const void* asanBottom = nullptr;
    std::size_t asanSize = 0;
#endif
};

struct Warp {
    unsigned first = 0; ///< linear id of lane 0
    unsigned count = 0; ///< lanes that exist (the last warp of a block can be partial)
    unsigned live = 0;  ///< lanes that exist and have not exited
    unsigned long long sequence = 0;
    std::array<long long, 32> values{};
};

/// One launch, shared by the OS threads running its blocks.
struct LaunchState {
    const LaunchRequest* request = nullptr;
    LaunchInfo info;
    std::size_t stackBytes = 0;
    std::function<bool(const uint3&)> filter;
    /// Active profiling: only threads (linear id in the block) for which it is true run.
    std::function<bool(unsigned)> threadFilter;
    TraceState traceState = TraceState::Record;
    bool dependence = false; ///< a partial run stopped at communication between threads
    Dependence dependenceKind = Dependence::Barrier;
    std::atomic<unsigned long long> nextBlock{0};
    unsigned long long totalBlocks = 0;
    std::atomic<bool> aborted{false};
    std::mutex faultMutex;
    cudaError_t error = cudaSuccess;
    std::string message;

    void recordFault(cudaError_t e, const std::string& m) {
        std::lock_guard lock(faultMutex);
        if (error == cudaSuccess) {
            error = e;
            message = m;
            report(m);
        }
        aborted = true;
    }
};

/// Thrown inside a lane of a partial run that communicates (active profiling).
struct ProfileStop {
    Dependence what;
};
/// Thrown inside a lane that loop truncation stops: the lane exits.
struct ThreadStop {};

/// Receives the warp groups of active profiling's partial runs (releaseRendezvous calls it).
struct ProfileCollector {
    std::vector<WarpRecords> perWarp; ///< the running block's records, per warp
    unsigned loopLimit = 0;           ///< loop truncation (0: off)
    std::map<std::pair<unsigned, unsigned long long>, unsigned> counts; ///< (thread, key)
    uint64_t truncated = 0;
    uint64_t laneAccesses = 0;

    void reset(unsigned warps, unsigned limit) {
        perWarp.assign(warps, {});
        loopLimit = limit;
        counts.clear();
    }
    /// Returns the lanes to stop.
    unsigned group(unsigned warp, unsigned long long key, unsigned long long order, unsigned mask,
                   const long long* values) {
        WarpRecord r;
        r.key = key;
        r.order = order;
        r.mask = mask;
        unsigned stop = 0;
        for (unsigned m = mask; m != 0; m &= m - 1) {
            const unsigned l = static_cast<unsigned>(std::countr_zero(m));
            r.values[l] = values[l];
            ++laneAccesses;
            if (loopLimit != 0 && ++counts[{warp * 32 + l, key}] >= loopLimit) {
                stop |= 1u << l;
                ++truncated;
            }
        }
        perWarp[warp].push_back(r);
        return stop;
    }
};
inline thread_local ProfileCollector* t_collector = nullptr;
/// Thrown inside a lane to stop the kernel; caught at the lane's entry.
struct LaneFault {
    cudaError_t error;
    std::string message;
};

std::string describeLocation(const std::source_location& loc);
/// "(x,y,z)"
std::string dim3Text(const dim3& d);
/// "0-31, 40, 42-43"
std::string rangesText(const std::vector<unsigned>& ids);
/// "0x0000ffff"
std::string hexMask(unsigned m);

// ---- the block runner: one per OS thread that runs blocks ---------------------------------------

class BlockRunner {
public:
    /// Runs one block to completion (or to a fault). False: the launch must stop.
    bool run(LaunchState& launch, const uint3& bid);

    // Called on lane fibers.
    Lane& current(const char* what);
    void suspend(Lane& lane);
    [[noreturn]] void fault(cudaError_t e, const std::string& what);
    std::string where() const;
    LaunchState* launch() const { return launch_; }

    unsigned barrierWaiting = 0;

private:
    void resume(Lane& lane);
    ctx::fiber laneMain(Lane& lane, ctx::fiber&& scheduler);
    /// Sets up the block's lanes and warps (threads the launch's threadFilter excludes exit).
    void prepareBlock(LaunchState& launch, const uint3& bid);
    /// Runs the warps until every thread exits, the launch aborts or nothing can progress.
    void scheduleBlock(LaunchState& launch);
    bool runWarp(Warp& warp);
    bool releaseCollectives(Warp& warp);
    bool releaseRendezvous(Warp& warp);
    void computeCollective(Warp& warp, unsigned group, Coll op);
    bool releaseBarrier();
    void deadlock(const std::string& why);
    void teardown();
    Lane& lane(const Warp& w, unsigned i) { return lanes_[w.first + i]; }

    StackPool pool_;
    std::vector<Lane> lanes_;
    std::vector<Warp> warps_;
    BlockContext block_{};
    LaunchState* launch_ = nullptr;
    unsigned liveLanes_ = 0;
    bool faulted_ = false;
#ifdef MEMPLACE_EMU_ASAN
    void* schedulerFakeStack_ = nullptr;
    const void* schedulerBottom_ = nullptr;
    std::size_t schedulerSize_ = 0;
#endif
};

inline thread_local BlockRunner* t_runner = nullptr;
/// The calling OS thread's runner (made on first use; it keeps its stacks between blocks).
BlockRunner& runnerForThisThread();

/// Profiles the traced launch `state` actively (active_profile.cpp).
std::optional<Profile> activeProfile(LaunchState& state, const std::vector<uint32_t>& sampled);

} // namespace memplace::emu::detail

// The block scheduler: every CUDA thread of a block is a fiber on one OS thread; barriers, warp
// collectives and warp rendezvous suspend the fiber until their partners arrive. Blocks run
// one after another on the launching thread, or on a pool of OS threads. docs/emulation.md
// explains the rules; the comments here say how they are implemented.
#include "common/env.h"
#include "profile_impl.h"
#include "state.h"

#include <boost/context/fiber.hpp>
#include <boost/context/stack_context.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cxxabi.h>
#include <dlfcn.h>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>
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

namespace memplace::emu {
namespace detail {
namespace {

// ---- settings ---------------------------------------------------------------------------------

struct Settings {
    std::atomic<unsigned> workers{1};
    std::atomic<bool> fatal{true};
    std::atomic<std::size_t> stackBytes{128 * 1024};
    std::atomic<double> spinTimeoutSeconds{10.0};
    Settings() {
        std::vector<std::string> warnings;
        unsigned threads = workers;
        if (env::readNumber("MEMPLACE_EMU_THREADS", threads, warnings) && threads == 0)
            threads = std::max(1u, std::thread::hardware_concurrency());
        workers = threads;
        fatal = env::readSwitch("MEMPLACE_EMU_FATAL", fatal, warnings);
        std::size_t kb = stackBytes / 1024;
        env::readNumber("MEMPLACE_EMU_STACK_KB", kb, warnings);
        stackBytes = kb * 1024;
        double spin = spinTimeoutSeconds;
        env::readNumber("MEMPLACE_EMU_SPIN_TIMEOUT_S", spin, warnings);
        spinTimeoutSeconds = spin;
        for (const std::string& w : warnings)
            std::fprintf(stderr, "memplace emu: %s\n", w.c_str());
    }
};
Settings& settings() {
    static Settings s;
    return s;
}

// ---- fiber stacks: mmap'd with a guard page, pooled per OS thread ------------------------------

class StackPool {
public:
    ~StackPool() {
        for (auto& [p, size] : free_)
            munmap(p, size);
    }
    ctx::stack_context allocate(std::size_t size) {
        void* p = nullptr;
        for (std::size_t i = free_.size(); i-- > 0;) {
            if (free_[i].second == size) {
                p = free_[i].first;
                free_[i] = free_.back();
                free_.pop_back();
                break;
            }
        }
        if (p == nullptr) {
            p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (p == MAP_FAILED)
                throw std::bad_alloc();
            mprotect(p, static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), PROT_NONE); // guard page
        }
        ctx::stack_context sc;
        sc.size = size;
        sc.sp = static_cast<char*>(p) + size;
        lastBottom = p;
        return sc;
    }
    void deallocate(ctx::stack_context& sc) {
        free_.emplace_back(static_cast<char*>(sc.sp) - sc.size, sc.size);
    }

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
thread_local ProfileCollector* t_collector = nullptr;

/// Thrown inside a lane to stop the kernel; caught at the lane's entry.
struct LaneFault {
    cudaError_t error;
    std::string message;
};

std::string describeLocation(const std::source_location& loc) {
    if (loc.file_name() == nullptr || *loc.file_name() == '\0')
        return "?";
    std::string f = loc.file_name();
    return f + ":" + std::to_string(loc.line());
}

std::string dim3Text(const dim3& d) {
    return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

/// "0-31, 40, 42-43"
std::string rangesText(const std::vector<unsigned>& ids) {
    std::string out;
    for (std::size_t i = 0; i < ids.size();) {
        std::size_t j = i;
        while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1)
            ++j;
        if (!out.empty())
            out += ", ";
        out += std::to_string(ids[i]);
        if (j > i)
            out += "-" + std::to_string(ids[j]);
        i = j + 1;
    }
    return out;
}

std::string hexMask(unsigned m) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", m);
    return buf;
}

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

thread_local BlockRunner* t_runner = nullptr;

BlockRunner& runnerForThisThread() {
    thread_local std::unique_ptr<BlockRunner> runner;
    if (!runner)
        runner = std::make_unique<BlockRunner>();
    return *runner;
}

std::string BlockRunner::where() const {
    return "kernel '" + launch_->info.kernel + "' block " + dim3Text(dim3(block_.index)) +
           " (grid " + dim3Text(block_.grid) + ", block " + dim3Text(block_.dim) + ")";
}

Lane& BlockRunner::current(const char* what) {
    if (t_lane == nullptr) {
        report(std::string(what) + " called outside a kernel");
        std::abort();
    }
    return *static_cast<Lane*>(t_lane);
}

void BlockRunner::fault(cudaError_t e, const std::string& what) {
    throw LaneFault{e, what};
}

void BlockRunner::suspend(Lane& l) {
#ifdef MEMPLACE_EMU_ASAN
    void* fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, schedulerBottom_, schedulerSize_);
#endif
    l.sched = std::move(l.sched).resume();
#ifdef MEMPLACE_EMU_ASAN
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

void BlockRunner::resume(Lane& l) {
    if (l.status == Status::NotStarted) {
        l.fiber = ctx::fiber(std::allocator_arg, PooledStack{&pool_, launch_->stackBytes},
                             [this, &l](ctx::fiber&& s) { return laneMain(l, std::move(s)); });
#ifdef MEMPLACE_EMU_ASAN
        l.asanBottom = pool_.lastBottom;
        l.asanSize = launch_->stackBytes;
#endif
    }
    l.status = Status::Running;
    t_lane = &l;
#ifdef MEMPLACE_EMU_ASAN
    __sanitizer_start_switch_fiber(&schedulerFakeStack_, l.asanBottom, l.asanSize);
#endif
    l.fiber = std::move(l.fiber).resume();
#ifdef MEMPLACE_EMU_ASAN
    __sanitizer_finish_switch_fiber(schedulerFakeStack_, nullptr, nullptr);
#endif
    t_lane = nullptr;
}

ctx::fiber BlockRunner::laneMain(Lane& l, ctx::fiber&& scheduler) {
#ifdef MEMPLACE_EMU_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &schedulerBottom_, &schedulerSize_);
#endif
    l.sched = std::move(scheduler);
    try {
        launch_->request->invoke(launch_->request->closure);
    } catch (const ctx::detail::forced_unwind&) {
        throw;
    } catch (const ThreadStop&) {
        // loop truncation: the lane exits
    } catch (const ProfileStop& p) {
        faulted_ = true;
        launch_->dependence = true;
        launch_->dependenceKind = p.what;
        launch_->aborted = true;
    } catch (const LaneFault& f) {
        faulted_ = true;
        launch_->recordFault(f.error,
                             where() + ", thread " + dim3Text(dim3(l.tid)) + ": " + f.message);
    } catch (const std::exception& e) {
        faulted_ = true;
        launch_->recordFault(cudaErrorLaunchFailure,
                             where() + ", thread " + dim3Text(dim3(l.tid)) +
                                 ": a C++ exception left the kernel: " + e.what());
    } catch (...) {
        faulted_ = true;
        launch_->recordFault(cudaErrorLaunchFailure, where() + ", thread " + dim3Text(dim3(l.tid)) +
                                                         ": a C++ exception left the kernel");
    }
    l.status = Status::Exited;
    l.wait = Wait::None;
    warps_[l.warpId].live &= ~(1u << l.laneId);
    --liveLanes_;
#ifdef MEMPLACE_EMU_ASAN
    __sanitizer_start_switch_fiber(nullptr, schedulerBottom_, schedulerSize_);
#endif
    return std::move(l.sched);
}

bool BlockRunner::run(LaunchState& launch, const uint3& bid) {
    launch_ = &launch;
    const LaunchRequest& req = *launch.request;
    block_.index = bid;
    block_.dim = req.block;
    block_.grid = req.grid;
    block_.linear = bid.x + static_cast<unsigned long long>(req.grid.x) *
                                (bid.y + static_cast<unsigned long long>(req.grid.y) * bid.z);
    const unsigned n = req.block.x * req.block.y * req.block.z;
    if (lanes_.size() != n) {
        lanes_.clear();
        lanes_.resize(n);
    }
    const unsigned nWarps = (n + 31) / 32;
    warps_.assign(nWarps, Warp{});
    for (unsigned w = 0; w < nWarps; ++w) {
        Warp& wp = warps_[w];
        wp.first = w * 32;
        wp.count = std::min(32u, n - w * 32);
        wp.live = wp.count == 32 ? ~0u : ((1u << wp.count) - 1);
    }
    unsigned tid = 0;
    for (unsigned z = 0; z < req.block.z; ++z) {
        for (unsigned y = 0; y < req.block.y; ++y) {
            for (unsigned x = 0; x < req.block.x; ++x, ++tid) {
                Lane& l = lanes_[tid];
                l.tid = uint3{x, y, z};
                l.linearTid = tid;
                l.laneId = tid % 32;
                l.warpId = tid / 32;
                l.block = &block_;
                l.status = Status::NotStarted;
                l.wait = Wait::None;
            }
        }
    }
    liveLanes_ = n;
    if (launch.threadFilter) {
        for (Lane& l : lanes_) {
            if (!launch.threadFilter(l.linearTid)) {
                l.status = Status::Exited;
                warps_[l.warpId].live &= ~(1u << l.laneId);
                --liveLanes_;
            }
        }
    }
    barrierWaiting = 0;
    faulted_ = false;
    BlockRunner* previous = t_runner;
    t_runner = this;

    unsigned long long idleRounds = 0;
    auto idleSince = std::chrono::steady_clock::now();
    while (!launch.aborted) {
        bool progress = false;
        bool yielded = false;
        for (Warp& w : warps_) {
            progress |= runWarp(w);
            if (launch.aborted)
                break;
        }
        if (launch.aborted || liveLanes_ == 0)
            break;
        if (barrierWaiting == liveLanes_) {
            if (!releaseBarrier())
                break;
            continue;
        }
        for (Lane& l : lanes_) {
            if (l.status == Status::Yielded) {
                l.status = Status::Ready;
                yielded = true;
            }
        }
        if (!yielded) {
            deadlock("deadlock: no thread can continue");
            break;
        }
        if (progress) {
            idleRounds = 0;
            continue;
        }
        if (idleRounds++ == 0)
            idleSince = std::chrono::steady_clock::now();
        if ((idleRounds & 1023) == 0) {
            double s =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - idleSince).count();
            if (s > settings().spinTimeoutSeconds) {
                deadlock("deadlock: threads spin (atomicCAS / atomicExch / __nanosleep) without "
                         "progress for " +
                         std::to_string(static_cast<int>(s)) +
                         " s; a block waiting for another block cannot progress when blocks run "
                         "one after "
                         "another");
                break;
            }
        }
    }
    teardown();
    t_runner = previous;
    return !faulted_ && !launch.aborted;
}

bool BlockRunner::runWarp(Warp& w) {
    bool progress = false;
    for (;;) {
        for (unsigned i = 0; i < w.count; ++i) {
            Lane& l = lane(w, i);
            if (l.status == Status::Ready || l.status == Status::NotStarted) {
                resume(l);
                if (l.status != Status::Yielded)
                    progress = true;
                if (launch_->aborted)
                    return progress;
            }
        }
        if (releaseCollectives(w)) {
            progress = true;
            continue;
        }
        bool anyYielded = false;
        for (unsigned i = 0; i < w.count; ++i)
            anyYielded |= lane(w, i).status == Status::Yielded;
        if (!anyYielded && releaseRendezvous(w)) {
            progress = true;
            continue;
        }
        return progress;
    }
}

bool BlockRunner::releaseCollectives(Warp& w) {
    bool released = false;
    unsigned considered = 0;
    for (unsigned i = 0; i < w.count; ++i) {
        Lane& l = lane(w, i);
        if (l.status != Status::Blocked || l.wait != Wait::Collective || ((considered >> i) & 1u))
            continue;
        const unsigned group = l.mask & w.live;
        bool complete = true;
        for (unsigned g = group; g != 0; g &= g - 1) {
            Lane& m = lane(w, static_cast<unsigned>(std::countr_zero(g)));
            if (m.status != Status::Blocked || m.wait != Wait::Collective || m.op != l.op ||
                m.mask != l.mask) {
                complete = false;
                break;
            }
        }
        if (!complete) {
            considered |= 1u << i;
            continue;
        }
        considered |= group;
        computeCollective(w, group, l.op);
        for (unsigned g = group; g != 0; g &= g - 1) {
            Lane& m = lane(w, static_cast<unsigned>(std::countr_zero(g)));
            m.status = Status::Ready;
            m.wait = Wait::None;
        }
        released = true;
    }
    return released;
}

void BlockRunner::computeCollective(Warp& w, unsigned group, Coll op) {
    auto each = [&](auto&& f) {
        for (unsigned g = group; g != 0; g &= g - 1)
            f(static_cast<unsigned>(std::countr_zero(g)));
    };
    switch (op) {
    case Coll::SyncWarp:
        return;
    case Coll::Shfl:
    case Coll::ShflUp:
    case Coll::ShflDown:
    case Coll::ShflXor:
        each([&](unsigned i) {
            Lane& m = lane(w, i);
            const int width = m.width;
            const int id = static_cast<int>(i);
            const int inGroup = id & (width - 1);
            int src = id;
            switch (op) {
            case Coll::Shfl:
                src = (id & ~(width - 1)) | (m.arg & (width - 1));
                break;
            case Coll::ShflUp:
                src = inGroup >= m.arg ? id - m.arg : id;
                break;
            case Coll::ShflDown:
                src = inGroup + m.arg < width ? id + m.arg : id;
                break;
            default:
                src = id ^ m.arg;
                if (src >= ((id / width) + 1) * width)
                    src = id;
                break;
            }
            if (src < 0 || src >= 32 || ((group >> src) & 1u) == 0)
                src = id; // inactive source
            m.result = lane(w, static_cast<unsigned>(src)).value;
        });
        return;
    case Coll::Ballot:
    case Coll::Any:
    case Coll::All: {
        unsigned bits = 0;
        each([&](unsigned i) { bits |= (lane(w, i).value != 0 ? 1u : 0u) << i; });
        unsigned long long r = op == Coll::Ballot ? bits
                               : op == Coll::Any  ? (bits != 0)
                                                  : (bits == group);
        each([&](unsigned i) { lane(w, i).result = r; });
        return;
    }
    case Coll::MatchAny:
        each([&](unsigned i) {
            unsigned same = 0;
            for (unsigned g = group; g != 0; g &= g - 1) {
                unsigned j = static_cast<unsigned>(std::countr_zero(g));
                if (lane(w, j).value == lane(w, i).value)
                    same |= 1u << j;
            }
            lane(w, i).result = same;
        });
        return;
    case Coll::MatchAll: {
        bool all = true;
        const unsigned long long v = lane(w, static_cast<unsigned>(std::countr_zero(group))).value;
        each([&](unsigned i) { all = all && lane(w, i).value == v; });
        each([&](unsigned i) { lane(w, i).result = all ? group : 0; });
        return;
    }
    default: {
        unsigned long long acc = 0;
        bool first = true;
        each([&](unsigned i) {
            unsigned long long v = lane(w, i).value & 0xffffffffULL;
            if (first) {
                acc = v;
                first = false;
                return;
            }
            switch (op) {
            case Coll::ReduceAdd:
                acc = (acc + v) & 0xffffffffULL;
                break;
            case Coll::ReduceMinU:
                acc = std::min(acc, v);
                break;
            case Coll::ReduceMaxU:
                acc = std::max(acc, v);
                break;
            case Coll::ReduceMinS:
                acc = static_cast<unsigned>(std::min(static_cast<int>(acc), static_cast<int>(v)));
                break;
            case Coll::ReduceMaxS:
                acc = static_cast<unsigned>(std::max(static_cast<int>(acc), static_cast<int>(v)));
                break;
            case Coll::ReduceAnd:
                acc &= v;
                break;
            case Coll::ReduceOr:
                acc |= v;
                break;
            case Coll::ReduceXor:
                acc ^= v;
                break;
            default:
                break;
            }
        });
        // Sign-extend so that the int overloads read back their value.
        unsigned long long r =
            static_cast<unsigned long long>(static_cast<long long>(static_cast<int>(acc)));
        each([&](unsigned i) { lane(w, i).result = r; });
        return;
    }
    }
}

bool BlockRunner::releaseRendezvous(Warp& w) {
    Lane* best = nullptr;
    for (unsigned i = 0; i < w.count; ++i) {
        Lane& l = lane(w, i);
        if (l.status == Status::Blocked && l.wait == Wait::Rendezvous &&
            (best == nullptr || l.order < best->order)) {
            best = &l;
        }
    }
    if (best == nullptr)
        return false;
    const unsigned long long key = best->key;
    unsigned group = 0;
    for (unsigned i = 0; i < w.count; ++i) {
        Lane& l = lane(w, i);
        if (l.status == Status::Blocked && l.wait == Wait::Rendezvous && l.key == key) {
            group |= 1u << i;
            w.values[i] = l.rendezvousValue;
        }
    }
    WarpGroup g;
    g.mask = group;
    g.leader = static_cast<unsigned>(std::countr_zero(group));
    g.warp = static_cast<unsigned>(&w - warps_.data());
    g.sequence = w.sequence++;
    g.values = w.values.data();
    const unsigned stop = t_collector != nullptr
                              ? t_collector->group(g.warp, key, best->order, group, w.values.data())
                              : 0u;
    for (unsigned m = group; m != 0; m &= m - 1) {
        const unsigned i = static_cast<unsigned>(std::countr_zero(m));
        Lane& l = lane(w, i);
        l.stopRequested = ((stop >> i) & 1u) != 0;
        l.group = g;
        l.group.isLeader = i == g.leader;
        l.status = Status::Ready;
        l.wait = Wait::None;
    }
    return true;
}

bool BlockRunner::releaseBarrier() {
    const Lane* first = nullptr;
    long long count = 0;
    bool all = true, any = false;
    for (Lane& l : lanes_) {
        if (l.status == Status::Exited)
            continue;
        if (first == nullptr)
            first = &l;
        if (l.barrier != first->barrier) {
            faulted_ = true;
            launch_->recordFault(cudaErrorLaunchFailure,
                                 where() + ": threads wait at different kinds of block barrier: " +
                                     first->waitName + " at " + describeLocation(first->location) +
                                     " and " + l.waitName + " at " + describeLocation(l.location));
            return false;
        }
        count += l.predicate != 0;
        all = all && l.predicate != 0;
        any = any || l.predicate != 0;
    }
    int result = 0;
    switch (first->barrier) {
    case BarrierKind::Sync:
        result = 0;
        break;
    case BarrierKind::Count:
        result = static_cast<int>(count);
        break;
    case BarrierKind::And:
        result = all;
        break;
    case BarrierKind::Or:
        result = any;
        break;
    }
    for (Lane& l : lanes_) {
        if (l.status == Status::Exited)
            continue;
        l.barrierResult = result;
        l.status = Status::Ready;
        l.wait = Wait::None;
    }
    barrierWaiting = 0;
    return true;
}

void BlockRunner::deadlock(const std::string& why) {
    std::ostringstream out;
    out << where() << ": " << why << "\n";
    // Threads at the block barrier, by location.
    std::vector<std::pair<std::string, std::vector<unsigned>>> groups;
    auto add = [&](const std::string& what, unsigned tid) {
        for (auto& [k, v] : groups) {
            if (k == what) {
                v.push_back(tid);
                return;
            }
        }
        groups.push_back({what, {tid}});
    };
    std::vector<unsigned> exited;
    for (const Lane& l : lanes_) {
        switch (l.status) {
        case Status::Exited:
            exited.push_back(l.linearTid);
            break;
        case Status::Blocked:
            if (l.wait == Wait::Barrier) {
                add(std::string("waiting at ") + l.waitName + " (" + describeLocation(l.location) +
                        ")",
                    l.linearTid);
            } else if (l.wait == Wait::Collective) {
                add(std::string("waiting at ") + l.waitName + "(mask " + hexMask(l.mask) + ") (" +
                        describeLocation(l.location) + "), warp " + std::to_string(l.warpId) +
                        ": its partners " + hexMask(l.mask & warps_[l.warpId].live) +
                        " never all arrive",
                    l.linearTid);
            } else {
                add(std::string("waiting at ") + l.waitName, l.linearTid);
            }
            break;
        case Status::Yielded:
        case Status::Ready:
            add("spinning", l.linearTid);
            break;
        default:
            add("not started", l.linearTid);
            break;
        }
    }
    for (auto& [what, tids] : groups)
        out << "  threads " << rangesText(tids) << ": " << what << "\n";
    if (!exited.empty())
        out << "  threads " << rangesText(exited) << ": exited\n";
    std::string text = out.str();
    if (!text.empty() && text.back() == '\n')
        text.pop_back();
    faulted_ = true;
    launch_->recordFault(cudaErrorLaunchFailure, text);
}

void BlockRunner::teardown() {
    for (Lane& l : lanes_) {
        if (l.fiber) {
            // Unwinds the suspended lane's stack (boost throws forced_unwind inside it).
            t_lane = &l;
#ifdef MEMPLACE_EMU_ASAN
            __sanitizer_start_switch_fiber(&schedulerFakeStack_, l.asanBottom, l.asanSize);
#endif
            l.fiber = ctx::fiber{};
#ifdef MEMPLACE_EMU_ASAN
            __sanitizer_finish_switch_fiber(schedulerFakeStack_, nullptr, nullptr);
#endif
            t_lane = nullptr;
        }
        l.sched = ctx::fiber{};
        l.status = Status::NotStarted;
    }
}

// ---- the pool of OS threads -------------------------------------------------------------------

class ThreadPool {
public:
    ~ThreadPool() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        for (auto& t : threads_)
            t.join();
    }
    /// Runs `job` on the calling thread and on `helpers` pool threads; returns when all are done.
    void run(unsigned helpers, const std::function<void()>& job) {
        std::unique_lock lock(mutex_);
        while (threads_.size() < helpers) {
            unsigned index = static_cast<unsigned>(threads_.size());
            threads_.emplace_back([this, index] { loop(index); });
        }
        job_ = &job;
        participants_ = helpers;
        active_ = helpers;
        ++generation_;
        lock.unlock();
        wake_.notify_all();
        job();
        lock.lock();
        done_.wait(lock, [this] { return active_ == 0; });
        job_ = nullptr;
    }

private:
    void loop(unsigned index) {
        unsigned long long seen = 0;
        std::unique_lock lock(mutex_);
        for (;;) {
            wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_)
                return;
            seen = generation_;
            if (index >= participants_)
                continue;
            const std::function<void()>* job = job_;
            lock.unlock();
            (*job)();
            lock.lock();
            if (--active_ == 0)
                done_.notify_all();
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_, done_;
    std::vector<std::thread> threads_;
    const std::function<void()>* job_ = nullptr;
    unsigned participants_ = 0;
    unsigned active_ = 0;
    unsigned long long generation_ = 0;
    bool stop_ = false;
};

ThreadPool& pool() {
    static ThreadPool* p =
        new ThreadPool; // never destroyed: threads may outlive static destruction order
    return *p;
}
std::mutex g_poolLaunch; // one multi-threaded launch at a time

// ---- names, hooks ------------------------------------------------------------------------------

std::string kernelName(const LaunchRequest& r) {
    static std::mutex m;
    static std::map<const void*, std::string> cache;
    std::lock_guard lock(m);
    auto it = cache.find(r.func);
    if (it != cache.end())
        return it->second;
    std::string name = r.text != nullptr ? r.text : "?";
    Dl_info info{};
    if (r.func != nullptr && dladdr(r.func, &info) != 0 && info.dli_sname != nullptr) {
        int status = 0;
        char* demangled = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
        name = status == 0 && demangled != nullptr ? demangled : info.dli_sname;
        std::free(demangled);
    }
    cache[r.func] = name;
    return name;
}

std::mutex g_hooks;
std::function<void(const LaunchInfo&, bool)> g_observer;
std::function<bool(const uint3&)> g_filter;
std::atomic<unsigned long long> g_launches{0};
thread_local LaunchInfo t_currentLaunch;

cudaError_t launchError(const LaunchRequest& r, cudaError_t e, const std::string& why) {
    report("launch of '" + kernelName(r) + "' failed: " + why + " (" + cudaGetErrorName(e) + ")");
    return fail(e);
}

// ---- active profiling ---------------------------------------------------------------------------

thread_local std::optional<std::vector<uint32_t>> t_profileRequest;
thread_local std::optional<Profile> t_lastProfile;

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

/// Profiles the traced launch `state` actively (docs/emulation.md, "Active profiling"): the
/// sampled blocks' warps one after another, each warp's lanes one after another, until the
/// running means settle; the rest is extrapolated. Memory is as before when it returns.
/// nullopt: a partial run faulted (the launch then runs traced in full and reports the fault).
std::optional<Profile> activeProfile(LaunchState& state, const std::vector<uint32_t>& sampled) {
    const auto t0 = std::chrono::steady_clock::now();
    const ProfileOptions opt = profileOptions();
    const LaunchRequest& req = *state.request;
    const unsigned n = req.block.x * req.block.y * req.block.z;
    const unsigned nWarps = (n + 31) / 32;
    std::vector<uint32_t> blocks = sampled;
    if (blocks.empty()) {
        for (unsigned long long b = 0; b < state.totalBlocks; ++b)
            blocks.push_back(static_cast<uint32_t>(b));
    }
    Profile prof;
    ProfileStats& st = prof.stats;
    st.launchId = state.info.id;
    st.kernel = state.info.kernel;
    st.blocks = blocks.size();
    st.threadsTotal = st.blocks * n;
    st.warpsTotal = st.blocks * nWarps;

    // Extrapolation is affine in the lane id and in the global warp index: exact for indices
    // affine in threadIdx.x and blockIdx.x. A warp whose lanes span rows of the block
    // (blockDim.x not a multiple of 32) is run whole; warps of a 2-D or 3-D block are all run
    // (no warp is extrapolated); in a 2-D or 3-D grid the warp level starts over in every block.
    const bool lanes1D = req.block.x % 32 == 0;
    const bool block1D = req.block.y == 1 && req.block.z == 1;
    const bool grid1D = req.grid.y == 1 && req.grid.z == 1;
    if (!lanes1D) {
        st.laneLevel = false;
        st.laneLevelOff = "blockDim.x is not a multiple of 32: a warp's lanes span rows";
    }
    if (!block1D)
        st.notes = "2-D/3-D block: every warp of the sampled blocks is run";
    else if (!grid1D)
        st.notes = "2-D/3-D grid: the warp level starts over in every sampled block";

    const MemorySnapshot snapshot(req);
    BlockRunner& runner = runnerForThisThread();
    ProfileCollector col;
    t_collector = &col;
    state.traceState = TraceState::Observe;
    bool faulted = false;

    auto laneCount = [&](unsigned w) { return std::min(32u, n - w * 32); };
    auto existsMask = [&](unsigned w) {
        const unsigned c = laneCount(w);
        return c == 32 ? ~0u : (1u << c) - 1;
    };
    // One partial run of block b: true when it completed without communicating.
    auto runUnit = [&](uint32_t b, std::function<bool(unsigned)> filter, int strict,
                       unsigned threads, unsigned loopLimit) {
        col.reset(nWarps, loopLimit);
        state.threadFilter = std::move(filter);
        state.aborted = false;
        state.dependence = false;
        const uint3 bid{static_cast<unsigned>(b % req.grid.x),
                        static_cast<unsigned>((b / req.grid.x) % req.grid.y),
                        static_cast<unsigned>(b / (1ULL * req.grid.x * req.grid.y))};
        t_profileStrict = strict;
        runner.run(state, bid);
        t_profileStrict = 0;
        ++st.runs;
        st.threadsRun += threads;
        if (state.error != cudaSuccess)
            faulted = true;
        return !state.dependence && !faulted;
    };

    std::map<uint32_t, std::vector<WarpRecords>> result;     // block -> warps
    std::vector<std::pair<long long, WarpRecords>> profiled; // global warp index, records
    RunningMeans warpMeans;
    bool warpStopped = false;
    std::set<std::pair<uint32_t, unsigned>> extrapolatedWarps;
    std::map<std::pair<uint32_t, unsigned>, uint32_t> extrapolatedLanes;

    auto extrapolateWarpAt = [&](uint32_t b, unsigned w) {
        const auto& a = profiled[profiled.size() - 3];
        const auto& bb = profiled[profiled.size() - 2];
        const auto& c = profiled[profiled.size() - 1];
        const long long x = static_cast<long long>(b) * nWarps + w;
        result[b][w] = extrapolateWarp(a.second, bb.second, c.second, a.first, bb.first, c.first, x,
                                       existsMask(w));
        extrapolatedWarps.insert({b, w});
        ++st.warpsExtrapolated;
    };

    for (uint32_t b : blocks) {
        if (faulted)
            break;
        result[b].assign(nWarps, {});
        if (warpStopped && !grid1D) {
            warpStopped = false; // extrapolate within a block only
            profiled.clear();
            warpMeans = RunningMeans{};
        }
        if (warpStopped) {
            for (unsigned w = 0; w < nWarps; ++w)
                extrapolateWarpAt(b, w);
            continue;
        }
        bool wholeBlock = !st.warpLevel;
        for (unsigned w = 0; w < nWarps && !wholeBlock && !faulted; ++w) {
            if (warpStopped) {
                extrapolateWarpAt(b, w);
                continue;
            }
            const unsigned count = laneCount(w);
            WarpRecords recs;
            bool done = false;
            if (st.laneLevel) {
                std::vector<LaneSequence> lanes(count);
                RunningMeans laneMeans;
                bool laneStopped = false;
                uint32_t extra = 0;
                bool ok = true;
                unsigned last = 0;
                for (unsigned l = 0; l < count; ++l) {
                    if (laneStopped) {
                        lanes[l] = extrapolateLane(lanes[last - 2], lanes[last - 1], lanes[last], l,
                                                   last - 2, last - 1, last);
                        extra |= 1u << l;
                        ++st.lanesExtrapolated;
                        continue;
                    }
                    const unsigned tid = w * 32 + l;
                    ok = runUnit(
                        b, [tid](unsigned t) { return t == tid; }, 2, 1, opt.loopIterations);
                    if (!ok)
                        break;
                    for (const WarpRecord& r : col.perWarp[w])
                        lanes[l].push_back({r.key, r.values[l], r.order});
                    laneMeans.addUnit(lanes[l]);
                    last = l;
                    if (l + 1 >= opt.minUnits && laneMeans.stable(opt.tolerance) &&
                        sameShape(lanes[l - 2], lanes[l - 1]) && sameShape(lanes[l - 1], lanes[l]))
                        laneStopped = true;
                }
                if (faulted)
                    break;
                if (ok) {
                    recs = zipLanes(lanes);
                    for (WarpRecord& r : recs)
                        r.extrapolated = (r.mask & extra) != 0;
                    if (extra != 0)
                        extrapolatedLanes[{b, w}] = extra;
                    done = true;
                } else {
                    st.laneLevel = false;
                    st.laneLevelOff = std::string("lane ") + std::to_string(w * 32) +
                                      "+ of block " + std::to_string(b) + " reached " +
                                      dependenceName(state.dependenceKind);
                    snapshot.restore();
                }
            }
            if (!done) {
                const bool ok = runUnit(
                    b, [w](unsigned t) { return t / 32 == w; }, 1, count, opt.loopIterations);
                if (faulted)
                    break;
                if (!ok) {
                    st.warpLevel = false;
                    st.warpLevelOff = std::string("warp ") + std::to_string(w) + " of block " +
                                      std::to_string(b) + " reached " +
                                      dependenceName(state.dependenceKind);
                    snapshot.restore();
                    wholeBlock = true;
                    break;
                }
                recs = std::move(col.perWarp[w]);
            }
            ++st.warpsProfiled;
            warpMeans.addUnit(laneAccesses(recs));
            profiled.emplace_back(static_cast<long long>(b) * nWarps + w, recs);
            result[b][w] = std::move(recs);
            const std::size_t p = profiled.size();
            if (block1D && p >= opt.minUnits && warpMeans.stable(opt.tolerance) &&
                sameShape(profiled[p - 3].second, profiled[p - 2].second) &&
                sameShape(profiled[p - 2].second, profiled[p - 1].second)) {
                warpStopped = true;
                st.warpLevelStopped = true;
            }
        }
        if (wholeBlock && !faulted) {
            // Warps of this block depend on each other: the block runs whole, untruncated.
            runUnit(b, {}, 0, n, 0);
            if (faulted)
                break;
            result[b] = col.perWarp;
            st.warpsProfiled += nWarps;
        }
    }
    t_collector = nullptr;
    state.threadFilter = {};
    state.aborted = false;
    state.dependence = false;
    snapshot.restore();
    if (faulted) {
        state.traceState = TraceState::Record;
        return std::nullopt;
    }
    state.traceState = TraceState::Off;
    st.truncatedThreads = col.truncated;
    st.laneAccessesProfiled = col.laneAccesses;
    for (auto& [b, warps] : result) {
        for (unsigned w = 0; w < warps.size(); ++w) {
            for (const WarpRecord& r : warps[w]) {
                ProfiledRecord pr;
                pr.block = b;
                pr.warp = w;
                pr.key = r.key;
                pr.mask = r.mask;
                pr.extrapolated = r.extrapolated;
                pr.values = r.values;
                prof.records.push_back(pr);
                st.laneAccessesTotal += static_cast<uint64_t>(std::popcount(r.mask));
            }
        }
    }
    st.records = prof.records.size();
    st.profileSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    recordProfileStats(st);
    return prof;
}

} // namespace

// ---- the launch
// ----------------------------------------------------------------------------------

cudaError_t launch(const LaunchRequest& r) {
    if (t_lane != nullptr) {
        deviceFault(cudaErrorNotSupported,
                    "a kernel launched a kernel (dynamic parallelism is not emulated)");
    }
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    if (cudaError_t e = stickyError(); e != cudaSuccess)
        return fail(e);
    cudaDeviceProp prop{};
    int maxDynamic = 48 * 1024;
    {
        Device& d = device();
        std::lock_guard lock(d.mutex);
        prop = d.prop;
        auto it = d.funcs.find(r.func);
        if (it != d.funcs.end())
            maxDynamic = it->second.maxDynamicSharedBytes;
        maxDynamic = std::min<int>(maxDynamic, static_cast<int>(prop.sharedMemPerBlockOptin));
    }
    const unsigned long long threads = 1ULL * r.block.x * r.block.y * r.block.z;
    if (r.block.x == 0 || r.block.y == 0 || r.block.z == 0 || r.grid.x == 0 || r.grid.y == 0 ||
        r.grid.z == 0) {
        return launchError(r, cudaErrorInvalidConfiguration, "a grid or block dimension is 0");
    }
    if (threads > static_cast<unsigned long long>(prop.maxThreadsPerBlock) ||
        r.block.x > static_cast<unsigned>(prop.maxThreadsDim[0]) ||
        r.block.y > static_cast<unsigned>(prop.maxThreadsDim[1]) ||
        r.block.z > static_cast<unsigned>(prop.maxThreadsDim[2])) {
        return launchError(r, cudaErrorInvalidConfiguration,
                           "block " + dim3Text(r.block) + " has " + std::to_string(threads) +
                               " threads; the device allows " +
                               std::to_string(prop.maxThreadsPerBlock) + " per block and " +
                               std::to_string(prop.maxThreadsDim[0]) + "x" +
                               std::to_string(prop.maxThreadsDim[1]) + "x" +
                               std::to_string(prop.maxThreadsDim[2]));
    }
    if (r.grid.x > static_cast<unsigned>(prop.maxGridSize[0]) ||
        r.grid.y > static_cast<unsigned>(prop.maxGridSize[1]) ||
        r.grid.z > static_cast<unsigned>(prop.maxGridSize[2])) {
        return launchError(r, cudaErrorInvalidConfiguration,
                           "grid " + dim3Text(r.grid) + " exceeds the device's grid size");
    }
    if (r.sharedBytes > static_cast<std::size_t>(maxDynamic)) {
        return launchError(
            r, cudaErrorInvalidValue,
            std::to_string(r.sharedBytes) + " bytes of dynamic shared memory exceed the kernel's " +
                std::to_string(maxDynamic) +
                " (cudaFuncAttributeMaxDynamicSharedMemorySize; the device allows up to " +
                std::to_string(prop.sharedMemPerBlockOptin) + ")");
    }
    if (r.stream != nullptr && r.stream != cudaStreamLegacy && r.stream != cudaStreamPerThread) {
        cudaStreamAttrValue v;
        if (cudaStreamGetAttribute(r.stream, cudaStreamAttributeSynchronizationPolicy, &v) !=
            cudaSuccess) {
            return launchError(r, cudaErrorInvalidResourceHandle,
                               "the stream is not a live stream");
        }
    }

    LaunchState state;
    state.request = &r;
    state.info.id = ++g_launches;
    state.info.kernel = kernelName(r);
    state.info.grid = r.grid;
    state.info.block = r.block;
    state.info.sharedBytes = r.sharedBytes;
    state.stackBytes = settings().stackBytes;
    state.totalBlocks = 1ULL * r.grid.x * r.grid.y * r.grid.z;
    std::function<void(const LaunchInfo&, bool)> observer;
    {
        std::lock_guard lock(g_hooks);
        observer = g_observer;
        state.filter = g_filter;
    }
    t_currentLaunch = state.info;
    if (observer)
        observer(state.info, true);

    // A traced launch the runtime announced: with MEMPLACE_PROFILE=active it is profiled first
    // (memory restored afterwards), then runs untraced.
    std::optional<Profile> profile;
    if (t_profileRequest) {
        std::vector<uint32_t> sampled = std::move(*t_profileRequest);
        t_profileRequest.reset();
        if (profileOptions().mode == ProfileMode::Active)
            profile = activeProfile(state, sampled);
    }

    auto work = [&state, &r] {
        BlockRunner& runner = runnerForThisThread();
        for (;;) {
            if (state.aborted)
                return;
            unsigned long long b = state.nextBlock.fetch_add(1);
            if (b >= state.totalBlocks)
                return;
            uint3 bid{static_cast<unsigned>(b % r.grid.x),
                      static_cast<unsigned>((b / r.grid.x) % r.grid.y),
                      static_cast<unsigned>(b / (1ULL * r.grid.x * r.grid.y))};
            if (state.filter && !state.filter(bid))
                continue;
            if (!runner.run(state, bid))
                return;
        }
    };
    const unsigned workers = settings().workers;
    if (workers <= 1 || state.totalBlocks <= 1) {
        work();
    } else {
        std::lock_guard lock(g_poolLaunch);
        const unsigned helpers =
            static_cast<unsigned>(std::min<unsigned long long>(workers - 1, state.totalBlocks - 1));
        std::function<void()> job = [&] { work(); };
        pool().run(helpers, job);
    }

    if (profile)
        t_lastProfile = std::move(profile);
    if (observer)
        observer(state.info, false);
    t_currentLaunch = state.info;
    if (state.error != cudaSuccess) {
        if (settings().fatal) {
            report(
                "aborting (MEMPLACE_EMU_FATAL=0 makes kernel errors CUDA's sticky errors instead)");
            std::abort();
        }
        setStickyError(state.error);
        return state.error;
    }
    return cudaSuccess;
}

// ---- calls from lanes
// ----------------------------------------------------------------------------

unsigned long long warpCollective(Coll op, unsigned mask, unsigned long long value, int arg,
                                  int width, const char* name, const std::source_location& loc) {
    BlockRunner* r = t_runner;
    if (r == nullptr || t_lane == nullptr) {
        report(std::string(name) + " called outside a kernel");
        std::abort();
    }
    if (t_profileStrict >= 2)
        profileDependence(Dependence::Collective);
    Lane& l = r->current(name);
    if (((mask >> l.laneId) & 1u) == 0) {
        r->fault(cudaErrorLaunchFailure, std::string(name) + " at " + describeLocation(loc) +
                                             ": the mask " + hexMask(mask) +
                                             " does not include the calling lane " +
                                             std::to_string(l.laneId));
    }
    if (op == Coll::Shfl || op == Coll::ShflUp || op == Coll::ShflDown || op == Coll::ShflXor) {
        if (width < 1 || width > 32 || (width & (width - 1)) != 0) {
            r->fault(cudaErrorLaunchFailure, std::string(name) + " at " + describeLocation(loc) +
                                                 ": width " + std::to_string(width) +
                                                 " is not a power of 2 up to 32");
        }
    }
    l.wait = Wait::Collective;
    l.op = op;
    l.mask = mask;
    l.value = value;
    l.arg = arg;
    l.width = width;
    l.waitName = name;
    l.location = loc;
    l.status = Status::Blocked;
    r->suspend(l);
    return l.result;
}

int blockBarrier(BarrierKind kind, int predicate, const char* name,
                 const std::source_location& loc) {
    BlockRunner* r = t_runner;
    if (r == nullptr || t_lane == nullptr) {
        report(std::string(name) + " called outside a kernel");
        std::abort();
    }
    if (t_profileStrict >= 1)
        profileDependence(Dependence::Barrier);
    Lane& l = r->current(name);
    l.wait = Wait::Barrier;
    l.barrier = kind;
    l.predicate = predicate;
    l.waitName = name;
    l.location = loc;
    l.status = Status::Blocked;
    ++r->barrierWaiting;
    r->suspend(l);
    return l.barrierResult;
}

namespace {
WarpGroup rendezvous(unsigned long long key, unsigned long long order, long long value,
                     const char* name, const std::source_location& loc) {
    BlockRunner* r = t_runner;
    if (r == nullptr || t_lane == nullptr) {
        report(std::string(name) + " called outside a kernel");
        std::abort();
    }
    Lane& l = r->current(name);
    l.wait = Wait::Rendezvous;
    l.key = key;
    l.order = order;
    l.rendezvousValue = value;
    l.waitName = name;
    l.location = loc;
    l.status = Status::Blocked;
    r->suspend(l);
    if (l.stopRequested) {
        l.stopRequested = false;
        throw ThreadStop{};
    }
    return l.group;
}
} // namespace

unsigned activeMask(const std::source_location& loc) {
    auto file = reinterpret_cast<std::uintptr_t>(loc.file_name());
    unsigned long long h = (file * 0x9E3779B97F4A7C15ULL) ^
                           (static_cast<unsigned long long>(loc.line()) << 20) ^ loc.column();
    unsigned long long key = (h & 0x7fffffffffffffffULL) | (1ULL << 63);
    unsigned long long order =
        (static_cast<unsigned long long>(loc.line()) << 16) | (loc.column() & 0xffffu);
    if (t_profileStrict >= 2)
        profileDependence(Dependence::Collective);
    return rendezvous(key, order, 0, "__activemask", loc).mask;
}

void spinYield() {
    BlockRunner* r = t_runner;
    if (r == nullptr || t_lane == nullptr)
        return; // host code: nothing to yield to
    Lane& l = *static_cast<Lane*>(t_lane);
    l.status = Status::Yielded;
    l.wait = Wait::None;
    r->suspend(l);
}

void deviceFault(cudaError_t error, const std::string& message) {
    BlockRunner* r = t_runner;
    if (r == nullptr || t_lane == nullptr) {
        report(message);
        std::abort();
    }
    r->fault(error, message);
}

void checkHostContext(const char* what) {
    if (t_lane != nullptr)
        deviceFault(cudaErrorNotSupported, std::string(what) + " called from a kernel");
}

void* dynamicSharedBase() {
    struct Buffer {
        void* p = nullptr;
        ~Buffer() { std::free(p); }
    };
    thread_local Buffer buffer;
    if (buffer.p == nullptr) {
        std::size_t bytes = std::max<std::size_t>(maxDynamicSharedCapacity(), 256 * 1024);
        bytes = (bytes + 4095) / 4096 * 4096;
        buffer.p = std::aligned_alloc(4096, bytes);
        std::memset(buffer.p, 0, bytes);
    }
    return buffer.p;
}

} // namespace detail

// ---- the emulator's own interface
// -----------------------------------------------------------------

void setWorkerThreads(unsigned n) {
    detail::settings().workers = std::max(1u, n);
}
unsigned workerThreads() {
    return detail::settings().workers;
}
void setFatalErrors(bool fatal) {
    detail::settings().fatal = fatal;
}
bool fatalErrors() {
    return detail::settings().fatal;
}
void resetStickyError() {
    detail::clearStickyError();
}
void setStackSize(std::size_t bytes) {
    detail::settings().stackBytes = std::max<std::size_t>(bytes, 16 * 1024);
}
std::size_t stackSize() {
    return detail::settings().stackBytes;
}
void setSpinTimeout(double seconds) {
    detail::settings().spinTimeoutSeconds = std::max(0.001, seconds);
}

void detail::profileDependence(Dependence what) {
    if (t_lane != nullptr && t_runner != nullptr && t_profileStrict != 0)
        throw ProfileStop{what};
}

TraceState traceState() {
    const detail::BlockRunner* r = detail::t_runner;
    return r != nullptr && r->launch() != nullptr ? r->launch()->traceState : TraceState::Record;
}

void profileNextLaunch(std::vector<uint32_t> sampledBlocks) {
    detail::t_profileRequest = std::move(sampledBlocks);
    detail::t_lastProfile.reset();
}

std::optional<Profile> takeProfile() {
    detail::t_profileRequest.reset();
    std::optional<Profile> p = std::move(detail::t_lastProfile);
    detail::t_lastProfile.reset();
    return p;
}

WarpGroup warpRendezvous(unsigned long long key, unsigned long long order, long long value) {
    return detail::rendezvous(key & 0x7fffffffffffffffULL, order, value, "warpRendezvous",
                              std::source_location::current());
}
unsigned laneId() {
    return detail::t_lane != nullptr ? detail::t_lane->laneId : 0;
}
unsigned warpId() {
    return detail::t_lane != nullptr ? detail::t_lane->warpId : 0;
}
bool inKernel() {
    return detail::t_lane != nullptr;
}

void setLaunchObserver(std::function<void(const LaunchInfo&, bool)> observer) {
    std::lock_guard lock(detail::g_hooks);
    detail::g_observer = std::move(observer);
}
void setBlockFilter(std::function<bool(const uint3&)> filter) {
    std::lock_guard lock(detail::g_hooks);
    detail::g_filter = std::move(filter);
}
LaunchInfo currentLaunch() {
    return detail::t_currentLaunch;
}

} // namespace memplace::emu

long long clock64() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
unsigned long long __globaltimer() {
    return static_cast<unsigned long long>(clock64());
}

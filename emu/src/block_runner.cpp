// The block scheduler's core: every CUDA thread of a block is a fiber on one OS thread; barriers,
// warp collectives and warp rendezvous suspend the fiber until their partners arrive (released in
// warp_sync.cpp). This file holds the fiber stacks and the BlockRunner's block loop: warp by
// warp, a block barrier when every warp is stuck, deadlock reports, unwinding at the end. Blocks
// run one after another on the launching thread or a pool of OS threads (launch.cpp).
// docs/emulation.md explains the rules; the comments here say how they are implemented.
#include "scheduler_internal.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <sstream>
#include <sys/mman.h>
#include <unistd.h>

namespace memplace::emu::detail {

// ---- fiber stacks -------------------------------------------------------------------------------

StackPool::~StackPool() {
    for (auto& [p, size] : free_)
        munmap(p, size);
}

ctx::stack_context StackPool::allocate(std::size_t size) {
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
        p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
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

void StackPool::deallocate(ctx::stack_context& sc) {
    free_.emplace_back(static_cast<char*>(sc.sp) - sc.size, sc.size);
}

// ---- texts for reports --------------------------------------------------------------------------

std::string describeLocation(const std::source_location& loc) {
    if (loc.file_name() == nullptr || *loc.file_name() == '\0')
        return "?";
    std::string f = loc.file_name();
    return f + ":" + std::to_string(loc.line());
}

std::string dim3Text(const dim3& d) {
    return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

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

// ---- the block runner ---------------------------------------------------------------------------

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
    prepareBlock(launch, bid);
    BlockRunner* previous = t_runner;
    t_runner = this;
    scheduleBlock(launch);
    teardown();
    t_runner = previous;
    return !faulted_ && !launch.aborted;
}

void BlockRunner::prepareBlock(LaunchState& launch, const uint3& bid) {
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
}

void BlockRunner::scheduleBlock(LaunchState& launch) {
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

} // namespace memplace::emu::detail

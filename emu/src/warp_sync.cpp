// Warps and synchronisation: releasing warp collectives (computing their results), warp
// rendezvous and block barriers once their partners have arrived, and the calls lanes make to
// wait at them (suspending the lane's fiber), to spin, and to fault.
#include "scheduler_internal.h"

#include <algorithm>
#include <bit>
#include <cstdlib>

namespace memplace::emu::detail {

// ---- releasing what waiting lanes wait for ------------------------------------------------------

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

namespace {

/// Calls f(lane) for every lane of `group`, lowest first.
template <typename F>
void forEachLane(unsigned group, F&& f) {
    for (unsigned g = group; g != 0; g &= g - 1)
        f(static_cast<unsigned>(std::countr_zero(g)));
}

/// __shfl*_sync: every lane of the group reads its source lane's value.
void shuffle(Lane* lanes, unsigned group, Coll op) {
    forEachLane(group, [&](unsigned i) {
        Lane& m = lanes[i];
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
        m.result = lanes[src].value;
    });
}

/// __ballot_sync, __any_sync, __all_sync.
void vote(Lane* lanes, unsigned group, Coll op) {
    unsigned bits = 0;
    forEachLane(group, [&](unsigned i) { bits |= (lanes[i].value != 0 ? 1u : 0u) << i; });
    unsigned long long r = op == Coll::Ballot ? bits
                           : op == Coll::Any  ? (bits != 0)
                                              : (bits == group);
    forEachLane(group, [&](unsigned i) { lanes[i].result = r; });
}

void matchAny(Lane* lanes, unsigned group) {
    forEachLane(group, [&](unsigned i) {
        unsigned same = 0;
        for (unsigned g = group; g != 0; g &= g - 1) {
            unsigned j = static_cast<unsigned>(std::countr_zero(g));
            if (lanes[j].value == lanes[i].value)
                same |= 1u << j;
        }
        lanes[i].result = same;
    });
}

void matchAll(Lane* lanes, unsigned group) {
    bool all = true;
    const unsigned long long v = lanes[std::countr_zero(group)].value;
    forEachLane(group, [&](unsigned i) { all = all && lanes[i].value == v; });
    forEachLane(group, [&](unsigned i) { lanes[i].result = all ? group : 0; });
}

/// __reduce_*_sync over the lanes' 32-bit values.
void reduce(Lane* lanes, unsigned group, Coll op) {
    unsigned long long acc = 0;
    bool first = true;
    forEachLane(group, [&](unsigned i) {
        unsigned long long v = lanes[i].value & 0xffffffffULL;
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
    forEachLane(group, [&](unsigned i) { lanes[i].result = r; });
}

} // namespace

void BlockRunner::computeCollective(Warp& w, unsigned group, Coll op) {
    Lane* lanes = &lane(w, 0);
    switch (op) {
    case Coll::SyncWarp:
        return;
    case Coll::Shfl:
    case Coll::ShflUp:
    case Coll::ShflDown:
    case Coll::ShflXor:
        shuffle(lanes, group, op);
        return;
    case Coll::Ballot:
    case Coll::Any:
    case Coll::All:
        vote(lanes, group, op);
        return;
    case Coll::MatchAny:
        matchAny(lanes, group);
        return;
    case Coll::MatchAll:
        matchAll(lanes, group);
        return;
    default:
        reduce(lanes, group, op);
        return;
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

// ---- calls from lanes ---------------------------------------------------------------------------

namespace {
/// The running block's runner; aborts when `name` (a device function) is called from host code.
BlockRunner* runnerInKernel(const char* name) {
    BlockRunner* r = t_runner;
    if (r == nullptr || t_lane == nullptr) {
        report(std::string(name) + " called outside a kernel");
        std::abort();
    }
    return r;
}
} // namespace

unsigned long long warpCollective(Coll op, unsigned mask, unsigned long long value, int arg,
                                  int width, const char* name, const std::source_location& loc) {
    BlockRunner* r = runnerInKernel(name);
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
    BlockRunner* r = runnerInKernel(name);
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
    BlockRunner* r = runnerInKernel(name);
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

} // namespace memplace::emu::detail

namespace memplace::emu {

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

} // namespace memplace::emu

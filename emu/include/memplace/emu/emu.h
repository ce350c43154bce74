// The emulator's own interface: execution settings, error policy, the warp rendezvous the
// tracing accessor uses, and hooks for profiling tools. Everything CUDA-named is elsewhere.
#pragma once

#include "memplace/emu/vector_types.h"

#include <cstdint>
#include <functional>
#include <string>

namespace memplace::emu {

// ---- execution settings -------------------------------------------------------------------

/// OS threads that run blocks (default 1, or MEMPLACE_EMU_THREADS): with 1, blocks run one
/// after another in blockIdx order (x fastest) on the launching thread, and a run is
/// deterministic; with n > 1, the launching thread and n - 1 pool threads take blocks in that
/// order from a shared counter.
void setWorkerThreads(unsigned n);
unsigned workerThreads();

/// Errors inside a kernel (deadlock, mismatched collectives, __trap, unsupported feature used at
/// run time, a C++ exception out of a kernel) are always printed to stderr with the kernel and
/// block. Fatal (default; MEMPLACE_EMU_FATAL=0 turns it off): the process then aborts.
/// Otherwise the error becomes CUDA's sticky error, returned by every later CUDA call.
void setFatalErrors(bool fatal);
bool fatalErrors();

/// Clears a sticky error (a real device needs a process restart; tests need this).
void resetStickyError();

/// A block whose only running threads spin (failed atomicCAS, atomicExch storing the value
/// already there, __nanosleep) for this long is reported as deadlocked (default 10 s,
/// MEMPLACE_EMU_SPIN_TIMEOUT_S).
void setSpinTimeout(double seconds);

/// Fiber stack size in bytes for each emulated thread (default 64 KiB, MEMPLACE_EMU_STACK_KB).
/// Applies to launches after the call.
void setStackSize(std::size_t bytes);
std::size_t stackSize();

// ---- warp rendezvous (the tracing accessor's primitive) -----------------------------------

/// What a lane learns from warpRendezvous: the lanes of its warp that met at the same key.
struct WarpGroup {
    unsigned mask = 0;               ///< lanes (bit = lane id) of the group, calling lane included
    unsigned leader = 0;             ///< lowest lane of the group
    bool isLeader = false;           ///< the calling lane is the leader
    unsigned warp = 0;               ///< warp index within the block (linear thread id / 32)
    unsigned long long sequence = 0; ///< groups this warp has formed in this block so far
    const long long* values = nullptr; ///< values[lane] for each lane of `mask`; valid until
                                       ///< the calling lane's next emulator call that can block
};

/// Warp rendezvous at `key`: the calling lane waits until every live lane of its warp is
/// waiting at a rendezvous, at a barrier or warp collective, or has exited. The lanes waiting
/// at the same key then form a group, which is released (the others keep waiting); of several
/// keys, the one with the smallest `order` is released first (ties: the group of the lowest
/// lane). Pass the site's position in the source (its site id) as `order`: lanes that ran
/// ahead then wait for the lanes behind them, as they reconverge on a GPU. Keys with bit 63 set
/// are reserved for __activemask. Each lane contributes `value` (e.g. its element offset).
WarpGroup warpRendezvous(unsigned long long key, unsigned long long order, long long value);

/// Key for a (site, array) pair: the tracing accessor's natural key.
constexpr unsigned long long rendezvousKey(unsigned site, unsigned array) {
    return ((static_cast<unsigned long long>(site) & 0x7fffffffULL) << 32) | array;
}

/// Lane and warp of the calling emulated thread.
unsigned laneId();
unsigned warpId();

/// True inside a kernel running on the emulator.
bool inKernel();

// ---- hooks for profiling tools (tracer, active profiling) ---------------------------------

struct LaunchInfo {
    unsigned long long id = 0; ///< 1 for the process's first launch, then counting
    std::string kernel;        ///< the kernel's name (demangled symbol, else the launch text)
    dim3 grid, block;
    std::size_t sharedBytes = 0;
};

/// Called at the start and the end of every launch (on the launching thread); empty: none.
void setLaunchObserver(std::function<void(const LaunchInfo&, bool start)> observer);

/// Only blocks for which `filter(blockIdx)` is true run (empty: all). For sampled profiling:
/// a filtered launch does not compute the kernel's result.
void setBlockFilter(std::function<bool(const uint3&)> filter);

/// The launch now running or last run on this thread.
LaunchInfo currentLaunch();

} // namespace memplace::emu

// The emulated thread's identity: threadIdx, blockIdx, blockDim, gridDim, warpSize.
//
// Each CUDA thread is a fiber; the scheduler points `t_lane` at the running fiber's context at
// every switch. A block's fibers run on one OS thread, so the pointer is per OS thread.
#pragma once

#include "memplace/emu/vector_types.h"

namespace memplace::emu::detail {

// Member names differ from the built-in variables: those are macros.
struct BlockContext {
    uint3 index;               ///< blockIdx
    dim3 dim;                  ///< blockDim
    dim3 grid;                 ///< gridDim
    unsigned long long linear; ///< blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)
};

struct LaneContext {
    uint3 tid;          ///< threadIdx
    unsigned laneId;    ///< linear thread id % 32
    unsigned warpId;    ///< linear thread id / 32
    unsigned linearTid; ///< threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)
    const BlockContext* block;
};

/// The running emulated thread, or nullptr outside kernels.
inline thread_local LaneContext* t_lane = nullptr;

/// Active profiling (memplace/emu/profile.h) runs parts of a block alone. While it does,
/// communication between threads would read what threads that did not run never wrote, so the
/// run stops at the first sign of it: 1 stops at block-level communication (barriers, atomics,
/// fences), 2 also at warp-level communication (warp collectives, __activemask). 0: never.
inline thread_local int t_profileStrict = 0;
enum class Dependence : unsigned char { Barrier, Atomic, Fence, Collective };
/// Stops the partial run (unwinds the block) when called in a lane while t_profileStrict is
/// set; returns otherwise.
void profileDependence(Dependence what);

} // namespace memplace::emu::detail

// Macros (not objects) so that `threadIdx.x` is a plain `unsigned int` lvalue, as in CUDA.
#define threadIdx (static_cast<const ::uint3&>(::memplace::emu::detail::t_lane->tid))
#define blockIdx (static_cast<const ::uint3&>(::memplace::emu::detail::t_lane->block->index))
#define blockDim (static_cast<const ::dim3&>(::memplace::emu::detail::t_lane->block->dim))
#define gridDim (static_cast<const ::dim3&>(::memplace::emu::detail::t_lane->block->grid))

/// The warp size of every GPU memplace knows (a constant, not a macro, so `prop.warpSize` works).
inline constexpr int warpSize = 32;

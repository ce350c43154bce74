// The seam between memplace::launch<K> (a template in the program's translation unit) and the
// host library: what the template tells the library about the kernel and the launch, and what
// the library hands back to build the accessors. Plain C++ (no device code), so the library
// compiles with any C++ compiler over the CUDA runtime headers. Internal: not for programs.
#pragma once

#include "common/place.h"
#include "memplace/desc.h"
#include "memplace/fastdiv.h"
#include "memplace/trace_record.h"

#include <cstddef>
#include <cuda_runtime.h>
#include <memory>
#include <vector>

namespace memplace::detail {

/// The kernel, from its generated descriptor and the instantiations compiled in this TU.
struct KernelView {
    const char* name;
    int numArrays;
    const ArrayDesc* arrays;
    const bool* textureFeasible; ///< per array: kTextureFeasible<element type>
    int numCompiled;             ///< specialised instantiations; [0] is the default placement
    const Place* compiled;       ///< numCompiled * numArrays places, row-major
    const void* const* compiledFns;
    const void* dynamicFn;
    const void* tracingFn; ///< null when built with MEMPLACE_NO_TRACING
    /// Just-in-time instantiation (the descriptor's optional jit members; runtime/src/jit.h):
    /// the device-only source, null when the kernel is not JIT-able or the TU cannot launch it;
    /// the kernel's name for NVRTC name expressions; per array its element type as NVRTC spells
    /// it, const for read-only arrays; extra NVRTC options the TU's compilation implies.
    const char* jitSource = nullptr;
    const char* jitKernel = nullptr;
    const char* const* jitTypes = nullptr;
    const char* jitOptions = "";
    /// The program's __constant__ variables the kernel reads (descriptor's jitConstants): names
    /// for NVRTC, and their host shadows (cudaGetSymbolAddress finds the program's copy).
    int jitConstantCount = 0;
    const char* const* jitConstants = nullptr;
    const void* const* jitConstantShadows = nullptr;
    /// Aliasing (the descriptor's optional globals, globalRange, unknownWrites, unknownReads):
    /// the __device__/__managed__ variables the kernel accesses by name and a function that
    /// finds the device memory of the k-th; why the kernel writes (reads) through pointers whose
    /// target nobody knows, null when it does not.
    int globalCount = 0;
    const GlobalDesc* globals = nullptr;
    cudaError_t (*globalRange)(int k, void** address, std::size_t* bytes) = nullptr;
    const char* unknownWrites = nullptr;
    const char* unknownReads = nullptr;
    /// Keeps the GPU busy for `ns` nanoseconds on `stream` (a one-thread kernel of this TU);
    /// null under the CPU emulation layer. Timed launches a policy asks for start with it.
    cudaError_t (*spin)(long long ns, cudaStream_t stream) = nullptr;
    /// Adds to *counter (device) the 32-bit words (and tail bytes) where two device buffers
    /// differ (memplace/sweep.cuh); a shadow launch compares its two runs' outputs with it.
    cudaError_t (*compare)(const void* a, const void* b, std::size_t bytes,
                           unsigned long long* counter, cudaStream_t stream) = nullptr;
};

/// The launch: configuration and the array arguments.
struct LaunchArgs {
    dim3 grid;
    dim3 block;
    std::size_t sharedBytes;
    cudaStream_t stream;
    const void* const* ptrs; ///< per array: the pointer argument
    const long long* widths; ///< per array: the widthParam argument's value, or 0
    const void* poolSymbol;  ///< this TU's constant pool (host shadow of the __constant__)
    std::size_t poolBytes;
};

/// How one array was materialised: every field an accessor of any place may need.
struct ArrayHandle {
    Place place = Place::Global;
    void* ptr = nullptr;
    unsigned long long tex = 0; ///< cudaTextureObject_t
    long long texOffset = 0;
    FastDiv width;       ///< 2-D texture row length (d == 0: 1-D)
    long long count = 0; ///< shared: elements staged
    unsigned constOffset = 0;
    unsigned sharedOffset = 0;
    unsigned dirtyOffset = 0;
    unsigned copyIn = 1;
};

struct LaunchState; // the library's own bookkeeping for one launch
struct SweepState;  // a sweep the policy asked for: its request and the launch's LaunchInfo

/// What prepareLaunch decided.
struct LaunchPlan {
    static constexpr int kDynamic = -1;
    static constexpr int kTracing = -2;
    static constexpr int kSweep = -3; ///< nothing launched yet: run the sweep, then prepare again
    static constexpr int kJit = -4;   ///< a just-in-time instantiation: jitFunction
    int instantiation = 0;       ///< index into compiled, or kDynamic / kTracing / kSweep / kJit
    std::size_t sharedBytes = 0; ///< dynamic shared memory to launch with
    std::vector<ArrayHandle> handles;
    TraceSink sink{};
    std::shared_ptr<LaunchState> state;
    std::shared_ptr<SweepState> sweep; ///< kSweep only
    void* jitFunction = nullptr;       ///< kJit only: the CUfunction
    /// kTracing only: a shadow launch (TraceOptions::Shadow). The handles of the written arrays
    /// point at scratch copies; after the tracing instantiation, endShadowTrace, then the
    /// original instantiation (instantiation 0) on the program's memory.
    bool shadow = false;
};

/// What the program's translation unit gives a sweep: its launch of one placement (prepare,
/// dispatch, finish), and two small kernels of its own (memplace/sweep.cuh).
struct SweepHooks {
    /// One launch with the placement the sweep set (prepareLaunch honours it); its status.
    cudaError_t (*launch)(void* ctx) = nullptr;
    void* ctx = nullptr;
    /// Adds to *counter (device) the number of 32-bit words (and tail bytes) where a and b
    /// differ; null: the library compares on the host.
    cudaError_t (*compare)(const void* a, const void* b, std::size_t bytes,
                           unsigned long long* counter, cudaStream_t stream) = nullptr;
    /// Keeps the GPU busy for about `ns` nanoseconds on `stream`; null: no busy-wait.
    cudaError_t (*spin)(long long ns, cudaStream_t stream) = nullptr;
};

/// Launches plan.jitFunction (kJit) with the kernel's arguments (`params`: one pointer per
/// kernel parameter, accessors in place of the arrays), the plan's dynamic shared memory, on the
/// launch's stream. Returns the launch's status.
cudaError_t launchJit(const LaunchArgs& args, const LaunchPlan& plan, void** params);

/// Runs the sweep plan.sweep asked for (plan.instantiation == kSweep), calls the policy's
/// swept() and leaves the written arrays as they were. The caller then prepares the launch anew.
void runSweep(const KernelView& kernel, const LaunchArgs& args, LaunchPlan& plan,
              const SweepHooks& hooks);

/// Between a shadow launch's two runs (plan.shadow): records the tracing instantiation's status
/// (and clears it, unless sticky, so that the program sees the original's), restores the globals
/// the kernel writes by name (keeping a copy of what the traced run wrote), points the handles
/// at the program's arrays and sets plan.instantiation to 0 (the original instantiation).
void endShadowTrace(const KernelView& kernel, const LaunchArgs& args, LaunchPlan& plan,
                    cudaError_t traceStatus);
/// Decides the placement, materialises it and picks the instantiation. Never fails: what cannot
/// be materialised falls back to global and is reported. Holds the runtime's lock until
/// finishLaunch.
void prepareLaunch(const KernelView& kernel, const LaunchArgs& args, LaunchPlan& plan);
/// After the launch (status: its cudaPeekAtLastError): resets the L2 window, records the
/// constant pool's use, collects a trace, stores the report, releases the lock.
void finishLaunch(const KernelView& kernel, const LaunchArgs& args, LaunchPlan& plan,
                  cudaError_t status);

} // namespace memplace::detail

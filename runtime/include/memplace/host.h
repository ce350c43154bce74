// The host library's public API (runtime/src): placement controls, the PlacementPolicy hook the
// online Placer (placer/) implements, launch reports, extents, and trace collection. Plain C++
// over the CUDA runtime; memplace::launch<K> (launch.cuh) is the template that calls into it.
#pragma once

#include "common/place.h"
#include "memplace/desc.h"
#include "memplace/trace_record.h"

#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace memplace {

// ---- what the runtime knows about a launch -------------------------------------------------

/// One array of a launch, as the runtime found it.
struct ArrayInfo {
    std::string name;
    int param = -1;
    std::size_t elemSize = 0;
    Mode mode = Mode::ReadWrite;
    PlaceSet feasible; ///< the descriptor's mask
    int dims = 1;
    Place original = Place::Global; ///< where the program as written keeps it (the default)
    const void* ptr = nullptr;
    std::size_t extentBytes = 0; ///< bytes from ptr to the end of its allocation (or as given)
    bool extentKnown = false;
    long long width = 0; ///< dims == 2: row length in elements (0: unknown)
    /// A texture can hold it: the element type can be fetched through one and, for a 2-D
    /// array, its rows fit the device's 2-D linear texture limits.
    bool textureFeasible = true;
};

/// A `__device__` or `__managed__` variable the kernel accesses by name, as the runtime found it.
struct GlobalRange {
    std::string name;
    Mode mode = Mode::Read; ///< ReadWrite when the kernel writes it
    const void* ptr = nullptr;
    std::size_t bytes = 0;
    bool found = false; ///< false: its device memory could not be found (then it may be anywhere)
};

/// A launch as the policy sees it: the kernel and its input signature.
struct LaunchInfo {
    std::string kernel;
    dim3 grid;
    dim3 block;
    std::size_t sharedBytes = 0; ///< the program's own dynamic shared memory
    cudaStream_t stream = nullptr;
    int device = 0;
    std::vector<ArrayInfo> arrays;
    std::vector<Placement> compiled; ///< placements compiled as specialised instantiations
    /// The default instantiation's attributes (cudaFuncGetAttributes), queried only while a
    /// policy is installed: registers per thread (0: unknown, as under the CPU emulation layer)
    /// and static shared memory per block.
    int registers = 0;
    std::size_t staticSharedBytes = 0;
    std::size_t constantPoolBytes = 0; ///< this translation unit's constant pool
    uint64_t launchId = 0;             ///< the launch's number (LaunchReport::launchId)

    /// The name of another array of the launch that array j may share memory with while one of
    /// the two is written, or empty: then only global, l2persist and the array's original place
    /// are safe for it. Extents run to the end of each allocation, so arrays carved from one
    /// allocation count as overlapping (the safe answer).
    std::string sharesMemoryWithWritten(std::size_t j) const {
        const ArrayInfo& a = arrays[j];
        const auto lo = reinterpret_cast<std::uintptr_t>(a.ptr);
        const std::uintptr_t hi = lo + (a.extentKnown ? a.extentBytes : 1);
        for (std::size_t k = 0; k < arrays.size(); ++k) {
            const ArrayInfo& b = arrays[k];
            if (k == j || b.ptr == nullptr || (a.mode == Mode::Read && b.mode == Mode::Read)) {
                continue;
            }
            const auto blo = reinterpret_cast<std::uintptr_t>(b.ptr);
            const std::uintptr_t bhi = blo + (b.extentKnown ? b.extentBytes : 1);
            if (lo < bhi && blo < hi) {
                return b.name;
            }
        }
        return {};
    }
    /// What the kernel accesses besides its arrays (the descriptor's aliasing members): the
    /// globals it names, and why it writes (reads) through pointers nobody can follow (empty:
    /// it does not).
    std::vector<GlobalRange> globals;
    std::string unknownWrites;
    std::string unknownReads;

    /// Why array j may alias memory the kernel writes behind its accessor, or empty. Then only
    /// global, l2persist and the array's original place are safe for it (they read and write
    /// memory where it is): another array of the launch that overlaps it while one of the two
    /// is written (sharesMemoryWithWritten), a global the kernel accesses by name that overlaps
    /// it while one of the two is written (or whose memory was not found), a write through an
    /// unknown pointer, or, for a written array, a read through one.
    std::string aliasHazard(std::size_t j) const {
        const ArrayInfo& a = arrays[j];
        if (!unknownWrites.empty()) {
            return "the kernel writes through a pointer whose target is unknown (" + unknownWrites +
                   ")";
        }
        if (a.mode != Mode::Read && !unknownReads.empty()) {
            return "the kernel reads through a pointer whose target is unknown (" + unknownReads +
                   "), and the array is written";
        }
        if (const std::string other = sharesMemoryWithWritten(j); !other.empty()) {
            return "the array may share memory with '" + other + "', and one of them is written";
        }
        const auto lo = reinterpret_cast<std::uintptr_t>(a.ptr);
        const std::uintptr_t hi = lo + (a.extentKnown ? a.extentBytes : 1);
        for (const GlobalRange& g : globals) {
            if (a.mode == Mode::Read && g.mode == Mode::Read) {
                continue;
            }
            const auto glo = reinterpret_cast<std::uintptr_t>(g.ptr);
            const std::string what = "the global '" + g.name + "', which the kernel " +
                                     (g.mode == Mode::Read ? "reads" : "writes") + " by name";
            if (!g.found) {
                return "the device memory of " + what + ", was not found";
            }
            if (a.ptr != nullptr && lo < glo + g.bytes && glo < hi) {
                return "the array may share memory with " + what +
                       (g.mode == Mode::Read ? ", and the array is written" : "");
            }
        }
        return {};
    }
    /// A placement that was not compiled in can run as a just-in-time instantiation (NVRTC):
    /// the kernel's descriptor has a jitSource, NVRTC loads, JIT is not off, the dispatch is not
    /// forced dynamic. Otherwise it runs through the dynamic accessor; `jitUnavailable` says why.
    bool jitAvailable = false;
    std::string jitUnavailable;
    bool jitSynchronous = false; ///< a compilation would stall the launch (setJitSynchronous)
};

// ---- tracing -------------------------------------------------------------------------------

/// Which blocks a traced launch records and how many records it may write.
struct TraceOptions {
    std::size_t maxRecords = std::size_t{1} << 18; ///< device buffer capacity (280 B each)
    std::vector<uint32_t> blocks;                  ///< linear block ids; empty: use sampleEvery
    uint32_t sampleEvery = 1;                      ///< every k-th block (1: all blocks)
    /// Whether the traced launch is a *shadow* launch (docs/placer.md, "First launch of a
    /// signature"): the written arrays are copied to scratch buffers, the tracing instantiation
    /// writes the copies (the globals the kernel writes by name are snapshotted and restored
    /// around it), then the original instantiation runs on the program's memory, and the two
    /// runs' outputs are compared (TraceResult::outputsDiffer). The program's results are then
    /// the original instantiation's, bit for bit.
    enum class Shadow : uint8_t {
        Off,     ///< the tracing instantiation alone, on the program's memory
        Prefer,  ///< shadow when the launch can be shadowed, else as Off
        Require, ///< shadow, or do not trace (the launch runs untraced; the report says why)
    };
    Shadow shadow = Shadow::Prefer;
    /// At most this many bytes of scratch copies (and never more than half the device's free
    /// memory); beyond that the launch cannot be shadowed.
    std::size_t shadowMaxBytes = std::size_t{4} << 30;
};

/// One array of a traced launch: enough to turn element offsets into addresses.
struct TraceArray {
    std::string name;
    const void* base = nullptr;
    std::size_t elemSize = 0;
    std::size_t extentBytes = 0;
    bool extentKnown = false;
    Mode mode = Mode::ReadWrite;
};

/// The records of one traced launch.
struct TraceResult {
    std::string kernel;
    dim3 grid;
    dim3 block;
    std::vector<TraceArray> arrays;
    std::vector<uint32_t> sampledBlocks; ///< empty when every block was sampled
    std::vector<TraceRecord> records;    ///< at most `capacity`, in buffer order
    uint64_t produced = 0;               ///< records the kernel tried to write
    uint64_t capacity = 0;
    bool overflow = false; ///< produced > capacity: records were dropped
    uint64_t dropped = 0;  ///< produced - capacity when overflow
    /// Host microseconds spent collecting after the kernel had finished: copying the header and
    /// the records back and clearing inactive lanes (the stream synchronisation not included).
    double collectMicros = 0;
    /// A shadow launch (TraceOptions::Shadow): the tracing instantiation wrote scratch copies and
    /// the original instantiation produced the program's results.
    bool shadowed = false;
    /// Shadowed, and the two runs' outputs differ: the kernel races or is nondeterministic (or
    /// the tracing instantiation computes differently); `differing` names the arrays and globals
    /// and how many 32-bit words of each differ.
    bool outputsDiffer = false;
    std::string differing;
};

/// Traces the next `launches` launches made through memplace::launch (any kernel): each runs
/// with TracingAccessor for every array (global access, so results are the original's) and its
/// records are kept for takeTraces(). Overflow is reported on stderr and in the result.
void traceLaunches(const TraceOptions& options, int launches = 1);
/// Stops tracing requested with traceLaunches.
void stopTracing();
/// The traces collected so far (and forgets them).
std::vector<TraceResult> takeTraces();

// ---- in-process sweeps ---------------------------------------------------------------------

/// One placement a sweep measures.
struct SweepEntry {
    Placement placement;  ///< descriptor order
    bool dynamic = false; ///< through DynamicAccessor even when the placement is compiled
};

/// What a sweep measures and how (see runtime/README.md, "Sweeps").
struct SweepRequest {
    /// The placements, in order. The first one's outputs are the reference the others are
    /// compared with, bitwise (a policy puts the original placement first).
    std::vector<SweepEntry> entries;
    int warmup = 2;      ///< untimed launches per placement
    int repeat = 10;     ///< timed launches per placement (the median is reported)
    double budgetMs = 0; ///< wall-clock budget of the whole sweep; 0: none. Entries not
                         ///< started within it are reported as skipped
    double spinUs = 50;  ///< GPU busy-wait before each timed launch, so that the host's work
                         ///< for the launch is not in the interval (0: none)
};

/// The measurement of one SweepEntry.
struct SweepResult {
    SweepEntry entry;
    Placement placed;       ///< after fallbacks (empty when it never ran)
    std::string dispatch;   ///< "specialized" or "dynamic"
    int instantiation = -1; ///< index in the compiled list, -1: dynamic
    std::string status;     ///< "ok", "fallback", "error", "skipped"
    std::string detail;     ///< why, when status is not ok
    std::vector<double> ms; ///< timed launches: events around materialisation + kernel
    double medianMs = -1;
    double minMs = -1;
    double maxMs = -1;
    double hostUsMedian = -1;    ///< host microseconds memplace::launch spent (median)
    bool compared = false;       ///< outputs compared with the first entry's
    bool equal = false;          ///< bitwise equal (the first entry: true by definition)
    uint64_t differingWords = 0; ///< 32-bit words (or tail bytes) that differ
};

// ---- placement decisions -------------------------------------------------------------------

/// What a PlacementPolicy decides for a launch.
struct Decision {
    enum class Kind : uint8_t {
        Default, ///< the placement as written (each array's ArrayDesc::original)
        Place,   ///< `placement`
        Trace,   ///< run this launch traced with `trace`; the trace goes to policy.traced()
        /// Measure every placement of `sweep` on this launch's arguments first (written arrays
        /// snapshotted, restored or poisoned before each launch, restored after), report them to
        /// policy.swept(), then decide this launch again (a policy must not answer Sweep twice
        /// for the same launch: a second Sweep is taken as Default).
        Sweep,
    };
    Kind kind = Kind::Default;
    Placement placement;
    /// Kind::Place: a placement to compile just in time (NVRTC) and to place instead of
    /// `placement` once its instantiation is ready (LaunchInfo::jitAvailable); empty: none.
    /// The compilation runs in the background (setJitSynchronous: in this launch), and until
    /// it is done, or if it fails, launches get `placement`.
    Placement jitPlacement;
    TraceOptions trace;
    /// Time this launch with CUDA events even when kernel timing is off (the policy checks a
    /// decision against the original on the GPU).
    bool time = false;
    /// With `time`: the GPU busy-waits this long (microseconds) before the launch's stream work,
    /// so that the host's work for the launch (deciding, materialising, the launch call) is
    /// done before the stream reaches the timed interval. Without it, a kernel shorter than that
    /// work is measured with the idle stream's wait (the sweep does the same: spinUs). 0: none.
    double spinUs = 0;
    std::shared_ptr<const SweepRequest> sweep;
};

struct LaunchReport;

/// The hook the online Placer implements. The runtime asks decide() on every launch (under the
/// runtime's lock, so implementations need no locking of their own against launches) unless
/// MEMPLACE=off; MEMPLACE=force entries and setPlacement() override it array by array.
class PlacementPolicy {
public:
    virtual ~PlacementPolicy() = default;
    virtual Decision decide(const LaunchInfo& info) = 0;
    /// After a launch this policy asked to trace: its records.
    virtual void traced(const LaunchInfo& info, TraceResult trace) {
        (void)info;
        (void)trace;
    }
    /// After every launch: what was materialised and launched (not called for the launches
    /// of a sweep).
    virtual void launched(const LaunchInfo& info, const LaunchReport& report) {
        (void)info;
        (void)report;
    }
    /// After a sweep this policy asked for: one result per entry, in order.
    virtual void swept(const LaunchInfo& info, std::vector<SweepResult> results) {
        (void)info;
        (void)results;
    }
};

/// Installs the policy (null: none, every array takes the default).
void setPlacementPolicy(std::shared_ptr<PlacementPolicy> policy);

/// Forces places for arrays of a kernel (kernel "" or "*": every kernel with such an array),
/// like MEMPLACE=force:kernel.array=place,... does; the environment wins where both name an
/// array. Replaces earlier calls for the same kernel.
void setPlacement(const std::string& kernel,
                  const std::vector<std::pair<std::string, Place>>& places);
/// Forgets every setPlacement().
void clearPlacements();

/// How a placement is launched.
enum class DispatchMode : uint8_t {
    Auto,    ///< a specialised instantiation when one was compiled, else DynamicAccessor
    Dynamic, ///< always DynamicAccessor (tests, and measuring its cost)
};
/// Sets the dispatch mode (also MEMPLACE_DISPATCH=auto|dynamic).
void setDispatchMode(DispatchMode mode);

/// When a placement that was not compiled in is compiled just in time (NVRTC), also
/// MEMPLACE_JIT=off|auto|always.
enum class JitMode : uint8_t {
    Off,    ///< never: the dynamic accessor
    Auto,   ///< when the policy asks (Decision::jitPlacement); instantiations compiled before
            ///< (in this process, or found in the disk cache) serve any placement (the default)
    Always, ///< every placement that was not compiled in (forced placements too)
};
void setJitMode(JitMode mode);
/// Compile in the launching thread, under the runtime's lock (the launch waits; other threads'
/// launches too), instead of in the background (also MEMPLACE_JIT_SYNC=1).
void setJitSynchronous(bool on);
/// Where compiled instantiations persist (empty: nowhere); the default is MEMPLACE_JIT_CACHE,
/// else $MEMPLACE_CACHE/jit, else $XDG_CACHE_HOME/memplace/jit, else ~/.cache/memplace/jit.
void setJitCacheDir(const std::string& dir);
/// Waits until every background compilation has finished (the next launch of each placement
/// then loads it).
void waitForJit();
/// Whether just-in-time instantiation can work in this process at all (NVRTC loads, the
/// library has the embedded device headers, not under the CPU emulation layer); `why` if not.
bool jitSupported(std::string* why = nullptr);

/// Gives the extent of an array the runtime cannot find with cuMemGetAddressRange (or whose
/// allocation is larger than the array): `bytes` from `ptr`. `width` (elements) gives the row
/// length of a 2-D array when no kernel parameter holds it. Replaces an earlier call for ptr.
void setExtent(const void* ptr, std::size_t bytes, long long width = 0);
void clearExtent(const void* ptr);

/// Destroys cached texture objects and pitched copies (call before cudaDeviceReset, or when the
/// arrays they view are freed and their addresses may be reused with other shapes).
void releaseResources();

// ---- reports -------------------------------------------------------------------------------

/// One array of a launch report.
struct ArrayReport {
    std::string name;
    Place requested = Place::Global;
    Place placed = Place::Global;
    std::string source;   ///< "default", "env", "api", "policy", "trace"
    std::string fallback; ///< why placed != requested (empty when equal)
    std::size_t extentBytes = 0;
    bool extentKnown = false;
    std::size_t bytesMoved = 0; ///< bytes copied to materialise (constant upload, pitched copy)
};

/// What one launch did. The Placer extends this with its own fields (predictions, overheads).
struct LaunchReport {
    std::string kernel;
    dim3 grid;
    dim3 block;
    std::size_t sharedBytesOriginal = 0;
    std::size_t sharedBytesTotal = 0; ///< with the staged arrays and their dirty bitmaps
    std::string dispatch;             ///< "specialized", "dynamic", "jit" or "tracing"
    int instantiation = -1;           ///< index in the compiled list (0: the default) or -1
    std::vector<ArrayReport> arrays;
    double hostMicros = 0;            ///< decision and materialisation, host wall clock
    cudaError_t status = cudaSuccess; ///< the launch's own result
    std::vector<std::string> errors;  ///< every failed CUDA call, with what it was for
    uint64_t launchId = 0;            ///< 1, 2, ... in the order launches were made (process-wide)
    bool timed = false;               ///< events were recorded (see takeKernelTimings)
    /// Just-in-time instantiation, when the placement was not compiled in: "compiled" (the
    /// first launch of an instantiation NVRTC compiled), "cached" (the first launch of one read
    /// from the disk cache), "loaded" (later launches of one), "pending" (compiling in the
    /// background; this launch ran dynamic), "failed" or "unavailable" (dynamic; jitDetail says
    /// why), "not-requested" (dynamic: neither the policy nor MEMPLACE_JIT asked for it);
    /// empty when not relevant (a compiled placement, tracing).
    std::string jit;
    std::string jitDetail;
    double jitCompileMs = 0;    ///< "compiled": NVRTC's time (in the background unless synchronous)
    bool jitBackground = false; ///< "compiled": the compilation ran in the background
    double jitLoadMs = 0;       ///< "compiled", "cached": reading the cache entry and loading it
    /// A trace was asked for with TraceOptions::Shadow::Require and the launch cannot be shadowed
    /// (an unknown extent, writes through unknown pointers, overlapping arguments, too large):
    /// why; the launch ran the original placement untraced. Empty otherwise.
    std::string notShadowed;

    bool anyFallback() const;
    /// The report as one JSON object.
    std::string toJson() const;
};

/// The report of the calling thread's last memplace::launch.
LaunchReport lastReport();

// ---- kernel timing ---------------------------------------------------------------------------

/// The measured times of one launch (CUDA events on the launch's stream). Under the CPU
/// emulation layer events hold host times, so these are emulation times.
struct KernelTiming {
    uint64_t launchId = 0;
    std::string kernel;
    std::string dispatch; ///< as in the LaunchReport
    /// From the start of memplace::launch's stream work to the kernel: the constant-pool upload,
    /// pitched copies and trace-buffer setup that materialisation queued on the stream.
    double materialiseMs = 0;
    double kernelMs = 0; ///< the kernel itself
    bool ok = false;     ///< false: an event failed (the times are 0)
};

/// Measures every launch with CUDA events (three per launch: before materialisation's stream
/// work, before the kernel, after it), also MEMPLACE_TIME=1. Costs two or three
/// cudaEventRecord per launch; off by default.
void setKernelTiming(bool on);
bool kernelTimingEnabled();
/// The timings of finished launches, oldest first, and forgets them; `wait`: waits for every
/// timed launch to finish first. Takes only the timing lock, so a PlacementPolicy may call it
/// from its hooks.
std::vector<KernelTiming> takeKernelTimings(bool wait = false);

} // namespace memplace

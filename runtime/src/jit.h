// Just-in-time instantiation of a placement (internal to the host library): a kernel's
// device-only source (the descriptor's jitSource, written by the rewriter) compiled with NVRTC
// for the present GPU, cached on disk, loaded with the driver API and launched with the same
// accessor arguments the specialised instantiation would get (docs/placer.md, "Just-in-time
// instantiation").
//
// Layers: this file knows NVRTC, the disk cache and the driver; jit_instances.cpp keeps the
// instances and device_cuda.cpp decides when to use them. libnvrtc and the driver are reached at
// run time (dlopen, cudaGetDriverEntryPointByVersion), so a program that lacks them links and runs,
// and its launches fall back to the dynamic accessor with the reason in the report. Nothing here
// needs a GPU except load() and launch().
#pragma once

#include "common/place.h"

#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>
#include <string>
#include <vector>

namespace memplace::detail::jit {

/// One device header handed to NVRTC by name ("memplace/accessors.cuh", "common/place.h").
struct EmbeddedHeader {
    const char* name;
    const char* text;
};
/// The device headers embedded at build time (runtime/embed_jit_headers.cmake); empty when the
/// library was compiled without them (runtime/src/*.cpp built by nvcc alone).
std::vector<EmbeddedHeader> embeddedHeaders();

/// Whether libnvrtc could be loaded (MEMPLACE_NVRTC=<path> names it, `none` pretends it is
/// missing; else libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so); `why` when not.
bool nvrtcAvailable(std::string* why = nullptr);
/// "13.0", or "" when NVRTC is not available.
std::string nvrtcVersion();
/// The virtual architectures NVRTC compiles for (75, 80, 86, 89, 90, ...), ascending.
std::vector<int> nvrtcArchitectures();

/// The accessor type of a place, as NVRTC spells it in a name expression:
/// "memplace::Texture2DAccessor<const float>". Empty for places without an accessor.
std::string accessorName(Place place, int dims, const std::string& elementType);
/// "kernel<A0, A1, ...>".
std::string nameExpression(const std::string& kernel, const std::vector<std::string>& accessors);

/// What to compile.
struct CompileRequest {
    std::string source;         ///< the descriptor's jitSource
    std::string nameExpression; ///< the instantiation, nameExpression()
    int ccMajor = 0;            ///< the device's compute capability
    int ccMinor = 0;
    std::size_t poolBytes = 65536;  ///< MEMPLACE_CONSTANT_POOL_BYTES of the program's TU
    std::vector<std::string> extra; ///< further NVRTC options (--use_fast_math)
    /// The program's __constant__ variables the kernel reads (qualified names): the module has
    /// copies of its own, found by their lowered names.
    std::vector<std::string> constants;
};

/// The NVRTC options of a request: -arch=sm_XY when NVRTC compiles for the device's
/// architecture (a CUBIN), else -arch=compute_ZZ of the newest architecture below it that NVRTC
/// knows (PTX, which the driver compiles at load); `*ptx` says which. Empty when NVRTC knows no
/// architecture at or below the device's.
std::vector<std::string> compileOptions(const CompileRequest& request,
                                        const std::vector<int>& architectures, bool* ptx);

/// The content address of a request: a hash of the source, the name expression, the options,
/// the compute capability and the NVRTC version, as 32 hexadecimal digits.
std::string cacheKey(const CompileRequest& request, const std::vector<std::string>& options,
                     const std::string& nvrtcVersion);

/// A compiled instantiation, or why there is none.
struct Binary {
    bool ok = false;
    std::string error; ///< with NVRTC's log (trimmed)
    std::string image; ///< CUBIN, or PTX (ptx)
    bool ptx = false;
    std::string kernelName;                 ///< the lowered (mangled) name of the instantiation
    std::string poolName;                   ///< the lowered name of the module's constant pool
    std::vector<std::string> constantNames; ///< lowered names of the request's constants
    double compileMs = 0;                   ///< NVRTC's time (0 when read from the cache)
    /// A failure worth caching on disk: NVRTC rejected the source (the same request fails the
    /// same way), not a missing library or option.
    bool cacheable = false;
};

/// Compiles with NVRTC: no GPU needed. The headers come from embeddedHeaders() unless
/// `headers` is given. `moreNames` (tests): further instantiations compiled into the same
/// image, their lowered names to `moreLowered`.
Binary compile(const CompileRequest& request, const std::vector<EmbeddedHeader>* headers = nullptr,
               const std::vector<std::string>* moreNames = nullptr,
               std::vector<std::string>* moreLowered = nullptr);

/// A small program with the device headers, compiled for the options of `like`: the first
/// compilation of a process that compiles in the background, which initialises NVRTC before
/// the runtime registers its wait at exit (jit_instances.cpp, jitStartBackground).
CompileRequest warmUpRequest(const CompileRequest& like);

// ---- the disk cache ------------------------------------------------------------------------

/// Where compiled instantiations are kept: MEMPLACE_JIT_CACHE (a folder, or `off`), else
/// $MEMPLACE_CACHE/jit, else $XDG_CACHE_HOME/memplace/jit, else ~/.cache/memplace/jit; empty:
/// no disk cache.
std::string defaultCacheDir();

/// One entry: <dir>/<key>.jit, a small text header and the image. A compilation that failed
/// is cached too (so that a kernel NVRTC rejects is not recompiled at every run).
std::string serializeEntry(const std::string& key, const std::string& nameExpression,
                           const Binary& binary);
struct CacheRead {
    enum class Status { Miss, Hit, Corrupt } status = Status::Miss;
    Binary binary;   ///< Hit: as stored (ok false: a cached compilation failure)
    std::string why; ///< Corrupt: what is wrong
};
CacheRead parseEntry(const std::string& text, const std::string& key,
                     const std::string& nameExpression);
CacheRead readCache(const std::string& dir, const std::string& key,
                    const std::string& nameExpression);
/// Writes atomically (temporary file in the folder and a rename; the folder is created). False
/// and `error` when it cannot.
bool writeCache(const std::string& dir, const std::string& key, const std::string& nameExpression,
                const Binary& binary, std::string* error);

// ---- the driver side -----------------------------------------------------------------------

/// A binary loaded into the calling thread's current context.
struct Loaded {
    bool ok = false;
    std::string error;
    void* module = nullptr;       ///< CUmodule
    void* function = nullptr;     ///< CUfunction
    std::uintptr_t pool = 0;      ///< device address of the module's constant pool
    std::size_t poolBytes = 0;    ///< its size
    std::size_t staticShared = 0; ///< the instantiation's static shared memory
    /// The module's copies of the program's __constant__ variables: address and size each.
    std::vector<std::pair<std::uintptr_t, std::size_t>> constants;
    double loadMs = 0;
};
Loaded load(const Binary& binary);
/// cuModuleUnload (errors ignored).
void unload(void* module);
/// cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES).
bool setMaxDynamicShared(void* function, int bytes, std::string* error);
/// cuLaunchKernel; the result as a cudaError_t (the runtime's codes equal the driver's).
cudaError_t launch(void* function, dim3 grid, dim3 block, unsigned sharedBytes, cudaStream_t stream,
                   void** params);

} // namespace memplace::detail::jit

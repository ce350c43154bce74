// The rewriter: turns a CUDA file into its placement-agnostic form
// (docs/rewrite-contract.md, docs/rewriting.md). Each analysed kernel becomes a template over one
// accessor type per placeable array, its body is wrapped between memplace::stage and
// memplace::unstage, every access site of a placeable array `a[i]` becomes
// `a[memplace::at<Id>(i)]`, and every launch goes through the runtime: `memplace::launch<K>(...)`
// for rewritten kernels, `MEMPLACE_LAUNCH(...)` for the others. `extern __shared__` becomes
// `MEMPLACE_DYNAMIC_SHARED`. Whatever cannot be transformed safely is left as written, with a
// warning naming file:line:col: the rewriter never emits code it cannot vouch for.
//
//   memplace::rewrite::RewriteOptions o{.file = "k.cu"};
//   auto r = memplace::rewrite::rewriteFile(o);
//   if (!r) { print(r.diagnostics()); return 2; }
//   writeFileAtomic(dir / "k.cu", r->output);
#pragma once

#include "common/diagnostics.h"
#include "common/expected.h"
#include "common/place.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace memplace::rewrite {

struct RewriteOptions {
    std::string file;                   ///< the .cu file; never written
    std::vector<std::string> extraArgs; ///< clang arguments (-D, -I, --cuda-path=...)
    std::string kernel;        ///< only this kernel (name, qualified name or instantiation)
    bool launchesOnly = false; ///< only launches and `extern __shared__` (the original program,
                               ///< made runnable under the CPU emulation layer)
    /// Placements to compile as specialised instantiations besides the rewriter's own (the
    /// evaluation compiles the engine's top choices): kernel name, then array -> place; arrays
    /// not named are global. A place outside an array's feasible places, or an array the kernel
    /// has no accessor for, drops that placement with a warning.
    struct ExtraPlacement {
        std::string kernel;
        std::vector<std::pair<std::string, Place>> places;
    };
    std::vector<ExtraPlacement> compile;
};

/// One pointer parameter of a kernel: an accessor, or a raw pointer with the reason.
struct ArrayReport {
    std::string name;
    int param = -1;                 ///< position in the kernel's parameter list
    bool accessor = false;          ///< the kernel is templated on an accessor type for it
    std::string elementType;        ///< as the parameter declares it ("const float", "const T")
    std::string mode;               ///< memplace::Mode: "Read", "Write", "ReadWrite"
    PlaceSet places;                ///< the descriptor's mask (feasible places)
    std::string mask;               ///< how the descriptor spells it ("memplace::kPlaces_ro_1d")
    int dims = 1;                   ///< 2: indexed row * width + column (2-D texture)
    int widthParam = -1;            ///< dims == 2: the parameter holding the row length
    std::string likely;             ///< the statically likely place and why ("constant: ...")
    Place original = Place::Global; ///< where the program as written keeps it (the default)
    std::string reason;             ///< raw pointer: why; accessor: places left out beyond the
                                    ///< analysis's, if any
};

/// One kernel (a template counts once, with its analysed instantiations).
struct KernelReport {
    std::string name;                        ///< qualified, without template arguments
    std::vector<std::string> instantiations; ///< "scale<float>", ...; the name for non-templates
    SourceLocation location;                 ///< the kernel's name in its definition
    bool rewritten = false;
    std::string descriptor; ///< "memplace_kernel_saxpy" (rewritten kernels)
    std::string reason;     ///< why the kernel was left as written
    std::vector<ArrayReport> arrays;
    /// The placements compiled as specialised instantiations besides the default (every array
    /// where the program keeps it), one place per accessor array in descriptor order.
    std::vector<std::vector<Place>> compiled;
    int launches = 0; ///< launches rewritten to memplace::launch
    /// Just-in-time instantiation (docs/rewrite-contract.md): the descriptor's jitSource (the
    /// kernel and the device code it uses, for NVRTC), jitKernel and jitTypes; or, when the
    /// kernel is not JIT-able, jitSource empty and jitReason saying why.
    std::string jitSource;
    std::string jitKernel;
    std::vector<std::string> jitTypes;
    std::vector<std::string> jitConstants; ///< `__constant__` variables the JIT module copies
    std::string jitReason;
};

/// Another file of the program that the main file includes (docs/usage.md, "Kernels in included
/// files"): its copy goes into the output folder at `relative`, rewritten or as it is, so that
/// the rewritten files include each other's copies through the same relative names.
struct IncludedOutput {
    std::string file;       ///< the original, as reported (relative to the working directory)
    std::string path;       ///< the original as clang opened it (to never write it)
    std::string relative;   ///< its path relative to the main file's folder
    std::string output;     ///< its text, rewritten where it holds rewritten constructs
    bool rewritten = false; ///< the output differs from the original
    std::vector<std::string> kernels; ///< the rewritten kernels defined in it
    int launches = 0;                 ///< launches rewritten in it (runtime or macro)
    /// Rewritten kernels declared in it without their definition (prototypes), and __device__
    /// functions (members included) made templates over accessors in it.
    std::vector<std::string> prototypes;
    std::vector<std::string> helpers;
};

struct RewriteResult {
    std::string file;   ///< the input, as given
    std::string output; ///< the rewritten source
    /// The program's included files, in include order (empty when the main file includes none).
    std::vector<IncludedOutput> included;
    bool launchesOnly = false;
    std::vector<KernelReport> kernels;
    std::vector<std::string> helpers; ///< __device__ functions templated on accessors
    int runtimeLaunches = 0;          ///< launches now memplace::launch<K>(...)
    int macroLaunches = 0;            ///< launches now MEMPLACE_LAUNCH(...)
    int untouchedLaunches = 0;        ///< launches left as <<<...>>> (with a warning)
    int dynamicShared = 0;            ///< `extern __shared__` declarations rewritten
    uint64_t ownConstantBytes = 0;    ///< the file's own __constant__ data
    DiagnosticList warnings;          ///< the frontend's and the rewriter's
};

/// Analyses and rewrites `options.file`. Fails (the CLI's exit 2) when the file cannot be read
/// or parsed; everything else the rewriter cannot do becomes a warning and leaves the construct
/// as written.
Expected<RewriteResult> rewriteFile(const RewriteOptions& options);

/// The result without the output text: kernels, arrays, places, compiled placements, counts,
/// warnings; the included files. `outputPath` is recorded as "output" when not empty, and
/// `includedPaths` (parallel to result.included) as each included file's "output".
nlohmann::json toJson(const RewriteResult& result, const std::string& outputPath = {},
                      const std::vector<std::string>& includedPaths = {});

} // namespace memplace::rewrite

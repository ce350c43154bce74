// KernelInfo: what the frontend learns about each CUDA kernel of a file, and what every later
// stage (trace, model, search, rewriter, runtime) reads. Plain data with no clang dependency.
// Its JSON form (kernel_info_json.h) is the output of `memplace analyze --json`.
//
// Vocabulary
// - An *array* is memory a kernel can touch through a name: a pointer parameter, a
//   `__device__` or `__constant__` global array, a `__shared__` array, or a texture object.
// - A *site* is one place in the source where an array is accessed: a subscript `a[i]` (one
//   site per subscript expression, so `y[i] += x` is one read-write site), `*(a + i)`, the
//   pointer argument of an atomic or of `__ldg`-style loads and stores, or a texture fetch.
//   Site ids are dense, start at 0 and follow source order (see SiteId below).
// - An *index* is classified as affine (in threadIdx, blockIdx and loop iteration numbers,
//   with coefficients that are polynomials in launch invariants: blockDim, gridDim, scalar
//   parameters that the kernel never assigns), indirect (computed from values read from another
//   array), or unknown (with a reason).
#pragma once

#include "common/access_mode.h"
#include "common/diagnostics.h"
#include "common/place.h"
#include "kernelinfo/onchip.h"
#include "kernelinfo/poly.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memplace::kernelinfo {

/// How a site or an array is accessed: common/access_mode.h, shared with every other stage.
using AccessMode = memplace::AccessMode;
using memplace::accessModeName;
using memplace::combine;
using memplace::parseAccessMode;
using memplace::writes;

/// Where an array comes from.
enum class ArrayKind : uint8_t {
    Parameter,      ///< a pointer parameter of the kernel
    DeviceGlobal,   ///< a `__device__` global array (or pointer)
    ConstantGlobal, ///< a `__constant__` global array
    Shared,         ///< a `__shared__` array declared in the kernel or a helper
    TextureObject,  ///< a `cudaTextureObject_t` parameter read with tex1Dfetch/tex2D/...
};
std::string_view arrayKindName(ArrayKind k); ///< "parameter", "device", "constant", "shared",
                                             ///< "texture_object"
std::optional<ArrayKind> parseArrayKind(std::string_view name);
/// Where an array of this kind lives in the original program: global for parameters and
/// `__device__` arrays, constant, shared or texture for the others. An array whose accesses the
/// analysis does not understand keeps its home place only.
Place homePlace(ArrayKind k);

/// Site ids are file-wide: every access written in the file has one id, dense from 0 in source
/// order (the main file by offset, then headers in include order). A subscript has the same id
/// in every kernel, template instantiation and call path that reaches it, so a rewriter emits
/// one `memplace::at<Id>` per subscript. A kernel's sites are therefore a subset of the ids.
using SiteId = int;

enum class IndexKind : uint8_t { Affine, Indirect, Unknown };
std::string_view indexKindName(IndexKind k); ///< "affine", "indirect", "unknown"
std::optional<IndexKind> parseIndexKind(std::string_view name);

/// One varying variable of an affine index and its coefficient.
/// `var` is "threadIdx.x|y|z", "blockIdx.x|y|z", or the name of a loop variable, which then
/// stands for the loop's *iteration number* 0, 1, 2, ... (the loop's `init` and `step` give
/// the variable's value: value = init + step * iteration).
struct AffineTerm {
    std::string var;
    Poly coeff; ///< over launch invariants: blockDim.*, gridDim.*, scalar parameters, constants
    bool operator==(const AffineTerm&) const = default;
};

struct IndexInfo {
    IndexKind kind = IndexKind::Unknown;
    std::string text;              ///< the index as written (for multi-dimensional: "[i][j]")
    std::vector<AffineTerm> terms; ///< affine: one per varying variable, in canonical order
    Poly offset;                   ///< affine: the part without varying variables
    std::vector<std::string> via;  ///< indirect: the arrays whose values form the index
    std::vector<SiteId> viaSites;  ///< indirect: the sites of those reads, when they are sites
    std::string reason;            ///< unknown: why; indirect: may say what else is unknown
    bool operator==(const IndexInfo&) const = default;
};

/// A call from the kernel (or a helper) to a `__device__` function, on the way to a site.
struct CallFrame {
    std::string function; ///< the callee's name
    SourceLocation call;  ///< where the call is written
    bool operator==(const CallFrame&) const = default;
};

/// A loop enclosing some site. Canonical loops (`for (v = init; v < bound; v += step)` with
/// `v` assigned nowhere else and `step` invariant) have `var`, `init` and `step`; a constant
/// trip count is given when init, bound and step are all constants.
struct LoopInfo {
    int id = 0;               ///< index in KernelInfo::loops, in source order
    std::string kind;         ///< "for", "while", "do"
    SourceLocation location;  ///< the loop keyword
    std::string var;          ///< induction variable; empty when none was recognised
    std::optional<Poly> init; ///< value of var at entry, when affine
    std::optional<Poly> step; ///< increment per iteration, when invariant
    std::string bound;        ///< the bound as written ("n", "TILE"), empty when none
    std::optional<int64_t> tripCount;
    std::string reason; ///< why var/init/step/tripCount are missing, when they are
    int parent = -1;    ///< the enclosing loop's id, -1 at the outermost level
    std::vector<CallFrame> callPath;
    bool operator==(const LoopInfo&) const = default;
};

/// How a site is written: a subscript, or one of the forms the rewriter must treat apart.
enum class SiteForm : uint8_t {
    Subscript,     ///< a[i] (also a[i][j] for multi-dimensional arrays)
    Deref,         ///< *(a + i), *a
    PointerOffset, ///< a + i / &a[i] as the pointer argument of an atomic or load/store intrinsic
    TextureFetch,  ///< tex1Dfetch<T>(t, i), tex2D<T>(t, x, y), ...
};
std::string_view siteFormName(SiteForm f); ///< "subscript", "deref", "pointer", "fetch"
std::optional<SiteForm> parseSiteForm(std::string_view name);

struct Site {
    SiteId id = 0;
    std::string array;
    SourceLocation location;              ///< the subscript's start
    AccessMode access = AccessMode::Read; ///< Read, Write, ReadWrite or Atomic
    SiteForm form = SiteForm::Subscript;
    std::string intrinsic; ///< for PointerOffset and TextureFetch: "atomicAdd", "__ldg", ...
    IndexInfo index;       ///< the element index (multi-dimensional: flattened, row-major)
    std::vector<IndexInfo> subscripts; ///< multi-dimensional only: one index per dimension
    std::string member;                ///< ".x" when a structure field of the element is accessed
    std::vector<int> loops;            ///< enclosing loop ids, outermost first
    std::string function;              ///< the function the site is written in (kernel or helper)
    std::vector<CallFrame> callPath;   ///< empty when the site is in the kernel's own body;
                                       ///< else the first call path that reaches it
    /// How many call paths of this kernel reach the site (a helper called twice: 2). `index`,
    /// `loops` and `callPath` are the first path's when all paths agree on the index; when
    /// they do not, `index` is their merge (indirect if any is, else unknown with a reason).
    int contexts = 1;
    std::vector<std::string> otherArrays; ///< further arrays reaching the site via a helper
    bool operator==(const Site&) const = default;
};

enum class HazardKind : uint8_t {
    PointerArithmetic, ///< a + i used other than as an access; ++a; a = ...
    Stored,            ///< the pointer (or an element's address) is kept in a variable or field
    Escapes,           ///< passed to a function whose body is not visible, or returned
    Aliasing,          ///< two parameters receive the same memory at some launch
    Reinterpreted,     ///< cast to another pointer type (e.g. float4*) and accessed through it
    Macro,             ///< the whole access is spelled inside a macro: its index cannot be
                       ///< rewritten at the use
    Unknown,           ///< a use the analysis does not understand
};
std::string_view hazardKindName(HazardKind k); ///< "pointer_arithmetic", "stored", "escapes",
                                               ///< "aliasing", "reinterpreted", "macro",
                                               ///< "unknown"
std::optional<HazardKind> parseHazardKind(std::string_view name);
/// Whether a hazard of this kind restricts the array to its home place.
inline bool restrictsToHome(HazardKind k) {
    return k != HazardKind::Aliasing;
}

struct Hazard {
    HazardKind kind = HazardKind::Unknown;
    std::string array;
    std::string other; ///< Aliasing: the other array
    SourceLocation location;
    std::string message; ///< one line, says what was seen
    std::vector<CallFrame> callPath;
    bool operator==(const Hazard&) const = default;
};

/// How many bytes an array has, when known before launch.
struct Extent {
    std::optional<uint64_t> bytes; ///< nullopt: dynamic, read at launch time
    std::string source;            ///< "static", "cudaMalloc at 52:5", "launch shared bytes",
                                   ///< or for dynamic extents why none is known
    bool dynamic() const { return !bytes.has_value(); }
    bool operator==(const Extent&) const = default;
};

struct ArrayInfo {
    std::string name;
    ArrayKind kind = ArrayKind::Parameter;
    int paramIndex = -1;      ///< Parameter, TextureObject: position in the parameter list
    std::string elementType;  ///< unqualified ("float", "Particle", "float *")
    uint64_t elementSize = 0; ///< bytes; 0 when unknown (void, incomplete type)
    bool isConst = false;     ///< the elements are const
    bool isRestrict = false;  ///< the pointer is __restrict__
    SourceLocation declaration;
    /// From the sites; an array whose pointer escapes (pointer arithmetic, stored, passed to
    /// an unseen function, reinterpreted) counts as read (const elements) or read-write.
    AccessMode mode = AccessMode::None;
    Extent extent;
    std::vector<uint64_t> dims;    ///< declared dimensions of a static multi-dimensional array
    int dimensionality = 1;        ///< 2 when the dims or the indices show 2-D use
    std::optional<Poly> rowLength; ///< elements per row, when 2-D
    PlaceSet feasible;
    std::map<Place, std::string> excluded; ///< a reason for every place not in `feasible`
    /// Where the unmodified program keeps it (computeFeasibility): the home place, or the
    /// read-only path for a `const T* __restrict__` parameter and for an array read only
    /// through `__ldg`. Always feasible; the placement memplace runs when it predicts no gain.
    Place original = Place::Global;
    bool operator==(const ArrayInfo&) const = default;
};

/// A value of a launch configuration: the expression as written and, when it is a constant,
/// its value: {x, y, z} for grid and block, {bytes} for the shared memory size; empty when not
/// a constant.
struct LaunchValue {
    std::string text; ///< as written; empty when the argument was omitted
    std::vector<int64_t> value;
    bool operator==(const LaunchValue&) const = default;
};

struct LaunchSite {
    SourceLocation location; ///< the kernel name of `k<<<...>>>(...)`
    std::string function;    ///< the host function the launch is written in
    std::string kernel;      ///< the instantiation launched ("k", "k<float, 128>")
    LaunchValue grid, block, sharedBytes, stream;
    std::vector<std::string> arguments; ///< as written, one per kernel parameter
    bool operator==(const LaunchSite&) const = default;
};

/// A device allocation whose result a launch passes to a kernel.
struct AllocationSite {
    std::string variable; ///< the pointer variable allocated
    std::string call;     ///< "cudaMalloc", "cudaMallocManaged", "cudaMallocAsync", ...
    SourceLocation location;
    std::string function;  ///< the host function it is written in
    std::string bytesText; ///< the size expression as written
    std::optional<uint64_t> bytes;
    bool operator==(const AllocationSite&) const = default;
};

/// A `__device__` or `__managed__` variable a kernel accesses by name, in its body or in a
/// `__device__` function it calls. A pointer argument into it sees those accesses behind the
/// accessor's back: the runtime keeps an array that may share memory with it where the program
/// keeps it when either is written (docs/placer.md, "Aliasing").
struct GlobalAccess {
    std::string name;        ///< qualified as host code names it ("g", "ns::g")
    bool managed = false;    ///< `__managed__`
    bool written = false;    ///< written, atomically updated, or its address taken
    bool sized = true;       ///< false: declared without a size (`extern __device__ T g[];`)
    SourceLocation location; ///< the first write (the first access when only read)
    std::string how;         ///< what was seen there ("'g[i]' is written")
    bool operator==(const GlobalAccess&) const = default;
};

struct KernelParam {
    std::string name;
    std::string type;
    bool pointer = false;
    bool operator==(const KernelParam&) const = default;
};

struct KernelInfo {
    std::string name;          ///< "saxpy", qualified ("ns::saxpy"); templates: the template's
    std::string instantiation; ///< "saxpy", "scale<float, 128>"
    std::vector<std::string> templateArgs;
    SourceLocation location; ///< the kernel's name in its definition
    std::vector<KernelParam> params;
    std::vector<ArrayInfo> arrays; ///< parameters in order, then globals, then shared arrays
    std::vector<Site> sites;       ///< by id
    std::vector<LoopInfo> loops;   ///< by id
    std::vector<Hazard> hazards;
    std::vector<LaunchSite> launches;
    /// Block and grid size when every launch gives the same constant one.
    std::optional<std::array<int64_t, 3>> blockDim, gridDim;
    /// Accesses through pointers that are not arrays of the kernel (a structure's pointer
    /// member, a local pointer computed from an array): "file:line:col: what".
    std::vector<std::string> untracked;
    /// The `__device__`/`__managed__` variables accessed by name, in order of first access.
    std::vector<GlobalAccess> globals;
    /// Writes (and reads) through pointers whose target neither the frontend nor the runtime
    /// knows: a pointer read from memory or from a structure member, a `__device__` pointer
    /// variable, a pointer passed to a function whose body is not visible. "line:col: what".
    /// A write: no array of the kernel may leave the place the program keeps it in, except for
    /// global and the L2 persisting window (they read what is in memory); a read: no written
    /// array may (shared staging would hide its writes).
    std::vector<std::string> unknownWrites;
    std::vector<std::string> unknownReads;
    /// Shared arrays' privacy, indices and counts; barriers; thread-invariant loads (onchip.h).
    OnChipFacts onchip;

    const ArrayInfo* findArray(std::string_view name) const;
    ArrayInfo* findArray(std::string_view name);
    bool operator==(const KernelInfo&) const = default;
};

struct FileInfo {
    std::string file;
    int siteCount = 0; ///< file-wide site ids are 0 .. siteCount-1
    std::vector<KernelInfo> kernels;
    std::vector<AllocationSite> allocations;
    std::vector<std::string> warnings; ///< formatted diagnostics ("file:line:col: warning: ...")
    bool operator==(const FileInfo&) const = default;
};

/// Locations in KernelInfo leave `file` empty for the analysed file (FileInfo::file) and name
/// it otherwise (a header). "line:col", with the file when it is neither empty nor `mainFile`.
std::string formatLocation(const SourceLocation& loc, std::string_view mainFile = {});

} // namespace memplace::kernelinfo

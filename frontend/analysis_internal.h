// The frontend's internals: the symbolic values indices are computed in, the raw per-kernel
// facts the kernel walker collects (matching), and the entry points of the two analyses and of
// reporting (kernel_report.cpp), which the driver (analysis.cpp) calls to turn the raw facts
// into KernelInfo.
#pragma once

#include "frontend/ast_util.h"
#include "frontend/frontend.h"
#include "kernelinfo/kernel_info.h"

#include <clang/AST/Attr.h>
#include <clang/AST/ExprCXX.h>

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace memplace::frontend::detail {

using kernelinfo::AccessMode;
using kernelinfo::Poly;

/// Varying symbols in Polys: CUDA's thread and block indices, and loop iteration numbers
/// (named "$L<raw loop index>" until the loops are numbered).
inline bool isVaryingSymbol(const std::string& s) {
    return s.starts_with("threadIdx.") || s.starts_with("blockIdx.") || s.starts_with("$L");
}
inline std::string loopSymbol(int rawLoop) {
    return "$L" + std::to_string(rawLoop);
}

/// The value of an integer expression: a polynomial, a value read from an array (indirect),
/// or unknown with a reason.
struct SymValue {
    enum class Kind { Poly, Indirect, Unknown };
    Kind kind = Kind::Unknown;
    Poly poly;
    std::set<std::string> via; ///< Indirect: arrays read
    std::set<LocKey> viaSites; ///< Indirect: the reads' site keys
    std::string reason;

    static SymValue ofPoly(Poly p) {
        SymValue v;
        v.kind = Kind::Poly;
        v.poly = std::move(p);
        if (v.poly.overflowed()) {
            return unknown("integer overflow in the index arithmetic");
        }
        return v;
    }
    static SymValue constant(int64_t c) { return ofPoly(Poly::constant(c)); }
    static SymValue unknown(std::string why) {
        SymValue v;
        v.reason = std::move(why);
        return v;
    }
    static SymValue indirect(std::string array, std::optional<LocKey> site) {
        SymValue v;
        v.kind = Kind::Indirect;
        v.via.insert(std::move(array));
        if (site) {
            v.viaSites.insert(*site);
        }
        return v;
    }
    bool isPoly() const { return kind == Kind::Poly; }
    bool operator==(const SymValue&) const = default;
};

/// A site as the walker saw it, before file-wide numbering. Keyed by its location.
struct RawSite {
    LocKey key;
    std::string array;
    std::vector<std::string> otherArrays;
    AccessMode access = AccessMode::Read;
    kernelinfo::SiteForm form = kernelinfo::SiteForm::Subscript;
    std::string intrinsic;
    std::string member;
    std::vector<SymValue> flatPerContext; ///< the element index, per call path (capped)
    int contexts = 1;                     ///< call paths that reach the site
    std::vector<SymValue> subscripts;     ///< multi-dimensional: per dimension (first path)
    std::string indexText;
    std::vector<std::string> subscriptTexts;
    std::vector<int> loopsRaw; ///< enclosing raw loops (first path)
    std::string function;
    std::vector<kernelinfo::CallFrame> callPath;
    SourceLocation location;
    SiteSource source; ///< without id
};

struct RawLoop {
    LocKey key;
    std::string kind;
    SourceLocation location;
    std::string var;
    std::optional<SymValue> init, step;
    std::string bound;
    std::optional<int64_t> tripCount;
    std::string reason;
    int parentRaw = -1;
    std::vector<kernelinfo::CallFrame> callPath;
    int contexts = 1;
};

struct RawHazard {
    kernelinfo::Hazard hazard;
    clang::SourceLocation loc; ///< for the warning's source line
};

/// Everything the walker learns about one kernel (one instantiation).
struct RawKernel {
    const clang::FunctionDecl* fn = nullptr;
    kernelinfo::KernelInfo info; ///< name, params, arrays (no feasibility yet), untracked
    std::map<const clang::ValueDecl*, int> arrayOfDecl; ///< declaration -> index in info.arrays
    std::vector<RawSite> sites;
    std::map<LocKey, int> siteIndex;
    std::vector<RawLoop> loops;
    std::map<LocKey, int> loopIndex;
    std::vector<RawHazard> hazards;
    std::vector<const clang::FunctionDecl*> helpersWithArrays;
};

/// Walks one kernel's body (and the `__device__` functions it calls) and fills a RawKernel.
RawKernel analyzeKernel(const clang::FunctionDecl* fn, clang::ASTContext& ctx,
                        const Locator& locator);

/// One launch in host code.
struct RawLaunch {
    const clang::CUDAKernelCallExpr* call = nullptr;
    const clang::FunctionDecl* kernel = nullptr; ///< the callee (the instantiation)
    const clang::FunctionDecl* host = nullptr;   ///< the function the launch is in
    kernelinfo::LaunchSite site;
    LaunchSource source;
    /// Per kernel parameter: the variable the argument points into (null if none), and whether
    /// the argument is the variable itself (no offset).
    std::vector<const clang::ValueDecl*> argRoots;
    std::vector<bool> argExact;
};

struct RawAllocation {
    const clang::ValueDecl* var = nullptr;
    kernelinfo::AllocationSite site;
};

struct HostFacts {
    std::vector<RawLaunch> launches;        ///< in source order
    std::vector<RawAllocation> allocations; ///< in source order
    /// Indices into `launches` per launched kernel (its canonical declaration), in source
    /// order: a file of thousands of kernels is looked up, not scanned, per kernel.
    std::unordered_map<const clang::FunctionDecl*, std::vector<std::size_t>> launchesOf;

    /// The launches of `fn` (any declaration of it), in source order.
    const std::vector<std::size_t>& launchesOfKernel(const clang::FunctionDecl* fn) const;
};

/// Finds the launches and device allocations in the main file's host code.
HostFacts analyzeHost(clang::ASTContext& ctx, const Locator& locator);

/// Turns the raw facts of one kernel into its KernelInfo and KernelSource (kernel_report.cpp);
/// `siteIds` numbers every site of the file.
void reportKernel(RawKernel& raw, const std::map<LocKey, int>& siteIds, const HostFacts& host,
                  const Locator& loc, kernelinfo::KernelInfo& k, KernelSource& ks);

} // namespace memplace::frontend::detail

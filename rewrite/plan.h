// The rewriter's plan (internal): what becomes placement-agnostic and how, decided before any
// text is written. Per kernel, which arrays become accessors (mode, places, dimensions, likely
// place) and which stay raw pointers and why; which helper parameters take accessors; what each
// launch and `extern __shared__` declaration becomes, or why it stays as written. Planning checks
// everything an edit relies on, so emitting (emit.h) never fails halfway.
#pragma once

#include "common/diagnostics.h"
#include "common/place.h"
#include "frontend/frontend.h"
#include "kernelinfo/kernel_info.h"
#include "rewrite/ast_facts.h"
#include "rewrite/rewrite.h"
#include "rewrite/source_text.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace memplace::rewrite::detail {

namespace ki = memplace::kernelinfo;

/// One access site as written (instantiations and call paths share it).
struct SiteRec {
    int id = 0;
    const ki::Site* info = nullptr;
    const frontend::SiteSource* src = nullptr;
    detail::SiteShape shape;
    std::optional<ParamKey> key;
    bool deduces = false;
    std::string failure;             ///< why this site keeps its array raw
    clang::SourceLocation failureAt; ///< where
};

/// One pointer parameter of a kernel: an accessor (how), or a raw pointer (why).
struct ArrayPlan {
    unsigned param = 0;
    std::string name;
    ParamKey key;
    const clang::ParmVarDecl* decl = nullptr; ///< in the pattern
    bool candidate = false;                   ///< passed the kernel-level checks
    bool accessor = false;
    std::string reason;
    clang::SourceLocation reasonAt;
    ki::AccessMode mode = ki::AccessMode::None;
    bool memberWrite = false;
    PlaceSet mask;
    std::vector<std::string> notes; ///< places the rewriter removed, and why
    int dims = 1;
    int widthParam = -1;
    std::string elemType;     ///< "const float" (pattern spelling)
    std::string elemTypeBare; ///< "float" (for sizeof)
    std::string mpName;       ///< "MP_x"
    Place likely = Place::Global;
    std::string likelyWhy;
    /// Where the program as written keeps it (KernelInfo's `original`, in every instantiation):
    /// the default placement's place.
    Place original = Place::Global;
    std::vector<const SiteRec*> sites;

    bool written() const { return ki::writes(mode); }
    /// Keeps it a raw pointer for `why` (the first reason given stands).
    void refuse(std::string why, clang::SourceLocation at) {
        if (reason.empty()) {
            reason = std::move(why);
            reasonAt = at;
        }
    }
};

/// One kernel as written (a template counts once, with its analysed instantiations): rewritten
/// (`ok`), or left as written and why.
struct KernelPlan {
    const clang::FunctionDecl* pattern = nullptr;
    const clang::FunctionTemplateDecl* templ = nullptr;
    std::vector<size_t> kernels; ///< indexes into info().kernels
    bool selected = true;
    bool ok = true;
    std::string reason;
    clang::SourceLocation reasonAt;
    std::vector<ArrayPlan> arrays; ///< one per pointer parameter, in parameter order
    /// The kernel's other declarations (prototypes; for a template, their templated functions),
    /// rewritten with the definition.
    std::vector<const clang::FunctionDecl*> prototypes;
    /// Its names in cache preferences (`cudaFuncSetCacheConfig(kernel, ...)`): each names the
    /// default instantiation (docs/decisions/033).
    std::vector<const clang::DeclRefExpr*> cacheHints;
    std::string name; ///< qualified, without template arguments
    std::string descName;
    /// Defined in an `extern "C" { ... }` block: the kernel and its descriptor are written
    /// `extern "C++"` (templates cannot have C linkage).
    bool cxxLinkage = false;
    std::vector<std::vector<Place>> compiled;
    detail::SyncFacts sync;
    int launches = 0;
    // where the descriptor goes (after the kernel, emitDescriptors)
    unsigned descriptorAt = 0;
    std::string descriptorPrefix;
    std::string indent;

    void refuse(std::string why, clang::SourceLocation at) {
        if (ok) {
            ok = false;
            reason = std::move(why);
            reasonAt = at;
        }
    }
    std::vector<const ArrayPlan*> accessorArrays() const {
        std::vector<const ArrayPlan*> out;
        for (const auto& a : arrays) {
            if (a.accessor) {
                out.push_back(&a);
            }
        }
        return out;
    }
    /// The default instantiation's placement: every accessor array where the program keeps it.
    std::vector<Place> originalPlacement() const {
        std::vector<Place> out;
        for (const ArrayPlan* ap : accessorArrays()) {
            out.push_back(ap->original);
        }
        return out;
    }
};

/// A pointer parameter of a __device__ helper some call hands an array: templated on an accessor
/// (`active`), or left a pointer and why.
struct HelperParam {
    ParamKey key;
    bool active = true;
    std::string reason;
    clang::SourceLocation reasonAt;
    bool written = false;
};

/// One call argument passing a pointer to a helper's pointer parameter.
struct Edge {
    ParamKey to;
    std::optional<ParamKey> from; ///< nullopt: not a pointer parameter (raw)
    clang::SourceLocation at;
};

/// How a reference to a pointer parameter is used.
enum class UseKind { SiteBase, HelperArg, AliasInit, Other };
struct Use {
    const clang::DeclRefExpr* dre = nullptr;
    ParamKey key;
    UseKind kind = UseKind::Other;
    ParamKey helper; ///< HelperArg: the parameter it is passed to
};

/// What one launch becomes.
struct LaunchPlan {
    const detail::LaunchFact* fact = nullptr;
    KernelPlan* kernel = nullptr; ///< the rewritten kernel (its descriptor), for the runtime
    std::string text;             ///< the replacement
    unsigned begin = 0, end = 0;
    enum class Kind { Runtime, Macro, Untouched } kind = Kind::Untouched;
    std::string why; ///< Untouched: why
};

/// What one `extern __shared__ T name[]` declaration becomes: MEMPLACE_DYNAMIC_SHARED, or left
/// as written (`why` not empty).
struct SharedPlan {
    const clang::VarDecl* var = nullptr;
    unsigned begin = 0, end = 0;
    std::string text; ///< the replacement
    std::string why;  ///< left as written: why
};

/// Text edits as (begin, end, replacement) over Source's buffer.
using TextEdits = std::vector<std::tuple<unsigned, unsigned, std::string>>;

/// The whole plan of one file. Pointers point into the analysis's AST and into the plan itself
/// (stable when the plan is moved: vectors and maps keep their elements).
struct RewritePlan {
    explicit RewritePlan(const frontend::Analysis& a) : source(a) {}

    Source source;
    detail::Facts facts;
    std::vector<KernelPlan> kernels; ///< one per kernel as written, in the analysis's order
    std::map<const clang::FunctionDecl*, size_t> kernelByPattern;
    std::vector<std::unique_ptr<SiteRec>> sites;
    std::map<int, SiteRec*> siteById;
    std::set<const clang::DeclRefExpr*> siteBases;
    /// Their locations: the frontend records a site of a helper template once, with one
    /// instantiation's expression; the same reference in the helper's other instantiations (a
    /// helper called as `f<true>` and `f<false>`) is the same written access.
    std::set<clang::SourceLocation::UIntTy> siteBaseLocations;
    bool isSiteBase(const clang::DeclRefExpr* dre) const {
        return siteBases.count(dre) != 0 ||
               siteBaseLocations.count(dre->getLocation().getRawEncoding()) != 0;
    }
    /// Local pointers into pointer parameters (`const float* row = m + r * cols;`) declared in
    /// the analysed kernels, and, for those whose every use is an access site and whose text
    /// can be edited, the parameter reference of their initialiser.
    std::vector<detail::PointerAliasInit> aliases;
    std::map<const clang::VarDecl*, ParamKey> aliasKey;
    std::map<const clang::DeclRefExpr*, const detail::PointerAliasInit*> aliasByParamRef;
    /// Parameters rebased at the top of a kernel (`src += offset;`) whose every other use is
    /// a later access site: the rebase declares `mp_<name>`, a view of the accessor, and the
    /// sites use it.
    std::vector<detail::PointerRebase> rebases;
    std::map<const clang::DeclRefExpr*, const detail::PointerRebase*> rebaseByParamRef;
    std::map<const clang::ParmVarDecl*, std::string> rebasedName;
    std::map<ParamKey, HelperParam> helpers;
    std::vector<Edge> edges;
    std::vector<Use> uses;
    std::vector<LaunchPlan> launches;
    std::vector<SharedPlan> externShared;
    DiagnosticList warnings; ///< planning's own (dropped extra placements)

    /// The plan of the kernel whose pattern is `fn`'s, or null.
    KernelPlan* kernelOf(const clang::FunctionDecl* fn);
    /// Whether the parameter takes an accessor (a kernel's array or a helper's parameter).
    bool active(const ParamKey& k) const;
};

/// Plans the rewrite of the analysed file. Never fails: what cannot be rewritten is recorded with
/// its reason. The plan refers to `analysis`, which must outlive it.
RewritePlan planRewrite(const RewriteOptions& options, const frontend::Analysis& analysis);

/// Whether `k` is the kernel --kernel names (name, qualified name or instantiation).
bool kernelMatches(const ki::KernelInfo& k, const std::string& want);

/// A site's ranges in Source's buffer (nullopt: not one contiguous range of a program file).
struct SiteRanges {
    std::optional<std::pair<unsigned, unsigned>> access; ///< the whole access
    std::optional<std::pair<unsigned, unsigned>> base;   ///< its pointer
    std::optional<std::pair<unsigned, unsigned>> index;  ///< its (first) index, if any
};
SiteRanges siteRanges(const Source& src, const SiteRec& s);

/// The edits that make a pointer alias a view of its accessor, or nullopt when its text is not
/// what they assume.
std::optional<TextEdits> aliasEdits(const Source& src, const detail::PointerAliasInit& a);
/// The edits that make a rebase of a parameter declare a view of its accessor, or nullopt.
std::optional<TextEdits> rebaseEdits(const Source& src, const detail::PointerRebase& r);

} // namespace memplace::rewrite::detail

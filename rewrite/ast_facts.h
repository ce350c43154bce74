// What the rewriter needs from clang's AST beyond the frontend's KernelInfo and ranges
// (internal): the pointer parameter behind each access site and how the access is written,
// every use of a pointer parameter, every call to a function with a body, every launch (also in
// host templates), references to kernels other than launches, `extern __shared__` declarations,
// the file's own __constant__ bytes, and the synchronisation a kernel performs.
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace memplace::rewrite::detail {

/// The definition a function's body is written in: the template pattern for an instantiation,
/// the definition for a declaration.
const clang::FunctionDecl* patternOf(const clang::FunctionDecl* fd);

/// The C language linkage a declaration is written in: none, an `extern "C" { ... }` block (the
/// rewriter gives a template written there C++ linkage with `extern "C++"`), or `extern "C"`
/// written on the declaration itself (kept as written).
enum class CLinkage { None, Block, OnDeclaration };
CLinkage cLinkageOf(const clang::Decl* d);

/// A parameter of a function as written: (pattern, position). The same for the pattern and
/// every instantiation.
struct ParamKey {
    const clang::FunctionDecl* fn = nullptr;
    unsigned index = 0;
    auto operator<=>(const ParamKey&) const = default;
};
/// The key of a reference to a function parameter of pointer type.
std::optional<ParamKey> pointerParamOf(const clang::DeclRefExpr* dre);

/// How an access site is written, as seen in the AST of an analysed (instantiated) kernel.
enum class Shape {
    Subscript,   ///< a[i]
    Deref,       ///< *a
    DerefAdd,    ///< *(a + i), *(a + i * w + j - 1)
    Arrow,       ///< a->m
    ArrowAdd,    ///< (a + i)->m
    AtomicAddr,  ///< atomicAdd(&a[i], v)
    AtomicAdd,   ///< atomicAdd(a + i, v)
    AtomicPlain, ///< atomicAdd(a, v)
    LdgAddr,     ///< __ldg(&a[i])
    LdgAdd,      ///< __ldg(a + i)
    LdgPlain,    ///< __ldg(a)
};
const char* shapeName(Shape s);

/// An integer term of a pointer sum: `c` of `p + r * w + c`, `1` (subtracted) of `p - 1`.
struct OffsetTerm {
    const clang::Expr* expr = nullptr;
    bool negated = false;
};

struct SiteShape {
    Shape shape = Shape::Subscript;
    const clang::DeclRefExpr* base = nullptr;
    const clang::Expr* index = nullptr; ///< null for the plain forms (index 0)
    /// DerefAdd: every term of `*(p + a + b - c)` in source order (index is the first).
    std::vector<OffsetTerm> terms;
    /// Subscript and Deref forms whose element is the base of a `.member` access: that
    /// MemberExpr (its operator is the '.'). Arrow forms: the site itself.
    const clang::MemberExpr* member = nullptr;
    std::string why; ///< when the site cannot be expressed through an accessor
};
/// A local pointer declared alone in its statement and initialised with a pointer into a
/// pointer parameter: `const float* row = m + r * cols;` (terms `r * cols`), `const float* q =
/// &a[i];` (`element`: the term is the subscript's index), `float* p = a;` (no term).
struct PointerAliasInit {
    const clang::VarDecl* var = nullptr;
    const clang::DeclRefExpr* param = nullptr;
    std::vector<OffsetTerm> terms;
    const clang::ArraySubscriptExpr* element = nullptr;
};
/// The pointer aliases declared in `body` (a kernel's), in source order.
std::vector<PointerAliasInit> pointerAliasesIn(const clang::Stmt* body);

/// A pointer parameter rebased by a statement of the kernel's own body: `src += offset;`
/// (`negated` for `-=`).
struct PointerRebase {
    const clang::BinaryOperator* op = nullptr;
    const clang::DeclRefExpr* param = nullptr;
    bool negated = false;
};
/// The rebases among the statements of `body` (a kernel's), in source order.
std::vector<PointerRebase> pointerRebasesIn(const clang::Stmt* body);

/// The form of the site expression the frontend recorded (SiteSource::expr), or why it is not
/// one the rewriter handles (`why` set, `base` possibly null).
SiteShape shapeOf(clang::ASTContext& ctx, const clang::Expr* site);

/// Whether the element read at `site` flows into a context that deduces its type (`auto`, a
/// function template's deduced parameter, a variadic argument): there a written array's proxy
/// would be deduced instead of the value, so the rewriter emits memplace::value(...).
bool deducesType(clang::ASTContext& ctx, const clang::Expr* site);
/// Whether the element at `site` is bound to a non-const reference (a variable, a parameter, a
/// returned reference, std::swap): only a global accessor's T& could serve it. Returns the
/// location of the binding, or an invalid location.
clang::SourceLocation bindsNonConstRef(clang::ASTContext& ctx, const clang::Expr* site);

/// A `k<<<...>>>(...)` written in one of the program's files, with every AST node that spells it (a
/// launch in a host template appears in the pattern and once per instantiation).
struct LaunchFact {
    unsigned offset = 0; ///< its first character's raw source location (include order)
    std::vector<const clang::CUDAKernelCallExpr*> calls;
    /// The instantiated (non-dependent) calls, each with its launched kernel.
    std::vector<std::pair<const clang::CUDAKernelCallExpr*, const clang::FunctionDecl*>> resolved;
    /// A call in a host template pattern (or in code never instantiated): no kernel resolved.
    const clang::CUDAKernelCallExpr* dependent = nullptr;
};

struct Facts {
    std::map<unsigned, LaunchFact> launches; ///< by LaunchFact::offset
    /// Every reference to a pointer parameter inside a function that is not a template pattern.
    std::vector<std::pair<const clang::DeclRefExpr*, ParamKey>> paramUses;
    /// Every call with a callee that has a body, in code that is not a template pattern.
    std::vector<const clang::CallExpr*> calls;
    /// References to a kernel other than as a launch's callee: (kernel pattern, where).
    std::vector<std::pair<const clang::FunctionDecl*, clang::SourceLocation>> kernelRefs;
    /// Kernels named by a cache preference (`cudaFuncSetCacheConfig(kernel, ...)`,
    /// `cudaFuncSetSharedMemConfig`), without template arguments: (kernel pattern, the name).
    std::vector<std::pair<const clang::FunctionDecl*, const clang::DeclRefExpr*>> kernelCacheHints;
    /// `extern __shared__ T name[]` declarations in the program's files, one per declaration.
    std::vector<const clang::VarDecl*> externShared;
    /// Bytes of `__constant__` data the translation unit defines itself.
    uint64_t ownConstantBytes = 0;
};
/// `isProgramFile`: the files whose launches and declarations the rewriter may edit
/// (frontend::Analysis::isProgramFile).
Facts collectFacts(clang::ASTContext& ctx, const std::function<bool(clang::FileID)>& isProgramFile);

/// What a kernel's body (and the functions it calls) does that matters for shared staging of
/// written arrays.
struct SyncFacts {
    bool barrier = false; ///< calls __syncthreads (or another block barrier)
    clang::SourceLocation barrierAt;
    bool earlyReturn = false; ///< a `return` in the kernel's own body
    clang::SourceLocation returnAt;
    bool interBlock = false;   ///< global atomics, fences, volatile, asm: blocks may talk
    std::string interBlockWhy; ///< "atomicAdd at 12:5", ...
};
SyncFacts syncFactsOf(clang::ASTContext& ctx, const clang::FunctionDecl* kernel);

} // namespace memplace::rewrite::detail

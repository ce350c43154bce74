// The kernel walker's shared declarations (internal to the frontend): the walk's limits, how an
// expression is used, the frames of the call stack, the patterns that designate an array, and the
// KernelWalker class whose members are defined by phase in kernel_analyzer.cpp (entry, arrays),
// kernel_walk.cpp (statements, expressions), kernel_pointer_alias.cpp (local pointers into
// arrays), kernel_accesses.cpp (subscripts, sites, hazards), kernel_calls.cpp (calls),
// kernel_loops.cpp (loops, trip counts), kernel_targets.cpp (what pointers reach: aliasing)
// and kernel_eval.cpp (symbolic values of index expressions).
#pragma once

#include "frontend/analysis_internal.h"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/StmtCXX.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace memplace::frontend::detail {

// The walker's files are written against clang's AST throughout.
using namespace clang;
namespace ki = memplace::kernelinfo;

constexpr size_t kMaxCallDepth = 12;
constexpr size_t kMaxContextsKept = 16;
constexpr int kMaxEvalDepth = 64;
/// Statements and expressions nested deeper than this are not walked (their arrays stay home,
/// with a warning): the walk recurses, and a 10,000-term sum would overflow the stack.
constexpr int kMaxWalkDepth = 256;
constexpr int64_t kMaxSimulatedTrips = 1 << 20;

/// How the walked expression is used by what contains it.
enum class Use { Read, Write, ReadWrite, AddressOf, Store, Escape };

/// What a pointer may point into, for the aliasing check: `__device__`/`__managed__` variables
/// named in the program, or something neither the frontend nor the runtime knows (why). Arrays
/// of the kernel the runtime sees (parameters) and thread- or block-private memory (locals,
/// `__shared__`) add nothing.
struct Targets {
    std::vector<const VarDecl*> globals;
    std::string unknown;
    void merge(const Targets& o) {
        globals.insert(globals.end(), o.globals.begin(), o.globals.end());
        if (unknown.empty()) {
            unknown = o.unknown;
        }
    }
};

/// A function being walked (the kernel, or a helper it calls) and what its parameters are bound
/// to.
struct Frame {
    const FunctionDecl* fn = nullptr;
    std::map<const ParmVarDecl*, int> arrayParams;
    /// Pointer parameters bound to no array of the kernel: what their arguments point into.
    std::map<const ParmVarDecl*, Targets> pointerTargets;
    std::map<const ParmVarDecl*, SymValue> scalarParams;
    std::vector<ki::CallFrame> callPath;
    const DefUse* defuse = nullptr;
};

/// A loop around the walk's position.
struct ActiveLoop {
    int raw = -1;
    const VarDecl* iv = nullptr;
    SymValue value; ///< the variable's value in terms of the loop's iteration symbol
};

/// A pointer expression that designates (part of) an array.
struct PointerMatch {
    int array = -1;
    const Expr* base = nullptr; ///< the array operand as written
    /// The integer terms added to the array, in source order: `i` of `a + i`; `r * w`, `c`
    /// of `a + r * w + c`; a subtracted term (`a - i`) is negated. Empty: offset 0.
    std::vector<std::pair<const Expr*, bool>> terms;
    const ArraySubscriptExpr* element = nullptr; ///< `&a[i]`
    std::vector<const Expr*> elementIndices;     ///< `&a[i][j]`: i, j
};

/// A local pointer initialised at its declaration with a pointer into an array parameter
/// (`const float* row = m + r * cols;`, `const float* q = &a[i];`) and used only to subscript
/// it (`row[k]`): its accesses are accesses of the array at the local's offset. The rewriter
/// makes it a view of the accessor (`auto row = memplace::offset(m, r * cols);`), which
/// evaluates the offset once, where the original did.
struct PointerAlias {
    int array = -1;
    SymValue offset;
    std::string text; ///< the offset as written ("r * cols")
};

/// A (possibly multi-dimensional) subscript of an array.
struct SubscriptMatch {
    int array = -1;
    const Expr* base = nullptr;
    std::vector<const Expr*> indices; ///< outermost dimension first
    /// `row[k]` through a local pointer into the array (`const T* row = a + r * w;`): the
    /// local's offset, added to the index.
    const PointerAlias* alias = nullptr;
};

/// The trip count of `for (x = init; x cmp bound; x = x op factor)` (op: *, /, <<, >>), by
/// simulation; none when the loop runs more than kMaxSimulatedTrips times or never ends.
std::optional<int64_t> geometricTripCount(int64_t init, int64_t bound, int64_t factor,
                                          clang::BinaryOperatorKind cmp,
                                          clang::BinaryOperatorKind op);
/// The trip count of `for (x = init; x cmp bound; x += step)`; none when it does not end.
std::optional<int64_t> affineTripCount(int64_t init, int64_t bound, int64_t step,
                                       clang::BinaryOperatorKind cmp);

/// Two values of which one is not a polynomial, combined: indirect when either is (the arrays
/// both read), otherwise the first unknown one.
SymValue combineValues(const SymValue& a, const SymValue& b);
std::optional<int64_t> apsToInt64(const llvm::APSInt& v);
/// `s` on one line, at most `n` characters (for messages).
std::string truncate(std::string s, size_t n = 60);
AccessMode accessOf(Use u);

/// Walks one kernel (one instantiation) and fills a RawKernel.
class KernelWalker {
public:
    KernelWalker(const FunctionDecl* kernel, ASTContext& ctx, const Locator& locator)
        : ctx_(ctx), loc_(locator), sm_(locator.sm()) {
        raw_.fn = kernel;
    }

    RawKernel run();

private:
    // ---- arrays ----
    int addArray(ki::ArrayInfo a, const ValueDecl* decl);
    void describePointee(ki::ArrayInfo& a, QualType pointee);
    void registerParam(const ParmVarDecl* p, int index);
    std::optional<int> registerVar(const VarDecl* vd);
    std::optional<int> arrayOf(const Expr* e, bool* reinterpreted = nullptr);
    std::optional<PointerMatch> matchPointer(const Expr* e);
    std::optional<SubscriptMatch> matchSubscript(const ArraySubscriptExpr* ase);

    // ---- walking ----
    void walkStmt(const Stmt* s);
    void walkExpr(const Expr* e, Use use);
    // walkExpr's cases.
    void walkUnary(const UnaryOperator* u, Use use);
    void walkBinary(const BinaryOperator* b, Use use);
    /// A constructor's arguments; a pointer into an array stored in the object is a hazard.
    void walkConstruct(const CXXConstructExpr* ctor);
    void walkExplicitCast(const ExplicitCastExpr* ce, Use use);
    /// A name: an array of the kernel used as a value, or a `__device__` variable accessed.
    void walkDeclRef(const DeclRefExpr* dre, Use use);
    /// Below kMaxWalkDepth: instead of walking `s`, keeps every array it names home.
    void keepArraysHome(const Stmt* s);
    void walkVarInit(const VarDecl* vd);
    /// `vd` as a PointerAlias (its offset walked), when it is one; false otherwise.
    bool recordAlias(const VarDecl* vd);
    /// A parameter rebased at the top of the kernel (`src += offset;`) as a PointerAlias of
    /// itself; false when `e` is not one.
    bool recordRebase(const Expr* e);
    void handleSubscript(const ArraySubscriptExpr* ase, Use use, const std::string& member);
    void handleMember(const MemberExpr* me, Use use);
    void handleCall(const CallExpr* call, Use use);
    bool handleIntrinsic(const CallExpr* call, const std::string& name);
    bool handleTextureFetch(const CallExpr* call, const std::string& name);
    void callHelper(const CallExpr* call, const FunctionDecl* def);
    void opaqueCall(const CallExpr* call, const FunctionDecl* fd, const std::string& why);
    /// `p->method()` with a non-const method: the object behind `p` may be written.
    void noteMethodObject(const CXXMemberCallExpr* mc);
    void handleArrayValue(const Expr* e, int array, Use use);
    /// Walks the index parts of a pointer expression: `i` of `a + i`, `i, j` of `&a[i][j]`.
    void walkPointerIndices(const PointerMatch& m);
    /// Reports a subscript of something that is not an array of the kernel; true when it
    /// was a hazard of an array (its base is then not walked again).
    bool reportUntracked(const ArraySubscriptExpr* ase);

    // ---- loops ----
    void beginLoop(const Stmt* loop, const std::string& kind);
    void analyzeFor(const ForStmt* fs, RawLoop& rl, ActiveLoop& al);
    void endLoop() { loops_.pop_back(); }

    // ---- sites, hazards ----
    RawSite& recordSite(const Expr* accessExpr, int array, AccessMode access, ki::SiteForm form,
                        const std::string& intrinsic, const std::string& member, const Expr* base,
                        const std::vector<const Expr*>& indices,
                        const std::vector<SymValue>& values, const SymValue& flat,
                        const std::string& indexText);
    /// An access of a `__device__` array: the variable (or, for a pointer, its unknown target)
    /// is accessed, for the aliasing check.
    void noteSiteOfGlobal(const Expr* accessExpr, int array, AccessMode access);
    /// The site's source ranges for the rewriter; a hazard when they cannot be rewritten.
    void describeSiteSource(RawSite& rs, const Expr* accessExpr, int array, const Expr* base,
                            const std::vector<const Expr*>& indices);
    void recordSubscriptSite(const Expr* accessExpr, const SubscriptMatch& m, AccessMode access,
                             ki::SiteForm form, const std::string& intrinsic,
                             const std::string& member);
    void recordPointerSite(const Expr* accessExpr, const PointerMatch& m, AccessMode access,
                           ki::SiteForm form, const std::string& intrinsic,
                           const std::string& member);
    /// `*p` or `p->m` (`accessExpr`) through `pointer`, a local pointer alias or a rebased
    /// parameter: a site of its array at the alias's offset. False if `pointer` is no alias.
    bool recordAliasElement(const Expr* accessExpr, const Expr* pointer, Use use,
                            const std::string& member);
    void addHazard(ki::HazardKind kind, int array, clang::SourceLocation where, std::string message,
                   const std::string& other = {});

    // ---- globals and unknown targets (aliasing) ----
    /// Records an access by name to a `__device__`/`__managed__` variable.
    void noteGlobal(const VarDecl* vd, bool write, clang::SourceLocation where, std::string how);
    /// Records an access through a pointer whose target is unknown.
    void noteUnknown(bool write, clang::SourceLocation where, const std::string& what);
    /// An access through `pointer` (`what` says which): the globals it may reach, or unknown.
    void noteAccessThrough(const Expr* pointer, bool write, clang::SourceLocation where,
                           const std::string& what);
    void targetsOfPointer(const Expr* e, Targets& out, int depth);
    void targetsOfCast(const CastExpr* ce, Targets& out, int depth);
    void targetsOfObject(const Expr* e, Targets& out, int depth);
    void targetsOfDecl(const DeclRefExpr* dre, Targets& out, int depth);
    /// A `__device__` or `__managed__` variable at namespace or class scope (host code can
    /// name it); not `__constant__`, `__shared__`, nor a function-local static.
    static bool isDeviceVariable(const VarDecl* vd);
    std::string qualifiedName(const VarDecl* vd) const;

    // ---- values ----
    SymValue eval(const Expr* e);
    SymValue evalImpl(const Expr* e);
    SymValue evalUnary(const UnaryOperator* u);
    /// A read through an intrinsic or a texture fetch (indirect), or an inlined helper's value.
    SymValue evalCall(const CallExpr* call);
    SymValue evalDecl(const DeclRefExpr* d);
    SymValue evalBinary(const BinaryOperator* b);
    SymValue evalRead(const Expr* e);
    /// The value of a call to a helper whose body is a single `return expr;` (getGlobalIdx()
    /// and the like), with its parameters bound to the arguments.
    std::optional<SymValue> evalInlineCall(const CallExpr* call);
    std::vector<SymValue> evalIndices(const std::vector<const Expr*>& indices);
    SymValue flatten(int array, const std::vector<SymValue>& values);

    // ---- helpers ----
    Frame& frame() { return frames_.back(); }
    const DefUse* defUseOf(const FunctionDecl* fn);
    std::string text(const Expr* e) const;
    std::string where(clang::SourceLocation l) const {
        return ki::formatLocation(loc_.location(l), loc_.mainName());
    }
    const std::string& arrayName(int i) const { return raw_.info.arrays[i].name; }

    ASTContext& ctx_;
    const Locator& loc_;
    const SourceManager& sm_;
    RawKernel raw_;
    std::vector<Frame> frames_;
    std::vector<ActiveLoop> loops_;
    std::map<const FunctionDecl*, std::unique_ptr<DefUse>> defuse_;
    std::set<const VarDecl*> evaluating_;
    std::vector<const Expr*> exprStack_;
    std::set<std::string> untrackedSeen_;
    std::set<std::tuple<int, int, LocKey>> hazardSeen_;
    std::map<int, const VarDecl*> globalDecl_; ///< DeviceGlobal arrays: their variables
    std::map<const VarDecl*, size_t> globalIndex_;
    std::set<std::pair<LocKey, bool>> unknownSeen_;
    std::set<const VarDecl*> targetsEvaluating_;
    std::map<const VarDecl*, PointerAlias> aliases_;
    int evalDepth_ = 0;
    int walkDepth_ = 0;
};

} // namespace memplace::frontend::detail

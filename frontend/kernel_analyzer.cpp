// The kernel walker: visits a kernel's body in source order, follows calls into `__device__`
// functions (binding their parameters to the caller's arrays and values), and records arrays,
// access sites, loops, hazards and untracked accesses. Index expressions are evaluated
// symbolically (SymValue) in the context of the walk: loop variables, single-definition
// locals, kernel parameters, and the values helpers were called with.
#include "frontend/analysis_internal.h"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/StmtCXX.h>
#include <clang/Lex/Lexer.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <ranges>

namespace memplace::frontend::detail {

using namespace clang;
namespace ki = memplace::kernelinfo;

namespace {

constexpr size_t kMaxCallDepth = 12;
constexpr size_t kMaxContextsKept = 16;
constexpr int kMaxEvalDepth = 64;
/// Statements and expressions nested deeper than this are not walked (their arrays stay home,
/// with a warning): the walk recurses, and a 10,000-term sum would overflow the stack.
constexpr int kMaxWalkDepth = 256;
constexpr int64_t kMaxSimulatedTrips = 1 << 20;

enum class Use { Read, Write, ReadWrite, AddressOf, Store, Escape };

AccessMode accessOf(Use u) {
    switch (u) {
    case Use::Write:
        return AccessMode::Write;
    case Use::ReadWrite:
        return AccessMode::ReadWrite;
    default:
        return AccessMode::Read;
    }
}

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

struct Frame {
    const FunctionDecl* fn = nullptr;
    std::map<const ParmVarDecl*, int> arrayParams;
    /// Pointer parameters bound to no array of the kernel: what their arguments point into.
    std::map<const ParmVarDecl*, Targets> pointerTargets;
    std::map<const ParmVarDecl*, SymValue> scalarParams;
    std::vector<ki::CallFrame> callPath;
    const DefUse* defuse = nullptr;
};

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

SymValue combineValues(const SymValue& a, const SymValue& b) {
    SymValue r;
    if (a.kind == SymValue::Kind::Indirect || b.kind == SymValue::Kind::Indirect) {
        r.kind = SymValue::Kind::Indirect;
        for (const SymValue* v : {&a, &b}) {
            r.via.insert(v->via.begin(), v->via.end());
            r.viaSites.insert(v->viaSites.begin(), v->viaSites.end());
            if (r.reason.empty() && v->kind == SymValue::Kind::Unknown) {
                r.reason = v->reason;
            }
        }
        return r;
    }
    return a.kind == SymValue::Kind::Unknown ? a : b;
}

bool isIntegral(QualType t) {
    return !t.isNull() && (t->isIntegralOrEnumerationType() || t->isBooleanType());
}

std::optional<int64_t> apsToInt64(const llvm::APSInt& v) {
    if (v.isSigned() ? v.getSignificantBits() <= 64 : v.getActiveBits() <= 63) {
        return v.isSigned() ? v.getSExtValue() : static_cast<int64_t>(v.getZExtValue());
    }
    return std::nullopt;
}

std::string truncate(std::string s, size_t n = 60) {
    for (char& c : s) {
        if (c == '\n' || c == '\t') {
            c = ' ';
        }
    }
    if (s.size() > n) {
        s = s.substr(0, n - 3) + "...";
    }
    return s;
}

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
    void recordSubscriptSite(const Expr* accessExpr, const SubscriptMatch& m, AccessMode access,
                             ki::SiteForm form, const std::string& intrinsic,
                             const std::string& member);
    void recordPointerSite(const Expr* accessExpr, const PointerMatch& m, AccessMode access,
                           ki::SiteForm form, const std::string& intrinsic,
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
    void targetsOfObject(const Expr* e, Targets& out, int depth);
    void targetsOfDecl(const DeclRefExpr* dre, Targets& out, int depth);
    /// A `__device__` or `__managed__` variable at namespace or class scope (host code can
    /// name it); not `__constant__`, `__shared__`, nor a function-local static.
    static bool isDeviceVariable(const VarDecl* vd);
    std::string qualifiedName(const VarDecl* vd) const;

    // ---- values ----
    SymValue eval(const Expr* e);
    SymValue evalImpl(const Expr* e);
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

// ============================================================================ arrays ====

int KernelWalker::addArray(ki::ArrayInfo a, const ValueDecl* decl) {
    std::string base = a.name;
    for (int n = 2; raw_.info.findArray(a.name) != nullptr; ++n) {
        a.name = fmt::format("{}#{}", base, n);
    }
    raw_.info.arrays.push_back(std::move(a));
    int idx = static_cast<int>(raw_.info.arrays.size()) - 1;
    raw_.arrayOfDecl[decl] = idx;
    return idx;
}

void KernelWalker::describePointee(ki::ArrayInfo& a, QualType pointee) {
    a.isConst = pointee.isConstQualified();
    QualType elem = pointee;
    if (const IncompleteArrayType* iat = ctx_.getAsIncompleteArrayType(elem)) {
        elem = iat->getElementType(); // extern __shared__ T s[]
    }
    while (const ConstantArrayType* cat = ctx_.getAsConstantArrayType(elem)) {
        if (a.dims.empty() && a.kind == ki::ArrayKind::Parameter) {
            a.dims.push_back(0); // a pointer to arrays: the outer extent is the allocation's
        }
        a.dims.push_back(cat->getSize().getZExtValue());
        elem = cat->getElementType();
        a.isConst = a.isConst || elem.isConstQualified();
    }
    a.elementType = typeName(elem.getUnqualifiedType(), ctx_);
    a.elementSize = (elem->isIncompleteType() || elem->isDependentType() || elem->isVoidType())
                        ? 0
                        : static_cast<uint64_t>(ctx_.getTypeSizeInChars(elem).getQuantity());
    if (a.dims.size() >= 2) {
        a.dimensionality = static_cast<int>(a.dims.size());
        a.rowLength = Poly::constant(static_cast<int64_t>(a.dims.back()));
    }
}

void KernelWalker::registerParam(const ParmVarDecl* p, int index) {
    QualType t = p->getType();
    ki::ArrayInfo a;
    a.name = p->getNameAsString();
    a.paramIndex = index;
    a.declaration = loc_.location(p->getLocation());
    if (isTextureObjectType(t)) {
        a.kind = ki::ArrayKind::TextureObject;
        a.extent.source = "bound by the host code";
        int idx = addArray(std::move(a), p);
        frame().arrayParams[p] = idx;
        return;
    }
    if (!t->isPointerType() || t->getPointeeType()->isFunctionType()) {
        return;
    }
    a.kind = ki::ArrayKind::Parameter;
    a.isRestrict = t.isRestrictQualified();
    describePointee(a, t->getPointeeType());
    if (a.dims.size() >= 2) {
        // A pointer to rows: dims[0] (the row count) is the allocation's.
        a.rowLength = Poly::constant(static_cast<int64_t>(a.dims.back()));
    }
    int idx = addArray(std::move(a), p);
    frame().arrayParams[p] = idx;
}

std::optional<int> KernelWalker::registerVar(const VarDecl* vd) {
    if (auto it = raw_.arrayOfDecl.find(vd); it != raw_.arrayOfDecl.end()) {
        return it->second;
    }
    bool shared = vd->hasAttr<CUDASharedAttr>();
    bool constant = vd->hasAttr<CUDAConstantAttr>();
    bool device = vd->hasAttr<CUDADeviceAttr>();
    if (!shared && !constant && !device) {
        return std::nullopt;
    }
    if (!vd->hasGlobalStorage()) {
        return std::nullopt;
    }
    QualType t = vd->getType();
    ki::ArrayInfo a;
    a.name = vd->getNameAsString();
    a.declaration = loc_.location(vd->getLocation());
    a.kind = shared     ? ki::ArrayKind::Shared
             : constant ? ki::ArrayKind::ConstantGlobal
                        : ki::ArrayKind::DeviceGlobal;
    if (t->isArrayType()) {
        describePointee(a, t);
        if (ctx_.getAsConstantArrayType(t) != nullptr) {
            a.extent.bytes = static_cast<uint64_t>(ctx_.getTypeSizeInChars(t).getQuantity());
            a.extent.source = "static";
        } else {
            a.extent.source =
                shared ? "the launch's dynamic shared memory size" : "declared without a size";
        }
        if (a.dims.size() == 1) {
            a.dims.clear(); // a plain 1-D array: dims only for multi-dimensional ones
        }
    } else if (t->isPointerType() && !t->getPointeeType()->isFunctionType()) {
        describePointee(a, t->getPointeeType());
        a.extent.source = "a global pointer: its target is set by the host code";
    } else {
        return std::nullopt;
    }
    const bool deviceGlobal = a.kind == ki::ArrayKind::DeviceGlobal;
    int idx = addArray(std::move(a), vd);
    if (deviceGlobal) {
        globalDecl_[idx] = vd;
    }
    return idx;
}

std::optional<int> KernelWalker::arrayOf(const Expr* e, bool* reinterpreted) {
    e = stripImplicit(e);
    // Explicit casts that keep the element type (adding const, C-style casts to the same
    // type) designate the same array; others reinterpret it.
    while (const auto* ce = dyn_cast_or_null<ExplicitCastExpr>(e)) {
        const Expr* sub = stripImplicit(ce->getSubExpr());
        QualType to = ce->getType();
        QualType from = sub->getType();
        if (from->isArrayType()) {
            from = ctx_.getArrayDecayedType(from);
        }
        if (!to->isPointerType() || !from->isPointerType()) {
            return std::nullopt;
        }
        if (!ctx_.hasSameUnqualifiedType(to->getPointeeType(), from->getPointeeType())) {
            if (reinterpreted != nullptr && arrayOf(sub).has_value()) {
                *reinterpreted = true;
            }
            return std::nullopt;
        }
        e = sub;
    }
    const auto* dre = dyn_cast_or_null<DeclRefExpr>(e);
    if (dre == nullptr) {
        return std::nullopt;
    }
    if (const auto* p = dyn_cast<ParmVarDecl>(dre->getDecl())) {
        for (const Frame& f : std::views::reverse(frames_)) {
            if (auto it = f.arrayParams.find(p); it != f.arrayParams.end()) {
                return it->second;
            }
        }
        return std::nullopt;
    }
    if (const auto* vd = dyn_cast<VarDecl>(dre->getDecl())) {
        return registerVar(vd);
    }
    return std::nullopt;
}

std::optional<PointerMatch> KernelWalker::matchPointer(const Expr* e) {
    const Expr* s = stripImplicit(e);
    if (s == nullptr) {
        return std::nullopt;
    }
    PointerMatch m;
    if (auto a = arrayOf(s)) {
        if (raw_.info.arrays[*a].kind == ki::ArrayKind::TextureObject) {
            return std::nullopt;
        }
        m.array = *a;
        m.base = s;
        return m;
    }
    if (const auto* b = dyn_cast<BinaryOperator>(s)) {
        if (b->getOpcode() == BO_Add || b->getOpcode() == BO_Sub) {
            const Expr* l = b->getLHS();
            const Expr* r = b->getRHS();
            if (isIntegral(r->getType()) && l->getType()->isPointerType()) {
                // `a + i`, and chains of integer terms `a + r * w + c - 1` (parsed
                // `((a + r * w) + c) - 1`).
                if (auto inner = matchPointer(l); inner && inner->element == nullptr) {
                    inner->terms.emplace_back(r, b->getOpcode() == BO_Sub);
                    return inner;
                }
            }
            if (auto a = arrayOf(r); a && b->getOpcode() == BO_Add && isIntegral(l->getType())) {
                m.array = *a;
                m.base = stripImplicit(r);
                m.terms.emplace_back(l, false);
                return m;
            }
        }
    }
    if (const auto* u = dyn_cast<UnaryOperator>(s); u && u->getOpcode() == UO_AddrOf) {
        if (const auto* ase = dyn_cast<ArraySubscriptExpr>(u->getSubExpr()->IgnoreParens())) {
            if (auto sm = matchSubscript(ase)) {
                m.array = sm->array;
                m.base = sm->base;
                m.element = ase;
                m.elementIndices = sm->indices;
                return m;
            }
        }
    }
    return std::nullopt;
}

std::optional<SubscriptMatch> KernelWalker::matchSubscript(const ArraySubscriptExpr* ase) {
    std::vector<const Expr*> indices = {ase->getIdx()};
    const Expr* base = ase->getBase()->IgnoreParenImpCasts();
    while (const auto* inner = dyn_cast<ArraySubscriptExpr>(base)) {
        if (!inner->getType()->isArrayType()) {
            break; // a[i][j] with a of type T**: a[i] is an access of its own
        }
        indices.insert(indices.begin(), inner->getIdx());
        base = inner->getBase()->IgnoreParenImpCasts();
    }
    if (const auto* dre = dyn_cast<DeclRefExpr>(base); dre != nullptr && indices.size() == 1) {
        if (const auto* vd = dyn_cast<VarDecl>(dre->getDecl())) {
            if (auto it = aliases_.find(vd); it != aliases_.end()) {
                return SubscriptMatch{it->second.array, base, std::move(indices), &it->second};
            }
        }
    }
    auto a = arrayOf(base);
    if (!a || raw_.info.arrays[*a].kind == ki::ArrayKind::TextureObject) {
        return std::nullopt;
    }
    return SubscriptMatch{*a, base, std::move(indices)};
}

// ============================================================================ walking ===

/// Counts the walk's nesting for as long as it lives.
struct DepthGuard {
    int& depth;
    explicit DepthGuard(int& d) : depth(d) { ++depth; }
    ~DepthGuard() { --depth; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
};

void KernelWalker::keepArraysHome(const Stmt* s) {
    // What the unwalked code writes is unknown too: a global written by name there must still
    // keep every array that may alias it home (KernelInfo::unknownWrites).
    noteUnknown(true, s->getBeginLoc(),
                fmt::format("code nested more than {} levels deep is not analysed", kMaxWalkDepth));
    std::vector<const Stmt*> pending{s};
    while (!pending.empty()) {
        const Stmt* cur = pending.back();
        pending.pop_back();
        if (cur == nullptr) {
            continue;
        }
        if (const auto* e = dyn_cast<Expr>(cur)) {
            if (auto a = arrayOf(e)) {
                // Unseen accesses: read if the elements are const, else read and written.
                ki::ArrayInfo& arr = raw_.info.arrays[*a];
                arr.mode = ki::combine(arr.mode, arr.isConst ? ki::AccessMode::Read
                                                             : ki::AccessMode::ReadWrite);
                addHazard(ki::HazardKind::Unknown, *a, s->getBeginLoc(),
                          fmt::format("'{}' is used in code nested more than {} levels deep, "
                                      "which is not analysed",
                                      arrayName(*a), kMaxWalkDepth));
            }
        }
        for (const Stmt* child : cur->children()) {
            pending.push_back(child);
        }
    }
}

void KernelWalker::walkStmt(const Stmt* s) {
    if (s == nullptr) {
        return;
    }
    if (const auto* e = dyn_cast<Expr>(s)) {
        if (!recordRebase(e)) {
            walkExpr(e, Use::Read);
        }
        return;
    }
    if (walkDepth_ >= kMaxWalkDepth) {
        keepArraysHome(s);
        return;
    }
    DepthGuard depth(walkDepth_);
    if (const auto* fs = dyn_cast<ForStmt>(s)) {
        walkStmt(fs->getInit());
        beginLoop(fs, "for");
        if (fs->getConditionVariableDeclStmt() != nullptr) {
            walkStmt(fs->getConditionVariableDeclStmt());
        }
        walkExpr(fs->getCond(), Use::Read);
        walkStmt(fs->getBody());
        walkExpr(fs->getInc(), Use::Read);
        endLoop();
        return;
    }
    if (const auto* ws = dyn_cast<WhileStmt>(s)) {
        beginLoop(ws, "while");
        if (ws->getConditionVariableDeclStmt() != nullptr) {
            walkStmt(ws->getConditionVariableDeclStmt());
        }
        walkExpr(ws->getCond(), Use::Read);
        walkStmt(ws->getBody());
        endLoop();
        return;
    }
    if (const auto* ds = dyn_cast<DoStmt>(s)) {
        beginLoop(ds, "do");
        walkStmt(ds->getBody());
        walkExpr(ds->getCond(), Use::Read);
        endLoop();
        return;
    }
    if (const auto* rs = dyn_cast<CXXForRangeStmt>(s)) {
        walkStmt(rs->getInit());
        walkStmt(rs->getRangeStmt());
        beginLoop(rs, "for");
        walkStmt(rs->getLoopVarStmt());
        walkStmt(rs->getBody());
        endLoop();
        return;
    }
    if (const auto* ds = dyn_cast<DeclStmt>(s)) {
        for (const Decl* d : ds->decls()) {
            if (const auto* vd = dyn_cast<VarDecl>(d)) {
                if (vd->hasAttr<CUDASharedAttr>()) {
                    registerVar(vd);
                }
                walkVarInit(vd);
            }
        }
        return;
    }
    if (const auto* rs = dyn_cast<ReturnStmt>(s)) {
        if (const Expr* v = rs->getRetValue()) {
            walkExpr(v, v->getType()->isPointerType() ? Use::Escape : Use::Read);
        }
        return;
    }
    for (const Stmt* child : s->children()) {
        walkStmt(child);
    }
}

void KernelWalker::walkVarInit(const VarDecl* vd) {
    const Expr* init = vd->getInit();
    if (init == nullptr) {
        return;
    }
    QualType t = vd->getType();
    if (t->isReferenceType()) {
        walkExpr(init, t->getPointeeType().isConstQualified() ? Use::Read : Use::ReadWrite);
    } else if (t->isPointerType() && recordAlias(vd)) {
        return;
    } else if (t->isPointerType()) {
        walkExpr(init, Use::Store);
    } else {
        walkExpr(init, Use::Read);
    }
}

namespace {

/// A reference to `vd` in `body` that does not subscript it (`vd[k]`, `(vd)[k]`, a 1-D element):
/// one that reads, modifies, passes, captures or takes the address of the pointer; null if none.
const DeclRefExpr* notSubscripted(const VarDecl* vd, const Stmt* body,
                                  const DeclRefExpr* skip = nullptr) {
    bool ok = true;
    const DeclRefExpr* culprit = nullptr;
    // (node, the nearest enclosing node that is not a parenthesis or an implicit cast)
    std::vector<std::pair<const Stmt*, const Stmt*>> pending{{body, nullptr}};
    while (ok && !pending.empty()) {
        auto [cur, parent] = pending.back();
        pending.pop_back();
        if (cur == nullptr) {
            continue;
        }
        if (const auto* dre = dyn_cast<DeclRefExpr>(cur);
            dre != nullptr && dre->getDecl() == vd && dre != skip) {
            const auto* ase = dyn_cast_or_null<ArraySubscriptExpr>(parent);
            ok = ase != nullptr && ase->getBase()->IgnoreParenImpCasts() == dre &&
                 ase->getLHS()->IgnoreParenImpCasts() == dre && !ase->getType()->isArrayType();
            culprit = ok ? nullptr : dre;
            continue;
        }
        const bool transparent = isa<ParenExpr>(cur) || isa<ImplicitCastExpr>(cur);
        for (const Stmt* child : cur->children()) {
            pending.emplace_back(child, transparent ? parent : cur);
        }
    }
    return culprit;
}

} // namespace

/// Whether `s` (or what it contains) refers to `vd`.
bool refersTo(const Stmt* s, const VarDecl* vd) {
    if (s == nullptr) {
        return false;
    }
    if (const auto* dre = dyn_cast<DeclRefExpr>(s); dre != nullptr && dre->getDecl() == vd) {
        return true;
    }
    return std::any_of(s->child_begin(), s->child_end(),
                       [&](const Stmt* c) { return refersTo(c, vd); });
}

bool KernelWalker::recordRebase(const Expr* e) {
    // `src += baseY * pitch + baseX;` as a statement of the kernel's own body, before any other
    // use of `src`, which is afterwards only subscripted: `src[k]` is the array's element
    // `baseY * pitch + baseX + k` (the rewriter: `const auto mp_src = memplace::offset(src,
    // ...)`, and `mp_src[k]`).
    const auto* b = dyn_cast<BinaryOperator>(e->IgnoreParens());
    const auto* body =
        frames_.size() == 1 ? dyn_cast_or_null<CompoundStmt>(frame().fn->getBody()) : nullptr;
    if (b == nullptr || body == nullptr ||
        (b->getOpcode() != BO_AddAssign && b->getOpcode() != BO_SubAssign) ||
        !isIntegral(b->getRHS()->getType())) {
        return false;
    }
    const auto* lhs = dyn_cast<DeclRefExpr>(b->getLHS()->IgnoreParenImpCasts());
    const auto* p = lhs != nullptr ? dyn_cast<ParmVarDecl>(lhs->getDecl()) : nullptr;
    auto it = p != nullptr ? frame().arrayParams.find(p) : frame().arrayParams.end();
    if (it == frame().arrayParams.end() || aliases_.count(p) != 0 ||
        raw_.info.arrays[it->second].kind != ki::ArrayKind::Parameter ||
        raw_.info.arrays[it->second].dims.size() >= 2 ||
        p->getType()->getPointeeType().isVolatileQualified()) {
        return false;
    }
    bool before = false;
    bool top = false;
    for (const Stmt* st : body->body()) {
        if (st == e) {
            top = true;
            break;
        }
        before = before || refersTo(st, p);
    }
    if (!top || before || notSubscripted(p, body, lhs) != nullptr) {
        return false;
    }
    PointerAlias alias;
    alias.array = it->second;
    const bool negated = b->getOpcode() == BO_SubAssign;
    alias.offset = eval(b->getRHS());
    if (negated && alias.offset.isPoly()) {
        alias.offset = SymValue::ofPoly(-alias.offset.poly);
    }
    alias.text = (negated ? "-(" : "") + text(b->getRHS()) + (negated ? ")" : "");
    walkExpr(b->getRHS(), Use::Read);
    aliases_[p] = std::move(alias);
    return true;
}

bool KernelWalker::recordAlias(const VarDecl* vd) {
    // Locals of the kernel itself (not of helpers, whose arrays may differ per call), one per
    // declaration statement (the rewriter edits the declaration), not volatile.
    if (frames_.size() != 1 || !vd->hasLocalStorage() || isa<ParmVarDecl>(vd) ||
        vd->getDeclContext() != frame().fn ||
        vd->getType()->getPointeeType().isVolatileQualified() || frame().fn->getBody() == nullptr) {
        return false;
    }
    auto m = matchPointer(vd->getInit());
    if (!m || raw_.info.arrays[m->array].kind != ki::ArrayKind::Parameter ||
        raw_.info.arrays[m->array].dims.size() >= 2 ||
        (m->element != nullptr && m->elementIndices.size() != 1) ||
        !ctx_.hasSameUnqualifiedType(vd->getType()->getPointeeType(),
                                     m->base->getType()->getPointeeType())) {
        return false;
    }
    if (const DeclRefExpr* other = notSubscripted(vd, frame().fn->getBody())) {
        // Moved, passed on, compared...: its accesses are not followed; the array stays home.
        addHazard(ki::HazardKind::PointerArithmetic, m->array, vd->getInit()->getBeginLoc(),
                  fmt::format("the local pointer '{}' = '{}' is used other than as {}[k] ({})",
                              vd->getNameAsString(), truncate(text(vd->getInit())),
                              vd->getNameAsString(), where(other->getBeginLoc())));
        walkPointerIndices(*m);
        return true;
    }
    PointerAlias alias;
    alias.array = m->array;
    alias.offset = SymValue::constant(0);
    std::vector<std::pair<const Expr*, bool>> terms = m->terms;
    if (m->element != nullptr) {
        terms.emplace_back(m->elementIndices[0], false);
    }
    for (const auto& [term, negated] : terms) {
        SymValue v = eval(term);
        if (negated && v.isPoly()) {
            v = SymValue::ofPoly(-v.poly);
        }
        alias.offset = alias.text.empty() ? v
                       : alias.offset.isPoly() && v.isPoly()
                           ? SymValue::ofPoly(alias.offset.poly + v.poly)
                           : combineValues(alias.offset, v);
        alias.text += alias.text.empty() ? (negated ? "-" : "") + text(term)
                                         : (negated ? " - " : " + ") + text(term);
    }
    if (alias.text.empty()) {
        alias.text = "0";
    }
    walkPointerIndices(*m);
    aliases_[vd] = std::move(alias);
    return true;
}

void KernelWalker::walkExpr(const Expr* e, Use use) {
    if (e == nullptr) {
        return;
    }
    e = e->IgnoreParens();
    if (walkDepth_ >= kMaxWalkDepth) {
        keepArraysHome(e);
        return;
    }
    DepthGuard depth(walkDepth_);
    exprStack_.push_back(e);
    struct Pop {
        std::vector<const Expr*>& s;
        ~Pop() { s.pop_back(); }
    } pop{exprStack_};

    if (const auto* ice = dyn_cast<ImplicitCastExpr>(e)) {
        walkExpr(ice->getSubExpr(), use);
        return;
    }
    if (const auto* ase = dyn_cast<ArraySubscriptExpr>(e)) {
        handleSubscript(ase, use, "");
        return;
    }
    if (const auto* me = dyn_cast<MemberExpr>(e)) {
        handleMember(me, use);
        return;
    }
    if (const auto* u = dyn_cast<UnaryOperator>(e)) {
        const Expr* sub = u->getSubExpr();
        switch (u->getOpcode()) {
        case UO_Deref:
            if (auto m = matchPointer(sub)) {
                if (m->element == nullptr) {
                    recordPointerSite(u, *m, accessOf(use), ki::SiteForm::Deref, "", "");
                    walkPointerIndices(*m);
                    return;
                }
            }
            if (use != Use::AddressOf) {
                noteAccessThrough(sub, use != Use::Read, u->getBeginLoc(), truncate(text(u)));
            }
            walkExpr(sub, Use::Read);
            return;
        case UO_AddrOf:
            walkExpr(sub, Use::AddressOf);
            return;
        case UO_PreInc:
        case UO_PreDec:
        case UO_PostInc:
        case UO_PostDec:
            walkExpr(sub, Use::ReadWrite);
            return;
        default:
            walkExpr(sub, Use::Read);
            return;
        }
    }
    if (const auto* b = dyn_cast<BinaryOperator>(e)) {
        if (b->isAssignmentOp()) {
            bool plain = b->getOpcode() == BO_Assign;
            walkExpr(b->getLHS(), plain ? Use::Write : Use::ReadWrite);
            walkExpr(b->getRHS(),
                     plain && b->getLHS()->getType()->isPointerType() ? Use::Store : Use::Read);
            return;
        }
        if (b->getOpcode() == BO_Comma) {
            walkExpr(b->getLHS(), Use::Read);
            walkExpr(b->getRHS(), use);
            return;
        }
        if (b->isAdditiveOp() && b->getType()->isPointerType()) {
            if (auto m = matchPointer(b)) {
                addHazard(ki::HazardKind::PointerArithmetic, m->array, b->getBeginLoc(),
                          fmt::format("pointer arithmetic '{}'", truncate(text(b))));
                walkPointerIndices(*m);
                return;
            }
        }
        walkExpr(b->getLHS(), Use::Read);
        walkExpr(b->getRHS(), Use::Read);
        return;
    }
    if (const auto* co = dyn_cast<AbstractConditionalOperator>(e)) {
        walkExpr(co->getCond(), Use::Read);
        walkExpr(co->getTrueExpr(), use);
        walkExpr(co->getFalseExpr(), use);
        return;
    }
    if (const auto* call = dyn_cast<CallExpr>(e)) {
        handleCall(call, use);
        return;
    }
    if (const auto* ctor = dyn_cast<CXXConstructExpr>(e)) {
        const CXXConstructorDecl* cd = ctor->getConstructor();
        for (unsigned i = 0; i < ctor->getNumArgs(); ++i) {
            const Expr* arg = ctor->getArg(i);
            if (auto m = matchPointer(arg); m && m->element == nullptr) {
                addHazard(ki::HazardKind::Stored, m->array, arg->getBeginLoc(),
                          fmt::format("'{}' is stored in an object of type '{}'",
                                      arrayName(m->array), typeName(ctor->getType(), ctx_)));
                walkPointerIndices(*m);
                continue;
            }
            bool byRef = cd != nullptr && i < cd->getNumParams() &&
                         cd->getParamDecl(i)->getType()->isReferenceType() &&
                         !cd->getParamDecl(i)->getType()->getPointeeType().isConstQualified();
            walkExpr(arg, byRef ? Use::ReadWrite : Use::Read);
        }
        return;
    }
    if (const auto* lambda = dyn_cast<LambdaExpr>(e)) {
        walkStmt(lambda->getBody());
        return;
    }
    if (const auto* ce = dyn_cast<ExplicitCastExpr>(e)) {
        bool reinterpreted = false;
        if (auto a = arrayOf(ce, &reinterpreted)) {
            handleArrayValue(ce, *a, use);
            return;
        }
        if (reinterpreted) {
            if (auto a = arrayOf(ce->getSubExpr())) {
                addHazard(ki::HazardKind::Reinterpreted, *a, ce->getBeginLoc(),
                          fmt::format("'{}' is reinterpreted as '{}'", arrayName(*a),
                                      typeName(ce->getType(), ctx_)));
                return;
            }
        }
        walkExpr(ce->getSubExpr(), use);
        return;
    }
    if (const auto* dre = dyn_cast<DeclRefExpr>(e)) {
        if (auto a = arrayOf(dre)) {
            handleArrayValue(dre, *a, use);
        } else if (const auto* vd = dyn_cast<VarDecl>(dre->getDecl()); isDeviceVariable(vd)) {
            const std::string name = vd->getNameAsString();
            switch (use) {
            case Use::Read:
                noteGlobal(vd, false, dre->getBeginLoc(), fmt::format("'{}' is read", name));
                break;
            case Use::Write:
                noteGlobal(vd, true, dre->getBeginLoc(), fmt::format("'{}' is written", name));
                break;
            case Use::ReadWrite:
                noteGlobal(vd, true, dre->getBeginLoc(), fmt::format("'{}' is updated", name));
                break;
            default:
                noteGlobal(vd, true, dre->getBeginLoc(),
                           fmt::format("the address of '{}' is taken", name));
                break;
            }
        }
        return;
    }
    if (const auto* il = dyn_cast<InitListExpr>(e)) {
        for (const Expr* init : il->inits()) {
            walkExpr(init, init->getType()->isPointerType() ? Use::Store : Use::Read);
        }
        return;
    }
    if (isa<PseudoObjectExpr>(e) || isa<MSPropertyRefExpr>(e)) {
        return; // threadIdx.x and friends
    }
    if (isa<UnaryExprOrTypeTraitExpr>(e)) {
        return; // sizeof, alignof: not evaluated
    }
    for (const Stmt* child : e->children()) {
        if (const auto* ce = dyn_cast_or_null<Expr>(child)) {
            walkExpr(ce, Use::Read);
        } else {
            walkStmt(child);
        }
    }
}

void KernelWalker::walkPointerIndices(const PointerMatch& m) {
    for (const auto& [term, negated] : m.terms) {
        walkExpr(term, Use::Read);
    }
    for (const Expr* i : m.elementIndices) {
        walkExpr(i, Use::Read);
    }
}

void KernelWalker::handleArrayValue(const Expr* e, int array, Use use) {
    const std::string& name = arrayName(array);
    if (auto g = globalDecl_.find(array);
        g != globalDecl_.end() && g->second->getType()->isPointerType() &&
        (use == Use::Write || use == Use::ReadWrite || use == Use::AddressOf)) {
        // The pointer variable's own storage: a pointer argument into it sees the write.
        noteGlobal(g->second, true, e->getBeginLoc(),
                   use == Use::AddressOf ? fmt::format("the address of '{}' is taken", name)
                                         : fmt::format("'{}' itself is modified", name));
    }
    if (raw_.info.arrays[array].kind == ki::ArrayKind::TextureObject && use == Use::Read) {
        addHazard(ki::HazardKind::Unknown, array, e->getBeginLoc(),
                  fmt::format("texture object '{}' is used other than in a fetch", name));
        return;
    }
    switch (use) {
    case Use::Write:
    case Use::ReadWrite:
        addHazard(ki::HazardKind::PointerArithmetic, array, e->getBeginLoc(),
                  fmt::format("'{}' itself is modified", name));
        return;
    case Use::Store:
    case Use::AddressOf:
        addHazard(ki::HazardKind::Stored, array, e->getBeginLoc(),
                  fmt::format("'{}' is stored in a variable", name));
        return;
    case Use::Escape:
        addHazard(ki::HazardKind::Escapes, array, e->getBeginLoc(),
                  fmt::format("'{}' is returned", name));
        return;
    case Use::Read: {
        const Expr* parent = exprStack_.size() >= 2 ? exprStack_[exprStack_.size() - 2] : nullptr;
        // Skip the implicit casts between the use and what uses it.
        for (size_t i = exprStack_.size(); i-- > 0;) {
            if (!isa<ImplicitCastExpr>(exprStack_[i]) && exprStack_[i] != e &&
                !isa<DeclRefExpr>(exprStack_[i])) {
                parent = exprStack_[i];
                break;
            }
        }
        addHazard(ki::HazardKind::Unknown, array, e->getBeginLoc(),
                  parent != nullptr ? fmt::format("the pointer '{}' is used in '{}'", name,
                                                  truncate(text(parent)))
                                    : fmt::format("the pointer '{}' is used as a value", name));
        return;
    }
    }
}

void KernelWalker::handleSubscript(const ArraySubscriptExpr* ase, Use use,
                                   const std::string& member) {
    auto m = matchSubscript(ase);
    if (!m) {
        if (use != Use::AddressOf) {
            noteAccessThrough(ase->getBase(), use != Use::Read, ase->getBeginLoc(),
                              truncate(text(ase)));
        }
        if (!reportUntracked(ase)) {
            walkExpr(ase->getBase(), Use::Read);
        }
        walkExpr(ase->getIdx(), Use::Read);
        return;
    }
    if (ase->getType()->isArrayType()) {
        // A row of a multi-dimensional array used as a pointer (`float* row = tile[i];`).
        addHazard(ki::HazardKind::PointerArithmetic, m->array, ase->getBeginLoc(),
                  fmt::format("a row '{}' of '{}' is used as a pointer", truncate(text(ase)),
                              arrayName(m->array)));
        for (const Expr* i : m->indices) {
            walkExpr(i, Use::Read);
        }
        return;
    }
    if (use == Use::AddressOf) {
        addHazard(ki::HazardKind::Stored, m->array, ase->getBeginLoc(),
                  fmt::format("the address of '{}' is taken", truncate(text(ase))));
    } else {
        recordSubscriptSite(ase, *m, accessOf(use), ki::SiteForm::Subscript, "", member);
    }
    for (const Expr* i : m->indices) {
        walkExpr(i, Use::Read);
    }
}

void KernelWalker::handleMember(const MemberExpr* me, Use use) {
    // Collect `.a.b` down to what the members are taken of.
    std::string member;
    const MemberExpr* cur = me;
    const Expr* base = nullptr;
    while (true) {
        member.insert(0, "." + cur->getMemberDecl()->getNameAsString());
        base = cur->getBase()->IgnoreParenImpCasts();
        if (cur->isArrow()) {
            break;
        }
        if (const auto* inner = dyn_cast<MemberExpr>(base)) {
            cur = inner;
            continue;
        }
        break;
    }
    Use inner =
        (use == Use::Write || use == Use::ReadWrite || use == Use::AddressOf) ? use : Use::Read;
    if (cur->isArrow()) {
        if (auto m = matchPointer(cur->getBase())) {
            if (m->element == nullptr) {
                recordPointerSite(cur, *m, accessOf(inner), ki::SiteForm::Deref, "", member);
                walkPointerIndices(*m);
                return;
            }
        }
        if (inner != Use::AddressOf) {
            noteAccessThrough(cur->getBase(), inner != Use::Read, cur->getBeginLoc(),
                              truncate(text(cur)));
        }
        walkExpr(cur->getBase(), Use::Read);
        return;
    }
    if (const auto* ase = dyn_cast<ArraySubscriptExpr>(base)) {
        handleSubscript(ase, inner, member);
        return;
    }
    if (const auto* u = dyn_cast<UnaryOperator>(base); u && u->getOpcode() == UO_Deref) {
        if (auto m = matchPointer(u->getSubExpr()); m && m->element == nullptr) {
            recordPointerSite(u, *m, accessOf(inner), ki::SiteForm::Deref, "", member);
            walkPointerIndices(*m);
            return;
        }
    }
    walkExpr(base, inner == Use::Read ? Use::Read : inner);
}

bool KernelWalker::reportUntracked(const ArraySubscriptExpr* ase) {
    const Expr* base = stripImplicit(ase->getBase());
    bool reinterpreted = false;
    if (!arrayOf(base, &reinterpreted) && reinterpreted) {
        const auto* ce = dyn_cast<ExplicitCastExpr>(base);
        if (auto a = arrayOf(ce->getSubExpr())) {
            addHazard(ki::HazardKind::Reinterpreted, *a, ase->getBeginLoc(),
                      fmt::format("'{}' is accessed as '{}' in '{}'", arrayName(*a),
                                  typeName(ce->getType(), ctx_), truncate(text(ase))));
            return true;
        }
    }
    if (auto m = matchPointer(base); m && !m->terms.empty()) {
        addHazard(ki::HazardKind::PointerArithmetic, m->array, ase->getBeginLoc(),
                  fmt::format("subscript of a pointer computed from '{}': '{}'",
                              arrayName(m->array), truncate(text(ase))));
        walkPointerIndices(*m);
        return true;
    }
    QualType bt = base->getType();
    if (!bt->isPointerType()) {
        return false; // a local array: thread-private, not placed
    }
    std::string why;
    if (isa<MemberExpr>(base)) {
        why = "pointer read from a structure member";
    } else if (const auto* dre = dyn_cast<DeclRefExpr>(base)) {
        const auto* vd = dyn_cast<VarDecl>(dre->getDecl());
        std::string name = dre->getDecl()->getName().str();
        why = isa_and_nonnull<ParmVarDecl>(vd)
                  ? fmt::format("pointer parameter '{}' of '{}', bound to no array of the kernel",
                                name, frame().fn->getNameAsString())
              : vd != nullptr && vd->hasLocalStorage()
                  ? fmt::format("local pointer '{}'", name)
                  : fmt::format("pointer '{}' that is not an array of the kernel", name);
    } else if (isa<ArraySubscriptExpr>(base)) {
        why = "pointer read from an array";
    } else {
        why = "computed pointer";
    }
    std::string entry =
        fmt::format("{}: {}: {}", where(ase->getBeginLoc()), truncate(text(ase)), why);
    if (untrackedSeen_.insert(entry).second) {
        raw_.info.untracked.push_back(entry);
    }
    return false;
}

void KernelWalker::handleCall(const CallExpr* call, Use use) {
    std::string name = calleeName(call);
    const FunctionDecl* fd = call->getDirectCallee();
    if (isa<CUDAKernelCallExpr>(call)) {
        opaqueCall(call, fd, "a kernel launched from the device");
        return;
    }
    if (handleIntrinsic(call, name) || handleTextureFetch(call, name)) {
        return;
    }
    if (const auto* oc = dyn_cast<CXXOperatorCallExpr>(call)) {
        // `a[i] = v` on a structure is a call of its (usually implicit) assignment operator.
        const auto* md = dyn_cast_or_null<CXXMethodDecl>(fd);
        if (md != nullptr && oc->getNumArgs() == 2 &&
            (md->isCopyAssignmentOperator() || md->isMoveAssignmentOperator())) {
            walkExpr(oc->getArg(0), Use::Write);
            walkExpr(oc->getArg(1), Use::Read);
            return;
        }
    }
    if (const auto* md = dyn_cast_or_null<CXXMethodDecl>(fd); md && md->getParent()->isLambda()) {
        // A lambda's body is walked where the lambda is written (captures included); here only
        // the arguments are.
        for (const Expr* arg : call->arguments()) {
            walkExpr(arg, Use::Read);
        }
        return;
    }
    const FunctionDecl* def = nullptr;
    if (fd != nullptr && fd->hasBody(def) && def != nullptr && !fd->hasAttr<CUDAGlobalAttr>() &&
        !loc_.inSystemHeader(def->getLocation())) {
        bool recursive = std::any_of(frames_.begin(), frames_.end(),
                                     [&](const Frame& f) { return f.fn == def; });
        if (!recursive && frames_.size() < kMaxCallDepth) {
            (void)use;
            callHelper(call, def);
            return;
        }
        opaqueCall(call, fd, recursive ? "a recursive call" : "a call nested too deeply");
        return;
    }
    opaqueCall(call, fd,
               fd == nullptr                            ? "an indirect call"
               : loc_.inSystemHeader(fd->getLocation()) ? "a library function"
                                                        : "a function whose body is not visible");
}

bool KernelWalker::handleIntrinsic(const CallExpr* call, const std::string& name) {
    bool atomic = isAtomicFunction(name);
    bool load = isLoadIntrinsic(name);
    bool store = isStoreIntrinsic(name);
    if ((!atomic && !load && !store) || call->getNumArgs() == 0) {
        return false;
    }
    auto m = matchPointer(call->getArg(0));
    if (!m) {
        noteAccessThrough(call->getArg(0), !load, call->getBeginLoc(), truncate(text(call)));
        return false;
    }
    AccessMode access = atomic ? AccessMode::Atomic : load ? AccessMode::Read : AccessMode::Write;
    recordPointerSite(call, *m, access, ki::SiteForm::PointerOffset, name, "");
    walkPointerIndices(*m);
    for (unsigned i = 1; i < call->getNumArgs(); ++i) {
        walkExpr(call->getArg(i), Use::Read);
    }
    return true;
}

bool KernelWalker::handleTextureFetch(const CallExpr* call, const std::string& name) {
    if (!isTextureFetch(name) || call->getNumArgs() < 2) {
        return false;
    }
    auto a = arrayOf(call->getArg(0));
    if (!a || raw_.info.arrays[*a].kind != ki::ArrayKind::TextureObject) {
        return false;
    }
    ki::ArrayInfo& arr = raw_.info.arrays[*a];
    QualType rt = call->getType();
    if (arr.elementType.empty() && !rt->isVoidType()) {
        arr.elementType = typeName(rt.getUnqualifiedType(), ctx_);
        arr.elementSize = static_cast<uint64_t>(ctx_.getTypeSizeInChars(rt).getQuantity());
    }
    size_t dims = name.find("3D") != std::string::npos || name == "texCubemap" ? 3
                  : name.find("2D") != std::string::npos                       ? 2
                                                                               : 1;
    dims = std::min<size_t>(dims, call->getNumArgs() - 1);
    if (dims >= 2) {
        arr.dimensionality = std::max(arr.dimensionality, static_cast<int>(dims));
    }
    std::vector<const Expr*> coords;
    for (size_t i = 0; i < dims; ++i) {
        coords.push_back(call->getArg(static_cast<unsigned>(1 + i)));
    }
    std::vector<SymValue> values = evalIndices(coords);
    SymValue flat =
        dims == 1 ? values[0] : SymValue::unknown(fmt::format("{}-D texture coordinates", dims));
    if (dims > 1) {
        for (const auto& v : values) {
            flat = combineValues(flat, v);
        }
    }
    std::string idxText;
    for (const Expr* c : coords) {
        idxText += (idxText.empty() ? "" : ", ") + text(c);
    }
    recordSite(call, *a, AccessMode::Read, ki::SiteForm::TextureFetch, name, "", call->getArg(0),
               coords, dims > 1 ? values : std::vector<SymValue>{}, flat, idxText);
    for (unsigned i = 1; i < call->getNumArgs(); ++i) {
        walkExpr(call->getArg(i), Use::Read);
    }
    return true;
}

void KernelWalker::opaqueCall(const CallExpr* call, const FunctionDecl* fd,
                              const std::string& why) {
    std::string callee = fd != nullptr ? fd->getNameAsString() : truncate(text(call->getCallee()));
    unsigned shift = 0;
    if (const auto* oc = dyn_cast<CXXOperatorCallExpr>(call);
        oc != nullptr && fd != nullptr && isa<CXXMethodDecl>(fd)) {
        shift = 1;
    }
    if (const auto* mc = dyn_cast<CXXMemberCallExpr>(call)) {
        const CXXMethodDecl* md = mc->getMethodDecl();
        walkExpr(mc->getImplicitObjectArgument(),
                 md != nullptr && md->isConst() ? Use::Read : Use::ReadWrite);
    } else if (!isa<CUDAKernelCallExpr>(call)) {
        walkExpr(call->getCallee(), Use::Read);
    }
    if (const auto* mc = dyn_cast<CXXMemberCallExpr>(call)) {
        noteMethodObject(mc);
    }
    for (unsigned i = 0; i < call->getNumArgs(); ++i) {
        const Expr* arg = call->getArg(i);
        if (fd != nullptr && i >= shift && i - shift < fd->getNumParams()) {
            // What the callee may do through a pointer it is given: read const elements, write
            // others (variadic arguments, printf's, are only printed).
            QualType pt = fd->getParamDecl(i - shift)->getType();
            if (pt->isPointerType() && !pt->getPointeeType()->isFunctionType()) {
                noteAccessThrough(
                    arg, !pt->getPointeeType().isConstQualified(), arg->getBeginLoc(),
                    fmt::format("'{}' passed to '{}', {}", truncate(text(arg)), callee, why));
            }
        }
        if (auto m = matchPointer(arg)) {
            addHazard(ki::HazardKind::Escapes, m->array, arg->getBeginLoc(),
                      fmt::format("'{}' is passed to '{}', {}", truncate(text(arg)), callee, why));
            walkPointerIndices(*m);
            continue;
        }
        bool byRef = false;
        if (fd != nullptr && i >= shift && i - shift < fd->getNumParams()) {
            QualType pt = fd->getParamDecl(i - shift)->getType();
            byRef = pt->isReferenceType() && !pt->getPointeeType().isConstQualified();
        } else if (i == 0 && shift == 1) {
            byRef = !cast<CXXMethodDecl>(fd)->isConst();
        }
        walkExpr(arg, byRef ? Use::ReadWrite : Use::Read);
    }
}

void KernelWalker::callHelper(const CallExpr* call, const FunctionDecl* def) {
    Frame nf;
    nf.fn = def;
    nf.callPath = frame().callPath;
    nf.callPath.push_back({def->getNameAsString(), loc_.location(call->getBeginLoc())});
    nf.defuse = defUseOf(def);
    unsigned shift = 0;
    if (isa<CXXOperatorCallExpr>(call) && isa<CXXMethodDecl>(def)) {
        shift = 1;
        walkExpr(call->getArg(0), cast<CXXMethodDecl>(def)->isConst() ? Use::Read : Use::ReadWrite);
    }
    if (const auto* mc = dyn_cast<CXXMemberCallExpr>(call)) {
        const CXXMethodDecl* md = mc->getMethodDecl();
        walkExpr(mc->getImplicitObjectArgument(),
                 md != nullptr && md->isConst() ? Use::Read : Use::ReadWrite);
        noteMethodObject(mc);
    }
    bool withArrays = false;
    for (unsigned i = shift; i < call->getNumArgs(); ++i) {
        const Expr* arg = call->getArg(i);
        const ParmVarDecl* param =
            i - shift < def->getNumParams() ? def->getParamDecl(i - shift) : nullptr;
        if (param == nullptr) {
            walkExpr(arg, Use::Read); // variadic
            continue;
        }
        QualType pt = param->getType();
        if (isTextureObjectType(pt)) {
            if (auto a = arrayOf(arg);
                a && raw_.info.arrays[*a].kind == ki::ArrayKind::TextureObject) {
                nf.arrayParams[param] = *a;
                continue;
            }
        }
        if (pt->isPointerType()) {
            if (auto m = matchPointer(arg)) {
                if (m->terms.empty() && m->element == nullptr) {
                    nf.arrayParams[param] = m->array;
                    withArrays = true;
                    continue;
                }
                addHazard(ki::HazardKind::PointerArithmetic, m->array, arg->getBeginLoc(),
                          fmt::format("'{}' is passed to '{}'", truncate(text(arg)),
                                      def->getNameAsString()));
                walkPointerIndices(*m);
                targetsOfPointer(arg, nf.pointerTargets[param], 0); // into the array: known
                continue;
            }
            if (!pt->getPointeeType()->isFunctionType()) {
                targetsOfPointer(arg, nf.pointerTargets[param], 0);
            }
        }
        if (pt->isReferenceType()) {
            walkExpr(arg, pt->getPointeeType().isConstQualified() ? Use::Read : Use::ReadWrite);
            if (pt->getPointeeType().isConstQualified() && isIntegral(pt->getPointeeType())) {
                nf.scalarParams[param] = eval(arg);
            }
            continue;
        }
        walkExpr(arg, Use::Read);
        nf.scalarParams[param] =
            isIntegral(pt)
                ? eval(arg)
                : SymValue::unknown(fmt::format("parameter '{}' of '{}' is not an integer",
                                                param->getName().str(), def->getNameAsString()));
    }
    if (withArrays && std::find(raw_.helpersWithArrays.begin(), raw_.helpersWithArrays.end(),
                                def) == raw_.helpersWithArrays.end()) {
        raw_.helpersWithArrays.push_back(def);
    }
    frames_.push_back(std::move(nf));
    walkStmt(def->getBody());
    frames_.pop_back();
}

// ============================================================================ loops =====

void KernelWalker::beginLoop(const Stmt* loop, const std::string& kind) {
    LocKey key = locKey(sm_, loop->getBeginLoc());
    RawLoop rl;
    rl.key = key;
    rl.kind = kind;
    rl.location = loc_.location(loop->getBeginLoc());
    rl.parentRaw = loops_.empty() ? -1 : loops_.back().raw;
    rl.callPath = frame().callPath;
    ActiveLoop al;
    auto it = raw_.loopIndex.find(key);
    al.raw = it != raw_.loopIndex.end() ? it->second : static_cast<int>(raw_.loops.size());
    if (const auto* fs = dyn_cast<ForStmt>(loop)) {
        analyzeFor(fs, rl, al);
    } else if (isa<CXXForRangeStmt>(loop)) {
        rl.reason = "a range-based for loop";
    } else {
        rl.reason = fmt::format("a {} loop: no counted induction variable", kind);
    }
    if (it == raw_.loopIndex.end()) {
        raw_.loopIndex[key] = al.raw;
        raw_.loops.push_back(std::move(rl));
    } else {
        RawLoop& old = raw_.loops[it->second];
        ++old.contexts;
        if (old.tripCount != rl.tripCount) {
            old.tripCount.reset();
            old.reason = "the trip count differs between the calls that reach the loop";
        }
        if (old.init != rl.init) {
            old.init.reset();
        }
    }
    loops_.push_back(std::move(al));
}

void KernelWalker::analyzeFor(const ForStmt* fs, RawLoop& rl, ActiveLoop& al) {
    const VarDecl* v = nullptr;
    const Expr* initE = nullptr;
    if (const auto* ds = dyn_cast_or_null<DeclStmt>(fs->getInit()); ds && ds->isSingleDecl()) {
        if (const auto* vd = dyn_cast<VarDecl>(ds->getSingleDecl());
            vd && vd->getInit() && isIntegral(vd->getType())) {
            v = vd;
            initE = vd->getInit();
        }
    } else if (const auto* b = dyn_cast_or_null<BinaryOperator>(fs->getInit());
               b && b->getOpcode() == BO_Assign) {
        if (const auto* dre = dyn_cast<DeclRefExpr>(b->getLHS()->IgnoreParenImpCasts())) {
            if (const auto* vd = dyn_cast<VarDecl>(dre->getDecl());
                vd && isIntegral(vd->getType())) {
                v = vd;
                initE = b->getRHS();
            }
        }
    }
    if (v == nullptr) {
        rl.reason = "no integer induction variable initialised in the loop header";
        return;
    }
    rl.var = v->getNameAsString();
    auto isV = [&](const Expr* e) {
        const auto* dre = dyn_cast_or_null<DeclRefExpr>(stripImplicit(e));
        return dre != nullptr && dre->getDecl() == v;
    };

    // The bound.
    const Expr* boundE = nullptr;
    BinaryOperatorKind cmp = BO_LT;
    if (const auto* c = dyn_cast_or_null<BinaryOperator>(
            fs->getCond() ? fs->getCond()->IgnoreParenImpCasts() : nullptr);
        c && c->isComparisonOp()) {
        if (isV(c->getLHS())) {
            boundE = c->getRHS();
            cmp = c->getOpcode();
        } else if (isV(c->getRHS())) {
            boundE = c->getLHS();
            cmp = BinaryOperator::reverseComparisonOp(c->getOpcode());
        }
    }
    if (boundE != nullptr) {
        rl.bound = text(boundE);
    }

    // The step.
    const Expr* stepE = nullptr;
    bool negate = false;
    std::optional<BinaryOperatorKind> geometric;
    std::optional<int64_t> unitStep;
    const Expr* inc = fs->getInc() ? fs->getInc()->IgnoreParenImpCasts() : nullptr;
    if (const auto* u = dyn_cast_or_null<UnaryOperator>(inc);
        u && u->isIncrementDecrementOp() && isV(u->getSubExpr())) {
        unitStep = u->isIncrementOp() ? 1 : -1;
    } else if (const auto* ca = dyn_cast_or_null<CompoundAssignOperator>(inc);
               ca && isV(ca->getLHS())) {
        switch (ca->getOpcode()) {
        case BO_AddAssign:
            stepE = ca->getRHS();
            break;
        case BO_SubAssign:
            stepE = ca->getRHS();
            negate = true;
            break;
        case BO_MulAssign:
            geometric = BO_Mul;
            stepE = ca->getRHS();
            break;
        case BO_DivAssign:
            geometric = BO_Div;
            stepE = ca->getRHS();
            break;
        case BO_ShlAssign:
            geometric = BO_Shl;
            stepE = ca->getRHS();
            break;
        case BO_ShrAssign:
            geometric = BO_Shr;
            stepE = ca->getRHS();
            break;
        default:
            break;
        }
    } else if (const auto* as = dyn_cast_or_null<BinaryOperator>(inc);
               as && as->getOpcode() == BO_Assign && isV(as->getLHS())) {
        if (const auto* rhs = dyn_cast<BinaryOperator>(as->getRHS()->IgnoreParenImpCasts())) {
            bool lv = isV(rhs->getLHS());
            bool rv = isV(rhs->getRHS());
            if (rhs->getOpcode() == BO_Add && (lv || rv)) {
                stepE = lv ? rhs->getRHS() : rhs->getLHS();
            } else if (rhs->getOpcode() == BO_Sub && lv) {
                stepE = rhs->getRHS();
                negate = true;
            } else if (lv && (rhs->getOpcode() == BO_Mul || rhs->getOpcode() == BO_Div ||
                              rhs->getOpcode() == BO_Shl || rhs->getOpcode() == BO_Shr)) {
                geometric = rhs->getOpcode();
                stepE = rhs->getRHS();
            }
        }
    }

    SymValue init = eval(initE);
    if (DefUse::modifies(fs->getBody(), v) || DefUse::modifies(fs->getCond(), v)) {
        rl.reason = fmt::format("'{}' is also assigned in the loop body", rl.var);
        al.iv = v;
        al.value = SymValue::unknown(rl.reason);
        return;
    }
    if (init.isPoly()) {
        rl.init = init;
    }
    SymValue bound = boundE != nullptr ? eval(boundE) : SymValue::unknown("no bound");
    auto boundC = bound.isPoly() ? bound.poly.constantValue() : std::nullopt;
    auto initC = init.isPoly() ? init.poly.constantValue() : std::nullopt;

    if (geometric) {
        SymValue factor = eval(stepE);
        auto f = factor.isPoly() ? factor.poly.constantValue() : std::nullopt;
        al.iv = v;
        al.value =
            SymValue::unknown(fmt::format("loop variable '{}' changes geometrically", rl.var));
        rl.reason = fmt::format("'{}' changes geometrically: no affine step", rl.var);
        if (initC && boundC && f && boundE != nullptr) {
            int64_t x = *initC;
            int64_t n = 0;
            auto holds = [&](int64_t val) {
                switch (cmp) {
                case BO_LT:
                    return val < *boundC;
                case BO_LE:
                    return val <= *boundC;
                case BO_GT:
                    return val > *boundC;
                case BO_GE:
                    return val >= *boundC;
                case BO_NE:
                    return val != *boundC;
                default:
                    return false;
                }
            };
            while (n <= kMaxSimulatedTrips && holds(x)) {
                ++n;
                int64_t next = x;
                switch (*geometric) {
                case BO_Mul:
                    next = x * *f;
                    break;
                case BO_Div:
                    next = *f != 0 ? x / *f : x;
                    break;
                case BO_Shl:
                    next = (*f >= 0 && *f < 62) ? x << *f : x;
                    break;
                case BO_Shr:
                    next = (*f >= 0 && *f < 63) ? x >> *f : x;
                    break;
                default:
                    break;
                }
                if (next == x) {
                    n = kMaxSimulatedTrips + 1;
                    break;
                }
                x = next;
            }
            if (n <= kMaxSimulatedTrips) {
                rl.tripCount = n;
            }
        }
        return;
    }
    SymValue step;
    if (unitStep) {
        step = SymValue::constant(*unitStep);
    } else if (stepE != nullptr) {
        step = eval(stepE);
        if (step.isPoly() && negate) {
            step = SymValue::ofPoly(-step.poly);
        }
    } else {
        rl.reason = fmt::format("the increment of '{}' is not recognised", rl.var);
        al.iv = v;
        al.value = SymValue::unknown(rl.reason);
        return;
    }
    if (!step.isPoly() || step.poly.isZero()) {
        rl.reason = fmt::format("the step of '{}' is not a loop invariant", rl.var);
        al.iv = v;
        al.value = SymValue::unknown(rl.reason);
        return;
    }
    rl.step = step;
    al.iv = v;
    SymValue counter = SymValue::ofPoly(Poly::symbol(loopSymbol(al.raw)));
    SymValue scaled = SymValue::ofPoly(step.poly * counter.poly);
    if (init.isPoly()) {
        al.value = SymValue::ofPoly(init.poly + scaled.poly);
    } else {
        al.value = combineValues(init, scaled);
        rl.reason =
            init.kind == SymValue::Kind::Indirect
                ? fmt::format("the initial value of '{}' is read from memory", rl.var)
                : fmt::format("the initial value of '{}' is not affine: {}", rl.var, init.reason);
    }
    auto stepC = step.poly.constantValue();
    if (initC && boundC && stepC && boundE != nullptr) {
        int64_t i0 = *initC;
        int64_t b = *boundC;
        int64_t s = *stepC;
        std::optional<int64_t> n;
        auto ceilDiv = [](int64_t a, int64_t d) { return (a + d - 1) / d; };
        switch (cmp) {
        case BO_LT:
            n = s > 0 ? (i0 < b ? ceilDiv(b - i0, s) : 0) : std::optional<int64_t>();
            break;
        case BO_LE:
            n = s > 0 ? (i0 <= b ? (b - i0) / s + 1 : 0) : std::optional<int64_t>();
            break;
        case BO_GT:
            n = s < 0 ? (i0 > b ? ceilDiv(i0 - b, -s) : 0) : std::optional<int64_t>();
            break;
        case BO_GE:
            n = s < 0 ? (i0 >= b ? (i0 - b) / -s + 1 : 0) : std::optional<int64_t>();
            break;
        case BO_NE:
            if ((b - i0) % s == 0 && (b - i0) / s >= 0) {
                n = (b - i0) / s;
            }
            break;
        default:
            break;
        }
        rl.tripCount = n;
    } else if (rl.reason.empty()) {
        rl.reason = boundE == nullptr ? "no bound recognised in the condition"
                                      : "the trip count depends on values known at run time";
    }
}

// ============================================================================ sites =====

RawSite& KernelWalker::recordSite(const Expr* accessExpr, int array, AccessMode access,
                                  ki::SiteForm form, const std::string& intrinsic,
                                  const std::string& member, const Expr* base,
                                  const std::vector<const Expr*>& indices,
                                  const std::vector<SymValue>& values, const SymValue& flat,
                                  const std::string& indexText) {
    LocKey key = locKey(sm_, accessExpr->getBeginLoc());
    ki::ArrayInfo& arr = raw_.info.arrays[array];
    arr.mode = ki::combine(arr.mode, access);
    if (auto g = globalDecl_.find(array); g != globalDecl_.end()) {
        const std::string what = truncate(text(accessExpr));
        if (g->second->getType()->isPointerType()) {
            noteGlobal(g->second, false, accessExpr->getBeginLoc(),
                       fmt::format("'{}' is read", arr.name));
            noteUnknown(ki::writes(access), accessExpr->getBeginLoc(),
                        fmt::format("'{}' through the __device__ pointer '{}', whose target the "
                                    "host sets",
                                    what, arr.name));
        } else {
            noteGlobal(g->second, ki::writes(access), accessExpr->getBeginLoc(),
                       fmt::format("'{}' is {}", what,
                                   access == AccessMode::Read     ? "read"
                                   : access == AccessMode::Atomic ? "updated atomically"
                                                                  : "written"));
        }
    }
    if (auto it = raw_.siteIndex.find(key); it != raw_.siteIndex.end()) {
        RawSite& rs = raw_.sites[it->second];
        ++rs.contexts;
        rs.access = ki::combine(rs.access, access);
        if (rs.flatPerContext.size() < kMaxContextsKept) {
            rs.flatPerContext.push_back(flat);
        }
        if (arr.name != rs.array && std::find(rs.otherArrays.begin(), rs.otherArrays.end(),
                                              arr.name) == rs.otherArrays.end()) {
            rs.otherArrays.push_back(arr.name);
        }
        return rs;
    }
    RawSite rs;
    rs.key = key;
    rs.array = arr.name;
    rs.access = access;
    rs.form = form;
    rs.intrinsic = intrinsic;
    rs.member = member;
    rs.flatPerContext.push_back(flat);
    rs.subscripts = values;
    rs.indexText = indexText;
    for (const Expr* i : indices) {
        rs.subscriptTexts.push_back(text(i));
    }
    for (const ActiveLoop& l : loops_) {
        rs.loopsRaw.push_back(l.raw);
    }
    rs.function = frame().fn->getNameAsString();
    rs.callPath = frame().callPath;
    rs.location = loc_.location(accessExpr->getBeginLoc());

    SiteSource& src = rs.source;
    src.expr = accessExpr;
    src.access = loc_.fileRange(accessExpr->getSourceRange());
    src.base = base != nullptr ? loc_.fileRange(base->getSourceRange()) : CharSourceRange();
    bool ok = src.access.isValid() && loc_.inProgramFile(src.access);
    for (const Expr* i : indices) {
        CharSourceRange r = loc_.fileRange(i->getSourceRange());
        ok = ok && r.isValid() && loc_.inProgramFile(r);
        src.indices.push_back(r);
    }
    src.rewritable = ok;
    if (!ok && arr.kind != ki::ArrayKind::TextureObject) {
        bool inMacro = src.access.isInvalid() ||
                       std::any_of(src.indices.begin(), src.indices.end(),
                                   [](const CharSourceRange& r) { return r.isInvalid(); });
        if (inMacro) {
            std::string macro;
            clang::SourceLocation b = accessExpr->getBeginLoc();
            if (b.isMacroID()) {
                macro =
                    Lexer::getImmediateMacroNameForDiagnostics(b, sm_, loc_.langOptions()).str();
            }
            addHazard(ki::HazardKind::Macro, array, b,
                      macro.empty()
                          ? fmt::format("the access '{}' is spelled inside a macro",
                                        truncate(text(accessExpr)))
                          : fmt::format("the access is spelled inside macro '{}'", macro));
        } else {
            addHazard(ki::HazardKind::Unknown, array, accessExpr->getBeginLoc(),
                      fmt::format("the access '{}' is in '{}', which is not rewritten",
                                  truncate(text(accessExpr)), rs.location.file));
        }
    }
    raw_.siteIndex[key] = static_cast<int>(raw_.sites.size());
    raw_.sites.push_back(std::move(rs));
    return raw_.sites.back();
}

void KernelWalker::recordSubscriptSite(const Expr* accessExpr, const SubscriptMatch& m,
                                       AccessMode access, ki::SiteForm form,
                                       const std::string& intrinsic, const std::string& member) {
    std::vector<SymValue> values = evalIndices(m.indices);
    SymValue flat = flatten(m.array, values);
    std::string idxText;
    if (m.alias != nullptr) {
        flat = flat.isPoly() && m.alias->offset.isPoly()
                   ? SymValue::ofPoly(m.alias->offset.poly + flat.poly)
                   : combineValues(m.alias->offset, flat);
        idxText = m.alias->text + " + " + text(m.indices[0]);
    } else if (m.indices.size() == 1) {
        idxText = text(m.indices[0]);
    } else {
        for (const Expr* i : m.indices) {
            idxText += "[" + text(i) + "]";
        }
    }
    recordSite(accessExpr, m.array, access, form, intrinsic, member, m.base, m.indices,
               m.indices.size() > 1 ? values : std::vector<SymValue>{}, flat, idxText);
}

void KernelWalker::recordPointerSite(const Expr* accessExpr, const PointerMatch& m,
                                     AccessMode access, ki::SiteForm form,
                                     const std::string& intrinsic, const std::string& member) {
    if (m.element != nullptr) {
        recordSubscriptSite(accessExpr, SubscriptMatch{m.array, m.base, m.elementIndices}, access,
                            form, intrinsic, member);
        return;
    }
    SymValue flat = SymValue::constant(0);
    std::vector<const Expr*> indices;
    std::string idxText = "0";
    // The offset is the sum of the terms; each is a separate index range (the rewriter wraps
    // each one, as pointer arithmetic converts each term on its own).
    for (const auto& [term, negated] : m.terms) {
        SymValue v = eval(term);
        if (negated && v.isPoly()) {
            v = SymValue::ofPoly(-v.poly);
        }
        if (indices.empty()) {
            flat = v;
            idxText = (negated ? "-" : "") + text(term);
        } else {
            flat = flat.isPoly() && v.isPoly() ? SymValue::ofPoly(flat.poly + v.poly)
                                               : combineValues(flat, v);
            idxText += (negated ? " - " : " + ") + text(term);
        }
        indices.push_back(term);
    }
    recordSite(accessExpr, m.array, access, form, intrinsic, member, m.base, indices, {}, flat,
               idxText);
}

void KernelWalker::addHazard(ki::HazardKind kind, int array, clang::SourceLocation where,
                             std::string message, const std::string& other) {
    if (!hazardSeen_.insert({static_cast<int>(kind), array, locKey(sm_, where)}).second) {
        return;
    }
    RawHazard h;
    h.hazard.kind = kind;
    h.hazard.array = arrayName(array);
    h.hazard.other = other;
    h.hazard.location = loc_.location(where);
    h.hazard.message = std::move(message);
    h.hazard.callPath = frame().callPath;
    h.loc = where;
    raw_.hazards.push_back(std::move(h));
}

// ============================================================================ aliasing ==

bool KernelWalker::isDeviceVariable(const VarDecl* vd) {
    return vd != nullptr && vd->hasGlobalStorage() && !vd->isStaticLocal() &&
           (vd->hasAttr<CUDADeviceAttr>() || vd->hasAttr<HIPManagedAttr>()) &&
           !vd->hasAttr<CUDAConstantAttr>() && !vd->hasAttr<CUDASharedAttr>();
}

std::string KernelWalker::qualifiedName(const VarDecl* vd) const {
    PrintingPolicy pp(ctx_.getLangOpts());
    pp.SuppressUnwrittenScope = true; // anonymous and inline namespaces: host code omits them
    std::string out;
    llvm::raw_string_ostream os(out);
    vd->printQualifiedName(os, pp);
    return os.str();
}

void KernelWalker::noteGlobal(const VarDecl* vd, bool write, clang::SourceLocation where,
                              std::string how) {
    auto [it, added] = globalIndex_.try_emplace(vd, raw_.info.globals.size());
    if (added) {
        ki::GlobalAccess g;
        g.name = qualifiedName(vd);
        g.managed = vd->hasAttr<HIPManagedAttr>();
        g.sized = !vd->getType()->isIncompleteType();
        raw_.info.globals.push_back(std::move(g));
    }
    ki::GlobalAccess& g = raw_.info.globals[it->second];
    if (added || (write && !g.written)) {
        g.written = g.written || write;
        g.location = loc_.location(where);
        g.how = std::move(how);
    }
}

void KernelWalker::noteUnknown(bool write, clang::SourceLocation where, const std::string& what) {
    if (!unknownSeen_.insert({locKey(sm_, where), write}).second) {
        return;
    }
    (write ? raw_.info.unknownWrites : raw_.info.unknownReads)
        .push_back(fmt::format("{}: {}", this->where(where), what));
}

void KernelWalker::noteAccessThrough(const Expr* pointer, bool write, clang::SourceLocation where,
                                     const std::string& what) {
    Targets t;
    targetsOfPointer(pointer, t, 0);
    for (const VarDecl* g : t.globals) {
        noteGlobal(g, write, where,
                   fmt::format("'{}' {}", what, write ? "may write it" : "may read it"));
    }
    if (!t.unknown.empty()) {
        noteUnknown(write, where, fmt::format("'{}': {}", what, t.unknown));
    }
}

void KernelWalker::noteMethodObject(const CXXMemberCallExpr* mc) {
    const CXXMethodDecl* md = mc->getMethodDecl();
    const auto* me = dyn_cast<MemberExpr>(mc->getCallee()->IgnoreParens());
    if (md == nullptr || me == nullptr || !me->isArrow() || md->isStatic()) {
        return;
    }
    noteAccessThrough(me->getBase(), !md->isConst(), mc->getBeginLoc(), truncate(text(mc)));
}

void KernelWalker::targetsOfPointer(const Expr* e, Targets& out, int depth) {
    constexpr int kMaxTargetDepth = 16;
    if (e == nullptr) {
        return;
    }
    if (depth > kMaxTargetDepth) {
        out.unknown = out.unknown.empty() ? "a pointer the analysis does not follow" : out.unknown;
        return;
    }
    auto unknown = [&](std::string why) {
        if (out.unknown.empty()) {
            out.unknown = std::move(why);
        }
    };
    e = e->IgnoreParens();
    if (const auto* ce = dyn_cast<CastExpr>(e)) {
        const Expr* sub = ce->getSubExpr();
        switch (ce->getCastKind()) {
        case CK_ArrayToPointerDecay:
            targetsOfObject(sub, out, depth + 1);
            return;
        case CK_NullToPointer:
            return;
        case CK_IntegralToPointer:
            if (!sub->isNullPointerConstant(ctx_, Expr::NPC_ValueDependentIsNotNull)) {
                unknown("a pointer made from an integer");
            }
            return;
        default:
            targetsOfPointer(sub, out, depth + 1);
            return;
        }
    }
    if (isa<CXXNullPtrLiteralExpr>(e) || isa<GNUNullExpr>(e) || isa<IntegerLiteral>(e) ||
        isa<StringLiteral>(e) || isa<PredefinedExpr>(e)) {
        return;
    }
    if (isa<CXXThisExpr>(e)) {
        return; // the caller walked the object with the method's use
    }
    if (const auto* u = dyn_cast<UnaryOperator>(e)) {
        switch (u->getOpcode()) {
        case UO_AddrOf:
            targetsOfObject(u->getSubExpr(), out, depth + 1);
            return;
        case UO_PreInc:
        case UO_PreDec:
        case UO_PostInc:
        case UO_PostDec:
            targetsOfPointer(u->getSubExpr(), out, depth + 1);
            return;
        default:
            unknown("a pointer read from memory");
            return;
        }
    }
    if (const auto* b = dyn_cast<BinaryOperator>(e)) {
        if (b->getOpcode() == BO_Comma || b->getOpcode() == BO_Assign) {
            targetsOfPointer(b->getRHS(), out, depth + 1);
            return;
        }
        if (b->isAdditiveOp() || b->isCompoundAssignmentOp()) {
            targetsOfPointer(b->getLHS()->getType()->isPointerType() ||
                                     b->getLHS()->getType()->isArrayType()
                                 ? b->getLHS()
                                 : b->getRHS(),
                             out, depth + 1);
            return;
        }
    }
    if (const auto* co = dyn_cast<AbstractConditionalOperator>(e)) {
        targetsOfPointer(co->getTrueExpr(), out, depth + 1);
        targetsOfPointer(co->getFalseExpr(), out, depth + 1);
        return;
    }
    if (const auto* dre = dyn_cast<DeclRefExpr>(e)) {
        targetsOfDecl(dre, out, depth);
        return;
    }
    if (const auto* me = dyn_cast<MemberExpr>(e)) {
        if (me->getType()->isArrayType()) {
            targetsOfObject(me, out, depth + 1);
            return;
        }
        unknown("a pointer read from a structure member");
        return;
    }
    if (isa<ArraySubscriptExpr>(e)) {
        unknown("a pointer read from memory");
        return;
    }
    if (const auto* call = dyn_cast<CallExpr>(e)) {
        const std::string name = calleeName(call);
        unknown(name.empty() ? "a pointer returned by a call"
                             : fmt::format("a pointer returned by '{}'", name));
        return;
    }
    unknown("a computed pointer");
}

void KernelWalker::targetsOfObject(const Expr* e, Targets& out, int depth) {
    e = e->IgnoreParens();
    if (const auto* dre = dyn_cast<DeclRefExpr>(e)) {
        if (const auto* vd = dyn_cast<VarDecl>(dre->getDecl()); isDeviceVariable(vd)) {
            out.globals.push_back(vd);
        } else if (vd != nullptr && vd->getType()->isReferenceType()) {
            targetsOfDecl(dre, out, depth);
        }
        return; // locals, __shared__, __constant__, parameters passed by value
    }
    if (const auto* me = dyn_cast<MemberExpr>(e)) {
        if (me->isArrow()) {
            targetsOfPointer(me->getBase(), out, depth + 1);
        } else {
            targetsOfObject(me->getBase(), out, depth + 1);
        }
        return;
    }
    if (const auto* ase = dyn_cast<ArraySubscriptExpr>(e)) {
        targetsOfPointer(ase->getBase(), out, depth + 1);
        return;
    }
    if (const auto* u = dyn_cast<UnaryOperator>(e); u && u->getOpcode() == UO_Deref) {
        targetsOfPointer(u->getSubExpr(), out, depth + 1);
        return;
    }
    if (isa<StringLiteral>(e) || isa<PredefinedExpr>(e) || isa<CompoundLiteralExpr>(e)) {
        return;
    }
    if (const auto* ce = dyn_cast<CastExpr>(e)) {
        targetsOfObject(ce->getSubExpr(), out, depth + 1);
        return;
    }
    if (out.unknown.empty()) {
        out.unknown = "an object the analysis does not follow";
    }
}

void KernelWalker::targetsOfDecl(const DeclRefExpr* dre, Targets& out, int depth) {
    auto unknown = [&](std::string why) {
        if (out.unknown.empty()) {
            out.unknown = std::move(why);
        }
    };
    const auto* vd = dyn_cast<VarDecl>(dre->getDecl());
    if (vd == nullptr) {
        unknown(fmt::format("'{}'", dre->getDecl()->getNameAsString()));
        return;
    }
    const std::string name = vd->getNameAsString();
    if (auto a = arrayOf(dre)) {
        if (auto g = globalDecl_.find(*a); g != globalDecl_.end()) {
            if (g->second->getType()->isPointerType()) {
                unknown(
                    fmt::format("the __device__ pointer '{}', whose target the host sets", name));
            } else {
                out.globals.push_back(g->second);
            }
        }
        return; // a parameter the runtime sees, __shared__ or __constant__ memory
    }
    if (vd->getType()->isArrayType()) {
        targetsOfObject(dre, out, depth + 1);
        return;
    }
    if (const auto* p = dyn_cast<ParmVarDecl>(vd)) {
        for (const Frame& f : std::views::reverse(frames_)) {
            if (auto it = f.pointerTargets.find(p); it != f.pointerTargets.end()) {
                out.merge(it->second);
                return;
            }
        }
        unknown(fmt::format("the pointer parameter '{}', bound to no array of the kernel", name));
        return;
    }
    if (!vd->hasLocalStorage()) {
        unknown(fmt::format("the pointer '{}', whose target the analysis does not know", name));
        return;
    }
    const DefUse::Info* info = nullptr;
    for (auto f = frames_.rbegin(); f != frames_.rend() && info == nullptr; ++f) {
        info = f->defuse->find(vd);
    }
    if (info == nullptr || info->values.empty()) {
        unknown(fmt::format("the local pointer '{}', which has no value the analysis sees", name));
        return;
    }
    if (info->addressTaken) {
        unknown(fmt::format("the local pointer '{}', whose address is taken", name));
        return;
    }
    if (!targetsEvaluating_.insert(vd).second) {
        return; // `p = p + 1`: the other definitions say where it points
    }
    for (const Expr* v : info->values) {
        if (vd->getType()->isReferenceType()) {
            targetsOfObject(v, out, depth + 1); // `float& r = g[i];`: what r names
        } else {
            targetsOfPointer(v, out, depth + 1);
        }
    }
    targetsEvaluating_.erase(vd);
}

// ============================================================================ values ====

std::vector<SymValue> KernelWalker::evalIndices(const std::vector<const Expr*>& indices) {
    std::vector<SymValue> out;
    out.reserve(indices.size());
    for (const Expr* i : indices) {
        out.push_back(eval(i));
    }
    return out;
}

SymValue KernelWalker::flatten(int array, const std::vector<SymValue>& values) {
    if (values.size() == 1) {
        return values[0];
    }
    const auto& dims = raw_.info.arrays[array].dims;
    if (dims.size() != values.size()) {
        return SymValue::unknown("subscripts do not match the array's dimensions");
    }
    // Row-major: ((i0 * d1 + i1) * d2 + i2) ...
    SymValue acc = values[0];
    for (size_t k = 1; k < values.size(); ++k) {
        SymValue scaled =
            acc.isPoly()
                ? SymValue::ofPoly(acc.poly * Poly::constant(static_cast<int64_t>(dims[k])))
                : acc;
        acc = (scaled.isPoly() && values[k].isPoly())
                  ? SymValue::ofPoly(scaled.poly + values[k].poly)
                  : combineValues(scaled, values[k]);
    }
    return acc;
}

SymValue KernelWalker::eval(const Expr* e) {
    if (e == nullptr) {
        return SymValue::unknown("no expression");
    }
    if (evalDepth_ > kMaxEvalDepth) {
        return SymValue::unknown("the expression is nested too deeply");
    }
    ++evalDepth_;
    SymValue v = evalImpl(e);
    --evalDepth_;
    return v;
}

SymValue KernelWalker::evalImpl(const Expr* e) {
    e = e->IgnoreParens();
    if (!e->isValueDependent() && !e->isTypeDependent() && isIntegral(e->getType())) {
        Expr::EvalResult r;
        if (e->EvaluateAsInt(r, ctx_)) {
            if (auto v = apsToInt64(r.Val.getInt())) {
                return SymValue::constant(*v);
            }
        }
    }
    if (auto b = builtinComponent(e)) {
        return SymValue::ofPoly(Poly::symbol(*b));
    }
    if (const auto* ce = dyn_cast<CastExpr>(e)) {
        const Expr* sub = ce->getSubExpr();
        if (sub->getType()->isRealFloatingType() && !e->getType()->isRealFloatingType()) {
            return SymValue::unknown("a floating-point value converted to an integer");
        }
        if (e->getType()->isRealFloatingType()) {
            return SymValue::unknown("a floating-point value");
        }
        return eval(sub);
    }
    if (const auto* st = dyn_cast<SubstNonTypeTemplateParmExpr>(e)) {
        return eval(st->getReplacement());
    }
    if (const auto* fe = dyn_cast<FullExpr>(e)) {
        return eval(fe->getSubExpr());
    }
    if (const auto* mt = dyn_cast<MaterializeTemporaryExpr>(e)) {
        return eval(mt->getSubExpr());
    }
    if (const auto* il = dyn_cast<IntegerLiteral>(e)) {
        if (auto v = apsToInt64(llvm::APSInt(il->getValue(), true))) {
            return SymValue::constant(*v);
        }
    }
    if (const auto* d = dyn_cast<DeclRefExpr>(e)) {
        return evalDecl(d);
    }
    if (const auto* b = dyn_cast<BinaryOperator>(e)) {
        return evalBinary(b);
    }
    if (const auto* u = dyn_cast<UnaryOperator>(e)) {
        if (u->getOpcode() == UO_Deref) {
            return evalRead(u);
        }
        SymValue s = eval(u->getSubExpr());
        switch (u->getOpcode()) {
        case UO_Plus:
            return s;
        case UO_Minus:
            return s.isPoly() ? SymValue::ofPoly(-s.poly) : s;
        default:
            return s.kind == SymValue::Kind::Indirect
                       ? s
                       : SymValue::unknown(fmt::format(
                             "operator '{}'", UnaryOperator::getOpcodeStr(u->getOpcode()).str()));
        }
    }
    if (const auto* co = dyn_cast<ConditionalOperator>(e)) {
        SymValue t = eval(co->getTrueExpr());
        SymValue f = eval(co->getFalseExpr());
        if (t.isPoly() && f.isPoly() && t.poly == f.poly) {
            return t;
        }
        if (t.kind == SymValue::Kind::Indirect || f.kind == SymValue::Kind::Indirect) {
            return combineValues(t, f);
        }
        return SymValue::unknown("a conditional expression");
    }
    if (isa<ArraySubscriptExpr>(e) || isa<MemberExpr>(e)) {
        return evalRead(e);
    }
    if (const auto* call = dyn_cast<CallExpr>(e)) {
        std::string name = calleeName(call);
        if (((isLoadIntrinsic(name) || isAtomicFunction(name)) && call->getNumArgs() > 0 &&
             matchPointer(call->getArg(0))) ||
            (isTextureFetch(name) && call->getNumArgs() > 0 && arrayOf(call->getArg(0)))) {
            return evalRead(call);
        }
        if (auto v = evalInlineCall(call)) {
            return *v;
        }
        return SymValue::unknown(name.empty() ? "a call" : fmt::format("a call to '{}'", name));
    }
    return SymValue::unknown(fmt::format("'{}' is not an integer expression the analysis models",
                                         truncate(text(e), 40)));
}

SymValue KernelWalker::evalDecl(const DeclRefExpr* d) {
    const ValueDecl* decl = d->getDecl();
    if (const auto* ec = dyn_cast<EnumConstantDecl>(decl)) {
        if (auto v = apsToInt64(ec->getInitVal())) {
            return SymValue::constant(*v);
        }
    }
    const auto* vd = dyn_cast<VarDecl>(decl);
    if (vd == nullptr) {
        return SymValue::unknown(fmt::format("'{}'", decl->getNameAsString()));
    }
    std::string name = vd->getNameAsString();
    for (const ActiveLoop& l : std::views::reverse(loops_)) {
        if (l.iv == vd) {
            return l.value;
        }
    }
    if (!isIntegral(vd->getType()) && !vd->getType()->isReferenceType()) {
        return SymValue::unknown(fmt::format("'{}' is not an integer", name));
    }
    if (const auto* p = dyn_cast<ParmVarDecl>(vd)) {
        for (auto f = frames_.rbegin(); f != frames_.rend(); ++f) {
            if (p->getDeclContext() != f->fn) {
                continue;
            }
            const DefUse::Info* info = f->defuse->find(p);
            bool modified = info != nullptr && (info->defs > 0 || info->addressTaken);
            if (f == frames_.rend() - 1) {
                return modified ? SymValue::unknown(
                                      fmt::format("parameter '{}' is assigned in the kernel", name))
                                : SymValue::ofPoly(Poly::symbol(name));
            }
            if (modified) {
                return SymValue::unknown(fmt::format("parameter '{}' of '{}' is assigned", name,
                                                     f->fn->getNameAsString()));
            }
            auto it = f->scalarParams.find(p);
            return it != f->scalarParams.end()
                       ? it->second
                       : SymValue::unknown(
                             fmt::format("parameter '{}' of '{}'", name, f->fn->getNameAsString()));
        }
        return SymValue::unknown(fmt::format("parameter '{}'", name));
    }
    if (vd->hasLocalStorage() || vd->isStaticLocal()) {
        const DefUse::Info* info = nullptr;
        for (auto f = frames_.rbegin(); f != frames_.rend() && info == nullptr; ++f) {
            info = f->defuse->find(vd);
        }
        if (info == nullptr || info->defs == 0) {
            return SymValue::unknown(fmt::format("'{}' has no value the analysis sees", name));
        }
        if (info->addressTaken) {
            return SymValue::unknown(fmt::format("the address of '{}' is taken", name));
        }
        if (info->defs != 1 || info->single == nullptr) {
            return SymValue::unknown(fmt::format("'{}' is assigned more than once", name));
        }
        if (!evaluating_.insert(vd).second) {
            return SymValue::unknown(fmt::format("'{}' is defined through itself", name));
        }
        SymValue v = eval(info->single);
        evaluating_.erase(vd);
        return v;
    }
    if (vd->hasAttr<CUDAConstantAttr>() && isIntegral(vd->getType())) {
        return SymValue::ofPoly(Poly::symbol(name)); // uniform for a launch
    }
    if (vd->getType().isConstQualified() && vd->getInit() != nullptr) {
        return eval(vd->getInit());
    }
    return SymValue::unknown(fmt::format("global variable '{}'", name));
}

SymValue KernelWalker::evalBinary(const BinaryOperator* b) {
    BinaryOperatorKind op = b->getOpcode();
    if (op == BO_Comma) {
        return eval(b->getRHS());
    }
    if (b->isAssignmentOp()) {
        return SymValue::unknown("an assignment inside the expression");
    }
    SymValue l = eval(b->getLHS());
    SymValue r = eval(b->getRHS());
    if (!l.isPoly() || !r.isPoly()) {
        return combineValues(l, r);
    }
    auto lc = l.poly.constantValue();
    auto rc = r.poly.constantValue();
    std::string opName = BinaryOperator::getOpcodeStr(op).str();
    switch (op) {
    case BO_Add:
        return SymValue::ofPoly(l.poly + r.poly);
    case BO_Sub:
        return SymValue::ofPoly(l.poly - r.poly);
    case BO_Mul:
        return SymValue::ofPoly(l.poly * r.poly);
    case BO_Div:
        if (rc && *rc != 0) {
            if (lc) {
                return SymValue::constant(*lc / *rc);
            }
            if (auto q = l.poly.divideExact(*rc)) {
                return SymValue::ofPoly(*q);
            }
            return SymValue::unknown(fmt::format("division by {}", *rc));
        }
        return SymValue::unknown("division by a value known only at run time");
    case BO_Rem:
        if (lc && rc && *rc != 0) {
            return SymValue::constant(*lc % *rc);
        }
        return SymValue::unknown("a remainder ('%')");
    case BO_Shl:
        if (rc && *rc >= 0 && *rc < 62) {
            return SymValue::ofPoly(l.poly * Poly::constant(int64_t{1} << *rc));
        }
        return SymValue::unknown("a shift by a value known only at run time");
    case BO_Shr:
        if (rc && *rc >= 0 && *rc < 62) {
            if (lc) {
                return SymValue::constant(*lc >> *rc);
            }
            if (auto q = l.poly.divideExact(int64_t{1} << *rc)) {
                return SymValue::ofPoly(*q);
            }
        }
        return SymValue::unknown("a right shift ('>>')");
    default:
        if (lc && rc) {
            switch (op) {
            case BO_And:
                return SymValue::constant(*lc & *rc);
            case BO_Or:
                return SymValue::constant(*lc | *rc);
            case BO_Xor:
                return SymValue::constant(*lc ^ *rc);
            default:
                break;
            }
        }
        return SymValue::unknown(fmt::format("operator '{}'", opName));
    }
}

SymValue KernelWalker::evalRead(const Expr* e) {
    e = stripImplicit(e);
    if (const auto* me = dyn_cast<MemberExpr>(e)) {
        if (me->isArrow()) {
            if (auto m = matchPointer(me->getBase()); m && m->element == nullptr) {
                return SymValue::indirect(arrayName(m->array), locKey(sm_, me->getBeginLoc()));
            }
            return SymValue::unknown("a value read through a pointer");
        }
        const Expr* base = stripImplicit(me->getBase());
        if (isa<ArraySubscriptExpr>(base) || isa<MemberExpr>(base) || isa<UnaryOperator>(base)) {
            SymValue v = evalRead(base);
            if (v.kind == SymValue::Kind::Indirect) {
                return v;
            }
        }
        return SymValue::unknown(
            fmt::format("structure field '{}'", me->getMemberDecl()->getNameAsString()));
    }
    if (const auto* ase = dyn_cast<ArraySubscriptExpr>(e)) {
        if (auto m = matchSubscript(ase)) {
            return SymValue::indirect(arrayName(m->array), locKey(sm_, ase->getBeginLoc()));
        }
        if (isa<ArraySubscriptExpr>(ase->getBase()->IgnoreParenImpCasts())) {
            SymValue inner = evalRead(ase->getBase());
            if (inner.kind == SymValue::Kind::Indirect) {
                return inner;
            }
        }
        return SymValue::unknown(
            fmt::format("a value read from '{}'", truncate(text(ase->getBase()), 30)));
    }
    if (const auto* u = dyn_cast<UnaryOperator>(e); u && u->getOpcode() == UO_Deref) {
        if (auto m = matchPointer(u->getSubExpr()); m && m->element == nullptr) {
            return SymValue::indirect(arrayName(m->array), locKey(sm_, u->getBeginLoc()));
        }
        return SymValue::unknown("a value read through a pointer");
    }
    if (const auto* call = dyn_cast<CallExpr>(e)) {
        std::string name = calleeName(call);
        if (isLoadIntrinsic(name) || isAtomicFunction(name)) {
            if (auto m = matchPointer(call->getArg(0))) {
                return SymValue::indirect(arrayName(m->array), locKey(sm_, call->getBeginLoc()));
            }
        }
        if (isTextureFetch(name)) {
            if (auto a = arrayOf(call->getArg(0))) {
                return SymValue::indirect(arrayName(*a), locKey(sm_, call->getBeginLoc()));
            }
        }
    }
    return SymValue::unknown("a value read from memory");
}

std::optional<SymValue> KernelWalker::evalInlineCall(const CallExpr* call) {
    const FunctionDecl* fd = call->getDirectCallee();
    const FunctionDecl* def = nullptr;
    if (fd == nullptr || !fd->hasBody(def) || def == nullptr || isa<CXXMethodDecl>(def) ||
        loc_.inSystemHeader(def->getLocation())) {
        return std::nullopt;
    }
    const auto* body = dyn_cast<CompoundStmt>(def->getBody());
    const auto* ret =
        body != nullptr && body->size() == 1 ? dyn_cast<ReturnStmt>(body->body_front()) : nullptr;
    if (ret == nullptr || ret->getRetValue() == nullptr ||
        std::any_of(frames_.begin(), frames_.end(), [&](const Frame& f) { return f.fn == def; }) ||
        frames_.size() >= kMaxCallDepth) {
        return std::nullopt;
    }
    Frame nf;
    nf.fn = def;
    nf.defuse = defUseOf(def);
    nf.callPath = frame().callPath;
    nf.callPath.push_back({def->getNameAsString(), loc_.location(call->getBeginLoc())});
    for (unsigned i = 0; i < call->getNumArgs() && i < def->getNumParams(); ++i) {
        const ParmVarDecl* param = def->getParamDecl(i);
        const Expr* arg = call->getArg(i);
        if (param->getType()->isPointerType() || isTextureObjectType(param->getType())) {
            if (auto a = arrayOf(arg)) {
                nf.arrayParams[param] = *a;
            }
            continue;
        }
        nf.scalarParams[param] = eval(arg);
    }
    frames_.push_back(std::move(nf));
    SymValue v = eval(ret->getRetValue());
    frames_.pop_back();
    return v;
}

// ============================================================================ misc ======

const DefUse* KernelWalker::defUseOf(const FunctionDecl* fn) {
    auto& slot = defuse_[fn];
    if (!slot) {
        slot = std::make_unique<DefUse>(fn);
    }
    return slot.get();
}

std::string KernelWalker::text(const Expr* e) const {
    if (e == nullptr) {
        return {};
    }
    std::string t = loc_.text(e->getSourceRange());
    if (!t.empty()) {
        return t;
    }
    std::string s;
    llvm::raw_string_ostream os(s);
    PrintingPolicy pp(ctx_.getLangOpts());
    e->printPretty(os, nullptr, pp);
    return os.str();
}

RawKernel KernelWalker::run() {
    const FunctionDecl* fn = raw_.fn;
    ki::KernelInfo& k = raw_.info;
    InstantiationName in = instantiationName(fn, ctx_);
    k.name = in.name;
    k.instantiation = in.full;
    k.templateArgs = in.args;
    k.location = loc_.location(fn->getLocation());

    Frame kf;
    kf.fn = fn;
    kf.defuse = defUseOf(fn);
    frames_.push_back(std::move(kf));
    for (unsigned i = 0; i < fn->getNumParams(); ++i) {
        const ParmVarDecl* p = fn->getParamDecl(i);
        QualType t = p->getType();
        k.params.push_back({p->getNameAsString(), typeName(t, ctx_), t->isPointerType()});
        registerParam(p, static_cast<int>(i));
    }
    walkStmt(fn->getBody());
    frames_.pop_back();
    return std::move(raw_);
}

} // namespace

RawKernel analyzeKernel(const FunctionDecl* fn, ASTContext& ctx, const Locator& locator) {
    KernelWalker w(fn, ctx, locator);
    return w.run();
}

} // namespace memplace::frontend::detail

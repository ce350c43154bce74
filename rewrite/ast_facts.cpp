#include "rewrite/ast_facts.h"

#include <clang/AST/Attr.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/AST/StmtCXX.h>
#include <clang/Basic/SourceManager.h>
#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace memplace::rewrite::detail {

using namespace clang;

namespace {

std::string where(const SourceManager& sm, SourceLocation loc) {
    SourceLocation f = sm.getFileLoc(loc);
    return fmt::format("{}:{}", sm.getSpellingLineNumber(f), sm.getSpellingColumnNumber(f));
}

std::string calleeNameOf(const CallExpr* call) {
    if (const FunctionDecl* fd = call->getDirectCallee()) {
        if (const IdentifierInfo* id = fd->getIdentifier()) {
            return id->getName().str();
        }
    }
    return {};
}

bool isAtomicName(const std::string& n) {
    return n.rfind("atomic", 0) == 0;
}

/// The DeclRefExpr a pointer expression names: `a`, `(a)`, `(T*)a` with no-op casts.
const DeclRefExpr* namedPointer(const Expr* e) {
    return dyn_cast_or_null<DeclRefExpr>(e != nullptr ? e->IgnoreParenImpCasts() : nullptr);
}

/// `a + i`, `a - i` and chains of integer terms `a + r * w + c - 1` with `a` a named pointer
/// written first: the pointer and the terms in source order (each with whether it is
/// subtracted).
std::optional<std::pair<const DeclRefExpr*, std::vector<OffsetTerm>>> pointerPlus(const Expr* e) {
    const auto* b =
        dyn_cast_or_null<BinaryOperator>(e != nullptr ? e->IgnoreParenImpCasts() : nullptr);
    if (b == nullptr || (b->getOpcode() != BO_Add && b->getOpcode() != BO_Sub) ||
        !b->getType()->isPointerType() || !b->getRHS()->getType()->isIntegralOrEnumerationType()) {
        return std::nullopt;
    }
    const OffsetTerm last{b->getRHS(), b->getOpcode() == BO_Sub};
    if (const DeclRefExpr* d = namedPointer(b->getLHS());
        d != nullptr && d->getType()->isPointerType()) {
        return std::make_pair(d, std::vector<OffsetTerm>{last});
    }
    auto inner = pointerPlus(b->getLHS());
    if (inner) {
        inner->second.push_back(last);
    }
    return inner;
}

/// `p + i`: one added term (the forms other than a dereference take no other).
bool isSinglePlus(const std::vector<OffsetTerm>& terms) {
    return terms.size() == 1 && !terms.front().negated;
}

/// The first parent of `e` that is not a parenthesis.
DynTypedNode parentSkippingParens(ASTContext& ctx, const Expr* e, const Expr** child) {
    const Expr* cur = e;
    while (true) {
        auto parents = ctx.getParents(*cur);
        if (parents.empty()) {
            *child = cur;
            return {};
        }
        if (const auto* pe = parents[0].get<ParenExpr>()) {
            cur = pe;
            continue;
        }
        *child = cur;
        return parents[0];
    }
}

} // namespace

const FunctionDecl* patternOf(const FunctionDecl* fd) {
    if (fd == nullptr) {
        return nullptr;
    }
    if (const FunctionDecl* p = fd->getTemplateInstantiationPattern()) {
        fd = p;
    }
    if (const FunctionDecl* d = fd->getDefinition()) {
        fd = d;
    }
    return fd;
}

CLinkage cLinkageOf(const Decl* d) {
    // The innermost linkage specification decides (`extern "C++"` inside `extern "C"` is C++).
    for (const DeclContext* dc = d->getLexicalDeclContext(); dc != nullptr;
         dc = dc->getLexicalParent()) {
        if (const auto* ls = dyn_cast<LinkageSpecDecl>(dc)) {
            if (ls->getLanguage() != LinkageSpecLanguageIDs::C) {
                return CLinkage::None;
            }
            return ls->hasBraces() ? CLinkage::Block : CLinkage::OnDeclaration;
        }
    }
    return CLinkage::None;
}

std::optional<ParamKey> pointerParamOf(const DeclRefExpr* dre) {
    const auto* pvd = dyn_cast_or_null<ParmVarDecl>(dre != nullptr ? dre->getDecl() : nullptr);
    if (pvd == nullptr || !pvd->getType()->isPointerType()) {
        return std::nullopt;
    }
    const auto* fn = dyn_cast_or_null<FunctionDecl>(pvd->getDeclContext());
    if (fn == nullptr) {
        return std::nullopt;
    }
    return ParamKey{patternOf(fn), pvd->getFunctionScopeIndex()};
}

const char* shapeName(Shape s) {
    switch (s) {
    case Shape::Subscript:
        return "subscript";
    case Shape::Deref:
        return "deref";
    case Shape::DerefAdd:
        return "deref of a sum";
    case Shape::Arrow:
        return "arrow";
    case Shape::ArrowAdd:
        return "arrow of a sum";
    case Shape::AtomicAddr:
    case Shape::AtomicAdd:
    case Shape::AtomicPlain:
        return "atomic";
    case Shape::LdgAddr:
    case Shape::LdgAdd:
    case Shape::LdgPlain:
        return "__ldg";
    }
    return "?";
}

SiteShape shapeOf(ASTContext& ctx, const Expr* site) {
    SiteShape s;
    auto memberOf = [&](const Expr* e) -> const MemberExpr* {
        const Expr* child = nullptr;
        DynTypedNode p = parentSkippingParens(ctx, e, &child);
        const auto* me = p.get<MemberExpr>();
        return me != nullptr && !me->isArrow() &&
                       me->getBase()->IgnoreParens() == child->IgnoreParens()
                   ? me
                   : nullptr;
    };
    if (const auto* ase = dyn_cast<ArraySubscriptExpr>(site)) {
        s.shape = Shape::Subscript;
        s.base = namedPointer(ase->getBase());
        s.index = ase->getIdx();
        if (s.base == nullptr || !s.base->getType()->isPointerType()) {
            s.why = "a subscript of something other than the pointer parameter itself";
            s.base = nullptr;
        } else if (ase->getBase()->IgnoreParenImpCasts() != ase->getLHS()->IgnoreParenImpCasts()) {
            s.why = "written index[pointer]";
        }
        s.member = memberOf(site);
        return s;
    }
    if (const auto* u = dyn_cast<UnaryOperator>(site); u != nullptr && u->getOpcode() == UO_Deref) {
        if (const DeclRefExpr* d = namedPointer(u->getSubExpr())) {
            s.shape = Shape::Deref;
            s.base = d;
        } else if (auto pa = pointerPlus(u->getSubExpr())) {
            s.shape = Shape::DerefAdd;
            s.base = pa->first;
            s.index = pa->second.front().expr;
            s.terms = std::move(pa->second);
        } else {
            s.why = "a dereference of a pointer expression other than `p` or `p + i + ...`";
        }
        s.member = memberOf(site);
        return s;
    }
    if (const auto* me = dyn_cast<MemberExpr>(site); me != nullptr && me->isArrow()) {
        s.member = me;
        if (const DeclRefExpr* d = namedPointer(me->getBase())) {
            s.shape = Shape::Arrow;
            s.base = d;
        } else if (auto pa = pointerPlus(me->getBase()); pa && isSinglePlus(pa->second)) {
            s.shape = Shape::ArrowAdd;
            s.base = pa->first;
            s.index = pa->second.front().expr;
        } else {
            s.why = "a member access through a pointer expression other than `p` or `p + i`";
        }
        return s;
    }
    if (const auto* call = dyn_cast<CallExpr>(site); call != nullptr && call->getNumArgs() >= 1) {
        std::string name = calleeNameOf(call);
        bool atomic = isAtomicName(name);
        bool ldg = name == "__ldg";
        if (!atomic && !ldg) {
            s.why = fmt::format("'{}' cannot go through an accessor", name);
            return s;
        }
        const Expr* arg = call->getArg(0)->IgnoreParenImpCasts();
        if (const auto* addr = dyn_cast<UnaryOperator>(arg);
            addr != nullptr && addr->getOpcode() == UO_AddrOf) {
            const auto* ase = dyn_cast<ArraySubscriptExpr>(addr->getSubExpr()->IgnoreParens());
            const DeclRefExpr* d = ase != nullptr ? namedPointer(ase->getBase()) : nullptr;
            if (d != nullptr && d->getType()->isPointerType() &&
                ase->getBase()->IgnoreParenImpCasts() == ase->getLHS()->IgnoreParenImpCasts()) {
                s.shape = atomic ? Shape::AtomicAddr : Shape::LdgAddr;
                s.base = d;
                s.index = ase->getIdx();
                return s;
            }
        } else if (const DeclRefExpr* d = namedPointer(arg)) {
            s.shape = atomic ? Shape::AtomicPlain : Shape::LdgPlain;
            s.base = d;
            return s;
        } else if (auto pa = pointerPlus(arg); pa && isSinglePlus(pa->second)) {
            s.shape = atomic ? Shape::AtomicAdd : Shape::LdgAdd;
            s.base = pa->first;
            s.index = pa->second.front().expr;
            return s;
        }
        s.why = fmt::format("the pointer argument of '{}' is not `&p[i]`, `p + i` or `p`", name);
        return s;
    }
    s.why = "an access the rewriter does not know";
    return s;
}

std::vector<PointerAliasInit> pointerAliasesIn(const Stmt* body) {
    std::vector<PointerAliasInit> out;
    std::vector<const Stmt*> pending{body};
    while (!pending.empty()) {
        const Stmt* cur = pending.back();
        pending.pop_back();
        if (cur == nullptr) {
            continue;
        }
        for (const Stmt* child : cur->children()) {
            pending.push_back(child);
        }
        const auto* ds = dyn_cast<DeclStmt>(cur);
        const auto* vd =
            ds != nullptr && ds->isSingleDecl() ? dyn_cast<VarDecl>(ds->getSingleDecl()) : nullptr;
        if (vd == nullptr || !vd->getType()->isPointerType() || vd->getInit() == nullptr ||
            isa<ParmVarDecl>(vd)) {
            continue;
        }
        PointerAliasInit a;
        a.var = vd;
        const Expr* init = vd->getInit()->IgnoreParenImpCasts();
        if (const DeclRefExpr* d = namedPointer(init); d != nullptr && pointerParamOf(d)) {
            a.param = d;
        } else if (auto pa = pointerPlus(init); pa && pointerParamOf(pa->first)) {
            a.param = pa->first;
            a.terms = std::move(pa->second);
        } else if (const auto* u = dyn_cast<UnaryOperator>(init);
                   u != nullptr && u->getOpcode() == UO_AddrOf) {
            const auto* ase = dyn_cast<ArraySubscriptExpr>(u->getSubExpr()->IgnoreParens());
            const DeclRefExpr* d = ase != nullptr ? namedPointer(ase->getBase()) : nullptr;
            if (d != nullptr && pointerParamOf(d) &&
                ase->getBase()->IgnoreParenImpCasts() == ase->getLHS()->IgnoreParenImpCasts()) {
                a.param = d;
                a.element = ase;
                a.terms.push_back(OffsetTerm{ase->getIdx(), false});
            }
        }
        if (a.param != nullptr) {
            out.push_back(std::move(a));
        }
    }
    std::sort(out.begin(), out.end(), [](const PointerAliasInit& x, const PointerAliasInit& y) {
        return x.var->getBeginLoc() < y.var->getBeginLoc();
    });
    return out;
}

std::vector<PointerRebase> pointerRebasesIn(const Stmt* body) {
    std::vector<PointerRebase> out;
    const auto* cs = dyn_cast_or_null<CompoundStmt>(body);
    if (cs == nullptr) {
        return out;
    }
    for (const Stmt* st : cs->body()) {
        const auto* b = dyn_cast<BinaryOperator>(st);
        if (b == nullptr || (b->getOpcode() != BO_AddAssign && b->getOpcode() != BO_SubAssign) ||
            !b->getRHS()->getType()->isIntegralOrEnumerationType()) {
            continue;
        }
        const auto* d = dyn_cast<DeclRefExpr>(b->getLHS()->IgnoreParenImpCasts());
        if (d != nullptr && pointerParamOf(d)) {
            out.push_back(PointerRebase{b, d, b->getOpcode() == BO_SubAssign});
        }
    }
    return out;
}

bool deducesType(ASTContext& ctx, const Expr* site) {
    const Expr* cur = site;
    while (true) {
        auto parents = ctx.getParents(*cur);
        if (parents.empty()) {
            return false;
        }
        const DynTypedNode& p = parents[0];
        if (const auto* pe = p.get<Expr>()) {
            if (isa<ParenExpr, ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr,
                    ExprWithCleanups>(pe)) {
                cur = pe;
                continue;
            }
            if (const auto* ce = dyn_cast<CXXConstructExpr>(pe)) {
                const CXXConstructorDecl* ctor = ce->getConstructor();
                if (ce->getNumArgs() == 1 && ctor != nullptr &&
                    (ctor->isCopyConstructor() || ctor->isMoveConstructor())) {
                    cur = pe;
                    continue;
                }
                return false;
            }
            if (const auto* call = dyn_cast<CallExpr>(pe)) {
                for (unsigned i = 0; i < call->getNumArgs(); ++i) {
                    if (call->getArg(i) != cur) {
                        continue;
                    }
                    const FunctionDecl* fd = call->getDirectCallee();
                    if (fd == nullptr) {
                        return true;
                    }
                    unsigned shift =
                        isa<CXXOperatorCallExpr>(call) && isa<CXXMethodDecl>(fd) ? 1 : 0;
                    if (i < shift) {
                        return false;
                    }
                    if (i - shift >= fd->getNumParams()) {
                        return true; // variadic
                    }
                    if (const FunctionDecl* pat = fd->getTemplateInstantiationPattern();
                        pat != nullptr && fd->getPrimaryTemplate() != nullptr &&
                        i - shift < pat->getNumParams()) {
                        return pat->getParamDecl(i - shift)->getType()->isDependentType();
                    }
                    return false;
                }
                return false;
            }
            return false;
        }
        if (const auto* vd = p.get<VarDecl>()) {
            return vd->getType()->getContainedDeducedType() != nullptr;
        }
        return false;
    }
}

SourceLocation bindsNonConstRef(ASTContext& ctx, const Expr* site) {
    const Expr* child = nullptr;
    DynTypedNode p = parentSkippingParens(ctx, site, &child);
    auto nonConstRef = [](QualType t) {
        return t->isReferenceType() && !t->getPointeeType().isConstQualified();
    };
    if (const auto* vd = p.get<VarDecl>()) {
        return nonConstRef(vd->getType()) ? vd->getLocation() : SourceLocation();
    }
    if (const auto* call = p.get<CallExpr>()) {
        const FunctionDecl* fd = call->getDirectCallee();
        for (unsigned i = 0; i < call->getNumArgs(); ++i) {
            if (call->getArg(i) != child) {
                continue;
            }
            if (fd == nullptr) {
                return call->getBeginLoc();
            }
            unsigned shift = isa<CXXOperatorCallExpr>(call) && isa<CXXMethodDecl>(fd) ? 1 : 0;
            if (i < shift) {
                // The object of a member operator: assignments (`a[i] = v`, `a[i] += v`) are
                // writes the accessors offer; another non-const operator binds the element.
                const auto* oc = cast<CXXOperatorCallExpr>(call);
                if (oc->isAssignmentOp() || oc->getOperator() == OO_PlusPlus ||
                    oc->getOperator() == OO_MinusMinus) {
                    return {};
                }
                return cast<CXXMethodDecl>(fd)->isConst() ? SourceLocation() : call->getBeginLoc();
            }
            if (i - shift < fd->getNumParams() &&
                nonConstRef(fd->getParamDecl(i - shift)->getType())) {
                return call->getBeginLoc();
            }
        }
        return {};
    }
    if (const auto* ce = p.get<CXXConstructExpr>()) {
        const CXXConstructorDecl* ctor = ce->getConstructor();
        for (unsigned i = 0; i < ce->getNumArgs() && ctor != nullptr; ++i) {
            if (ce->getArg(i) == child && i < ctor->getNumParams() &&
                nonConstRef(ctor->getParamDecl(i)->getType())) {
                return ce->getBeginLoc();
            }
        }
        return {};
    }
    if (const auto* rs = p.get<ReturnStmt>()) {
        // A reference returned from the function the site is in.
        auto fparents = ctx.getParents(*rs);
        while (!fparents.empty()) {
            if (const auto* fd = fparents[0].get<FunctionDecl>()) {
                return nonConstRef(fd->getReturnType()) ? rs->getBeginLoc() : SourceLocation();
            }
            if (fparents[0].get<LambdaExpr>() != nullptr) {
                return {};
            }
            fparents = ctx.getParents(fparents[0]);
        }
        return {};
    }
    if (const auto* mc = p.get<MemberExpr>()) {
        // `a[i].method()` with a non-const method binds the element as the object.
        auto pp = ctx.getParents(*mc);
        if (!pp.empty()) {
            if (const auto* call = pp[0].get<CXXMemberCallExpr>()) {
                const CXXMethodDecl* md = call->getMethodDecl();
                if (md != nullptr && !md->isConst()) {
                    return call->getBeginLoc();
                }
            }
        }
        return {};
    }
    return {};
}

namespace {

class FactsVisitor : public RecursiveASTVisitor<FactsVisitor> {
public:
    FactsVisitor(ASTContext& ctx, Facts& facts, const std::function<bool(FileID)>& isProgramFile)
        : ctx_(ctx), sm_(ctx.getSourceManager()), f_(facts), isProgramFile_(isProgramFile) {}

    bool shouldVisitTemplateInstantiations() const { return true; }

    bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr* call) {
        SourceLocation b = sm_.getFileLoc(call->getBeginLoc());
        calleeNodes_.insert(call->getCallee()->IgnoreParenImpCasts());
        if (!isProgramFile_(sm_.getFileID(b))) {
            return true;
        }
        unsigned off = b.getRawEncoding();
        LaunchFact& lf = f_.launches[off];
        lf.offset = off;
        lf.calls.push_back(call);
        const FunctionDecl* kernel = call->getDirectCallee();
        if (kernel != nullptr && !call->isTypeDependent() && !call->isValueDependent() &&
            !call->isInstantiationDependent()) {
            lf.resolved.emplace_back(call, kernel);
        } else if (lf.dependent == nullptr) {
            lf.dependent = call;
        }
        return true;
    }

    bool VisitDeclRefExpr(DeclRefExpr* dre) {
        if (const auto* fd = dyn_cast<FunctionDecl>(dre->getDecl());
            fd != nullptr && fd->hasAttr<CUDAGlobalAttr>()) {
            kernelDres_.push_back(dre);
            return true;
        }
        if (auto key = pointerParamOf(dre)) {
            const auto* owner =
                cast<FunctionDecl>(cast<ParmVarDecl>(dre->getDecl())->getDeclContext());
            if (!owner->isDependentContext()) {
                f_.paramUses.emplace_back(dre, *key);
            }
        }
        return true;
    }

    bool VisitUnresolvedLookupExpr(UnresolvedLookupExpr* ule) {
        for (const NamedDecl* d : ule->decls()) {
            const NamedDecl* u = d->getUnderlyingDecl();
            const FunctionDecl* fd = dyn_cast<FunctionDecl>(u);
            if (const auto* ft = dyn_cast<FunctionTemplateDecl>(u)) {
                fd = ft->getTemplatedDecl();
            }
            if (fd != nullptr && fd->hasAttr<CUDAGlobalAttr>()) {
                kernelUles_.emplace_back(ule, fd);
            }
        }
        return true;
    }

    bool VisitCallExpr(CallExpr* call) {
        noteCacheHint(call);
        if (isa<CUDAKernelCallExpr>(call) || call->isTypeDependent() ||
            call->isInstantiationDependent()) {
            return true;
        }
        const FunctionDecl* fd = call->getDirectCallee();
        if (fd != nullptr && patternOf(fd)->hasBody()) {
            f_.calls.push_back(call);
        }
        return true;
    }

    bool VisitVarDecl(VarDecl* vd) {
        if (vd->hasAttr<CUDASharedAttr>() && vd->hasExternalStorage() &&
            vd->getType()->isIncompleteArrayType()) {
            SourceLocation l = sm_.getFileLoc(vd->getLocation());
            if (isProgramFile_(sm_.getFileID(l)) && seenShared_.insert(l.getRawEncoding()).second) {
                f_.externShared.push_back(vd);
            }
        }
        if (vd->hasAttr<CUDAConstantAttr>() && !vd->hasExternalStorage() &&
            !vd->getType()->isDependentType() && !vd->getType()->isIncompleteType() &&
            !sm_.isInSystemHeader(sm_.getFileLoc(vd->getLocation())) &&
            seenConstant_.insert(vd->getCanonicalDecl()).second) {
            f_.ownConstantBytes +=
                static_cast<uint64_t>(ctx_.getTypeSizeInChars(vd->getType()).getQuantity());
        }
        return true;
    }

    /// `cudaFuncSetCacheConfig(kernel, ...)`, `cudaFuncSetSharedMemConfig(kernel, ...)`: the
    /// kernel named (`&kernel`, `(void*)kernel`) as the first argument of a cache preference.
    void noteCacheHint(const CallExpr* call) {
        const FunctionDecl* callee = call->getDirectCallee();
        if (callee == nullptr || call->getNumArgs() == 0 || callee->getIdentifier() == nullptr ||
            (callee->getName() != "cudaFuncSetCacheConfig" &&
             callee->getName() != "cudaFuncSetSharedMemConfig")) {
            return;
        }
        const Expr* arg = call->getArg(0)->IgnoreParenCasts();
        if (const auto* addr = dyn_cast<UnaryOperator>(arg);
            addr != nullptr && addr->getOpcode() == UO_AddrOf) {
            arg = addr->getSubExpr()->IgnoreParenCasts();
        }
        if (const auto* dre = dyn_cast<DeclRefExpr>(arg)) {
            hintArgs_.insert(dre);
        }
    }

    void finish() {
        for (const DeclRefExpr* dre : kernelDres_) {
            if (hintArgs_.count(dre) != 0 && !dre->hasExplicitTemplateArgs()) {
                f_.kernelCacheHints.emplace_back(patternOf(cast<FunctionDecl>(dre->getDecl())),
                                                 dre);
            } else if (calleeNodes_.count(dre) == 0) {
                f_.kernelRefs.emplace_back(patternOf(cast<FunctionDecl>(dre->getDecl())),
                                           dre->getBeginLoc());
            }
        }
        for (const auto& [ule, fd] : kernelUles_) {
            if (calleeNodes_.count(ule) == 0) {
                f_.kernelRefs.emplace_back(patternOf(fd), ule->getBeginLoc());
            }
        }
    }

private:
    ASTContext& ctx_;
    const SourceManager& sm_;
    Facts& f_;
    const std::function<bool(FileID)>& isProgramFile_;
    std::set<const Expr*> calleeNodes_;
    std::set<const DeclRefExpr*> hintArgs_;
    std::vector<const DeclRefExpr*> kernelDres_;
    std::vector<std::pair<const UnresolvedLookupExpr*, const FunctionDecl*>> kernelUles_;
    std::set<unsigned> seenShared_;
    std::set<const Decl*> seenConstant_;
};

class SyncWalker {
public:
    SyncWalker(ASTContext& ctx, SyncFacts& out) : sm_(ctx.getSourceManager()), out_(out) {}

    void walkFunction(const FunctionDecl* fd, bool top) {
        if (fd == nullptr || !visited_.insert(fd).second) {
            return;
        }
        for (const ParmVarDecl* p : fd->parameters()) {
            checkVolatile(p->getType(), p->getLocation());
        }
        if (const Stmt* body = fd->getBody()) {
            walk(body, top);
        }
    }

private:
    void interBlock(SourceLocation at, const std::string& what) {
        if (!out_.interBlock) {
            out_.interBlock = true;
            out_.interBlockWhy = fmt::format("{} at {}", what, where(sm_, at));
        }
    }
    void checkVolatile(QualType t, SourceLocation at) {
        for (QualType q = t; !q.isNull();) {
            if (q.isVolatileQualified()) {
                interBlock(at, "a volatile access");
                return;
            }
            if (q->isPointerType() || q->isReferenceType()) {
                q = q->getPointeeType();
            } else if (const ArrayType* at2 = q->getAsArrayTypeUnsafe()) {
                q = at2->getElementType();
            } else {
                break;
            }
        }
    }
    bool targetsShared(const Expr* e) {
        e = e->IgnoreParenImpCasts();
        if (const auto* u = dyn_cast<UnaryOperator>(e);
            u != nullptr && u->getOpcode() == UO_AddrOf) {
            e = u->getSubExpr()->IgnoreParenImpCasts();
        }
        while (const auto* ase = dyn_cast<ArraySubscriptExpr>(e)) {
            e = ase->getBase()->IgnoreParenImpCasts();
        }
        if (const auto* b = dyn_cast<BinaryOperator>(e); b != nullptr && b->isAdditiveOp()) {
            e = b->getLHS()->IgnoreParenImpCasts();
        }
        const auto* dre = dyn_cast<DeclRefExpr>(e);
        const auto* vd = dre != nullptr ? dyn_cast<VarDecl>(dre->getDecl()) : nullptr;
        return vd != nullptr && vd->hasAttr<CUDASharedAttr>();
    }
    void walk(const Stmt* s, bool top) {
        if (s == nullptr) {
            return;
        }
        if (isa<ReturnStmt>(s) && top && !out_.earlyReturn) {
            out_.earlyReturn = true;
            out_.returnAt = s->getBeginLoc();
        }
        if (isa<AsmStmt>(s)) {
            interBlock(s->getBeginLoc(), "inline assembly");
        }
        if (const auto* ds = dyn_cast<DeclStmt>(s)) {
            for (const Decl* d : ds->decls()) {
                if (const auto* vd = dyn_cast<VarDecl>(d)) {
                    checkVolatile(vd->getType(), vd->getLocation());
                }
            }
        }
        if (const auto* call = dyn_cast<CallExpr>(s)) {
            std::string name = calleeNameOf(call);
            if (name.rfind("__syncthreads", 0) == 0 || name == "__barrier_sync" ||
                (isa<CXXMemberCallExpr>(call) && name == "sync")) {
                if (!out_.barrier) {
                    out_.barrier = true;
                    out_.barrierAt = call->getBeginLoc();
                }
            } else if (name == "__threadfence" || name == "__threadfence_system") {
                interBlock(call->getBeginLoc(), name);
            } else if (isAtomicName(name) && call->getNumArgs() >= 1 &&
                       !targetsShared(call->getArg(0))) {
                interBlock(call->getBeginLoc(), name + " on global memory");
            }
            if (const FunctionDecl* fd = call->getDirectCallee(); fd != nullptr && fd->hasBody()) {
                const FunctionDecl* def = nullptr;
                fd->hasBody(def);
                walkFunction(def, false);
            }
        }
        if (const auto* lambda = dyn_cast<LambdaExpr>(s)) {
            walk(lambda->getBody(), false);
            return;
        }
        for (const Stmt* child : s->children()) {
            walk(child, top);
        }
    }

    const SourceManager& sm_;
    SyncFacts& out_;
    std::set<const FunctionDecl*> visited_;
};

} // namespace

Facts collectFacts(ASTContext& ctx, const std::function<bool(FileID)>& isProgramFile) {
    Facts f;
    FactsVisitor v(ctx, f, isProgramFile);
    v.TraverseDecl(ctx.getTranslationUnitDecl());
    v.finish();
    return f;
}

SyncFacts syncFactsOf(ASTContext& ctx, const FunctionDecl* kernel) {
    SyncFacts s;
    SyncWalker w(ctx, s);
    w.walkFunction(kernel, true);
    return s;
}

} // namespace memplace::rewrite::detail

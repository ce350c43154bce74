// The walk over a kernel's statements and expressions: loops begin and end, declarations bind
// pointer aliases, each expression is dispatched by what it is, and a use of an array's pointer
// as a value becomes a hazard.
#include "frontend/kernel_walker.h"

#include <fmt/format.h>

namespace memplace::frontend::detail {

namespace {

/// Counts the walk's nesting for as long as it lives.
struct DepthGuard {
    int& depth;
    explicit DepthGuard(int& d) : depth(d) { ++depth; }
    ~DepthGuard() { --depth; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
};

} // namespace

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
        walkUnary(u, use);
        return;
    }
    if (const auto* b = dyn_cast<BinaryOperator>(e)) {
        walkBinary(b, use);
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
        walkConstruct(ctor);
        return;
    }
    if (const auto* lambda = dyn_cast<LambdaExpr>(e)) {
        walkStmt(lambda->getBody());
        return;
    }
    if (const auto* ce = dyn_cast<ExplicitCastExpr>(e)) {
        walkExplicitCast(ce, use);
        return;
    }
    if (const auto* dre = dyn_cast<DeclRefExpr>(e)) {
        walkDeclRef(dre, use);
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

void KernelWalker::walkUnary(const UnaryOperator* u, Use use) {
    const Expr* sub = u->getSubExpr();
    switch (u->getOpcode()) {
    case UO_Deref:
        if (recordAliasElement(u, sub, use, "")) {
            return;
        }
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

void KernelWalker::walkBinary(const BinaryOperator* b, Use use) {
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
}

void KernelWalker::walkConstruct(const CXXConstructExpr* ctor) {
    const CXXConstructorDecl* cd = ctor->getConstructor();
    for (unsigned i = 0; i < ctor->getNumArgs(); ++i) {
        const Expr* arg = ctor->getArg(i);
        if (auto m = matchPointer(arg); m && m->element == nullptr) {
            addHazard(ki::HazardKind::Stored, m->array, arg->getBeginLoc(),
                      fmt::format("'{}' is stored in an object of type '{}'", arrayName(m->array),
                                  typeName(ctor->getType(), ctx_)));
            walkPointerIndices(*m);
            continue;
        }
        bool byRef = cd != nullptr && i < cd->getNumParams() &&
                     cd->getParamDecl(i)->getType()->isReferenceType() &&
                     !cd->getParamDecl(i)->getType()->getPointeeType().isConstQualified();
        walkExpr(arg, byRef ? Use::ReadWrite : Use::Read);
    }
}

void KernelWalker::walkExplicitCast(const ExplicitCastExpr* ce, Use use) {
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
}

void KernelWalker::walkDeclRef(const DeclRefExpr* dre, Use use) {
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

} // namespace memplace::frontend::detail

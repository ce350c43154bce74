// What pointers may point into, for the aliasing check: `__device__`/`__managed__` variables
// accessed by name or through pointers, and accesses through pointers whose target is unknown.
#include "frontend/kernel_walker.h"

#include <fmt/format.h>

#include <ranges>

namespace memplace::frontend::detail {

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
        targetsOfCast(ce, out, depth);
        return;
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

void KernelWalker::targetsOfCast(const CastExpr* ce, Targets& out, int depth) {
    const Expr* sub = ce->getSubExpr();
    switch (ce->getCastKind()) {
    case CK_ArrayToPointerDecay:
        targetsOfObject(sub, out, depth + 1);
        return;
    case CK_NullToPointer:
        return;
    case CK_IntegralToPointer:
        if (!sub->isNullPointerConstant(ctx_, Expr::NPC_ValueDependentIsNotNull)) {
            if (out.unknown.empty()) {
                out.unknown = "a pointer made from an integer";
            }
        }
        return;
    default:
        targetsOfPointer(sub, out, depth + 1);
        return;
    }
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

} // namespace memplace::frontend::detail

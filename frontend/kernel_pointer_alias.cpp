// Local pointers into an array parameter (`const float* row = m + r * cols;`) and parameters
// rebased at the top of the kernel (`src += offset;`): their subscripts are accesses of the
// array at the pointer's offset (PointerAlias).
#include "frontend/kernel_walker.h"

#include <fmt/format.h>

#include <algorithm>

namespace memplace::frontend::detail {

namespace {

/// A reference to `vd` in `body` that does not access an element through it (`vd[k]`, `(vd)[k]`,
/// a 1-D element; `*vd`; `vd->m`): one that reads, modifies, passes, captures or takes the
/// address of the pointer; null if none.
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
            const auto* deref = dyn_cast_or_null<UnaryOperator>(parent);
            const auto* arrow = dyn_cast_or_null<MemberExpr>(parent);
            ok = (ase != nullptr && ase->getBase()->IgnoreParenImpCasts() == dre &&
                  ase->getLHS()->IgnoreParenImpCasts() == dre && !ase->getType()->isArrayType()) ||
                 (deref != nullptr && deref->getOpcode() == UO_Deref &&
                  !deref->getType()->isArrayType()) ||
                 (arrow != nullptr && arrow->isArrow());
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

} // namespace

bool KernelWalker::recordAliasElement(const Expr* accessExpr, const Expr* pointer, Use use,
                                      const std::string& member) {
    // `*row` and `row->m` for a local pointer `row = m + off` (or a rebased parameter): the
    // element `off` of the array, as `row[0]` is.
    const auto* dre = dyn_cast<DeclRefExpr>(pointer->IgnoreParenImpCasts());
    const auto* vd = dre != nullptr ? dyn_cast<VarDecl>(dre->getDecl()) : nullptr;
    auto it = vd != nullptr ? aliases_.find(vd) : aliases_.end();
    if (it == aliases_.end()) {
        return false;
    }
    const PointerAlias& alias = it->second;
    if (use == Use::AddressOf) {
        // `&*p`, `&p->m`: the element's address escapes, as for `&row[k]`.
        addHazard(ki::HazardKind::Stored, alias.array, accessExpr->getBeginLoc(),
                  fmt::format("the address of '{}' is taken", truncate(text(accessExpr))));
        return true;
    }
    recordSite(accessExpr, alias.array, accessOf(use), ki::SiteForm::Deref, "", member, dre, {}, {},
               alias.offset, alias.text);
    return true;
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

} // namespace memplace::frontend::detail

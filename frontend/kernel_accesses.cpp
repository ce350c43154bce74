// Accesses: subscripts, members and untracked subscripts, recorded as sites (their symbolic
// indices, enclosing loops, source ranges for the rewriter) and hazards.
#include "frontend/kernel_walker.h"

#include <clang/Lex/Lexer.h>
#include <fmt/format.h>

#include <algorithm>

namespace memplace::frontend::detail {

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
        if (recordAliasElement(cur, cur->getBase(), inner, member)) {
            return;
        }
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
        if (recordAliasElement(u, u->getSubExpr(), inner, member)) {
            return;
        }
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
    noteSiteOfGlobal(accessExpr, array, access);
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

    describeSiteSource(rs, accessExpr, array, base, indices);
    raw_.siteIndex[key] = static_cast<int>(raw_.sites.size());
    raw_.sites.push_back(std::move(rs));
    return raw_.sites.back();
}

void KernelWalker::noteSiteOfGlobal(const Expr* accessExpr, int array, AccessMode access) {
    const ki::ArrayInfo& arr = raw_.info.arrays[array];
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
}

void KernelWalker::describeSiteSource(RawSite& rs, const Expr* accessExpr, int array,
                                      const Expr* base, const std::vector<const Expr*>& indices) {
    const ki::ArrayInfo& arr = raw_.info.arrays[array];
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

} // namespace memplace::frontend::detail

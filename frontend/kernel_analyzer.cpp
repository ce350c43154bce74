// The kernel walker: visits a kernel's body in source order, follows calls into `__device__`
// functions (binding their parameters to the caller's arrays and values), and records arrays,
// access sites, loops, hazards and untracked accesses. Index expressions are evaluated
// symbolically (SymValue) in the context of the walk: loop variables, single-definition
// locals, kernel parameters, and the values helpers were called with.
// This file: the entry point, the walker's small helpers, and the kernel's arrays (parameters,
// globals, shared arrays) with the patterns that designate them.
#include "frontend/kernel_walker.h"

#include <fmt/format.h>

#include <ranges>

namespace memplace::frontend::detail {

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

std::optional<int64_t> apsToInt64(const llvm::APSInt& v) {
    if (v.isSigned() ? v.getSignificantBits() <= 64 : v.getActiveBits() <= 63) {
        return v.isSigned() ? v.getSExtValue() : static_cast<int64_t>(v.getZExtValue());
    }
    return std::nullopt;
}

std::string truncate(std::string s, size_t n) {
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

RawKernel analyzeKernel(const FunctionDecl* fn, ASTContext& ctx, const Locator& locator) {
    KernelWalker w(fn, ctx, locator);
    return w.run();
}

} // namespace memplace::frontend::detail

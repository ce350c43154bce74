// Symbolic evaluation: the value of an index expression as a polynomial over the thread and
// block indices, loop iteration symbols and kernel parameters; as the arrays it reads
// (indirect); or unknown with a reason.
#include "frontend/kernel_walker.h"

#include <fmt/format.h>

#include <algorithm>
#include <ranges>

namespace memplace::frontend::detail {

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
        return evalUnary(u);
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
        return evalCall(call);
    }
    return SymValue::unknown(fmt::format("'{}' is not an integer expression the analysis models",
                                         truncate(text(e), 40)));
}

SymValue KernelWalker::evalUnary(const UnaryOperator* u) {
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

SymValue KernelWalker::evalCall(const CallExpr* call) {
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

} // namespace memplace::frontend::detail

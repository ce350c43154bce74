// Loops: each loop of the walk, its induction variable, bound and step, its value per iteration
// (in terms of the loop's iteration symbol), and its trip count when the values are constants.
#include "frontend/kernel_walker.h"

#include <fmt/format.h>

namespace memplace::frontend::detail {

// ============================================================================ loops =====

namespace {

/// Whether `e` names `v` (through implicit casts).
bool isVar(const Expr* e, const VarDecl* v) {
    const auto* dre = dyn_cast_or_null<DeclRefExpr>(stripImplicit(e));
    return dre != nullptr && dre->getDecl() == v;
}

/// The loop's integer variable and its initial value: `for (int i = e; ...)` or
/// `for (i = e; ...)`; null when the header initialises none.
std::pair<const VarDecl*, const Expr*> inductionVariable(const ForStmt* fs) {
    if (const auto* ds = dyn_cast_or_null<DeclStmt>(fs->getInit()); ds && ds->isSingleDecl()) {
        if (const auto* vd = dyn_cast<VarDecl>(ds->getSingleDecl());
            vd && vd->getInit() && isIntegral(vd->getType())) {
            return {vd, vd->getInit()};
        }
    } else if (const auto* b = dyn_cast_or_null<BinaryOperator>(fs->getInit());
               b && b->getOpcode() == BO_Assign) {
        if (const auto* dre = dyn_cast<DeclRefExpr>(b->getLHS()->IgnoreParenImpCasts())) {
            if (const auto* vd = dyn_cast<VarDecl>(dre->getDecl());
                vd && isIntegral(vd->getType())) {
                return {vd, b->getRHS()};
            }
        }
    }
    return {nullptr, nullptr};
}

/// The bound `v` is compared with in the condition, and the comparison as `v cmp bound`; a null
/// bound when the condition compares no such thing.
std::pair<const Expr*, BinaryOperatorKind> loopBound(const ForStmt* fs, const VarDecl* v) {
    if (const auto* c = dyn_cast_or_null<BinaryOperator>(
            fs->getCond() ? fs->getCond()->IgnoreParenImpCasts() : nullptr);
        c && c->isComparisonOp()) {
        if (isVar(c->getLHS(), v)) {
            return {c->getRHS(), c->getOpcode()};
        }
        if (isVar(c->getRHS(), v)) {
            return {c->getLHS(), BinaryOperator::reverseComparisonOp(c->getOpcode())};
        }
    }
    return {nullptr, BO_LT};
}

/// How the increment changes `v`: by ±1 (`unit`), by adding or subtracting `expr`, or
/// geometrically (`v *= expr`, `v >>= expr`, ...); nothing recognised when all are empty.
struct LoopStep {
    const Expr* expr = nullptr;
    bool negate = false;
    std::optional<BinaryOperatorKind> geometric;
    std::optional<int64_t> unit;
};

LoopStep compoundStep(const CompoundAssignOperator* ca) {
    LoopStep st;
    switch (ca->getOpcode()) {
    case BO_AddAssign:
        st.expr = ca->getRHS();
        break;
    case BO_SubAssign:
        st.expr = ca->getRHS();
        st.negate = true;
        break;
    case BO_MulAssign:
        st.geometric = BO_Mul;
        st.expr = ca->getRHS();
        break;
    case BO_DivAssign:
        st.geometric = BO_Div;
        st.expr = ca->getRHS();
        break;
    case BO_ShlAssign:
        st.geometric = BO_Shl;
        st.expr = ca->getRHS();
        break;
    case BO_ShrAssign:
        st.geometric = BO_Shr;
        st.expr = ca->getRHS();
        break;
    default:
        break;
    }
    return st;
}

LoopStep loopStep(const ForStmt* fs, const VarDecl* v) {
    LoopStep st;
    const Expr* inc = fs->getInc() ? fs->getInc()->IgnoreParenImpCasts() : nullptr;
    if (const auto* u = dyn_cast_or_null<UnaryOperator>(inc);
        u && u->isIncrementDecrementOp() && isVar(u->getSubExpr(), v)) {
        st.unit = u->isIncrementOp() ? 1 : -1;
    } else if (const auto* ca = dyn_cast_or_null<CompoundAssignOperator>(inc);
               ca && isVar(ca->getLHS(), v)) {
        st = compoundStep(ca);
    } else if (const auto* as = dyn_cast_or_null<BinaryOperator>(inc);
               as && as->getOpcode() == BO_Assign && isVar(as->getLHS(), v)) {
        if (const auto* rhs = dyn_cast<BinaryOperator>(as->getRHS()->IgnoreParenImpCasts())) {
            bool lv = isVar(rhs->getLHS(), v);
            bool rv = isVar(rhs->getRHS(), v);
            if (rhs->getOpcode() == BO_Add && (lv || rv)) {
                st.expr = lv ? rhs->getRHS() : rhs->getLHS();
            } else if (rhs->getOpcode() == BO_Sub && lv) {
                st.expr = rhs->getRHS();
                st.negate = true;
            } else if (lv && (rhs->getOpcode() == BO_Mul || rhs->getOpcode() == BO_Div ||
                              rhs->getOpcode() == BO_Shl || rhs->getOpcode() == BO_Shr)) {
                st.geometric = rhs->getOpcode();
                st.expr = rhs->getRHS();
            }
        }
    }
    return st;
}

} // namespace

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
    auto [v, initE] = inductionVariable(fs);
    if (v == nullptr) {
        rl.reason = "no integer induction variable initialised in the loop header";
        return;
    }
    rl.var = v->getNameAsString();
    auto [boundE, cmp] = loopBound(fs, v);
    if (boundE != nullptr) {
        rl.bound = text(boundE);
    }
    const LoopStep st = loopStep(fs, v);

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

    if (st.geometric) {
        SymValue factor = eval(st.expr);
        auto f = factor.isPoly() ? factor.poly.constantValue() : std::nullopt;
        al.iv = v;
        al.value =
            SymValue::unknown(fmt::format("loop variable '{}' changes geometrically", rl.var));
        rl.reason = fmt::format("'{}' changes geometrically: no affine step", rl.var);
        if (initC && boundC && f && boundE != nullptr) {
            rl.tripCount = geometricTripCount(*initC, *boundC, *f, cmp, *st.geometric);
        }
        return;
    }
    SymValue step;
    if (st.unit) {
        step = SymValue::constant(*st.unit);
    } else if (st.expr != nullptr) {
        step = eval(st.expr);
        if (step.isPoly() && st.negate) {
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
        rl.tripCount = affineTripCount(*initC, *boundC, *stepC, cmp);
    } else if (rl.reason.empty()) {
        rl.reason = boundE == nullptr ? "no bound recognised in the condition"
                                      : "the trip count depends on values known at run time";
    }
}

// ============================================================================ trip counts =

std::optional<int64_t> geometricTripCount(int64_t init, int64_t bound, int64_t factor,
                                          BinaryOperatorKind cmp, BinaryOperatorKind op) {
    int64_t x = init;
    int64_t n = 0;
    auto holds = [&](int64_t val) {
        switch (cmp) {
        case BO_LT:
            return val < bound;
        case BO_LE:
            return val <= bound;
        case BO_GT:
            return val > bound;
        case BO_GE:
            return val >= bound;
        case BO_NE:
            return val != bound;
        default:
            return false;
        }
    };
    while (n <= kMaxSimulatedTrips && holds(x)) {
        ++n;
        int64_t next = x;
        switch (op) {
        case BO_Mul:
            next = x * factor;
            break;
        case BO_Div:
            next = factor != 0 ? x / factor : x;
            break;
        case BO_Shl:
            next = (factor >= 0 && factor < 62) ? x << factor : x;
            break;
        case BO_Shr:
            next = (factor >= 0 && factor < 63) ? x >> factor : x;
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
    return n <= kMaxSimulatedTrips ? std::optional<int64_t>(n) : std::nullopt;
}

std::optional<int64_t> affineTripCount(int64_t init, int64_t bound, int64_t step,
                                       BinaryOperatorKind cmp) {
    const int64_t i0 = init;
    const int64_t b = bound;
    const int64_t s = step;
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
    return n;
}

} // namespace memplace::frontend::detail

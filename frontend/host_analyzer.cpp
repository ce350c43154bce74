// The host side: every `kernel<<<...>>>(...)` in the main file's host code, with its
// configuration and arguments, and every cudaMalloc-style allocation whose size may give a
// kernel array its extent. Sizes and dim3 values are evaluated as constants when they are:
// literals, sizeof, constexpr, and locals defined once from those.
#include "frontend/analysis_internal.h"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Lex/Lexer.h>
#include <fmt/format.h>

#include <memory>

namespace memplace::frontend::detail {

using namespace clang;
namespace ki = memplace::kernelinfo;

namespace {

class HostVisitor : public RecursiveASTVisitor<HostVisitor> {
public:
    HostVisitor(ASTContext& ctx, const Locator& locator) : ctx_(ctx), loc_(locator) {}

    bool shouldVisitTemplateInstantiations() const { return true; }
    bool shouldVisitLambdaBody() const { return true; }

    bool TraverseDecl(Decl* d) {
        if (d == nullptr) {
            return true;
        }
        if (!isa<TranslationUnitDecl>(d) && !loc_.inProgramFile(d->getLocation())) {
            return true; // library headers: no launches of the program's kernels, much to skip
        }
        if (const auto* fd = dyn_cast<FunctionDecl>(d)) {
            if (!fd->doesThisDeclarationHaveABody()) {
                return true;
            }
            bool deviceOnly = fd->hasAttr<CUDAGlobalAttr>() ||
                              (fd->hasAttr<CUDADeviceAttr>() && !fd->hasAttr<CUDAHostAttr>());
            if (deviceOnly) {
                return true;
            }
            const FunctionDecl* saved = current_;
            current_ = fd;
            bool r = RecursiveASTVisitor::TraverseDecl(d);
            current_ = saved;
            return r;
        }
        return RecursiveASTVisitor::TraverseDecl(d);
    }

    bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr* call) {
        if (current_ == nullptr || call->isTypeDependent() || call->isValueDependent()) {
            return true;
        }
        const FunctionDecl* kernel = call->getDirectCallee();
        if (kernel == nullptr) {
            return true;
        }
        // A launch in a host function template is seen once per instantiation: keep one per
        // launched kernel.
        if (!seenLaunches_.insert({locKey(loc_.sm(), call->getBeginLoc()), kernel}).second) {
            return true;
        }
        RawLaunch l;
        l.call = call;
        l.kernel = kernel;
        l.host = current_;
        ki::LaunchSite& s = l.site;
        s.location = loc_.location(call->getBeginLoc());
        s.function = current_->getNameAsString();
        s.kernel = instantiationName(kernel, ctx_).full;
        const CallExpr* cfg = call->getConfig();
        LaunchSource& src = l.source;
        src.call = call;
        src.whole = loc_.fileRange(call->getSourceRange());
        src.callee = loc_.fileRange(call->getCallee()->IgnoreImpCasts()->getSourceRange());
        if (cfg != nullptr) {
            src.config = loc_.fileRange(SourceRange(cfg->getBeginLoc(), cfg->getRParenLoc()));
            auto arg = [&](unsigned i, ki::LaunchValue& v, CharSourceRange& r, int kind) {
                if (i >= cfg->getNumArgs() || isa<CXXDefaultArgExpr>(cfg->getArg(i))) {
                    return;
                }
                const Expr* e = cfg->getArg(i);
                r = loc_.fileRange(e->getSourceRange());
                v.text = loc_.text(e->getSourceRange());
                if (kind == 3) {
                    if (auto d = evalDim3(e)) {
                        v.value = {(*d)[0], (*d)[1], (*d)[2]};
                    }
                } else if (kind == 1) {
                    if (auto n = evalInt(e)) {
                        v.value = {*n};
                    }
                }
            };
            arg(0, s.grid, src.grid, 3);
            arg(1, s.block, src.block, 3);
            arg(2, s.sharedBytes, src.sharedBytes, 1);
            arg(3, s.stream, src.stream, 0);
            if (s.sharedBytes.text.empty()) {
                s.sharedBytes.value = {0};
            }
        }
        for (unsigned i = 0; i < call->getNumArgs(); ++i) {
            const Expr* a = call->getArg(i);
            bool defaulted = isa<CXXDefaultArgExpr>(a);
            s.arguments.push_back(defaulted ? std::string() : loc_.text(a->getSourceRange()));
            src.args.push_back(defaulted ? CharSourceRange() : loc_.fileRange(a->getSourceRange()));
            bool exact = false;
            l.argRoots.push_back(rootOf(a, exact));
            l.argExact.push_back(exact);
        }
        if (cfg != nullptr && call->getRParenLoc().isValid()) {
            // "(" follows ">>>": find it by lexing from the end of the configuration.
            std::optional<Token> tok = Lexer::findNextToken(
                loc_.sm().getFileLoc(cfg->getRParenLoc()), loc_.sm(), loc_.langOptions());
            if (tok && tok->is(tok::l_paren)) {
                src.argsParens =
                    loc_.fileRange(SourceRange(tok->getLocation(), call->getRParenLoc()));
            }
        }
        facts_.launches.push_back(std::move(l));
        return true;
    }

    bool VisitCallExpr(CallExpr* call) {
        if (current_ == nullptr || isa<CUDAKernelCallExpr>(call) || call->isTypeDependent()) {
            return true;
        }
        std::string name = calleeName(call);
        bool malloc = name == "cudaMalloc" || name == "cudaMallocManaged" ||
                      name == "cudaMallocAsync" || name == "cudaMallocFromPoolAsync" ||
                      name == "cudaMallocPitch";
        if (!malloc || call->getNumArgs() < 2) {
            return true;
        }
        const Expr* target = stripCasts(call->getArg(0));
        const auto* addr = dyn_cast_or_null<UnaryOperator>(target);
        if (addr == nullptr || addr->getOpcode() != UO_AddrOf) {
            return true;
        }
        const auto* dre = dyn_cast<DeclRefExpr>(addr->getSubExpr()->IgnoreParenImpCasts());
        if (dre == nullptr) {
            return true;
        }
        RawAllocation a;
        a.var = dre->getDecl();
        a.site.variable = dre->getDecl()->getNameAsString();
        a.site.call = name;
        a.site.location = loc_.location(call->getBeginLoc());
        a.site.function = current_->getNameAsString();
        if (name == "cudaMallocPitch") {
            a.site.bytesText = call->getNumArgs() >= 4
                                   ? fmt::format("pitch * {}", loc_.text(call->getArg(3)))
                                   : std::string();
        } else {
            const Expr* bytes = call->getArg(1);
            a.site.bytesText = loc_.text(bytes->getSourceRange());
            if (auto v = evalInt(bytes); v && *v >= 0) {
                a.site.bytes = static_cast<uint64_t>(*v);
            }
        }
        facts_.allocations.push_back(std::move(a));
        return true;
    }

    HostFacts take() { return std::move(facts_); }

private:
    static const Expr* stripCasts(const Expr* e) {
        while (e != nullptr) {
            e = stripImplicit(e);
            if (const auto* ce = dyn_cast<ExplicitCastExpr>(e)) {
                e = ce->getSubExpr();
            } else {
                break;
            }
        }
        return e;
    }

    /// The variable a pointer argument points into: `p`, `p + k`, `&p[k]`, `(T*)p`.
    static const ValueDecl* rootOf(const Expr* e, bool& exact) {
        exact = true;
        e = stripCasts(e);
        while (true) {
            if (const auto* b = dyn_cast_or_null<BinaryOperator>(e);
                b && b->isAdditiveOp() && b->getType()->isPointerType()) {
                exact = false;
                e = stripCasts(b->getLHS()->getType()->isPointerType() ? b->getLHS() : b->getRHS());
                continue;
            }
            if (const auto* u = dyn_cast_or_null<UnaryOperator>(e);
                u && u->getOpcode() == UO_AddrOf) {
                if (const auto* ase =
                        dyn_cast<ArraySubscriptExpr>(u->getSubExpr()->IgnoreParenImpCasts())) {
                    exact = false;
                    e = stripCasts(ase->getBase());
                    continue;
                }
            }
            break;
        }
        if (const auto* dre = dyn_cast_or_null<DeclRefExpr>(e)) {
            if (dre->getType()->isPointerType() || dre->getType()->isArrayType()) {
                return dre->getDecl();
            }
        }
        return nullptr;
    }

    const DefUse& defUse() {
        auto& slot = defuse_[current_];
        if (!slot) {
            slot = std::make_unique<DefUse>(current_);
        }
        return *slot;
    }

    std::optional<int64_t> evalInt(const Expr* e, int depth = 0) {
        if (e == nullptr || depth > 32 || e->isValueDependent()) {
            return std::nullopt;
        }
        e = e->IgnoreParens();
        if (isIntegral(e->getType())) {
            Expr::EvalResult r;
            if (e->EvaluateAsInt(r, ctx_)) {
                const llvm::APSInt& v = r.Val.getInt();
                if (v.getActiveBits() <= 63) {
                    return v.isSigned() ? v.getSExtValue() : static_cast<int64_t>(v.getZExtValue());
                }
                return std::nullopt;
            }
        }
        if (const auto* ce = dyn_cast<CastExpr>(e)) {
            return isIntegral(ce->getSubExpr()->getType()) ? evalInt(ce->getSubExpr(), depth + 1)
                                                           : std::nullopt;
        }
        if (const auto* fe = dyn_cast<FullExpr>(e)) {
            return evalInt(fe->getSubExpr(), depth + 1);
        }
        if (const auto* dre = dyn_cast<DeclRefExpr>(e)) {
            const auto* vd = dyn_cast<VarDecl>(dre->getDecl());
            if (vd == nullptr || !vd->hasLocalStorage()) {
                return std::nullopt;
            }
            const DefUse::Info* info = defUse().find(vd);
            if (info == nullptr || info->addressTaken || info->defs != 1 ||
                info->single == nullptr) {
                return std::nullopt;
            }
            return evalInt(info->single, depth + 1);
        }
        if (const auto* b = dyn_cast<BinaryOperator>(e)) {
            auto l = evalInt(b->getLHS(), depth + 1);
            auto r = evalInt(b->getRHS(), depth + 1);
            if (!l || !r) {
                return std::nullopt;
            }
            int64_t out = 0;
            switch (b->getOpcode()) {
            case BO_Add:
                return __builtin_add_overflow(*l, *r, &out) ? std::nullopt
                                                            : std::optional<int64_t>(out);
            case BO_Sub:
                return __builtin_sub_overflow(*l, *r, &out) ? std::nullopt
                                                            : std::optional<int64_t>(out);
            case BO_Mul:
                return __builtin_mul_overflow(*l, *r, &out) ? std::nullopt
                                                            : std::optional<int64_t>(out);
            case BO_Div:
                return *r != 0 ? std::optional<int64_t>(*l / *r) : std::nullopt;
            case BO_Rem:
                return *r != 0 ? std::optional<int64_t>(*l % *r) : std::nullopt;
            case BO_Shl:
                return *r >= 0 && *r < 62 ? std::optional<int64_t>(*l << *r) : std::nullopt;
            case BO_Shr:
                return *r >= 0 && *r < 63 ? std::optional<int64_t>(*l >> *r) : std::nullopt;
            default:
                return std::nullopt;
            }
        }
        if (const auto* co = dyn_cast<ConditionalOperator>(e)) {
            auto c = evalInt(co->getCond(), depth + 1);
            if (c) {
                return evalInt(*c != 0 ? co->getTrueExpr() : co->getFalseExpr(), depth + 1);
            }
        }
        return std::nullopt;
    }

    std::optional<std::array<int64_t, 3>> evalDim3(const Expr* e, int depth = 0) {
        if (e == nullptr || depth > 16) {
            return std::nullopt;
        }
        e = stripImplicit(e);
        if (const auto* fc = dyn_cast<CXXFunctionalCastExpr>(e)) {
            return evalDim3(fc->getSubExpr(), depth + 1);
        }
        if (isIntegral(e->getType())) {
            if (auto v = evalInt(e)) {
                return std::array<int64_t, 3>{*v, 1, 1};
            }
            return std::nullopt;
        }
        if (const auto* ctor = dyn_cast<CXXConstructExpr>(e)) {
            if (ctor->getNumArgs() == 1 && !isIntegral(ctor->getArg(0)->getType())) {
                return evalDim3(ctor->getArg(0), depth + 1); // copy or move
            }
            std::array<int64_t, 3> d = {1, 1, 1};
            for (unsigned i = 0; i < ctor->getNumArgs() && i < 3; ++i) {
                auto v = evalInt(ctor->getArg(i));
                if (!v) {
                    return std::nullopt;
                }
                d[i] = *v;
            }
            return d;
        }
        if (const auto* dre = dyn_cast<DeclRefExpr>(e)) {
            const auto* vd = dyn_cast<VarDecl>(dre->getDecl());
            if (vd == nullptr || !vd->hasLocalStorage()) {
                return std::nullopt;
            }
            const DefUse::Info* info = defUse().find(vd);
            if (info == nullptr || info->addressTaken || info->defs != 1 ||
                info->single == nullptr) {
                return std::nullopt;
            }
            return evalDim3(info->single, depth + 1);
        }
        return std::nullopt;
    }

    ASTContext& ctx_;
    const Locator& loc_;
    const FunctionDecl* current_ = nullptr;
    HostFacts facts_;
    std::set<std::pair<LocKey, const FunctionDecl*>> seenLaunches_;
    std::map<const FunctionDecl*, std::unique_ptr<DefUse>> defuse_;
};

} // namespace

const std::vector<std::size_t>& HostFacts::launchesOfKernel(const FunctionDecl* fn) const {
    static const std::vector<std::size_t> none;
    const auto it = launchesOf.find(fn->getCanonicalDecl());
    return it == launchesOf.end() ? none : it->second;
}

HostFacts analyzeHost(ASTContext& ctx, const Locator& locator) {
    HostVisitor v(ctx, locator);
    v.TraverseDecl(ctx.getTranslationUnitDecl());
    HostFacts facts = v.take();
    for (std::size_t i = 0; i < facts.launches.size(); ++i) {
        facts.launchesOf[facts.launches[i].kernel->getCanonicalDecl()].push_back(i);
    }
    return facts;
}

} // namespace memplace::frontend::detail

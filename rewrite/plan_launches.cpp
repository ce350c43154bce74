// Planning launches (planner.h): what each launch becomes (memplace::launch<K> for a rewritten
// kernel, MEMPLACE_LAUNCH for the others) or why it stays <<<...>>>, and what each `extern
// __shared__` declaration becomes.
#include "rewrite/planner.h"

#include <clang/AST/Attr.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/ParentMapContext.h>
#include <fmt/format.h>
#include <llvm/ADT/StringExtras.h>

namespace memplace::rewrite::detail {

using namespace clang;
using clang::SourceLocation; // memplace::SourceLocation is written in full

namespace {

/// A launch as written: its configuration (grid, block, shared bytes, stream), its arguments, and
/// the kernel as it names it (qualifier, name, template arguments written out).
struct LaunchSpelling {
    std::string conf[4] = {"", "", "0", "0"};
    std::vector<std::string> args;
    std::string qualifier;
    std::string name;
    std::string targs;
    /// The defaulted trailing arguments written out (MEMPLACE_LAUNCH takes the kernel's
    /// address, which has no default arguments); empty when there are none or one cannot be.
    std::vector<std::string> defaults;
};

/// A defaulted argument's value as a literal of its parameter's builtin type, when it is a
/// constant of one (`static_cast<float>(0x1.8p+1)`: hexadecimal, so that the value is exact);
/// empty otherwise (a name or type spelled there may mean another thing at the launch).
std::string constantDefault(const ASTContext& ctx, const CXXDefaultArgExpr* d) {
    const QualType t = d->getParam()->getType().getCanonicalType().getUnqualifiedType();
    const Expr* e = d->getExpr();
    Expr::EvalResult r;
    if (!t->isBuiltinType() || e->isValueDependent() || !e->EvaluateAsRValue(r, ctx) ||
        r.HasSideEffects) {
        return {};
    }
    std::string literal;
    if (r.Val.isInt() && t->isBooleanType()) {
        literal = r.Val.getInt().getBoolValue() ? "true" : "false";
    } else if (r.Val.isInt() && r.Val.getInt().getSignificantBits() <= 64) {
        const llvm::APSInt& v = r.Val.getInt();
        if (v.isSigned() && v.getSignificantBits() > 63) {
            return {}; // the most negative value has no literal
        }
        literal = llvm::toString(static_cast<const llvm::APInt&>(v), 10, v.isSigned()) +
                  (v.isSigned() ? "LL" : "ULL");
    } else if (r.Val.isFloat() && r.Val.getFloat().isFinite() &&
               (&r.Val.getFloat().getSemantics() == &llvm::APFloat::IEEEsingle() ||
                &r.Val.getFloat().getSemantics() == &llvm::APFloat::IEEEdouble())) {
        char hex[64];
        r.Val.getFloat().convertToHexString(hex, 0, false, llvm::RoundingMode::NearestTiesToEven);
        literal = hex;
    } else {
        return {};
    }
    return fmt::format("static_cast<{}>({})", typeText(t, ctx), literal);
}

/// The configuration and the arguments of `call`, or false and why.
bool readConfigAndArgs(const Source& src, const ASTContext& ctx, const CUDAKernelCallExpr* call,
                       LaunchSpelling& out, std::string* why) {
    std::string(&conf)[4] = out.conf;
    std::vector<std::string>& args = out.args;
    const CallExpr* cfg = call->getConfig();
    if (cfg == nullptr) {
        *why = "no launch configuration";
        return false;
    }
    for (unsigned i = 0; i < 4 && i < cfg->getNumArgs(); ++i) {
        const Expr* a = cfg->getArg(i);
        if (isa<CXXDefaultArgExpr>(a)) {
            continue;
        }
        auto r = src.range(a->getSourceRange());
        if (!r) {
            *why = "a configuration value is spelled in a macro";
            return false;
        }
        conf[i] = src.slice(*r);
    }
    if (conf[0].empty() || conf[1].empty()) {
        *why = "no grid or block size";
        return false;
    }
    for (unsigned i = 0; i < call->getNumArgs(); ++i) {
        const Expr* a = call->getArg(i);
        if (const auto* d = dyn_cast<CXXDefaultArgExpr>(a)) {
            // Defaulted trailing arguments: K::launch has the defaults; MEMPLACE_LAUNCH gets
            // their values when they are constants.
            for (unsigned k = i; k < call->getNumArgs(); ++k) {
                d = dyn_cast<CXXDefaultArgExpr>(call->getArg(k));
                std::string v = d != nullptr ? constantDefault(ctx, d) : std::string();
                if (v.empty()) {
                    out.defaults.clear();
                    break;
                }
                out.defaults.push_back(v);
            }
            break;
        }
        if (isa<InitListExpr>(a->IgnoreImplicit())) {
            *why = "a braced argument cannot be forwarded";
            return false;
        }
        auto r = src.range(a->getSourceRange());
        if (!r) {
            *why = "an argument is spelled in a macro";
            return false;
        }
        args.push_back(src.slice(*r));
    }
    return true;
}

/// The function whose body holds `s`.
const FunctionDecl* enclosingFunction(ASTContext& ctx, const Stmt* s) {
    DynTypedNodeList parents = ctx.getParents(*s);
    while (!parents.empty()) {
        if (const auto* fd = parents[0].get<FunctionDecl>()) {
            return fd;
        }
        parents = ctx.getParents(parents[0]);
    }
    return nullptr;
}

bool sameArgument(const ASTContext& ctx, const TemplateArgument& a, const TemplateArgument& b) {
    if (a.getKind() == TemplateArgument::Type && b.getKind() == TemplateArgument::Type) {
        return ctx.hasSameType(a.getAsType(), b.getAsType());
    }
    if (a.getKind() == TemplateArgument::Integral && b.getKind() == TemplateArgument::Integral) {
        return llvm::APSInt::isSameValue(a.getAsIntegral(), b.getAsIntegral()) &&
               ctx.hasSameType(a.getIntegralType(), b.getIntegralType());
    }
    return false;
}

/// The kernel's deduced template arguments at a launch in a host function template, spelled
/// with the host template's parameters (`k<<<g, b>>>(d)` in `template <class T> void f(T* d)`
/// becomes `k<T>`): each of the kernel's arguments must be one host parameter's argument in
/// every instantiation of the host template, so that the spelled name is, in each of them, the
/// kernel that deduction chose. Empty and `why` when some argument cannot be spelled so.
std::string spellDeducedArgs(ASTContext& ctx, const detail::LaunchFact& lf,
                             const std::vector<std::string>& explicitArgs, std::string* why) {
    const FunctionDecl* host = enclosingFunction(ctx, lf.dependent);
    const FunctionTemplateDecl* hostTemplate =
        host != nullptr ? host->getDescribedFunctionTemplate() : nullptr;
    if (hostTemplate == nullptr || host->getDeclContext()->isDependentContext() ||
        lf.resolved.empty()) {
        *why = "the kernel's template arguments are deduced in a host template that is not a "
               "function template at namespace scope, or is never instantiated";
        return {};
    }
    const TemplateParameterList& hostParams = *hostTemplate->getTemplateParameters();
    std::vector<std::string> spelled = explicitArgs;
    const TemplateArgumentList* first = lf.resolved[0].second->getTemplateSpecializationArgs();
    for (unsigned j = static_cast<unsigned>(explicitArgs.size()); j < first->size(); ++j) {
        std::string name;
        for (unsigned i = 0; i < hostParams.size() && name.empty(); ++i) {
            const NamedDecl* tp = hostParams.getParam(i);
            if (tp->isParameterPack() || tp->getName().empty()) {
                continue;
            }
            bool everywhere = true;
            for (const auto& [call, kernel] : lf.resolved) {
                const FunctionDecl* inst = enclosingFunction(ctx, call);
                const TemplateArgumentList* hostArgs =
                    inst != nullptr && inst->getPrimaryTemplate() == hostTemplate
                        ? inst->getTemplateSpecializationArgs()
                        : nullptr;
                const TemplateArgumentList* kernelArgs = kernel->getTemplateSpecializationArgs();
                everywhere = everywhere && hostArgs != nullptr && i < hostArgs->size() &&
                             kernelArgs != nullptr && j < kernelArgs->size() &&
                             sameArgument(ctx, hostArgs->get(i), kernelArgs->get(j));
            }
            if (everywhere) {
                name = tp->getNameAsString();
            }
        }
        if (name.empty()) {
            *why = fmt::format("the kernel's template argument {} is deduced in a host template "
                               "and is not one of the host template's parameters in every "
                               "instantiation",
                               j + 1);
            return {};
        }
        spelled.push_back(name);
    }
    std::string out = "<";
    for (size_t j = 0; j < spelled.size(); ++j) {
        out += (j == 0 ? "" : ", ") + spelled[j];
    }
    return out + ">";
}

/// The kernel as `call` names it, with its template arguments written out, or false and why. A
/// kernel to be rewritten (`rewritten`) must be named with its template arguments.
bool readKernelName(const Source& src, ASTContext& ctx, const detail::LaunchFact& lf,
                    const CUDAKernelCallExpr* call, bool rewritten, LaunchSpelling& out,
                    std::string* why) {
    std::string& qualifier = out.qualifier;
    std::string& name = out.name;
    std::string& targs = out.targs;
    // The kernel as the launch names it, with its template arguments written out.
    const Expr* calleeExpr = call->getCallee()->IgnoreParenImpCasts();
    if (const auto* dre = dyn_cast<DeclRefExpr>(calleeExpr)) {
        auto whole2 = src.range(dre->getSourceRange());
        auto nameR = src.range(
            SourceRange(dre->getNameInfo().getBeginLoc(), dre->getNameInfo().getEndLoc()));
        if (!whole2 || !nameR) {
            *why = "the kernel's name is spelled in a macro";
            return false;
        }
        qualifier = src.slice(whole2->first, nameR->first);
        name = src.slice(*nameR);
        const auto* fd = dyn_cast<FunctionDecl>(dre->getDecl());
        const TemplateArgumentList* deduced =
            fd != nullptr ? fd->getTemplateSpecializationArgs() : nullptr;
        // `k<256><<<...>>>(p)` with k's other arguments deduced: all of them are written out.
        const bool partlyExplicit = dre->hasExplicitTemplateArgs() && deduced != nullptr &&
                                    dre->getNumTemplateArgs() < deduced->size();
        std::vector<std::string> explicitArgs;
        if (dre->hasExplicitTemplateArgs()) {
            auto t = src.range(SourceRange(dre->getLAngleLoc(), dre->getRAngleLoc()));
            if (!t) {
                *why = "its template arguments are spelled in a macro";
                return false;
            }
            targs = src.slice(*t);
            for (const TemplateArgumentLoc& a : dre->template_arguments()) {
                auto r = src.range(a.getSourceRange());
                if (!r) {
                    *why = "its template arguments are spelled in a macro";
                    return false;
                }
                explicitArgs.push_back(src.slice(*r));
            }
        }
        if (deduced != nullptr && (!dre->hasExplicitTemplateArgs() || partlyExplicit)) {
            // Deduced: write the arguments out; in a host template, with its parameters.
            if (lf.dependent != nullptr) {
                targs = spellDeducedArgs(ctx, lf, explicitArgs, why);
                return !targs.empty();
            }
            std::string printed;
            llvm::raw_string_ostream os(printed);
            os << "<";
            for (size_t j = 0; j < deduced->size(); ++j) {
                os << (j == 0 ? "" : ", ");
                if (j < explicitArgs.size()) {
                    os << explicitArgs[j];
                } else {
                    deduced->get(j).print(policyFor(ctx), os, true);
                }
            }
            os << ">";
            targs = os.str();
        }
    } else if (const auto* ule = dyn_cast<UnresolvedLookupExpr>(calleeExpr)) {
        auto whole2 = src.range(ule->getSourceRange());
        if (!whole2 || (rewritten && !ule->hasExplicitTemplateArgs())) {
            *why = "the kernel cannot be named with its template arguments";
            return false;
        }
        auto nameR = src.range(SourceRange(ule->getNameLoc(), ule->getNameLoc()));
        if (!nameR) {
            *why = "the kernel's name is spelled in a macro";
            return false;
        }
        qualifier = src.slice(whole2->first, nameR->first);
        name = src.slice(*nameR);
        targs = src.slice(nameR->second, whole2->second);
    } else {
        if (rewritten) {
            *why = "the kernel is not called by name";
            return false;
        }
        auto r = src.range(calleeExpr->getSourceRange());
        if (!r) {
            *why = "the kernel is spelled in a macro";
            return false;
        }
        name = src.slice(*r);
    }
    return true;
}

/// The runtime's array arguments must be pointers (or nullptr): a single instantiation's
/// argument of another type is cast to the parameter's type; else false and why.
bool castArrayArgs(const ASTContext& ctx, const detail::LaunchFact& lf, const KernelPlan* g,
                   std::vector<std::string>& args, std::string* why) {
    for (const ArrayPlan* ap : g->accessorArrays()) {
        if (ap->param >= args.size()) {
            *why = fmt::format("the argument for '{}' is defaulted", ap->name);
            return false;
        }
        for (const auto& [c, k] : lf.resolved) {
            QualType t = c->getArg(ap->param)->IgnoreImpCasts()->getType();
            if (!t->isPointerType() && !t->isArrayType() && !t->isNullPtrType()) {
                if (lf.dependent != nullptr || lf.resolved.size() > 1) {
                    *why = fmt::format("the argument for '{}' is not a pointer", ap->name);
                    return false;
                }
                args[ap->param] = fmt::format("static_cast<{}>({})",
                                              typeText(k->getParamDecl(ap->param)->getType(), ctx),
                                              args[ap->param]);
            }
        }
    }
    return true;
}

} // namespace

std::optional<std::string> Planner::launchText(const detail::LaunchFact& lf, const KernelPlan* g,
                                               std::string* why, unsigned* b, unsigned* e) {
    const CUDAKernelCallExpr* call =
        !lf.resolved.empty() ? lf.resolved[0].first : (lf.dependent ? lf.dependent : lf.calls[0]);
    auto whole = src_.range(call->getSourceRange());
    if (!whole) {
        *why = "it is spelled in a macro";
        return std::nullopt;
    }
    *b = whole->first;
    *e = whole->second;
    // A launch inside a kernel (dynamic parallelism) is not rewritten.
    for (const KernelPlan& og : plan_.kernels) {
        auto body = src_.range(a_.kernels()[og.kernels[0]].body);
        if (body && *b >= body->first && *b < body->second) {
            *why = "it is inside a kernel";
            return std::nullopt;
        }
    }
    LaunchSpelling sp;
    if (!readConfigAndArgs(src_, ctx_, call, sp, why) ||
        !readKernelName(src_, ctx_, lf, call, g != nullptr, sp, why)) {
        return std::nullopt;
    }
    const std::string(&conf)[4] = sp.conf;
    std::vector<std::string>& args = sp.args;
    const std::string& qualifier = sp.qualifier;
    const std::string& name = sp.name;
    const std::string& targs = sp.targs;
    if (g == nullptr) {
        std::vector<std::string> items{macroArg(qualifier + name + targs)};
        for (const auto& c : conf) {
            items.push_back(macroArg(c));
        }
        for (const auto& a : args) {
            items.push_back(macroArg(a));
        }
        // The same values in every instantiation of the launch: not in a host template.
        if (lf.dependent == nullptr && lf.resolved.size() <= 1) {
            items.insert(items.end(), sp.defaults.begin(), sp.defaults.end());
        }
        unsigned ls = 0;
        const bool alone = src_.onlyBlanksBefore(*b, &ls);
        return wrapList("MEMPLACE_LAUNCH(", items, ")", src_.indentOf(*b) + "    ",
                        alone ? *b - ls : 0);
    }
    if (!castArrayArgs(ctx_, lf, g, args, why)) {
        return std::nullopt;
    }
    std::vector<std::string> items(conf, conf + 4);
    items.insert(items.end(), args.begin(), args.end());
    unsigned ls = 0;
    const bool alone = src_.onlyBlanksBefore(*b, &ls);
    return wrapList("memplace::launch<" + qualifier + g->descName + targs + ">(", items, ")",
                    src_.indentOf(*b) + "    ", alone ? *b - ls : 0);
}

void Planner::planLaunches() {
    for (const auto& [off, lf] : plan_.facts.launches) {
        LaunchPlan lp;
        lp.fact = &lf;
        KernelPlan* g = nullptr;
        for (const auto& [call, kernel] : lf.resolved) {
            if (KernelPlan* kg = plan_.kernelOf(kernel); kg != nullptr && kg->ok) {
                g = kg;
            }
        }
        std::string why;
        auto text = launchText(lf, g, &why, &lp.begin, &lp.end);
        if (text) {
            lp.text = *text;
            lp.kind = g != nullptr ? LaunchPlan::Kind::Runtime : LaunchPlan::Kind::Macro;
            lp.kernel = g;
            if (g != nullptr) {
                ++g->launches;
            }
        } else {
            lp.kind = LaunchPlan::Kind::Untouched;
            lp.why = why;
        }
        plan_.launches.push_back(std::move(lp));
    }
}

void Planner::planExternShared() {
    for (const VarDecl* vd : plan_.facts.externShared) {
        SharedPlan sp;
        sp.var = vd;
        std::string& why = sp.why;
        SourceLocation begin = vd->getBeginLoc();
        for (const Attr* at : vd->attrs()) {
            SourceLocation l = src_.sm().getExpansionLoc(at->getLocation());
            if (l.isValid() && src_.sm().isBeforeInTranslationUnit(l, begin)) {
                begin = l;
            }
            if (const auto* al = dyn_cast<AlignedAttr>(at);
                al != nullptr && !al->isAlignmentDependent() && al->getAlignment(ctx_) / 8 > 16) {
                why = "it asks for an alignment above 16 bytes";
            }
        }
        auto r = src_.range(SourceRange(begin, vd->getEndLoc()));
        std::string elem = typeText(ctx_.getAsArrayType(vd->getType())->getElementType(), ctx_);
        std::string name = vd->getNameAsString();
        if (why.empty() && !r) {
            why = "it is spelled in a macro";
        }
        if (why.empty()) {
            std::string t = src_.slice(*r);
            if (!matches(t, "[^;=,]*\\[\\s*\\]") || t.find(name) == std::string::npos ||
                t.find("extern") == std::string::npos ||
                t.find("__shared__") == std::string::npos) {
                why = "its declaration is not written `extern __shared__ T name[]`";
            } else if (!matches(src_.text().substr(r->second, 1), "\\s|;")) {
                why = "it declares several names";
            } else if (macroArg(elem) != elem) {
                why = "its element type has a comma";
            }
            size_t semi = src_.text().find_first_not_of(" \t", r->second);
            if (why.empty() && (semi == std::string::npos || src_.text()[semi] != ';')) {
                why = "it declares several names";
            }
        }
        if (why.empty()) {
            sp.begin = r->first;
            sp.end = r->second;
            sp.text = fmt::format("MEMPLACE_DYNAMIC_SHARED({}, {})", elem, name);
        }
        plan_.externShared.push_back(std::move(sp));
    }
}

} // namespace memplace::rewrite::detail

// Planning helpers and settling the plan (planner.h): the __device__ functions handed an array,
// the fixpoint in which refusals propagate between kernels, helpers and launches, and the
// planner's phases in order.
#include "rewrite/planner.h"

#include <clang/AST/Attr.h>
#include <clang/AST/DeclTemplate.h>
#include <fmt/format.h>

namespace memplace::rewrite::detail {

using namespace clang;
using clang::SourceLocation; // memplace::SourceLocation is written in full

// ---- helpers: __device__ functions handed an array -----------------------------------------

void Planner::planHelpers() {
    for (const CallExpr* call : plan_.facts.calls) {
        const FunctionDecl* callee = detail::patternOf(call->getDirectCallee());
        if (callee == nullptr || callee->hasAttr<CUDAGlobalAttr>()) {
            continue;
        }
        unsigned shift = isa<CXXOperatorCallExpr>(call) && isa<CXXMethodDecl>(callee) ? 1 : 0;
        for (unsigned i = shift; i < call->getNumArgs(); ++i) {
            unsigned pi = i - shift;
            if (pi >= callee->getNumParams()) {
                break;
            }
            const ParmVarDecl* pv = callee->getParamDecl(pi);
            if (!pv->getType()->isPointerType() && !pv->getType()->isDependentType()) {
                continue;
            }
            const auto* dre = dyn_cast<DeclRefExpr>(call->getArg(i)->IgnoreParenImpCasts());
            Edge e;
            e.to = ParamKey{callee, pi};
            e.at = call->getArg(i)->getBeginLoc();
            if (dre != nullptr) {
                e.from = detail::pointerParamOf(dre);
            }
            plan_.edges.push_back(e);
        }
    }
    // Candidates: helper parameters some call hands a kernel array or another helper's pointer
    // parameter.
    for (const Edge& e : plan_.edges) {
        if (e.from) {
            plan_.helpers.try_emplace(
                e.to,
                HelperParam{
                    .key = e.to, .active = true, .reason = {}, .reasonAt = {}, .written = false});
        }
    }
    for (auto& [key, h] : plan_.helpers) {
        refuseHelper(key, h);
    }
}

/// What keeps a helper's parameter a pointer: how the helper is declared, the parameter's text,
/// and its sites.
void Planner::refuseHelper(const ParamKey& key, HelperParam& h) {
    const FunctionDecl* fn = key.fn;
    auto refuse = [&](std::string why, SourceLocation at) {
        if (h.active) {
            h.active = false;
            h.reason = std::move(why);
            h.reasonAt = at;
        }
    };
    // A member function becomes a member template (of a class or class template at namespace
    // or class scope); one that cannot be a template, or is not called as written, is refused.
    if (const auto* md = dyn_cast<CXXMethodDecl>(fn)) {
        if (md->isVirtual()) {
            refuse("a virtual member function (it cannot be a template)", fn->getLocation());
        } else if (isa<CXXConstructorDecl>(md) || isa<CXXDestructorDecl>(md) ||
                   isa<CXXConversionDecl>(md) || md->isOverloadedOperator()) {
            refuse("a constructor, destructor, conversion or operator", fn->getLocation());
        } else if (md->getParent()->isLocalClass() != nullptr) {
            refuse("a member function of a local class (it cannot have a member template)",
                   fn->getLocation());
        }
    }
    if (fn->isExternC() && detail::cLinkageOf(fn) != detail::CLinkage::Block) {
        refuse("it has C linkage", fn->getLocation());
    }
    if (detail::cLinkageOf(fn) == detail::CLinkage::Block && fn->getStorageClass() == SC_Static) {
        refuse("it is declared static in an extern \"C\" block", fn->getLocation());
    }
    if (!fn->hasAttr<CUDADeviceAttr>()) {
        refuse("not a __device__ function", fn->getLocation());
    }
    const FunctionTemplateDecl* ft = fn->getDescribedFunctionTemplate();
    const Decl* first = ft != nullptr ? static_cast<const Decl*>(ft) : fn;
    for (const Decl* d : first->redecls()) {
        if (d != first) {
            refuse(fmt::format("also declared at {}", src_.lineCol(d->getLocation())),
                   d->getLocation());
        }
    }
    if (ft != nullptr) {
        for (const NamedDecl* tp : *ft->getTemplateParameters()) {
            if (tp->isParameterPack()) {
                refuse("its template has a parameter pack", tp->getLocation());
            }
        }
        if (!src_.offset(ft->getTemplateParameters()->getRAngleLoc())) {
            refuse("its template parameter list is spelled in a macro", fn->getLocation());
        }
    } else if (!src_.offset(src_.sm().getExpansionLoc(fn->getBeginLoc()))) {
        refuse("its declaration is not written in the main file", fn->getLocation());
    }
    const ParmVarDecl* pv = fn->getParamDecl(key.index);
    if (!src_.range(pv->getSourceRange())) {
        refuse("its parameter is spelled in a macro", pv->getLocation());
    }
    if (pv->hasDefaultArg()) {
        refuse("its parameter has a default argument", pv->getLocation());
    }
    for (const auto& up : plan_.sites) {
        if (up->key && *up->key == key && !up->failure.empty()) {
            refuse(
                fmt::format("site {} at {}: {}", up->id, src_.lineCol(up->failureAt), up->failure),
                up->failureAt);
        }
    }
}

/// Refusals feed each other (a helper parameter left a pointer leaves its callers' arrays raw,
/// ...): rounds until nothing changes.
void Planner::fixpoint() {
    for (int round = 0; round < 100; ++round) {
        bool changed = refuseUnservedHelpers();
        changed = refuseUnservedUses() || changed;
        changed = refuseUnrewritableLaunches() || changed;
        changed = refuseKernelsWithoutAccessors() || changed;
        if (!changed) {
            return;
        }
    }
}

/// Helper parameters: every call hands an accessor.
bool Planner::refuseUnservedHelpers() {
    bool changed = false;
    for (auto& [key, h] : plan_.helpers) {
        if (!h.active) {
            continue;
        }
        for (const Edge& e : plan_.edges) {
            if (e.to == key && (!e.from || !plan_.active(*e.from))) {
                h.active = false;
                h.reason = fmt::format("it is also handed a pointer that is not a placeable "
                                       "array at {}",
                                       src_.lineCol(e.at));
                h.reasonAt = e.at;
                changed = true;
                break;
            }
        }
    }
    return changed;
}

/// Every use of an accessor's pointer is a site, an alias or a pass to a helper that takes an
/// accessor; the parameter (helper or kernel) of any other use stays a pointer.
bool Planner::refuseUnservedUses() {
    bool changed = false;
    for (const Use& u : plan_.uses) {
        bool ok = u.kind == UseKind::SiteBase || u.kind == UseKind::AliasInit ||
                  (u.kind == UseKind::HelperArg && plan_.active(u.helper));
        if (ok) {
            continue;
        }
        if (auto it = plan_.helpers.find(u.key); it != plan_.helpers.end() && it->second.active) {
            it->second.active = false;
            it->second.reason =
                u.kind == UseKind::HelperArg
                    ? fmt::format("it is passed on at {} to a parameter that stays a pointer",
                                  src_.lineCol(u.dre->getBeginLoc()))
                    : fmt::format("its pointer is used other than in an access at {}",
                                  src_.lineCol(u.dre->getBeginLoc()));
            it->second.reasonAt = u.dre->getBeginLoc();
            changed = true;
        }
        if (KernelPlan* g = plan_.kernelOf(u.key.fn); g != nullptr && g->ok) {
            for (auto& ap : g->arrays) {
                if (ap.param == u.key.index && ap.accessor) {
                    ap.accessor = false;
                    ap.reason =
                        u.kind == UseKind::HelperArg
                            ? fmt::format("passed at {} to a helper parameter that stays a "
                                          "pointer ({})",
                                          src_.lineCol(u.dre->getBeginLoc()),
                                          plan_.helpers.count(u.helper) != 0
                                              ? plan_.helpers[u.helper].reason
                                              : "not a __device__ function with a body")
                            : fmt::format("its pointer is used other than in an access at {}",
                                          src_.lineCol(u.dre->getBeginLoc()));
                    ap.reasonAt = u.dre->getBeginLoc();
                    changed = true;
                }
            }
        }
    }
    return changed;
}

/// Launches that cannot be rewritten keep their kernel as written.
bool Planner::refuseUnrewritableLaunches() {
    bool changed = false;
    for (const auto& [off, lf] : plan_.facts.launches) {
        std::set<KernelPlan*> gs;
        for (const auto& [call, kernel] : lf.resolved) {
            if (KernelPlan* g = plan_.kernelOf(kernel)) {
                gs.insert(g);
            }
        }
        for (KernelPlan* g : gs) {
            if (!g->ok) {
                continue;
            }
            std::string why;
            unsigned b = 0;
            unsigned e = 0;
            if (gs.size() > 1) {
                why = "the launch resolves to several kernels";
            } else if (!launchText(lf, g, &why, &b, &e)) {
                // why set
            } else {
                continue;
            }
            g->refuse(fmt::format("its launch at {} cannot be rewritten: {}",
                                  src_.lineCol(lf.calls[0]->getBeginLoc()), why),
                      lf.calls[0]->getBeginLoc());
            changed = true;
        }
    }
    return changed;
}

/// A kernel with no accessor array left is left as written.
bool Planner::refuseKernelsWithoutAccessors() {
    bool changed = false;
    for (KernelPlan& g : plan_.kernels) {
        if (g.ok && g.accessorArrays().empty()) {
            g.refuse("no array of it can be placed elsewhere than global memory",
                     g.pattern->getLocation());
            changed = true;
        }
    }
    return changed;
}

/// Helper parameters carry proxies when any array handed to them is written.
void Planner::propagateWritten() {
    for (int round = 0; round < 100; ++round) {
        bool changed = false;
        for (const Edge& e : plan_.edges) {
            auto it = plan_.helpers.find(e.to);
            if (it == plan_.helpers.end() || !it->second.active || it->second.written || !e.from) {
                continue;
            }
            bool w = false;
            if (auto h = plan_.helpers.find(*e.from); h != plan_.helpers.end()) {
                w = h->second.written;
            } else if (KernelPlan* g = plan_.kernelOf(e.from->fn)) {
                for (const auto& ap : g->arrays) {
                    w = w || (ap.param == e.from->index && ap.accessor && ap.written());
                }
            }
            if (w) {
                it->second.written = true;
                changed = true;
            }
        }
        if (!changed) {
            break;
        }
    }
}

void Planner::run() {
    plan_.facts = detail::collectFacts(ctx_, [&](FileID f) { return a_.isProgramFile(f); });
    buildKernelPlans();
    collectSites();
    checkSites();
    for (KernelPlan& g : plan_.kernels) {
        planArrays(g);
        if (!g.ok) {
            for (auto& ap : g.arrays) {
                ap.accessor = false;
            }
        }
    }
    planHelpers();
    classifyUses();
    fixpoint();
    for (KernelPlan& g : plan_.kernels) {
        if (!g.ok) {
            for (auto& ap : g.arrays) {
                ap.accessor = false;
            }
        } else {
            finishArrays(g);
        }
    }
    propagateWritten();
    planLaunches();
    addExtraCompiled();
    planExternShared();
    for (KernelPlan& g : plan_.kernels) {
        if (g.ok) {
            placeDescriptor(g);
        }
    }
}

RewritePlan planRewrite(const RewriteOptions& options, const frontend::Analysis& analysis) {
    RewritePlan plan(analysis);
    Planner(options, analysis, plan).run();
    return plan;
}

} // namespace memplace::rewrite::detail

// The planner (internal to plan_*.cpp): fills a RewritePlan phase by phase. Kernels and their
// arrays (plan_kernels.cpp), access sites, aliases and rebases (plan_sites.cpp), helpers and
// the fixpoint that settles what stays a pointer (plan_helpers.cpp), launches and `extern
// __shared__` (plan_launches.cpp).
#pragma once

#include "rewrite/plan.h"

namespace memplace::rewrite::detail {

class Planner {
public:
    Planner(const RewriteOptions& o, const frontend::Analysis& a, RewritePlan& plan)
        : opt_(o), a_(a), ctx_(a.context()), plan_(plan), src_(plan.source) {}

    /// Every phase, in order.
    void run();

private:
    // kernels (plan_kernels.cpp)
    void buildKernelPlans();
    void refuseUnrewritable(KernelPlan& g);
    void planPrototypes(KernelPlan& g);
    void planArrays(KernelPlan& g);
    std::optional<ArrayPlan> planArray(KernelPlan& g, unsigned i, std::set<std::string>& taken);
    bool mergeInstantiations(const KernelPlan& g, ArrayPlan& ap);
    void attachSites(KernelPlan& g);
    void finishArrays(KernelPlan& g);
    void dropUnsafeShared(const KernelPlan& g, ArrayPlan& ap);
    void chooseLikely(const KernelPlan& g, ArrayPlan& ap);
    void addExtraCompiled();
    void placeDescriptor(KernelPlan& g);
    // sites (plan_sites.cpp)
    void collectSites();
    void checkSites();
    void classifyUses();
    // helpers (plan_helpers.cpp)
    void planHelpers();
    void refuseHelper(const ParamKey& key, HelperParam& h);
    void fixpoint();
    bool refuseUnservedHelpers();
    bool refuseUnservedUses();
    bool refuseUnrewritableLaunches();
    bool refuseKernelsWithoutAccessors();
    void propagateWritten();
    // launches (plan_launches.cpp)
    /// What a launch would become if its kernel is rewritten (or not): text, or why not.
    std::optional<std::string> launchText(const detail::LaunchFact& lf, const KernelPlan* g,
                                          std::string* why, unsigned* b, unsigned* e);
    void planLaunches();
    void planExternShared();

    void warn(clang::SourceLocation at, const std::string& msg) {
        warnAt(plan_.warnings, src_, at, msg);
    }

    const RewriteOptions& opt_;
    const frontend::Analysis& a_;
    clang::ASTContext& ctx_;
    RewritePlan& plan_;
    const Source& src_;
};

} // namespace memplace::rewrite::detail

// The emitter (internal to emit_*.cpp and rewrite.cpp): turns a RewritePlan into edits of the
// program's text (edit_list.h) and the result's reports. Kernels, helpers and sites
// (emit_kernel.cpp), launches and `extern __shared__` (emit_launch.cpp), descriptors and their
// just-in-time source (emit_descriptor.cpp), the preamble, the outputs and the reports
// (rewrite.cpp). Emitting makes no decision the plan has not made; its warnings are the plan's
// reasons for what stays as written.
#pragma once

#include "rewrite/edit_list.h"
#include "rewrite/plan.h"

#include <map>
#include <string>
#include <vector>

namespace memplace::rewrite::detail {

/// A kernel's just-in-time instantiation (docs/rewrite-contract.md): its device-only source for
/// NVRTC, name and element types as name expressions spell them, the `__constant__` variables it
/// reads; or, when `source` is empty, why it has none.
struct JitModule {
    std::string source;
    std::string kernel;
    std::vector<std::string> types;
    std::vector<std::string> constants;
    std::string reason;
};

class Emitter {
public:
    Emitter(const RewriteOptions& o, const frontend::Analysis& a, const RewritePlan& plan)
        : opt_(o), a_(a), ctx_(a.context()), plan_(plan), src_(plan.source) {}

    /// The edits, the outputs and the reports; fails only on an internal error of the edits.
    Expected<RewriteResult> run();

private:
    // kernels (emit_kernel.cpp)
    void emitKernel(const KernelPlan& g, EditList& edits);
    void emitSignature(const KernelPlan& g, EditList& edits);
    void insertTemplateParams(const clang::FunctionTemplateDecl* templ, unsigned begin,
                              const std::string& prefix, const std::vector<std::string>& tparams,
                              EditList& edits);
    void emitPrototypes(const KernelPlan& g, const std::vector<std::string>& tparams,
                        EditList& edits);
    void emitBody(const KernelPlan& g, EditList& edits);
    void emitCacheHints(const KernelPlan& g, EditList& edits);
    void emitViews(const KernelPlan& g, EditList& edits);
    void emitHelper(const clang::FunctionDecl* fn, const std::vector<unsigned>& params,
                    EditList& edits);
    void emitSite(const SiteRec& s, bool written, EditList& edits);
    void emitProxyValue(const SiteRec& s, bool written, const SiteRanges& r, EditList& edits);
    // launches (emit_launch.cpp)
    void emitLaunches(EditList& edits);
    void emitExternShared(EditList& edits);
    // descriptors (emit_descriptor.cpp)
    JitModule jitModuleOf(const KernelPlan& g, const EditList& edits) const;
    void emitDescriptors(EditList& edits);
    std::string descriptor(const KernelPlan& g, const std::string& indent) const;
    std::string descriptorArrays(const KernelPlan& g, const std::string& indent) const;
    std::string descriptorLaunch(const KernelPlan& g, const std::string& indent) const;
    // the file (rewrite.cpp)
    std::string preamble() const;
    std::string splitOutputs(const EditList& edits);
    void noteDeclarationsIn(const Source::File& f, IncludedOutput& io) const;
    void report(const KernelPlan& g);

    void warn(clang::SourceLocation at, const std::string& msg) {
        warnAt(result_.warnings, src_, at, msg);
    }

    const RewriteOptions& opt_;
    const frontend::Analysis& a_;
    clang::ASTContext& ctx_;
    const RewritePlan& plan_;
    const Source& src_;
    std::map<const KernelPlan*, JitModule> jit_; ///< for the rewritten kernels
    RewriteResult result_;
};

} // namespace memplace::rewrite::detail

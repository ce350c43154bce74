// Emitting launches and `extern __shared__` declarations (emitter.h): the planned replacement,
// or a warning saying why the construct stays as written.
#include "rewrite/emitter.h"

#include <fmt/format.h>

namespace memplace::rewrite::detail {

using namespace clang;
using clang::SourceLocation; // memplace::SourceLocation is written in full

void Emitter::emitLaunches(EditList& edits) {
    for (const LaunchPlan& lp : plan_.launches) {
        const CUDAKernelCallExpr* call = lp.fact->calls[0];
        switch (lp.kind) {
        case LaunchPlan::Kind::Runtime:
            ++result_.runtimeLaunches;
            edits.replace(lp.begin, lp.end, lp.text);
            break;
        case LaunchPlan::Kind::Macro:
            ++result_.macroLaunches;
            edits.replace(lp.begin, lp.end, lp.text);
            break;
        case LaunchPlan::Kind::Untouched:
            ++result_.untouchedLaunches;
            warn(call->getBeginLoc(),
                 fmt::format("launch left as <<<...>>> ({}): it builds with nvcc, not under the "
                             "CPU emulation layer",
                             lp.why));
            break;
        }
    }
}

void Emitter::emitExternShared(EditList& edits) {
    for (const SharedPlan& sp : plan_.externShared) {
        if (!sp.why.empty()) {
            warn(sp.var->getLocation(),
                 fmt::format("'extern __shared__ {}' left as written ({}): it builds with nvcc, "
                             "not under the CPU emulation layer",
                             sp.var->getNameAsString(), sp.why));
            continue;
        }
        ++result_.dynamicShared;
        edits.replace(sp.begin, sp.end, sp.text);
    }
}

} // namespace memplace::rewrite::detail

// Calls in kernel code: atomics and load/store intrinsics, texture fetches, helpers whose body is
// walked with their parameters bound to the caller's arrays and values, and opaque calls (what
// they are given escapes).
#include "frontend/kernel_walker.h"

#include <fmt/format.h>

#include <algorithm>

namespace memplace::frontend::detail {

void KernelWalker::handleCall(const CallExpr* call, Use use) {
    std::string name = calleeName(call);
    const FunctionDecl* fd = call->getDirectCallee();
    if (isa<CUDAKernelCallExpr>(call)) {
        opaqueCall(call, fd, "a kernel launched from the device");
        return;
    }
    if (handleIntrinsic(call, name) || handleTextureFetch(call, name)) {
        return;
    }
    if (const auto* oc = dyn_cast<CXXOperatorCallExpr>(call)) {
        // `a[i] = v` on a structure is a call of its (usually implicit) assignment operator.
        const auto* md = dyn_cast_or_null<CXXMethodDecl>(fd);
        if (md != nullptr && oc->getNumArgs() == 2 &&
            (md->isCopyAssignmentOperator() || md->isMoveAssignmentOperator())) {
            walkExpr(oc->getArg(0), Use::Write);
            walkExpr(oc->getArg(1), Use::Read);
            return;
        }
    }
    if (const auto* md = dyn_cast_or_null<CXXMethodDecl>(fd); md && md->getParent()->isLambda()) {
        // A lambda's body is walked where the lambda is written (captures included); here only
        // the arguments are.
        for (const Expr* arg : call->arguments()) {
            walkExpr(arg, Use::Read);
        }
        return;
    }
    const FunctionDecl* def = nullptr;
    if (fd != nullptr && fd->hasBody(def) && def != nullptr && !fd->hasAttr<CUDAGlobalAttr>() &&
        !loc_.inSystemHeader(def->getLocation())) {
        bool recursive = std::any_of(frames_.begin(), frames_.end(),
                                     [&](const Frame& f) { return f.fn == def; });
        if (!recursive && frames_.size() < kMaxCallDepth) {
            (void)use;
            callHelper(call, def);
            return;
        }
        opaqueCall(call, fd, recursive ? "a recursive call" : "a call nested too deeply");
        return;
    }
    opaqueCall(call, fd,
               fd == nullptr                            ? "an indirect call"
               : loc_.inSystemHeader(fd->getLocation()) ? "a library function"
                                                        : "a function whose body is not visible");
}

bool KernelWalker::handleIntrinsic(const CallExpr* call, const std::string& name) {
    bool atomic = isAtomicFunction(name);
    bool load = isLoadIntrinsic(name);
    bool store = isStoreIntrinsic(name);
    if ((!atomic && !load && !store) || call->getNumArgs() == 0) {
        return false;
    }
    auto m = matchPointer(call->getArg(0));
    if (!m) {
        noteAccessThrough(call->getArg(0), !load, call->getBeginLoc(), truncate(text(call)));
        return false;
    }
    AccessMode access = atomic ? AccessMode::Atomic : load ? AccessMode::Read : AccessMode::Write;
    recordPointerSite(call, *m, access, ki::SiteForm::PointerOffset, name, "");
    walkPointerIndices(*m);
    for (unsigned i = 1; i < call->getNumArgs(); ++i) {
        walkExpr(call->getArg(i), Use::Read);
    }
    return true;
}

bool KernelWalker::handleTextureFetch(const CallExpr* call, const std::string& name) {
    if (!isTextureFetch(name) || call->getNumArgs() < 2) {
        return false;
    }
    auto a = arrayOf(call->getArg(0));
    if (!a || raw_.info.arrays[*a].kind != ki::ArrayKind::TextureObject) {
        return false;
    }
    ki::ArrayInfo& arr = raw_.info.arrays[*a];
    QualType rt = call->getType();
    if (arr.elementType.empty() && !rt->isVoidType()) {
        arr.elementType = typeName(rt.getUnqualifiedType(), ctx_);
        arr.elementSize = static_cast<uint64_t>(ctx_.getTypeSizeInChars(rt).getQuantity());
    }
    size_t dims = name.find("3D") != std::string::npos || name == "texCubemap" ? 3
                  : name.find("2D") != std::string::npos                       ? 2
                                                                               : 1;
    dims = std::min<size_t>(dims, call->getNumArgs() - 1);
    if (dims >= 2) {
        arr.dimensionality = std::max(arr.dimensionality, static_cast<int>(dims));
    }
    std::vector<const Expr*> coords;
    for (size_t i = 0; i < dims; ++i) {
        coords.push_back(call->getArg(static_cast<unsigned>(1 + i)));
    }
    std::vector<SymValue> values = evalIndices(coords);
    SymValue flat =
        dims == 1 ? values[0] : SymValue::unknown(fmt::format("{}-D texture coordinates", dims));
    if (dims > 1) {
        for (const auto& v : values) {
            flat = combineValues(flat, v);
        }
    }
    std::string idxText;
    for (const Expr* c : coords) {
        idxText += (idxText.empty() ? "" : ", ") + text(c);
    }
    recordSite(call, *a, AccessMode::Read, ki::SiteForm::TextureFetch, name, "", call->getArg(0),
               coords, dims > 1 ? values : std::vector<SymValue>{}, flat, idxText);
    for (unsigned i = 1; i < call->getNumArgs(); ++i) {
        walkExpr(call->getArg(i), Use::Read);
    }
    return true;
}

void KernelWalker::opaqueCall(const CallExpr* call, const FunctionDecl* fd,
                              const std::string& why) {
    std::string callee = fd != nullptr ? fd->getNameAsString() : truncate(text(call->getCallee()));
    unsigned shift = 0;
    if (const auto* oc = dyn_cast<CXXOperatorCallExpr>(call);
        oc != nullptr && fd != nullptr && isa<CXXMethodDecl>(fd)) {
        shift = 1;
    }
    if (const auto* mc = dyn_cast<CXXMemberCallExpr>(call)) {
        const CXXMethodDecl* md = mc->getMethodDecl();
        walkExpr(mc->getImplicitObjectArgument(),
                 md != nullptr && md->isConst() ? Use::Read : Use::ReadWrite);
    } else if (!isa<CUDAKernelCallExpr>(call)) {
        walkExpr(call->getCallee(), Use::Read);
    }
    if (const auto* mc = dyn_cast<CXXMemberCallExpr>(call)) {
        noteMethodObject(mc);
    }
    for (unsigned i = 0; i < call->getNumArgs(); ++i) {
        const Expr* arg = call->getArg(i);
        if (fd != nullptr && i >= shift && i - shift < fd->getNumParams()) {
            // What the callee may do through a pointer it is given: read const elements, write
            // others (variadic arguments, printf's, are only printed).
            QualType pt = fd->getParamDecl(i - shift)->getType();
            if (pt->isPointerType() && !pt->getPointeeType()->isFunctionType()) {
                noteAccessThrough(
                    arg, !pt->getPointeeType().isConstQualified(), arg->getBeginLoc(),
                    fmt::format("'{}' passed to '{}', {}", truncate(text(arg)), callee, why));
            }
        }
        if (auto m = matchPointer(arg)) {
            addHazard(ki::HazardKind::Escapes, m->array, arg->getBeginLoc(),
                      fmt::format("'{}' is passed to '{}', {}", truncate(text(arg)), callee, why));
            walkPointerIndices(*m);
            continue;
        }
        bool byRef = false;
        if (fd != nullptr && i >= shift && i - shift < fd->getNumParams()) {
            QualType pt = fd->getParamDecl(i - shift)->getType();
            byRef = pt->isReferenceType() && !pt->getPointeeType().isConstQualified();
        } else if (i == 0 && shift == 1) {
            byRef = !cast<CXXMethodDecl>(fd)->isConst();
        }
        walkExpr(arg, byRef ? Use::ReadWrite : Use::Read);
    }
}

void KernelWalker::callHelper(const CallExpr* call, const FunctionDecl* def) {
    Frame nf;
    nf.fn = def;
    nf.callPath = frame().callPath;
    nf.callPath.push_back({def->getNameAsString(), loc_.location(call->getBeginLoc())});
    nf.defuse = defUseOf(def);
    unsigned shift = 0;
    if (isa<CXXOperatorCallExpr>(call) && isa<CXXMethodDecl>(def)) {
        shift = 1;
        walkExpr(call->getArg(0), cast<CXXMethodDecl>(def)->isConst() ? Use::Read : Use::ReadWrite);
    }
    if (const auto* mc = dyn_cast<CXXMemberCallExpr>(call)) {
        const CXXMethodDecl* md = mc->getMethodDecl();
        walkExpr(mc->getImplicitObjectArgument(),
                 md != nullptr && md->isConst() ? Use::Read : Use::ReadWrite);
        noteMethodObject(mc);
    }
    bool withArrays = false;
    for (unsigned i = shift; i < call->getNumArgs(); ++i) {
        const Expr* arg = call->getArg(i);
        const ParmVarDecl* param =
            i - shift < def->getNumParams() ? def->getParamDecl(i - shift) : nullptr;
        if (param == nullptr) {
            walkExpr(arg, Use::Read); // variadic
            continue;
        }
        QualType pt = param->getType();
        if (isTextureObjectType(pt)) {
            if (auto a = arrayOf(arg);
                a && raw_.info.arrays[*a].kind == ki::ArrayKind::TextureObject) {
                nf.arrayParams[param] = *a;
                continue;
            }
        }
        if (pt->isPointerType()) {
            if (auto m = matchPointer(arg)) {
                if (m->terms.empty() && m->element == nullptr) {
                    nf.arrayParams[param] = m->array;
                    withArrays = true;
                    continue;
                }
                addHazard(ki::HazardKind::PointerArithmetic, m->array, arg->getBeginLoc(),
                          fmt::format("'{}' is passed to '{}'", truncate(text(arg)),
                                      def->getNameAsString()));
                walkPointerIndices(*m);
                targetsOfPointer(arg, nf.pointerTargets[param], 0); // into the array: known
                continue;
            }
            if (!pt->getPointeeType()->isFunctionType()) {
                targetsOfPointer(arg, nf.pointerTargets[param], 0);
            }
        }
        if (pt->isReferenceType()) {
            walkExpr(arg, pt->getPointeeType().isConstQualified() ? Use::Read : Use::ReadWrite);
            if (pt->getPointeeType().isConstQualified() && isIntegral(pt->getPointeeType())) {
                nf.scalarParams[param] = eval(arg);
            }
            continue;
        }
        walkExpr(arg, Use::Read);
        nf.scalarParams[param] =
            isIntegral(pt)
                ? eval(arg)
                : SymValue::unknown(fmt::format("parameter '{}' of '{}' is not an integer",
                                                param->getName().str(), def->getNameAsString()));
    }
    if (withArrays && std::find(raw_.helpersWithArrays.begin(), raw_.helpersWithArrays.end(),
                                def) == raw_.helpersWithArrays.end()) {
        raw_.helpersWithArrays.push_back(def);
    }
    frames_.push_back(std::move(nf));
    walkStmt(def->getBody());
    frames_.pop_back();
}

} // namespace memplace::frontend::detail

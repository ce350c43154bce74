// Planning kernels (planner.h): one plan per kernel as written, what keeps it as written, its
// arrays (mode, places, element type, dimensions; raw pointers with the reason), the statically
// likely places and the placements compiled besides the default.
#include "kernelinfo/feasibility.h"
#include "rewrite/planner.h"

#include <clang/AST/DeclTemplate.h>
#include <fmt/format.h>

#include <algorithm>

namespace memplace::rewrite::detail {

using namespace clang;
using clang::SourceLocation; // memplace::SourceLocation is written in full

KernelPlan* RewritePlan::kernelOf(const FunctionDecl* fn) {
    auto it = kernelByPattern.find(detail::patternOf(fn));
    return it == kernelByPattern.end() ? nullptr : &kernels[it->second];
}

bool RewritePlan::active(const ParamKey& k) const {
    if (auto it = helpers.find(k); it != helpers.end()) {
        return it->second.active;
    }
    auto it = kernelByPattern.find(k.fn);
    if (it == kernelByPattern.end()) {
        return false;
    }
    const KernelPlan& g = kernels[it->second];
    if (!g.ok) {
        return false;
    }
    for (const auto& a : g.arrays) {
        if (a.param == k.index) {
            return a.accessor;
        }
    }
    return false;
}

// ---- groups: one per kernel as written -----------------------------------------------------

bool kernelMatches(const ki::KernelInfo& k, const std::string& want) {
    auto unqualified = [](const std::string& n) {
        size_t p = n.rfind("::", n.find('<'));
        return p == std::string::npos ? n : n.substr(p + 2);
    };
    return k.name == want || k.instantiation == want || unqualified(k.name) == want ||
           unqualified(k.instantiation) == want;
}

void Planner::buildKernelPlans() {
    const auto& kernels = a_.info().kernels;
    for (size_t i = 0; i < kernels.size(); ++i) {
        const frontend::KernelSource& ks = a_.kernels()[i];
        const FunctionDecl* pattern = detail::patternOf(ks.definition);
        auto [it, fresh] = plan_.kernelByPattern.emplace(pattern, plan_.kernels.size());
        if (fresh) {
            KernelPlan g;
            g.pattern = pattern;
            // The definition's template (an instantiation names the first declaration's).
            g.templ = pattern->getDescribedFunctionTemplate() != nullptr
                          ? pattern->getDescribedFunctionTemplate()
                          : ks.templ;
            g.name = kernels[i].name;
            g.selected = opt_.kernel.empty();
            plan_.kernels.push_back(std::move(g));
        }
        KernelPlan& g = plan_.kernels[it->second];
        g.kernels.push_back(i);
        if (!opt_.kernel.empty() && kernelMatches(kernels[i], opt_.kernel)) {
            g.selected = true;
        }
    }
    std::set<std::string> descNames;
    for (KernelPlan& g : plan_.kernels) {
        const FunctionDecl* p = g.pattern;
        if (opt_.launchesOnly) {
            g.refuse("--launches-only", p->getLocation());
        } else if (!g.selected) {
            g.refuse("not the kernel asked for (--kernel)", p->getLocation());
        } else if (detail::cLinkageOf(p) == detail::CLinkage::OnDeclaration) {
            g.refuse("it is declared extern \"C\" on its own (a template cannot have C "
                     "linkage; in an extern \"C\" { } block it would be rewritten)",
                     p->getLocation());
        } else if (detail::cLinkageOf(p) == detail::CLinkage::Block) {
            // Its rewritten form is written `extern "C++"`: a template cannot have C linkage.
            // The instantiations' names are C++ names, as every rewritten kernel's are.
            if (p->getStorageClass() == SC_Static) {
                g.refuse("it is declared static in an extern \"C\" block (`extern \"C++\" "
                         "static` is not valid C++)",
                         p->getLocation());
            }
            g.cxxLinkage = true;
        }
        // One descriptor name per kernel name in its scope (overloads get a suffix).
        std::string base = "memplace_kernel_" + p->getNameAsString();
        // The enclosing namespace or class, past `extern "C" { }` blocks (not named: a
        // kernel defined in one used to crash here).
        const DeclContext* dc = p->getDeclContext()->getRedeclContext();
        const auto* owner =
            dc->isTranslationUnit() ? nullptr : dyn_cast<NamedDecl>(Decl::castFromDeclContext(dc));
        std::string scope = owner != nullptr ? owner->getQualifiedNameAsString() : std::string();
        std::string name = base;
        for (int n = 2; !descNames.insert(scope + "::" + name).second; ++n) {
            name = fmt::format("{}_{}", base, n);
        }
        g.descName = name;
        refuseUnrewritable(g);
    }
}

/// What keeps a kernel as written: where and how it is declared, its template, references to it
/// other than launches; and the union of its instantiations' synchronisation facts.
void Planner::refuseUnrewritable(KernelPlan& g) {
    const FunctionDecl* p = g.pattern;
    const frontend::KernelSource& ks = a_.kernels()[g.kernels[0]];
    if (!src_.range(ks.declaration) || !src_.range(ks.paramList) || !src_.range(ks.body) ||
        !src_.offset(ks.bodyLBrace) || !src_.offset(ks.bodyRBrace)) {
        g.refuse("its definition is not written in the main file, or is spelled in a macro",
                 p->getLocation());
    }
    if (p->isExternC() && detail::cLinkageOf(p) != detail::CLinkage::Block) {
        g.refuse("it has C linkage (extern \"C\"): it cannot become a template", p->getLocation());
    }
    planPrototypes(g);
    if (g.templ != nullptr) {
        for (const NamedDecl* tp : *g.templ->getTemplateParameters()) {
            if (tp->isParameterPack()) {
                g.refuse("its template has a parameter pack", tp->getLocation());
            }
        }
        if (!src_.offset(g.templ->getTemplateParameters()->getRAngleLoc())) {
            g.refuse("its template parameter list is spelled in a macro", p->getLocation());
        }
        for (const FunctionDecl* spec : g.templ->specializations()) {
            if (spec->getTemplateSpecializationKind() == TSK_ExplicitSpecialization) {
                g.refuse("it has explicit specializations", spec->getLocation());
            }
        }
    }
    // Its address, other than for a cache preference, would name a template: a function pointer
    // of the original type, cudaLaunchKernel's raw-pointer arguments and attributes a launch
    // needs do not fit an instantiation over accessors (docs/decisions/033).
    for (const auto& [kernel, at] : plan_.facts.kernelRefs) {
        if (kernel == p) {
            g.refuse(fmt::format("its address is taken at {} (a function pointer, "
                                 "cudaLaunchKernel, cudaFuncSetAttribute, ...), and an "
                                 "instantiation over accessors has another type",
                                 src_.fileLineCol(at)),
                     at);
        }
    }
    for (const auto& [kernel, name] : plan_.facts.kernelCacheHints) {
        if (kernel != p) {
            continue;
        }
        if (g.templ != nullptr || !src_.range(name->getSourceRange())) {
            g.refuse(fmt::format("it is named at {} by a cache preference that memplace cannot "
                                 "point at its default instantiation (a template, or a macro)",
                                 src_.fileLineCol(name->getBeginLoc())),
                     name->getBeginLoc());
        } else {
            g.cacheHints.push_back(name);
        }
    }
    // Union of the synchronisation facts of every analysed instantiation.
    for (size_t k : g.kernels) {
        detail::SyncFacts s = detail::syncFactsOf(ctx_, a_.kernels()[k].decl);
        if (s.barrier && !g.sync.barrier) {
            g.sync.barrier = true;
            g.sync.barrierAt = s.barrierAt;
        }
        if (s.earlyReturn && !g.sync.earlyReturn) {
            g.sync.earlyReturn = true;
            g.sync.returnAt = s.returnAt;
        }
        if (s.interBlock && !g.sync.interBlock) {
            g.sync.interBlock = true;
            g.sync.interBlockWhy = s.interBlockWhy;
        }
    }
}

namespace {
bool hasDefaultArgument(const TemplateParameterList& list) {
    return std::any_of(list.begin(), list.end(), [](const NamedDecl* tp) {
        if (const auto* t = dyn_cast<TemplateTypeParmDecl>(tp)) {
            return t->hasDefaultArgument();
        }
        if (const auto* n = dyn_cast<NonTypeTemplateParmDecl>(tp)) {
            return n->hasDefaultArgument();
        }
        const auto* tt = dyn_cast<TemplateTemplateParmDecl>(tp);
        return tt != nullptr && tt->hasDefaultArgument();
    });
}
} // namespace

/// The kernel's other declarations (prototypes), each rewritten with the definition: the same
/// accessor template parameters and parameter types. One that cannot be edited (in a file
/// memplace does not rewrite, in a macro, in another scope) keeps the kernel as written.
void Planner::planPrototypes(KernelPlan& g) {
    const FunctionDecl* p = g.pattern;
    const Decl* definition = g.templ != nullptr ? static_cast<const Decl*>(g.templ) : p;
    for (const Decl* d : definition->redecls()) {
        if (d == definition) {
            continue;
        }
        const auto* ft = dyn_cast<FunctionTemplateDecl>(d);
        const auto* fd = ft != nullptr ? ft->getTemplatedDecl() : dyn_cast<FunctionDecl>(d);
        const std::string at = src_.fileLineCol(d->getLocation());
        auto refuse = [&](const std::string& why) {
            g.refuse(fmt::format("it is also declared at {}, {}: every declaration would need "
                                 "the accessor template",
                                 at, why),
                     d->getLocation());
        };
        if (fd == nullptr || fd->getFriendObjectKind() != Decl::FOK_None ||
            d->getLexicalDeclContext()->getPrimaryContext() !=
                definition->getLexicalDeclContext()->getPrimaryContext()) {
            refuse("in another scope than its definition");
            continue;
        }
        if (detail::cLinkageOf(fd) == detail::CLinkage::OnDeclaration) {
            refuse("extern \"C\" on its own (a template cannot have C linkage)");
            continue;
        }
        const FunctionTypeLoc ftl = fd->getFunctionTypeLoc();
        bool editable = ftl && src_.range(SourceRange(fd->getBeginLoc(), ftl.getRParenLoc())) &&
                        fd->getNumParams() == p->getNumParams();
        for (const ParmVarDecl* pv : fd->parameters()) {
            editable = editable && src_.range(pv->getSourceRange());
        }
        if (ft != nullptr) {
            editable = editable && src_.range(SourceRange(ft->getBeginLoc(), ftl.getRParenLoc())) &&
                       src_.offset(ft->getTemplateParameters()->getRAngleLoc()) &&
                       src_.range(g.templ->getTemplateParameters()->getSourceRange());
            // The descriptor is declared ahead with the definition's template parameter list,
            // which may then not repeat a default argument.
            if (hasDefaultArgument(*ft->getTemplateParameters()) ||
                hasDefaultArgument(*g.templ->getTemplateParameters())) {
                refuse("with default template arguments");
                continue;
            }
        }
        if (!editable) {
            refuse("in a file memplace does not rewrite, or spelled in a macro");
            continue;
        }
        g.prototypes.push_back(fd);
    }
    // In translation-unit order (redecls() starts anywhere in the chain): the first declares the
    // descriptor.
    std::sort(g.prototypes.begin(), g.prototypes.end(),
              [&](const FunctionDecl* a, const FunctionDecl* b) {
                  return src_.sm().isBeforeInTranslationUnit(a->getLocation(), b->getLocation());
              });
}

// ---- arrays of a kernel --------------------------------------------------------------------

/// Places of an array by the kernel's semantics: the analysis's rules without the extent
/// (the runtime checks capacities with the real extents at each launch).
PlaceSet semanticPlaces(const ki::KernelInfo& k, const std::string& array) {
    ki::KernelInfo copy = k;
    for (auto& a : copy.arrays) {
        a.extent.bytes.reset();
    }
    ki::computeFeasibility(copy);
    const ki::ArrayInfo* a = copy.findArray(array);
    PlaceSet s = a != nullptr ? a->feasible : PlaceSet{Place::Global};
    s.erase(Place::Registers);
    return s;
}

void Planner::planArrays(KernelPlan& g) {
    const FunctionDecl* p = g.pattern;
    std::set<std::string> taken;
    for (const ParmVarDecl* pv : p->parameters()) {
        taken.insert(pv->getNameAsString());
    }
    if (g.templ != nullptr) {
        for (const NamedDecl* tp : *g.templ->getTemplateParameters()) {
            taken.insert(tp->getNameAsString());
        }
    }
    // The accessor types are declared in every prototype too, next to its own names.
    for (const FunctionDecl* proto : g.prototypes) {
        for (const ParmVarDecl* pv : proto->parameters()) {
            taken.insert(pv->getNameAsString());
        }
        if (const FunctionTemplateDecl* ft = proto->getDescribedFunctionTemplate()) {
            for (const NamedDecl* tp : *ft->getTemplateParameters()) {
                taken.insert(tp->getNameAsString());
            }
        }
    }
    for (unsigned i = 0; i < p->getNumParams(); ++i) {
        if (std::optional<ArrayPlan> ap = planArray(g, i, taken)) {
            g.arrays.push_back(std::move(*ap));
        }
    }
    attachSites(g);
}

/// The plan of parameter `i` when it is an array (nullopt otherwise): an accessor candidate, or
/// the reason it stays a raw pointer. `taken` holds the names its accessor type must avoid.
std::optional<ArrayPlan> Planner::planArray(KernelPlan& g, unsigned i,
                                            std::set<std::string>& taken) {
    const FunctionDecl* p = g.pattern;
    const auto& kernels = a_.info().kernels;
    const frontend::KernelSource& ks0 = a_.kernels()[g.kernels[0]];
    const ParmVarDecl* pv = p->getParamDecl(i);
    QualType pt = pv->getType();
    if (!pt->isPointerType() && !pt->isDependentType()) {
        return std::nullopt;
    }
    // A dependent parameter type is a pointer if it is one in the instantiations.
    const ki::ArrayInfo* first = nullptr;
    for (const auto& a : kernels[g.kernels[0]].arrays) {
        if (a.kind == ki::ArrayKind::Parameter && a.paramIndex == static_cast<int>(i)) {
            first = &a;
        }
    }
    if (first == nullptr) {
        return std::nullopt;
    }
    ArrayPlan ap;
    ap.param = i;
    ap.name = pv->getNameAsString();
    ap.key = ParamKey{p, i};
    ap.decl = pv;
    ap.mpName = "MP_" + ap.name;
    while (taken.count(ap.mpName) != 0) {
        ap.mpName += "_";
    }
    taken.insert(ap.mpName);
    const bool readOnlyAsWritten = mergeInstantiations(g, ap);
    if (ap.mode == ki::AccessMode::None) {
        ap.refuse("the kernel does not access it", pv->getLocation());
    }
    if (pv->hasDefaultArg()) {
        ap.refuse("it has a default argument", pv->getLocation());
    }
    for (const FunctionDecl* proto : g.prototypes) {
        if (proto->getParamDecl(i)->hasDefaultArg()) {
            ap.refuse("it has a default argument", proto->getParamDecl(i)->getLocation());
        }
    }
    // Every access through a volatile pointer must stay one volatile access of the memory
    // the program wrote it for: no accessor (staging, caches, tracing) may stand between.
    if (const QualType pointee = pv->getType()->getPointeeType();
        !pointee.isNull() && pointee.isVolatileQualified()) {
        ap.refuse("it points to volatile memory, whose accesses must stay as written",
                  pv->getLocation());
    }
    if (i >= ks0.params.size() || !src_.range(ks0.params[i])) {
        ap.refuse("its declaration is spelled in a macro", pv->getLocation());
    }
    PlaceSet beyond = ap.mask;
    beyond.erase(Place::Global);
    if (beyond.empty() && ap.reason.empty()) {
        ap.refuse("the analysis keeps it in global memory (see the warning above)",
                  pv->getLocation());
    }
    // Element type as the parameter declares it (pattern spelling: `const T`).
    QualType pe = pv->getType()->getPointeeType();
    if (pe.isNull()) {
        // a dependent type that is not spelled as T*: use the first instantiation's
        pe = a_.kernels()[g.kernels[0]].decl->getParamDecl(i)->getType()->getPointeeType();
    }
    ap.elemType = typeText(pe, ctx_);
    ap.elemTypeBare = typeText(pe.getUnqualifiedType(), ctx_);
    ap.original = readOnlyAsWritten ? Place::ReadOnly : Place::Global;
    return ap;
}

/// Over every analysed instantiation of the kernel: the array's mode, places, element and
/// dimensions. Returns whether every instantiation keeps it on the read-only path as written.
bool Planner::mergeInstantiations(const KernelPlan& g, ArrayPlan& ap) {
    const auto& kernels = a_.info().kernels;
    const unsigned i = ap.param;
    const ParmVarDecl* pv = ap.decl;
    bool firstInst = true;
    bool readOnlyAsWritten = true;
    std::optional<std::pair<int, int>> twoD;
    bool twoDConflict = false;
    for (size_t k : g.kernels) {
        const ki::KernelInfo& ki = kernels[k];
        const ki::ArrayInfo* a = nullptr;
        for (const auto& c : ki.arrays) {
            if (c.kind == ki::ArrayKind::Parameter && c.paramIndex == static_cast<int>(i)) {
                a = &c;
            }
        }
        if (a == nullptr) {
            ap.refuse("not an array in every instantiation", pv->getLocation());
            continue;
        }
        ap.mode = ki::combine(ap.mode, a->mode);
        readOnlyAsWritten = readOnlyAsWritten && a->original == Place::ReadOnly;
        PlaceSet s = semanticPlaces(ki, a->name);
        if (firstInst) {
            ap.mask = s;
        } else {
            PlaceSet both;
            for (Place pl : kAllPlaces) {
                if (s.contains(pl) && ap.mask.contains(pl)) {
                    both.insert(pl);
                }
            }
            ap.mask = both;
        }
        firstInst = false;
        if (a->elementSize == 0) {
            ap.refuse(fmt::format("element type '{}' has no known size", a->elementType),
                      pv->getLocation());
        }
        const ParmVarDecl* ipv = a_.kernels()[k].decl->getParamDecl(i);
        QualType elem = ipv->getType()->getPointeeType();
        if (elem.isNull() || elem->isPointerType() || elem->isArrayType() ||
            elem->isFunctionType() || elem->isVoidType() || elem->isReferenceType()) {
            ap.refuse(fmt::format("element type '{}' is not a value type an accessor can hold",
                                  typeText(elem, ctx_)),
                      pv->getLocation());
        }
        // 2-D: a row length that is one integer parameter of the kernel.
        std::optional<std::pair<int, int>> mine;
        if (a->dimensionality == 2 && a->rowLength) {
            const auto& ms = a->rowLength->monomials();
            if (ms.size() == 1 && ms[0].scale == 1 && ms[0].symbols.size() == 1) {
                for (size_t pi = 0; pi < ki.params.size(); ++pi) {
                    if (ki.params[pi].name == ms[0].symbols[0] &&
                        a_.kernels()[k].decl->getParamDecl(pi)->getType()->isIntegerType()) {
                        mine = std::make_pair(2, static_cast<int>(pi));
                    }
                }
            }
        }
        if (k == g.kernels[0]) {
            twoD = mine;
        } else if (twoD != mine) {
            twoDConflict = true;
        }
    }
    if (twoD && !twoDConflict) {
        ap.dims = 2;
        ap.widthParam = twoD->second;
    }
    return readOnlyAsWritten && !firstInst;
}

/// The sites of each array; an array with a site that cannot be rewritten stays a raw pointer.
void Planner::attachSites(KernelPlan& g) {
    const FunctionDecl* p = g.pattern;
    const auto& kernels = a_.info().kernels;
    // Sites per array.
    for (auto& up : plan_.sites) {
        const SiteRec& s = *up;
        if (!s.key || s.key->fn != p) {
            continue;
        }
        for (auto& ap : g.arrays) {
            if (ap.param == s.key->index) {
                ap.sites.push_back(&s);
                if (!s.info->member.empty() && ki::writes(s.info->access)) {
                    ap.memberWrite = true;
                }
            }
        }
    }
    for (auto& ap : g.arrays) {
        // Every site of the array, also those reached through helpers, must be rewritable.
        for (size_t k : g.kernels) {
            for (const ki::Site& site : kernels[k].sites) {
                if (site.array != ap.name &&
                    std::find(site.otherArrays.begin(), site.otherArrays.end(), ap.name) ==
                        site.otherArrays.end()) {
                    continue;
                }
                auto it = plan_.siteById.find(site.id);
                if (it == plan_.siteById.end()) {
                    continue;
                }
                const SiteRec& s = *it->second;
                if (!s.failure.empty() && ap.reason.empty()) {
                    ap.reason = fmt::format("site {} at {}: {}", s.id, src_.lineCol(s.failureAt),
                                            s.failure);
                    ap.reasonAt = s.failureAt;
                }
            }
        }
        ap.candidate = ap.reason.empty();
        ap.accessor = ap.candidate;
    }
}

/// Shared staging of a written array (docs/rewriting.md): correct when no block reads an element
/// another block writes in the same launch, and every thread reaches the epilogue's barrier.
void Planner::dropUnsafeShared(const KernelPlan& g, ArrayPlan& ap) {
    if (ap.written() && ap.mask.contains(Place::Shared)) {
        std::string why;
        if (ap.memberWrite) {
            why = "shared: a member of an element is written (the whole element is copied "
                  "back)";
        } else if (g.sync.earlyReturn && g.sync.barrier) {
            why = fmt::format("shared: a `return` at {} and a barrier at {} (the staging "
                              "epilogue's barrier would not be reached by every thread "
                              "together)",
                              src_.lineCol(g.sync.returnAt), src_.lineCol(g.sync.barrierAt));
        } else if (ap.mode != ki::AccessMode::Write && g.sync.interBlock) {
            why = fmt::format("shared: blocks may exchange data in one launch ({})",
                              g.sync.interBlockWhy);
        }
        if (!why.empty()) {
            ap.mask.erase(Place::Shared);
            ap.notes.push_back(why);
        }
    }
}

/// The statically likely place (docs/rewriting.md, "compiled placements").
void Planner::chooseLikely(const KernelPlan& g, ArrayPlan& ap) {
    const auto& kernels = a_.info().kernels;
    bool indirect = false;
    bool uniform = true;
    bool small = true;
    for (size_t k : g.kernels) {
        for (const ki::Site& s : kernels[k].sites) {
            if (s.array != ap.name) {
                continue;
            }
            if (s.index.kind == ki::IndexKind::Indirect) {
                indirect = true;
            }
            if (s.index.kind != ki::IndexKind::Affine) {
                uniform = false;
            }
            for (const auto& t : s.index.terms) {
                if (t.var.rfind("threadIdx", 0) == 0) {
                    uniform = false;
                }
            }
        }
        if (const ki::ArrayInfo* a = kernels[k].findArray(ap.name);
            a != nullptr && a->extent.bytes && *a->extent.bytes > ki::kConstantBankBytes) {
            small = false;
        }
    }
    if (ap.written()) {
        ap.likely = Place::Global;
        ap.likelyWhy = "written";
    } else if (ap.dims == 2 && ap.mask.contains(Place::Texture)) {
        ap.likely = Place::Texture;
        ap.likelyWhy = "indexed row * width + column: a 2-D texture";
    } else if (indirect && ap.mask.contains(Place::Texture)) {
        ap.likely = Place::Texture;
        ap.likelyWhy = "gathered through another array";
    } else if (uniform && small && ap.mask.contains(Place::Constant)) {
        ap.likely = Place::Constant;
        ap.likelyWhy = "every lane of a warp reads the same element (no threadIdx in its "
                       "indices), and it fits the 64 KB bank";
    } else if (ap.mask.contains(Place::ReadOnly)) {
        ap.likely = Place::ReadOnly;
        ap.likelyWhy = "read-only";
    } else {
        ap.likely = Place::Global;
        ap.likelyWhy = "no other read place is feasible";
    }
}

/// The accessor arrays' final masks, likely places, modes and dimensions, and the placements
/// compiled besides the default.
void Planner::finishArrays(KernelPlan& g) {
    for (ArrayPlan& ap : g.arrays) {
        if (!ap.accessor) {
            continue;
        }
        dropUnsafeShared(g, ap);
        chooseLikely(g, ap);
        if (ap.mode == ki::AccessMode::Write && ap.memberWrite) {
            ap.mode = ki::AccessMode::ReadWrite; // partial writes: the element is read too
        }
        ap.dims = ap.mask.contains(Place::Texture) ? ap.dims : 1;
        if (ap.dims != 2) {
            ap.widthParam = -1;
        }
        if (!ap.mask.contains(ap.original) || (ap.written() && ap.original != Place::Global)) {
            ap.original = Place::Global;
        }
    }
    // The default instantiation is the placement as written; compiled besides it: every array
    // global, every read-only array on the read-only path, and every array in its likely place.
    auto accs = g.accessorArrays();
    const std::vector<Place> def = g.originalPlacement();
    std::vector<Place> global(accs.size(), Place::Global);
    std::vector<Place> readonly;
    std::vector<Place> likely;
    for (const ArrayPlan* ap : accs) {
        readonly.push_back(!ap->written() && ap->mask.contains(Place::ReadOnly) ? Place::ReadOnly
                                                                                : Place::Global);
        likely.push_back(ap->likely);
    }
    for (const auto& pl : {global, readonly, likely}) {
        if (pl != def && std::find(g.compiled.begin(), g.compiled.end(), pl) == g.compiled.end()) {
            g.compiled.push_back(pl);
        }
    }
}

void Planner::addExtraCompiled() {
    std::set<std::string> unknown; // kernels named in the file but not here: one warning each
    for (const RewriteOptions::ExtraPlacement& x : opt_.compile) {
        bool found = false;
        for (KernelPlan& g : plan_.kernels) {
            const ki::KernelInfo& k0 = a_.info().kernels[g.kernels[0]];
            const auto unqualified = [](const std::string& n) {
                const size_t c = n.rfind("::");
                return c == std::string::npos ? n : n.substr(c + 2);
            };
            if (!g.ok || (x.kernel != g.name && x.kernel != unqualified(g.name) &&
                          x.kernel != k0.instantiation)) {
                continue;
            }
            found = true;
            const auto accs = g.accessorArrays();
            std::vector<Place> pl(accs.size(), Place::Global);
            std::string bad;
            for (const auto& [array, place] : x.places) {
                auto it = std::find_if(accs.begin(), accs.end(),
                                       [&](const ArrayPlan* ap) { return ap->name == array; });
                if (it == accs.end()) {
                    bad = "kernel " + g.name + " has no accessor array '" + array + "'";
                    break;
                }
                if (!(*it)->mask.contains(place)) {
                    bad = "array '" + array + "' of " + g.name + " cannot be placed in " +
                          std::string(placeName(place));
                    break;
                }
                pl[static_cast<size_t>(it - accs.begin())] = place;
            }
            if (!bad.empty()) {
                warn(g.pattern != nullptr ? g.pattern->getLocation() : SourceLocation(),
                     "extra compiled placement dropped: " + bad);
                continue;
            }
            if (pl != g.originalPlacement() &&
                std::find(g.compiled.begin(), g.compiled.end(), pl) == g.compiled.end()) {
                g.compiled.push_back(pl);
            }
        }
        if (!found && unknown.insert(x.kernel).second) {
            warn(SourceLocation(), "extra compiled placement for '" + x.kernel +
                                       "': no rewritten kernel of that name; ignored");
        }
    }
}

/// Where the kernel's descriptor goes (emitDescriptors): after the kernel, on the next line when
/// nothing but a comment follows its closing brace.
void Planner::placeDescriptor(KernelPlan& g) {
    const frontend::KernelSource& ks = a_.kernels()[g.kernels[0]];
    g.indent = src_.indentOf(src_.range(ks.declaration)->first);
    const unsigned rb = *src_.offset(ks.bodyRBrace);
    const std::string& text = src_.text();
    size_t eol = text.find('\n', rb + 1);
    std::string rest = text.substr(rb + 1, (eol == std::string::npos ? text.size() : eol) - rb - 1);
    if (eol != std::string::npos && matches(rest, "\\s*(//.*)?")) {
        g.descriptorAt = static_cast<unsigned>(eol + 1);
        g.descriptorPrefix = "\n";
    } else {
        g.descriptorAt = rb + 1;
        g.descriptorPrefix = "\n\n";
    }
}

} // namespace memplace::rewrite::detail

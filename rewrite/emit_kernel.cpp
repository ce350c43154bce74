// Emitting kernels and helpers (emitter.h): the accessor template parameters, the staging
// prologue and epilogue around the body, the views that aliases and rebases become, and the edit
// of every access site.
#include "rewrite/emitter.h"
#include "rewrite/jit_source.h"

#include <clang/AST/DeclTemplate.h>
#include <clang/AST/QualTypeNames.h>
#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace memplace::rewrite::detail {

using namespace clang;
using clang::SourceLocation; // memplace::SourceLocation is written in full

void Emitter::emitSite(const SiteRec& s, bool written, EditList& edits) {
    const frontend::SiteSource& ss = *s.src;
    const SiteRanges r = siteRanges(src_, s);
    const auto& [access, base, index] = r;
    const std::string at = fmt::format("memplace::at<{}>(", s.id);
    std::string baseText = base ? src_.slice(*base) : std::string();
    const auto* baseParam =
        s.shape.base != nullptr ? dyn_cast<ParmVarDecl>(s.shape.base->getDecl()) : nullptr;
    if (auto it = plan_.rebasedName.find(baseParam); it != plan_.rebasedName.end() && base) {
        // A rebased parameter: the view its rebase declared (`mp_src`).
        baseText = it->second;
        if (s.shape.shape == Shape::Subscript || s.shape.shape == Shape::AtomicAddr) {
            edits.replace(base->first, base->second, baseText);
        }
    }
    const bool member = !s.info->member.empty();
    const bool memberWrite = member && ki::writes(s.info->access);
    // The element expression `a[at<S>(i)]` is built by edits around the index so that sites
    // nested in the index get their own edits.
    switch (s.shape.shape) {
    case Shape::Subscript:
        edits.insert(index->first, at, -static_cast<long>(index->second - index->first));
        edits.insert(index->second, ")", static_cast<long>(index->second - index->first));
        break;
    case Shape::Deref:
        edits.replace(access->first, access->second, baseText + "[" + at + "0)]");
        break;
    case Shape::DerefAdd: {
        // `*(p + a + b - c)` becomes `p[at<S>(a, b, memplace::minus(c))]`: at() converts each
        // term to the index type on its own and adds them, as the pointer arithmetic did (`a +
        // b` in the terms' own type could overflow or wrap where `p + a + b` does not). The
        // text between the terms (operators, grouping parentheses) is replaced; the terms
        // themselves only get edits around them, so that sites nested in them get theirs.
        const auto& terms = s.shape.terms;
        auto open = [&](size_t k) { return terms[k].negated ? "memplace::minus(" : ""; };
        auto close = [&](size_t k) { return terms[k].negated ? ")" : ""; };
        edits.replace(access->first, index->first, baseText + "[" + at + open(0));
        for (size_t k = 1; k < terms.size(); ++k) {
            auto prev = src_.range(ss.indices[k - 1]);
            auto cur = src_.range(ss.indices[k]);
            edits.replace(prev->second, cur->first, std::string(close(k - 1)) + ", " + open(k));
        }
        auto last = src_.range(ss.indices.back());
        edits.replace(last->second, access->second, std::string(close(terms.size() - 1)) + ")]");
        break;
    }
    case Shape::AtomicAddr:
        edits.insert(index->first, at, -static_cast<long>(index->second - index->first));
        edits.insert(index->second, ")", static_cast<long>(index->second - index->first));
        break;
    case Shape::AtomicAdd:
        edits.replace(base->first, index->first, "&" + baseText + "[" + at);
        edits.insert(index->second, ")]", static_cast<long>(index->second - base->first));
        break;
    case Shape::AtomicPlain:
        edits.replace(base->first, base->second, "&" + baseText + "[" + at + "0)]");
        break;
    case Shape::LdgAddr:
    case Shape::LdgAdd:
        edits.replace(access->first, index->first, baseText + "[" + at);
        edits.replace(index->second, access->second, ")]");
        break;
    case Shape::LdgPlain:
        edits.replace(access->first, access->second, baseText + "[" + at + "0)]");
        break;
    case Shape::Arrow:
    case Shape::ArrowAdd: {
        // `a->m` / `(a + i)->m`: the access range is the member expression; the element ends at
        // the arrow.
        unsigned arrow = *src_.offset(s.shape.member->getOperatorLoc());
        std::string open = !written ? "" : memberWrite ? "(&" : "memplace::value(";
        std::string close = !written ? "]." : memberWrite ? "])->" : "]).";
        if (s.shape.shape == Shape::Arrow) {
            edits.replace(access->first, arrow + 2, open + baseText + "[" + at + "0)" + close);
        } else {
            edits.replace(access->first, index->first, open + baseText + "[" + at);
            edits.replace(index->second, arrow + 2, ")" + close);
        }
        return;
    }
    }
    emitProxyValue(s, written, r, edits);
}

/// Written arrays return proxies: members, and reads whose type is deduced, need the value (or,
/// for member writes, the element's address).
void Emitter::emitProxyValue(const SiteRec& s, bool written, const SiteRanges& r, EditList& edits) {
    const auto& access = r.access;
    const bool member = !s.info->member.empty();
    const bool memberWrite = member && ki::writes(s.info->access);
    const long len = access ? static_cast<long>(access->second - access->first) : 0;
    if (member && written && s.shape.member != nullptr) {
        unsigned dot = *src_.offset(s.shape.member->getOperatorLoc());
        if (memberWrite) {
            edits.insert(access->first, "(&", -len - 1);
            edits.insert(access->second, ")", len + 1);
            edits.replace(dot, dot + 1, "->");
        } else {
            edits.insert(access->first, "memplace::value(", -len - 1);
            edits.insert(access->second, ")", len + 1);
        }
    } else if (written && s.deduces && !ki::writes(s.info->access) &&
               s.shape.shape != Shape::AtomicAddr && s.shape.shape != Shape::AtomicAdd &&
               s.shape.shape != Shape::AtomicPlain) {
        edits.insert(access->first, "memplace::value(", -len - 1);
        edits.insert(access->second, ")", len + 1);
    }
}

/// The kernel's template header (a new one, or the accessor types added to its own) and its
/// accessor parameters.
void Emitter::emitSignature(const KernelPlan& g, EditList& edits) {
    const frontend::KernelSource& ks = a_.kernels()[g.kernels[0]];
    auto accs = g.accessorArrays();
    const unsigned declBegin = src_.range(ks.declaration)->first;
    const std::string indent = src_.indentOf(declBegin);
    std::vector<std::string> tparams;
    for (const ArrayPlan* ap : accs) {
        tparams.push_back("class " + ap->mpName);
    }
    if (g.cxxLinkage) {
        // Before the template header inserted at the same offset, after a descriptor there.
        constexpr long kBeforeTheTemplateHeader = -(1L << 39);
        edits.insert(declBegin, std::string(kCxxLinkageOpen) + indent, kBeforeTheTemplateHeader);
    }
    insertTemplateParams(g.templ, declBegin, "", tparams, edits);
    for (const ArrayPlan* ap : accs) {
        auto r = src_.range(ks.params[ap->param]);
        edits.replace(r->first, r->second, ap->mpName + " " + ap->name);
    }
    emitPrototypes(g, tparams, edits);
}

/// Adds the accessor template parameters to the declaration that starts at `begin`: after its
/// own template parameters (`templ`), or as a new `template <...>` header; `prefix` (a
/// declaration of the descriptor) goes before it.
void Emitter::insertTemplateParams(const FunctionTemplateDecl* templ, unsigned begin,
                                   const std::string& prefix,
                                   const std::vector<std::string>& tparams, EditList& edits) {
    const std::string indent = src_.indentOf(begin);
    if (templ != nullptr) {
        if (!prefix.empty()) {
            edits.insert(begin, prefix);
        }
        const unsigned ra = *src_.offset(templ->getTemplateParameters()->getRAngleLoc());
        const size_t ls = src_.text().rfind('\n', ra);
        const size_t column = ls == std::string::npos ? ra : ra - ls - 1;
        edits.insert(ra, wrapList(", ", tparams, "", indent + "          ", column + 1));
    } else {
        edits.insert(
            begin, prefix +
                       wrapList("template <", tparams, ">", indent + "          ", indent.size()) +
                       "\n" + indent);
    }
}

/// Every other declaration of the kernel gets the definition's accessor template parameters and
/// parameter types (its own parameter names and default arguments stay). The first one before
/// the definition also declares the descriptor, so that launches between it and the definition
/// can name it (memplace::launch instantiates at the end of the translation unit, where the
/// descriptor is complete).
void Emitter::emitPrototypes(const KernelPlan& g, const std::vector<std::string>& tparams,
                             EditList& edits) {
    bool declared = false;
    for (const FunctionDecl* proto : g.prototypes) {
        const FunctionTemplateDecl* ft = proto->getDescribedFunctionTemplate();
        // From the first specifier (`__global__` is a macro) or the `template` keyword.
        const unsigned begin =
            src_.range(SourceRange(ft != nullptr ? ft->getBeginLoc() : proto->getBeginLoc(),
                                   proto->getFunctionTypeLoc().getRParenLoc()))
                ->first;
        const std::string indent = src_.indentOf(begin);
        std::string forward;
        if (!declared &&
            src_.sm().isBeforeInTranslationUnit(proto->getLocation(), g.pattern->getLocation())) {
            declared = true;
            forward =
                g.templ != nullptr
                    ? src_.slice(*src_.range(g.templ->getTemplateParameters()->getSourceRange())) +
                          " struct " + g.descName + ";\n" + indent
                    : "struct " + g.descName + ";\n" + indent;
        }
        if (detail::cLinkageOf(proto) == detail::CLinkage::Block) {
            forward += std::string(kCxxLinkageOpen) + indent;
            const size_t semicolon = src_.text().find(
                ';', src_.range(SourceRange(proto->getFunctionTypeLoc().getRParenLoc()))->second);
            edits.insert(semicolon + 1, "\n" + indent + "}");
        }
        insertTemplateParams(ft, begin, forward, tparams, edits);
        for (const ArrayPlan* ap : g.accessorArrays()) {
            const ParmVarDecl* pv = proto->getParamDecl(ap->param);
            auto r = src_.range(pv->getSourceRange());
            const std::string name = pv->getNameAsString();
            edits.replace(r->first, r->second, ap->mpName + (name.empty() ? "" : " " + name));
        }
    }
}

/// The body: the prologue, the original body as a lambda (its `return`s leave the lambda), the
/// epilogue.
void Emitter::emitBody(const KernelPlan& g, EditList& edits) {
    const frontend::KernelSource& ks = a_.kernels()[g.kernels[0]];
    auto accs = g.accessorArrays();
    const unsigned declBegin = src_.range(ks.declaration)->first;
    const std::string indent = src_.indentOf(declBegin);
    std::vector<std::string> names;
    std::vector<std::string> written;
    for (const ArrayPlan* ap : accs) {
        names.push_back(ap->name);
        if (ap->written()) {
            written.push_back(ap->name);
        }
    }
    const unsigned lb = *src_.offset(ks.bodyLBrace);
    const unsigned rb = *src_.offset(ks.bodyRBrace);
    edits.insert(
        lb + 1,
        "\n" + indent + "    " +
            wrapList("memplace::stage(", names, ");", indent + "        ", indent.size() + 4) +
            "\n" + indent + "    [&]() {",
        -1);
    std::string close = indent + "    }();\n";
    if (!written.empty()) {
        close +=
            indent + "    " +
            wrapList("memplace::unstage(", written, ");", indent + "        ", indent.size() + 4) +
            "\n";
    }
    unsigned ls = 0;
    if (src_.onlyBlanksBefore(rb, &ls) && ls > lb) {
        edits.insert(ls, close, 1);
    } else {
        edits.insert(rb, "\n" + close + indent, 1);
    }
}

/// Pointer aliases of accessor arrays become views of the accessor (once per declaration as
/// written: instantiations share it), and so do rebased parameters.
void Emitter::emitViews(const KernelPlan& g, EditList& edits) {
    const FunctionDecl* p = g.pattern;
    auto accs = g.accessorArrays();
    std::set<unsigned> aliasesDone;
    for (const auto& [ref, alias] : plan_.aliasByParamRef) {
        auto key = detail::pointerParamOf(ref);
        auto at = src_.offset(alias->var->getLocation());
        if (!key || key->fn != p || !at || !aliasesDone.insert(*at).second) {
            continue;
        }
        for (const ArrayPlan* ap : accs) {
            if (ap->param == key->index) {
                const auto aliasText = aliasEdits(src_, *alias);
                for (const auto& [b, e, t] : *aliasText) {
                    edits.replace(b, e, t);
                }
            }
        }
    }
    std::set<unsigned> rebasesDone;
    for (const auto& [ref, rebase] : plan_.rebaseByParamRef) {
        auto key = detail::pointerParamOf(ref);
        auto at = src_.offset(ref->getLocation());
        if (!key || key->fn != p || !at || !rebasesDone.insert(*at).second) {
            continue;
        }
        for (const ArrayPlan* ap : accs) {
            if (ap->param == key->index) {
                const auto rebaseText = rebaseEdits(src_, *rebase);
                for (const auto& [b, e, t] : *rebaseText) {
                    if (b == e) {
                        edits.insert(b, t);
                    } else {
                        edits.replace(b, e, t);
                    }
                }
            }
        }
    }
}

/// A cache preference (`cudaFuncSetCacheConfig(kernel, ...)`) names the default instantiation:
/// every array where the program keeps it, so that the hint applies to the code that runs the
/// placement as written (a preference changes no result; docs/decisions/033).
void Emitter::emitCacheHints(const KernelPlan& g, EditList& edits) {
    PrintingPolicy pp = policyFor(ctx_);
    pp.SuppressUnwrittenScope = true;
    pp.FullyQualifiedName = true;
    std::vector<std::string> types;
    for (const ArrayPlan* ap : g.accessorArrays()) {
        const QualType pointee = ap->decl->getType()->getPointeeType().getUnqualifiedType();
        const std::string elem =
            (ap->written() ? "" : "const ") +
            TypeName::getFullyQualifiedName(pointee, ctx_, pp, /*WithGlobalNsPrefix=*/true);
        types.push_back(fmt::format(
            "memplace::{}<{}>",
            ap->original == Place::ReadOnly ? "ReadOnlyAccessor" : "GlobalAccessor", elem));
    }
    std::set<unsigned> done; // a host template's instantiations share the text
    for (const DeclRefExpr* name : g.cacheHints) {
        const unsigned end = src_.range(name->getSourceRange())->second;
        if (done.insert(end).second) {
            edits.insert(end, wrapList("<", types, ">", "    "));
        }
    }
}

void Emitter::emitKernel(const KernelPlan& g, EditList& edits) {
    const FunctionDecl* p = g.pattern;
    auto accs = g.accessorArrays();
    emitSignature(g, edits);
    emitCacheHints(g, edits);
    emitBody(g, edits);
    emitViews(g, edits);
    for (const auto& up : plan_.sites) {
        if (!up->key || up->key->fn != p) {
            continue;
        }
        for (const ArrayPlan* ap : accs) {
            if (ap->param == up->key->index) {
                emitSite(*up, ap->written(), edits);
            }
        }
    }
}

void Emitter::emitHelper(const FunctionDecl* fn, const std::vector<unsigned>& params,
                         EditList& edits) {
    std::set<std::string> taken;
    for (const ParmVarDecl* pv : fn->parameters()) {
        taken.insert(pv->getNameAsString());
    }
    const FunctionTemplateDecl* ft = fn->getDescribedFunctionTemplate();
    if (ft != nullptr) {
        for (const NamedDecl* tp : *ft->getTemplateParameters()) {
            taken.insert(tp->getNameAsString());
        }
    }
    std::string tparams;
    for (unsigned i : params) {
        const ParmVarDecl* pv = fn->getParamDecl(i);
        std::string mp = "MP_" + pv->getNameAsString();
        while (taken.count(mp) != 0) {
            mp += "_";
        }
        taken.insert(mp);
        tparams += (tparams.empty() ? "" : ", ") + std::string("class ") + mp;
        auto r = src_.range(pv->getSourceRange());
        edits.replace(r->first, r->second, mp + " " + pv->getNameAsString());
    }
    if (ft != nullptr) {
        edits.insert(*src_.offset(ft->getTemplateParameters()->getRAngleLoc()), ", " + tparams);
    } else {
        unsigned b = *src_.offset(src_.sm().getExpansionLoc(fn->getBeginLoc()));
        // In an `extern "C" { }` block the template needs C++ linkage.
        const bool cxx = detail::cLinkageOf(fn) == detail::CLinkage::Block;
        const std::string indent = src_.indentOf(b);
        edits.insert(b, (cxx ? kCxxLinkageOpen + indent : std::string()) + "template <" + tparams +
                            ">\n" + indent);
        if (cxx) {
            edits.insert(*src_.offset(fn->getBody()->getEndLoc()) + 1, "\n" + indent + "}");
        }
    }
    for (const auto& up : plan_.sites) {
        if (up->key && up->key->fn == fn &&
            std::find(params.begin(), params.end(), up->key->index) != params.end()) {
            emitSite(*up, plan_.helpers.at(*up->key).written, edits);
        }
    }
}

} // namespace memplace::rewrite::detail

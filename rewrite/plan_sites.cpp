// Planning access sites (planner.h): the pointer parameter behind each site and whether its
// text can be edited, pointer aliases and rebases that can become views of an accessor, and how
// every reference to a pointer parameter is used.
#include "rewrite/planner.h"

#include <algorithm>
#include <regex>

namespace memplace::rewrite::detail {

using namespace clang;
using clang::SourceLocation; // memplace::SourceLocation is written in full

namespace {

/// Whether every reference to `var` in `body` satisfies `ok` (an explicit stack: kernel bodies
/// may nest deeper than the call stack allows).
template <class Pred>
bool everyReference(const Stmt* body, const ValueDecl* var, Pred ok) {
    std::vector<const Stmt*> pending{body};
    while (!pending.empty()) {
        const Stmt* cur = pending.back();
        pending.pop_back();
        if (cur == nullptr) {
            continue;
        }
        if (const auto* dre = dyn_cast<DeclRefExpr>(cur);
            dre != nullptr && dre->getDecl() == var && !ok(dre)) {
            return false;
        }
        for (const Stmt* child : cur->children()) {
            pending.push_back(child);
        }
    }
    return true;
}

} // namespace

// ---- sites -------------------------------------------------------------------------------

std::optional<TextEdits> aliasEdits(const Source& src, const detail::PointerAliasInit& a) {
    // `const float* row = m + a - b;` becomes `auto row = memplace::offset(m, a,
    // memplace::minus(b));` (a view of the accessor at that offset, evaluated once, here).
    TextEdits out;
    auto begin = src.offset(a.var->getBeginLoc());
    auto name = src.offset(a.var->getLocation());
    auto init = src.range(a.var->getInit()->getSourceRange());
    auto param = src.range(a.param->getSourceRange());
    if (!begin || !name || !init || !param || *begin >= *name || *name >= init->first) {
        return std::nullopt;
    }
    const std::string p = src.slice(*param);
    if (!matches(p, "[A-Za-z_][A-Za-z_0-9]*") ||
        !matches(src.slice(*begin, *name), "[A-Za-z_0-9\\s*&:<>,]*")) {
        return std::nullopt;
    }
    out.emplace_back(*begin, *name, a.var->getType().isConstQualified() ? "const auto " : "auto ");
    if (a.terms.empty()) {
        if (!matches(src.slice(*init), ("[(\\s]*" + p + "[)\\s]*").c_str())) {
            return std::nullopt;
        }
        out.emplace_back(init->first, init->second, "memplace::offset(" + p + ")");
        return out;
    }
    std::vector<std::pair<unsigned, unsigned>> ranges;
    for (const detail::OffsetTerm& t : a.terms) {
        auto r = src.range(t.expr->getSourceRange());
        if (!r) {
            return std::nullopt;
        }
        ranges.push_back(*r);
    }
    auto op = [&](size_t k) { return a.terms[k].negated ? std::string("-") : std::string("\\+"); };
    auto open = [&](size_t k) { return a.terms[k].negated ? "memplace::minus(" : ""; };
    auto close = [&](size_t k) { return a.terms[k].negated ? ")" : ""; };
    auto between = [&](unsigned x, unsigned y) {
        return x <= y ? src.slice(x, y) : std::string("\x01");
    };
    const std::string first = between(init->first, ranges[0].first);
    const std::string last = between(ranges.back().second, init->second);
    if (a.element != nullptr) {
        if (!matches(first, ("&\\s*[(\\s]*" + p + "[)\\s]*\\[\\s*").c_str()) ||
            !matches(last, "\\s*\\]")) {
            return std::nullopt;
        }
    } else if (!matches(first, ("[(\\s]*" + p + "[)\\s]*" + op(0) + "\\s*").c_str()) ||
               !matches(last, "[)\\s]*")) {
        return std::nullopt;
    }
    out.emplace_back(init->first, ranges[0].first, "memplace::offset(" + p + ", " + open(0));
    for (size_t k = 1; k < ranges.size(); ++k) {
        if (!matches(between(ranges[k - 1].second, ranges[k].first),
                     ("[)\\s]*" + op(k) + "[\\s]*").c_str())) {
            return std::nullopt;
        }
        out.emplace_back(ranges[k - 1].second, ranges[k].first,
                         std::string(close(k - 1)) + ", " + open(k));
    }
    out.emplace_back(ranges.back().second, init->second,
                     std::string(close(a.terms.size() - 1)) + ")");
    return out;
}

std::optional<TextEdits> rebaseEdits(const Source& src, const detail::PointerRebase& r) {
    // `src += baseY * pitch + baseX;` becomes `const auto mp_src = memplace::offset(src, baseY *
    // pitch + baseX);`.
    auto whole = src.range(r.op->getSourceRange());
    auto rhs = src.range(r.op->getRHS()->getSourceRange());
    auto param = src.range(r.param->getSourceRange());
    if (!whole || !rhs || !param || rhs->second != whole->second || whole->first > rhs->first) {
        return std::nullopt;
    }
    const std::string p = src.slice(*param);
    if (!matches(p, "[A-Za-z_][A-Za-z_0-9]*") ||
        !matches(src.slice(whole->first, rhs->first),
                 ("[(\\s]*" + p + "[)\\s]*" + (r.negated ? "-=" : "\\+=") + "\\s*").c_str())) {
        return std::nullopt;
    }
    TextEdits out;
    out.emplace_back(whole->first, rhs->first,
                     "const auto mp_" + p + " = memplace::offset(" + p + ", " +
                         (r.negated ? "memplace::minus(" : ""));
    out.emplace_back(rhs->second, rhs->second, r.negated ? "))" : ")");
    return out;
}

void Planner::collectSites() {
    for (const frontend::KernelSource& ks : a_.kernels()) {
        if (ks.decl != nullptr && ks.decl->getBody() != nullptr) {
            for (auto& r : detail::pointerRebasesIn(ks.decl->getBody())) {
                plan_.rebases.push_back(r);
            }
        }
    }
    // Local pointers into parameters: an access through one is an access of the parameter.
    for (const frontend::KernelSource& ks : a_.kernels()) {
        if (ks.decl != nullptr && ks.decl->getBody() != nullptr) {
            for (auto& a : detail::pointerAliasesIn(ks.decl->getBody())) {
                plan_.aliasKey[a.var] = *detail::pointerParamOf(a.param);
                plan_.aliases.push_back(std::move(a));
            }
        }
    }
    const auto& kernels = a_.info().kernels;
    for (size_t k = 0; k < kernels.size(); ++k) {
        const auto& infoSites = kernels[k].sites;
        const auto& srcSites = a_.kernels()[k].sites;
        for (size_t i = 0; i < srcSites.size() && i < infoSites.size(); ++i) {
            const frontend::SiteSource& ss = srcSites[i];
            detail::SiteShape shape =
                ss.expr != nullptr ? detail::shapeOf(ctx_, ss.expr) : detail::SiteShape{};
            if (shape.base != nullptr) {
                plan_.siteBases.insert(shape.base);
                plan_.siteBaseLocations.insert(shape.base->getLocation().getRawEncoding());
            }
            if (plan_.siteById.count(ss.id) != 0) {
                // The same written site in another instantiation or call path: the same edit.
                SiteRec* r = plan_.siteById[ss.id];
                if (!r->deduces && ss.expr != nullptr && detail::deducesType(ctx_, ss.expr)) {
                    r->deduces = true;
                }
                continue;
            }
            auto rec = std::make_unique<SiteRec>();
            rec->id = ss.id;
            rec->info = &infoSites[i];
            rec->src = &ss;
            rec->shape = shape;
            if (shape.base != nullptr) {
                rec->key = detail::pointerParamOf(shape.base);
                if (auto it = plan_.aliasKey.find(dyn_cast<VarDecl>(shape.base->getDecl()));
                    !rec->key && it != plan_.aliasKey.end()) {
                    rec->key = it->second;
                }
            }
            SourceLocation at = ss.expr != nullptr ? ss.expr->getBeginLoc() : SourceLocation();
            if (!shape.why.empty()) {
                rec->failure = shape.why;
                rec->failureAt = at;
            } else if (!ss.rewritable) {
                rec->failure = "the access is not one contiguous range of the main file";
                rec->failureAt = at;
            } else if (!rec->key) {
                rec->failure = "its pointer is not a parameter";
                rec->failureAt = at;
            } else if (ss.expr != nullptr) {
                SourceLocation ref = detail::bindsNonConstRef(ctx_, ss.expr);
                if (ref.isValid()) {
                    rec->failure = "the element is bound to a non-const reference (only the "
                                   "global place could serve it)";
                    rec->failureAt = ref;
                }
                rec->deduces = detail::deducesType(ctx_, ss.expr);
            }
            plan_.siteById[ss.id] = rec.get();
            plan_.sites.push_back(std::move(rec));
        }
    }
}

namespace {

/// Whether the text around a site's ranges is the form of its shape (`id`: its pointer's name,
/// `arrow`: the offset of `->` for the arrow shapes).
bool shapeTextMatches(const Source& src, const SiteRec& s, const SiteRanges& r,
                      const std::string& id, unsigned arrow) {
    const frontend::SiteSource& ss = *s.src;
    const auto& [access, base, index] = r;
    auto between = [&](unsigned x, unsigned y) {
        return x <= y ? src.slice(x, y) : std::string("\x01");
    };
    bool ok = true;
    switch (s.shape.shape) {
    case Shape::Subscript:
    case Shape::AtomicAddr:
        ok = base->second <= index->first &&
             matches(between(base->second, index->first), "\\s*\\[\\s*") &&
             (s.shape.shape == Shape::AtomicAddr ||
              matches(between(index->second, access->second), "\\s*\\]"));
        break;
    case Shape::Deref:
        ok = matches(src.slice(*access), ("\\*\\s*[(\\s]*" + id + "[)\\s]*").c_str());
        break;
    case Shape::DerefAdd: {
        // Between the terms only their operator and the grouping parentheses of the sum
        // (`*((p + a) - b)`): the edits replace that text.
        const auto& terms = s.shape.terms;
        auto op = [&](size_t k) {
            return terms[k].negated ? std::string("-") : std::string("\\+");
        };
        ok = matches(between(access->first, index->first),
                     ("\\*\\s*[(\\s]*" + id + "[)\\s]*" + op(0) + "\\s*").c_str());
        for (size_t k = 1; ok && k < terms.size(); ++k) {
            auto prev = src.range(ss.indices[k - 1]);
            auto cur = src.range(ss.indices[k]);
            ok = prev && cur &&
                 matches(between(prev->second, cur->first), ("[)\\s]*" + op(k) + "\\s*").c_str());
        }
        auto last = src.range(ss.indices.back());
        ok = ok && last && matches(between(last->second, access->second), "[)\\s]*\\)");
        break;
    }
    case Shape::AtomicAdd:
        ok = matches(between(base->first, index->first), (id + "\\s*\\+\\s*").c_str());
        break;
    case Shape::AtomicPlain:
        break;
    case Shape::LdgAddr:
        ok = matches(between(access->first, index->first),
                     ("__ldg\\s*\\(\\s*&\\s*" + id + "\\s*\\[\\s*").c_str()) &&
             matches(between(index->second, access->second), "\\s*\\]\\s*\\)");
        break;
    case Shape::LdgAdd:
        ok = matches(between(access->first, index->first),
                     ("__ldg\\s*\\(\\s*" + id + "\\s*\\+\\s*").c_str()) &&
             matches(between(index->second, access->second), "\\s*\\)");
        break;
    case Shape::LdgPlain:
        ok = matches(src.slice(*access), ("__ldg\\s*\\(\\s*" + id + "\\s*\\)").c_str());
        break;
    case Shape::Arrow:
    case Shape::ArrowAdd: {
        ok = s.shape.shape == Shape::Arrow
                 ? matches(between(access->first, arrow), ("[(\\s]*" + id + "[)\\s]*").c_str())
                 : matches(between(access->first, index->first),
                           ("\\(\\s*" + id + "\\s*\\+\\s*").c_str()) &&
                       matches(between(index->second, arrow), "\\s*\\)\\s*");
        break;
    }
    }
    return ok;
}

/// Checks that the text around a site is what emitSite's edits assume; the reason when not.
std::string checkSiteText(const Source& src, const SiteRec& s) {
    const frontend::SiteSource& ss = *s.src;
    const SiteRanges r = siteRanges(src, s);
    const auto& [access, base, index] = r;
    if (!access || !base) {
        return "the access is not one contiguous range of the main file";
    }
    const bool needIndex = s.shape.index != nullptr;
    const size_t indexRanges = s.shape.shape == Shape::DerefAdd ? s.shape.terms.size() : 1;
    if (needIndex && (!index || ss.indices.size() != indexRanges)) {
        return "its index is not one contiguous range of the main file";
    }
    const std::string b = src.slice(*base);
    if (!std::regex_match(b, std::regex("[A-Za-z_][A-Za-z_0-9]*"))) {
        return "its pointer is not written as a plain name";
    }
    const std::string id = b; // an identifier: no regex metacharacters
    unsigned arrow = 0;
    if (s.shape.shape == Shape::Arrow || s.shape.shape == Shape::ArrowAdd) {
        auto at =
            s.shape.member != nullptr ? src.offset(s.shape.member->getOperatorLoc()) : std::nullopt;
        if (!at || src.slice(*at, *at + 2) != "->") {
            return "its `->` is spelled in a macro";
        }
        arrow = *at;
    }
    if (!shapeTextMatches(src, s, r, id, arrow)) {
        return fmt::format("its text is not the {} form the rewriter expects",
                           detail::shapeName(s.shape.shape));
    }
    if (!s.info->member.empty() && s.shape.shape != Shape::Arrow &&
        s.shape.shape != Shape::ArrowAdd) {
        auto dot =
            s.shape.member != nullptr ? src.offset(s.shape.member->getOperatorLoc()) : std::nullopt;
        if (!dot || src.slice(*dot, *dot + 1) != ".") {
            return "the member access after it is spelled in a macro";
        }
    }
    return {};
}

} // namespace

SiteRanges siteRanges(const Source& src, const SiteRec& s) {
    const frontend::SiteSource& ss = *s.src;
    SiteRanges r;
    r.access = src.range(ss.access);
    r.base = src.range(ss.base);
    if (!ss.indices.empty()) {
        r.index = src.range(ss.indices[0]);
    }
    return r;
}

/// Sites whose text is not what emitSite's edits assume keep their arrays raw.
void Planner::checkSites() {
    for (auto& up : plan_.sites) {
        if (up->failure.empty()) {
            if (std::string why = checkSiteText(src_, *up); !why.empty()) {
                up->failure = why;
                up->failureAt =
                    up->src->expr != nullptr ? up->src->expr->getBeginLoc() : SourceLocation();
            }
        }
    }
}

void Planner::classifyUses() {
    // Which call argument each pointer reference is, if any.
    std::map<const DeclRefExpr*, ParamKey> passed;
    for (const CallExpr* call : plan_.facts.calls) {
        const FunctionDecl* callee = detail::patternOf(call->getDirectCallee());
        if (callee == nullptr) {
            continue;
        }
        unsigned shift = isa<CXXOperatorCallExpr>(call) && isa<CXXMethodDecl>(callee) ? 1 : 0;
        for (unsigned i = shift; i < call->getNumArgs(); ++i) {
            if (i - shift >= callee->getNumParams()) {
                break;
            }
            if (const auto* dre = dyn_cast<DeclRefExpr>(call->getArg(i)->IgnoreParenImpCasts())) {
                passed.emplace(dre, ParamKey{callee, i - shift});
            }
        }
    }
    // A pointer alias serves its parameter's accessor when every reference to it is the base of
    // an access site (the frontend recorded one only where all are) and its text can be edited.
    for (const detail::PointerAliasInit& a : plan_.aliases) {
        const auto* owner = dyn_cast_or_null<FunctionDecl>(a.var->getDeclContext());
        const bool ok =
            aliasEdits(src_, a).has_value() && owner != nullptr && owner->getBody() != nullptr &&
            everyReference(owner->getBody(), a.var,
                           [&](const DeclRefExpr* dre) { return plan_.isSiteBase(dre); });
        if (ok) {
            plan_.aliasByParamRef[a.param] = &a;
        }
    }
    // A rebased parameter: one rebase, every other reference a later access site.
    for (const detail::PointerRebase& r : plan_.rebases) {
        const auto* pv = cast<ParmVarDecl>(r.param->getDecl());
        const auto* owner = dyn_cast<FunctionDecl>(pv->getDeclContext());
        auto end = src_.offset(r.op->getEndLoc());
        bool ok = rebaseEdits(src_, r).has_value() && owner != nullptr &&
                  owner->getBody() != nullptr && end.has_value() &&
                  std::count_if(plan_.rebases.begin(), plan_.rebases.end(),
                                [&](const auto& o) { return o.param->getDecl() == pv; }) == 1;
        if (auto body = ok ? src_.range(owner->getBody()->getSourceRange()) : std::nullopt;
            !body || std::regex_search(src_.slice(*body),
                                       std::regex("\\bmp_" + pv->getNameAsString() + "\\b"))) {
            ok = false; // the view's name `mp_<name>` is taken (or the body cannot be read)
        }
        ok = ok && everyReference(owner->getBody(), pv, [&](const DeclRefExpr* dre) {
                 auto at = src_.offset(dre->getBeginLoc());
                 return dre == r.param || (plan_.isSiteBase(dre) && at && *at > *end);
             });
        if (ok) {
            plan_.rebaseByParamRef[r.param] = &r;
            plan_.rebasedName[pv] = "mp_" + pv->getNameAsString();
        }
    }
    for (const auto& [dre, key] : plan_.facts.paramUses) {
        Use u;
        u.dre = dre;
        u.key = key;
        if (plan_.isSiteBase(dre)) {
            u.kind = UseKind::SiteBase;
        } else if (plan_.aliasByParamRef.count(dre) != 0 ||
                   plan_.rebaseByParamRef.count(dre) != 0) {
            u.kind = UseKind::AliasInit;
        } else if (auto it = passed.find(dre); it != passed.end()) {
            u.kind = UseKind::HelperArg;
            u.helper = it->second;
        }
        plan_.uses.push_back(u);
    }
}

} // namespace memplace::rewrite::detail

// Reporting: turns the raw facts the kernel walker collected for one kernel into KernelInfo:
// loop ids and names, site ids and index classification (affine, indirect, unknown), launches,
// extents, aliasing with allocations, 2-D use, the arrays' final modes and order, feasibility,
// and the kernel's source ranges for the rewriter (KernelSource).
#include "frontend/analysis_internal.h"
#include "kernelinfo/feasibility.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace memplace::frontend::detail {

using namespace clang;
namespace ki = memplace::kernelinfo;

namespace {

ki::Poly renamePoly(const ki::Poly& p, const std::function<std::string(const std::string&)>& f) {
    ki::Poly out;
    for (const auto& m : p.monomials()) {
        ki::Poly term = ki::Poly::constant(m.scale);
        for (const auto& s : m.symbols) {
            term = term * ki::Poly::symbol(f(s));
        }
        out += term;
    }
    return out;
}

/// Turns the raw facts of one kernel into KernelInfo.
class KernelReporter {
public:
    KernelReporter(RawKernel& raw, const std::map<LocKey, int>& siteIds, const HostFacts& host,
                   const Locator& loc)
        : raw_(raw), siteIds_(siteIds), host_(host), loc_(loc) {}

    void report(ki::KernelInfo& k, KernelSource& ks);

private:
    void numberLoops(ki::KernelInfo& k);
    std::string displayName(const std::string& symbol) const;
    ki::IndexInfo classify(const SymValue& v, const std::string& text) const;
    void reportSites(ki::KernelInfo& k, KernelSource& ks);
    void reportLaunches(ki::KernelInfo& k, KernelSource& ks);
    void reportExtents(ki::KernelInfo& k);
    void reportTwoD(ki::KernelInfo& k);
    /// An array whose pointer escapes may be accessed where the analysis does not see it.
    void widenEscapedModes(ki::KernelInfo& k);
    /// Parameters in order, then globals, then shared arrays, each by declaration.
    static void sortArrays(ki::KernelInfo& k);
    /// The kernel's source ranges the rewriter edits.
    void describeSource(KernelSource& ks) const;

    RawKernel& raw_;
    const std::map<LocKey, int>& siteIds_;
    const HostFacts& host_;
    const Locator& loc_;
    std::vector<int> loopId_;           ///< raw loop -> id
    std::vector<std::string> loopName_; ///< raw loop -> display name
    std::vector<const RawLaunch*> launches_;
};

void KernelReporter::numberLoops(ki::KernelInfo& k) {
    std::vector<int> order(raw_.loops.size());
    for (size_t i = 0; i < order.size(); ++i) {
        order[i] = static_cast<int>(i);
    }
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return raw_.loops[a].key < raw_.loops[b].key; });
    loopId_.assign(raw_.loops.size(), -1);
    loopName_.assign(raw_.loops.size(), "");
    for (size_t id = 0; id < order.size(); ++id) {
        loopId_[order[id]] = static_cast<int>(id);
    }
    for (size_t r = 0; r < raw_.loops.size(); ++r) {
        const auto& l = raw_.loops[r];
        loopName_[r] = l.var.empty() ? fmt::format("loop{}", loopId_[r]) : l.var;
    }
    for (size_t id = 0; id < order.size(); ++id) {
        const RawLoop& rl = raw_.loops[order[id]];
        ki::LoopInfo li;
        li.id = static_cast<int>(id);
        li.kind = rl.kind;
        li.location = rl.location;
        li.var = rl.var;
        auto rename = [this](const std::string& s) { return displayName(s); };
        if (rl.init && rl.init->isPoly()) {
            li.init = renamePoly(rl.init->poly, rename);
        }
        if (rl.step && rl.step->isPoly()) {
            li.step = renamePoly(rl.step->poly, rename);
        }
        li.bound = rl.bound;
        li.tripCount = rl.tripCount;
        li.reason = rl.reason;
        li.parent = rl.parentRaw >= 0 ? loopId_[rl.parentRaw] : -1;
        li.callPath = rl.callPath;
        k.loops.push_back(std::move(li));
    }
}

std::string KernelReporter::displayName(const std::string& s) const {
    if (s.starts_with("$L")) {
        int raw = std::stoi(s.substr(2));
        return loopName_.at(raw);
    }
    return s;
}

ki::IndexInfo KernelReporter::classify(const SymValue& v, const std::string& text) const {
    ki::IndexInfo ix;
    ix.text = text;
    if (v.kind == SymValue::Kind::Unknown) {
        ix.kind = ki::IndexKind::Unknown;
        ix.reason = v.reason;
        return ix;
    }
    if (v.kind == SymValue::Kind::Indirect) {
        ix.kind = ki::IndexKind::Indirect;
        ix.via.assign(v.via.begin(), v.via.end());
        for (const LocKey& key : v.viaSites) {
            if (auto it = siteIds_.find(key); it != siteIds_.end()) {
                ix.viaSites.push_back(it->second);
            }
        }
        std::sort(ix.viaSites.begin(), ix.viaSites.end());
        ix.reason = v.reason;
        return ix;
    }
    // Affine: every monomial has at most one varying symbol, of degree one.
    std::map<std::string, ki::Poly> coeff;
    ki::Poly offset;
    for (const auto& m : v.poly.monomials()) {
        std::vector<std::string> varying;
        std::vector<std::string> rest;
        for (const auto& s : m.symbols) {
            (isVaryingSymbol(s) ? varying : rest).push_back(s);
        }
        if (varying.size() > 1) {
            ix.kind = ki::IndexKind::Unknown;
            ix.reason = varying[0] == varying[1]
                            ? fmt::format("not affine: '{}' is squared", displayName(varying[0]))
                            : fmt::format("not affine: the product of '{}' and '{}'",
                                          displayName(varying[0]), displayName(varying[1]));
            return ix;
        }
        ki::Poly c = ki::Poly::constant(m.scale);
        for (const auto& s : rest) {
            c = c * ki::Poly::symbol(s);
        }
        if (varying.empty()) {
            offset += c;
        } else {
            coeff[varying[0]] += c;
        }
    }
    ix.kind = ki::IndexKind::Affine;
    ix.offset = offset;
    // threadIdx, blockIdx, then loops outermost (lowest id) first.
    auto rank = [this](const std::string& s) {
        static const std::vector<std::string> kBuiltins = {
            "threadIdx.x", "threadIdx.y", "threadIdx.z", "blockIdx.x", "blockIdx.y", "blockIdx.z"};
        for (size_t i = 0; i < kBuiltins.size(); ++i) {
            if (s == kBuiltins[i]) {
                return static_cast<int>(i);
            }
        }
        return 100 + loopId_.at(std::stoi(s.substr(2)));
    };
    std::vector<std::pair<std::string, ki::Poly>> terms(coeff.begin(), coeff.end());
    std::sort(terms.begin(), terms.end(),
              [&](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
    std::map<std::string, int> nameCount;
    for (const auto& [sym, c] : terms) {
        ++nameCount[displayName(sym)];
    }
    for (const auto& [sym, c] : terms) {
        std::string name = displayName(sym);
        if (nameCount[name] > 1 && sym.starts_with("$L")) {
            name += fmt::format("@{}", raw_.loops[std::stoi(sym.substr(2))].location.line);
        }
        ix.terms.push_back({name, c});
    }
    return ix;
}

void KernelReporter::reportSites(ki::KernelInfo& k, KernelSource& ks) {
    std::vector<const RawSite*> sites;
    for (const auto& s : raw_.sites) {
        sites.push_back(&s);
    }
    std::sort(sites.begin(), sites.end(), [&](const auto* a, const auto* b) {
        return siteIds_.at(a->key) < siteIds_.at(b->key);
    });
    for (const RawSite* rs : sites) {
        ki::Site s;
        s.id = siteIds_.at(rs->key);
        s.array = rs->array;
        s.otherArrays = rs->otherArrays;
        s.location = rs->location;
        s.access = rs->access;
        s.form = rs->form;
        s.intrinsic = rs->intrinsic;
        s.member = rs->member;
        s.function = rs->function;
        s.callPath = rs->callPath;
        s.contexts = rs->contexts;
        s.index = classify(rs->flatPerContext[0], rs->indexText);
        for (size_t c = 1; c < rs->flatPerContext.size(); ++c) {
            ki::IndexInfo other = classify(rs->flatPerContext[c], rs->indexText);
            if (other == s.index) {
                continue;
            }
            if (s.index.kind == ki::IndexKind::Indirect || other.kind == ki::IndexKind::Indirect) {
                ki::IndexInfo merged;
                merged.kind = ki::IndexKind::Indirect;
                merged.text = rs->indexText;
                std::set<std::string> via(s.index.via.begin(), s.index.via.end());
                via.insert(other.via.begin(), other.via.end());
                std::set<int> vs(s.index.viaSites.begin(), s.index.viaSites.end());
                vs.insert(other.viaSites.begin(), other.viaSites.end());
                merged.via.assign(via.begin(), via.end());
                merged.viaSites.assign(vs.begin(), vs.end());
                merged.reason = "the index differs between the call paths that reach the site";
                s.index = std::move(merged);
            } else {
                ki::IndexInfo merged;
                merged.kind = ki::IndexKind::Unknown;
                merged.text = rs->indexText;
                merged.reason =
                    fmt::format("the index differs between the {} call paths that reach the site",
                                rs->contexts);
                s.index = std::move(merged);
                break;
            }
        }
        for (size_t d = 0; d < rs->subscripts.size(); ++d) {
            s.subscripts.push_back(classify(rs->subscripts[d], rs->subscriptTexts[d]));
        }
        for (int l : rs->loopsRaw) {
            s.loops.push_back(loopId_[l]);
        }
        k.sites.push_back(std::move(s));
        SiteSource src = rs->source;
        src.id = k.sites.back().id;
        ks.sites.push_back(std::move(src));
    }
}

void KernelReporter::reportLaunches(ki::KernelInfo& k, KernelSource& ks) {
    for (const std::size_t i : host_.launchesOfKernel(raw_.fn)) {
        const RawLaunch& l = host_.launches[i];
        launches_.push_back(&l);
        k.launches.push_back(l.site);
        ks.launches.push_back(l.source);
    }
    // Launch geometry shared by every launch.
    auto common = [&](auto member) -> std::optional<std::array<int64_t, 3>> {
        if (launches_.empty()) {
            return std::nullopt;
        }
        const auto& first = (launches_[0]->site.*member).value;
        for (const auto* l : launches_) {
            const auto& v = (l->site.*member).value;
            if (v.size() != 3 || v != first) {
                return std::nullopt;
            }
        }
        return std::array<int64_t, 3>{first[0], first[1], first[2]};
    };
    k.blockDim = common(&ki::LaunchSite::block);
    k.gridDim = common(&ki::LaunchSite::grid);

    // Aliasing: two pointer parameters receiving the same allocation at some launch.
    std::set<std::pair<int, int>> seen;
    for (const auto* l : launches_) {
        for (size_t i = 0; i < k.arrays.size(); ++i) {
            const ki::ArrayInfo& a = k.arrays[i];
            if (a.kind != ki::ArrayKind::Parameter) {
                continue;
            }
            for (size_t j = i + 1; j < k.arrays.size(); ++j) {
                const ki::ArrayInfo& b = k.arrays[j];
                if (b.kind != ki::ArrayKind::Parameter) {
                    continue;
                }
                auto ia = static_cast<size_t>(a.paramIndex);
                auto ib = static_cast<size_t>(b.paramIndex);
                if (ia >= l->argRoots.size() || ib >= l->argRoots.size()) {
                    continue;
                }
                const ValueDecl* ra = l->argRoots[ia];
                if (ra == nullptr || ra != l->argRoots[ib] ||
                    !seen.insert({static_cast<int>(i), static_cast<int>(j)}).second) {
                    continue;
                }
                ki::Hazard h;
                h.kind = ki::HazardKind::Aliasing;
                h.array = a.name;
                h.other = b.name;
                h.location = l->site.location;
                h.message = fmt::format("'{}' and '{}' point into the same allocation '{}'", a.name,
                                        b.name, ra->getNameAsString());
                k.hazards.push_back(std::move(h));
            }
        }
    }
}

void KernelReporter::reportExtents(ki::KernelInfo& k) {
    for (ki::ArrayInfo& a : k.arrays) {
        if (a.kind == ki::ArrayKind::Shared && !a.extent.bytes) {
            // extern __shared__: the launches' dynamic shared memory size.
            std::optional<uint64_t> best;
            bool all = !launches_.empty();
            for (const auto* l : launches_) {
                const auto& v = l->site.sharedBytes.value;
                if (v.size() != 1 || v[0] < 0) {
                    all = false;
                    break;
                }
                best = std::max<uint64_t>(best.value_or(0), static_cast<uint64_t>(v[0]));
            }
            if (all && best) {
                a.extent.bytes = best;
                a.extent.source = "the launches' shared memory size";
            }
            continue;
        }
        if (a.kind != ki::ArrayKind::Parameter) {
            continue;
        }
        if (launches_.empty()) {
            a.extent.source = "no launch of the kernel in this file";
            continue;
        }
        std::optional<uint64_t> best;
        std::string bestSource;
        std::string why;
        for (const auto* l : launches_) {
            auto p = static_cast<size_t>(a.paramIndex);
            const ValueDecl* root = p < l->argRoots.size() ? l->argRoots[p] : nullptr;
            std::string at = ki::formatLocation(l->site.location, loc_.mainName());
            if (root == nullptr) {
                why = fmt::format("the launch at {} passes '{}'", at,
                                  p < l->site.arguments.size() ? l->site.arguments[p] : "?");
                break;
            }
            if (!l->argExact[p]) {
                why = fmt::format("the launch at {} passes a pointer into '{}'", at,
                                  root->getNameAsString());
                break;
            }
            bool found = false;
            for (const auto& alloc : host_.allocations) {
                if (alloc.var != root) {
                    continue;
                }
                found = true;
                if (!alloc.site.bytes) {
                    why = fmt::format("'{}' is allocated at {} with a size known at run time",
                                      root->getNameAsString(),
                                      ki::formatLocation(alloc.site.location, loc_.mainName()));
                    break;
                }
                if (!best || *alloc.site.bytes > *best) {
                    best = alloc.site.bytes;
                    bestSource =
                        fmt::format("{} at {}", alloc.site.call,
                                    ki::formatLocation(alloc.site.location, loc_.mainName()));
                }
            }
            if (!found) {
                why = fmt::format("no cudaMalloc of '{}' in this file", root->getNameAsString());
            }
            if (!why.empty()) {
                break;
            }
        }
        if (why.empty() && best) {
            a.extent.bytes = best;
            a.extent.source = bestSource;
        } else {
            a.extent.source = why;
        }
    }
}

/// The row length an affine index shows, when it shows 2-D use: `y * W + x`.
std::optional<ki::Poly> rowLengthOf(const ki::IndexInfo& ix, const std::set<std::string>& params) {
    if (ix.kind != ki::IndexKind::Affine) {
        return std::nullopt;
    }
    const ki::Poly one = ki::Poly::constant(1);
    bool hasUnit = std::any_of(ix.terms.begin(), ix.terms.end(),
                               [&](const ki::AffineTerm& t) { return t.coeff == one; });
    if (!hasUnit) {
        return std::nullopt;
    }
    auto launchOnly = [](const ki::Poly& c) {
        return !c.mentions([](const std::string& s) {
            return !s.starts_with("blockDim.") && !s.starts_with("gridDim.");
        });
    };
    for (const auto& t : ix.terms) {
        if (t.var == "threadIdx.y" && !(t.coeff == one) && !t.coeff.isConstant() &&
            !launchOnly(t.coeff)) {
            return t.coeff;
        }
    }
    // A row a block owns (`blockIdx.x * chunk + ...`) is a 1-D chunk, not a 2-D use: no thread
    // of the block reads a neighbouring row, so a 2-D texture would only add its index split
    // (and, for a partial last row, a pitched copy per launch; measured 1.2-8x slower on an
    // H100: decision 019).
    const ki::AffineTerm* best = nullptr;
    for (const auto& t : ix.terms) {
        const auto& ms = t.coeff.monomials();
        if (ms.size() == 1 && ms[0].scale == 1 && !ms[0].symbols.empty() &&
            !t.var.starts_with("blockIdx.") &&
            std::any_of(ms[0].symbols.begin(), ms[0].symbols.end(),
                        [&](const std::string& s) { return params.count(s) > 0; }) &&
            (best == nullptr || ms[0].symbols.size() < best->coeff.monomials()[0].symbols.size())) {
            best = &t;
        }
    }
    if (best != nullptr) {
        return best->coeff;
    }
    return std::nullopt;
}

void KernelReporter::reportTwoD(ki::KernelInfo& k) {
    std::set<std::string> params;
    for (const auto& p : k.params) {
        if (!p.pointer) {
            params.insert(p.name);
        }
    }
    for (ki::ArrayInfo& a : k.arrays) {
        if (a.dims.size() >= 2 || a.kind == ki::ArrayKind::TextureObject) {
            continue;
        }
        std::optional<ki::Poly> row;
        bool conflict = false;
        for (const auto& s : k.sites) {
            if (s.array != a.name) {
                continue;
            }
            if (auto r = rowLengthOf(s.index, params)) {
                if (row && !(*row == *r)) {
                    conflict = true;
                }
                row = row ? row : r;
            }
        }
        if (row && !conflict) {
            a.dimensionality = 2;
            a.rowLength = row;
        }
    }
}

void KernelReporter::report(ki::KernelInfo& k, KernelSource& ks) {
    k = raw_.info;
    numberLoops(k);
    reportSites(k, ks);
    for (const auto& h : raw_.hazards) {
        k.hazards.push_back(h.hazard);
    }
    widenEscapedModes(k);
    reportLaunches(k, ks);
    reportExtents(k);
    reportTwoD(k);
    std::sort(k.hazards.begin(), k.hazards.end(), [](const ki::Hazard& a, const ki::Hazard& b) {
        return std::tie(a.location.file, a.location.line, a.location.column, a.kind, a.array,
                        a.message) < std::tie(b.location.file, b.location.line, b.location.column,
                                              b.kind, b.array, b.message);
    });
    sortArrays(k);
    ki::computeFeasibility(k);
    describeSource(ks);
}

void KernelReporter::widenEscapedModes(ki::KernelInfo& k) {
    // An array whose pointer escapes may be accessed where the analysis does not see it:
    // read if its elements are const, read and written otherwise.
    for (ki::ArrayInfo& a : k.arrays) {
        for (const auto& h : k.hazards) {
            if (h.array == a.name &&
                (h.kind == ki::HazardKind::PointerArithmetic || h.kind == ki::HazardKind::Stored ||
                 h.kind == ki::HazardKind::Escapes || h.kind == ki::HazardKind::Reinterpreted)) {
                a.mode = ki::combine(a.mode,
                                     a.isConst ? ki::AccessMode::Read : ki::AccessMode::ReadWrite);
            }
        }
    }
}

void KernelReporter::sortArrays(ki::KernelInfo& k) {
    // Arrays: parameters in order, then globals, then shared arrays, each by declaration.
    auto group = [](const ki::ArrayInfo& a) {
        switch (a.kind) {
        case ki::ArrayKind::Parameter:
        case ki::ArrayKind::TextureObject:
            return 0;
        case ki::ArrayKind::DeviceGlobal:
        case ki::ArrayKind::ConstantGlobal:
            return 1;
        case ki::ArrayKind::Shared:
            return 2;
        }
        return 3;
    };
    std::sort(k.arrays.begin(), k.arrays.end(), [&](const auto& a, const auto& b) {
        int ga = group(a);
        int gb = group(b);
        int pa = ga == 0 ? a.paramIndex : 0;
        int pb = gb == 0 ? b.paramIndex : 0;
        return std::tie(ga, pa, a.declaration.file, a.declaration.line, a.declaration.column,
                        a.name) < std::tie(gb, pb, b.declaration.file, b.declaration.line,
                                           b.declaration.column, b.name);
    });
}

void KernelReporter::describeSource(KernelSource& ks) const {
    const FunctionDecl* fn = raw_.fn;
    ks.decl = fn;
    const FunctionDecl* def = fn->getTemplateInstantiationPattern();
    ks.definition = def != nullptr ? def : fn;
    ks.templ = fn->getPrimaryTemplate();
    if (ks.templ == nullptr) {
        ks.templ = ks.definition->getDescribedFunctionTemplate();
    }
    if (ks.templ != nullptr) {
        ks.templateParams = loc_.fileRange(ks.templ->getTemplateParameters()->getSourceRange());
    }
    if (FunctionTypeLoc ftl = ks.definition->getFunctionTypeLoc()) {
        ks.paramList = loc_.fileRange(SourceRange(ftl.getLParenLoc(), ftl.getRParenLoc()));
        ks.declaration =
            loc_.fileRange(SourceRange(ks.definition->getBeginLoc(), ftl.getRParenLoc()));
    }
    for (const ParmVarDecl* p : ks.definition->parameters()) {
        ks.params.push_back(loc_.fileRange(p->getSourceRange()));
    }
    if (const auto* body = dyn_cast_or_null<CompoundStmt>(ks.definition->getBody())) {
        ks.bodyLBrace = body->getLBracLoc();
        ks.bodyRBrace = body->getRBracLoc();
        ks.body = loc_.fileRange(body->getSourceRange());
    }
    ks.helpersWithArrays = raw_.helpersWithArrays;
}

} // namespace

void reportKernel(RawKernel& raw, const std::map<LocKey, int>& siteIds, const HostFacts& host,
                  const Locator& loc, kernelinfo::KernelInfo& k, KernelSource& ks) {
    KernelReporter(raw, siteIds, host, loc).report(k, ks);
}

} // namespace memplace::frontend::detail

// The driver: prepares the source (chevrons, shim, flags), parses it with clang, finds the
// kernels, runs the kernel and host analyses (matching), then turns their raw facts into
// KernelInfo (reporting): file-wide site ids, loop ids, index classification, launches,
// extents, aliasing, 2-D use, feasibility and warnings.
#include "common/file_io.h"
#include "frontend/analysis_internal.h"
#include "frontend/source_prep.h"
#include "kernelinfo/feasibility.h"

#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Frontend/ASTUnit.h>
#include <clang/Tooling/Tooling.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#ifndef MEMPLACE_CLANG_RESOURCE_DIR
#define MEMPLACE_CLANG_RESOURCE_DIR ""
#endif
#ifndef MEMPLACE_CLANG_TOOL
#define MEMPLACE_CLANG_TOOL "clang++"
#endif

namespace memplace::frontend {

using namespace clang;
namespace ki = memplace::kernelinfo;
using detail::LocKey;
using detail::SymValue;

std::string defaultResourceDir() {
    return MEMPLACE_CLANG_RESOURCE_DIR;
}

Analysis::Analysis() = default;
Analysis::~Analysis() = default;
ASTContext& Analysis::context() const {
    return ast_->getASTContext();
}
SourceManager& Analysis::sourceManager() const {
    return ast_->getSourceManager();
}
const LangOptions& Analysis::langOptions() const {
    return ast_->getLangOpts();
}
bool Analysis::isProgramFile(FileID file) const {
    return detail::isProgramFilePath(ast_->getSourceManager(), file);
}

namespace {

/// Collects clang's errors (and the notes that follow them) as memplace diagnostics.
class CollectingConsumer : public DiagnosticConsumer {
public:
    explicit CollectingConsumer(std::string mainName) : mainName_(std::move(mainName)) {}

    void HandleDiagnostic(DiagnosticsEngine::Level level, const clang::Diagnostic& info) override {
        DiagnosticConsumer::HandleDiagnostic(level, info);
        bool error = level >= DiagnosticsEngine::Error;
        if (level == DiagnosticsEngine::Note ? !lastKept_ : !error) {
            lastKept_ = false;
            return;
        }
        lastKept_ = true;
        llvm::SmallString<256> msg;
        info.FormatDiagnostic(msg);
        memplace::Diagnostic d;
        d.severity = error ? Severity::Error : Severity::Note;
        d.message = msg.str().str();
        if (info.hasSourceManager() && info.getLocation().isValid()) {
            const SourceManager& sm = info.getSourceManager();
            clang::SourceLocation f = sm.getFileLoc(info.getLocation());
            d.location.file = sm.getFileID(f) == sm.getMainFileID()
                                  ? mainName_
                                  : detail::displayPath(sm.getFilename(f).str());
            d.location.line = sm.getSpellingLineNumber(f);
            d.location.column = sm.getSpellingColumnNumber(f);
            bool invalid = false;
            StringRef buf = sm.getBufferData(sm.getFileID(f), &invalid);
            if (!invalid) {
                d.sourceLine = std::string(lineOf(buf, d.location.line));
            }
        }
        diags_.add(std::move(d));
    }

    DiagnosticList& diagnostics() { return diags_; }

private:
    std::string mainName_;
    DiagnosticList diags_;
    bool lastKept_ = false;
};

/// Kernels defined in the program's files: plain kernels and template instantiations; templates
/// without instantiations are listed apart.
class KernelFinder : public RecursiveASTVisitor<KernelFinder> {
public:
    explicit KernelFinder(const detail::Locator& loc) : loc_(loc) {}
    bool shouldVisitTemplateInstantiations() const { return true; }

    bool TraverseDecl(Decl* d) {
        if (d != nullptr && !isa<TranslationUnitDecl>(d) && !loc_.inProgramFile(d->getLocation())) {
            return true;
        }
        return RecursiveASTVisitor::TraverseDecl(d);
    }

    bool VisitFunctionDecl(FunctionDecl* fd) {
        if (!fd->hasAttr<CUDAGlobalAttr>()) {
            return true;
        }
        if (const FunctionTemplateDecl* t = fd->getDescribedFunctionTemplate()) {
            if (seenTemplates_.insert(t).second) {
                templates.push_back(t);
            }
            return true;
        }
        if (fd->isDependentContext() || !fd->hasBody() || !fd->isThisDeclarationADefinition()) {
            if (!(fd->isTemplateInstantiation() && fd->hasBody())) {
                return true;
            }
        }
        if (seen_.insert(fd->getCanonicalDecl()).second) {
            kernels.push_back(fd);
        }
        return true;
    }

    std::vector<const FunctionDecl*> kernels;
    std::vector<const FunctionTemplateDecl*> templates;

private:
    const detail::Locator& loc_;
    std::set<const Decl*> seen_;
    std::set<const FunctionTemplateDecl*> seenTemplates_;
};

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
    KernelReporter(detail::RawKernel& raw, const std::map<LocKey, int>& siteIds,
                   const detail::HostFacts& host, const detail::Locator& loc)
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

    detail::RawKernel& raw_;
    const std::map<LocKey, int>& siteIds_;
    const detail::HostFacts& host_;
    const detail::Locator& loc_;
    std::vector<int> loopId_;           ///< raw loop -> id
    std::vector<std::string> loopName_; ///< raw loop -> display name
    std::vector<const detail::RawLaunch*> launches_;
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
        const detail::RawLoop& rl = raw_.loops[order[id]];
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
            (detail::isVaryingSymbol(s) ? varying : rest).push_back(s);
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
    std::vector<const detail::RawSite*> sites;
    for (const auto& s : raw_.sites) {
        sites.push_back(&s);
    }
    std::sort(sites.begin(), sites.end(), [&](const auto* a, const auto* b) {
        return siteIds_.at(a->key) < siteIds_.at(b->key);
    });
    for (const detail::RawSite* rs : sites) {
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
        const detail::RawLaunch& l = host_.launches[i];
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
    // H100, docs/NOTES.md 2026-11-25).
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
    reportLaunches(k, ks);
    reportExtents(k);
    reportTwoD(k);
    std::sort(k.hazards.begin(), k.hazards.end(), [](const ki::Hazard& a, const ki::Hazard& b) {
        return std::tie(a.location.file, a.location.line, a.location.column, a.kind, a.array,
                        a.message) < std::tie(b.location.file, b.location.line, b.location.column,
                                              b.kind, b.array, b.message);
    });
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
    ki::computeFeasibility(k);

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

/// A launched kernel with no definition among the program's files would silently stay as
/// written (and a program whose kernels all live elsewhere would be "rewritten" into itself):
/// one warning per such kernel, at its first launch.
void warnUnanalysedLaunches(const detail::HostFacts& host,
                            const std::vector<detail::RawKernel>& raws, const detail::Locator& loc,
                            DiagnosticList& warnings) {
    std::set<const FunctionDecl*> analysed;
    for (const auto& r : raws) {
        analysed.insert(r.fn->getCanonicalDecl());
    }
    std::set<const FunctionDecl*> warned;
    for (const detail::RawLaunch& l : host.launches) {
        if (l.kernel == nullptr || analysed.count(l.kernel->getCanonicalDecl()) != 0 ||
            !warned.insert(l.kernel->getCanonicalDecl()).second) {
            continue;
        }
        const FunctionDecl* def = l.kernel->getDefinition();
        if (def == nullptr && l.kernel->getTemplateInstantiationPattern() != nullptr) {
            def = l.kernel->getTemplateInstantiationPattern();
        }
        std::string where;
        if (def == nullptr) {
            where = "it is only declared in this translation unit";
        } else {
            SourceLocation at = loc.location(def->getLocation());
            where = fmt::format("it is defined in {}, which is not one of the program's files (the "
                                "main file and the files it includes from its folder tree)",
                                at.file.empty() ? loc.mainName() : at.file);
        }
        SourceLocation at = l.site.location;
        at.file = at.file.empty() ? loc.mainName() : at.file;
        warnings.warning(
            at,
            fmt::format("launch of kernel '{}' with no kernel definition analysed: {}; "
                        "the kernel is neither analysed nor rewritten",
                        l.site.kernel, where),
            loc.sourceLine(l.call->getBeginLoc()));
    }
}

} // namespace

class AnalysisBuilder {
public:
    static Expected<std::unique_ptr<Analysis>> build(const AnalyzeOptions& options);
};

Expected<std::unique_ptr<Analysis>> AnalysisBuilder::build(const AnalyzeOptions& options) {
    namespace fs = std::filesystem;
    auto text = readFile(options.file);
    if (!text) {
        return std::move(text).takeFailure();
    }
    auto cuda = findCudaInstallation(options.extraArgs);
    if (!cuda) {
        return std::move(cuda).takeFailure();
    }
    auto analysis = std::make_unique<Analysis>();
    analysis->parsedSource_ = normalizeLaunchChevrons(*text);

    CompileFlagsInput flags;
    flags.cudaPath = *cuda;
    flags.resourceDir = options.resourceDir.empty() ? defaultResourceDir() : options.resourceDir;
    flags.gpuArch = options.gpuArch;
    flags.extraArgs = options.extraArgs;
    flags.hostOpenMpDir = findHostOpenMpIncludeDir();
    std::vector<std::string> args = compileFlags(flags);

    std::error_code ec;
    fs::path abs = fs::absolute(options.file, ec);
    CollectingConsumer consumer(options.file);
    tooling::FileContentMappings shim = {
        {std::string(kShimTextureFetchPath), std::string(shimTextureFetchContent())},
        {std::string(kShimHostMinMaxPath), std::string(shimHostMinMaxContent())},
        {std::string(kShimOmpPath), std::string(shimOmpContent())}};
    analysis->ast_ = tooling::buildASTFromCodeWithArgs(
        analysis->parsedSource_, args, abs.string(), MEMPLACE_CLANG_TOOL,
        std::make_shared<PCHContainerOperations>(), tooling::getClangStripDependencyFileAdjuster(),
        shim, &consumer);
    if (!analysis->ast_ || consumer.getNumErrors() > 0) {
        Failure f;
        f.diagnostics = consumer.diagnostics();
        if (!f.diagnostics.hasErrors()) {
            f.diagnostics.error({options.file, 0, 0}, "clang could not parse the file");
        }
        std::vector<std::string> messages;
        for (const auto& d : f.diagnostics.all()) {
            messages.push_back(d.message);
        }
        for (const std::string& w : parseWorkarounds(messages)) {
            f.diagnostics.note({options.file, 0, 0}, w);
        }
        f.diagnostics.note({options.file, 0, 0},
                           fmt::format("analysed as CUDA for {} with the CUDA installation at "
                                       "{}; add clang arguments after `--`",
                                       options.gpuArch, *cuda));
        return f;
    }

    ASTContext& ctx = analysis->ast_->getASTContext();
    detail::Locator loc(analysis->ast_->getSourceManager(), analysis->ast_->getLangOpts(),
                        options.file);

    KernelFinder finder(loc);
    finder.TraverseDecl(ctx.getTranslationUnitDecl());
    detail::HostFacts host = detail::analyzeHost(ctx, loc);

    std::vector<detail::RawKernel> raws;
    raws.reserve(finder.kernels.size());
    for (const FunctionDecl* fn : finder.kernels) {
        raws.push_back(detail::analyzeKernel(fn, ctx, loc));
    }

    // Order: by definition, instantiations by their first launch, then by name.
    auto firstLaunch = [&](const FunctionDecl* fn) {
        const std::vector<size_t>& of = host.launchesOfKernel(fn);
        return of.empty() ? host.launches.size() : of.front();
    };
    std::vector<size_t> order(raws.size());
    for (size_t i = 0; i < order.size(); ++i) {
        order[i] = i;
    }
    const SourceManager& sm = analysis->ast_->getSourceManager();
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        auto key = [&](size_t i) {
            const FunctionDecl* fn = raws[i].fn;
            return std::make_tuple(detail::locKey(sm, fn->getLocation()), firstLaunch(fn),
                                   raws[i].info.instantiation);
        };
        return key(a) < key(b);
    });

    // File-wide site ids, in source order.
    std::map<LocKey, int> siteIds;
    for (const auto& r : raws) {
        for (const auto& s : r.sites) {
            siteIds.emplace(s.key, 0);
        }
    }
    int next = 0;
    for (auto& [key, id] : siteIds) {
        id = next++;
    }
    analysis->info_.file = options.file;
    analysis->info_.siteCount = next;

    std::set<std::pair<std::string, std::string>> warned;
    for (size_t i : order) {
        ki::KernelInfo k;
        KernelSource ks;
        KernelReporter(raws[i], siteIds, host, loc).report(k, ks);
        std::vector<detail::RawHazard> hazards = raws[i].hazards;
        std::sort(hazards.begin(), hazards.end(), [](const auto& a, const auto& b) {
            const auto& la = a.hazard.location;
            const auto& lb = b.hazard.location;
            return std::tie(la.file, la.line, la.column) < std::tie(lb.file, lb.line, lb.column);
        });
        for (const auto& h : hazards) {
            const ki::ArrayInfo* a = k.findArray(h.hazard.array);
            if (!ki::restrictsToHome(h.hazard.kind) || a == nullptr) {
                continue;
            }
            std::string msg =
                fmt::format("kernel '{}': {}; '{}' stays in {} memory", k.name, h.hazard.message,
                            a->name, placeName(ki::homePlace(a->kind)));
            std::string where = ki::formatLocation(h.hazard.location);
            if (warned.insert({where, msg}).second) {
                SourceLocation at = h.hazard.location;
                at.file = at.file.empty() ? options.file : at.file;
                analysis->warnings_.warning(at, msg, loc.sourceLine(h.loc));
            }
        }
        analysis->info_.kernels.push_back(std::move(k));
        analysis->kernels_.push_back(std::move(ks));
    }
    for (const FunctionTemplateDecl* t : finder.templates) {
        bool instantiated = std::any_of(raws.begin(), raws.end(), [&](const auto& r) {
            return r.fn->getPrimaryTemplate() == t;
        });
        if (!instantiated) {
            SourceLocation at = loc.location(t->getLocation());
            at.file = at.file.empty() ? options.file : at.file;
            analysis->warnings_.warning(
                at,
                fmt::format("kernel template '{}' is never launched in this file: there is no "
                            "instantiation to analyse",
                            t->getNameAsString()),
                loc.sourceLine(t->getLocation()));
        }
    }
    warnUnanalysedLaunches(host, raws, loc, analysis->warnings_);
    // One entry per allocation as written (a host template's instantiations repeat it), unless
    // the instantiations allocate different constant sizes.
    for (const auto& a : host.allocations) {
        bool seen = std::any_of(analysis->info_.allocations.begin(),
                                analysis->info_.allocations.end(), [&](const auto& b) {
                                    return b.location == a.site.location &&
                                           b.variable == a.site.variable && b.bytes == a.site.bytes;
                                });
        if (!seen) {
            analysis->info_.allocations.push_back(a.site);
        }
    }
    for (const auto& d : analysis->warnings_.all()) {
        std::string f = d.format();
        analysis->info_.warnings.push_back(f.substr(0, f.find('\n')));
    }
    return std::move(analysis);
}

Expected<std::unique_ptr<Analysis>> analyze(const AnalyzeOptions& options) {
    return AnalysisBuilder::build(options);
}

Expected<kernelinfo::FileInfo> analyzeFile(const AnalyzeOptions& options,
                                           DiagnosticList* warnings) {
    auto a = analyze(options);
    if (!a) {
        return std::move(a).takeFailure();
    }
    if (warnings != nullptr) {
        warnings->append((*a)->warnings());
    }
    return (*a)->info();
}

} // namespace memplace::frontend

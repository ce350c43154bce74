// The driver: prepares the source (chevrons, shim, flags), parses it with clang, finds the
// kernels, runs the kernel and host analyses (matching), then turns their raw facts into
// KernelInfo (reporting): file-wide site ids, loop ids, index classification, launches,
// extents, aliasing, 2-D use, feasibility and warnings.
#include "common/file_io.h"
#include "frontend/analysis_internal.h"
#include "frontend/onchip_analysis.h"
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
            if (seenTemplates_.insert(t->getCanonicalDecl()).second) { // once per template
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

/// Builds an Analysis (a friend of it): parses the file, analyses the kernels and the host code,
/// and reports the kernels in a stable order.
class AnalysisBuilder {
public:
    static Expected<std::unique_ptr<Analysis>> build(const AnalyzeOptions& options);

private:
    /// The prepared source parsed by clang; on errors, clang's diagnostics with the workarounds
    /// that may help and how the file was analysed.
    static Expected<std::unique_ptr<Analysis>> parse(const AnalyzeOptions& options);
    /// Reports the kernels in `order`, each with a warning per hazard that keeps an array home.
    static void reportKernels(Analysis& analysis, std::vector<detail::RawKernel>& raws,
                              const std::vector<size_t>& order,
                              const std::map<LocKey, int>& siteIds, const detail::HostFacts& host,
                              const detail::Locator& loc, const std::string& file);
};

Expected<std::unique_ptr<Analysis>> AnalysisBuilder::parse(const AnalyzeOptions& options) {
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
        {std::string(kShimNvccHostHeadersPath), std::string(shimNvccHostHeadersContent())},
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
    return std::move(analysis);
}

namespace {

/// The order kernels are reported in: by definition, instantiations by their first launch, then
/// by name.
std::vector<size_t> kernelOrder(const std::vector<detail::RawKernel>& raws,
                                const detail::HostFacts& host, const SourceManager& sm) {
    auto firstLaunch = [&](const FunctionDecl* fn) {
        const std::vector<size_t>& of = host.launchesOfKernel(fn);
        return of.empty() ? host.launches.size() : of.front();
    };
    std::vector<size_t> order(raws.size());
    for (size_t i = 0; i < order.size(); ++i) {
        order[i] = i;
    }
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        auto key = [&](size_t i) {
            const FunctionDecl* fn = raws[i].fn;
            return std::make_tuple(detail::locKey(sm, fn->getLocation()), firstLaunch(fn),
                                   raws[i].info.instantiation);
        };
        return key(a) < key(b);
    });
    return order;
}

/// File-wide site ids, in source order.
std::map<LocKey, int> numberSites(const std::vector<detail::RawKernel>& raws) {
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
    return siteIds;
}

/// A kernel template with no instantiation has nothing to analyse: one warning each.
void warnUninstantiated(const std::vector<const FunctionTemplateDecl*>& templates,
                        const std::vector<detail::RawKernel>& raws, const detail::Locator& loc,
                        const std::string& file, DiagnosticList& warnings) {
    for (const FunctionTemplateDecl* t : templates) {
        bool instantiated = std::any_of(raws.begin(), raws.end(), [&](const auto& r) {
            // Canonical: a template declared before its definition has one primary template.
            const FunctionTemplateDecl* primary = r.fn->getPrimaryTemplate();
            return primary != nullptr && primary->getCanonicalDecl() == t->getCanonicalDecl();
        });
        if (!instantiated) {
            SourceLocation at = loc.location(t->getLocation());
            at.file = at.file.empty() ? file : at.file;
            warnings.warning(
                at,
                fmt::format("kernel template '{}' is never launched in this file: there is no "
                            "instantiation to analyse",
                            t->getNameAsString()),
                loc.sourceLine(t->getLocation()));
        }
    }
}

/// One entry per allocation as written (a host template's instantiations repeat it), unless the
/// instantiations allocate different constant sizes.
void addAllocations(const detail::HostFacts& host, ki::FileInfo& info) {
    for (const auto& a : host.allocations) {
        bool seen =
            std::any_of(info.allocations.begin(), info.allocations.end(), [&](const auto& b) {
                return b.location == a.site.location && b.variable == a.site.variable &&
                       b.bytes == a.site.bytes;
            });
        if (!seen) {
            info.allocations.push_back(a.site);
        }
    }
}

} // namespace

void AnalysisBuilder::reportKernels(Analysis& analysis, std::vector<detail::RawKernel>& raws,
                                    const std::vector<size_t>& order,
                                    const std::map<LocKey, int>& siteIds,
                                    const detail::HostFacts& host, const detail::Locator& loc,
                                    const std::string& file) {
    std::set<std::pair<std::string, std::string>> warned;
    for (size_t i : order) {
        ki::KernelInfo k;
        KernelSource ks;
        detail::reportKernel(raws[i], siteIds, host, loc, k, ks);
        detail::analyzeOnChip(raws[i], siteIds, loc, k);
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
                at.file = at.file.empty() ? file : at.file;
                analysis.warnings_.warning(at, msg, loc.sourceLine(h.loc));
            }
        }
        analysis.info_.kernels.push_back(std::move(k));
        analysis.kernels_.push_back(std::move(ks));
    }
}

Expected<std::unique_ptr<Analysis>> AnalysisBuilder::build(const AnalyzeOptions& options) {
    auto parsed = parse(options);
    if (!parsed) {
        return std::move(parsed).takeFailure();
    }
    std::unique_ptr<Analysis> analysis = std::move(*parsed);
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
    const std::vector<size_t> order = kernelOrder(raws, host, analysis->ast_->getSourceManager());
    const std::map<LocKey, int> siteIds = numberSites(raws);
    analysis->info_.file = options.file;
    analysis->info_.siteCount = static_cast<int>(siteIds.size());

    reportKernels(*analysis, raws, order, siteIds, host, loc, options.file);
    warnUninstantiated(finder.templates, raws, loc, options.file, analysis->warnings_);
    warnUnanalysedLaunches(host, raws, loc, analysis->warnings_);
    addAllocations(host, analysis->info_);
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

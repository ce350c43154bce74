// The rewriter (rewrite.h): plans what can be made placement-agnostic (kernels, arrays, helpers,
// launches; plan.h), then emits the edits (emitter.h). Planning checks everything an edit relies
// on, so emitting never fails halfway; whatever a check refuses stays as written, with a
// warning. This file: the entry point, the preamble, the outputs cut back into their files, and
// the reports.
#include "rewrite/rewrite.h"

#include "rewrite/descriptor.h"
#include "rewrite/emitter.h"

#include <clang/Lex/Lexer.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

namespace memplace::rewrite::detail {

using namespace clang;
using clang::SourceLocation; // memplace::SourceLocation is written in full

std::string Emitter::preamble() const {
    std::string file = a_.info().file;
    size_t slash = file.rfind('/');
    std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
    bool runtime = std::any_of(plan_.kernels.begin(), plan_.kernels.end(),
                               [](const KernelPlan& g) { return g.ok; });
    std::string out;
    if (runtime) {
        out += fmt::format("// memplace: rewritten by `memplace rewrite` from {}: kernels are "
                           "templates over\n// accessors, launches go through the runtime "
                           "(docs/rewriting.md).\n",
                           base);
        if (plan_.facts.ownConstantBytes > 0) {
            out += fmt::format("// The file declares {} bytes of __constant__ data of its own: "
                               "the constant pool\n// gets the rest of the 64 KB.\n",
                               plan_.facts.ownConstantBytes);
            out +=
                fmt::format("#define MEMPLACE_CONSTANT_POOL_BYTES (65536 - ({} + 15) / 16 * 16)\n",
                            plan_.facts.ownConstantBytes);
        }
        out += "#include \"memplace/memplace.cuh\"\n";
    } else {
        out += fmt::format("// memplace: {} by `memplace rewrite{}` from {}:\n// launches are "
                           "written MEMPLACE_LAUNCH and dynamic shared memory "
                           "MEMPLACE_DYNAMIC_SHARED,\n// so that the program also builds under "
                           "the CPU emulation layer (docs/rewriting.md).\n",
                           opt_.launchesOnly ? "launches rewritten" : "rewritten",
                           opt_.launchesOnly ? " --launches-only" : "", base);
        out += "#ifndef MEMPLACE_LAUNCH\n"
               "#define MEMPLACE_LAUNCH(kernel, grid, block, sharedBytes, stream, ...) \\\n"
               "    kernel<<<grid, block, sharedBytes, stream>>>(__VA_ARGS__)\n"
               "#endif\n"
               "#ifndef MEMPLACE_DYNAMIC_SHARED\n"
               "#define MEMPLACE_DYNAMIC_SHARED(T, name) extern __shared__ __align__(16) T "
               "name[]\n"
               "#endif\n";
    }
    return out;
}

namespace {

/// The offset of the first line holding a token (comments and blank lines skipped).
unsigned firstCodeLine(const Source& src) {
    const std::string& text = src.text();
    const SourceManager& sm = src.sm();
    Lexer lex(sm.getLocForStartOfFile(sm.getMainFileID()), src.lo(), text.data(), text.data(),
              text.data() + text.size());
    Token t;
    lex.LexFromRawLexer(t);
    if (t.is(tok::eof)) {
        return static_cast<unsigned>(text.size());
    }
    unsigned off = sm.getFileOffset(t.getLocation());
    size_t ls = off == 0 ? std::string::npos : text.rfind('\n', off - 1);
    return ls == std::string::npos ? 0 : static_cast<unsigned>(ls + 1);
}

} // namespace

/// The edited buffer cut back into its files: the main file's output, and one IncludedOutput per
/// included program file. Returns the EditList's error, if any.
std::string Emitter::splitOutputs(const EditList& edits) {
    namespace fs = std::filesystem;
    std::string error;
    auto output = [&](const Source::File& f) {
        // The file's '\n' separator is in the range, so that insertions at its end are kept.
        std::string out = edits.applyRange(src_.text(), f.base, f.base + f.size + 1, &error);
        if (!out.empty()) {
            out.pop_back();
        }
        return out;
    };
    const std::vector<Source::File>& files = src_.files();
    result_.output = output(files[0]);
    std::error_code ec;
    fs::path mainDir = fs::weakly_canonical(files[0].path, ec).parent_path();
    for (size_t i = 1; i < files.size() && error.empty(); ++i) {
        const Source::File& f = files[i];
        IncludedOutput io;
        io.file = f.name;
        io.path = f.path;
        io.relative = fs::weakly_canonical(f.path, ec).lexically_relative(mainDir).string();
        io.output = output(f);
        io.rewritten = io.output != src_.slice(f.base, f.base + f.size);
        for (const KernelReport& k : result_.kernels) {
            if (k.rewritten && k.location.file == f.name) {
                io.kernels.push_back(k.name);
            }
        }
        for (const LaunchPlan& lp : plan_.launches) {
            if (lp.kind != LaunchPlan::Kind::Untouched && lp.begin >= f.base &&
                lp.begin < f.base + f.size) {
                ++io.launches;
            }
        }
        noteDeclarationsIn(f, io);
        result_.included.push_back(std::move(io));
    }
    return error;
}

/// The rewritten kernels' prototypes and the helpers made templates that `f` holds (so that a
/// header of prototypes or helpers is not reported as holding nothing).
void Emitter::noteDeclarationsIn(const Source::File& f, IncludedOutput& io) const {
    auto inFile = [&](SourceLocation at) {
        auto off = src_.offset(src_.sm().getExpansionLoc(at));
        return off && *off >= f.base && *off < f.base + f.size;
    };
    auto addOnce = [](std::vector<std::string>& v, const std::string& name) {
        if (std::find(v.begin(), v.end(), name) == v.end()) {
            v.push_back(name);
        }
    };
    for (const KernelPlan& g : plan_.kernels) {
        for (const FunctionDecl* proto : g.ok ? g.prototypes : std::vector<const FunctionDecl*>{}) {
            if (inFile(proto->getLocation())) {
                addOnce(io.prototypes, g.name);
            }
        }
    }
    for (const auto& [key, h] : plan_.helpers) {
        if (h.active && inFile(key.fn->getLocation())) {
            addOnce(io.helpers, key.fn->getQualifiedNameAsString());
        }
    }
}

/// The kernel's report, and the warnings for what of it stays as written.
void Emitter::report(const KernelPlan& g) {
    KernelReport kr;
    kr.name = g.name;
    for (size_t k : g.kernels) {
        kr.instantiations.push_back(a_.info().kernels[k].instantiation);
    }
    kr.location = a_.info().kernels[g.kernels[0]].location;
    kr.location.file = kr.location.file.empty() ? a_.info().file : kr.location.file;
    kr.rewritten = g.ok;
    kr.descriptor = g.ok ? g.descName : std::string();
    kr.reason = g.reason;
    kr.compiled = g.compiled;
    kr.launches = g.launches;
    if (auto it = jit_.find(&g); it != jit_.end()) {
        kr.jitSource = it->second.source;
        kr.jitKernel = it->second.kernel;
        kr.jitTypes = it->second.types;
        kr.jitConstants = it->second.constants;
        kr.jitReason = it->second.reason;
    }
    bool anyCandidate = false;
    for (const ArrayPlan& ap : g.arrays) {
        ArrayReport ar;
        ar.name = ap.name;
        ar.param = static_cast<int>(ap.param);
        ar.accessor = ap.accessor;
        ar.elementType = ap.elemType;
        ar.mode = detail::modeName(ap.mode);
        ar.places = ap.accessor ? ap.mask : PlaceSet{Place::Global};
        ar.mask = ap.accessor ? detail::maskText(ap.mask, ap.dims, ap.written()) : std::string();
        ar.dims = ap.accessor ? ap.dims : 1;
        ar.widthParam = ap.accessor ? ap.widthParam : -1;
        ar.original = ap.accessor ? ap.original : Place::Global;
        if (ap.accessor) {
            ar.likely = fmt::format("{}: {}", placeName(ap.likely), ap.likelyWhy);
            for (const auto& n : ap.notes) {
                ar.reason += (ar.reason.empty() ? "" : "; ") + n;
            }
        } else {
            ar.reason = !ap.reason.empty() ? ap.reason : g.reason;
        }
        anyCandidate = anyCandidate || ap.candidate;
        if (g.ok && !ap.accessor && ap.candidate) {
            warn(ap.reasonAt.isValid() ? ap.reasonAt : ap.decl->getLocation(),
                 fmt::format("kernel '{}': '{}' keeps a raw pointer: {}", g.name, ap.name,
                             ap.reason));
        } else if (g.ok && !ap.accessor && !ap.reason.empty() &&
                   ap.reason.rfind("the analysis keeps it", 0) != 0 &&
                   ap.reason != "the kernel does not access it") {
            warn(ap.reasonAt.isValid() ? ap.reasonAt : ap.decl->getLocation(),
                 fmt::format("kernel '{}': '{}' keeps a raw pointer: {}", g.name, ap.name,
                             ap.reason));
        }
        kr.arrays.push_back(std::move(ar));
    }
    if (!g.ok && g.selected && !opt_.launchesOnly && anyCandidate) {
        warn(g.reasonAt.isValid() ? g.reasonAt : g.pattern->getLocation(),
             fmt::format("kernel '{}' left as written: {}", g.name, g.reason));
    }
    result_.kernels.push_back(std::move(kr));
}

Expected<RewriteResult> Emitter::run() {
    result_.file = a_.info().file;
    result_.launchesOnly = opt_.launchesOnly;
    result_.warnings.append(a_.warnings());
    result_.warnings.append(plan_.warnings);
    result_.ownConstantBytes = plan_.facts.ownConstantBytes;

    EditList edits;
    for (const KernelPlan& g : plan_.kernels) {
        if (g.ok) {
            emitKernel(g, edits);
        }
    }
    std::map<const FunctionDecl*, std::vector<unsigned>> helperParams;
    for (const auto& [key, h] : plan_.helpers) {
        if (h.active) {
            helperParams[key.fn].push_back(key.index);
        }
    }
    for (const auto& [fn, params] : helperParams) {
        emitHelper(fn, params, edits);
        result_.helpers.push_back(fn->getQualifiedNameAsString());
    }
    emitLaunches(edits);
    emitExternShared(edits);
    // The JIT sources are cut from the text as rewritten so far (no descriptors, no preamble).
    for (const KernelPlan& g : plan_.kernels) {
        if (g.ok) {
            jit_[&g] = jitModuleOf(g, edits);
        }
    }
    emitDescriptors(edits);
    edits.insert(firstCodeLine(src_), preamble(), -1000000);

    for (const KernelPlan& g : plan_.kernels) {
        report(g);
    }
    if (auto error = splitOutputs(edits); !error.empty()) {
        return fail({a_.info().file, 0, 0},
                    "internal error while applying the rewriter's edits: " + error);
    }
    return std::move(result_);
}

} // namespace memplace::rewrite::detail

namespace memplace::rewrite {

Expected<RewriteResult> rewriteFile(const RewriteOptions& options) {
    frontend::AnalyzeOptions ao;
    ao.file = options.file;
    ao.extraArgs = options.extraArgs;
    auto analysis = frontend::analyze(ao);
    if (!analysis) {
        return std::move(analysis).takeFailure();
    }
    const frontend::Analysis& a = **analysis;
    const auto& kernels = a.info().kernels;
    if (!options.kernel.empty() &&
        std::none_of(kernels.begin(), kernels.end(), [&](const kernelinfo::KernelInfo& k) {
            return detail::kernelMatches(k, options.kernel);
        })) {
        std::string names;
        for (const auto& k : kernels) {
            names += (names.empty() ? "" : ", ") + k.instantiation;
        }
        return fail({a.info().file, 0, 0},
                    fmt::format("no kernel named '{}' (kernels: {})", options.kernel,
                                names.empty() ? "none" : names));
    }
    const detail::RewritePlan plan = detail::planRewrite(options, a);
    return detail::Emitter(options, a, plan).run();
}

} // namespace memplace::rewrite

// The CUDA frontend: parses a .cu file with clang-19 (LibTooling) as the GPU compiler sees it
// and produces KernelInfo for every kernel, plus the clang source ranges a source-to-source
// rewriter needs.
//
// Two ways in:
//
//   // Data only (the CLI, tests, later stages that read KernelInfo):
//   memplace::DiagnosticList warnings;
//   auto info = memplace::frontend::analyzeFile({.file = "k.cu"}, &warnings);
//   if (!info) { print(info.diagnostics()); return 2; }   // clang's own errors
//
//   // Data plus the AST (the rewriter):
//   auto analysis = memplace::frontend::analyze({.file = "k.cu"});
//   if (!analysis) ...;
//   const auto& a = **analysis;
//   clang::Rewriter rw(a.sourceManager(), a.langOptions());
//   for (size_t k = 0; k < a.info().kernels.size(); ++k) {
//       const KernelSource& ks = a.kernels()[k];          // parallel to info().kernels
//       for (const SiteSource& s : ks.sites) {             // parallel to kernels[k].sites
//           if (!s.rewritable) continue;                   // a hazard says why
//           rw.InsertTextBefore(s.indices[0].getBegin(), "memplace::at<" + id + ">(");
//           rw.InsertTextAfter(s.indices[0].getEnd(), ")");   // file char ranges
//       }
//   }
//
// Site ids are file-wide: every access site (subscript, deref, intrinsic pointer argument,
// texture fetch) written in the file gets one id, dense from 0 in source order (by the file
// offset of the access; in a header: after the main file, in include order). A subscript inside
// a `__device__` helper has one id whatever kernel, instantiation or call path reaches it, so
// the rewriter can emit exactly one `memplace::at<Id>(...)` per subscript in the source; a site
// reached in several contexts merges them (KernelInfo's Site: contexts, otherArrays).
//
// The analysed text is the file with spaced launch chevrons normalised (source_prep.h): every
// byte offset equals the file's on disk; the file itself is never written. Kernels and launches
// are those of the program's own files: the main file and the files it includes from its folder
// tree (Analysis::isProgramFile); an included file is analysed as written on disk.
#pragma once

#include "common/expected.h"
#include "kernelinfo/kernel_info.h"

#include <clang/Basic/SourceLocation.h>

#include <memory>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class ASTUnit;
class CallExpr;
class CUDAKernelCallExpr;
class Expr;
class FunctionDecl;
class FunctionTemplateDecl;
class LangOptions;
class SourceManager;
} // namespace clang

namespace memplace::frontend {

struct AnalyzeOptions {
    std::string file;                   ///< the .cu file; reported as given
    std::vector<std::string> extraArgs; ///< clang arguments after `--` (-D, -I, --cuda-path=...)
    std::string gpuArch = "sm_90";      ///< --cuda-gpu-arch unless extraArgs give one
    std::string resourceDir;            ///< clang's resource dir; empty: the one built against
};

// All ranges below are file character ranges (clang::CharSourceRange::getCharRange, end
// exclusive) in the file they are written in, ready for clang::Rewriter; a range is invalid
// when the construct is absent or cannot be expressed as one contiguous range of a file (it is
// spelled inside a macro body).

/// One access site of a kernel: parallel to KernelInfo::sites.
struct SiteSource {
    kernelinfo::SiteId id = 0;
    /// The access: ArraySubscriptExpr (outermost, for a[i][j]), UnaryOperator `*`, or the
    /// CallExpr of an atomic / load-store intrinsic / texture fetch. For a template
    /// instantiation it is the instantiated expression; its ranges are the pattern's.
    const clang::Expr* expr = nullptr;
    clang::CharSourceRange access; ///< the whole access expression
    clang::CharSourceRange base;   ///< the array (pointer) operand as written
    /// The index expressions: one per dimension for subscripts (a[i][j]: i, j); for
    /// `*(a + i)` and `atomicAdd(a + i, v)` the offset `i`; for `&a[i]` in an intrinsic the
    /// subscript's index; for fetches the coordinate arguments. Empty for `*a` and `atomicAdd(a,
    /// v)` (index 0).
    std::vector<clang::CharSourceRange> indices;
    /// Every range above is valid and lies in one program file (Analysis::isProgramFile), so
    /// the index can be wrapped.
    bool rewritable = false;
};

/// One `kernel<<<grid, block, shared, stream>>>(args)`: parallel to KernelInfo::launches.
struct LaunchSource {
    const clang::CUDAKernelCallExpr* call = nullptr;
    clang::CharSourceRange whole;  ///< from the kernel name to the closing ')'
    clang::CharSourceRange callee; ///< "k" or "k<float, 128>" (explicit template args)
    clang::CharSourceRange config; ///< from "<<<" to ">>>" inclusive
    clang::CharSourceRange grid, block, sharedBytes, stream; ///< invalid when omitted
    std::vector<clang::CharSourceRange> args;                ///< invalid for defaulted arguments
    clang::CharSourceRange argsParens;                       ///< "(" ... ")" after ">>>"
};

/// One analysed kernel: parallel to FileInfo::kernels.
struct KernelSource {
    const clang::FunctionDecl* decl = nullptr;          ///< analysed (the instantiation)
    const clang::FunctionDecl* definition = nullptr;    ///< as written (template pattern)
    const clang::FunctionTemplateDecl* templ = nullptr; ///< null unless a template
    clang::CharSourceRange templateParams;      ///< "template <typename T, int B>" (templates)
    clang::CharSourceRange declaration;         ///< from the first specifier (`__global__`,
                                                ///< `static`, ...) to the closing ')' of the
                                                ///< parameter list
    clang::CharSourceRange paramList;           ///< "(" ... ")"
    std::vector<clang::CharSourceRange> params; ///< each parameter declaration as written
    clang::CharSourceRange body;                ///< "{" ... "}"
    clang::SourceLocation bodyLBrace, bodyRBrace;
    std::vector<SiteSource> sites;
    std::vector<LaunchSource> launches;
    /// `__device__` functions the kernel calls with one of its arrays (whole pointer), in call
    /// order: their parameters and subscripts need rewriting too.
    std::vector<const clang::FunctionDecl*> helpersWithArrays;
};

/// A finished analysis: the data, the AST it came from, and the ranges. Owns the AST.
class Analysis {
public:
    Analysis();
    ~Analysis();
    Analysis(const Analysis&) = delete;
    Analysis& operator=(const Analysis&) = delete;

    const kernelinfo::FileInfo& info() const { return info_; }
    const std::vector<KernelSource>& kernels() const { return kernels_; }
    /// Hazards that keep arrays in their home place, and kernels not analysed (templates
    /// never instantiated), as clang-style warnings.
    const DiagnosticList& warnings() const { return warnings_; }

    clang::ASTUnit& ast() const { return *ast_; }
    clang::ASTContext& context() const;
    clang::SourceManager& sourceManager() const;
    const clang::LangOptions& langOptions() const;
    /// The text clang parsed for the main file (chevrons normalised, same length as on disk).
    const std::string& parsedSource() const { return parsedSource_; }
    /// Whether `file` is one of the program's own files: the main file or an included file of
    /// its folder tree that is not a system or memplace header (docs/usage.md). Kernels,
    /// sites and launches are analysed there; ranges above may lie in any of them.
    bool isProgramFile(clang::FileID file) const;

private:
    friend class AnalysisBuilder;
    std::unique_ptr<clang::ASTUnit> ast_;
    kernelinfo::FileInfo info_;
    std::vector<KernelSource> kernels_;
    DiagnosticList warnings_;
    std::string parsedSource_;
};

/// Parses and analyses `options.file`. Fails (the CLI's exit 2) when the file cannot be read,
/// when no CUDA installation is found (findCudaInstallation), or when clang reports errors;
/// the failure then carries clang's own diagnostics (file:line:col: error: ..., source line,
/// caret, and clang's notes).
Expected<std::unique_ptr<Analysis>> analyze(const AnalyzeOptions& options);

/// analyze() without the AST. `warnings`, when given, receives Analysis::warnings().
Expected<kernelinfo::FileInfo> analyzeFile(const AnalyzeOptions& options,
                                           DiagnosticList* warnings = nullptr);

/// The clang resource directory this build was configured with.
std::string defaultResourceDir();

} // namespace memplace::frontend

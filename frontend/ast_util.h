// Small helpers over clang's AST shared by the kernel and host analyses (internal).
#pragma once

#include "common/diagnostics.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Expr.h>
#include <clang/Basic/SourceManager.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace memplace::frontend::detail {

/// Where things are, in the names the user knows: the main file is reported as given on the
/// command line, other files by their presumed name.
class Locator {
public:
    Locator(const clang::SourceManager& sm, const clang::LangOptions& lo, std::string mainName)
        : sm_(sm), lo_(lo), mainName_(std::move(mainName)) {}

    const clang::SourceManager& sm() const { return sm_; }
    const clang::LangOptions& langOptions() const { return lo_; }
    const std::string& mainName() const { return mainName_; }

    /// The file position of `loc` (macro arguments: where written; macro bodies: the use);
    /// `file` is empty in the main file (KernelInfo's convention).
    SourceLocation location(clang::SourceLocation loc) const;
    /// The text of a token range as written, or "" when it is not a contiguous file range.
    std::string text(clang::SourceRange range) const;
    std::string text(const clang::Expr* e) const { return e ? text(e->getSourceRange()) : ""; }
    /// The file char range of a token range, invalid when there is none (macro bodies).
    clang::CharSourceRange fileRange(clang::SourceRange range) const;
    /// Whether `file` is one of the program's own files (docs/usage.md, "Kernels in included
    /// files"): the main file, or a file it includes (directly or not) that lies in the main
    /// file's folder tree, is not a system header (-isystem, the CUDA installation) and is not
    /// one of memplace's own headers (the folder holding memplace.cuh). Their kernels are
    /// analysed and rewritten; other files are libraries, left alone.
    bool isProgramFile(clang::FileID file) const;
    /// Both ends written in one program file.
    bool inProgramFile(clang::CharSourceRange r) const;
    bool inProgramFile(clang::SourceLocation loc) const;
    bool inSystemHeader(clang::SourceLocation loc) const;
    /// The 1-based source line `line` of the file of `loc` (for diagnostics).
    std::string sourceLine(clang::SourceLocation loc) const;

private:
    const clang::SourceManager& sm_;
    const clang::LangOptions& lo_;
    std::string mainName_;
    mutable std::map<clang::FileID, bool> programFiles_; ///< isProgramFile's answers
};

/// Locator::isProgramFile without the cache.
bool isProgramFilePath(const clang::SourceManager& sm, clang::FileID file);

/// `path` relative to the working directory when it lies below it; as given otherwise.
std::string displayPath(const std::string& path);

/// A sort key for a source position: the file position first, then the spelling position
/// (two accesses in one macro expansion share the first).
struct LocKey {
    unsigned file = 0;
    unsigned spelling = 0;
    auto operator<=>(const LocKey&) const = default;
};
LocKey locKey(const clang::SourceManager& sm, clang::SourceLocation loc);

/// A function's name and, for a template specialisation, its printed template arguments.
struct InstantiationName {
    std::string name;              ///< "scale"; qualified: "ns::scale"
    std::vector<std::string> args; ///< {"float", "128"}
    std::string full;              ///< "ns::scale<float, 128>"; the name for non-templates
};
InstantiationName instantiationName(const clang::FunctionDecl* fn, const clang::ASTContext& ctx);

/// Type names as the user writes them ("float", "Particle", "const float *").
std::string typeName(clang::QualType t, const clang::ASTContext& ctx);

/// An integer, enumeration or bool type.
bool isIntegral(clang::QualType t);

/// `e` without parentheses and without implicit casts that keep its value
/// (lvalue-to-rvalue, no-op, array decay, integral casts, ...).
const clang::Expr* stripImplicit(const clang::Expr* e);

/// When `e` is CUDA's threadIdx/blockIdx/blockDim/gridDim component: "threadIdx.x", ...
std::optional<std::string> builtinComponent(const clang::Expr* e);

/// The name of the called function ("atomicAdd"), or "" for indirect calls.
std::string calleeName(const clang::CallExpr* call);

bool isAtomicFunction(std::string_view name);
bool isLoadIntrinsic(std::string_view name);  ///< __ldg, __ldcg, __ldca, __ldcs, __ldlu, __ldcv
bool isStoreIntrinsic(std::string_view name); ///< __stwb, __stcg, __stcs, __stwt
bool isTextureFetch(std::string_view name);   ///< tex1Dfetch, tex1D, tex2D, tex3D, ...
bool isTextureObjectType(clang::QualType t);  ///< cudaTextureObject_t

/// How often each variable of a function is defined, and its single definition when it has one
/// (the initialiser, or the right side of the one assignment). A variable whose address is
/// taken, or that is passed by non-const reference, is not tracked.
class DefUse {
public:
    struct Info {
        int defs = 0;
        bool addressTaken = false;
        const clang::Expr* single = nullptr;
        /// The right-hand sides of every plain definition (initialiser, `v = e`), in source
        /// order; compound assignments and ++/-- keep a pointer's target and are not listed.
        std::vector<const clang::Expr*> values;
    };
    explicit DefUse(const clang::FunctionDecl* fn);
    const Info* find(const clang::VarDecl* v) const;
    /// Whether `s` modifies `v` (assignment, ++/--, address taken, non-const reference use).
    static bool modifies(const clang::Stmt* s, const clang::VarDecl* v);

private:
    std::map<const clang::VarDecl*, Info> info_;
};

} // namespace memplace::frontend::detail

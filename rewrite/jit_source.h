// The device-only source of one rewritten kernel, for just-in-time compilation with NVRTC
// (internal to the rewriter; docs/rewrite-contract.md, "Just-in-time members"). NVRTC compiles
// device code only, so the source is a slice of the rewritten file: the kernel and every
// declaration it depends on (device functions it calls, types, constants, enumerations,
// macros), found from the AST (references from the kernel's body, transitively) and printed
// from their source ranges (the rewritten text for the main file), after the runtime's device
// headers. What cannot be sliced makes the kernel not JIT-able, with the reason.
#pragma once

#include <clang/Basic/SourceLocation.h>

#include <functional>
#include <string>
#include <vector>

namespace clang {
class ASTUnit;
class FunctionDecl;
} // namespace clang

namespace memplace::rewrite::detail {

/// Opens the `extern "C++"` block the rewriter writes around a function it makes a template
/// inside an `extern "C" { }` block (a template cannot have C linkage). The block closes after
/// the function's text (and its descriptor): a slice that cuts the function's text out of the
/// rewritten file closes it itself.
inline constexpr const char* kCxxLinkageOpen =
    "extern \"C++\" { // memplace: a template cannot have C linkage\n";

struct JitSliceInput {
    clang::ASTUnit* ast = nullptr;
    const clang::FunctionDecl* kernel = nullptr; ///< the kernel as written (not a template)
    clang::FileID kernelFile;                    ///< the program file the kernel is written in
    unsigned kernelBegin = 0; ///< offset in kernelFile where its rewritten text starts
    /// Whether `file` is one of the program's files (the rewriter edits them: their text comes
    /// from programText, other files' from disk).
    std::function<bool(clang::FileID file)> isProgramFile;
    /// The rewritten text of [begin, end) of a program file; false and `why` when the edits do
    /// not allow cutting there.
    std::function<bool(clang::FileID file, unsigned begin, unsigned end, std::string* text,
                       std::string* why)>
        programText;
    /// Folders whose headers NVRTC provides by itself (the CUDA installation's include folder,
    /// clang's resource folder, the frontend's shim): their declarations are not copied.
    std::vector<std::string> providedDirs;
    std::string cudaIncludeDir; ///< CUDA's include folder (which of its headers NVRTC has)
};

struct JitSlice {
    std::string source;     ///< empty: not JIT-able
    std::string why;        ///< then why (one line)
    std::string kernelName; ///< qualified, as an NVRTC name expression spells it
    /// The program's `__constant__` variables the kernel reads, qualified: the slice declares
    /// them (the JIT module has copies of its own), the runtime fills the copies from the
    /// program's before each launch of the module.
    std::vector<std::string> constants;
};

JitSlice sliceForJit(const JitSliceInput& in);

} // namespace memplace::rewrite::detail

// Diagnostics in clang's style: "file:line:col: error: message", the source line, a caret.
// Every stage reports problems through this type so that the CLI prints them one way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memplace {

enum class Severity { Note, Warning, Error };

/// A position in a named source: 1-based line and column. Line 0 means "the whole file".
struct SourceLocation {
    std::string file;
    uint32_t line = 0;
    uint32_t column = 0;
    bool operator==(const SourceLocation&) const = default;
};

struct Diagnostic {
    Severity severity = Severity::Error;
    SourceLocation location;
    std::string message;
    std::string sourceLine; ///< the quoted line; empty when there is none

    /// "file:line:col: error: message\n  source line\n  ^" (line and caret only when known).
    std::string format() const;
};

/// Collects every diagnostic of a run so that all errors of a file are reported, not the first.
class DiagnosticList {
public:
    void add(Diagnostic d) { diagnostics_.push_back(std::move(d)); }
    void error(SourceLocation loc, std::string message, std::string sourceLine = {});
    void warning(SourceLocation loc, std::string message, std::string sourceLine = {});
    void note(SourceLocation loc, std::string message, std::string sourceLine = {});
    void append(const DiagnosticList& other);

    bool hasErrors() const;
    size_t errorCount() const;
    bool empty() const { return diagnostics_.empty(); }
    const std::vector<Diagnostic>& all() const { return diagnostics_; }

    /// All diagnostics, each formatted, separated by newlines.
    std::string format() const;

private:
    std::vector<Diagnostic> diagnostics_;
};

std::string_view severityName(Severity s);

/// The 1-based line `line` of `text`, without its newline; empty when out of range.
std::string_view lineOf(std::string_view text, uint32_t line);

} // namespace memplace

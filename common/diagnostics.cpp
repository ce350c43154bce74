#include "common/diagnostics.h"

#include <fmt/format.h>

#include <algorithm>

namespace memplace {

std::string_view severityName(Severity s) {
    switch (s) {
    case Severity::Note:
        return "note";
    case Severity::Warning:
        return "warning";
    case Severity::Error:
        return "error";
    }
    return "error";
}

std::string Diagnostic::format() const {
    std::string out;
    if (location.file.empty()) {
        out = fmt::format("{}: {}", severityName(severity), message);
    } else if (location.line == 0) {
        out = fmt::format("{}: {}: {}", location.file, severityName(severity), message);
    } else {
        out = fmt::format("{}:{}:{}: {}: {}", location.file, location.line, location.column,
                          severityName(severity), message);
    }
    if (!sourceLine.empty()) {
        // Tabs keep their width in the caret line so the caret stays under the column.
        std::string caret;
        for (uint32_t i = 1; i < location.column && i - 1 < sourceLine.size(); ++i) {
            caret += sourceLine[i - 1] == '\t' ? '\t' : ' ';
        }
        out += fmt::format("\n  {}\n  {}^", sourceLine, caret);
    }
    return out;
}

void DiagnosticList::error(SourceLocation loc, std::string message, std::string sourceLine) {
    add({Severity::Error, std::move(loc), std::move(message), std::move(sourceLine)});
}

void DiagnosticList::warning(SourceLocation loc, std::string message, std::string sourceLine) {
    add({Severity::Warning, std::move(loc), std::move(message), std::move(sourceLine)});
}

void DiagnosticList::note(SourceLocation loc, std::string message, std::string sourceLine) {
    add({Severity::Note, std::move(loc), std::move(message), std::move(sourceLine)});
}

void DiagnosticList::append(const DiagnosticList& other) {
    diagnostics_.insert(diagnostics_.end(), other.diagnostics_.begin(), other.diagnostics_.end());
}

bool DiagnosticList::hasErrors() const {
    return errorCount() > 0;
}

size_t DiagnosticList::errorCount() const {
    return static_cast<size_t>(
        std::count_if(diagnostics_.begin(), diagnostics_.end(),
                      [](const Diagnostic& d) { return d.severity == Severity::Error; }));
}

std::string DiagnosticList::format() const {
    std::string out;
    for (const auto& d : diagnostics_) {
        out += d.format();
        out += '\n';
    }
    return out;
}

std::string_view lineOf(std::string_view text, uint32_t line) {
    if (line == 0) {
        return {};
    }
    size_t start = 0;
    for (uint32_t l = 1; l < line; ++l) {
        size_t nl = text.find('\n', start);
        if (nl == std::string_view::npos) {
            return {};
        }
        start = nl + 1;
    }
    size_t end = text.find('\n', start);
    std::string_view result =
        text.substr(start, end == std::string_view::npos ? text.size() - start : end - start);
    if (!result.empty() && result.back() == '\r') {
        result.remove_suffix(1);
    }
    return result;
}

} // namespace memplace

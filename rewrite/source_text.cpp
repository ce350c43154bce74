// The text helpers planning and emitting share (source_text.h).
#include "rewrite/source_text.h"

#include <regex>

namespace memplace::rewrite::detail {

using namespace clang;

bool matches(const std::string& text, const char* pattern) {
    return std::regex_match(text, std::regex(pattern));
}

/// Wraps a macro argument in parentheses when a comma outside parentheses would split it.
std::string macroArg(const std::string& s) {
    int depth = 0;
    for (char c : s) {
        if (c == '(') {
            ++depth;
        } else if (c == ')') {
            --depth;
        } else if (c == ',' && depth == 0) {
            return "(" + s + ")";
        }
    }
    return s;
}

/// `head` + items joined by ", " + `tail`, on one line when it fits in 100 columns (counting
/// `column`, where the text starts), else filled line by line with `cont` starting each
/// continuation line.
std::string wrapList(const std::string& head, const std::vector<std::string>& items,
                     const std::string& tail, const std::string& cont, size_t column) {
    constexpr size_t kWidth = 100;
    std::string one = head;
    for (size_t i = 0; i < items.size(); ++i) {
        one += (i == 0 ? "" : ", ") + items[i];
    }
    one += tail;
    if (column + one.size() <= kWidth || items.empty()) {
        return one;
    }
    std::string out = head;
    size_t col = column + head.size();
    for (size_t i = 0; i < items.size(); ++i) {
        std::string piece = items[i] + (i + 1 < items.size() ? "," : tail);
        if (i > 0 && col + 1 + piece.size() > kWidth) {
            out += "\n" + cont;
            col = cont.size();
        } else if (i > 0) {
            out += " ";
            ++col;
        }
        out += piece;
        col += piece.size();
    }
    return out;
}

PrintingPolicy policyFor(const ASTContext& ctx) {
    PrintingPolicy pp(ctx.getLangOpts());
    pp.SuppressTagKeyword = true;
    pp.SuppressUnwrittenScope = true;
    pp.PrintCanonicalTypes = false;
    return pp;
}

std::string typeText(QualType t, const ASTContext& ctx) {
    return t.getAsString(policyFor(ctx));
}

void warnAt(DiagnosticList& out, const Source& src, clang::SourceLocation at,
            const std::string& msg) {
    memplace::SourceLocation w = src.where(at);
    out.warning(w, msg, src.sourceLine(w));
}

} // namespace memplace::rewrite::detail

// The program's source text for the rewriter (internal): every program file in one buffer with
// one set of offsets (Source), and the text helpers planning and emitting share.
#pragma once

#include "common/diagnostics.h"
#include "frontend/ast_util.h"
#include "frontend/frontend.h"

#include <clang/AST/ASTContext.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Lex/Lexer.h>
#include <fmt/format.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace memplace::rewrite::detail {

/// The program's files as one buffer, so that one EditList and one set of offsets serve them
/// all: the main file as clang parsed it (chevrons normalised) at offset 0, then each included
/// program file (frontend::Analysis::isProgramFile) in include order, as on disk, each
/// followed by a '\n' that belongs to no file (line scans stop at a file's start). A file
/// included twice is one span.
class Source {
public:
    struct File {
        std::string name; ///< as reported: the main file as given, others relative to the cwd
        std::string path; ///< as clang resolved it (absolute for included files)
        unsigned base = 0;
        unsigned size = 0;
    };

    Source(const frontend::Analysis& a)
        : a_(a), sm_(a.sourceManager()), lo_(a.langOptions()), text_(a.parsedSource()),
          file_(a.info().file) {
        text_ += '\n';
        File main;
        main.name = file_;
        main.size = static_cast<unsigned>(a.parsedSource().size());
        if (clang::OptionalFileEntryRef e = sm_.getFileEntryRefForID(sm_.getMainFileID())) {
            main.path = e->getName().str();
            spanByPath_[main.path] = 0;
        }
        files_.push_back(main);
        spanByFileID_[sm_.getMainFileID()] = 0;
        // Every program file now, in include order: the buffer does not grow later.
        for (unsigned i = 1; i < sm_.local_sloc_entry_size(); ++i) {
            const clang::SrcMgr::SLocEntry& e = sm_.getLocalSLocEntry(i);
            if (e.isFile()) {
                spanOf(sm_.getFileID(clang::SourceLocation::getFromRawEncoding(e.getOffset())));
            }
        }
    }

    const clang::SourceManager& sm() const { return sm_; }
    const clang::LangOptions& lo() const { return lo_; }
    const std::string& text() const { return text_; }
    /// The main file first, then the included program files in include order.
    const std::vector<File>& files() const { return files_; }
    /// The span of a program file (adding it), or nullopt for other files.
    std::optional<unsigned> spanOf(clang::FileID fid) const {
        if (auto it = spanByFileID_.find(fid); it != spanByFileID_.end()) {
            return it->second;
        }
        std::optional<unsigned> span;
        clang::OptionalFileEntryRef e = sm_.getFileEntryRefForID(fid);
        if (e && a_.isProgramFile(fid)) {
            std::string path = e->getName().str();
            if (auto it = spanByPath_.find(path); it != spanByPath_.end()) {
                span = it->second;
            } else {
                File f;
                f.path = path;
                f.name = frontend::detail::displayPath(path);
                f.base = static_cast<unsigned>(text_.size());
                std::string_view buf = sm_.getBufferData(fid);
                f.size = static_cast<unsigned>(buf.size());
                text_.append(buf);
                text_ += '\n';
                span = static_cast<unsigned>(files_.size());
                spanByPath_[path] = *span;
                files_.push_back(std::move(f));
            }
        }
        spanByFileID_[fid] = span;
        return span;
    }

    /// The file char range of a token range in a program file, or nullopt.
    std::optional<std::pair<unsigned, unsigned>> range(clang::SourceRange r) const {
        if (r.isInvalid()) {
            return std::nullopt;
        }
        return range(
            clang::Lexer::makeFileCharRange(clang::CharSourceRange::getTokenRange(r), sm_, lo_));
    }
    std::optional<std::pair<unsigned, unsigned>> range(clang::CharSourceRange r) const {
        if (r.isInvalid() || r.getBegin().isMacroID() || r.getEnd().isMacroID()) {
            return std::nullopt;
        }
        auto b = offset(r.getBegin());
        auto e = offset(r.getEnd());
        if (!b || !e || sm_.getFileID(r.getBegin()) != sm_.getFileID(r.getEnd()) || *e < *b) {
            return std::nullopt;
        }
        return std::make_pair(*b, *e);
    }
    std::optional<unsigned> offset(clang::SourceLocation l) const {
        if (l.isInvalid() || l.isMacroID()) {
            return std::nullopt;
        }
        auto span = spanOf(sm_.getFileID(l));
        if (!span) {
            return std::nullopt;
        }
        const File& f = files_[*span];
        unsigned off = sm_.getFileOffset(l);
        if (off > f.size) {
            return std::nullopt;
        }
        return f.base + off;
    }
    std::string slice(unsigned b, unsigned e) const { return text_.substr(b, e - b); }
    std::string slice(std::pair<unsigned, unsigned> r) const { return slice(r.first, r.second); }

    /// A diagnostic position for `l` (file locations of macro uses).
    memplace::SourceLocation where(clang::SourceLocation l) const {
        memplace::SourceLocation out;
        out.file = file_;
        if (l.isInvalid()) {
            return out;
        }
        clang::SourceLocation f = sm_.getFileLoc(l);
        clang::PresumedLoc p = sm_.getPresumedLoc(f);
        if (p.isValid()) {
            out.line = p.getLine();
            out.column = p.getColumn();
            if (!sm_.isWrittenInMainFile(f)) {
                out.file = frontend::detail::displayPath(p.getFilename());
            }
        }
        return out;
    }
    std::string lineCol(clang::SourceLocation l) const {
        auto w = where(l);
        return fmt::format("{}:{}", w.line, w.column);
    }
    /// `file:line:col` of `l`, as diagnostics name it.
    std::string fileLineCol(clang::SourceLocation l) const {
        auto w = where(l);
        return fmt::format("{}:{}:{}", w.file, w.line, w.column);
    }
    std::string sourceLine(const memplace::SourceLocation& w) const {
        for (const File& f : files_) {
            if (f.name == w.file) {
                return std::string(lineOf(std::string_view(text_).substr(f.base, f.size), w.line));
            }
        }
        return {};
    }
    /// The whitespace that starts the line of `off`.
    std::string indentOf(unsigned off) const {
        size_t ls = text_.rfind('\n', off == 0 ? 0 : off - 1);
        ls = ls == std::string::npos ? 0 : ls + 1;
        size_t e = ls;
        while (e < text_.size() && (text_[e] == ' ' || text_[e] == '\t')) {
            ++e;
        }
        return text_.substr(ls, e - ls);
    }
    /// Whether only blanks precede `off` on its line; then `*lineStart` is the line's start.
    bool onlyBlanksBefore(unsigned off, unsigned* lineStart) const {
        size_t ls = off == 0 ? 0 : text_.rfind('\n', off - 1);
        ls = (ls == std::string::npos || off == 0) ? 0 : ls + 1;
        for (size_t i = ls; i < off; ++i) {
            if (text_[i] != ' ' && text_[i] != '\t') {
                return false;
            }
        }
        *lineStart = static_cast<unsigned>(ls);
        return true;
    }

private:
    const frontend::Analysis& a_;
    const clang::SourceManager& sm_;
    const clang::LangOptions& lo_;
    mutable std::string text_; ///< complete after the constructor
    std::string file_;
    mutable std::vector<File> files_;
    mutable std::map<clang::FileID, std::optional<unsigned>> spanByFileID_;
    mutable std::map<std::string, unsigned> spanByPath_;
};

/// Whether all of `text` matches the regular expression `pattern`.
bool matches(const std::string& text, const char* pattern);

/// Wraps a macro argument in parentheses when a comma outside parentheses would split it.
std::string macroArg(const std::string& s);

/// `head` + items joined by ", " + `tail`, on one line when it fits in 100 columns (counting
/// `column`, where the text starts), else filled line by line with `cont` starting each
/// continuation line.
std::string wrapList(const std::string& head, const std::vector<std::string>& items,
                     const std::string& tail, const std::string& cont, size_t column = 0);

/// How the rewriter prints types: as written, without tag keywords or unwritten scopes.
clang::PrintingPolicy policyFor(const clang::ASTContext& ctx);
std::string typeText(clang::QualType t, const clang::ASTContext& ctx);

/// Adds a warning at `at` (file:line:col and the source line) to `out`.
void warnAt(DiagnosticList& out, const Source& src, clang::SourceLocation at,
            const std::string& msg);

} // namespace memplace::rewrite::detail

// The rewriter: plans what can be made placement-agnostic (kernels, arrays, helpers, launches),
// then emits the edits. Planning checks everything an edit relies on, so emitting never fails
// halfway; whatever a check refuses stays as written, with a warning.
#include "rewrite/rewrite.h"

#include "frontend/ast_util.h"
#include "frontend/frontend.h"
#include "frontend/source_prep.h"
#include "kernelinfo/feasibility.h"
#include "rewrite/ast_facts.h"
#include "rewrite/descriptor.h"
#include "rewrite/edit_list.h"
#include "rewrite/jit_source.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Attr.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/QualTypeNames.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Lex/Lexer.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

namespace memplace::rewrite {

namespace ki = memplace::kernelinfo;
using namespace clang;
using clang::SourceLocation; // memplace::SourceLocation is written in full
using detail::EditList;
using detail::ParamKey;
using detail::Shape;

namespace {

/// The kernel named from inside its descriptor (`::ns::name`): unqualified, a kernel named like
/// one of the descriptor's members (`kernel`: Rodinia's myocyte) would name the member. Qualified
/// lookup sees through anonymous and inline namespaces and extern "C" blocks, so they are
/// skipped.
std::string qualifiedKernelName(const FunctionDecl* p) {
    std::string q = "::" + p->getNameAsString();
    for (const DeclContext* dc = p->getDeclContext(); dc != nullptr && !dc->isTranslationUnit();
         dc = dc->getParent()) {
        if (const auto* ns = dyn_cast<NamespaceDecl>(dc);
            ns != nullptr && !ns->isAnonymousNamespace() && !ns->isInline()) {
            q = "::" + ns->getNameAsString() + q;
        }
    }
    return q;
}

/// Whether every reference to `var` in `body` satisfies `ok` (an explicit stack: kernel bodies
/// may nest deeper than the call stack allows).
template <class Pred>
bool everyReference(const Stmt* body, const ValueDecl* var, Pred ok) {
    std::vector<const Stmt*> pending{body};
    while (!pending.empty()) {
        const Stmt* cur = pending.back();
        pending.pop_back();
        if (cur == nullptr) {
            continue;
        }
        if (const auto* dre = dyn_cast<DeclRefExpr>(cur);
            dre != nullptr && dre->getDecl() == var && !ok(dre)) {
            return false;
        }
        for (const Stmt* child : cur->children()) {
            pending.push_back(child);
        }
    }
    return true;
}

// ---- source positions ----------------------------------------------------------------------

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
        if (OptionalFileEntryRef e = sm_.getFileEntryRefForID(sm_.getMainFileID())) {
            main.path = e->getName().str();
            spanByPath_[main.path] = 0;
        }
        files_.push_back(main);
        spanByFileID_[sm_.getMainFileID()] = 0;
        // Every program file now, in include order: the buffer does not grow later.
        for (unsigned i = 1; i < sm_.local_sloc_entry_size(); ++i) {
            const SrcMgr::SLocEntry& e = sm_.getLocalSLocEntry(i);
            if (e.isFile()) {
                spanOf(sm_.getFileID(SourceLocation::getFromRawEncoding(e.getOffset())));
            }
        }
    }

    const SourceManager& sm() const { return sm_; }
    const LangOptions& lo() const { return lo_; }
    const std::string& text() const { return text_; }
    /// The main file first, then the included program files in include order.
    const std::vector<File>& files() const { return files_; }
    /// The span of a program file (adding it), or nullopt for other files.
    std::optional<unsigned> spanOf(FileID fid) const {
        if (auto it = spanByFileID_.find(fid); it != spanByFileID_.end()) {
            return it->second;
        }
        std::optional<unsigned> span;
        OptionalFileEntryRef e = sm_.getFileEntryRefForID(fid);
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
    std::optional<std::pair<unsigned, unsigned>> range(SourceRange r) const {
        if (r.isInvalid()) {
            return std::nullopt;
        }
        return range(Lexer::makeFileCharRange(CharSourceRange::getTokenRange(r), sm_, lo_));
    }
    std::optional<std::pair<unsigned, unsigned>> range(CharSourceRange r) const {
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
    std::optional<unsigned> offset(SourceLocation l) const {
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
    memplace::SourceLocation where(SourceLocation l) const {
        memplace::SourceLocation out;
        out.file = file_;
        if (l.isInvalid()) {
            return out;
        }
        SourceLocation f = sm_.getFileLoc(l);
        PresumedLoc p = sm_.getPresumedLoc(f);
        if (p.isValid()) {
            out.line = p.getLine();
            out.column = p.getColumn();
            if (!sm_.isWrittenInMainFile(f)) {
                out.file = frontend::detail::displayPath(p.getFilename());
            }
        }
        return out;
    }
    std::string lineCol(SourceLocation l) const {
        auto w = where(l);
        return fmt::format("{}:{}", w.line, w.column);
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
    const SourceManager& sm_;
    const LangOptions& lo_;
    mutable std::string text_; ///< complete after the constructor
    std::string file_;
    mutable std::vector<File> files_;
    mutable std::map<FileID, std::optional<unsigned>> spanByFileID_;
    mutable std::map<std::string, unsigned> spanByPath_;
};

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
                     const std::string& tail, const std::string& cont, size_t column = 0) {
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

// ---- the plan ------------------------------------------------------------------------------

struct SiteRec {
    int id = 0;
    const ki::Site* info = nullptr;
    const frontend::SiteSource* src = nullptr;
    detail::SiteShape shape;
    std::optional<ParamKey> key;
    bool deduces = false;
    std::string failure;      ///< why this site keeps its array raw
    SourceLocation failureAt; ///< where
};

struct ArrayPlan {
    unsigned param = 0;
    std::string name;
    ParamKey key;
    const ParmVarDecl* decl = nullptr; ///< in the pattern
    bool candidate = false;            ///< passed the kernel-level checks
    bool accessor = false;
    std::string reason;
    SourceLocation reasonAt;
    ki::AccessMode mode = ki::AccessMode::None;
    bool memberWrite = false;
    PlaceSet mask;
    std::vector<std::string> notes; ///< places the rewriter removed, and why
    int dims = 1;
    int widthParam = -1;
    std::string elemType;     ///< "const float" (pattern spelling)
    std::string elemTypeBare; ///< "float" (for sizeof)
    std::string mpName;       ///< "MP_x"
    Place likely = Place::Global;
    std::string likelyWhy;
    /// Where the program as written keeps it (KernelInfo's `original`, in every instantiation):
    /// the default placement's place.
    Place original = Place::Global;
    std::vector<const SiteRec*> sites;

    bool written() const { return ki::writes(mode); }
};

struct Group {
    const FunctionDecl* pattern = nullptr;
    const FunctionTemplateDecl* templ = nullptr;
    std::vector<size_t> kernels; ///< indexes into info().kernels
    bool selected = true;
    bool ok = true;
    std::string reason;
    SourceLocation reasonAt;
    std::vector<ArrayPlan> arrays; ///< one per pointer parameter, in parameter order
    std::string name;              ///< qualified, without template arguments
    std::string descName;
    std::vector<std::vector<Place>> compiled;
    detail::SyncFacts sync;
    int launches = 0;
    // just-in-time instantiation (jitSource empty: not JIT-able, jitReason says why)
    std::string jitSource;
    std::string jitKernel;
    std::vector<std::string> jitTypes;
    std::vector<std::string> jitConstants;
    std::string jitReason;
    // where the descriptor goes (emitDescriptors)
    unsigned descriptorAt = 0;
    std::string descriptorPrefix;
    std::string indent;

    void refuse(std::string why, SourceLocation at) {
        if (ok) {
            ok = false;
            reason = std::move(why);
            reasonAt = at;
        }
    }
    std::vector<const ArrayPlan*> accessorArrays() const {
        std::vector<const ArrayPlan*> out;
        for (const auto& a : arrays) {
            if (a.accessor) {
                out.push_back(&a);
            }
        }
        return out;
    }
    /// The default instantiation's placement: every accessor array where the program keeps it.
    std::vector<Place> originalPlacement() const {
        std::vector<Place> out;
        for (const ArrayPlan* ap : accessorArrays()) {
            out.push_back(ap->original);
        }
        return out;
    }
};

struct HelperParam {
    ParamKey key;
    bool active = true;
    std::string reason;
    SourceLocation reasonAt;
    bool written = false;
};

/// One call argument passing a pointer to a helper's pointer parameter.
struct Edge {
    ParamKey to;
    std::optional<ParamKey> from; ///< nullopt: not a pointer parameter (raw)
    SourceLocation at;
};

enum class UseKind { SiteBase, HelperArg, AliasInit, Other };
struct Use {
    const DeclRefExpr* dre = nullptr;
    ParamKey key;
    UseKind kind = UseKind::Other;
    ParamKey helper; ///< HelperArg: the parameter it is passed to
};

class Rewriter {
public:
    Rewriter(const RewriteOptions& o, const frontend::Analysis& a)
        : opt_(o), a_(a), ctx_(a.context()), src_(a) {}

    Expected<RewriteResult> run();

private:
    // planning
    void buildGroups();
    void collectSites();
    void planArrays(Group& g);
    void planHelpers();
    void addExtraCompiled();
    void classifyUses();
    /// The edits that make a pointer alias a view of its accessor, or nullopt when its text is
    /// not what they assume.
    std::optional<std::vector<std::tuple<unsigned, unsigned, std::string>>>
    aliasEdits(const detail::PointerAliasInit& a) const;
    std::optional<std::vector<std::tuple<unsigned, unsigned, std::string>>>
    rebaseEdits(const detail::PointerRebase& r) const;
    void fixpoint();
    void planLaunches();
    void finishArrays(Group& g);
    // emitting
    void emitGroup(const Group& g, EditList& edits);
    void emitHelper(const FunctionDecl* fn, const std::vector<unsigned>& params, EditList& edits);
    void emitSite(const SiteRec& s, bool written, EditList& edits);
    void emitLaunches(EditList& edits);
    void emitExternShared(EditList& edits);
    void planJit(Group& g, const EditList& edits);
    void emitDescriptors(EditList& edits);
    std::string preamble() const;
    std::string descriptor(const Group& g, const std::string& indent) const;
    std::string splitOutputs(const EditList& edits);

    bool active(const ParamKey& k) const;
    Group* groupOf(const FunctionDecl* fn);
    void warn(SourceLocation at, const std::string& msg);

    struct LaunchPlan {
        const detail::LaunchFact* fact = nullptr;
        Group* group = nullptr; ///< the rewritten kernel's group, when it goes to the runtime
        std::string text;       ///< the replacement
        unsigned begin = 0, end = 0;
        enum class Kind { Runtime, Macro, Untouched } kind = Kind::Untouched;
        std::string why; ///< Untouched: why
    };
    /// What a launch would become if its kernel is rewritten (or not): text, or why not.
    std::optional<std::string> launchText(const detail::LaunchFact& lf, const Group* g,
                                          std::string* why, unsigned* b, unsigned* e);

    const RewriteOptions& opt_;
    const frontend::Analysis& a_;
    ASTContext& ctx_;
    Source src_;
    detail::Facts facts_;
    std::vector<Group> groups_;
    std::map<const FunctionDecl*, size_t> groupByPattern_;
    std::vector<std::unique_ptr<SiteRec>> sites_;
    std::map<int, SiteRec*> siteById_;
    std::set<const DeclRefExpr*> siteBases_;
    /// Local pointers into pointer parameters (`const float* row = m + r * cols;`) declared in
    /// the analysed kernels, and, for those whose every use is an access site and whose text
    /// can be edited, the parameter reference of their initialiser.
    std::vector<detail::PointerAliasInit> aliases_;
    std::map<const VarDecl*, ParamKey> aliasKey_;
    std::map<const DeclRefExpr*, const detail::PointerAliasInit*> aliasByParamRef_;
    /// Parameters rebased at the top of a kernel (`src += offset;`) whose every other use is
    /// a later access site: the rebase declares `mp_<name>`, a view of the accessor, and the
    /// sites use it.
    std::vector<detail::PointerRebase> rebases_;
    std::map<const DeclRefExpr*, const detail::PointerRebase*> rebaseByParamRef_;
    std::map<const ParmVarDecl*, std::string> rebasedName_;
    std::map<ParamKey, HelperParam> helpers_;
    std::vector<Edge> edges_;
    std::vector<Use> uses_;
    std::vector<LaunchPlan> launches_;
    RewriteResult result_;
};

void Rewriter::addExtraCompiled() {
    std::set<std::string> unknown; // kernels named in the file but not here: one warning each
    for (const RewriteOptions::ExtraPlacement& x : opt_.compile) {
        bool found = false;
        for (Group& g : groups_) {
            const ki::KernelInfo& k0 = a_.info().kernels[g.kernels[0]];
            const auto unqualified = [](const std::string& n) {
                const size_t c = n.rfind("::");
                return c == std::string::npos ? n : n.substr(c + 2);
            };
            if (!g.ok || (x.kernel != g.name && x.kernel != unqualified(g.name) &&
                          x.kernel != k0.instantiation)) {
                continue;
            }
            found = true;
            const auto accs = g.accessorArrays();
            std::vector<Place> pl(accs.size(), Place::Global);
            std::string bad;
            for (const auto& [array, place] : x.places) {
                auto it = std::find_if(accs.begin(), accs.end(),
                                       [&](const ArrayPlan* ap) { return ap->name == array; });
                if (it == accs.end()) {
                    bad = "kernel " + g.name + " has no accessor array '" + array + "'";
                    break;
                }
                if (!(*it)->mask.contains(place)) {
                    bad = "array '" + array + "' of " + g.name + " cannot be placed in " +
                          std::string(placeName(place));
                    break;
                }
                pl[static_cast<size_t>(it - accs.begin())] = place;
            }
            if (!bad.empty()) {
                warn(g.pattern != nullptr ? g.pattern->getLocation() : SourceLocation(),
                     "extra compiled placement dropped: " + bad);
                continue;
            }
            if (pl != g.originalPlacement() &&
                std::find(g.compiled.begin(), g.compiled.end(), pl) == g.compiled.end()) {
                g.compiled.push_back(pl);
            }
        }
        if (!found && unknown.insert(x.kernel).second) {
            warn(SourceLocation(), "extra compiled placement for '" + x.kernel +
                                       "': no rewritten kernel of that name; ignored");
        }
    }
}

void Rewriter::warn(SourceLocation at, const std::string& msg) {
    memplace::SourceLocation w = src_.where(at);
    result_.warnings.warning(w, msg, src_.sourceLine(w));
}

Group* Rewriter::groupOf(const FunctionDecl* fn) {
    auto it = groupByPattern_.find(detail::patternOf(fn));
    return it == groupByPattern_.end() ? nullptr : &groups_[it->second];
}

bool Rewriter::active(const ParamKey& k) const {
    if (auto it = helpers_.find(k); it != helpers_.end()) {
        return it->second.active;
    }
    auto it = groupByPattern_.find(k.fn);
    if (it == groupByPattern_.end()) {
        return false;
    }
    const Group& g = groups_[it->second];
    if (!g.ok) {
        return false;
    }
    for (const auto& a : g.arrays) {
        if (a.param == k.index) {
            return a.accessor;
        }
    }
    return false;
}

// ---- groups: one per kernel as written -----------------------------------------------------

bool kernelMatches(const ki::KernelInfo& k, const std::string& want) {
    auto unqualified = [](const std::string& n) {
        size_t p = n.rfind("::", n.find('<'));
        return p == std::string::npos ? n : n.substr(p + 2);
    };
    return k.name == want || k.instantiation == want || unqualified(k.name) == want ||
           unqualified(k.instantiation) == want;
}

void Rewriter::buildGroups() {
    const auto& kernels = a_.info().kernels;
    for (size_t i = 0; i < kernels.size(); ++i) {
        const frontend::KernelSource& ks = a_.kernels()[i];
        const FunctionDecl* pattern = detail::patternOf(ks.definition);
        auto [it, fresh] = groupByPattern_.emplace(pattern, groups_.size());
        if (fresh) {
            Group g;
            g.pattern = pattern;
            g.templ = ks.templ;
            g.name = kernels[i].name;
            g.selected = opt_.kernel.empty();
            groups_.push_back(std::move(g));
        }
        Group& g = groups_[it->second];
        g.kernels.push_back(i);
        if (!opt_.kernel.empty() && kernelMatches(kernels[i], opt_.kernel)) {
            g.selected = true;
        }
    }
    std::set<std::string> descNames;
    for (Group& g : groups_) {
        const FunctionDecl* p = g.pattern;
        if (opt_.launchesOnly) {
            g.refuse("--launches-only", p->getLocation());
        } else if (!g.selected) {
            g.refuse("not the kernel asked for (--kernel)", p->getLocation());
        } else if (p->isInExternCContext()) {
            g.refuse("it is declared in an extern \"C\" block (a template cannot have C linkage)",
                     p->getLocation());
        }
        // One descriptor name per kernel name in its scope (overloads get a suffix).
        std::string base = "memplace_kernel_" + p->getNameAsString();
        // The enclosing namespace or class, past `extern "C" { }` blocks (not named: a
        // kernel defined in one used to crash here).
        const DeclContext* dc = p->getDeclContext()->getRedeclContext();
        const auto* owner =
            dc->isTranslationUnit() ? nullptr : dyn_cast<NamedDecl>(Decl::castFromDeclContext(dc));
        std::string scope = owner != nullptr ? owner->getQualifiedNameAsString() : std::string();
        std::string name = base;
        for (int n = 2; !descNames.insert(scope + "::" + name).second; ++n) {
            name = fmt::format("{}_{}", base, n);
        }
        g.descName = name;

        const frontend::KernelSource& ks = a_.kernels()[g.kernels[0]];
        if (!src_.range(ks.declaration) || !src_.range(ks.paramList) || !src_.range(ks.body) ||
            !src_.offset(ks.bodyLBrace) || !src_.offset(ks.bodyRBrace)) {
            g.refuse("its definition is not written in the main file, or is spelled in a macro",
                     p->getLocation());
        }
        if (p->isExternC()) {
            g.refuse("it has C linkage (extern \"C\"): it cannot become a template",
                     p->getLocation());
        }
        const Decl* first = g.templ != nullptr ? static_cast<const Decl*>(g.templ) : p;
        for (const Decl* d : first->redecls()) {
            if (d != first) {
                g.refuse(fmt::format("it is also declared at {}: every declaration would need "
                                     "the accessor template",
                                     src_.lineCol(d->getLocation())),
                         d->getLocation());
            }
        }
        if (g.templ != nullptr) {
            for (const NamedDecl* tp : *g.templ->getTemplateParameters()) {
                if (tp->isParameterPack()) {
                    g.refuse("its template has a parameter pack", tp->getLocation());
                }
            }
            if (!src_.offset(g.templ->getTemplateParameters()->getRAngleLoc())) {
                g.refuse("its template parameter list is spelled in a macro", p->getLocation());
            }
            for (const FunctionDecl* spec : g.templ->specializations()) {
                if (spec->getTemplateSpecializationKind() == TSK_ExplicitSpecialization) {
                    g.refuse("it has explicit specializations", spec->getLocation());
                }
            }
        }
        for (const auto& [kernel, at] : facts_.kernelRefs) {
            if (kernel == p) {
                g.refuse(fmt::format("it is referred to other than by a launch at {} (its "
                                     "address, cudaFuncSetAttribute, ...): it becomes a template",
                                     src_.lineCol(at)),
                         at);
            }
        }
        // Union of the synchronisation facts of every analysed instantiation.
        for (size_t k : g.kernels) {
            detail::SyncFacts s = detail::syncFactsOf(ctx_, a_.kernels()[k].decl);
            if (s.barrier && !g.sync.barrier) {
                g.sync.barrier = true;
                g.sync.barrierAt = s.barrierAt;
            }
            if (s.earlyReturn && !g.sync.earlyReturn) {
                g.sync.earlyReturn = true;
                g.sync.returnAt = s.returnAt;
            }
            if (s.interBlock && !g.sync.interBlock) {
                g.sync.interBlock = true;
                g.sync.interBlockWhy = s.interBlockWhy;
            }
        }
    }
}

// ---- sites -------------------------------------------------------------------------------

std::optional<std::vector<std::tuple<unsigned, unsigned, std::string>>>
Rewriter::aliasEdits(const detail::PointerAliasInit& a) const {
    // `const float* row = m + a - b;` becomes `auto row = memplace::offset(m, a,
    // memplace::minus(b));` (a view of the accessor at that offset, evaluated once, here).
    std::vector<std::tuple<unsigned, unsigned, std::string>> out;
    auto begin = src_.offset(a.var->getBeginLoc());
    auto name = src_.offset(a.var->getLocation());
    auto init = src_.range(a.var->getInit()->getSourceRange());
    auto param = src_.range(a.param->getSourceRange());
    if (!begin || !name || !init || !param || *begin >= *name || *name >= init->first) {
        return std::nullopt;
    }
    const std::string p = src_.slice(*param);
    if (!matches(p, "[A-Za-z_][A-Za-z_0-9]*") ||
        !matches(src_.slice(*begin, *name), "[A-Za-z_0-9\\s*&:<>,]*")) {
        return std::nullopt;
    }
    out.emplace_back(*begin, *name, a.var->getType().isConstQualified() ? "const auto " : "auto ");
    if (a.terms.empty()) {
        if (!matches(src_.slice(*init), ("[(\\s]*" + p + "[)\\s]*").c_str())) {
            return std::nullopt;
        }
        out.emplace_back(init->first, init->second, "memplace::offset(" + p + ")");
        return out;
    }
    std::vector<std::pair<unsigned, unsigned>> ranges;
    for (const detail::OffsetTerm& t : a.terms) {
        auto r = src_.range(t.expr->getSourceRange());
        if (!r) {
            return std::nullopt;
        }
        ranges.push_back(*r);
    }
    auto op = [&](size_t k) { return a.terms[k].negated ? std::string("-") : std::string("\\+"); };
    auto open = [&](size_t k) { return a.terms[k].negated ? "memplace::minus(" : ""; };
    auto close = [&](size_t k) { return a.terms[k].negated ? ")" : ""; };
    auto between = [&](unsigned x, unsigned y) {
        return x <= y ? src_.slice(x, y) : std::string("\x01");
    };
    const std::string first = between(init->first, ranges[0].first);
    const std::string last = between(ranges.back().second, init->second);
    if (a.element != nullptr) {
        if (!matches(first, ("&\\s*[(\\s]*" + p + "[)\\s]*\\[\\s*").c_str()) ||
            !matches(last, "\\s*\\]")) {
            return std::nullopt;
        }
    } else if (!matches(first, ("[(\\s]*" + p + "[)\\s]*" + op(0) + "\\s*").c_str()) ||
               !matches(last, "[)\\s]*")) {
        return std::nullopt;
    }
    out.emplace_back(init->first, ranges[0].first, "memplace::offset(" + p + ", " + open(0));
    for (size_t k = 1; k < ranges.size(); ++k) {
        if (!matches(between(ranges[k - 1].second, ranges[k].first),
                     ("[)\\s]*" + op(k) + "[\\s]*").c_str())) {
            return std::nullopt;
        }
        out.emplace_back(ranges[k - 1].second, ranges[k].first,
                         std::string(close(k - 1)) + ", " + open(k));
    }
    out.emplace_back(ranges.back().second, init->second,
                     std::string(close(a.terms.size() - 1)) + ")");
    return out;
}

std::optional<std::vector<std::tuple<unsigned, unsigned, std::string>>>
Rewriter::rebaseEdits(const detail::PointerRebase& r) const {
    // `src += baseY * pitch + baseX;` becomes `const auto mp_src = memplace::offset(src, baseY *
    // pitch + baseX);`.
    auto whole = src_.range(r.op->getSourceRange());
    auto rhs = src_.range(r.op->getRHS()->getSourceRange());
    auto param = src_.range(r.param->getSourceRange());
    if (!whole || !rhs || !param || rhs->second != whole->second || whole->first > rhs->first) {
        return std::nullopt;
    }
    const std::string p = src_.slice(*param);
    if (!matches(p, "[A-Za-z_][A-Za-z_0-9]*") ||
        !matches(src_.slice(whole->first, rhs->first),
                 ("[(\\s]*" + p + "[)\\s]*" + (r.negated ? "-=" : "\\+=") + "\\s*").c_str())) {
        return std::nullopt;
    }
    std::vector<std::tuple<unsigned, unsigned, std::string>> out;
    out.emplace_back(whole->first, rhs->first,
                     "const auto mp_" + p + " = memplace::offset(" + p + ", " +
                         (r.negated ? "memplace::minus(" : ""));
    out.emplace_back(rhs->second, rhs->second, r.negated ? "))" : ")");
    return out;
}

void Rewriter::collectSites() {
    for (const frontend::KernelSource& ks : a_.kernels()) {
        if (ks.decl != nullptr && ks.decl->getBody() != nullptr) {
            for (auto& r : detail::pointerRebasesIn(ks.decl->getBody())) {
                rebases_.push_back(r);
            }
        }
    }
    // Local pointers into parameters: an access through one is an access of the parameter.
    for (const frontend::KernelSource& ks : a_.kernels()) {
        if (ks.decl != nullptr && ks.decl->getBody() != nullptr) {
            for (auto& a : detail::pointerAliasesIn(ks.decl->getBody())) {
                aliasKey_[a.var] = *detail::pointerParamOf(a.param);
                aliases_.push_back(std::move(a));
            }
        }
    }
    const auto& kernels = a_.info().kernels;
    for (size_t k = 0; k < kernels.size(); ++k) {
        const auto& infoSites = kernels[k].sites;
        const auto& srcSites = a_.kernels()[k].sites;
        for (size_t i = 0; i < srcSites.size() && i < infoSites.size(); ++i) {
            const frontend::SiteSource& ss = srcSites[i];
            detail::SiteShape shape =
                ss.expr != nullptr ? detail::shapeOf(ctx_, ss.expr) : detail::SiteShape{};
            if (shape.base != nullptr) {
                siteBases_.insert(shape.base);
            }
            if (siteById_.count(ss.id) != 0) {
                // The same written site in another instantiation or call path: the same edit.
                SiteRec* r = siteById_[ss.id];
                if (!r->deduces && ss.expr != nullptr && detail::deducesType(ctx_, ss.expr)) {
                    r->deduces = true;
                }
                continue;
            }
            auto rec = std::make_unique<SiteRec>();
            rec->id = ss.id;
            rec->info = &infoSites[i];
            rec->src = &ss;
            rec->shape = shape;
            if (shape.base != nullptr) {
                rec->key = detail::pointerParamOf(shape.base);
                if (auto it = aliasKey_.find(dyn_cast<VarDecl>(shape.base->getDecl()));
                    !rec->key && it != aliasKey_.end()) {
                    rec->key = it->second;
                }
            }
            SourceLocation at = ss.expr != nullptr ? ss.expr->getBeginLoc() : SourceLocation();
            if (!shape.why.empty()) {
                rec->failure = shape.why;
                rec->failureAt = at;
            } else if (!ss.rewritable) {
                rec->failure = "the access is not one contiguous range of the main file";
                rec->failureAt = at;
            } else if (!rec->key) {
                rec->failure = "its pointer is not a parameter";
                rec->failureAt = at;
            } else if (ss.expr != nullptr) {
                SourceLocation ref = detail::bindsNonConstRef(ctx_, ss.expr);
                if (ref.isValid()) {
                    rec->failure = "the element is bound to a non-const reference (only the "
                                   "global place could serve it)";
                    rec->failureAt = ref;
                }
                rec->deduces = detail::deducesType(ctx_, ss.expr);
            }
            siteById_[ss.id] = rec.get();
            sites_.push_back(std::move(rec));
        }
    }
}

// ---- arrays of a kernel --------------------------------------------------------------------

/// Places of an array by the kernel's semantics: the analysis's rules without the extent
/// (the runtime checks capacities with the real extents at each launch).
PlaceSet semanticPlaces(const ki::KernelInfo& k, const std::string& array) {
    ki::KernelInfo copy = k;
    for (auto& a : copy.arrays) {
        a.extent.bytes.reset();
    }
    ki::computeFeasibility(copy);
    const ki::ArrayInfo* a = copy.findArray(array);
    PlaceSet s = a != nullptr ? a->feasible : PlaceSet{Place::Global};
    s.erase(Place::Registers);
    return s;
}

void Rewriter::planArrays(Group& g) {
    const FunctionDecl* p = g.pattern;
    const auto& kernels = a_.info().kernels;
    const frontend::KernelSource& ks0 = a_.kernels()[g.kernels[0]];
    std::set<std::string> taken;
    for (const ParmVarDecl* pv : p->parameters()) {
        taken.insert(pv->getNameAsString());
    }
    if (g.templ != nullptr) {
        for (const NamedDecl* tp : *g.templ->getTemplateParameters()) {
            taken.insert(tp->getNameAsString());
        }
    }
    for (unsigned i = 0; i < p->getNumParams(); ++i) {
        const ParmVarDecl* pv = p->getParamDecl(i);
        QualType pt = pv->getType();
        if (!pt->isPointerType() && !pt->isDependentType()) {
            continue;
        }
        // A dependent parameter type is a pointer if it is one in the instantiations.
        const ki::ArrayInfo* first = nullptr;
        for (const auto& a : kernels[g.kernels[0]].arrays) {
            if (a.kind == ki::ArrayKind::Parameter && a.paramIndex == static_cast<int>(i)) {
                first = &a;
            }
        }
        if (first == nullptr) {
            continue;
        }
        ArrayPlan ap;
        ap.param = i;
        ap.name = pv->getNameAsString();
        ap.key = ParamKey{p, i};
        ap.decl = pv;
        ap.mpName = "MP_" + ap.name;
        while (taken.count(ap.mpName) != 0) {
            ap.mpName += "_";
        }
        taken.insert(ap.mpName);
        auto refuse = [&](std::string why, SourceLocation at) {
            if (ap.reason.empty()) {
                ap.reason = std::move(why);
                ap.reasonAt = at;
            }
        };

        // Over every analysed instantiation: mode, places, element, dimensions.
        bool firstInst = true;
        bool readOnlyAsWritten = true;
        std::optional<std::pair<int, int>> twoD;
        bool twoDConflict = false;
        for (size_t k : g.kernels) {
            const ki::KernelInfo& ki = kernels[k];
            const ki::ArrayInfo* a = nullptr;
            for (const auto& c : ki.arrays) {
                if (c.kind == ki::ArrayKind::Parameter && c.paramIndex == static_cast<int>(i)) {
                    a = &c;
                }
            }
            if (a == nullptr) {
                refuse("not an array in every instantiation", pv->getLocation());
                continue;
            }
            ap.mode = ki::combine(ap.mode, a->mode);
            readOnlyAsWritten = readOnlyAsWritten && a->original == Place::ReadOnly;
            PlaceSet s = semanticPlaces(ki, a->name);
            if (firstInst) {
                ap.mask = s;
            } else {
                PlaceSet both;
                for (Place pl : kAllPlaces) {
                    if (s.contains(pl) && ap.mask.contains(pl)) {
                        both.insert(pl);
                    }
                }
                ap.mask = both;
            }
            firstInst = false;
            if (a->elementSize == 0) {
                refuse(fmt::format("element type '{}' has no known size", a->elementType),
                       pv->getLocation());
            }
            const ParmVarDecl* ipv = a_.kernels()[k].decl->getParamDecl(i);
            QualType elem = ipv->getType()->getPointeeType();
            if (elem.isNull() || elem->isPointerType() || elem->isArrayType() ||
                elem->isFunctionType() || elem->isVoidType() || elem->isReferenceType()) {
                refuse(fmt::format("element type '{}' is not a value type an accessor can hold",
                                   typeText(elem, ctx_)),
                       pv->getLocation());
            }
            // 2-D: a row length that is one integer parameter of the kernel.
            std::optional<std::pair<int, int>> mine;
            if (a->dimensionality == 2 && a->rowLength) {
                const auto& ms = a->rowLength->monomials();
                if (ms.size() == 1 && ms[0].scale == 1 && ms[0].symbols.size() == 1) {
                    for (size_t pi = 0; pi < ki.params.size(); ++pi) {
                        if (ki.params[pi].name == ms[0].symbols[0] &&
                            a_.kernels()[k].decl->getParamDecl(pi)->getType()->isIntegerType()) {
                            mine = std::make_pair(2, static_cast<int>(pi));
                        }
                    }
                }
            }
            if (twoD.has_value() || !firstInst) {
                // compared below
            }
            if (k == g.kernels[0]) {
                twoD = mine;
            } else if (twoD != mine) {
                twoDConflict = true;
            }
        }
        if (twoD && !twoDConflict) {
            ap.dims = 2;
            ap.widthParam = twoD->second;
        }
        if (ap.mode == ki::AccessMode::None) {
            refuse("the kernel does not access it", pv->getLocation());
        }
        if (pv->hasDefaultArg()) {
            refuse("it has a default argument", pv->getLocation());
        }
        // Every access through a volatile pointer must stay one volatile access of the memory
        // the program wrote it for: no accessor (staging, caches, tracing) may stand between.
        if (const QualType pointee = pv->getType()->getPointeeType();
            !pointee.isNull() && pointee.isVolatileQualified()) {
            refuse("it points to volatile memory, whose accesses must stay as written",
                   pv->getLocation());
        }
        if (i >= ks0.params.size() || !src_.range(ks0.params[i])) {
            refuse("its declaration is spelled in a macro", pv->getLocation());
        }
        PlaceSet beyond = ap.mask;
        beyond.erase(Place::Global);
        if (beyond.empty() && ap.reason.empty()) {
            refuse("the analysis keeps it in global memory (see the warning above)",
                   pv->getLocation());
        }
        // Element type as the parameter declares it (pattern spelling: `const T`).
        QualType pe = pv->getType()->getPointeeType();
        if (pe.isNull()) {
            // a dependent type that is not spelled as T*: use the first instantiation's
            pe = a_.kernels()[g.kernels[0]].decl->getParamDecl(i)->getType()->getPointeeType();
        }
        ap.elemType = typeText(pe, ctx_);
        ap.elemTypeBare = typeText(pe.getUnqualifiedType(), ctx_);
        ap.original = readOnlyAsWritten && !firstInst ? Place::ReadOnly : Place::Global;
        g.arrays.push_back(std::move(ap));
    }
    // Sites per array.
    for (auto& up : sites_) {
        const SiteRec& s = *up;
        if (!s.key || s.key->fn != p) {
            continue;
        }
        for (auto& ap : g.arrays) {
            if (ap.param == s.key->index) {
                ap.sites.push_back(&s);
                if (!s.info->member.empty() && ki::writes(s.info->access)) {
                    ap.memberWrite = true;
                }
            }
        }
    }
    for (auto& ap : g.arrays) {
        // Every site of the array, also those reached through helpers, must be rewritable.
        for (size_t k : g.kernels) {
            for (const ki::Site& site : kernels[k].sites) {
                if (site.array != ap.name &&
                    std::find(site.otherArrays.begin(), site.otherArrays.end(), ap.name) ==
                        site.otherArrays.end()) {
                    continue;
                }
                auto it = siteById_.find(site.id);
                if (it == siteById_.end()) {
                    continue;
                }
                const SiteRec& s = *it->second;
                if (!s.failure.empty() && ap.reason.empty()) {
                    ap.reason = fmt::format("site {} at {}: {}", s.id, src_.lineCol(s.failureAt),
                                            s.failure);
                    ap.reasonAt = s.failureAt;
                }
            }
        }
        ap.candidate = ap.reason.empty();
        ap.accessor = ap.candidate;
    }
}

// ---- helpers: __device__ functions handed an array -----------------------------------------

void Rewriter::planHelpers() {
    for (const CallExpr* call : facts_.calls) {
        const FunctionDecl* callee = detail::patternOf(call->getDirectCallee());
        if (callee == nullptr || callee->hasAttr<CUDAGlobalAttr>()) {
            continue;
        }
        unsigned shift = isa<CXXOperatorCallExpr>(call) && isa<CXXMethodDecl>(callee) ? 1 : 0;
        for (unsigned i = shift; i < call->getNumArgs(); ++i) {
            unsigned pi = i - shift;
            if (pi >= callee->getNumParams()) {
                break;
            }
            const ParmVarDecl* pv = callee->getParamDecl(pi);
            if (!pv->getType()->isPointerType() && !pv->getType()->isDependentType()) {
                continue;
            }
            const auto* dre = dyn_cast<DeclRefExpr>(call->getArg(i)->IgnoreParenImpCasts());
            Edge e;
            e.to = ParamKey{callee, pi};
            e.at = call->getArg(i)->getBeginLoc();
            if (dre != nullptr) {
                e.from = detail::pointerParamOf(dre);
            }
            edges_.push_back(e);
        }
    }
    // Candidates: helper parameters some call hands a kernel array or another helper's pointer
    // parameter.
    for (const Edge& e : edges_) {
        if (e.from) {
            helpers_.try_emplace(
                e.to,
                HelperParam{
                    .key = e.to, .active = true, .reason = {}, .reasonAt = {}, .written = false});
        }
    }
    for (auto& [key, h] : helpers_) {
        const FunctionDecl* fn = key.fn;
        auto refuse = [&](std::string why, SourceLocation at) {
            if (h.active) {
                h.active = false;
                h.reason = std::move(why);
                h.reasonAt = at;
            }
        };
        if (isa<CXXMethodDecl>(fn)) {
            refuse("a member function", fn->getLocation());
        }
        if (fn->isExternC()) {
            refuse("it has C linkage", fn->getLocation());
        }
        if (!fn->hasAttr<CUDADeviceAttr>()) {
            refuse("not a __device__ function", fn->getLocation());
        }
        const FunctionTemplateDecl* ft = fn->getDescribedFunctionTemplate();
        const Decl* first = ft != nullptr ? static_cast<const Decl*>(ft) : fn;
        for (const Decl* d : first->redecls()) {
            if (d != first) {
                refuse(fmt::format("also declared at {}", src_.lineCol(d->getLocation())),
                       d->getLocation());
            }
        }
        if (ft != nullptr) {
            for (const NamedDecl* tp : *ft->getTemplateParameters()) {
                if (tp->isParameterPack()) {
                    refuse("its template has a parameter pack", tp->getLocation());
                }
            }
            if (!src_.offset(ft->getTemplateParameters()->getRAngleLoc())) {
                refuse("its template parameter list is spelled in a macro", fn->getLocation());
            }
        } else if (!src_.offset(src_.sm().getExpansionLoc(fn->getBeginLoc()))) {
            refuse("its declaration is not written in the main file", fn->getLocation());
        }
        const ParmVarDecl* pv = fn->getParamDecl(key.index);
        if (!src_.range(pv->getSourceRange())) {
            refuse("its parameter is spelled in a macro", pv->getLocation());
        }
        if (pv->hasDefaultArg()) {
            refuse("its parameter has a default argument", pv->getLocation());
        }
        for (const auto& up : sites_) {
            if (up->key && *up->key == key && !up->failure.empty()) {
                refuse(fmt::format("site {} at {}: {}", up->id, src_.lineCol(up->failureAt),
                                   up->failure),
                       up->failureAt);
            }
        }
    }
}

void Rewriter::classifyUses() {
    // Which call argument each pointer reference is, if any.
    std::map<const DeclRefExpr*, ParamKey> passed;
    for (const CallExpr* call : facts_.calls) {
        const FunctionDecl* callee = detail::patternOf(call->getDirectCallee());
        if (callee == nullptr) {
            continue;
        }
        unsigned shift = isa<CXXOperatorCallExpr>(call) && isa<CXXMethodDecl>(callee) ? 1 : 0;
        for (unsigned i = shift; i < call->getNumArgs(); ++i) {
            if (i - shift >= callee->getNumParams()) {
                break;
            }
            if (const auto* dre = dyn_cast<DeclRefExpr>(call->getArg(i)->IgnoreParenImpCasts())) {
                passed.emplace(dre, ParamKey{callee, i - shift});
            }
        }
    }
    // A pointer alias serves its parameter's accessor when every reference to it is the base of
    // an access site (the frontend recorded one only where all are) and its text can be edited.
    for (const detail::PointerAliasInit& a : aliases_) {
        const auto* owner = dyn_cast_or_null<FunctionDecl>(a.var->getDeclContext());
        const bool ok =
            aliasEdits(a).has_value() && owner != nullptr && owner->getBody() != nullptr &&
            everyReference(owner->getBody(), a.var,
                           [&](const DeclRefExpr* dre) { return siteBases_.count(dre) != 0; });
        if (ok) {
            aliasByParamRef_[a.param] = &a;
        }
    }
    // A rebased parameter: one rebase, every other reference a later access site.
    for (const detail::PointerRebase& r : rebases_) {
        const auto* pv = cast<ParmVarDecl>(r.param->getDecl());
        const auto* owner = dyn_cast<FunctionDecl>(pv->getDeclContext());
        auto end = src_.offset(r.op->getEndLoc());
        bool ok = rebaseEdits(r).has_value() && owner != nullptr && owner->getBody() != nullptr &&
                  end.has_value() &&
                  std::count_if(rebases_.begin(), rebases_.end(),
                                [&](const auto& o) { return o.param->getDecl() == pv; }) == 1;
        if (auto body = ok ? src_.range(owner->getBody()->getSourceRange()) : std::nullopt;
            !body || std::regex_search(src_.slice(*body),
                                       std::regex("\\bmp_" + pv->getNameAsString() + "\\b"))) {
            ok = false; // the view's name `mp_<name>` is taken (or the body cannot be read)
        }
        ok = ok && everyReference(owner->getBody(), pv, [&](const DeclRefExpr* dre) {
                 auto at = src_.offset(dre->getBeginLoc());
                 return dre == r.param || (siteBases_.count(dre) != 0 && at && *at > *end);
             });
        if (ok) {
            rebaseByParamRef_[r.param] = &r;
            rebasedName_[pv] = "mp_" + pv->getNameAsString();
        }
    }
    for (const auto& [dre, key] : facts_.paramUses) {
        Use u;
        u.dre = dre;
        u.key = key;
        if (siteBases_.count(dre) != 0) {
            u.kind = UseKind::SiteBase;
        } else if (aliasByParamRef_.count(dre) != 0 || rebaseByParamRef_.count(dre) != 0) {
            u.kind = UseKind::AliasInit;
        } else if (auto it = passed.find(dre); it != passed.end()) {
            u.kind = UseKind::HelperArg;
            u.helper = it->second;
        }
        uses_.push_back(u);
    }
}

void Rewriter::fixpoint() {
    for (int round = 0; round < 100; ++round) {
        bool changed = false;
        // Helper parameters: every call hands an accessor, every use is a site or a pass.
        for (auto& [key, h] : helpers_) {
            if (!h.active) {
                continue;
            }
            for (const Edge& e : edges_) {
                if (e.to == key && (!e.from || !active(*e.from))) {
                    h.active = false;
                    h.reason = fmt::format("it is also handed a pointer that is not a placeable "
                                           "array at {}",
                                           src_.lineCol(e.at));
                    h.reasonAt = e.at;
                    changed = true;
                    break;
                }
            }
        }
        for (const Use& u : uses_) {
            bool ok = u.kind == UseKind::SiteBase || u.kind == UseKind::AliasInit ||
                      (u.kind == UseKind::HelperArg && active(u.helper));
            if (ok) {
                continue;
            }
            if (auto it = helpers_.find(u.key); it != helpers_.end() && it->second.active) {
                it->second.active = false;
                it->second.reason =
                    u.kind == UseKind::HelperArg
                        ? fmt::format("it is passed on at {} to a parameter that stays a pointer",
                                      src_.lineCol(u.dre->getBeginLoc()))
                        : fmt::format("its pointer is used other than in an access at {}",
                                      src_.lineCol(u.dre->getBeginLoc()));
                it->second.reasonAt = u.dre->getBeginLoc();
                changed = true;
            }
            if (Group* g = groupOf(u.key.fn); g != nullptr && g->ok) {
                for (auto& ap : g->arrays) {
                    if (ap.param == u.key.index && ap.accessor) {
                        ap.accessor = false;
                        ap.reason =
                            u.kind == UseKind::HelperArg
                                ? fmt::format("passed at {} to a helper parameter that stays a "
                                              "pointer ({})",
                                              src_.lineCol(u.dre->getBeginLoc()),
                                              helpers_.count(u.helper) != 0
                                                  ? helpers_[u.helper].reason
                                                  : "not a __device__ function with a body")
                                : fmt::format("its pointer is used other than in an access at {}",
                                              src_.lineCol(u.dre->getBeginLoc()));
                        ap.reasonAt = u.dre->getBeginLoc();
                        changed = true;
                    }
                }
            }
        }
        // Launches that cannot be rewritten keep their kernel as written.
        for (const auto& [off, lf] : facts_.launches) {
            std::set<Group*> gs;
            for (const auto& [call, kernel] : lf.resolved) {
                if (Group* g = groupOf(kernel)) {
                    gs.insert(g);
                }
            }
            for (Group* g : gs) {
                if (!g->ok) {
                    continue;
                }
                std::string why;
                unsigned b = 0;
                unsigned e = 0;
                if (gs.size() > 1) {
                    why = "the launch resolves to several kernels";
                } else if (!launchText(lf, g, &why, &b, &e)) {
                    // why set
                } else {
                    continue;
                }
                g->refuse(fmt::format("its launch at {} cannot be rewritten: {}",
                                      src_.lineCol(lf.calls[0]->getBeginLoc()), why),
                          lf.calls[0]->getBeginLoc());
                changed = true;
            }
        }
        for (Group& g : groups_) {
            if (g.ok && g.accessorArrays().empty()) {
                g.refuse("no array of it can be placed elsewhere than global memory",
                         g.pattern->getLocation());
                changed = true;
            }
        }
        if (!changed) {
            return;
        }
    }
}

void Rewriter::finishArrays(Group& g) {
    const auto& kernels = a_.info().kernels;
    for (ArrayPlan& ap : g.arrays) {
        if (!ap.accessor) {
            continue;
        }
        // Shared staging of a written array (docs/rewriting.md): correct when no block reads an
        // element another block writes in the same launch, and every thread reaches the
        // epilogue's barrier.
        if (ap.written() && ap.mask.contains(Place::Shared)) {
            std::string why;
            if (ap.memberWrite) {
                why = "shared: a member of an element is written (the whole element is copied "
                      "back)";
            } else if (g.sync.earlyReturn && g.sync.barrier) {
                why = fmt::format("shared: a `return` at {} and a barrier at {} (the staging "
                                  "epilogue's barrier would not be reached by every thread "
                                  "together)",
                                  src_.lineCol(g.sync.returnAt), src_.lineCol(g.sync.barrierAt));
            } else if (ap.mode != ki::AccessMode::Write && g.sync.interBlock) {
                why = fmt::format("shared: blocks may exchange data in one launch ({})",
                                  g.sync.interBlockWhy);
            }
            if (!why.empty()) {
                ap.mask.erase(Place::Shared);
                ap.notes.push_back(why);
            }
        }
        // The statically likely place (docs/rewriting.md, "compiled placements").
        bool indirect = false;
        bool uniform = true;
        bool small = true;
        for (size_t k : g.kernels) {
            for (const ki::Site& s : kernels[k].sites) {
                if (s.array != ap.name) {
                    continue;
                }
                if (s.index.kind == ki::IndexKind::Indirect) {
                    indirect = true;
                }
                if (s.index.kind != ki::IndexKind::Affine) {
                    uniform = false;
                }
                for (const auto& t : s.index.terms) {
                    if (t.var.rfind("threadIdx", 0) == 0) {
                        uniform = false;
                    }
                }
            }
            if (const ki::ArrayInfo* a = kernels[k].findArray(ap.name);
                a != nullptr && a->extent.bytes && *a->extent.bytes > ki::kConstantBankBytes) {
                small = false;
            }
        }
        if (ap.written()) {
            ap.likely = Place::Global;
            ap.likelyWhy = "written";
        } else if (ap.dims == 2 && ap.mask.contains(Place::Texture)) {
            ap.likely = Place::Texture;
            ap.likelyWhy = "indexed row * width + column: a 2-D texture";
        } else if (indirect && ap.mask.contains(Place::Texture)) {
            ap.likely = Place::Texture;
            ap.likelyWhy = "gathered through another array";
        } else if (uniform && small && ap.mask.contains(Place::Constant)) {
            ap.likely = Place::Constant;
            ap.likelyWhy = "every lane of a warp reads the same element (no threadIdx in its "
                           "indices), and it fits the 64 KB bank";
        } else if (ap.mask.contains(Place::ReadOnly)) {
            ap.likely = Place::ReadOnly;
            ap.likelyWhy = "read-only";
        } else {
            ap.likely = Place::Global;
            ap.likelyWhy = "no other read place is feasible";
        }
        if (ap.mode == ki::AccessMode::Write && ap.memberWrite) {
            ap.mode = ki::AccessMode::ReadWrite; // partial writes: the element is read too
        }
        ap.dims = ap.mask.contains(Place::Texture) ? ap.dims : 1;
        if (ap.dims != 2) {
            ap.widthParam = -1;
        }
        if (!ap.mask.contains(ap.original) || (ap.written() && ap.original != Place::Global)) {
            ap.original = Place::Global;
        }
    }
    // The default instantiation is the placement as written; compiled besides it: every array
    // global, every read-only array on the read-only path, and every array in its likely place.
    auto accs = g.accessorArrays();
    const std::vector<Place> def = g.originalPlacement();
    std::vector<Place> global(accs.size(), Place::Global);
    std::vector<Place> readonly;
    std::vector<Place> likely;
    for (const ArrayPlan* ap : accs) {
        readonly.push_back(!ap->written() && ap->mask.contains(Place::ReadOnly) ? Place::ReadOnly
                                                                                : Place::Global);
        likely.push_back(ap->likely);
    }
    for (const auto& pl : {global, readonly, likely}) {
        if (pl != def && std::find(g.compiled.begin(), g.compiled.end(), pl) == g.compiled.end()) {
            g.compiled.push_back(pl);
        }
    }
}

// ---- launches ----------------------------------------------------------------------------

std::optional<std::string> Rewriter::launchText(const detail::LaunchFact& lf, const Group* g,
                                                std::string* why, unsigned* b, unsigned* e) {
    const CUDAKernelCallExpr* call =
        !lf.resolved.empty() ? lf.resolved[0].first : (lf.dependent ? lf.dependent : lf.calls[0]);
    auto whole = src_.range(call->getSourceRange());
    if (!whole) {
        *why = "it is spelled in a macro";
        return std::nullopt;
    }
    *b = whole->first;
    *e = whole->second;
    // A launch inside a kernel (dynamic parallelism) is not rewritten.
    for (const Group& og : groups_) {
        auto body = src_.range(a_.kernels()[og.kernels[0]].body);
        if (body && *b >= body->first && *b < body->second) {
            *why = "it is inside a kernel";
            return std::nullopt;
        }
    }
    const CallExpr* cfg = call->getConfig();
    if (cfg == nullptr) {
        *why = "no launch configuration";
        return std::nullopt;
    }
    std::string conf[4] = {"", "", "0", "0"};
    for (unsigned i = 0; i < 4 && i < cfg->getNumArgs(); ++i) {
        const Expr* a = cfg->getArg(i);
        if (isa<CXXDefaultArgExpr>(a)) {
            continue;
        }
        auto r = src_.range(a->getSourceRange());
        if (!r) {
            *why = "a configuration value is spelled in a macro";
            return std::nullopt;
        }
        conf[i] = src_.slice(*r);
    }
    if (conf[0].empty() || conf[1].empty()) {
        *why = "no grid or block size";
        return std::nullopt;
    }
    std::vector<std::string> args;
    for (unsigned i = 0; i < call->getNumArgs(); ++i) {
        const Expr* a = call->getArg(i);
        if (isa<CXXDefaultArgExpr>(a)) {
            break; // defaulted trailing arguments: K::launch (or the kernel) has the defaults
        }
        if (isa<InitListExpr>(a->IgnoreImplicit())) {
            *why = "a braced argument cannot be forwarded";
            return std::nullopt;
        }
        auto r = src_.range(a->getSourceRange());
        if (!r) {
            *why = "an argument is spelled in a macro";
            return std::nullopt;
        }
        args.push_back(src_.slice(*r));
    }
    // The kernel as the launch names it, with its template arguments written out.
    const Expr* calleeExpr = call->getCallee()->IgnoreParenImpCasts();
    std::string qualifier;
    std::string name;
    std::string targs;
    if (const auto* dre = dyn_cast<DeclRefExpr>(calleeExpr)) {
        auto whole2 = src_.range(dre->getSourceRange());
        auto nameR = src_.range(
            SourceRange(dre->getNameInfo().getBeginLoc(), dre->getNameInfo().getEndLoc()));
        if (!whole2 || !nameR) {
            *why = "the kernel's name is spelled in a macro";
            return std::nullopt;
        }
        qualifier = src_.slice(whole2->first, nameR->first);
        name = src_.slice(*nameR);
        if (dre->hasExplicitTemplateArgs()) {
            auto t = src_.range(SourceRange(dre->getLAngleLoc(), dre->getRAngleLoc()));
            if (!t) {
                *why = "its template arguments are spelled in a macro";
                return std::nullopt;
            }
            targs = src_.slice(*t);
        } else if (const FunctionDecl* fd = dyn_cast<FunctionDecl>(dre->getDecl());
                   fd != nullptr && fd->getTemplateSpecializationArgs() != nullptr) {
            // Deduced: write the arguments out, if every instantiation of the launch agrees.
            if (lf.dependent != nullptr) {
                *why = "the kernel's template arguments are deduced in a host template";
                return std::nullopt;
            }
            std::string printed;
            llvm::raw_string_ostream os(printed);
            os << "<";
            bool firstArg = true;
            for (const TemplateArgument& ta : fd->getTemplateSpecializationArgs()->asArray()) {
                os << (firstArg ? "" : ", ");
                ta.print(policyFor(ctx_), os, true);
                firstArg = false;
            }
            os << ">";
            targs = os.str();
        }
    } else if (const auto* ule = dyn_cast<UnresolvedLookupExpr>(calleeExpr)) {
        auto whole2 = src_.range(ule->getSourceRange());
        if (!whole2 || (g != nullptr && !ule->hasExplicitTemplateArgs())) {
            *why = "the kernel cannot be named with its template arguments";
            return std::nullopt;
        }
        auto nameR = src_.range(SourceRange(ule->getNameLoc(), ule->getNameLoc()));
        if (!nameR) {
            *why = "the kernel's name is spelled in a macro";
            return std::nullopt;
        }
        qualifier = src_.slice(whole2->first, nameR->first);
        name = src_.slice(*nameR);
        targs = src_.slice(nameR->second, whole2->second);
    } else {
        if (g != nullptr) {
            *why = "the kernel is not called by name";
            return std::nullopt;
        }
        auto r = src_.range(calleeExpr->getSourceRange());
        if (!r) {
            *why = "the kernel is spelled in a macro";
            return std::nullopt;
        }
        name = src_.slice(*r);
    }
    if (g == nullptr) {
        std::vector<std::string> items{macroArg(qualifier + name + targs)};
        for (const auto& c : conf) {
            items.push_back(macroArg(c));
        }
        for (const auto& a : args) {
            items.push_back(macroArg(a));
        }
        unsigned ls = 0;
        const bool alone = src_.onlyBlanksBefore(*b, &ls);
        return wrapList("MEMPLACE_LAUNCH(", items, ")", src_.indentOf(*b) + "    ",
                        alone ? *b - ls : 0);
    }
    // The runtime: array arguments must be pointers (or nullptr).
    for (const ArrayPlan* ap : g->accessorArrays()) {
        if (ap->param >= args.size()) {
            *why = fmt::format("the argument for '{}' is defaulted", ap->name);
            return std::nullopt;
        }
        for (const auto& [c, k] : lf.resolved) {
            QualType t = c->getArg(ap->param)->IgnoreImpCasts()->getType();
            if (!t->isPointerType() && !t->isArrayType() && !t->isNullPtrType()) {
                if (lf.dependent != nullptr || lf.resolved.size() > 1) {
                    *why = fmt::format("the argument for '{}' is not a pointer", ap->name);
                    return std::nullopt;
                }
                args[ap->param] = fmt::format("static_cast<{}>({})",
                                              typeText(k->getParamDecl(ap->param)->getType(), ctx_),
                                              args[ap->param]);
            }
        }
    }
    std::vector<std::string> items(conf, conf + 4);
    items.insert(items.end(), args.begin(), args.end());
    unsigned ls = 0;
    const bool alone = src_.onlyBlanksBefore(*b, &ls);
    return wrapList("memplace::launch<" + qualifier + g->descName + targs + ">(", items, ")",
                    src_.indentOf(*b) + "    ", alone ? *b - ls : 0);
}

void Rewriter::planLaunches() {
    for (const auto& [off, lf] : facts_.launches) {
        LaunchPlan lp;
        lp.fact = &lf;
        Group* g = nullptr;
        for (const auto& [call, kernel] : lf.resolved) {
            if (Group* kg = groupOf(kernel); kg != nullptr && kg->ok) {
                g = kg;
            }
        }
        std::string why;
        auto text = launchText(lf, g, &why, &lp.begin, &lp.end);
        if (text) {
            lp.text = *text;
            lp.kind = g != nullptr ? LaunchPlan::Kind::Runtime : LaunchPlan::Kind::Macro;
            lp.group = g;
            if (g != nullptr) {
                ++g->launches;
            }
        } else {
            lp.kind = LaunchPlan::Kind::Untouched;
            lp.why = why;
        }
        launches_.push_back(std::move(lp));
    }
}

// ---- emitting ------------------------------------------------------------------------------

void Rewriter::emitSite(const SiteRec& s, bool written, EditList& edits) {
    const frontend::SiteSource& ss = *s.src;
    auto access = src_.range(ss.access);
    auto base = src_.range(ss.base);
    std::optional<std::pair<unsigned, unsigned>> index;
    if (!ss.indices.empty()) {
        index = src_.range(ss.indices[0]);
    }
    const std::string at = fmt::format("memplace::at<{}>(", s.id);
    std::string baseText = base ? src_.slice(*base) : std::string();
    const auto* baseParam =
        s.shape.base != nullptr ? dyn_cast<ParmVarDecl>(s.shape.base->getDecl()) : nullptr;
    if (auto it = rebasedName_.find(baseParam); it != rebasedName_.end() && base) {
        // A rebased parameter: the view its rebase declared (`mp_src`).
        baseText = it->second;
        if (s.shape.shape == Shape::Subscript || s.shape.shape == Shape::AtomicAddr) {
            edits.replace(base->first, base->second, baseText);
        }
    }
    const bool member = !s.info->member.empty();
    const bool memberWrite = member && ki::writes(s.info->access);
    const long len = access ? static_cast<long>(access->second - access->first) : 0;
    // The element expression `a[at<S>(i)]` is built by edits around the index so that sites
    // nested in the index get their own edits.
    switch (s.shape.shape) {
    case Shape::Subscript:
        edits.insert(index->first, at, -static_cast<long>(index->second - index->first));
        edits.insert(index->second, ")", static_cast<long>(index->second - index->first));
        break;
    case Shape::Deref:
        edits.replace(access->first, access->second, baseText + "[" + at + "0)]");
        break;
    case Shape::DerefAdd: {
        // `*(p + a + b - c)` becomes `p[at<S>(a, b, memplace::minus(c))]`: at() converts each
        // term to the index type on its own and adds them, as the pointer arithmetic did (`a +
        // b` in the terms' own type could overflow or wrap where `p + a + b` does not). The
        // text between the terms (operators, grouping parentheses) is replaced; the terms
        // themselves only get edits around them, so that sites nested in them get theirs.
        const auto& terms = s.shape.terms;
        auto open = [&](size_t k) { return terms[k].negated ? "memplace::minus(" : ""; };
        auto close = [&](size_t k) { return terms[k].negated ? ")" : ""; };
        edits.replace(access->first, index->first, baseText + "[" + at + open(0));
        for (size_t k = 1; k < terms.size(); ++k) {
            auto prev = src_.range(ss.indices[k - 1]);
            auto cur = src_.range(ss.indices[k]);
            edits.replace(prev->second, cur->first, std::string(close(k - 1)) + ", " + open(k));
        }
        auto last = src_.range(ss.indices.back());
        edits.replace(last->second, access->second, std::string(close(terms.size() - 1)) + ")]");
        break;
    }
    case Shape::AtomicAddr:
        edits.insert(index->first, at, -static_cast<long>(index->second - index->first));
        edits.insert(index->second, ")", static_cast<long>(index->second - index->first));
        break;
    case Shape::AtomicAdd:
        edits.replace(base->first, index->first, "&" + baseText + "[" + at);
        edits.insert(index->second, ")]", static_cast<long>(index->second - base->first));
        break;
    case Shape::AtomicPlain:
        edits.replace(base->first, base->second, "&" + baseText + "[" + at + "0)]");
        break;
    case Shape::LdgAddr:
    case Shape::LdgAdd:
        edits.replace(access->first, index->first, baseText + "[" + at);
        edits.replace(index->second, access->second, ")]");
        break;
    case Shape::LdgPlain:
        edits.replace(access->first, access->second, baseText + "[" + at + "0)]");
        break;
    case Shape::Arrow:
    case Shape::ArrowAdd: {
        // `a->m` / `(a + i)->m`: the access range is the member expression; the element ends at
        // the arrow.
        unsigned arrow = *src_.offset(s.shape.member->getOperatorLoc());
        std::string open = !written ? "" : memberWrite ? "(&" : "memplace::value(";
        std::string close = !written ? "]." : memberWrite ? "])->" : "]).";
        if (s.shape.shape == Shape::Arrow) {
            edits.replace(access->first, arrow + 2, open + baseText + "[" + at + "0)" + close);
        } else {
            edits.replace(access->first, index->first, open + baseText + "[" + at);
            edits.replace(index->second, arrow + 2, ")" + close);
        }
        return;
    }
    }
    // Written arrays return proxies: members, and reads whose type is deduced, need the value
    // (or, for member writes, the element's address).
    if (member && written && s.shape.member != nullptr) {
        unsigned dot = *src_.offset(s.shape.member->getOperatorLoc());
        if (memberWrite) {
            edits.insert(access->first, "(&", -len - 1);
            edits.insert(access->second, ")", len + 1);
            edits.replace(dot, dot + 1, "->");
        } else {
            edits.insert(access->first, "memplace::value(", -len - 1);
            edits.insert(access->second, ")", len + 1);
        }
    } else if (written && s.deduces && !ki::writes(s.info->access) &&
               s.shape.shape != Shape::AtomicAddr && s.shape.shape != Shape::AtomicAdd &&
               s.shape.shape != Shape::AtomicPlain) {
        edits.insert(access->first, "memplace::value(", -len - 1);
        edits.insert(access->second, ")", len + 1);
    }
}

/// Checks that the text around a site is what emitSite's edits assume; the reason when not.
std::string checkSiteText(const Source& src, const SiteRec& s) {
    const frontend::SiteSource& ss = *s.src;
    auto access = src.range(ss.access);
    auto base = src.range(ss.base);
    std::optional<std::pair<unsigned, unsigned>> index;
    if (!ss.indices.empty()) {
        index = src.range(ss.indices[0]);
    }
    if (!access || !base) {
        return "the access is not one contiguous range of the main file";
    }
    const bool needIndex = s.shape.index != nullptr;
    const size_t indexRanges = s.shape.shape == Shape::DerefAdd ? s.shape.terms.size() : 1;
    if (needIndex && (!index || ss.indices.size() != indexRanges)) {
        return "its index is not one contiguous range of the main file";
    }
    const std::string b = src.slice(*base);
    if (!std::regex_match(b, std::regex("[A-Za-z_][A-Za-z_0-9]*"))) {
        return "its pointer is not written as a plain name";
    }
    const std::string id = b; // an identifier: no regex metacharacters
    auto between = [&](unsigned x, unsigned y) {
        return x <= y ? src.slice(x, y) : std::string("\x01");
    };
    bool ok = true;
    switch (s.shape.shape) {
    case Shape::Subscript:
    case Shape::AtomicAddr:
        ok = base->second <= index->first &&
             matches(between(base->second, index->first), "\\s*\\[\\s*") &&
             (s.shape.shape == Shape::AtomicAddr ||
              matches(between(index->second, access->second), "\\s*\\]"));
        break;
    case Shape::Deref:
        ok = matches(src.slice(*access), ("\\*\\s*[(\\s]*" + id + "[)\\s]*").c_str());
        break;
    case Shape::DerefAdd: {
        // Between the terms only their operator and the grouping parentheses of the sum
        // (`*((p + a) - b)`): the edits replace that text.
        const auto& terms = s.shape.terms;
        auto op = [&](size_t k) {
            return terms[k].negated ? std::string("-") : std::string("\\+");
        };
        ok = matches(between(access->first, index->first),
                     ("\\*\\s*[(\\s]*" + id + "[)\\s]*" + op(0) + "\\s*").c_str());
        for (size_t k = 1; ok && k < terms.size(); ++k) {
            auto prev = src.range(ss.indices[k - 1]);
            auto cur = src.range(ss.indices[k]);
            ok = prev && cur &&
                 matches(between(prev->second, cur->first), ("[)\\s]*" + op(k) + "\\s*").c_str());
        }
        auto last = src.range(ss.indices.back());
        ok = ok && last && matches(between(last->second, access->second), "[)\\s]*\\)");
        break;
    }
    case Shape::AtomicAdd:
        ok = matches(between(base->first, index->first), (id + "\\s*\\+\\s*").c_str());
        break;
    case Shape::AtomicPlain:
        break;
    case Shape::LdgAddr:
        ok = matches(between(access->first, index->first),
                     ("__ldg\\s*\\(\\s*&\\s*" + id + "\\s*\\[\\s*").c_str()) &&
             matches(between(index->second, access->second), "\\s*\\]\\s*\\)");
        break;
    case Shape::LdgAdd:
        ok = matches(between(access->first, index->first),
                     ("__ldg\\s*\\(\\s*" + id + "\\s*\\+\\s*").c_str()) &&
             matches(between(index->second, access->second), "\\s*\\)");
        break;
    case Shape::LdgPlain:
        ok = matches(src.slice(*access), ("__ldg\\s*\\(\\s*" + id + "\\s*\\)").c_str());
        break;
    case Shape::Arrow:
    case Shape::ArrowAdd: {
        auto arrow =
            s.shape.member != nullptr ? src.offset(s.shape.member->getOperatorLoc()) : std::nullopt;
        if (!arrow || src.slice(*arrow, *arrow + 2) != "->") {
            return "its `->` is spelled in a macro";
        }
        ok = s.shape.shape == Shape::Arrow
                 ? matches(between(access->first, *arrow), ("[(\\s]*" + id + "[)\\s]*").c_str())
                 : matches(between(access->first, index->first),
                           ("\\(\\s*" + id + "\\s*\\+\\s*").c_str()) &&
                       matches(between(index->second, *arrow), "\\s*\\)\\s*");
        break;
    }
    }
    if (!ok) {
        return fmt::format("its text is not the {} form the rewriter expects",
                           detail::shapeName(s.shape.shape));
    }
    if (!s.info->member.empty() && s.shape.shape != Shape::Arrow &&
        s.shape.shape != Shape::ArrowAdd) {
        auto dot =
            s.shape.member != nullptr ? src.offset(s.shape.member->getOperatorLoc()) : std::nullopt;
        if (!dot || src.slice(*dot, *dot + 1) != ".") {
            return "the member access after it is spelled in a macro";
        }
    }
    return {};
}

void Rewriter::emitGroup(const Group& g, EditList& edits) {
    const frontend::KernelSource& ks = a_.kernels()[g.kernels[0]];
    const FunctionDecl* p = g.pattern;
    auto accs = g.accessorArrays();
    const unsigned declBegin = src_.range(ks.declaration)->first;
    const std::string indent = src_.indentOf(declBegin);
    std::vector<std::string> tparams;
    std::vector<std::string> names;
    std::vector<std::string> written;
    for (const ArrayPlan* ap : accs) {
        tparams.push_back("class " + ap->mpName);
        names.push_back(ap->name);
        if (ap->written()) {
            written.push_back(ap->name);
        }
    }
    if (g.templ != nullptr) {
        const unsigned ra = *src_.offset(g.templ->getTemplateParameters()->getRAngleLoc());
        const size_t ls = src_.text().rfind('\n', ra);
        const size_t column = ls == std::string::npos ? ra : ra - ls - 1;
        edits.insert(ra, wrapList(", ", tparams, "", indent + "          ", column + 1));
    } else {
        edits.insert(declBegin,
                     wrapList("template <", tparams, ">", indent + "          ", indent.size()) +
                         "\n" + indent);
    }
    for (const ArrayPlan* ap : accs) {
        auto r = src_.range(ks.params[ap->param]);
        edits.replace(r->first, r->second, ap->mpName + " " + ap->name);
    }
    // The body: the prologue, the original body as a lambda (its `return`s leave the lambda),
    // the epilogue.
    const unsigned lb = *src_.offset(ks.bodyLBrace);
    const unsigned rb = *src_.offset(ks.bodyRBrace);
    edits.insert(
        lb + 1,
        "\n" + indent + "    " +
            wrapList("memplace::stage(", names, ");", indent + "        ", indent.size() + 4) +
            "\n" + indent + "    [&]() {",
        -1);
    std::string close = indent + "    }();\n";
    if (!written.empty()) {
        close +=
            indent + "    " +
            wrapList("memplace::unstage(", written, ");", indent + "        ", indent.size() + 4) +
            "\n";
    }
    unsigned ls = 0;
    if (src_.onlyBlanksBefore(rb, &ls) && ls > lb) {
        edits.insert(ls, close, 1);
    } else {
        edits.insert(rb, "\n" + close + indent, 1);
    }
    // Pointer aliases of accessor arrays become views of the accessor (once per declaration
    // as written: instantiations share it).
    std::set<unsigned> aliasesDone;
    for (const auto& [ref, alias] : aliasByParamRef_) {
        auto key = detail::pointerParamOf(ref);
        auto at = src_.offset(alias->var->getLocation());
        if (!key || key->fn != p || !at || !aliasesDone.insert(*at).second) {
            continue;
        }
        for (const ArrayPlan* ap : accs) {
            if (ap->param == key->index) {
                const auto aliasText = aliasEdits(*alias);
                for (const auto& [b, e, t] : *aliasText) {
                    edits.replace(b, e, t);
                }
            }
        }
    }
    std::set<unsigned> rebasesDone;
    for (const auto& [ref, rebase] : rebaseByParamRef_) {
        auto key = detail::pointerParamOf(ref);
        auto at = src_.offset(ref->getLocation());
        if (!key || key->fn != p || !at || !rebasesDone.insert(*at).second) {
            continue;
        }
        for (const ArrayPlan* ap : accs) {
            if (ap->param == key->index) {
                const auto rebaseText = rebaseEdits(*rebase);
                for (const auto& [b, e, t] : *rebaseText) {
                    if (b == e) {
                        edits.insert(b, t);
                    } else {
                        edits.replace(b, e, t);
                    }
                }
            }
        }
    }
    for (const auto& up : sites_) {
        if (!up->key || up->key->fn != p) {
            continue;
        }
        for (const ArrayPlan* ap : accs) {
            if (ap->param == up->key->index) {
                emitSite(*up, ap->written(), edits);
            }
        }
    }
    // The descriptor goes after the kernel (emitDescriptors, once the JIT source is known).
    Group& mg = const_cast<Group&>(g);
    mg.indent = indent;
    const std::string& text = src_.text();
    size_t eol = text.find('\n', rb + 1);
    std::string rest = text.substr(rb + 1, (eol == std::string::npos ? text.size() : eol) - rb - 1);
    if (eol != std::string::npos && matches(rest, "\\s*(//.*)?")) {
        mg.descriptorAt = static_cast<unsigned>(eol + 1);
        mg.descriptorPrefix = "\n";
    } else {
        mg.descriptorAt = rb + 1;
        mg.descriptorPrefix = "\n\n";
    }
}

void Rewriter::emitDescriptors(EditList& edits) {
    // A descriptor closes what comes before its offset: at the same offset it must precede
    // whatever opens the next declaration (a kernel written on the very next line gets its
    // `template <...>` header inserted there too).
    constexpr long kBeforeEverythingAtItsOffset = -(1L << 40);
    for (const Group& g : groups_) {
        if (g.ok) {
            edits.insert(g.descriptorAt, g.descriptorPrefix + descriptor(g, g.indent),
                         kBeforeEverythingAtItsOffset);
        }
    }
}

/// The kernel's device-only source for NVRTC (jit_source.h), its name and element types as
/// name expressions spell them; or why it has none.
void Rewriter::planJit(Group& g, const EditList& edits) {
    if (g.templ != nullptr) {
        g.jitReason = "a kernel template (the runtime cannot spell its template arguments in an "
                      "NVRTC name expression)";
        return;
    }
    PrintingPolicy pp = policyFor(ctx_);
    pp.SuppressUnwrittenScope = true;
    pp.FullyQualifiedName = true;
    for (const ArrayPlan* ap : g.accessorArrays()) {
        const QualType pointee = ap->decl->getType()->getPointeeType();
        if (pointee.isNull() || pointee.isVolatileQualified()) {
            g.jitReason = fmt::format("the element type of '{}' is volatile", ap->name);
            g.jitTypes.clear();
            return;
        }
        std::string t = TypeName::getFullyQualifiedName(pointee.getUnqualifiedType(), ctx_, pp,
                                                        /*WithGlobalNsPrefix=*/false);
        g.jitTypes.push_back((ap->written() ? "" : "const ") + t);
    }
    const frontend::KernelSource& ks = a_.kernels()[g.kernels[0]];
    detail::JitSliceInput in;
    in.ast = &a_.ast();
    in.kernel = g.pattern;
    in.kernelFile = src_.sm().getFileID(ks.declaration.getBegin());
    in.kernelBegin = src_.sm().getFileOffset(ks.declaration.getBegin());
    in.isProgramFile = [&](FileID f) { return src_.spanOf(f).has_value(); };
    in.programText = [&](FileID f, unsigned b, unsigned e, std::string* text, std::string* why) {
        const unsigned base = src_.files()[*src_.spanOf(f)].base;
        std::string error;
        *text = edits.applyRange(src_.text(), base + b, base + e, &error);
        if (!error.empty()) {
            *why = error;
            return false;
        }
        return true;
    };
    in.providedDirs = {frontend::defaultResourceDir(), std::string(frontend::kShimDir)};
    if (auto cuda = frontend::findCudaInstallation(opt_.extraArgs)) {
        in.cudaIncludeDir = *cuda + "/include";
        while (!in.cudaIncludeDir.empty() && in.cudaIncludeDir.find("//") != std::string::npos) {
            in.cudaIncludeDir.replace(in.cudaIncludeDir.find("//"), 2, "/");
        }
    }
    detail::JitSlice slice = detail::sliceForJit(in);
    if (slice.source.empty()) {
        g.jitReason = slice.why.empty() ? std::string("no source") : slice.why;
        g.jitTypes.clear();
        return;
    }
    g.jitSource = std::move(slice.source);
    g.jitKernel = std::move(slice.kernelName);
    g.jitConstants = std::move(slice.constants);
}

/// `text` as `//` comment lines of at most 100 columns, each starting with `indent`.
std::string commentLines(const std::string& text, const std::string& indent) {
    std::string out;
    std::string line = indent + "//";
    size_t pos = 0;
    while (pos < text.size()) {
        size_t sp = text.find(' ', pos);
        std::string word = text.substr(pos, sp == std::string::npos ? std::string::npos : sp - pos);
        pos = sp == std::string::npos ? text.size() : sp + 1;
        if (line.size() + 1 + word.size() > 100 && line.size() > indent.size() + 2) {
            out += line + "\n";
            line = indent + "//";
        }
        line += " " + word;
    }
    return out + line + "\n";
}

/// The descriptor's just-in-time members (docs/rewrite-contract.md).
std::string jitMembers(const Group& g, const std::string& in1) {
    if (g.jitSource.empty()) {
        return commentLines("Not compiled just in time: " + g.jitReason +
                                ". Placements not compiled in run through the dynamic accessor.",
                            in1) +
               in1 + "static constexpr const char* jitSource = nullptr;\n";
    }
    std::string delim = "memplace";
    while (g.jitSource.find(")" + delim + "\"") != std::string::npos) {
        delim += "_";
    }
    std::vector<std::string> types;
    for (const std::string& t : g.jitTypes) {
        types.push_back("\"" + t + "\"");
    }
    std::string out;
    out +=
        in1 + "// Just in time (NVRTC): the kernel's name, its element types and its device code\n";
    out +=
        in1 + "// with what it uses, for placements not compiled in (docs/rewrite-contract.md).\n";
    out += fmt::format("{}static constexpr const char* jitKernel = \"{}\";\n", in1, g.jitKernel);
    out += in1 +
           wrapList(fmt::format("static constexpr const char* jitTypes[{}] = {{", types.size()),
                    types, "};", in1 + "    ", in1.size()) +
           "\n";
    if (!g.jitConstants.empty()) {
        // The program's __constant__ variables the kernel reads: the JIT module declares its own,
        // which the runtime fills from these (the host shadows) before each of its launches.
        std::vector<std::string> names;
        std::vector<std::string> addresses;
        for (const std::string& c : g.jitConstants) {
            names.push_back("\"" + c + "\"");
            addresses.push_back("&::" + c);
        }
        out += in1 + "// The __constant__ variables it reads: the JIT module's copies are filled "
                     "from these.\n";
        out += in1 +
               wrapList(
                   fmt::format("static constexpr const char* jitConstants[{}] = {{", names.size()),
                   names, "};", in1 + "    ", in1.size()) +
               "\n";
        out += in1 + "static const void* jitConstant(int k) {\n";
        out += in1 + "    " +
               wrapList("const void* const a[] = {", addresses, "};", in1 + "        ",
                        in1.size() + 4) +
               "\n";
        out += in1 + "    return a[k];\n";
        out += in1 + "}\n";
    }
    out += fmt::format("{}static constexpr const char* jitSource = R\"{}(\n{}){}\";\n", in1, delim,
                       g.jitSource, delim);
    return out;
}

/// `s` as a C string literal.
std::string cString(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            out += ' ';
        } else {
            out += c;
        }
    }
    return out + "\"";
}

/// "first (and N more)" for a list of unknown accesses, or empty.
std::string firstOf(const std::vector<std::string>& list) {
    if (list.empty()) {
        return {};
    }
    return list.size() == 1 ? list[0] : fmt::format("{} (and {} more)", list[0], list.size() - 1);
}

/// The descriptor's aliasing members (docs/rewrite-contract.md §6): the `__device__` and
/// `__managed__` variables the kernel accesses by name, with a function that finds each one's
/// device memory, and its writes and reads through pointers whose target is unknown. The union
/// over the group's instantiations; nothing when there is nothing to say.
std::string aliasMembers(const Group& g, const std::vector<ki::KernelInfo>& kernels,
                         const std::string& in1) {
    std::vector<ki::GlobalAccess> globals;
    std::vector<std::string> unknownWrites;
    std::vector<std::string> unknownReads;
    for (size_t k : g.kernels) {
        const ki::KernelInfo& kinfo = kernels[k];
        for (const ki::GlobalAccess& ga : kinfo.globals) {
            if (!ga.sized) {
                // No size to compare addresses with: whatever may point into it is unknown.
                std::string what = fmt::format("{}: the global '{}' is declared without a size",
                                               ki::formatLocation(ga.location), ga.name);
                (ga.written ? unknownWrites : unknownReads).push_back(std::move(what));
                continue;
            }
            auto it = std::find_if(globals.begin(), globals.end(),
                                   [&](const ki::GlobalAccess& o) { return o.name == ga.name; });
            if (it == globals.end()) {
                globals.push_back(ga);
            } else {
                it->written = it->written || ga.written;
            }
        }
        unknownWrites.insert(unknownWrites.end(), kinfo.unknownWrites.begin(),
                             kinfo.unknownWrites.end());
        unknownReads.insert(unknownReads.end(), kinfo.unknownReads.begin(),
                            kinfo.unknownReads.end());
    }
    // A pointer parameter left raw is memory the runtime never sees at a launch, so it cannot
    // compare its address with the placed arrays': its accesses count as unknown.
    for (const ArrayPlan& ap : g.arrays) {
        if (!ap.accessor && ap.mode != ki::AccessMode::None) {
            std::string what = fmt::format("the parameter '{}', left a raw pointer", ap.name);
            (ap.written() ? unknownWrites : unknownReads).push_back(std::move(what));
        }
    }
    std::string out;
    if (!globals.empty()) {
        std::vector<std::string> descs;
        for (const ki::GlobalAccess& ga : globals) {
            descs.push_back(
                fmt::format("{{{}, {}}}", cString(ga.name),
                            ga.written ? "memplace::Mode::ReadWrite" : "memplace::Mode::Read"));
        }
        out += in1 + "// The __device__ variables it accesses by name: an array that may share "
                     "memory with one\n";
        out += in1 + "// of them stays where the program keeps it when either is written.\n";
        out += in1 +
               wrapList(fmt::format("static constexpr memplace::GlobalDesc globals[{}] = {{",
                                    globals.size()),
                        descs, "};", in1 + "    ", in1.size()) +
               "\n";
        out += in1 + "static cudaError_t globalRange(int k, void** address, size_t* bytes) {\n";
        out += in1 + "    switch (k) {\n";
        for (size_t i = 0; i < globals.size(); ++i) {
            out += fmt::format(
                "{}    case {}:\n{}        return memplace::{}(::{}, address, bytes);\n", in1, i,
                in1, globals[i].managed ? "managedRange" : "symbolRange", globals[i].name);
        }
        out += in1 + "    }\n";
        out += in1 + "    return cudaErrorInvalidSymbol;\n";
        out += in1 + "}\n";
    }
    if (!unknownWrites.empty()) {
        out += in1 + "// It writes through a pointer whose target is unknown: no array leaves "
                     "where the program\n";
        out += in1 + "// keeps it (but for global and l2persist).\n";
        out += in1 + "static constexpr const char* unknownWrites =\n";
        out += in1 + "    " + cString(firstOf(unknownWrites)) + ";\n";
    }
    if (!unknownReads.empty()) {
        out += in1 + "// It reads through a pointer whose target is unknown: no written array "
                     "leaves where the\n";
        out += in1 + "// program keeps it (but for global and l2persist).\n";
        out += in1 + "static constexpr const char* unknownReads =\n";
        out += in1 + "    " + cString(firstOf(unknownReads)) + ";\n";
    }
    return out;
}

std::string Rewriter::descriptor(const Group& g, const std::string& indent) const {
    const FunctionDecl* p = g.pattern;
    const frontend::KernelSource& ks = a_.kernels()[g.kernels[0]];
    auto accs = g.accessorArrays();
    const std::string in1 = indent + "    ";
    const std::string in2 = indent + "        ";
    std::string out;
    out += fmt::format("{}// memplace: what the runtime needs to know about kernel '{}' "
                       "(docs/rewrite-contract.md)\n",
                       indent, g.name);
    std::string kernelTargs;
    if (g.templ != nullptr) {
        out += indent + src_.slice(*src_.range(ks.templateParams)) + "\n";
        for (const NamedDecl* tp : *g.templ->getTemplateParameters()) {
            kernelTargs += tp->getNameAsString() + ", ";
        }
    }
    out += fmt::format("{}struct {} {{\n", indent, g.descName);
    out += fmt::format("{}static constexpr const char* name = \"{}\";\n", in1, g.name);
    out += fmt::format("{}static constexpr int numArrays = {};\n", in1, accs.size());
    out +=
        fmt::format("{}static constexpr memplace::ArrayDesc arrays[{}] = {{\n", in1, accs.size());
    for (const ArrayPlan* ap : accs) {
        out += fmt::format("{}{{\"{}\", {}, sizeof({}), {}, {}, {}", in2, ap->name, ap->param,
                           ap->elemTypeBare, detail::modeText(ap->mode),
                           detail::maskText(ap->mask, ap->dims, ap->written()), ap->dims);
        if (ap->dims == 2 || ap->original != Place::Global) {
            out += fmt::format(", {}", ap->widthParam);
        }
        if (ap->original != Place::Global) {
            out += ", " + detail::placeEnum(ap->original);
        }
        out += "},\n";
    }
    out += in1 + "};\n";
    std::string types;
    for (const ArrayPlan* ap : accs) {
        types += (types.empty() ? "" : ", ") + ap->elemType;
    }
    out += fmt::format("{}using types = memplace::Types<{}>;\n", in1, types);
    if (!g.compiled.empty()) {
        out +=
            in1 + "// Specialised besides the default (every array where the program keeps it):\n";
        out += in1 + "// every array global, read-only arrays on the read-only path, and every\n";
        out += in1 + "// array in its likely place (docs/rewriting.md).\n";
        out += in1 + "using compiled = memplace::Instantiations<";
        for (size_t c = 0; c < g.compiled.size(); ++c) {
            std::vector<std::string> places;
            for (Place pl : g.compiled[c]) {
                places.push_back(detail::placeEnum(pl));
            }
            out += "\n" + in2 +
                   wrapList("memplace::Places<", places, c + 1 < g.compiled.size() ? ">," : ">>;",
                            in2 + "    ", in2.size());
        }
        out += "\n";
    }
    out += aliasMembers(g, a_.info().kernels, in1);
    out += jitMembers(g, in1);
    out += in1 + "template <class... Acc>\n";
    out += fmt::format("{}static auto kernel() {{ return &{}<{}Acc...>; }}\n", in1,
                       qualifiedKernelName(p), kernelTargs);
    std::vector<std::string> tparams;
    std::vector<std::string> acctypes;
    for (const ArrayPlan* ap : accs) {
        tparams.push_back("class " + ap->mpName);
        acctypes.push_back(ap->mpName);
    }
    std::vector<std::string> params{"dim3 mp_grid", "dim3 mp_block", "size_t mp_shared",
                                    "cudaStream_t mp_stream"};
    std::vector<std::string> args{"mp_kernel", "mp_grid", "mp_block", "mp_shared", "mp_stream"};
    for (unsigned i = 0; i < p->getNumParams(); ++i) {
        const ParmVarDecl* pv = p->getParamDecl(i);
        std::string name =
            pv->getName().empty() ? fmt::format("mp_arg{}", i) : pv->getNameAsString();
        const ArrayPlan* acc = nullptr;
        for (const ArrayPlan* ap : accs) {
            if (ap->param == i) {
                acc = ap;
            }
        }
        std::string decl;
        if (acc != nullptr) {
            decl = acc->mpName + " " + name;
        } else {
            llvm::raw_string_ostream os(decl);
            pv->getType().print(os, policyFor(ctx_), name);
            os.flush();
            if (pv->hasDefaultArg()) {
                if (auto r = src_.range(pv->getDefaultArgRange())) {
                    decl += " = " + src_.slice(*r);
                }
            }
        }
        params.push_back(decl);
        args.push_back(name);
    }
    out += in1 + wrapList("template <", tparams, ">", in1 + "          ", in1.size()) + "\n";
    out += in1 + wrapList("static void launch(", params, ") {", in2 + "    ", in1.size()) + "\n";
    out += in2 + wrapList("auto mp_kernel = kernel<", acctypes, ">();", in2 + "    ", in2.size()) +
           "\n";
    out += in2 + wrapList("MEMPLACE_LAUNCH(", args, ");", in2 + "    ", in2.size()) + "\n";
    out += in1 + "}\n";
    out += indent + "};\n";
    return out;
}

void Rewriter::emitHelper(const FunctionDecl* fn, const std::vector<unsigned>& params,
                          EditList& edits) {
    std::set<std::string> taken;
    for (const ParmVarDecl* pv : fn->parameters()) {
        taken.insert(pv->getNameAsString());
    }
    const FunctionTemplateDecl* ft = fn->getDescribedFunctionTemplate();
    if (ft != nullptr) {
        for (const NamedDecl* tp : *ft->getTemplateParameters()) {
            taken.insert(tp->getNameAsString());
        }
    }
    std::string tparams;
    for (unsigned i : params) {
        const ParmVarDecl* pv = fn->getParamDecl(i);
        std::string mp = "MP_" + pv->getNameAsString();
        while (taken.count(mp) != 0) {
            mp += "_";
        }
        taken.insert(mp);
        tparams += (tparams.empty() ? "" : ", ") + std::string("class ") + mp;
        auto r = src_.range(pv->getSourceRange());
        edits.replace(r->first, r->second, mp + " " + pv->getNameAsString());
    }
    if (ft != nullptr) {
        edits.insert(*src_.offset(ft->getTemplateParameters()->getRAngleLoc()), ", " + tparams);
    } else {
        unsigned b = *src_.offset(src_.sm().getExpansionLoc(fn->getBeginLoc()));
        edits.insert(b, "template <" + tparams + ">\n" + src_.indentOf(b));
    }
    for (const auto& up : sites_) {
        if (up->key && up->key->fn == fn &&
            std::find(params.begin(), params.end(), up->key->index) != params.end()) {
            emitSite(*up, helpers_.at(*up->key).written, edits);
        }
    }
}

void Rewriter::emitLaunches(EditList& edits) {
    for (const LaunchPlan& lp : launches_) {
        const CUDAKernelCallExpr* call = lp.fact->calls[0];
        switch (lp.kind) {
        case LaunchPlan::Kind::Runtime:
            ++result_.runtimeLaunches;
            edits.replace(lp.begin, lp.end, lp.text);
            break;
        case LaunchPlan::Kind::Macro:
            ++result_.macroLaunches;
            edits.replace(lp.begin, lp.end, lp.text);
            break;
        case LaunchPlan::Kind::Untouched:
            ++result_.untouchedLaunches;
            warn(call->getBeginLoc(),
                 fmt::format("launch left as <<<...>>> ({}): it builds with nvcc, not under the "
                             "CPU emulation layer",
                             lp.why));
            break;
        }
    }
}

void Rewriter::emitExternShared(EditList& edits) {
    for (const VarDecl* vd : facts_.externShared) {
        std::string why;
        SourceLocation begin = vd->getBeginLoc();
        for (const Attr* at : vd->attrs()) {
            SourceLocation l = src_.sm().getExpansionLoc(at->getLocation());
            if (l.isValid() && src_.sm().isBeforeInTranslationUnit(l, begin)) {
                begin = l;
            }
            if (const auto* al = dyn_cast<AlignedAttr>(at);
                al != nullptr && !al->isAlignmentDependent() && al->getAlignment(ctx_) / 8 > 16) {
                why = "it asks for an alignment above 16 bytes";
            }
        }
        auto r = src_.range(SourceRange(begin, vd->getEndLoc()));
        std::string elem = typeText(ctx_.getAsArrayType(vd->getType())->getElementType(), ctx_);
        std::string name = vd->getNameAsString();
        if (why.empty() && !r) {
            why = "it is spelled in a macro";
        }
        if (why.empty()) {
            std::string t = src_.slice(*r);
            if (!matches(t, "[^;=,]*\\[\\s*\\]") || t.find(name) == std::string::npos ||
                t.find("extern") == std::string::npos ||
                t.find("__shared__") == std::string::npos) {
                why = "its declaration is not written `extern __shared__ T name[]`";
            } else if (!matches(src_.text().substr(r->second, 1), "\\s|;")) {
                why = "it declares several names";
            } else if (macroArg(elem) != elem) {
                why = "its element type has a comma";
            }
            size_t semi = src_.text().find_first_not_of(" \t", r->second);
            if (why.empty() && (semi == std::string::npos || src_.text()[semi] != ';')) {
                why = "it declares several names";
            }
        }
        if (!why.empty()) {
            warn(vd->getLocation(),
                 fmt::format("'extern __shared__ {}' left as written ({}): it builds with nvcc, "
                             "not under the CPU emulation layer",
                             name, why));
            continue;
        }
        ++result_.dynamicShared;
        edits.replace(r->first, r->second,
                      fmt::format("MEMPLACE_DYNAMIC_SHARED({}, {})", elem, name));
    }
}

std::string Rewriter::preamble() const {
    std::string file = a_.info().file;
    size_t slash = file.rfind('/');
    std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
    bool runtime = std::any_of(groups_.begin(), groups_.end(), [](const Group& g) { return g.ok; });
    std::string out;
    if (runtime) {
        out += fmt::format("// memplace: rewritten by `memplace rewrite` from {}: kernels are "
                           "templates over\n// accessors, launches go through the runtime "
                           "(docs/rewriting.md).\n",
                           base);
        if (facts_.ownConstantBytes > 0) {
            out += fmt::format("// The file declares {} bytes of __constant__ data of its own: "
                               "the constant pool\n// gets the rest of the 64 KB.\n",
                               facts_.ownConstantBytes);
            out +=
                fmt::format("#define MEMPLACE_CONSTANT_POOL_BYTES (65536 - ({} + 15) / 16 * 16)\n",
                            facts_.ownConstantBytes);
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

/// The edited buffer cut back into its files: the main file's output, and one IncludedOutput per
/// included program file. Returns the EditList's error, if any.
std::string Rewriter::splitOutputs(const EditList& edits) {
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
        for (const LaunchPlan& lp : launches_) {
            if (lp.kind != LaunchPlan::Kind::Untouched && lp.begin >= f.base &&
                lp.begin < f.base + f.size) {
                ++io.launches;
            }
        }
        result_.included.push_back(std::move(io));
    }
    return error;
}

Expected<RewriteResult> Rewriter::run() {
    result_.file = a_.info().file;
    result_.launchesOnly = opt_.launchesOnly;
    result_.warnings.append(a_.warnings());
    if (!opt_.kernel.empty() &&
        std::none_of(a_.info().kernels.begin(), a_.info().kernels.end(),
                     [&](const ki::KernelInfo& k) { return kernelMatches(k, opt_.kernel); })) {
        std::string names;
        for (const auto& k : a_.info().kernels) {
            names += (names.empty() ? "" : ", ") + k.instantiation;
        }
        return fail({a_.info().file, 0, 0},
                    fmt::format("no kernel named '{}' (kernels: {})", opt_.kernel,
                                names.empty() ? "none" : names));
    }
    facts_ = detail::collectFacts(ctx_, [&](FileID f) { return a_.isProgramFile(f); });
    result_.ownConstantBytes = facts_.ownConstantBytes;
    buildGroups();
    collectSites();
    for (auto& up : sites_) {
        if (up->failure.empty()) {
            if (std::string why = checkSiteText(src_, *up); !why.empty()) {
                up->failure = why;
                up->failureAt =
                    up->src->expr != nullptr ? up->src->expr->getBeginLoc() : SourceLocation();
            }
        }
    }
    for (Group& g : groups_) {
        planArrays(g);
        if (!g.ok) {
            for (auto& ap : g.arrays) {
                ap.accessor = false;
            }
        }
    }
    planHelpers();
    classifyUses();
    fixpoint();
    for (Group& g : groups_) {
        if (!g.ok) {
            for (auto& ap : g.arrays) {
                ap.accessor = false;
            }
        } else {
            finishArrays(g);
        }
    }
    // Helper parameters carry proxies when any array handed to them is written.
    for (int round = 0; round < 100; ++round) {
        bool changed = false;
        for (const Edge& e : edges_) {
            auto it = helpers_.find(e.to);
            if (it == helpers_.end() || !it->second.active || it->second.written || !e.from) {
                continue;
            }
            bool w = false;
            if (auto h = helpers_.find(*e.from); h != helpers_.end()) {
                w = h->second.written;
            } else if (Group* g = groupOf(e.from->fn)) {
                for (const auto& ap : g->arrays) {
                    w = w || (ap.param == e.from->index && ap.accessor && ap.written());
                }
            }
            if (w) {
                it->second.written = true;
                changed = true;
            }
        }
        if (!changed) {
            break;
        }
    }
    planLaunches();
    addExtraCompiled();

    EditList edits;
    for (const Group& g : groups_) {
        if (g.ok) {
            emitGroup(g, edits);
        }
    }
    std::map<const FunctionDecl*, std::vector<unsigned>> helperParams;
    for (const auto& [key, h] : helpers_) {
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
    for (Group& g : groups_) {
        if (g.ok) {
            planJit(g, edits);
        }
    }
    emitDescriptors(edits);
    edits.insert(firstCodeLine(src_), preamble(), -1000000);

    // Reports and warnings.
    for (const Group& g : groups_) {
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
        kr.jitSource = g.jitSource;
        kr.jitKernel = g.jitKernel;
        kr.jitTypes = g.jitTypes;
        kr.jitConstants = g.jitConstants;
        kr.jitReason = g.jitReason;
        bool anyCandidate = false;
        for (const ArrayPlan& ap : g.arrays) {
            ArrayReport ar;
            ar.name = ap.name;
            ar.param = static_cast<int>(ap.param);
            ar.accessor = ap.accessor;
            ar.elementType = ap.elemType;
            ar.mode = detail::modeName(ap.mode);
            ar.places = ap.accessor ? ap.mask : PlaceSet{Place::Global};
            ar.mask =
                ap.accessor ? detail::maskText(ap.mask, ap.dims, ap.written()) : std::string();
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

    if (auto error = splitOutputs(edits); !error.empty()) {
        return fail({a_.info().file, 0, 0},
                    "internal error while applying the rewriter's edits: " + error);
    }
    return std::move(result_);
}

} // namespace

Expected<RewriteResult> rewriteFile(const RewriteOptions& options) {
    frontend::AnalyzeOptions ao;
    ao.file = options.file;
    ao.extraArgs = options.extraArgs;
    auto analysis = frontend::analyze(ao);
    if (!analysis) {
        return std::move(analysis).takeFailure();
    }
    Rewriter rw(options, **analysis);
    return rw.run();
}

} // namespace memplace::rewrite

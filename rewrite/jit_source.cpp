#include "rewrite/jit_source.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Attr.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Frontend/ASTUnit.h>
#include <clang/Lex/Lexer.h>
#include <clang/Lex/MacroInfo.h>
#include <clang/Lex/Preprocessor.h>
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <regex>
#include <set>

namespace memplace::rewrite::detail {

using namespace clang;

namespace {

/// The declaration whose text carries `d`: the outermost declaration at namespace scope that
/// contains it (the record of a member, the enumeration of an enumerator), through templates to
/// their patterns. Null for what lives inside a function (locals, lambdas: in the function's
/// text already) and for what has no text of its own.
const Decl* unitOf(const Decl* d) {
    if (d == nullptr || isa<ParmVarDecl>(d) || isa<TemplateTypeParmDecl>(d) ||
        isa<NonTypeTemplateParmDecl>(d) || isa<TemplateTemplateParmDecl>(d) ||
        isa<NamespaceDecl>(d) || isa<TranslationUnitDecl>(d)) {
        return nullptr;
    }
    if (const auto* us = dyn_cast<UsingShadowDecl>(d)) {
        return unitOf(us->getTargetDecl());
    }
    if (const auto* fd = dyn_cast<FunctionDecl>(d)) {
        if (fd->getBuiltinID() != 0) {
            return nullptr;
        }
        if (const FunctionDecl* p = fd->getTemplateInstantiationPattern()) {
            fd = p;
        }
        if (const FunctionTemplateDecl* ft = fd->getPrimaryTemplate()) {
            fd = ft->getTemplatedDecl();
        }
        d = fd;
    }
    if (const auto* cts = dyn_cast<ClassTemplateSpecializationDecl>(d)) {
        if (cts->getSpecializationKind() != TSK_ExplicitSpecialization) {
            d = cts->getSpecializedTemplate()->getTemplatedDecl();
        }
    }
    // Climb to namespace scope; anything inside a function is in its text.
    const Decl* cur = d;
    while (true) {
        const DeclContext* dc = cur->getDeclContext();
        if (dc == nullptr) {
            return nullptr;
        }
        if (dc->isFunctionOrMethod()) {
            return nullptr;
        }
        if (dc->isFileContext() || isa<LinkageSpecDecl>(dc) || isa<ExportDecl>(dc)) {
            break;
        }
        cur = cast<Decl>(dc);
    }
    if (const auto* rd = dyn_cast<CXXRecordDecl>(cur)) {
        if (rd->isLambda()) {
            return nullptr;
        }
        if (const ClassTemplateDecl* ct = rd->getDescribedClassTemplate()) {
            return ct;
        }
        if (const auto* cts = dyn_cast<ClassTemplateSpecializationDecl>(rd);
            cts != nullptr && cts->getSpecializationKind() != TSK_ExplicitSpecialization) {
            return cts->getSpecializedTemplate();
        }
        if (const CXXRecordDecl* def = rd->getDefinition()) {
            return def;
        }
        return rd;
    }
    if (const auto* td = dyn_cast<TagDecl>(cur)) {
        if (const TagDecl* def = td->getDefinition()) {
            return def;
        }
        return td;
    }
    if (const auto* fd = dyn_cast<FunctionDecl>(cur)) {
        if (const FunctionTemplateDecl* ft = fd->getDescribedFunctionTemplate()) {
            return ft;
        }
        if (const FunctionDecl* def = fd->getDefinition()) {
            return def;
        }
        return fd;
    }
    return cur;
}

/// Every declaration the code of a declaration refers to.
class RefCollector : public RecursiveASTVisitor<RefCollector> {
public:
    explicit RefCollector(std::vector<const Decl*>& out) : out_(out) {}

    bool VisitDeclRefExpr(DeclRefExpr* e) {
        add(e->getDecl());
        if (const NamedDecl* f = e->getFoundDecl(); f != nullptr && f != e->getDecl()) {
            add(f);
        }
        return true;
    }
    bool VisitMemberExpr(MemberExpr* e) {
        add(e->getMemberDecl());
        return true;
    }
    bool VisitCXXConstructExpr(CXXConstructExpr* e) {
        add(e->getConstructor());
        return true;
    }
    bool VisitOverloadExpr(OverloadExpr* e) {
        for (const NamedDecl* d : e->decls()) {
            add(d->getUnderlyingDecl());
        }
        return true;
    }
    bool VisitTypeLoc(TypeLoc tl) {
        if (auto t = tl.getAs<TypedefTypeLoc>()) {
            add(t.getTypedefNameDecl());
        } else if (auto g = tl.getAs<TagTypeLoc>()) {
            add(g.getDecl());
        } else if (auto s = tl.getAs<TemplateSpecializationTypeLoc>()) {
            add(s.getTypePtr()->getTemplateName().getAsTemplateDecl());
        } else if (auto u = tl.getAs<UsingTypeLoc>()) {
            add(u.getFoundDecl());
        }
        return true;
    }
    bool TraverseNestedNameSpecifierLoc(NestedNameSpecifierLoc nns) {
        for (NestedNameSpecifierLoc q = nns; q; q = q.getPrefix()) {
            if (const NestedNameSpecifier* s = q.getNestedNameSpecifier()) {
                if (const NamespaceAliasDecl* a = s->getAsNamespaceAlias()) {
                    out_.push_back(a);
                }
            }
        }
        return RecursiveASTVisitor::TraverseNestedNameSpecifierLoc(nns);
    }

private:
    void add(const Decl* d) {
        if (d != nullptr) {
            out_.push_back(d);
        }
    }
    std::vector<const Decl*>& out_;
};

bool startsWith(const std::string& s, const std::string& prefix) {
    return !prefix.empty() && s.compare(0, prefix.size(), prefix) == 0;
}

/// Whether a declaration lives in namespace std (or libstdc++'s own namespaces).
bool inStd(const Decl* d) {
    for (const DeclContext* dc = d->getDeclContext(); dc != nullptr; dc = dc->getParent()) {
        if (const auto* ns = dyn_cast<NamespaceDecl>(dc)) {
            const std::string n = ns->getNameAsString();
            if (n == "std" || n == "__gnu_cxx" || n == "__cxxabiv1") {
                return true;
            }
        }
    }
    return false;
}

/// The headers of the CUDA installation that NVRTC has built in (what cuda_runtime.h brings in
/// for device code); libraries such as cooperative groups, cuda_fp16, CUB or libcu++ need
/// include paths NVRTC does not get.
bool nvrtcHasCudaHeader(const std::string& relative) {
    static const std::regex kBuiltin(
        "(crt/.*|builtin_types\\.h|vector_types\\.h|vector_functions\\.h(pp)?|device_types\\.h|"
        "driver_types\\.h|surface_types\\.h|texture_types\\.h|cuda_runtime\\.h|"
        "cuda_runtime_api\\.h|cuda_device_runtime_api\\.h|device_launch_parameters\\.h|"
        "device_atomic_functions\\.h(pp)?|device_functions\\.h(pp)?|device_double_functions\\.h|"
        "math_functions\\.h(pp)?|common_functions\\.h|host_defines\\.h|"
        "sm_[0-9]+_[a-z_]+\\.h(pp)?|texture_fetch_functions\\.h|texture_indirect_functions\\.h|"
        "surface_functions\\.h|surface_indirect_functions\\.h|channel_descriptor\\.h|"
        "cuda_texture_types\\.h|cuda_surface_types\\.h|library_types\\.h)");
    return std::regex_match(relative, kBuiltin);
}

/// A header of one of CUDA's libraries (what the CUDA installation has besides the runtime's own
/// headers), which NVRTC cannot include without an include path.
bool isCudaLibraryHeader(const std::string& relative) {
    static const std::regex kLibrary(
        "(cooperative_groups.*|cuda_fp[0-9].*|cuda_bf16.*|cuda_pipeline.*|cuda_awbarrier.*|"
        "mma\\.h(pp)?|cub/.*|thrust/.*|cuda/.*|cccl/.*|nv/.*|curand.*|cuComplex\\.h|"
        "math_constants\\.h|cuda\\.h|cudaTypedefs\\.h|cufft.*|cublas.*|cusparse.*|"
        "cusolver.*|nvtx3/.*|nvToolsExt.*)");
    return std::regex_match(relative, kLibrary);
}

/// A piece of text the slice copies: one declaration (or a declaration statement of several).
struct Unit {
    const Decl* decl = nullptr;
    FileID file;
    unsigned begin = 0;
    unsigned end = 0;
    bool semicolon = false;                 ///< a ';' must follow (none in the text)
    std::string text;                       ///< typedefs the slice writes itself (system headers)
    std::vector<const DeclContext*> scopes; ///< namespaces and linkage specs, outermost first
};

class Slicer {
public:
    explicit Slicer(const JitSliceInput& in)
        : in_(in), ctx_(in.ast->getASTContext()), sm_(ctx_.getSourceManager()),
          pp_(in.ast->getPreprocessor()) {}

    JitSlice run();

private:
    /// User: the program's own files. Provided: NVRTC has it built in. Cuda: a CUDA header
    /// NVRTC has not (cooperative groups, cuda_fp16, CUB...). System: libc, libstdc++.
    enum class Origin { User, Provided, Cuda, System };
    Origin originOf(SourceLocation loc, std::string* file) const;
    void consider(const Decl* d);
    void addUnit(const Decl* unit);
    bool rangeOf(const Decl* d, Unit& u);
    void refuse(std::string why) {
        if (why_.empty()) {
            why_ = std::move(why);
        }
    }
    std::string describe(const NamedDecl* d) const {
        std::string n = d->getQualifiedNameAsString();
        return n.empty() ? std::string("an unnamed declaration") : "'" + n + "'";
    }
    void collectMacros(const std::string& text);
    std::string macroText(const IdentifierInfo* ii, const MacroInfo* mi) const;
    // the phases of run()
    void followReferences();
    void addUsingDirectives();
    std::vector<Unit> mergedUnits();
    bool unitsText(const std::vector<Unit>& merged, std::string* body, std::string* why) const;
    std::string assemble(const std::string& body);

    const JitSliceInput& in_;
    ASTContext& ctx_;
    SourceManager& sm_;
    Preprocessor& pp_;
    std::string why_;
    std::set<const Decl*> seen_;
    std::set<const Decl*> unitsSeen_;
    std::deque<const Decl*> work_;
    std::vector<Unit> units_;
    std::map<std::string, Unit> typedefs_; ///< from system headers, written by the slice
    std::set<const NamespaceDecl*> userNamespaces_;
    std::set<std::string> macrosSeen_;
    std::vector<std::string> constants_;
    std::vector<std::pair<SourceLocation, std::string>> macros_;
};

Slicer::Origin Slicer::originOf(SourceLocation loc, std::string* file) const {
    const SourceLocation f = sm_.getExpansionLoc(loc);
    if (f.isInvalid()) {
        return Origin::Provided;
    }
    std::string name = sm_.getFilename(f).str();
    if (file != nullptr) {
        *file = name;
    }
    for (const std::string& dir : in_.providedDirs) {
        if (startsWith(name, dir + "/")) {
            // clang's CUDA wrappers stand for what NVRTC has built in; its freestanding C
            // headers (float.h, limits.h, stdint.h) are system headers NVRTC lacks.
            const std::string rel = name.substr(dir.size() + 1);
            if (rel.find("__clang_cuda") != std::string::npos ||
                rel.find("cuda_wrappers/") != std::string::npos ||
                rel.find("texture_fetch_functions") != std::string::npos) {
                return Origin::Provided;
            }
            return Origin::System;
        }
    }
    std::string rel;
    if (!in_.cudaIncludeDir.empty() && startsWith(name, in_.cudaIncludeDir + "/")) {
        rel = name.substr(in_.cudaIncludeDir.size() + 1);
    } else if (sm_.isInSystemHeader(f)) {
        // CUDA's headers may also be reached through another folder (/usr/local/include links
        // to them): judge by the path below the last `include/`.
        const std::size_t k = name.rfind("/include/");
        rel = k == std::string::npos ? name : name.substr(k + 9);
        if (!nvrtcHasCudaHeader(rel) && !isCudaLibraryHeader(rel)) {
            return Origin::System;
        }
    } else if (name.empty() || name == "<built-in>") {
        return Origin::System;
    } else {
        return Origin::User;
    }
    return nvrtcHasCudaHeader(rel) ? Origin::Provided : Origin::Cuda;
}

void Slicer::consider(const Decl* d) {
    if (d == nullptr || !seen_.insert(d).second) {
        return;
    }
    if (originOf(d->getLocation(), nullptr) == Origin::Provided) {
        return; // blockIdx, __syncthreads, float4, ...
    }
    // Variables at namespace scope: constants are copied, device memory cannot be.
    if (const auto* vd = dyn_cast<VarDecl>(d); vd != nullptr && vd->hasGlobalStorage() &&
                                               !vd->isStaticDataMember() &&
                                               !vd->getDeclContext()->isFunctionOrMethod()) {
        const auto* dev = vd->getAttr<CUDADeviceAttr>();
        const auto* con = vd->getAttr<CUDAConstantAttr>();
        const bool constant = con != nullptr && !con->isImplicit();
        if (constant && !vd->hasExternalStorage() && !vd->getType()->isDependentType() &&
            !vd->getType()->isIncompleteType() &&
            originOf(vd->getLocation(), nullptr) == Origin::User) {
            // Read-only on the device: the module gets a copy, refreshed before its launches.
            std::string name;
            llvm::raw_string_ostream os(name);
            PrintingPolicy pp(ctx_.getLangOpts());
            pp.SuppressUnwrittenScope = true;
            pp.SuppressInlineNamespace = true;
            vd->printQualifiedName(os, pp);
            os.flush();
            constants_.push_back(name);
        } else if (constant || (dev != nullptr && !dev->isImplicit()) ||
                   vd->hasAttr<HIPManagedAttr>()) {
            refuse(fmt::format("it uses the {} variable {} (a just-in-time module would have a "
                               "copy of its own, and the kernel may write it)",
                               constant ? "extern __constant__" : "__device__", describe(vd)));
            return;
        }
        if (!constant && !vd->hasAttr<CUDASharedAttr>() && !vd->isConstexpr() &&
            !vd->getType().isConstQualified()) {
            refuse(fmt::format("it uses the host variable {}", describe(vd)));
            return;
        }
    }
    if (const auto* fd = dyn_cast<FunctionDecl>(d);
        fd != nullptr && fd->hasAttr<CUDAGlobalAttr>() &&
        fd->getCanonicalDecl() != in_.kernel->getCanonicalDecl()) {
        refuse(fmt::format("it refers to the kernel {}", describe(fd)));
        return;
    }
    const Decl* unit = unitOf(d);
    if (unit == nullptr || !unitsSeen_.insert(unit).second) {
        return;
    }
    std::string file;
    const Origin origin = originOf(unit->getLocation(), &file);
    const auto* named = dyn_cast<NamedDecl>(unit);
    if (origin == Origin::Provided) {
        return;
    }
    if (origin == Origin::System || origin == Origin::Cuda) {
        // A typedef of a builtin type (uint32_t, size_t, std::int64_t): the slice writes it.
        if (const auto* td = dyn_cast<TypedefNameDecl>(unit)) {
            const QualType t = td->getUnderlyingType().getCanonicalType();
            const DeclContext* dc = td->getDeclContext();
            const bool global = dc->isTranslationUnit();
            const auto* ns = dyn_cast<NamespaceDecl>(dc);
            const bool std = ns != nullptr && ns->getNameAsString() == "std" &&
                             ns->getParent()->isTranslationUnit();
            if (origin == Origin::System && t->isBuiltinType() && (global || std)) {
                Unit u;
                u.decl = unit;
                u.text = fmt::format("{}typedef {} {};{}", std ? "namespace std { " : "",
                                     t.getAsString(ctx_.getPrintingPolicy()), td->getNameAsString(),
                                     std ? " }" : "");
                typedefs_.emplace(td->getQualifiedNameAsString(), std::move(u));
                return;
            }
        }
        if (origin == Origin::System && unit->getAsFunction() != nullptr && !inStd(unit)) {
            return; // libc and libm names CUDA declares for device code too (printf, sqrt...)
        }
        refuse(fmt::format("it uses {} from {}, which NVRTC does not provide",
                           named != nullptr ? describe(named) : std::string("a declaration"),
                           file.empty() ? std::string("a system header") : file));
        return;
    }
    addUnit(unit);
}

bool Slicer::rangeOf(const Decl* d, Unit& u) {
    SourceRange r = d->getSourceRange();
    SourceLocation b = sm_.getExpansionLoc(r.getBegin());
    std::vector<const Attr*> attrs(d->attrs().begin(), d->attrs().end());
    if (const auto* td = dyn_cast<TemplateDecl>(d); td != nullptr && td->getTemplatedDecl()) {
        attrs.insert(attrs.end(), td->getTemplatedDecl()->attrs().begin(),
                     td->getTemplatedDecl()->attrs().end());
    }
    for (const Attr* a : attrs) {
        if (a->isImplicit()) {
            continue;
        }
        SourceLocation l = sm_.getExpansionLoc(a->getLocation());
        if (l.isValid() && sm_.getFileID(l) == sm_.getFileID(b) &&
            sm_.isBeforeInTranslationUnit(l, b)) {
            b = l;
        }
    }
    SourceLocation e = sm_.getExpansionRange(r.getEnd()).getEnd();
    e = Lexer::getLocForEndOfToken(e, 0, sm_, ctx_.getLangOpts());
    if (b.isInvalid() || e.isInvalid() || sm_.getFileID(b) != sm_.getFileID(e)) {
        return false;
    }
    u.decl = d;
    u.file = sm_.getFileID(b);
    u.begin = sm_.getFileOffset(b);
    u.end = sm_.getFileOffset(e);
    if (u.file == in_.kernelFile && d->getAsFunction() != nullptr &&
        d->getAsFunction()->getCanonicalDecl() == in_.kernel->getCanonicalDecl()) {
        u.begin = std::min(u.begin, in_.kernelBegin); // the accessor template the rewriter added
    }
    if (u.end < u.begin) {
        return false;
    }
    const FunctionDecl* fd = d->getAsFunction();
    const bool body = fd != nullptr && fd->doesThisDeclarationHaveABody();
    if (!body && !isa<NamespaceAliasDecl>(d) && !isa<UsingDirectiveDecl>(d)) {
        // Declarations end with a ';' the range leaves out: take it, or write one.
        const StringRef buf = sm_.getBufferData(u.file);
        unsigned p = u.end;
        while (p < buf.size() && (buf[p] == ' ' || buf[p] == '\t' || buf[p] == '\n')) {
            ++p;
        }
        if (p < buf.size() && buf[p] == ';') {
            u.end = p + 1;
        } else {
            u.semicolon = true;
        }
    } else if (isa<NamespaceAliasDecl>(d) || isa<UsingDirectiveDecl>(d)) {
        const StringRef buf = sm_.getBufferData(u.file);
        if (u.end < buf.size() && buf[u.end] == ';') {
            ++u.end;
        } else {
            u.semicolon = true;
        }
    }
    for (const DeclContext* dc = d->getDeclContext(); dc != nullptr && !dc->isTranslationUnit();
         dc = dc->getParent()) {
        u.scopes.insert(u.scopes.begin(), dc);
    }
    return true;
}

void Slicer::addUnit(const Decl* unit) {
    Unit u;
    if (!rangeOf(unit, u)) {
        const auto* nd = dyn_cast<NamedDecl>(unit);
        refuse(fmt::format("the text of {} cannot be cut out (spelled across files or macros)",
                           nd != nullptr ? describe(nd) : std::string("a declaration")));
        return;
    }
    for (const DeclContext* dc : u.scopes) {
        if (const auto* ns = dyn_cast<NamespaceDecl>(dc)) {
            userNamespaces_.insert(ns->getCanonicalDecl());
        } else if (!isa<LinkageSpecDecl>(dc)) {
            refuse("a declaration it uses is in a scope the slice cannot reopen");
            return;
        }
    }
    units_.push_back(u);
    work_.push_back(unit);
    // Declarators that share the declaration statement come along (`constexpr int A = 1, B;`).
    if (const auto* vd = dyn_cast<VarDecl>(unit)) {
        for (const Decl* s : vd->getDeclContext()->decls()) {
            if (s != unit && isa<VarDecl>(s) && s->getBeginLoc() == unit->getBeginLoc() &&
                unitsSeen_.insert(s).second) {
                Unit su;
                if (rangeOf(s, su)) {
                    units_.push_back(su);
                    work_.push_back(s);
                }
            }
        }
    }
    // Functions declared before their definition: the first declaration too.
    if (const FunctionDecl* fd = unit->getAsFunction()) {
        const Decl* first =
            isa<FunctionTemplateDecl>(unit)
                ? static_cast<const Decl*>(cast<FunctionTemplateDecl>(unit)->getCanonicalDecl())
                : static_cast<const Decl*>(fd->getCanonicalDecl());
        if (first != unit && unitsSeen_.insert(first).second) {
            Unit p;
            if (rangeOf(first, p)) {
                units_.push_back(p);
            }
        }
    }
}

std::string Slicer::macroText(const IdentifierInfo* ii, const MacroInfo* mi) const {
    std::string out = "#define " + ii->getName().str();
    if (mi->isFunctionLike()) {
        out += "(";
        bool first = true;
        for (const IdentifierInfo* p : mi->params()) {
            if (!first) {
                out += ", ";
            }
            first = false;
            if (p->getName() == "__VA_ARGS__") {
                out += "...";
            } else {
                out += p->getName().str();
                if (mi->isGNUVarargs() && p == mi->params().back()) {
                    out += "...";
                }
            }
        }
        out += ")";
    }
    bool firstTok = true;
    for (const Token& t : mi->tokens()) {
        out += (firstTok || t.hasLeadingSpace()) ? " " : "";
        firstTok = false;
        out += pp_.getSpelling(t);
    }
    return out;
}

/// Every macro the text uses (and the macros those use), with its definition.
void Slicer::collectMacros(const std::string& text) {
    // (name, named by another macro's body): compiler-predefined macros are copied only when a
    // copied macro needs them (FLT_MAX needs __FLT_MAX__), never for code that tests them.
    std::deque<std::pair<std::string, bool>> idents;
    {
        static const std::regex kIdent("[A-Za-z_][A-Za-z_0-9]*");
        // Identifiers outside comments and string literals (a raw lexer would do the same).
        Lexer lex(SourceLocation(), ctx_.getLangOpts(), text.data(), text.data(),
                  text.data() + text.size());
        lex.SetCommentRetentionState(false);
        Token t;
        while (!lex.LexFromRawLexer(t)) {
            if (t.is(tok::raw_identifier)) {
                idents.emplace_back(t.getRawIdentifier().str(), false);
            }
        }
        if (t.is(tok::raw_identifier)) {
            idents.emplace_back(t.getRawIdentifier().str(), false);
        }
    }
    while (!idents.empty()) {
        const auto [name, fromMacro] = idents.front();
        idents.pop_front();
        if (macrosSeen_.count(name) != 0) {
            continue;
        }
        IdentifierInfo* ii = pp_.getIdentifierInfo(name);
        if (ii == nullptr || !ii->hasMacroDefinition()) {
            continue;
        }
        const MacroInfo* mi = pp_.getMacroInfo(ii);
        if (mi == nullptr || mi->isBuiltinMacro()) {
            continue;
        }
        const SourceLocation loc = mi->getDefinitionLoc();
        std::string file;
        if (loc.isValid()) {
            file = sm_.getFilename(sm_.getSpellingLoc(loc)).str();
            if (file.empty()) {
                file = sm_.getBufferName(sm_.getSpellingLoc(loc)).str();
            }
        }
        if (loc.isInvalid() || (file == "<built-in>" && !fromMacro)) {
            continue;
        }
        macrosSeen_.insert(name);
        if (file == "<command line>" && startsWith(name, "__")) {
            continue; // the frontend's own definitions
        }
        std::string def = macroText(ii, mi);
        const Origin origin = file == "<command line>" ? Origin::User
                              : file == "<built-in>"   ? Origin::System
                                                       : originOf(loc, nullptr);
        if (origin == Origin::Provided) {
            continue; // NVRTC defines CUDA's own (__device__, __launch_bounds__, ...)
        }
        if (origin != Origin::User) {
            // libc's and CUDA's other headers (INT_MAX, M_PI, CUDART_PI_F): unless NVRTC has it.
            def = "#ifndef " + name + "\n" + def + "\n#endif";
        }
        macros_.emplace_back(loc, def);
        for (const Token& t : mi->tokens()) {
            if (const IdentifierInfo* ti = t.getIdentifierInfo()) {
                idents.emplace_back(ti->getName().str(), true);
            }
        }
    }
}

JitSlice Slicer::run() {
    JitSlice out;
    PrintingPolicy pp(ctx_.getLangOpts());
    pp.SuppressUnwrittenScope = true;
    pp.SuppressInlineNamespace = true;
    {
        std::string name;
        llvm::raw_string_ostream os(name);
        in_.kernel->printQualifiedName(os, pp);
        os.flush();
        out.kernelName = name;
    }
    consider(in_.kernel);
    if (units_.empty() && why_.empty()) {
        refuse("the kernel's own text cannot be cut out");
    }
    followReferences();
    if (!why_.empty()) {
        out.why = why_;
        return out;
    }
    addUsingDirectives();
    const std::vector<Unit> merged = mergedUnits();
    std::string body;
    if (!unitsText(merged, &body, &out.why)) {
        return out;
    }
    out.source = assemble(body);
    out.constants = constants_;
    return out;
}

/// Everything the kernel refers to, transitively (until something refuses).
void Slicer::followReferences() {
    while (!work_.empty() && why_.empty()) {
        const Decl* d = work_.front();
        work_.pop_front();
        std::vector<const Decl*> refs;
        RefCollector rc(refs);
        rc.TraverseDecl(const_cast<Decl*>(d));
        // Instantiations of a template reach what the pattern's dependent code names.
        if (const auto* ft = dyn_cast<FunctionTemplateDecl>(d)) {
            for (const FunctionDecl* s : ft->specializations()) {
                rc.TraverseDecl(const_cast<FunctionDecl*>(s));
            }
        }
        for (const Decl* r : refs) {
            consider(r);
            if (!why_.empty()) {
                break;
            }
        }
    }
}

/// `using namespace N;` at file scope of the main file, for every namespace the slice reopens.
void Slicer::addUsingDirectives() {
    for (const Decl* d : ctx_.getTranslationUnitDecl()->decls()) {
        if (const auto* ud = dyn_cast<UsingDirectiveDecl>(d);
            ud != nullptr &&
            in_.isProgramFile(sm_.getFileID(sm_.getExpansionLoc(ud->getLocation()))) &&
            ud->getNominatedNamespace() != nullptr &&
            userNamespaces_.count(ud->getNominatedNamespace()->getCanonicalDecl()) != 0) {
            Unit u;
            if (rangeOf(ud, u)) {
                units_.push_back(u);
            }
        }
    }
}

/// The units in source order (include order across files); one copy of overlapping ranges.
std::vector<Unit> Slicer::mergedUnits() {
    std::sort(units_.begin(), units_.end(), [&](const Unit& a, const Unit& b) {
        if (a.file != b.file) {
            // Where each is written in include order (a file's start is before the files it
            // includes, its declarations after them need not be).
            return sm_.isBeforeInTranslationUnit(sm_.getComposedLoc(a.file, a.begin),
                                                 sm_.getComposedLoc(b.file, b.begin));
        }
        return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
    });
    std::vector<Unit> merged;
    for (Unit& u : units_) {
        if (!merged.empty() && merged.back().file == u.file && u.begin < merged.back().end) {
            if (u.end > merged.back().end) {
                merged.back().end = u.end;
                merged.back().semicolon = u.semicolon;
            }
            continue;
        }
        merged.push_back(u);
    }
    return merged;
}

/// The units' texts, rewritten for the main file, as written elsewhere, inside their scopes;
/// false and why when a text cannot be cut out.
bool Slicer::unitsText(const std::vector<Unit>& merged, std::string* body,
                       std::string* whyOut) const {
    std::vector<const DeclContext*> open;
    auto scopeText = [](const DeclContext* dc) -> std::string {
        if (const auto* ns = dyn_cast<NamespaceDecl>(dc)) {
            return std::string(ns->isInline() ? "inline " : "") + "namespace " +
                   (ns->isAnonymousNamespace() ? std::string() : ns->getNameAsString() + " ") + "{";
        }
        const auto* ls = cast<LinkageSpecDecl>(dc);
        return ls->getLanguage() == LinkageSpecLanguageIDs::C ? "extern \"C\" {"
                                                              : "extern \"C++\" {";
    };
    for (const Unit& u : merged) {
        std::string text;
        if (in_.isProgramFile(u.file)) {
            std::string why;
            if (!in_.programText(u.file, u.begin, u.end, &text, &why)) {
                *whyOut = "its text cannot be cut out of the rewritten file: " + why;
                return false;
            }
        } else {
            text = sm_.getBufferData(u.file).substr(u.begin, u.end - u.begin).str();
        }
        if (u.semicolon) {
            text += ";";
        }
        if (text.find(kCxxLinkageOpen) != std::string::npos) {
            text += "\n}"; // the rewriter closes it after the cut (after the descriptor)
        }
        std::size_t common = 0;
        while (common < open.size() && common < u.scopes.size() &&
               open[common] == u.scopes[common]) {
            ++common;
        }
        while (open.size() > common) {
            *body += "}\n";
            open.pop_back();
        }
        for (std::size_t i = common; i < u.scopes.size(); ++i) {
            *body += scopeText(u.scopes[i]) + "\n";
            open.push_back(u.scopes[i]);
        }
        *body += text + "\n\n";
    }
    while (!open.empty()) {
        *body += "}\n";
        open.pop_back();
    }
    return true;
}

/// The JIT source: the runtime's headers, the typedefs and macros the units use, the units.
std::string Slicer::assemble(const std::string& body) {
    collectMacros(body);
    std::sort(macros_.begin(), macros_.end(), [&](const auto& a, const auto& b) {
        if (a.first != b.first) {
            return sm_.isBeforeInTranslationUnit(a.first, b.first);
        }
        return a.second < b.second;
    });
    std::string src = "#include \"memplace/accessors.cuh\"\n#include \"memplace/stage.cuh\"\n";
    if (!typedefs_.empty() || !macros_.empty()) {
        src += "\n";
    }
    for (const auto& [name, u] : typedefs_) {
        src += u.text + "\n";
    }
    for (const auto& [loc, def] : macros_) {
        src += def + "\n";
    }
    src += "\n" + body;
    while (!src.empty() && src.back() == '\n') {
        src.pop_back();
    }
    return src + "\n";
}

} // namespace

JitSlice sliceForJit(const JitSliceInput& in) {
    Slicer s(in);
    return s.run();
}

} // namespace memplace::rewrite::detail

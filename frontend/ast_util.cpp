#include "frontend/ast_util.h"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Lex/Lexer.h>

#include <array>
#include <filesystem>

namespace memplace::frontend::detail {

using namespace clang;

namespace {

/// `path` without `.`/`..` components, absolute; empty when it cannot be made so.
std::filesystem::path normalPath(const std::string& path) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
    return ec ? std::filesystem::path() : p.lexically_normal();
}

bool isBelow(const std::filesystem::path& file, const std::filesystem::path& dir) {
    auto rel = file.lexically_relative(dir);
    return !rel.empty() && *rel.begin() != "..";
}

} // namespace

bool isProgramFilePath(const SourceManager& sm, FileID file) {
    if (file == sm.getMainFileID()) {
        return true;
    }
    OptionalFileEntryRef entry = sm.getFileEntryRefForID(file);
    OptionalFileEntryRef main = sm.getFileEntryRefForID(sm.getMainFileID());
    if (!entry || !main ||
        SrcMgr::isSystem(sm.getFileCharacteristic(sm.getLocForStartOfFile(file)))) {
        return false;
    }
    std::filesystem::path path = normalPath(entry->getName().str());
    std::filesystem::path dir = normalPath(main->getName().str()).parent_path();
    if (path.empty() || dir.empty() || !isBelow(path, dir)) {
        return false;
    }
    // memplace's own headers (a rewritten file includes memplace/memplace.cuh).
    std::error_code ec;
    return !std::filesystem::exists(path.parent_path() / "memplace.cuh", ec);
}

SourceLocation Locator::location(clang::SourceLocation loc) const {
    SourceLocation out;
    if (loc.isInvalid()) {
        return out;
    }
    clang::SourceLocation f = sm_.getFileLoc(loc);
    out.file = sm_.getFileID(f) == sm_.getMainFileID() ? std::string()
                                                       : displayPath(sm_.getFilename(f).str());
    out.line = sm_.getSpellingLineNumber(f);
    out.column = sm_.getSpellingColumnNumber(f);
    return out;
}

CharSourceRange Locator::fileRange(SourceRange range) const {
    if (range.isInvalid()) {
        return {};
    }
    return Lexer::makeFileCharRange(CharSourceRange::getTokenRange(range), sm_, lo_);
}

std::string Locator::text(SourceRange range) const {
    CharSourceRange r = fileRange(range);
    if (r.isInvalid()) {
        return {};
    }
    bool invalid = false;
    StringRef t = Lexer::getSourceText(r, sm_, lo_, &invalid);
    return invalid ? std::string() : t.str();
}

bool Locator::isProgramFile(FileID file) const {
    if (file.isInvalid()) {
        return false;
    }
    if (file == sm_.getMainFileID()) {
        return true;
    }
    if (auto it = programFiles_.find(file); it != programFiles_.end()) {
        return it->second;
    }
    bool program = isProgramFilePath(sm_, file);
    programFiles_.emplace(file, program);
    return program;
}

bool Locator::inProgramFile(CharSourceRange r) const {
    if (r.isInvalid() || r.getBegin().isMacroID() || r.getEnd().isMacroID()) {
        return false;
    }
    FileID f = sm_.getFileID(r.getBegin());
    return f == sm_.getFileID(r.getEnd()) && isProgramFile(f);
}

bool Locator::inProgramFile(clang::SourceLocation loc) const {
    return loc.isValid() && isProgramFile(sm_.getFileID(sm_.getFileLoc(loc)));
}

bool Locator::inSystemHeader(clang::SourceLocation loc) const {
    return loc.isValid() && sm_.isInSystemHeader(sm_.getFileLoc(loc));
}

std::string Locator::sourceLine(clang::SourceLocation loc) const {
    if (loc.isInvalid()) {
        return {};
    }
    clang::SourceLocation f = sm_.getFileLoc(loc);
    bool invalid = false;
    StringRef buf = sm_.getBufferData(sm_.getFileID(f), &invalid);
    if (invalid) {
        return {};
    }
    unsigned off = sm_.getFileOffset(f);
    size_t begin = buf.rfind('\n', off == 0 ? 0 : off - 1);
    begin = (begin == StringRef::npos || off == 0) ? 0 : begin + 1;
    size_t end = buf.find('\n', off);
    return buf.slice(begin, end == StringRef::npos ? buf.size() : end).rtrim("\r").str();
}

std::string displayPath(const std::string& path) {
    std::error_code ec;
    std::filesystem::path cwd = std::filesystem::current_path(ec);
    if (ec || path.empty() || path[0] != '/') {
        return path;
    }
    std::filesystem::path rel = std::filesystem::path(path).lexically_proximate(cwd);
    std::string r = rel.string();
    return r.empty() || r.starts_with("..") ? path : r;
}

LocKey locKey(const clang::SourceManager& sm, clang::SourceLocation loc) {
    return {sm.getFileLoc(loc).getRawEncoding(), sm.getSpellingLoc(loc).getRawEncoding()};
}

InstantiationName instantiationName(const FunctionDecl* fn, const ASTContext& ctx) {
    InstantiationName n;
    n.name = fn->getQualifiedNameAsString();
    n.full = n.name;
    if (const TemplateArgumentList* args = fn->getTemplateSpecializationArgs()) {
        PrintingPolicy pp(ctx.getLangOpts());
        pp.SuppressTagKeyword = true;
        pp.Bool = true;
        std::string list;
        for (const TemplateArgument& a : args->asArray()) {
            std::string s;
            llvm::raw_string_ostream os(s);
            a.print(pp, os, /*IncludeType=*/false);
            n.args.push_back(os.str());
            list += (list.empty() ? "" : ", ") + os.str();
        }
        n.full = n.name + "<" + list + ">";
    }
    return n;
}

std::string typeName(QualType t, const ASTContext& ctx) {
    PrintingPolicy pp(ctx.getLangOpts());
    pp.SuppressTagKeyword = true;
    pp.Bool = true;
    return t.getAsString(pp);
}

bool isIntegral(QualType t) {
    return !t.isNull() && (t->isIntegralOrEnumerationType() || t->isBooleanType());
}

const Expr* stripImplicit(const Expr* e) {
    while (e != nullptr) {
        e = e->IgnoreParens();
        if (const auto* ice = dyn_cast<ImplicitCastExpr>(e)) {
            e = ice->getSubExpr();
        } else if (const auto* ce = dyn_cast<ConstantExpr>(e)) {
            e = ce->getSubExpr();
        } else if (const auto* fe = dyn_cast<FullExpr>(e)) {
            e = fe->getSubExpr();
        } else if (const auto* mt = dyn_cast<MaterializeTemporaryExpr>(e)) {
            e = mt->getSubExpr();
        } else if (const auto* bt = dyn_cast<CXXBindTemporaryExpr>(e)) {
            e = bt->getSubExpr();
        } else if (const auto* st = dyn_cast<SubstNonTypeTemplateParmExpr>(e)) {
            e = st->getReplacement();
        } else {
            break;
        }
    }
    return e;
}

std::optional<std::string> builtinComponent(const Expr* e) {
    e = stripImplicit(e);
    if (e == nullptr) {
        return std::nullopt;
    }
    if (const auto* poe = dyn_cast<PseudoObjectExpr>(e)) {
        e = poe->getSyntacticForm()->IgnoreParens();
    }
    const Expr* base = nullptr;
    std::string field;
    if (const auto* mpr = dyn_cast<MSPropertyRefExpr>(e)) {
        base = mpr->getBaseExpr();
        field = mpr->getPropertyDecl()->getName().str();
    } else if (const auto* call = dyn_cast<CallExpr>(e)) {
        // The semantic form: __fetch_builtin_x() on the builtin variable.
        if (const auto* me = dyn_cast<MemberExpr>(call->getCallee()->IgnoreParenImpCasts())) {
            StringRef n = me->getMemberDecl()->getName();
            if (n.consume_front("__fetch_builtin_")) {
                base = me->getBase();
                field = n.str();
            }
        }
    }
    if (base == nullptr) {
        return std::nullopt;
    }
    const auto* dre = dyn_cast<DeclRefExpr>(base->IgnoreParenImpCasts());
    if (dre == nullptr) {
        if (const auto* ove = dyn_cast<OpaqueValueExpr>(base->IgnoreParenImpCasts())) {
            dre = dyn_cast_or_null<DeclRefExpr>(
                ove->getSourceExpr() ? ove->getSourceExpr()->IgnoreParenImpCasts() : nullptr);
        }
    }
    if (dre == nullptr) {
        return std::nullopt;
    }
    std::string var = dre->getDecl()->getName().str();
    if ((var == "threadIdx" || var == "blockIdx" || var == "blockDim" || var == "gridDim") &&
        (field == "x" || field == "y" || field == "z")) {
        return var + "." + field;
    }
    return std::nullopt;
}

std::string calleeName(const CallExpr* call) {
    const FunctionDecl* fd = call->getDirectCallee();
    if (fd == nullptr || !fd->getDeclName().isIdentifier()) {
        return {};
    }
    return fd->getName().str();
}

bool isAtomicFunction(std::string_view name) {
    static constexpr std::array kOps = {"Add", "Sub", "Exch", "Min", "Max", "Inc",
                                        "Dec", "CAS", "And",  "Or",  "Xor"};
    if (!name.starts_with("atomic")) {
        return false;
    }
    name.remove_prefix(6);
    for (const char* op : kOps) {
        std::string_view o(op);
        if (name.starts_with(o)) {
            std::string_view rest = name.substr(o.size());
            return rest.empty() || rest == "_block" || rest == "_system";
        }
    }
    return false;
}

bool isLoadIntrinsic(std::string_view name) {
    return name == "__ldg" || name == "__ldcg" || name == "__ldca" || name == "__ldcs" ||
           name == "__ldlu" || name == "__ldcv";
}

bool isStoreIntrinsic(std::string_view name) {
    return name == "__stwb" || name == "__stcg" || name == "__stcs" || name == "__stwt";
}

bool isTextureFetch(std::string_view name) {
    static constexpr std::array kNames = {
        "tex1Dfetch",   "tex1D",        "tex2D",           "tex3D",
        "tex1DLayered", "tex2DLayered", "texCubemap",      "tex1DLod",
        "tex2DLod",     "tex3DLod",     "tex1DGrad",       "tex2DGrad",
        "tex3DGrad",    "tex2Dgather",  "tex1DLayeredLod", "tex2DLayeredLod"};
    for (const char* n : kNames) {
        if (name == n) {
            return true;
        }
    }
    return false;
}

bool isTextureObjectType(QualType t) {
    const Type* cur = t.getTypePtrOrNull();
    while (cur != nullptr) {
        if (const auto* tt = dyn_cast<TypedefType>(cur)) {
            if (tt->getDecl()->getName() == "cudaTextureObject_t") {
                return true;
            }
            cur = tt->desugar().getTypePtrOrNull();
        } else if (const auto* et = dyn_cast<ElaboratedType>(cur)) {
            cur = et->getNamedType().getTypePtrOrNull();
        } else if (const auto* st = dyn_cast<SubstTemplateTypeParmType>(cur)) {
            cur = st->getReplacementType().getTypePtrOrNull();
        } else {
            return false;
        }
    }
    return false;
}

namespace {

const VarDecl* refVar(const Expr* e) {
    e = e->IgnoreParenImpCasts();
    // `grid.x = 1` modifies `grid`.
    while (const auto* me = dyn_cast<MemberExpr>(e)) {
        if (me->isArrow()) {
            return nullptr;
        }
        e = me->getBase()->IgnoreParenImpCasts();
    }
    if (const auto* dre = dyn_cast<DeclRefExpr>(e)) {
        return dyn_cast<VarDecl>(dre->getDecl());
    }
    return nullptr;
}

/// Calls `fn(var, kind, rhs)` for every modification in a subtree.
/// kind: 0 = plain assignment or initialisation (rhs given), 1 = other modification,
/// 2 = address taken / non-const reference.
template <typename Fn>
class ModVisitor : public RecursiveASTVisitor<ModVisitor<Fn>> {
public:
    explicit ModVisitor(Fn fn) : fn_(std::move(fn)) {}
    bool shouldVisitLambdaBody() const { return true; }

    bool VisitVarDecl(VarDecl* v) { // NOLINT(readability-identifier-naming)
        if (!isa<ParmVarDecl>(v) && v->hasInit()) {
            fn_(v, 0, v->getInit());
        }
        return true;
    }
    bool VisitBinaryOperator(BinaryOperator* b) { // NOLINT(readability-identifier-naming)
        if (b->isAssignmentOp()) {
            if (const VarDecl* v = refVar(b->getLHS())) {
                bool direct = isa<DeclRefExpr>(b->getLHS()->IgnoreParenImpCasts());
                fn_(v, (b->getOpcode() == BO_Assign && direct) ? 0 : 1, b->getRHS());
            }
        }
        return true;
    }
    bool VisitUnaryOperator(UnaryOperator* u) { // NOLINT(readability-identifier-naming)
        if (u->isIncrementDecrementOp()) {
            if (const VarDecl* v = refVar(u->getSubExpr())) {
                fn_(v, 1, nullptr);
            }
        } else if (u->getOpcode() == UO_AddrOf) {
            if (const VarDecl* v = refVar(u->getSubExpr())) {
                fn_(v, 2, nullptr);
            }
        }
        return true;
    }
    bool VisitCallExpr(CallExpr* call) { // NOLINT(readability-identifier-naming)
        const FunctionDecl* fd = call->getDirectCallee();
        unsigned shift = 0;
        if (isa<CXXOperatorCallExpr>(call) && fd != nullptr && isa<CXXMethodDecl>(fd)) {
            shift = 1;
            if (!cast<CXXMethodDecl>(fd)->isConst() && call->getNumArgs() > 0) {
                if (const VarDecl* v = refVar(call->getArg(0))) {
                    fn_(v, 2, nullptr);
                }
            }
        }
        if (const auto* mc = dyn_cast<CXXMemberCallExpr>(call)) {
            const CXXMethodDecl* md = mc->getMethodDecl();
            if (md != nullptr && !md->isConst() && mc->getImplicitObjectArgument() != nullptr) {
                if (const VarDecl* v = refVar(mc->getImplicitObjectArgument())) {
                    fn_(v, 2, nullptr);
                }
            }
        }
        for (unsigned i = shift; i < call->getNumArgs(); ++i) {
            bool byRef = false;
            if (fd != nullptr && i - shift < fd->getNumParams()) {
                QualType pt = fd->getParamDecl(i - shift)->getType();
                byRef = pt->isReferenceType() && !pt->getPointeeType().isConstQualified();
            }
            if (byRef) {
                if (const VarDecl* v = refVar(call->getArg(i))) {
                    fn_(v, 2, nullptr);
                }
            }
        }
        return true;
    }

private:
    Fn fn_;
};

template <typename Fn>
void visitModifications(const Stmt* s, Fn fn) {
    ModVisitor<Fn> v(std::move(fn));
    v.TraverseStmt(const_cast<Stmt*>(s));
}

} // namespace

DefUse::DefUse(const FunctionDecl* fn) {
    if (fn == nullptr || !fn->hasBody()) {
        return;
    }
    visitModifications(fn->getBody(), [this](const VarDecl* v, int kind, const Expr* rhs) {
        Info& i = info_[v];
        if (kind == 2) {
            i.addressTaken = true;
            return;
        }
        i.defs += kind == 0 ? 1 : 2;
        i.single = (kind == 0 && i.defs == 1) ? rhs : nullptr;
        if (kind == 0 && rhs != nullptr) {
            i.values.push_back(rhs);
        }
    });
}

const DefUse::Info* DefUse::find(const VarDecl* v) const {
    auto it = info_.find(v);
    return it == info_.end() ? nullptr : &it->second;
}

bool DefUse::modifies(const Stmt* s, const VarDecl* v) {
    if (s == nullptr) {
        return false;
    }
    bool found = false;
    visitModifications(s, [&](const VarDecl* w, int, const Expr*) { found = found || w == v; });
    return found;
}

} // namespace memplace::frontend::detail

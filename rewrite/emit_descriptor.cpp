// Emitting descriptors (emitter.h): what the runtime needs to know about each rewritten kernel
// (docs/rewrite-contract.md section 6): its arrays, the placements compiled in, the globals it
// may alias, its just-in-time source, and the launch function over accessor types.
#include "frontend/source_prep.h"
#include "rewrite/descriptor.h"
#include "rewrite/emitter.h"
#include "rewrite/jit_source.h"

#include <clang/AST/DeclTemplate.h>
#include <clang/AST/QualTypeNames.h>
#include <fmt/format.h>

#include <algorithm>

namespace memplace::rewrite::detail {

using namespace clang;
using clang::SourceLocation; // memplace::SourceLocation is written in full

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
std::string jitMembers(const JitModule& g, const std::string& in1) {
    if (g.source.empty()) {
        return commentLines("Not compiled just in time: " + g.reason +
                                ". Placements not compiled in run through the dynamic accessor.",
                            in1) +
               in1 + "static constexpr const char* jitSource = nullptr;\n";
    }
    std::string delim = "memplace";
    while (g.source.find(")" + delim + "\"") != std::string::npos) {
        delim += "_";
    }
    std::vector<std::string> types;
    for (const std::string& t : g.types) {
        types.push_back("\"" + t + "\"");
    }
    std::string out;
    out +=
        in1 + "// Just in time (NVRTC): the kernel's name, its element types and its device code\n";
    out +=
        in1 + "// with what it uses, for placements not compiled in (docs/rewrite-contract.md).\n";
    out += fmt::format("{}static constexpr const char* jitKernel = \"{}\";\n", in1, g.kernel);
    out += in1 +
           wrapList(fmt::format("static constexpr const char* jitTypes[{}] = {{", types.size()),
                    types, "};", in1 + "    ", in1.size()) +
           "\n";
    if (!g.constants.empty()) {
        // The program's __constant__ variables the kernel reads: the JIT module declares its own,
        // which the runtime fills from these (the host shadows) before each of its launches.
        std::vector<std::string> names;
        std::vector<std::string> addresses;
        for (const std::string& c : g.constants) {
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
                       g.source, delim);
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
std::string aliasMembers(const KernelPlan& g, const std::vector<ki::KernelInfo>& kernels,
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

} // namespace

/// The kernel's device-only source for NVRTC (jit_source.h), its name and element types as
/// name expressions spell them; or why it has none.
JitModule Emitter::jitModuleOf(const KernelPlan& g, const EditList& edits) const {
    JitModule jit;
    if (g.templ != nullptr) {
        jit.reason = "a kernel template (the runtime cannot spell its template arguments in an "
                     "NVRTC name expression)";
        return jit;
    }
    PrintingPolicy pp = policyFor(ctx_);
    pp.SuppressUnwrittenScope = true;
    pp.FullyQualifiedName = true;
    for (const ArrayPlan* ap : g.accessorArrays()) {
        const QualType pointee = ap->decl->getType()->getPointeeType();
        if (pointee.isNull() || pointee.isVolatileQualified()) {
            jit.reason = fmt::format("the element type of '{}' is volatile", ap->name);
            jit.types.clear();
            return jit;
        }
        std::string t = TypeName::getFullyQualifiedName(pointee.getUnqualifiedType(), ctx_, pp,
                                                        /*WithGlobalNsPrefix=*/false);
        jit.types.push_back((ap->written() ? "" : "const ") + t);
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
        jit.reason = slice.why.empty() ? std::string("no source") : slice.why;
        jit.types.clear();
        return jit;
    }
    jit.source = std::move(slice.source);
    jit.kernel = std::move(slice.kernelName);
    jit.constants = std::move(slice.constants);
    return jit;
}

void Emitter::emitDescriptors(EditList& edits) {
    // A descriptor closes what comes before its offset: at the same offset it must precede
    // whatever opens the next declaration (a kernel written on the very next line gets its
    // `template <...>` header inserted there too).
    constexpr long kBeforeEverythingAtItsOffset = -(1L << 40);
    for (const KernelPlan& g : plan_.kernels) {
        if (g.ok) {
            // In an `extern "C"` block the kernel's `extern "C++"` block (emitSignature) closes
            // after the descriptor: its member templates need C++ linkage too.
            const std::string text =
                descriptor(g, g.indent) + (g.cxxLinkage ? g.indent + "}\n" : std::string());
            edits.insert(g.descriptorAt, g.descriptorPrefix + text, kBeforeEverythingAtItsOffset);
        }
    }
}

/// The descriptor's arrays, their element types and the placements compiled in.
std::string Emitter::descriptorArrays(const KernelPlan& g, const std::string& indent) const {
    auto accs = g.accessorArrays();
    const std::string in1 = indent + "    ";
    const std::string in2 = indent + "        ";
    std::string out;
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
    return out;
}

/// The descriptor's launch function over accessor types, forwarding the kernel's parameters.
std::string Emitter::descriptorLaunch(const KernelPlan& g, const std::string& indent) const {
    const FunctionDecl* p = g.pattern;
    auto accs = g.accessorArrays();
    const std::string in1 = indent + "    ";
    const std::string in2 = indent + "        ";
    std::string out;
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
    return out;
}

std::string Emitter::descriptor(const KernelPlan& g, const std::string& indent) const {
    const FunctionDecl* p = g.pattern;
    const std::string in1 = indent + "    ";
    std::string out;
    out += fmt::format("{}// memplace: what the runtime needs to know about kernel '{}' "
                       "(docs/rewrite-contract.md)\n",
                       indent, g.name);
    std::string kernelTargs;
    if (g.templ != nullptr) {
        // The definition's own list: a prototype's may name its parameters differently.
        out += indent +
               src_.slice(*src_.range(g.templ->getTemplateParameters()->getSourceRange())) + "\n";
        for (const NamedDecl* tp : *g.templ->getTemplateParameters()) {
            kernelTargs += tp->getNameAsString() + ", ";
        }
    }
    out += fmt::format("{}struct {} {{\n", indent, g.descName);
    out += fmt::format("{}static constexpr const char* name = \"{}\";\n", in1, g.name);
    out += descriptorArrays(g, indent);
    out += aliasMembers(g, a_.info().kernels, in1);
    out += jitMembers(jit_.at(&g), in1);
    out += in1 + "template <class... Acc>\n";
    out += fmt::format("{}static auto kernel() {{ return &{}<{}Acc...>; }}\n", in1,
                       qualifiedKernelName(p), kernelTargs);
    out += descriptorLaunch(g, indent);
    out += indent + "};\n";
    return out;
}

} // namespace memplace::rewrite::detail

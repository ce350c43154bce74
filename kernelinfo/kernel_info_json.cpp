#include "kernelinfo/kernel_info_json.h"

#include "common/json.h"
#include "kernelinfo/onchip_json.h"

#include <fmt/format.h>

#include <stdexcept>

namespace memplace::kernelinfo {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

// ---- writing ------------------------------------------------------------------------------

ojson polyJson(const Poly& p) {
    if (auto v = p.constantValue()) {
        return *v;
    }
    return p.toString();
}

void putLocation(ojson& j, const SourceLocation& loc, const std::string& mainFile) {
    if (!loc.file.empty() && loc.file != mainFile) {
        j["file"] = loc.file;
    }
    j["line"] = loc.line;
    j["column"] = loc.column;
}

ojson callPathJson(const std::vector<CallFrame>& path, const std::string& mainFile) {
    ojson out = ojson::array();
    for (const auto& f : path) {
        ojson j = {{"function", f.function}};
        putLocation(j, f.call, mainFile);
        out.push_back(std::move(j));
    }
    return out;
}

ojson indexJson(const IndexInfo& ix) {
    ojson j = {{"kind", indexKindName(ix.kind)}, {"text", ix.text}};
    if (ix.kind == IndexKind::Affine) {
        ojson terms = ojson::array();
        for (const auto& t : ix.terms) {
            terms.push_back({{"var", t.var}, {"coeff", polyJson(t.coeff)}});
        }
        j["terms"] = std::move(terms);
        j["offset"] = polyJson(ix.offset);
    }
    if (ix.kind == IndexKind::Indirect) {
        j["via"] = ix.via;
        j["via_sites"] = ix.viaSites;
    }
    if (!ix.reason.empty()) {
        j["reason"] = ix.reason;
    }
    return j;
}

ojson dim3Json(const std::array<int64_t, 3>& v) {
    return ojson::array({v[0], v[1], v[2]});
}

ojson launchValueJson(const LaunchValue& v) {
    ojson j = {{"text", v.text}};
    if (v.value.size() == 1) {
        j["value"] = v.value[0];
    } else if (!v.value.empty()) {
        j["value"] = v.value;
    }
    return j;
}

ojson placesJson(const PlaceSet& s) {
    ojson out = ojson::array();
    for (Place p : kAllPlaces) {
        if (s.contains(p)) {
            out.push_back(placeName(p));
        }
    }
    return out;
}

// ---- reading ------------------------------------------------------------------------------

/// A JSON type or shape error; `path` says where.
struct ReadError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Reader {
public:
    Reader(const json& j, std::string path) : j_(j), path_(std::move(path)) {}

    const json& raw() const { return j_; }
    const std::string& path() const { return path_; }
    bool has(const char* key) const { return j_.is_object() && j_.contains(key); }
    Reader at(const char* key) const {
        if (!j_.is_object() || !j_.contains(key)) {
            throw ReadError(fmt::format("{}: missing key \"{}\"", path_, key));
        }
        return {j_.at(key), path_ + "." + key};
    }
    Reader at(size_t i) const { return {j_.at(i), fmt::format("{}[{}]", path_, i)}; }
    size_t size() const {
        if (!j_.is_array()) {
            throw ReadError(fmt::format("{}: expected an array", path_));
        }
        return j_.size();
    }
    std::string str() const {
        if (!j_.is_string()) {
            throw ReadError(fmt::format("{}: expected a string", path_));
        }
        return j_.get<std::string>();
    }
    int64_t integer() const {
        if (!j_.is_number_integer()) {
            throw ReadError(fmt::format("{}: expected an integer", path_));
        }
        return j_.get<int64_t>();
    }
    bool boolean() const {
        if (!j_.is_boolean()) {
            throw ReadError(fmt::format("{}: expected true or false", path_));
        }
        return j_.get<bool>();
    }
    std::string strOr(const char* key, std::string fallback = {}) const {
        return has(key) ? at(key).str() : std::move(fallback);
    }
    Poly poly() const {
        if (j_.is_number_integer()) {
            return Poly::constant(j_.get<int64_t>());
        }
        if (j_.is_string()) {
            if (auto p = Poly::parse(j_.get<std::string>())) {
                return *p;
            }
        }
        throw ReadError(fmt::format("{}: expected an integer or a polynomial", path_));
    }
    template <typename E>
    E enumValue(std::optional<E> (*parse)(std::string_view)) const {
        std::string s = str();
        if (auto e = parse(s)) {
            return *e;
        }
        throw ReadError(fmt::format("{}: unknown value \"{}\"", path_, s));
    }
    [[noreturn]] void fail(const std::string& what) const {
        throw ReadError(fmt::format("{}: {}", path_, what));
    }

private:
    const json& j_;
    std::string path_;
};

SourceLocation readLocation(const Reader& r, const std::string& mainFile) {
    SourceLocation loc;
    (void)mainFile;
    loc.file = r.strOr("file");
    loc.line = static_cast<uint32_t>(r.at("line").integer());
    loc.column = static_cast<uint32_t>(r.at("column").integer());
    return loc;
}

std::vector<CallFrame> readCallPath(const Reader& r, const std::string& mainFile) {
    std::vector<CallFrame> out;
    if (!r.has("call_path")) {
        return out;
    }
    Reader cp = r.at("call_path");
    for (size_t i = 0; i < cp.size(); ++i) {
        Reader f = cp.at(i);
        out.push_back({f.at("function").str(), readLocation(f, mainFile)});
    }
    return out;
}

std::vector<std::string> readStrings(const Reader& r) {
    std::vector<std::string> out;
    for (size_t i = 0; i < r.size(); ++i) {
        out.push_back(r.at(i).str());
    }
    return out;
}

std::array<int64_t, 3> readDim3(const Reader& r) {
    if (r.size() != 3) {
        r.fail("expected [x, y, z]");
    }
    return {r.at(size_t{0}).integer(), r.at(1).integer(), r.at(2).integer()};
}

IndexInfo readIndex(const Reader& r) {
    IndexInfo ix;
    ix.kind = r.at("kind").enumValue(parseIndexKind);
    ix.text = r.at("text").str();
    if (r.has("terms")) {
        Reader terms = r.at("terms");
        for (size_t i = 0; i < terms.size(); ++i) {
            Reader t = terms.at(i);
            ix.terms.push_back({t.at("var").str(), t.at("coeff").poly()});
        }
    }
    if (r.has("offset")) {
        ix.offset = r.at("offset").poly();
    }
    if (r.has("via")) {
        ix.via = readStrings(r.at("via"));
    }
    if (r.has("via_sites")) {
        Reader vs = r.at("via_sites");
        for (size_t i = 0; i < vs.size(); ++i) {
            ix.viaSites.push_back(static_cast<SiteId>(vs.at(i).integer()));
        }
    }
    ix.reason = r.strOr("reason");
    return ix;
}

LaunchValue readLaunchValue(const Reader& r) {
    LaunchValue v;
    v.text = r.at("text").str();
    if (r.has("value")) {
        Reader val = r.at("value");
        if (val.raw().is_array()) {
            for (size_t i = 0; i < val.size(); ++i) {
                v.value.push_back(val.at(i).integer());
            }
        } else {
            v.value.push_back(val.integer());
        }
    }
    return v;
}

ArrayInfo readArray(const Reader& r, const std::string& mainFile) {
    ArrayInfo a;
    a.name = r.at("name").str();
    a.kind = r.at("kind").enumValue(parseArrayKind);
    if (r.has("param_index")) {
        a.paramIndex = static_cast<int>(r.at("param_index").integer());
    }
    a.elementType = r.at("element_type").str();
    a.elementSize = static_cast<uint64_t>(r.at("element_size").integer());
    a.isConst = r.at("const").boolean();
    a.isRestrict = r.at("restrict").boolean();
    a.declaration = readLocation(r, mainFile);
    a.mode = r.at("mode").enumValue(parseAccessMode);
    Reader ext = r.at("extent");
    if (!ext.at("bytes").raw().is_null()) {
        a.extent.bytes = static_cast<uint64_t>(ext.at("bytes").integer());
    }
    a.extent.source = ext.at("source").str();
    if (r.has("dims")) {
        Reader d = r.at("dims");
        for (size_t i = 0; i < d.size(); ++i) {
            a.dims.push_back(static_cast<uint64_t>(d.at(i).integer()));
        }
    }
    a.dimensionality = static_cast<int>(r.at("dimensionality").integer());
    if (r.has("row_length")) {
        a.rowLength = r.at("row_length").poly();
    }
    Reader feas = r.at("feasible");
    for (size_t i = 0; i < feas.size(); ++i) {
        a.feasible.insert(feas.at(i).enumValue(parsePlace));
    }
    const json& ex = r.at("excluded").raw();
    if (!ex.is_object()) {
        r.at("excluded").fail("expected an object");
    }
    for (const auto& [key, value] : ex.items()) {
        auto p = parsePlace(key);
        if (!p) {
            r.at("excluded").fail(fmt::format("unknown place \"{}\"", key));
        }
        a.excluded[*p] = Reader(value, r.path() + ".excluded." + key).str();
    }
    a.original = r.has("original") ? r.at("original").enumValue(parsePlace) : homePlace(a.kind);
    return a;
}

Site readSite(const Reader& r, const std::string& mainFile) {
    Site s;
    s.id = static_cast<SiteId>(r.at("id").integer());
    s.array = r.at("array").str();
    s.location = readLocation(r, mainFile);
    s.access = r.at("access").enumValue(parseAccessMode);
    if (r.has("form")) {
        s.form = r.at("form").enumValue(parseSiteForm);
    }
    s.intrinsic = r.strOr("intrinsic");
    s.index = readIndex(r.at("index"));
    if (r.has("subscripts")) {
        Reader subs = r.at("subscripts");
        for (size_t i = 0; i < subs.size(); ++i) {
            s.subscripts.push_back(readIndex(subs.at(i)));
        }
    }
    s.member = r.strOr("member");
    if (r.has("loops")) {
        Reader l = r.at("loops");
        for (size_t i = 0; i < l.size(); ++i) {
            s.loops.push_back(static_cast<int>(l.at(i).integer()));
        }
    }
    s.callPath = readCallPath(r, mainFile);
    s.function = r.strOr("function");
    if (r.has("contexts")) {
        s.contexts = static_cast<int>(r.at("contexts").integer());
    }
    if (r.has("other_arrays")) {
        s.otherArrays = readStrings(r.at("other_arrays"));
    }
    return s;
}

LoopInfo readLoop(const Reader& r, const std::string& mainFile) {
    LoopInfo l;
    l.id = static_cast<int>(r.at("id").integer());
    l.kind = r.at("kind").str();
    l.location = readLocation(r, mainFile);
    l.var = r.strOr("var");
    if (r.has("init")) {
        l.init = r.at("init").poly();
    }
    if (r.has("step")) {
        l.step = r.at("step").poly();
    }
    l.bound = r.strOr("bound");
    if (!r.at("trip_count").raw().is_null()) {
        l.tripCount = r.at("trip_count").integer();
    }
    l.reason = r.strOr("reason");
    if (r.has("parent")) {
        l.parent = static_cast<int>(r.at("parent").integer());
    }
    l.callPath = readCallPath(r, mainFile);
    return l;
}

KernelInfo readKernel(const Reader& r, const std::string& mainFile) {
    KernelInfo k;
    k.name = r.at("name").str();
    k.instantiation = r.at("instantiation").str();
    if (r.has("template_args")) {
        k.templateArgs = readStrings(r.at("template_args"));
    }
    k.location = readLocation(r, mainFile);
    Reader params = r.at("parameters");
    for (size_t i = 0; i < params.size(); ++i) {
        Reader p = params.at(i);
        k.params.push_back({p.at("name").str(), p.at("type").str(), p.at("pointer").boolean()});
    }
    if (r.has("block_dim")) {
        k.blockDim = readDim3(r.at("block_dim"));
    }
    if (r.has("grid_dim")) {
        k.gridDim = readDim3(r.at("grid_dim"));
    }
    Reader arrays = r.at("arrays");
    for (size_t i = 0; i < arrays.size(); ++i) {
        k.arrays.push_back(readArray(arrays.at(i), mainFile));
    }
    Reader sites = r.at("sites");
    for (size_t i = 0; i < sites.size(); ++i) {
        k.sites.push_back(readSite(sites.at(i), mainFile));
        if (k.sites.back().function.empty()) {
            k.sites.back().function = k.name;
        }
    }
    Reader loops = r.at("loops");
    for (size_t i = 0; i < loops.size(); ++i) {
        k.loops.push_back(readLoop(loops.at(i), mainFile));
    }
    Reader hazards = r.at("hazards");
    for (size_t i = 0; i < hazards.size(); ++i) {
        Reader h = hazards.at(i);
        Hazard hz;
        hz.kind = h.at("kind").enumValue(parseHazardKind);
        hz.array = h.at("array").str();
        hz.other = h.strOr("other");
        hz.location = readLocation(h, mainFile);
        hz.message = h.at("message").str();
        hz.callPath = readCallPath(h, mainFile);
        k.hazards.push_back(std::move(hz));
    }
    Reader launches = r.at("launches");
    for (size_t i = 0; i < launches.size(); ++i) {
        Reader l = launches.at(i);
        LaunchSite ls;
        ls.location = readLocation(l, mainFile);
        ls.function = l.at("function").str();
        ls.kernel = l.at("kernel").str();
        ls.grid = readLaunchValue(l.at("grid"));
        ls.block = readLaunchValue(l.at("block"));
        ls.sharedBytes = readLaunchValue(l.at("shared_bytes"));
        ls.stream = readLaunchValue(l.at("stream"));
        ls.arguments = readStrings(l.at("arguments"));
        k.launches.push_back(std::move(ls));
    }
    if (r.has("untracked")) {
        k.untracked = readStrings(r.at("untracked"));
    }
    if (r.has("globals")) {
        Reader globals = r.at("globals");
        for (size_t i = 0; i < globals.size(); ++i) {
            Reader g = globals.at(i);
            GlobalAccess ga;
            ga.name = g.at("name").str();
            ga.managed = g.has("managed") && g.at("managed").boolean();
            ga.written = g.at("written").boolean();
            ga.sized = !g.has("sized") || g.at("sized").boolean();
            ga.location = readLocation(g, mainFile);
            ga.how = g.strOr("how");
            k.globals.push_back(std::move(ga));
        }
    }
    if (r.has("unknown_writes")) {
        k.unknownWrites = readStrings(r.at("unknown_writes"));
    }
    if (r.has("unknown_reads")) {
        k.unknownReads = readStrings(r.at("unknown_reads"));
    }
    if (r.has("onchip")) {
        k.onchip = onChipFromJson(r.at("onchip").raw(), k.name);
    }
    return k;
}

/// One array: its type, extent, mode and places.
ojson arrayJson(const ArrayInfo& a, const std::string& mainFile) {
    ojson ja;
    ja["name"] = a.name;
    ja["kind"] = arrayKindName(a.kind);
    if (a.paramIndex >= 0) {
        ja["param_index"] = a.paramIndex;
    }
    ja["element_type"] = a.elementType;
    ja["element_size"] = a.elementSize;
    ja["const"] = a.isConst;
    ja["restrict"] = a.isRestrict;
    putLocation(ja, a.declaration, mainFile);
    ja["mode"] = accessModeName(a.mode);
    ja["extent"] = {{"bytes", a.extent.bytes ? ojson(*a.extent.bytes) : ojson(nullptr)},
                    {"dynamic", a.extent.dynamic()},
                    {"source", a.extent.source}};
    if (!a.dims.empty()) {
        ja["dims"] = a.dims;
    }
    ja["dimensionality"] = a.dimensionality;
    if (a.rowLength) {
        ja["row_length"] = polyJson(*a.rowLength);
    }
    ja["feasible"] = placesJson(a.feasible);
    ojson excluded = ojson::object();
    for (const auto& [place, reason] : a.excluded) {
        excluded[std::string(placeName(place))] = reason;
    }
    ja["excluded"] = std::move(excluded);
    ja["original"] = placeName(a.original);
    return ja;
}

/// One access site: its array, mode, form and index.
ojson siteJson(const Site& s, const std::string& mainFile) {
    ojson js;
    js["id"] = s.id;
    js["array"] = s.array;
    putLocation(js, s.location, mainFile);
    js["access"] = accessModeName(s.access);
    if (s.form != SiteForm::Subscript) {
        js["form"] = siteFormName(s.form);
    }
    if (!s.intrinsic.empty()) {
        js["intrinsic"] = s.intrinsic;
    }
    if (!s.member.empty()) {
        js["member"] = s.member;
    }
    js["index"] = indexJson(s.index);
    if (!s.subscripts.empty()) {
        ojson subs = ojson::array();
        for (const auto& ix : s.subscripts) {
            subs.push_back(indexJson(ix));
        }
        js["subscripts"] = std::move(subs);
    }
    if (!s.loops.empty()) {
        js["loops"] = s.loops;
    }
    if (!s.callPath.empty()) {
        js["function"] = s.function;
        js["call_path"] = callPathJson(s.callPath, mainFile);
    }
    if (s.contexts != 1) {
        js["contexts"] = s.contexts;
    }
    if (!s.otherArrays.empty()) {
        js["other_arrays"] = s.otherArrays;
    }
    return js;
}

/// One loop: its variable, bounds and trip count.
ojson loopJson(const LoopInfo& l, const std::string& mainFile) {
    ojson jl;
    jl["id"] = l.id;
    jl["kind"] = l.kind;
    putLocation(jl, l.location, mainFile);
    if (!l.var.empty()) {
        jl["var"] = l.var;
    }
    if (l.init) {
        jl["init"] = polyJson(*l.init);
    }
    if (l.step) {
        jl["step"] = polyJson(*l.step);
    }
    if (!l.bound.empty()) {
        jl["bound"] = l.bound;
    }
    jl["trip_count"] = l.tripCount ? ojson(*l.tripCount) : ojson(nullptr);
    if (!l.reason.empty()) {
        jl["reason"] = l.reason;
    }
    if (l.parent >= 0) {
        jl["parent"] = l.parent;
    }
    if (!l.callPath.empty()) {
        jl["call_path"] = callPathJson(l.callPath, mainFile);
    }
    return jl;
}

/// One hazard the analysis found.
ojson hazardJson(const Hazard& h, const std::string& mainFile) {
    ojson jh;
    jh["kind"] = hazardKindName(h.kind);
    jh["array"] = h.array;
    if (!h.other.empty()) {
        jh["other"] = h.other;
    }
    putLocation(jh, h.location, mainFile);
    jh["message"] = h.message;
    if (!h.callPath.empty()) {
        jh["call_path"] = callPathJson(h.callPath, mainFile);
    }
    return jh;
}

/// One launch of the kernel: its configuration and arguments.
ojson launchJson(const LaunchSite& l, const std::string& mainFile) {
    ojson jl;
    putLocation(jl, l.location, mainFile);
    jl["function"] = l.function;
    jl["kernel"] = l.kernel;
    jl["grid"] = launchValueJson(l.grid);
    jl["block"] = launchValueJson(l.block);
    jl["shared_bytes"] = launchValueJson(l.sharedBytes);
    jl["stream"] = launchValueJson(l.stream);
    jl["arguments"] = l.arguments;
    return jl;
}

/// One global variable the kernel reaches.
ojson globalJson(const GlobalAccess& g, const std::string& mainFile) {
    ojson jg;
    jg["name"] = g.name;
    if (g.managed) {
        jg["managed"] = true;
    }
    jg["written"] = g.written;
    if (!g.sized) {
        jg["sized"] = false;
    }
    putLocation(jg, g.location, mainFile);
    jg["how"] = g.how;
    return jg;
}

} // namespace

ojson toJson(const KernelInfo& k, const std::string& mainFile) {
    ojson j;
    j["name"] = k.name;
    j["instantiation"] = k.instantiation;
    if (!k.templateArgs.empty()) {
        j["template_args"] = k.templateArgs;
    }
    putLocation(j, k.location, mainFile);
    ojson params = ojson::array();
    for (const auto& p : k.params) {
        params.push_back({{"name", p.name}, {"type", p.type}, {"pointer", p.pointer}});
    }
    j["parameters"] = std::move(params);
    if (k.blockDim) {
        j["block_dim"] = dim3Json(*k.blockDim);
    }
    if (k.gridDim) {
        j["grid_dim"] = dim3Json(*k.gridDim);
    }

    ojson arrays = ojson::array();
    for (const auto& a : k.arrays) {
        arrays.push_back(arrayJson(a, mainFile));
    }
    j["arrays"] = std::move(arrays);

    ojson sites = ojson::array();
    for (const auto& s : k.sites) {
        sites.push_back(siteJson(s, mainFile));
    }
    j["sites"] = std::move(sites);

    ojson loops = ojson::array();
    for (const auto& l : k.loops) {
        loops.push_back(loopJson(l, mainFile));
    }
    j["loops"] = std::move(loops);

    ojson hazards = ojson::array();
    for (const auto& h : k.hazards) {
        hazards.push_back(hazardJson(h, mainFile));
    }
    j["hazards"] = std::move(hazards);

    ojson launches = ojson::array();
    for (const auto& l : k.launches) {
        launches.push_back(launchJson(l, mainFile));
    }
    j["launches"] = std::move(launches);
    if (!k.untracked.empty()) {
        j["untracked"] = k.untracked;
    }
    if (!k.globals.empty()) {
        ojson globals = ojson::array();
        for (const auto& g : k.globals) {
            globals.push_back(globalJson(g, mainFile));
        }
        j["globals"] = std::move(globals);
    }
    if (!k.unknownWrites.empty()) {
        j["unknown_writes"] = k.unknownWrites;
    }
    if (!k.unknownReads.empty()) {
        j["unknown_reads"] = k.unknownReads;
    }
    if (!k.onchip.empty()) {
        j["onchip"] = onChipJson(k.onchip, k.name, mainFile);
    }
    return j;
}

ojson toJson(const FileInfo& info) {
    ojson j;
    j["file"] = info.file;
    j["site_count"] = info.siteCount;
    ojson kernels = ojson::array();
    for (const auto& k : info.kernels) {
        kernels.push_back(toJson(k, info.file));
    }
    j["kernels"] = std::move(kernels);
    ojson allocs = ojson::array();
    for (const auto& a : info.allocations) {
        ojson ja = {{"variable", a.variable}, {"call", a.call}};
        putLocation(ja, a.location, info.file);
        ja["function"] = a.function;
        ja["bytes_text"] = a.bytesText;
        ja["bytes"] = a.bytes ? ojson(*a.bytes) : ojson(nullptr);
        allocs.push_back(std::move(ja));
    }
    j["allocations"] = std::move(allocs);
    j["warnings"] = info.warnings;
    return j;
}

Expected<FileInfo> fileInfoFromJson(const json& j) {
    try {
        Reader r(j, "$");
        FileInfo info;
        info.file = r.at("file").str();
        info.siteCount = static_cast<int>(r.at("site_count").integer());
        Reader kernels = r.at("kernels");
        for (size_t i = 0; i < kernels.size(); ++i) {
            info.kernels.push_back(readKernel(kernels.at(i), info.file));
        }
        Reader allocs = r.at("allocations");
        for (size_t i = 0; i < allocs.size(); ++i) {
            Reader a = allocs.at(i);
            AllocationSite as;
            as.variable = a.at("variable").str();
            as.call = a.at("call").str();
            as.location = readLocation(a, info.file);
            as.function = a.at("function").str();
            as.bytesText = a.at("bytes_text").str();
            if (!a.at("bytes").raw().is_null()) {
                as.bytes = static_cast<uint64_t>(a.at("bytes").integer());
            }
            info.allocations.push_back(std::move(as));
        }
        if (r.has("warnings")) {
            info.warnings = readStrings(r.at("warnings"));
        }
        return info;
    } catch (const ReadError& e) {
        return fail(std::string("KernelInfo JSON: ") + e.what());
    } catch (const json::exception& e) {
        return fail(std::string("KernelInfo JSON: ") + e.what());
    }
}

namespace {

/// One line: `{"a": 1, "b": [2, 3]}`.
std::string inlineJson(const ojson& j) {
    if (j.is_object()) {
        std::string out = "{";
        bool first = true;
        for (const auto& [key, value] : j.items()) {
            out += (first ? "" : ", ") + dumpJson(ojson(key)) + ": " + inlineJson(value);
            first = false;
        }
        return out + "}";
    }
    if (j.is_array()) {
        std::string out = "[";
        bool first = true;
        for (const auto& value : j) {
            out += (first ? "" : ", ") + inlineJson(value);
            first = false;
        }
        return out + "]";
    }
    return dumpJson(j);
}

void formatValue(const ojson& j, size_t indent, size_t width, std::string& out) {
    std::string compact = inlineJson(j);
    if ((!j.is_structured() || j.empty()) || indent + compact.size() <= width) {
        out += compact;
        return;
    }
    std::string pad(indent + 2, ' ');
    bool first = true;
    if (j.is_object()) {
        out += "{\n";
        for (const auto& [key, value] : j.items()) {
            out += first ? "" : ",\n";
            first = false;
            out += pad + dumpJson(ojson(key)) + ": ";
            formatValue(value, indent + 2, width, out);
        }
        out += "\n" + std::string(indent, ' ') + "}";
        return;
    }
    out += "[\n";
    for (const auto& value : j) {
        out += first ? "" : ",\n";
        first = false;
        out += pad;
        formatValue(value, indent + 2, width, out);
    }
    out += "\n" + std::string(indent, ' ') + "]";
}

} // namespace

std::string formatJson(const ojson& j, size_t width) {
    std::string out;
    formatValue(j, 0, width, out);
    return out + "\n";
}

} // namespace memplace::kernelinfo

#include "kernelinfo/onchip_json.h"

namespace memplace::kernelinfo {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

ojson onChipJson(const OnChipFacts& f, const std::string& kernel, const std::string& mainFile) {
    ojson j = ojson::object();
    if (f.maxThreads) {
        j["max_threads"] = *f.maxThreads;
    }
    if (!f.externShared.empty()) {
        j["extern_shared"] = f.externShared;
    }
    ojson shared = ojson::array();
    for (const auto& s : f.shared) {
        ojson js = {{"array", s.array},
                    {"private", s.threadPrivate},
                    {"privacy", s.privacy},
                    {"constant_indices", s.constantIndices}};
        if (!s.indexReason.empty()) {
            js["index_reason"] = s.indexReason;
        }
        js["reads"] = s.reads;
        js["writes"] = s.writes;
        if (s.estimated) {
            js["estimated"] = true;
        }
        shared.push_back(std::move(js));
    }
    j["shared"] = std::move(shared);
    ojson barriers = ojson::array();
    for (const auto& b : f.barriers) {
        ojson jb = ojson::object();
        if (!b.location.file.empty() && b.location.file != mainFile) {
            jb["file"] = b.location.file;
        }
        jb["line"] = b.location.line;
        jb["column"] = b.location.column;
        if (b.function != kernel) {
            jb["function"] = b.function;
        }
        jb["needed"] = b.needed;
        jb["reason"] = b.reason;
        barriers.push_back(std::move(jb));
    }
    j["barriers"] = std::move(barriers);
    ojson loads = ojson::array();
    for (const auto& l : f.invariantLoads) {
        loads.push_back({{"site", l.site}, {"array", l.array}, {"dims", l.dims}});
    }
    j["invariant_loads"] = std::move(loads);
    return j;
}

OnChipFacts onChipFromJson(const json& j, const std::string& kernel) {
    OnChipFacts f;
    if (j.contains("max_threads")) {
        f.maxThreads = j.at("max_threads").get<int64_t>();
    }
    if (j.contains("extern_shared")) {
        f.externShared = j.at("extern_shared").get<std::vector<std::string>>();
    }
    for (const auto& js : j.value("shared", json::array())) {
        SharedArrayFacts s;
        s.array = js.at("array").get<std::string>();
        s.threadPrivate = js.at("private").get<bool>();
        s.privacy = js.at("privacy").get<std::string>();
        s.constantIndices = js.at("constant_indices").get<bool>();
        s.indexReason = js.value("index_reason", std::string());
        s.reads = js.at("reads").get<uint64_t>();
        s.writes = js.at("writes").get<uint64_t>();
        s.estimated = js.value("estimated", false);
        f.shared.push_back(std::move(s));
    }
    for (const auto& jb : j.value("barriers", json::array())) {
        BarrierInfo b;
        b.location.file = jb.value("file", std::string());
        b.location.line = jb.at("line").get<uint32_t>();
        b.location.column = jb.at("column").get<uint32_t>();
        b.function = jb.value("function", kernel);
        b.needed = jb.at("needed").get<bool>();
        b.reason = jb.at("reason").get<std::string>();
        f.barriers.push_back(std::move(b));
    }
    for (const auto& jl : j.value("invariant_loads", json::array())) {
        f.invariantLoads.push_back({jl.at("site").get<SiteId>(), jl.at("array").get<std::string>(),
                                    jl.at("dims").get<std::string>()});
    }
    return f;
}

} // namespace memplace::kernelinfo

// The JSON form of a rewrite (`memplace rewrite --json`).
#include "rewrite/rewrite.h"

#include <nlohmann/json.hpp>

namespace memplace::rewrite {

namespace {

nlohmann::json placesJson(const PlaceSet& s) {
    nlohmann::json out = nlohmann::json::array();
    for (Place p : kAllPlaces) {
        if (s.contains(p)) {
            out.push_back(std::string(placeName(p)));
        }
    }
    return out;
}

nlohmann::json diagnosticJson(const Diagnostic& d) {
    return {{"severity", std::string(severityName(d.severity))},
            {"file", d.location.file},
            {"line", d.location.line},
            {"column", d.location.column},
            {"message", d.message}};
}

} // namespace

nlohmann::json toJson(const RewriteResult& r, const std::string& outputPath,
                      const std::vector<std::string>& includedPaths) {
    nlohmann::json j;
    j["file"] = r.file;
    if (!outputPath.empty()) {
        j["output"] = outputPath;
    }
    if (!r.included.empty()) {
        nlohmann::json included = nlohmann::json::array();
        for (size_t i = 0; i < r.included.size(); ++i) {
            const IncludedOutput& f = r.included[i];
            nlohmann::json fj = {{"file", f.file},           {"relative", f.relative},
                                 {"rewritten", f.rewritten}, {"kernels", f.kernels},
                                 {"launches", f.launches},   {"prototypes", f.prototypes},
                                 {"helpers", f.helpers}};
            if (i < includedPaths.size()) {
                fj["output"] = includedPaths[i];
            }
            included.push_back(std::move(fj));
        }
        j["included"] = std::move(included);
    }
    j["mode"] = r.launchesOnly ? "launches-only" : "full";
    nlohmann::json kernels = nlohmann::json::array();
    for (const KernelReport& k : r.kernels) {
        nlohmann::json kj;
        kj["name"] = k.name;
        kj["instantiations"] = k.instantiations;
        if (!k.location.file.empty() && k.location.file != r.file) {
            kj["file"] = k.location.file; // defined in an included file
        }
        kj["line"] = k.location.line;
        kj["column"] = k.location.column;
        kj["rewritten"] = k.rewritten;
        if (k.rewritten) {
            kj["descriptor"] = k.descriptor;
        } else {
            kj["reason"] = k.reason;
        }
        nlohmann::json arrays = nlohmann::json::array();
        for (const ArrayReport& a : k.arrays) {
            nlohmann::json aj;
            aj["name"] = a.name;
            aj["param"] = a.param;
            aj["accessor"] = a.accessor;
            aj["element_type"] = a.elementType;
            aj["mode"] = a.mode;
            aj["places"] = placesJson(a.places);
            if (a.accessor) {
                aj["mask"] = a.mask;
                aj["dims"] = a.dims;
                if (a.dims == 2) {
                    aj["width_param"] = a.widthParam;
                }
                aj["likely"] = a.likely;
                aj["original"] = placeName(a.original);
            }
            if (!a.reason.empty()) {
                aj["reason"] = a.reason;
            }
            arrays.push_back(std::move(aj));
        }
        kj["arrays"] = std::move(arrays);
        nlohmann::json compiled = nlohmann::json::array();
        for (const auto& pl : k.compiled) {
            nlohmann::json one = nlohmann::json::array();
            for (Place p : pl) {
                one.push_back(std::string(placeName(p)));
            }
            compiled.push_back(std::move(one));
        }
        kj["compiled"] = std::move(compiled);
        if (k.rewritten) {
            kj["jit"] = !k.jitSource.empty();
            if (k.jitSource.empty()) {
                kj["jit_reason"] = k.jitReason;
            }
        }
        kj["launches"] = k.launches;
        kernels.push_back(std::move(kj));
    }
    j["kernels"] = std::move(kernels);
    j["helpers"] = r.helpers;
    j["launches"] = {{"runtime", r.runtimeLaunches},
                     {"macro", r.macroLaunches},
                     {"untouched", r.untouchedLaunches}};
    j["dynamic_shared"] = r.dynamicShared;
    j["own_constant_bytes"] = r.ownConstantBytes;
    nlohmann::json warnings = nlohmann::json::array();
    for (const Diagnostic& d : r.warnings.all()) {
        warnings.push_back(diagnosticJson(d));
    }
    j["warnings"] = std::move(warnings);
    return j;
}

} // namespace memplace::rewrite

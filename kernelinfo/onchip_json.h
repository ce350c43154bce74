// The JSON form of OnChipFacts (onchip.h): the optional "onchip" object of a kernel in
// `memplace analyze --json` (kernel_info_json.h shows where). Written only when there is a fact.
//
// "onchip"?: {"max_threads"?: 256, "extern_shared"?: ["buf"],
//             "shared": [{"array": "s", "private": true, "privacy": "why",
//                         "constant_indices": false, "index_reason"?: "why not",
//                         "reads": 12, "writes": 4, "estimated"?: true}],
//             "barriers": [{"file"?: "h.cuh", "line": 9, "column": 5, "function"?: "helper",
//                           "needed": true, "reason": "the dependence, or why none remains"}],
//             "invariant_loads": [{"site": 3, "array": "a", "dims": "x" | "y" | "xy"}]}
#pragma once

#include "kernelinfo/onchip.h"

#include <nlohmann/json.hpp>

namespace memplace::kernelinfo {

/// `function` is written only when it is not `kernel` (the kernel's own name).
nlohmann::ordered_json onChipJson(const OnChipFacts& f, const std::string& kernel,
                                  const std::string& mainFile);
/// Reads what onChipJson writes; throws nlohmann::json::exception on a wrong shape.
OnChipFacts onChipFromJson(const nlohmann::json& j, const std::string& kernel);

} // namespace memplace::kernelinfo

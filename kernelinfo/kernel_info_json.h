// The JSON form of KernelInfo: the output of `memplace analyze --json` and the file format
// later stages read. Shape (keys marked ? appear only when they have a value):
//
// {"file": "k.cu", "site_count": 12,
//  "kernels": [{
//     "name": "scale" (qualified: "ns::scale"), "instantiation": "scale<float, 128>",
//     "template_args"?: ["float","128"],
//     "line": 3, "column": 17,
//     "parameters": [{"name": "a", "type": "float *", "pointer": true}, ...],
//     "block_dim"?: [128,1,1], "grid_dim"?: [...],
//     "arrays": [{"name": "a", "kind": "parameter|device|constant|shared|texture_object",
//                 "param_index"?: 0, "element_type": "float", "element_size": 4,
//                 "const": false, "restrict": false, "line": 3, "column": 30,
//                 "mode": "none|read|write|readwrite|atomic",
//                 "extent": {"bytes": 4096 | null, "dynamic": false | true,
//                            "source": "cudaMalloc at 20:5" | why no size is known},
//                 "dims"?: [16,16], "dimensionality": 1, "row_length"?: "n" | 16,
//                 "feasible": ["global", ...], "excluded": {"constant": "reason", ...},
//                 "original": "readonly" (where the program as written keeps it)}],
//     "sites": [{"id": 0, "array": "a", "file"?: "h.cuh", "line": 5, "column": 14,
//                "access": "read|write|readwrite|atomic", "form"?: "deref|pointer|fetch",
//                "intrinsic"?: "atomicAdd", "member"?: ".x",
//                "index": {"kind": "affine", "text": "i",
//                          "terms": [{"var": "threadIdx.x", "coeff": 1},
//                                    {"var": "blockIdx.x", "coeff": "blockDim.x"}],
//                          "offset": 0}
//                       | {"kind": "indirect", "text": "col[j]", "via": ["col"], "via_sites": [3]}
//                       | {"kind": "unknown", "text": "i % 32", "reason": "..."},
//                "subscripts"?: [index, ...], "loops"?: [0, 1],
//                "function"?: "helper", "call_path"?: [{"function": "helper", "line": 9,
//                                                       "column": 5}],
//                "contexts"?: 2, "other_arrays"?: ["b"]}],
//     "loops": [{"id": 0, "kind": "for", "line": 7, "column": 5, "var"?: "k",
//                "init"?: 0, "step"?: 1, "bound"?: "n", "trip_count": 16 | null,
//                "reason"?: "...", "parent"?: 0, "call_path"?: [...]}],
//     "hazards": [{"kind": "pointer_arithmetic|stored|escapes|aliasing|reinterpreted|macro|
//                  unknown", "array": "a", "other"?: "b", "line": 9, "column": 3,
//                  "message": "...", "call_path"?: [...]}],
//     "launches": [{"line": 30, "column": 5, "function": "main", "kernel": "scale<float, 128>",
//                   "grid": {"text": "(n + 127) / 128", "value"?: [8,1,1]}, "block": {...},
//                   "shared_bytes": {"text": "", "value"?: 0}, "stream": {"text": ""},
//                   "arguments": ["d_a", "n"]}],
//     "untracked"?: ["12:7: g.col[i]: pointer read from a structure member"],
//     "globals"?: [{"name": "ns::g", "managed"?: true, "written": true, "sized"?: false,
//                   "line": 8, "column": 5, "how": "'g[i]' is written"}],
//     "unknown_writes"?: ["12:7: 'p->x' is written through a pointer read from memory"],
//     "unknown_reads"?: ["..."],
//     "onchip"?: {...} (shared arrays, barriers, thread-invariant loads: onchip_json.h)}],
//  "allocations": [{"variable": "d_a", "call": "cudaMalloc", "line": 20, "column": 5,
//                   "function": "main", "bytes_text": "n * sizeof(float)", "bytes": 4096}],
//  "warnings": ["k.cu:9:3: warning: ..."]}
//
// Polynomials (coefficients, offsets, init, step, row_length) are JSON integers when constant
// and otherwise strings in Poly::toString form. Locations carry "file" only when they are not
// in the analysed file (KernelInfo leaves SourceLocation::file empty for it).
#pragma once

#include "common/expected.h"
#include "kernelinfo/kernel_info.h"

#include <nlohmann/json.hpp>

namespace memplace::kernelinfo {

/// Keys keep the order above (ordered_json), so the text reads top-down.
nlohmann::ordered_json toJson(const FileInfo& info);
nlohmann::ordered_json toJson(const KernelInfo& kernel, const std::string& mainFile);

/// JSON text for people and golden files: 2-space indentation, and any value whose compact
/// form fits in `width` columns (terms, places, locations) on one line.
std::string formatJson(const nlohmann::ordered_json& j, size_t width = 100);

/// Reads the form toJson writes (key order does not matter). Errors name the JSON path of the
/// offending value.
Expected<FileInfo> fileInfoFromJson(const nlohmann::json& j);

} // namespace memplace::kernelinfo

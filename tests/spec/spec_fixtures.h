// A small valid spec that tests mutate line by line. Line numbers matter: the malformed-spec
// table refers to them.
#pragma once

#include <string>
#include <vector>

namespace memplace::spec::testing {

inline const std::vector<std::string>& minimalSpecLines() {
    static const std::vector<std::string> lines = {
        "processor {",                                                                      // 1
        "    sms = 4;",                                                                     // 2
        "    warpSize = 32;",                                                               // 3
        "    clock = 1000 MHz;",                                                            // 4
        "    maxThreadsPerSm = 2048;",                                                      // 5
        "    maxBlocksPerSm = 32;",                                                         // 6
        "    maxRegistersPerSm = 65536;",                                                   // 7
        "    maxSharedPerSm = 100 KB;",                                                     // 8
        "    maxThreadsPerBlock = 1024;",                                                   // 9
        "    maxRegistersPerBlock = 65536;",                                                // 10
        "    maxSharedPerBlock = 48 KB;",                                                   // 11
        "}",                                                                                // 12
        "memory L1 {",                                                                      // 13
        "    id = 1;",                                                                      // 14
        "    swmng = no;",                                                                  // 15
        "    rw = rw;",                                                                     // 16
        "    dim = na;",                                                                    // 17
        "    size = 128 KB;",                                                               // 18
        "    blockSize = 32 B;",                                                            // 19
        "    banks = na;",                                                                  // 20
        "    latency = (30, 30);",                                                          // 21
        "    upperLevels = na;",                                                            // 22
        "    lowerLevels = (global);",                                                      // 23
        "    shareScope = sm;",                                                             // 24
        "    concurrencyFactor = (0.1, 0.5);",                                              // 25
        "    serialCondition = warp{ address1 / 32 != address2 / 32 };",                    // 26
        "}",                                                                                // 27
        "memory global {",                                                                  // 28
        "    id = 2;",                                                                      // 29
        "    swmng = yes;",                                                                 // 30
        "    rw = rw;",                                                                     // 31
        "    dim = na;",                                                                    // 32
        "    size = 1 GB;",                                                                 // 33
        "    blockSize = 32 B;",                                                            // 34
        "    banks = na;",                                                                  // 35
        "    latency = (400, om);",                                                         // 36
        "    upperLevels = om;",                                                            // 37
        "    lowerLevels = na;",                                                            // 38
        "    shareScope = device;",                                                         // 39
        "    concurrencyFactor = (0.1, 0.5);",                                              // 40
        "    serialCondition = warp{ address1 / 32 != address2 / 32 };",                    // 41
        "}",                                                                                // 42
        "memory shared {",                                                                  // 43
        "    id = 3;",                                                                      // 44
        "    swmng = yes;",                                                                 // 45
        "    rw = rw;",                                                                     // 46
        "    dim = ?;",                                                                     // 47
        "    size = 100 KB;",                                                               // 48
        "    blockSize = 4 B;",                                                             // 49
        "    banks = 32;",                                                                  // 50
        "    latency = (30, 30);",                                                          // 51
        "    upperLevels = na;",                                                            // 52
        "    lowerLevels = na;",                                                            // 53
        "    shareScope = block;",                                                          // 54
        "    concurrencyFactor = ?;",                                                       // 55
        "    serialCondition = block{ word1 != word2 && word1 % banks == word2 % banks };", // 56
        "}",                                                                                // 57
        "place global { memory = global; levels = (L1, global); path = ldst; }",            // 58
        "place shared { memory = shared; path = ldst; capacity = 48 KB; }",                 // 59
    };
    return lines;
}

/// The minimal spec with line `line` (1-based) replaced by `replacement`.
inline std::string minimalSpecWith(size_t line, const std::string& replacement) {
    std::string text;
    const auto& lines = minimalSpecLines();
    for (size_t i = 0; i < lines.size(); ++i) {
        text += (i + 1 == line ? replacement : lines[i]) + "\n";
    }
    return text;
}

inline std::string minimalSpec() {
    return minimalSpecWith(0, "");
}

} // namespace memplace::spec::testing

// Importer for the trace format of PORPLE's public cost model (github.com/gychen1991/porple_model,
// test_traces/*.txt): header lines `dimension`, `sizeof`, `block_X`, `block_Y`, `array_size`
// with one column per array, then one lane access per line: `array rw expression loop thread
// index`.
#include "trace/trace_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <unordered_map>

namespace memplace::trace {

namespace {

struct Group {
    uint64_t thread0 = 0; // thread id of lane 0 of the warp (ids reach 2^40: not 32 bits)
    uint16_t array = 0;
    uint32_t site = 0;
    AccessKind kind = AccessKind::Read;
    uint32_t mask = 0;
    int64_t lanes[32] = {};
};

struct Key {
    uint64_t array, rw, exp, loop, warp;
    bool operator==(const Key&) const = default;
};
struct KeyHash {
    size_t operator()(const Key& k) const {
        uint64_t h = k.array * 0x9E3779B97F4A7C15ull;
        for (uint64_t v : {k.rw, k.exp, k.loop, k.warp}) {
            h = (h ^ v) * 0xBF58476D1CE4E5B9ull;
            h ^= h >> 31;
        }
        return static_cast<size_t>(h);
    }
};

bool parseI64(std::string_view s, int64_t& v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && p == s.data() + s.size();
}

/// Errors at lines of the text, the first 20 kept.
struct Errors {
    std::string_view text;
    std::string_view name;
    DiagnosticList d;
    void at(uint32_t line, std::string msg) {
        if (d.errorCount() < 20) {
            d.error({std::string(name), line, 1}, std::move(msg), std::string(lineOf(text, line)));
        }
    }
};

/// One lane access line: array, rw, expression, loop, thread, index.
struct Access {
    int64_t v[6];
    uint32_t line;
};

/// The file's header columns (one per array) and its accesses.
struct PorpleFile {
    std::vector<int64_t> dimension, sizeOf, blockX, blockY, arraySize;
    std::vector<Access> accesses;
};

/// The whitespace-separated columns of `line`.
void splitColumns(std::string_view line, std::vector<std::string_view>& cols) {
    cols.clear();
    for (size_t i = 0; i < line.size();) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) {
            ++i;
        }
        size_t j = i;
        while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') {
            ++j;
        }
        if (j > i) {
            cols.push_back(line.substr(i, j - i));
        }
        i = j;
    }
}

/// The header lines and the accesses, line by line.
PorpleFile readLines(std::string_view text, Errors& errors) {
    PorpleFile f;
    auto err = [&](uint32_t line, std::string msg) { errors.at(line, std::move(msg)); };
    std::vector<Access>& accesses = f.accesses;
    uint32_t ln = 0;
    size_t pos = 0;
    std::vector<std::string_view> cols;
    while (pos < text.size()) {
        size_t nl = text.find('\n', pos);
        std::string_view line =
            text.substr(pos, nl == std::string_view::npos ? text.size() - pos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
        ++ln;
        splitColumns(line, cols);
        if (cols.empty()) {
            continue;
        }
        std::vector<int64_t>* header = nullptr;
        if (cols[0] == "dimension") {
            header = &f.dimension;
        } else if (cols[0] == "sizeof") {
            header = &f.sizeOf;
        } else if (cols[0] == "block_X") {
            header = &f.blockX;
        } else if (cols[0] == "block_Y") {
            header = &f.blockY;
        } else if (cols[0] == "array_size") {
            header = &f.arraySize;
        }
        if (header != nullptr) {
            if (!accesses.empty()) {
                err(ln, fmt::format("header line '{}' after the first access", cols[0]));
                continue;
            }
            header->clear();
            for (size_t i = 1; i < cols.size(); ++i) {
                int64_t v = 0;
                if (!parseI64(cols[i], v) || v < 0) {
                    err(ln, fmt::format("expected a non-negative number, found '{}'", cols[i]));
                }
                header->push_back(v);
            }
            continue;
        }
        if (cols.size() != 6) {
            err(ln, fmt::format("expected 6 columns (array rw expression loop thread index), "
                                "found {}",
                                cols.size()));
            continue;
        }
        Access a{};
        a.line = ln;
        bool ok = true;
        for (size_t i = 0; i < 6; ++i) {
            if (!parseI64(cols[i], a.v[i])) {
                err(ln, fmt::format("expected a number in column {}, found '{}'", i + 1, cols[i]));
                ok = false;
                break;
            }
        }
        if (ok) {
            accesses.push_back(a);
        }
    }
    return f;
}

/// The header's columns agree: one per array in every line.
void checkColumns(const PorpleFile& f, Errors& errors) {
    auto err = [&](uint32_t line, std::string msg) { errors.at(line, std::move(msg)); };
    const std::vector<int64_t>& sizeOf = f.sizeOf;
    const std::vector<int64_t>& dimension = f.dimension;
    const std::vector<int64_t>& arraySize = f.arraySize;
    size_t n = arraySize.size();
    if (n == 0) {
        err(1, "missing 'array_size' line (one column per array)");
    }
    for (auto [vec, what] : {std::pair{&sizeOf, "sizeof"}, std::pair{&dimension, "dimension"}}) {
        if (vec->size() != n) {
            err(1, fmt::format("'{}' has {} columns, 'array_size' has {}", what, vec->size(), n));
        }
    }
    if (n > 65535) {
        err(1, "more than 65535 arrays");
    }
}

/// Every access names a declared array, a valid rw flag, thread and index; marks the arrays
/// read and written and returns the largest thread id.
int64_t checkAccesses(const PorpleFile& f, Errors& errors, std::vector<bool>& read,
                      std::vector<bool>& written) {
    auto err = [&](uint32_t line, std::string msg) { errors.at(line, std::move(msg)); };
    const std::vector<int64_t>& arraySize = f.arraySize;
    const size_t n = arraySize.size();
    int64_t maxThread = 0;
    for (const Access& a : f.accesses) {
        int64_t arr = a.v[0], rw = a.v[1], thread = a.v[4], index = a.v[5];
        if (arr < 0 || static_cast<size_t>(arr) >= n) {
            err(a.line, fmt::format("array {} but the header has {} arrays", arr, n));
        } else if (rw != 0 && rw != 1) {
            err(a.line, fmt::format("rw must be 0 (read) or 1 (write), found {}", rw));
        } else if (thread < 0 || thread >= (int64_t{1} << 40)) {
            err(a.line, fmt::format("thread id {} out of range", thread));
        } else if (index < 0 || index >= arraySize[static_cast<size_t>(arr)]) {
            err(a.line, fmt::format("index {} outside array {} of {} elements", index, arr,
                                    arraySize[static_cast<size_t>(arr)]));
        } else {
            (rw == 0 ? read : written)[static_cast<size_t>(arr)] = true;
            maxThread = std::max(maxThread, thread);
        }
    }
    return maxThread;
}

/// The arrays, named a0, a1, ... in column order.
std::vector<ArrayInfo> arraysOf(const PorpleFile& f, const std::vector<bool>& read,
                                const std::vector<bool>& written) {
    const std::vector<int64_t>& sizeOf = f.sizeOf;
    const std::vector<int64_t>& dimension = f.dimension;
    const std::vector<int64_t>& blockX = f.blockX;
    const std::vector<int64_t>& arraySize = f.arraySize;
    const size_t n = arraySize.size();
    std::vector<ArrayInfo> arrays;
    for (size_t i = 0; i < n; ++i) {
        ArrayInfo a;
        a.name = fmt::format("a{}", i);
        a.elementSize = static_cast<uint32_t>(std::clamp<int64_t>(sizeOf[i], 0, 1 << 20));
        a.length = static_cast<uint64_t>(arraySize[i]);
        a.mode = written[i] ? (read[i] ? ArrayMode::ReadWrite : ArrayMode::Write) : ArrayMode::Read;
        if (dimension[i] == 2 && i < blockX.size() && blockX[i] > 0 &&
            static_cast<uint64_t>(blockX[i]) <= a.length) {
            a.dims = 2;
            a.rowLength = static_cast<uint64_t>(blockX[i]);
        }
        arrays.push_back(std::move(a));
    }
    return arrays;
}

/// Lanes of one warp access: same array, rw, expression, loop and warp. A lane seen twice
/// closes the group and opens a new one.
std::vector<Group> groupLanes(const std::vector<Access>& accesses) {
    std::vector<Group> groups;
    std::unordered_map<Key, size_t, KeyHash> open;
    for (const Access& a : accesses) {
        Key k{static_cast<uint64_t>(a.v[0]), static_cast<uint64_t>(a.v[1]),
              static_cast<uint64_t>(a.v[2]), static_cast<uint64_t>(a.v[3]),
              static_cast<uint64_t>(a.v[4]) / 32};
        auto lane = static_cast<uint32_t>(a.v[4] % 32);
        auto it = open.find(k);
        if (it == open.end() || ((groups[it->second].mask >> lane) & 1u) != 0) {
            Group g;
            g.thread0 = static_cast<uint64_t>(a.v[4]) - lane;
            g.array = static_cast<uint16_t>(a.v[0]);
            g.site = static_cast<uint32_t>((static_cast<uint64_t>(a.v[0]) << 16) +
                                           static_cast<uint64_t>(a.v[2]));
            g.kind = a.v[1] == 0 ? AccessKind::Read : AccessKind::Write;
            groups.push_back(g);
            open[k] = groups.size() - 1;
            it = open.find(k);
        }
        Group& g = groups[it->second];
        g.mask |= 1u << lane;
        g.lanes[lane] = a.v[5];
    }
    return groups;
}

} // namespace

Expected<Trace> importPorple(std::string_view text, std::string_view name,
                             const PorpleImportOptions& options) {
    Errors errors{text, name, {}};
    PorpleFile f = readLines(text, errors);
    checkColumns(f, errors);
    if (errors.d.hasErrors()) {
        return Failure{std::move(errors.d)};
    }
    const size_t n = f.arraySize.size();
    TraceHeader h;
    h.kernel = options.kernel;
    std::vector<bool> read(n, false), written(n, false);
    const int64_t maxThread = checkAccesses(f, errors, read, written);
    if (errors.d.hasErrors()) {
        return Failure{std::move(errors.d)};
    }
    uint32_t tpb = options.threadsPerBlock;
    if (tpb == 0) {
        tpb = static_cast<uint32_t>(std::min<int64_t>(1024, (maxThread + 32) / 32 * 32));
    }
    if (tpb % 32 != 0 || tpb > 1024) {
        return fail(
            fmt::format("threads per block {} must be a multiple of 32, at most 1024", tpb));
    }
    uint64_t blocks = static_cast<uint64_t>(maxThread) / tpb + 1;
    if (blocks > UINT32_MAX) {
        return fail(fmt::format("thread id {} gives {} blocks of {} threads: more than 2^32 - 1",
                                maxThread, blocks, tpb));
    }
    h.grid = {static_cast<uint32_t>(blocks), 1, 1};
    h.block = {tpb, 1, 1};
    h.arrays = arraysOf(f, read, written);
    const std::vector<Group> groups = groupLanes(f.accesses);
    TraceBuilder b(std::move(h));
    for (const Group& g : groups) {
        // thread0 / tpb < blocks <= UINT32_MAX, checked above.
        b.addLanes(static_cast<uint32_t>(g.thread0 / tpb),
                   static_cast<uint32_t>((g.thread0 % tpb) / 32), g.site, g.array, g.kind, g.mask,
                   g.lanes);
    }
    return std::move(b).finish(name);
}

} // namespace memplace::trace

// The text form of a trace (docs/trace-format.md, "Text form").
#include "trace/trace_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <limits>
#include <unordered_map>

namespace memplace::trace {

namespace {

std::string placeList(PlaceSet s) {
    std::string out;
    for (Place p : kAllPlaces) {
        if (s.contains(p)) {
            if (!out.empty()) {
                out += ',';
            }
            out += placeName(p);
        }
    }
    return out.empty() ? "none" : out;
}

/// Compact offsets: runs of three or more with one step become A..B (step 1), A..B:S, or VxN.
void appendOffsets(std::string& out, std::span<const int64_t> o) {
    for (size_t i = 0; i < o.size();) {
        size_t j = i + 1;
        if (j < o.size()) {
            int64_t step = o[j] - o[i];
            while (j + 1 < o.size() && o[j + 1] - o[j] == step) {
                ++j;
            }
            if (j - i + 1 >= 3) {
                if (step == 0) {
                    out += fmt::format(" {}x{}", o[i], j - i + 1);
                } else if (step == 1) {
                    out += fmt::format(" {}..{}", o[i], o[j]);
                } else {
                    out += fmt::format(" {}..{}:{}", o[i], o[j], step);
                }
                i = j + 1;
                continue;
            }
        }
        out += fmt::format(" {}", o[i]);
        ++i;
    }
}

std::string blockList(const BlockSet& blocks) {
    std::string out;
    for (const auto& r : blocks.ranges()) {
        out +=
            r.last > r.first ? fmt::format(" {}-{}", r.first, r.last) : fmt::format(" {}", r.first);
    }
    return out;
}

struct Token {
    std::string_view text;
    uint32_t column = 0; // 1-based
};

std::vector<Token> tokenize(std::string_view line) {
    std::vector<Token> out;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) {
            ++i;
        }
        if (i >= line.size() || line[i] == '#') {
            break;
        }
        size_t j = i;
        while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r' &&
               line[j] != '#') {
            ++j;
        }
        out.push_back({line.substr(i, j - i), static_cast<uint32_t>(i + 1)});
        i = j;
    }
    return out;
}

/// What an array field accepts, for messages.
std::string_view arrayFieldRange(std::string_view field) {
    if (field == "elem") {
        return "bytes, 1..4096";
    }
    if (field == "length") {
        return "elements, 1..2^48";
    }
    if (field == "dims") {
        return "1 or 2";
    }
    if (field == "row") {
        return "elements, at most the length";
    }
    if (field == "mode") {
        return "read, write, readwrite or atomic";
    }
    if (field == "original") {
        return "a place name";
    }
    return "place names, all, default or none";
}

template <typename T>
bool parseInt(std::string_view s, T& v, int base = 10) {
    if (s.empty()) {
        return false;
    }
    const char* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, v, base);
    return ec == std::errc() && p == end;
}

class TextParser {
public:
    TextParser(std::string_view text, std::string_view name) : text_(text), name_(name) {}

    Expected<Trace> run();

private:
    void error(uint32_t line, uint32_t column, std::string msg) {
        if (++errors_ <= 20) {
            diags_.error({std::string(name_), line, column}, std::move(msg),
                         std::string(lineOf(text_, line)));
        }
    }
    bool headerLine(uint32_t ln, const std::vector<Token>& t);
    bool arrayLine(uint32_t ln, const std::vector<Token>& t);
    void recordLine(uint32_t ln, const std::vector<Token>& t);
    bool parseOffsets(uint32_t ln, const std::vector<Token>& t, size_t from,
                      std::vector<int64_t>& out);

    std::string_view text_;
    std::string_view name_;
    DiagnosticList diags_;
    size_t errors_ = 0;
    TraceHeader header_;
    bool sawKernel_ = false, sawGrid_ = false, sawBlock_ = false;
    std::optional<TraceBuilder> builder_;
    std::vector<int64_t> scratch_;
    struct Range {
        uint32_t lo, hi, line, column;
    };
    std::vector<Range> tracedRanges_;
    /// Array name -> index: a linear search per line made 65535 arrays quadratic.
    std::unordered_map<std::string, uint16_t> arrayIndex_;
    /// Checks the traced ranges once the grid is known and keeps them as ranges (never one
    /// entry per block); false on an error.
    bool checkTraced();
};

bool TextParser::checkTraced() {
    header_.tracedBlocks.clear();
    const uint64_t blocks = header_.grid.count();
    for (size_t i = 0; i < tracedRanges_.size(); ++i) {
        const Range& r = tracedRanges_[i];
        if (r.hi >= blocks) {
            error(r.line, r.column,
                  fmt::format("traced block {} is outside the grid of {} blocks", r.hi, blocks));
            return false;
        }
        if (i > 0 && r.lo <= tracedRanges_[i - 1].hi) {
            error(r.line, r.column,
                  "traced blocks must be listed in ascending order without repeats");
            return false;
        }
        header_.tracedBlocks.addRange(r.lo, r.hi);
    }
    // Every block is `traced all`, which the binary form holds in one byte rather than one
    // varint per block.
    if (header_.tracedBlocks.size() == blocks) {
        header_.tracedBlocks.clear();
    }
    return true;
}

bool TextParser::headerLine(uint32_t ln, const std::vector<Token>& t) {
    std::string_view key = t[0].text;
    auto needArgs = [&](size_t lo, size_t hi) {
        if (t.size() - 1 < lo || t.size() - 1 > hi) {
            error(ln, t[0].column,
                  lo == hi ? fmt::format("'{}' takes {} value(s)", key, lo)
                           : fmt::format("'{}' takes {} to {} values", key, lo, hi));
            return false;
        }
        return true;
    };
    if (key == "kernel") {
        if (needArgs(1, 1)) {
            header_.kernel = std::string(t[1].text);
            sawKernel_ = true;
            if (!validTraceName(header_.kernel)) {
                error(ln, t[1].column, fmt::format("invalid kernel name '{}'", t[1].text));
            }
        }
        return true;
    }
    if (key == "grid" || key == "block") {
        if (!needArgs(1, 3)) {
            return true;
        }
        Dim3& d = key == "grid" ? header_.grid : header_.block;
        uint32_t* fields[3] = {&d.x, &d.y, &d.z};
        bool ok = true;
        for (size_t i = 1; i < t.size(); ++i) {
            if (!parseInt(t[i].text, *fields[i - 1]) || *fields[i - 1] == 0) {
                error(ln, t[i].column,
                      fmt::format("expected a positive {} dimension, found '{}'", key, t[i].text));
                ok = false;
            }
        }
        // Block ids are 32 bits; a block has at most 4096 threads (what the format holds).
        const uint64_t most = key == "grid" ? uint64_t{1} << 32 : 4096;
        if (ok && d.count() > most) {
            error(ln, t[1].column,
                  fmt::format("{} {}x{}x{} has more than {} {} in all", key, d.x, d.y, d.z, most,
                              key == "grid" ? "blocks" : "threads"));
        }
        (key == "grid" ? sawGrid_ : sawBlock_) = true;
        return true;
    }
    if (key == "registers") {
        uint32_t v = 0;
        if (needArgs(1, 1)) {
            if (!parseInt(t[1].text, v) || v == 0 || v > 1024) {
                error(ln, t[1].column,
                      fmt::format("expected a register count in 1..1024, found '{}'", t[1].text));
            } else {
                header_.registersPerThread = v;
            }
        }
        return true;
    }
    if (key == "shared") {
        uint64_t v = 0;
        if (needArgs(1, 1)) {
            if (!parseInt(t[1].text, v) || v > (uint64_t{1} << 30)) {
                error(ln, t[1].column,
                      fmt::format("expected bytes of shared memory, at most 2^30, found '{}'",
                                  t[1].text));
            } else {
                header_.sharedPerBlock = v;
            }
        }
        return true;
    }
    if (key == "traced") {
        tracedRanges_.clear();
        if (t.size() == 2 && t[1].text == "all") {
            return true;
        }
        if (!needArgs(1, std::numeric_limits<size_t>::max())) {
            return true;
        }
        for (size_t i = 1; i < t.size(); ++i) {
            std::string_view s = t[i].text;
            auto dash = s.find('-');
            uint32_t lo = 0;
            uint32_t hi = 0;
            bool ok = dash == std::string_view::npos
                          ? parseInt(s, lo) && (hi = lo, true)
                          : parseInt(s.substr(0, dash), lo) && parseInt(s.substr(dash + 1), hi) &&
                                lo <= hi;
            if (!ok) {
                error(ln, t[i].column,
                      fmt::format("expected a block id or a range A-B, found '{}'", s));
                continue;
            }
            tracedRanges_.push_back({lo, hi, ln, t[i].column});
        }
        return true;
    }
    if (key == "array") {
        return arrayLine(ln, t);
    }
    return false;
}

bool TextParser::arrayLine(uint32_t ln, const std::vector<Token>& t) {
    if (t.size() < 2) {
        error(ln, t[0].column, "'array' needs a name and fields");
        return true;
    }
    ArrayInfo a;
    a.name = std::string(t[1].text);
    if (!validTraceName(a.name)) {
        error(ln, t[1].column, fmt::format("invalid array name '{}'", a.name));
    }
    if (header_.arrays.size() >= 65535) {
        error(ln, t[0].column, "more than 65535 arrays");
        return true;
    }
    if (!arrayIndex_.emplace(a.name, static_cast<uint16_t>(header_.arrays.size())).second) {
        error(ln, t[1].column, fmt::format("array '{}' is declared twice", a.name));
    }
    bool sawElem = false, sawLength = false, sawMode = false;
    for (size_t i = 2; i < t.size(); ++i) {
        std::string_view f = t[i].text;
        auto eq = f.find('=');
        if (eq == std::string_view::npos) {
            error(ln, t[i].column, fmt::format("expected field=value, found '{}'", f));
            continue;
        }
        std::string_view k = f.substr(0, eq);
        std::string_view v = f.substr(eq + 1);
        bool ok = true;
        if (k == "elem") {
            ok = parseInt(v, a.elementSize) && a.elementSize >= 1 && a.elementSize <= 4096;
            sawElem = true;
        } else if (k == "length") {
            ok = parseInt(v, a.length) && a.length >= 1 && a.length <= (uint64_t{1} << 48);
            sawLength = true;
        } else if (k == "mode") {
            auto m = parseArrayMode(v);
            ok = m.has_value();
            if (m) {
                a.mode = *m;
            }
            sawMode = true;
        } else if (k == "places") {
            if (v == "all") {
                a.feasible = PlaceSet::all();
            } else if (v == "default") {
                a.feasible = kDefaultFeasible;
            } else if (v == "none") {
                a.feasible = PlaceSet{};
            } else {
                a.feasible = PlaceSet{};
                size_t start = 0;
                while (ok && start <= v.size()) {
                    size_t comma = v.find(',', start);
                    auto p = parsePlace(v.substr(start, comma - start));
                    ok = p.has_value();
                    if (p) {
                        a.feasible.insert(*p);
                    }
                    if (comma == std::string_view::npos) {
                        break;
                    }
                    start = comma + 1;
                }
            }
        } else if (k == "original") {
            auto p = parsePlace(v);
            ok = p.has_value();
            if (p) {
                a.original = *p;
            }
        } else if (k == "dims") {
            ok = parseInt(v, a.dims) && (a.dims == 1 || a.dims == 2);
        } else if (k == "row") {
            ok = parseInt(v, a.rowLength) && a.rowLength <= (uint64_t{1} << 48);
        } else {
            error(ln, t[i].column,
                  fmt::format("unknown array field '{}' (elem, length, mode, places, original, "
                              "dims, row)",
                              k));
            continue;
        }
        if (!ok) {
            error(ln, t[i].column,
                  fmt::format("invalid value '{}' for array field '{}' ({})", v, k,
                              arrayFieldRange(k)));
        }
    }
    if (a.dims == 2 && (a.rowLength == 0 || a.rowLength > a.length)) {
        error(ln, t[0].column,
              fmt::format("array '{}': a 2-D array needs a row length in 1..length", a.name));
    }
    if (!sawElem || !sawLength || !sawMode) {
        error(ln, t[0].column, fmt::format("array '{}' needs elem=, length= and mode=", a.name));
    }
    header_.arrays.push_back(std::move(a));
    return true;
}

bool TextParser::parseOffsets(uint32_t ln, const std::vector<Token>& t, size_t from,
                              std::vector<int64_t>& out) {
    out.clear();
    for (size_t i = from; i < t.size(); ++i) {
        std::string_view s = t[i].text;
        auto dots = s.find("..");
        auto x = s.find('x');
        bool ok = true;
        if (dots != std::string_view::npos) {
            std::string_view rest = s.substr(dots + 2);
            int64_t a = 0, b = 0, step = 1;
            auto colon = rest.find(':');
            ok = parseInt(s.substr(0, dots), a) && parseInt(rest.substr(0, colon), b) &&
                 (colon == std::string_view::npos || parseInt(rest.substr(colon + 1), step)) &&
                 step != 0 && ((step > 0 && b >= a) || (step < 0 && b <= a));
            if (ok) {
                // Unsigned arithmetic cannot overflow here; a warp has at most 32 lanes.
                uint64_t diff = b >= a ? static_cast<uint64_t>(b) - static_cast<uint64_t>(a)
                                       : static_cast<uint64_t>(a) - static_cast<uint64_t>(b);
                uint64_t ustep = step > 0 ? static_cast<uint64_t>(step)
                                          : uint64_t{0} - static_cast<uint64_t>(step);
                ok = diff % ustep == 0;
                if (ok && diff / ustep + 1 + out.size() > 32) {
                    error(ln, t[i].column, "more than 32 offsets in one record");
                    return false;
                }
            }
            if (ok) {
                for (int64_t v = a;; v += step) {
                    out.push_back(v);
                    if (v == b) {
                        break;
                    }
                }
            }
        } else if (x != std::string_view::npos) {
            int64_t v = 0;
            uint32_t n = 0;
            ok = parseInt(s.substr(0, x), v) && parseInt(s.substr(x + 1), n) && n > 0;
            if (ok) {
                if (n + out.size() > 32) {
                    error(ln, t[i].column, "more than 32 offsets in one record");
                    return false;
                }
                out.insert(out.end(), n, v);
            }
        } else {
            int64_t v = 0;
            ok = parseInt(s, v);
            if (ok) {
                if (out.size() + 1 > 32) {
                    error(ln, t[i].column, "more than 32 offsets in one record");
                    return false;
                }
                out.push_back(v);
            }
        }
        if (!ok) {
            error(ln, t[i].column,
                  fmt::format("expected an offset, A..B, A..B:STEP or VxN, found '{}'", s));
            return false;
        }
    }
    return true;
}

void TextParser::recordLine(uint32_t ln, const std::vector<Token>& t) {
    AccessKind kind = AccessKind::Read;
    std::string_view k = t[0].text;
    if (k == "r" || k == "read") {
        kind = AccessKind::Read;
    } else if (k == "w" || k == "write") {
        kind = AccessKind::Write;
    } else if (k == "a" || k == "atomic") {
        kind = AccessKind::Atomic;
    } else {
        error(ln, t[0].column,
              fmt::format("unknown line '{}': expected a header field or a record (r, w, a)", k));
        return;
    }
    if (t.size() < 7) {
        error(ln, t[0].column, "a record is: KIND BLOCK WARP SITE ARRAY MASK OFFSETS...");
        return;
    }
    uint32_t block = 0, warp = 0, site = 0;
    if (!parseInt(t[1].text, block)) {
        error(ln, t[1].column, fmt::format("expected a block id, found '{}'", t[1].text));
        return;
    }
    if (!parseInt(t[2].text, warp)) {
        error(ln, t[2].column, fmt::format("expected a warp number, found '{}'", t[2].text));
        return;
    }
    if (!parseInt(t[3].text, site)) {
        error(ln, t[3].column, fmt::format("expected a site id, found '{}'", t[3].text));
        return;
    }
    auto found = arrayIndex_.find(std::string(t[4].text));
    if (found == arrayIndex_.end()) {
        error(ln, t[4].column, fmt::format("unknown array '{}'", t[4].text));
        return;
    }
    const std::optional<uint16_t> array = found->second;
    if (!parseOffsets(ln, t, 6, scratch_)) {
        return;
    }
    uint32_t mask = 0;
    if (t[5].text == "*") {
        mask = scratch_.size() == 32 ? 0xffffffffu : (1u << scratch_.size()) - 1u;
    } else if (t[5].text.size() > 2 && t[5].text.substr(0, 2) == "0x" &&
               parseInt(t[5].text.substr(2), mask, 16)) {
        if (static_cast<size_t>(std::popcount(mask)) != scratch_.size()) {
            error(ln, t[5].column,
                  fmt::format("mask {} has {} active lanes but {} offsets follow", t[5].text,
                              std::popcount(mask), scratch_.size()));
            return;
        }
    } else {
        error(ln, t[5].column, fmt::format("expected a mask (* or 0x...), found '{}'", t[5].text));
        return;
    }
    if (mask == 0) {
        error(ln, t[5].column, "a record needs at least one active lane");
        return;
    }
    // Check what the builder would only report by record number, here with the line.
    const ArrayInfo& a = header_.arrays[*array];
    for (size_t i = 0; i < scratch_.size(); ++i) {
        if (scratch_[i] < 0 || static_cast<uint64_t>(scratch_[i]) >= a.length) {
            error(ln, t[6].column,
                  fmt::format("offset {} outside array '{}' of {} elements", scratch_[i], a.name,
                              a.length));
            return;
        }
    }
    if (block >= header_.grid.count()) {
        error(ln, t[1].column,
              fmt::format("block {} outside the grid of {} blocks", block, header_.grid.count()));
        return;
    }
    if (warp >= header_.warpsPerBlock()) {
        error(ln, t[2].column,
              fmt::format("warp {} but a block has {} warps", warp, header_.warpsPerBlock()));
        return;
    }
    builder_->add(block, warp, site, *array, kind, mask, scratch_);
}

Expected<Trace> TextParser::run() {
    uint32_t ln = 0;
    size_t pos = 0;
    bool sawMagic = false;
    while (pos <= text_.size()) {
        size_t nl = text_.find('\n', pos);
        std::string_view line =
            text_.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        ++ln;
        pos = nl == std::string_view::npos ? text_.size() + 1 : nl + 1;
        auto t = tokenize(line);
        if (t.empty()) {
            continue;
        }
        if (!sawMagic) {
            if (t.size() != 2 || t[0].text != "memplace-trace") {
                error(ln, t[0].column, fmt::format("expected '{}' on the first line", kTextMagic));
                return Failure{std::move(diags_)};
            }
            if (t[1].text != "1") {
                error(ln, t[1].column,
                      fmt::format("unsupported text trace version '{}' (this reader reads 1)",
                                  t[1].text));
                return Failure{std::move(diags_)};
            }
            sawMagic = true;
            continue;
        }
        if (!builder_) {
            if (headerLine(ln, t)) {
                continue;
            }
            // The first record ends the header.
            if (!sawKernel_ || !sawGrid_ || !sawBlock_) {
                error(ln, t[0].column, "records must follow the kernel, grid and block lines");
                return Failure{std::move(diags_)};
            }
            if (!checkTraced() || diags_.hasErrors()) {
                return Failure{std::move(diags_)};
            }
            DiagnosticList hd = checkHeader(header_, name_);
            if (hd.hasErrors()) {
                diags_.append(hd);
                return Failure{std::move(diags_)};
            }
            builder_.emplace(header_);
        } else if (t[0].text == "array" || t[0].text == "kernel" || t[0].text == "grid" ||
                   t[0].text == "block" || t[0].text == "traced" || t[0].text == "shared" ||
                   t[0].text == "registers") {
            error(ln, t[0].column,
                  fmt::format("'{}' must come before the first record", t[0].text));
            continue;
        }
        recordLine(ln, t);
    }
    if (!sawMagic) {
        error(1, 1, fmt::format("empty file: expected '{}'", kTextMagic));
    }
    if (errors_ > 20) {
        diags_.error({std::string(name_), 0, 0},
                     fmt::format("... and {} more errors", errors_ - 20));
    }
    if (diags_.hasErrors()) {
        return Failure{std::move(diags_)};
    }
    if (!builder_) {
        if (!sawKernel_ || !sawGrid_ || !sawBlock_) {
            error(ln, 1, "a trace needs kernel, grid and block lines");
            return Failure{std::move(diags_)};
        }
        if (!checkTraced()) {
            return Failure{std::move(diags_)};
        }
        builder_.emplace(header_);
    }
    return std::move(*builder_).finish(name_);
}

} // namespace

std::string writeText(const Trace& t) {
    const TraceHeader& h = t.header();
    std::string out;
    out.reserve(64 * t.records().size() + 512);
    out += kTextMagic;
    out += '\n';
    out += fmt::format("kernel {}\n", h.kernel);
    out += fmt::format("grid {} {} {}\n", h.grid.x, h.grid.y, h.grid.z);
    out += fmt::format("block {} {} {}\n", h.block.x, h.block.y, h.block.z);
    if (h.registersPerThread) {
        out += fmt::format("registers {}\n", *h.registersPerThread);
    }
    if (h.sharedPerBlock) {
        out += fmt::format("shared {}\n", *h.sharedPerBlock);
    }
    out += h.tracedBlocks.empty() ? "traced all\n" : "traced" + blockList(h.tracedBlocks) + "\n";
    for (const auto& a : h.arrays) {
        out += fmt::format("array {} elem={} length={} mode={} places={}", a.name, a.elementSize,
                           a.length, arrayModeName(a.mode), placeList(a.feasible));
        if (a.original != Place::Global) {
            out += fmt::format(" original={}", placeName(a.original));
        }
        if (a.dims != 1 || a.rowLength != 0) {
            out += fmt::format(" dims={} row={}", a.dims, a.rowLength);
        }
        out += '\n';
    }
    out += "# kind block warp site array mask offsets\n";
    for (const Record& r : t.records()) {
        const char* kind = r.kind == AccessKind::Read    ? "r"
                           : r.kind == AccessKind::Write ? "w"
                                                         : "a";
        uint32_t prefix = r.lanes == 32 ? 0xffffffffu : (1u << r.lanes) - 1u;
        std::string mask = r.mask == prefix ? "*" : fmt::format("0x{:08x}", r.mask);
        out += fmt::format("{} {} {} {} {} {}", kind, r.block, r.warp, r.site,
                           h.arrays[r.array].name, mask);
        appendOffsets(out, t.lanes(r));
        out += '\n';
    }
    return out;
}

Expected<Trace> parseText(std::string_view text, std::string_view name) {
    TextParser p(text, name);
    return p.run();
}

} // namespace memplace::trace

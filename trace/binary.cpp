// The binary trace format, version 1 (docs/trace-format.md, "Binary form").
#include "trace/trace_io.h"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cstring>

namespace memplace::trace {

namespace {

constexpr size_t kPrefixBytes = 48; // magic, version, flags, four u64 sizes
constexpr size_t kTrailerBytes = 4; // crc32

std::array<uint32_t, 256> makeCrcTable() {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k) {
            c = (c & 1u) != 0 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        }
        t[i] = c;
    }
    return t;
}

class Writer {
public:
    void bytes(std::string_view s) { out_.append(s); }
    void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
    void u16(uint16_t v) { fixed(v, 2); }
    void u32(uint32_t v) { fixed(v, 4); }
    void u64(uint64_t v) { fixed(v, 8); }
    void varint(uint64_t v) {
        while (v >= 0x80) {
            out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
            v >>= 7;
        }
        out_.push_back(static_cast<char>(v));
    }
    void zigzag(int64_t v) {
        varint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
    }
    void str(std::string_view s) {
        varint(s.size());
        out_.append(s);
    }
    std::string& data() { return out_; }

private:
    void fixed(uint64_t v, int n) {
        for (int i = 0; i < n; ++i) {
            out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
        }
    }
    std::string out_;
};

/// A bounds-checked cursor; the first failure sticks and names the byte offset.
class Reader {
public:
    Reader(std::string_view data, size_t base) : data_(data), base_(base) {}

    bool ok() const { return error_.empty(); }
    const std::string& error() const { return error_; }
    size_t position() const { return base_ + pos_; }
    bool atEnd() const { return pos_ == data_.size(); }

    uint8_t u8(const char* what) {
        if (!need(1, what)) {
            return 0;
        }
        return static_cast<uint8_t>(data_[pos_++]);
    }
    uint32_t u32(const char* what) {
        if (!need(4, what)) {
            return 0;
        }
        uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            v |= static_cast<uint32_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
        }
        pos_ += 4;
        return v;
    }
    uint64_t varint(const char* what) {
        uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (!need(1, what)) {
                return 0;
            }
            auto b = static_cast<uint8_t>(data_[pos_++]);
            if (shift == 63 && (b & 0x7e) != 0) {
                fail(fmt::format("{} overflows 64 bits", what));
                return 0;
            }
            v |= static_cast<uint64_t>(b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                return v;
            }
        }
        fail(fmt::format("{} overflows 64 bits", what));
        return 0;
    }
    /// A varint that must not exceed `max`.
    uint64_t bounded(const char* what, uint64_t max) {
        size_t at = position();
        uint64_t v = varint(what);
        if (ok() && v > max) {
            failAt(at, fmt::format("{} {} exceeds the limit {}", what, v, max));
            return 0;
        }
        return v;
    }
    int64_t zigzag(const char* what) {
        uint64_t v = varint(what);
        return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
    }
    std::string str(const char* what, size_t max) {
        uint64_t n = bounded(what, max);
        if (!need(n, what)) {
            return {};
        }
        std::string s(data_.substr(pos_, n));
        pos_ += n;
        return s;
    }
    void fail(std::string msg) { failAt(position(), std::move(msg)); }
    void failAt(size_t at, std::string msg) {
        if (error_.empty()) {
            error_ = fmt::format("byte {}: {}", at, msg);
        }
    }

private:
    bool need(uint64_t n, const char* what) {
        if (!ok()) {
            return false;
        }
        if (n > data_.size() - pos_) {
            fail(fmt::format("truncated {}", what));
            return false;
        }
        return true;
    }
    std::string_view data_;
    size_t base_ = 0;
    size_t pos_ = 0;
    std::string error_;
};

uint64_t readU64(std::string_view b, size_t at) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) {
        v |= static_cast<uint64_t>(static_cast<uint8_t>(b[at + i])) << (8 * i);
    }
    return v;
}
uint16_t readU16(std::string_view b, size_t at) {
    return static_cast<uint16_t>(static_cast<uint8_t>(b[at]) |
                                 (static_cast<uint8_t>(b[at + 1]) << 8));
}

Failure failure(std::string_view name, const std::string& msg) {
    return fail(SourceLocation{std::string(name), 0, 0}, msg);
}

/// The fixed header's sizes (after the magic and version).
struct Prefix {
    uint64_t headerBytes = 0;
    uint64_t recordCount = 0;
    uint64_t laneCount = 0;
    uint64_t bodyBytes = 0;
};

/// The magic, version, sizes and checksum, checked against the file's length and content.
Expected<Prefix> readPrefix(std::string_view b, std::string_view name) {
    if (b.size() < kBinaryMagic.size() || b.substr(0, kBinaryMagic.size()) != kBinaryMagic) {
        return failure(name, "not a memplace binary trace (bad magic)");
    }
    if (b.size() < kPrefixBytes + kTrailerBytes) {
        return failure(name, fmt::format("truncated: {} bytes, the fixed header alone is {}",
                                         b.size(), kPrefixBytes + kTrailerBytes));
    }
    uint16_t major = readU16(b, 8);
    uint16_t minor = readU16(b, 10);
    if (major != kBinaryVersionMajor) {
        return failure(name, fmt::format("unsupported version {}.{} (this reader reads {}.x)",
                                         major, minor, kBinaryVersionMajor));
    }
    Prefix p;
    p.headerBytes = readU64(b, 16);
    p.recordCount = readU64(b, 24);
    p.laneCount = readU64(b, 32);
    p.bodyBytes = readU64(b, 40);
    const uint64_t headerBytes = p.headerBytes;
    const uint64_t recordCount = p.recordCount;
    const uint64_t laneCount = p.laneCount;
    const uint64_t bodyBytes = p.bodyBytes;
    const uint64_t available = b.size() - kPrefixBytes - kTrailerBytes;
    if (headerBytes > available || bodyBytes > available - headerBytes) {
        return failure(name, fmt::format("truncated: the fixed header announces {} header bytes "
                                         "and {} body bytes, the file has {} bytes after it",
                                         headerBytes, bodyBytes, available));
    }
    if (headerBytes + bodyBytes != available) {
        return failure(name, fmt::format("{} bytes after the end of the trace",
                                         available - headerBytes - bodyBytes));
    }
    size_t crcAt = kPrefixBytes + headerBytes + bodyBytes;
    uint32_t stored = 0;
    for (int i = 0; i < 4; ++i) {
        stored |= static_cast<uint32_t>(static_cast<uint8_t>(b[crcAt + i])) << (8 * i);
    }
    uint32_t actual = crc32(b.substr(0, crcAt));
    if (stored != actual) {
        return failure(name, fmt::format("checksum mismatch (stored {:08x}, computed {:08x}): the "
                                         "file is corrupted",
                                         stored, actual));
    }
    // Each record takes at least 9 bytes (4 one-byte varints, kind, mask) and each lane 1.
    if (recordCount > bodyBytes / 9 || laneCount > bodyBytes || laneCount > recordCount * 32 ||
        (recordCount > 0 && laneCount < recordCount)) {
        return failure(name, fmt::format("inconsistent counts: {} records and {} lanes in {} bytes",
                                         recordCount, laneCount, bodyBytes));
    }
    return p;
}

/// One array of the header.
ArrayInfo readArrayInfo(Reader& hr) {
    ArrayInfo a;
    a.name = hr.str("array name", 256);
    a.elementSize = static_cast<uint32_t>(hr.bounded("element size", 4096));
    a.length = hr.bounded("array length", uint64_t{1} << 48);
    uint8_t mode = hr.u8("array mode");
    std::optional<ArrayMode> known = arrayModeFromCode(mode);
    if (hr.ok() && !known) {
        hr.fail(fmt::format("unknown array mode {}", mode));
    }
    a.mode = known.value_or(ArrayMode::Read);
    uint64_t bits = hr.bounded("feasible places", (1u << kAllPlaces.size()) - 1);
    a.feasible = PlaceSet{};
    for (Place p : kAllPlaces) {
        if ((bits >> static_cast<unsigned>(p)) & 1u) {
            a.feasible.insert(p);
        }
    }
    uint8_t original = hr.u8("original place");
    if (hr.ok() && original >= kAllPlaces.size()) {
        hr.fail(fmt::format("unknown original place {}", original));
    }
    a.original = static_cast<Place>(original % kAllPlaces.size());
    a.dims = static_cast<uint32_t>(hr.bounded("dims", 2));
    a.rowLength = hr.bounded("row length", uint64_t{1} << 48);
    return a;
}

/// The variable header: kernel, grid, block, resources, arrays and traced blocks.
TraceHeader readHeaderFields(Reader& hr, uint64_t headerBytes) {
    TraceHeader h;
    h.kernel = hr.str("kernel name", 256);
    const size_t gridAt = hr.position();
    h.grid.x = static_cast<uint32_t>(hr.bounded("grid.x", UINT32_MAX));
    h.grid.y = static_cast<uint32_t>(hr.bounded("grid.y", UINT32_MAX));
    h.grid.z = static_cast<uint32_t>(hr.bounded("grid.z", UINT32_MAX));
    if (hr.ok() && h.grid.count() > (uint64_t{1} << 32)) {
        // The product wraps 64 bits for 2^31 x 2^31 x 4: check it here, with the offset.
        hr.failAt(gridAt, fmt::format("grid {}x{}x{} has more than 2^32 blocks", h.grid.x, h.grid.y,
                                      h.grid.z));
    }
    const size_t blockAt = hr.position();
    h.block.x = static_cast<uint32_t>(hr.bounded("block.x", 4096));
    h.block.y = static_cast<uint32_t>(hr.bounded("block.y", 4096));
    h.block.z = static_cast<uint32_t>(hr.bounded("block.z", 4096));
    if (hr.ok() && h.block.count() > 4096) {
        hr.failAt(blockAt, fmt::format("block {}x{}x{} has more than 4096 threads", h.block.x,
                                       h.block.y, h.block.z));
    }
    uint8_t known = hr.u8("known-fields byte");
    if (hr.ok() && (known & ~3u) != 0) {
        hr.fail(fmt::format("unknown known-fields bits {:#x}", known));
    }
    if ((known & 1u) != 0) {
        h.registersPerThread = static_cast<uint32_t>(hr.bounded("registers", 1024));
    }
    if ((known & 2u) != 0) {
        h.sharedPerBlock = hr.bounded("shared bytes", uint64_t{1} << 30);
    }
    uint64_t arrays = hr.bounded("array count", 65535);
    for (uint64_t i = 0; i < arrays && hr.ok(); ++i) {
        h.arrays.push_back(readArrayInfo(hr));
    }
    uint64_t traced = hr.bounded("traced block count", UINT32_MAX);
    if (hr.ok() && traced > headerBytes) {
        hr.fail(fmt::format("traced block count {} exceeds the header's size", traced));
    }
    uint64_t block = 0;
    for (uint64_t i = 0; i < traced && hr.ok(); ++i) {
        uint64_t v = hr.bounded("traced block", UINT32_MAX);
        if (i > 0 && v == 0 && hr.ok()) {
            hr.fail("traced blocks must ascend");
        }
        block = i == 0 ? v : block + v;
        if (block > UINT32_MAX && hr.ok()) {
            hr.fail("traced block id exceeds 32 bits");
        }
        h.tracedBlocks.add(static_cast<uint32_t>(block));
    }
    if (hr.ok() && !hr.atEnd()) {
        hr.fail("unexpected bytes at the end of the header");
    }
    return h;
}

/// The records, delta-coded per array, into `builder`; errors stay in `br`.
void readRecords(Reader& br, TraceBuilder& builder, size_t narrays, const Prefix& p) {
    const uint64_t recordCount = p.recordCount;
    const uint64_t laneCount = p.laneCount;
    std::vector<int64_t> prevFirst(narrays, 0);
    int64_t lanes[32];
    uint64_t lanesSeen = 0;
    for (uint64_t i = 0; i < recordCount && br.ok(); ++i) {
        auto blk = static_cast<uint32_t>(br.bounded("record block", UINT32_MAX));
        auto warp = static_cast<uint32_t>(br.bounded("record warp", 4096 / 32));
        auto site = static_cast<uint32_t>(br.bounded("record site", UINT32_MAX));
        auto arr = static_cast<uint16_t>(br.bounded("record array", 65535));
        uint8_t kind = br.u8("record kind");
        uint32_t mask = br.u32("record mask");
        if (!br.ok()) {
            break;
        }
        if (kind > 2) {
            br.fail(fmt::format("record {}: unknown access kind {}", i, kind));
            break;
        }
        if (arr >= narrays) {
            br.fail(fmt::format("record {}: array index {} but the header declares {} arrays", i,
                                arr, narrays));
            break;
        }
        if (mask == 0) {
            br.fail(fmt::format("record {}: no active lane", i));
            break;
        }
        auto n = static_cast<unsigned>(std::popcount(mask));
        lanesSeen += n;
        if (lanesSeen > laneCount) {
            br.fail(fmt::format("record {}: more lanes than the {} the header announces", i,
                                laneCount));
            break;
        }
        int64_t prev = prevFirst[arr];
        for (unsigned l = 0; l < n; ++l) {
            int64_t delta = br.zigzag("lane offset");
            // Wrapping arithmetic: a corrupt delta gives a wrong offset, which finish() rejects.
            prev = static_cast<int64_t>(static_cast<uint64_t>(prev) + static_cast<uint64_t>(delta));
            lanes[l] = prev;
        }
        if (!br.ok()) {
            break;
        }
        prevFirst[arr] = lanes[0];
        builder.add(blk, warp, site, arr, static_cast<AccessKind>(kind), mask,
                    std::span<const int64_t>(lanes, n));
    }
    if (br.ok() && lanesSeen != laneCount) {
        br.fail(fmt::format("{} lanes read, the header announces {}", lanesSeen, laneCount));
    }
    if (br.ok() && !br.atEnd()) {
        br.fail("unexpected bytes after the last record");
    }
}

} // namespace

uint32_t crc32(std::string_view bytes, uint32_t crc) {
    static const std::array<uint32_t, 256> kTable = makeCrcTable();
    crc = ~crc;
    for (char ch : bytes) {
        crc = kTable[(crc ^ static_cast<uint8_t>(ch)) & 0xffu] ^ (crc >> 8);
    }
    return ~crc;
}

std::string writeBinary(const Trace& t) {
    const TraceHeader& h = t.header();
    Writer hw;
    hw.str(h.kernel);
    for (uint32_t v : {h.grid.x, h.grid.y, h.grid.z, h.block.x, h.block.y, h.block.z}) {
        hw.varint(v);
    }
    hw.u8(static_cast<uint8_t>((h.registersPerThread ? 1 : 0) | (h.sharedPerBlock ? 2 : 0)));
    if (h.registersPerThread) {
        hw.varint(*h.registersPerThread);
    }
    if (h.sharedPerBlock) {
        hw.varint(*h.sharedPerBlock);
    }
    hw.varint(h.arrays.size());
    for (const auto& a : h.arrays) {
        hw.str(a.name);
        hw.varint(a.elementSize);
        hw.varint(a.length);
        hw.u8(arrayModeCode(a.mode));
        hw.varint(a.feasible.bits());
        hw.u8(static_cast<uint8_t>(a.original));
        hw.varint(a.dims);
        hw.varint(a.rowLength);
    }
    hw.varint(h.tracedBlocks.size());
    uint32_t prevBlock = 0;
    bool firstBlock = true;
    for (const auto& r : h.tracedBlocks.ranges()) {
        for (uint64_t b = r.first; b <= r.last; ++b) {
            hw.varint(firstBlock ? b : b - prevBlock);
            prevBlock = static_cast<uint32_t>(b);
            firstBlock = false;
        }
    }

    Writer bw;
    bw.data().reserve(t.records().size() * 10 + t.laneCount() * 2);
    std::vector<int64_t> prevFirst(h.arrays.size(), 0);
    for (const Record& r : t.records()) {
        bw.varint(r.block);
        bw.varint(r.warp);
        bw.varint(r.site);
        bw.varint(r.array);
        bw.u8(static_cast<uint8_t>(r.kind));
        bw.u32(r.mask);
        auto lanes = t.lanes(r);
        int64_t prev = prevFirst[r.array];
        for (size_t l = 0; l < lanes.size(); ++l) {
            bw.zigzag(lanes[l] - prev);
            prev = lanes[l];
            if (l == 0) {
                prevFirst[r.array] = lanes[0];
            }
        }
    }

    Writer out;
    out.bytes(kBinaryMagic);
    out.u16(kBinaryVersionMajor);
    out.u16(kBinaryVersionMinor);
    out.u32(0);
    out.u64(hw.data().size());
    out.u64(t.records().size());
    out.u64(t.laneCount());
    out.u64(bw.data().size());
    out.bytes(hw.data());
    out.bytes(bw.data());
    uint32_t crc = crc32(out.data());
    out.u32(crc);
    return std::move(out.data());
}

Expected<Trace> readBinary(std::string_view b, std::string_view name) {
    auto prefix = readPrefix(b, name);
    if (!prefix) {
        return std::move(prefix).takeFailure();
    }
    const Prefix& p = *prefix;
    Reader hr(b.substr(kPrefixBytes, p.headerBytes), kPrefixBytes);
    TraceHeader h = readHeaderFields(hr, p.headerBytes);
    if (!hr.ok()) {
        return failure(name, "header: " + hr.error());
    }
    DiagnosticList hd = checkHeader(h, name);
    if (hd.hasErrors()) {
        return Failure{std::move(hd)};
    }

    const size_t narrays = h.arrays.size();
    TraceBuilder builder(std::move(h));
    Reader br(b.substr(kPrefixBytes + p.headerBytes, p.bodyBytes), kPrefixBytes + p.headerBytes);
    readRecords(br, builder, narrays, p);
    if (!br.ok()) {
        return failure(name, "body: " + br.error());
    }
    return std::move(builder).finish(name);
}

} // namespace memplace::trace

// Traces: the builder's checks, the text and binary forms (round trips, every error a reader
// must catch), the PORPLE importer and the bundled examples.
#include "trace/synth.h"
#include "trace/trace_io.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

namespace memplace::trace {
namespace {

TraceHeader smallHeader() {
    TraceHeader h;
    h.kernel = "k";
    h.grid = {4, 1, 1};
    h.block = {64, 1, 1};
    ArrayInfo a;
    a.name = "a";
    a.elementSize = 4;
    a.length = 256;
    a.mode = ArrayMode::ReadWrite;
    h.arrays.push_back(a);
    ArrayInfo b = a;
    b.name = "b";
    b.elementSize = 8;
    b.mode = ArrayMode::Read;
    b.feasible = {Place::Global, Place::Texture};
    b.original = Place::Texture;
    b.dims = 2;
    b.rowLength = 16;
    h.arrays.push_back(b);
    h.registersPerThread = 40;
    h.sharedPerBlock = 1024;
    return h;
}

Trace smallTrace() {
    TraceBuilder b(smallHeader());
    std::vector<int64_t> lanes(32);
    for (int i = 0; i < 32; ++i) {
        lanes[i] = i;
    }
    // Warps interleaved on purpose: finish() groups them, keeping each warp's order.
    b.add(1, 0, 0, 0, AccessKind::Read, 0xffffffffu, lanes);
    b.add(0, 1, 0, 0, AccessKind::Read, 0xffffffffu, lanes);
    std::vector<int64_t> three = {7, 7, 200};
    b.add(0, 1, 1, 1, AccessKind::Read, 0x80000101u, three);
    b.add(1, 0, 2, 0, AccessKind::Write, 0xffffffffu, lanes);
    b.add(0, 0, 3, 0, AccessKind::Atomic, 0x1u, std::vector<int64_t>{255});
    auto t = std::move(b).finish();
    EXPECT_TRUE(t.ok()) << t.message();
    return *t;
}

void expectSame(const Trace& a, const Trace& b) {
    EXPECT_EQ(a.header(), b.header());
    ASSERT_EQ(a.records().size(), b.records().size());
    for (size_t i = 0; i < a.records().size(); ++i) {
        const Record& x = a.records()[i];
        const Record& y = b.records()[i];
        EXPECT_EQ(x.block, y.block);
        EXPECT_EQ(x.warp, y.warp);
        EXPECT_EQ(x.site, y.site);
        EXPECT_EQ(x.array, y.array);
        EXPECT_EQ(x.kind, y.kind);
        EXPECT_EQ(x.mask, y.mask);
        auto la = a.lanes(x);
        auto lb = b.lanes(y);
        EXPECT_TRUE(std::equal(la.begin(), la.end(), lb.begin(), lb.end())) << "record " << i;
    }
}

TEST(TraceBuilder, GroupsByWarpAndKeepsProgramOrder) {
    Trace t = smallTrace();
    ASSERT_EQ(t.records().size(), 5u);
    // (0,0) atomic; (0,1) read a, read b; (1,0) read, write.
    EXPECT_EQ(t.records()[0].block, 0u);
    EXPECT_EQ(t.records()[0].kind, AccessKind::Atomic);
    EXPECT_EQ(t.records()[1].warp, 1u);
    EXPECT_EQ(t.records()[1].site, 0u);
    EXPECT_EQ(t.records()[2].site, 1u);
    EXPECT_EQ(t.records()[3].block, 1u);
    EXPECT_EQ(t.records()[3].kind, AccessKind::Read);
    EXPECT_EQ(t.records()[4].kind, AccessKind::Write);
    auto lanes = t.lanes(t.records()[2]);
    ASSERT_EQ(lanes.size(), 3u);
    EXPECT_EQ(lanes[2], 200);
    EXPECT_EQ(t.laneCount(), 32u * 3 + 3 + 1);
    auto ranges = t.warpRanges();
    ASSERT_EQ(ranges.size(), 3u);
    EXPECT_EQ(ranges[1].begin, 1u);
    EXPECT_EQ(ranges[1].end, 3u);
}

TEST(TraceBuilder, AddLanesTakesActiveLanesOnly) {
    TraceBuilder b(smallHeader());
    int64_t lanes[32];
    for (int i = 0; i < 32; ++i) {
        lanes[i] = 1000 + i; // inactive lanes hold garbage
    }
    lanes[3] = 3;
    lanes[31] = 31;
    b.addLanes(0, 0, 0, 0, AccessKind::Read, (1u << 3) | (1u << 31), lanes);
    auto t = std::move(b).finish();
    ASSERT_TRUE(t.ok()) << t.message();
    auto l = t->lanes(t->records()[0]);
    ASSERT_EQ(l.size(), 2u);
    EXPECT_EQ(l[0], 3);
    EXPECT_EQ(l[1], 31);
}

TEST(TraceBuilder, RejectsBadRecords) {
    struct Case {
        const char* what;
        uint32_t block, warp;
        uint16_t array;
        AccessKind kind;
        uint32_t mask;
        std::vector<int64_t> offsets;
        const char* message;
    };
    std::vector<Case> cases = {
        {"array index", 0, 0, 7, AccessKind::Read, 1, {0}, "array index 7"},
        {"offset", 0, 0, 0, AccessKind::Read, 1, {256}, "offset 256 outside array 'a'"},
        {"negative", 0, 0, 0, AccessKind::Read, 1, {-1}, "offset -1"},
        {"block", 4, 0, 0, AccessKind::Read, 1, {0}, "block 4 outside the grid"},
        {"warp", 0, 2, 0, AccessKind::Read, 1, {0}, "warp 2 but a block has 2 warps"},
        {"mask", 0, 0, 0, AccessKind::Read, 3, {0}, "2 active lanes but 1 offsets"},
        {"empty mask", 0, 0, 0, AccessKind::Read, 0, {}, "no active lane"},
        {"write to read-only", 0, 0, 1, AccessKind::Write, 1, {0}, "declared read-only"},
    };
    for (const auto& c : cases) {
        TraceBuilder b(smallHeader());
        b.add(c.block, c.warp, 0, c.array, c.kind, c.mask, c.offsets);
        auto t = std::move(b).finish("x.trace");
        ASSERT_FALSE(t.ok()) << c.what;
        EXPECT_NE(t.message().find(c.message), std::string::npos) << c.what << ": " << t.message();
        EXPECT_NE(t.message().find("x.trace"), std::string::npos) << c.what;
    }
    TraceHeader h = smallHeader();
    h.tracedBlocks = {0, 2};
    TraceBuilder b(h);
    b.add(1, 0, 0, 0, AccessKind::Read, 1, std::vector<int64_t>{0});
    auto t = std::move(b).finish();
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.message().find("not among the traced blocks"), std::string::npos) << t.message();
}

TEST(TraceHeader, Checks) {
    auto bad = [](auto mutate, const char* message) {
        TraceHeader h = smallHeader();
        mutate(h);
        auto d = checkHeader(h, "h");
        EXPECT_TRUE(d.hasErrors()) << message;
        EXPECT_NE(d.format().find(message), std::string::npos) << d.format();
    };
    bad([](TraceHeader& h) { h.kernel = "two words"; }, "invalid kernel name");
    bad([](TraceHeader& h) { h.grid.y = 0; }, "contain a zero");
    bad([](TraceHeader& h) { h.block = {64, 64, 2}; }, "exceed 4096");
    bad([](TraceHeader& h) { h.arrays[1].name = "a"; }, "declared twice");
    bad([](TraceHeader& h) { h.arrays[0].elementSize = 0; }, "element size 0");
    bad([](TraceHeader& h) { h.arrays[0].length = 0; }, "length 0");
    bad([](TraceHeader& h) { h.arrays[1].rowLength = 0; }, "needs a row length");
    bad([](TraceHeader& h) { h.tracedBlocks = {2, 1}; }, "ascending");
    bad([](TraceHeader& h) { h.tracedBlocks = {9}; }, "outside the grid");
    EXPECT_FALSE(checkHeader(smallHeader(), "h").hasErrors());
    EXPECT_DOUBLE_EQ(smallHeader().scale(), 1.0);
    TraceHeader h = smallHeader();
    h.tracedBlocks = {0};
    EXPECT_DOUBLE_EQ(h.scale(), 4.0);
    EXPECT_TRUE(h.sampled());
}

TEST(TraceText, RoundTrip) {
    Trace t = smallTrace();
    std::string text = writeText(t);
    EXPECT_NE(text.find("r 1 0 0 a * 0..31"), std::string::npos) << text;
    EXPECT_NE(text.find("0x80000101 7 7 200"), std::string::npos) << text;
    EXPECT_NE(text.find("places=global,texture original=texture dims=2 row=16"), std::string::npos)
        << text;
    auto back = parseText(text, "t.trace");
    ASSERT_TRUE(back.ok()) << back.message();
    expectSame(t, *back);
    EXPECT_EQ(writeText(*back), text);
}

TEST(TraceText, OffsetForms) {
    std::string text = "memplace-trace 1\nkernel k\ngrid 1\nblock 32\n"
                       "array a elem=4 length=100 mode=read\n"
                       "r 0 0 0 a * 0..3 10..16:2 5x3 99 # comment\n"
                       "r 0 0 0 a 0x00000003 9..7:-2\n";
    auto t = parseText(text, "f");
    ASSERT_TRUE(t.ok()) << t.message();
    auto l = t->lanes(t->records()[0]);
    std::vector<int64_t> want = {0, 1, 2, 3, 10, 12, 14, 16, 5, 5, 5, 99};
    EXPECT_EQ(std::vector<int64_t>(l.begin(), l.end()), want);
    auto m = t->lanes(t->records()[1]);
    EXPECT_EQ(std::vector<int64_t>(m.begin(), m.end()), (std::vector<int64_t>{9, 7}));
}

TEST(TraceText, ErrorsHaveLineAndColumn) {
    const std::string head = "memplace-trace 1\nkernel k\ngrid 2\nblock 32\n"
                             "array a elem=4 length=64 mode=read\n";
    struct Case {
        std::string text;
        std::string message;
    };
    std::vector<Case> cases = {
        {"", "empty file"},
        {"memplace-trace 2\n", "f:1:16: error: unsupported text trace version"},
        {"hello\n", "f:1:1: error: expected 'memplace-trace 1'"},
        {head + "r 0 0 0 b * 0\n", "f:6:9: error: unknown array 'b'"},
        {head + "r 0 0 0 a * 64\n", "f:6:13: error: offset 64 outside array 'a'"},
        {head + "r 2 0 0 a * 1\n", "f:6:3: error: block 2 outside the grid"},
        {head + "r 0 1 0 a * 1\n", "f:6:5: error: warp 1 but a block has 1 warps"},
        {head + "r 0 0 0 a 0x3 1\n", "mask 0x3 has 2 active lanes but 1 offsets"},
        {head + "r 0 0 0 a * 0..40\n", "more than 32 offsets"},
        {head + "r 0 0 0 a * 4..1\n", "expected an offset"},
        {head + "r 0 0 0 a * x\n", "expected an offset"},
        {head + "q 0 0 0 a * 1\n", "unknown line 'q'"},
        {head + "r 0 0\n", "a record is: KIND BLOCK WARP SITE ARRAY MASK OFFSETS"},
        {head + "r 0 0 0 a * 1\narray c elem=4 length=1 mode=read\n",
         "'array' must come before the first record"},
        {"memplace-trace 1\nkernel k\nr 0 0 0 a * 1\n", "must follow the kernel, grid and block"},
        {"memplace-trace 1\nkernel k\ngrid 1\nblock 32\narray a elem=4 mode=read\nr 0 0 0 a * 0\n",
         "needs elem=, length= and mode="},
        {"memplace-trace 1\nkernel k\ngrid 1\nblock 32\narray a elem=4 length=4 mode=rw\n",
         "invalid value 'rw' for array field 'mode'"},
        {"memplace-trace 1\nkernel k\ngrid 1\nblock 32\narray a elem=4 length=4 mode=read "
         "places=global,fast\n",
         "invalid value"},
    };
    for (const auto& c : cases) {
        auto t = parseText(c.text, "f");
        ASSERT_FALSE(t.ok()) << c.text;
        EXPECT_NE(t.message().find(c.message), std::string::npos) << c.text << "\n" << t.message();
    }
}

TEST(TraceBinary, RoundTripAndCompactness) {
    Trace t = smallTrace();
    std::string bytes = writeBinary(t);
    EXPECT_EQ(bytes.substr(0, 8), std::string(kBinaryMagic));
    auto back = readBinary(bytes, "t.bin");
    ASSERT_TRUE(back.ok()) << back.message();
    expectSame(t, *back);
    // Coalesced lanes take one byte each.
    auto big = synth::saxpy();
    ASSERT_TRUE(big.ok());
    std::string b2 = writeBinary(*big);
    EXPECT_LT(b2.size(), big->laneCount() * 3 / 2);
    auto back2 = readBinary(b2, "saxpy.bin");
    ASSERT_TRUE(back2.ok()) << back2.message();
    expectSame(*big, *back2);
}

TEST(TraceBinary, EveryTruncationIsAnError) {
    std::string bytes = writeBinary(smallTrace());
    for (size_t n = 0; n < bytes.size(); ++n) {
        auto t = readBinary(std::string_view(bytes).substr(0, n), "cut");
        ASSERT_FALSE(t.ok()) << "truncated to " << n;
        EXPECT_FALSE(t.message().empty());
    }
}

TEST(TraceBinary, CorruptionIsDetected) {
    const std::string good = writeBinary(smallTrace());
    // Every single-byte change is caught (magic, version, sizes or checksum).
    for (size_t i = 0; i < good.size(); ++i) {
        std::string bad = good;
        bad[i] = static_cast<char>(bad[i] ^ 0x5a);
        auto t = readBinary(bad, "flip");
        EXPECT_FALSE(t.ok()) << "byte " << i;
    }
    // With the checksum recomputed, the structural checks still reject nonsense and nothing
    // crashes: mutate header and body bytes at random.
    std::mt19937 rng(42);
    size_t rejected = 0;
    for (int trial = 0; trial < 2000; ++trial) {
        std::string bad = good;
        size_t at = 48 + rng() % (bad.size() - 52);
        bad[at] = static_cast<char>(rng());
        uint32_t crc = crc32(std::string_view(bad).substr(0, bad.size() - 4));
        for (int k = 0; k < 4; ++k) {
            bad[bad.size() - 4 + k] = static_cast<char>((crc >> (8 * k)) & 0xff);
        }
        auto t = readBinary(bad, "mut");
        rejected += t.ok() ? 0 : 1;
    }
    EXPECT_GT(rejected, 0u);
    // Specific messages.
    EXPECT_NE(readBinary("MPTRACE", "x").message().find("bad magic"), std::string::npos);
    std::string v2 = good;
    v2[8] = 2;
    EXPECT_NE(readBinary(v2, "x").message().find("unsupported version 2.0"), std::string::npos);
    std::string crc = good;
    crc[good.size() - 1] = static_cast<char>(crc[good.size() - 1] ^ 1);
    EXPECT_NE(readBinary(crc, "x").message().find("checksum mismatch"), std::string::npos);
    EXPECT_NE(readBinary(good + "x", "x").message().find("after the end of the trace"),
              std::string::npos);
    EXPECT_NE(readBinary(good.substr(0, good.size() - 9), "x").message().find("truncated"),
              std::string::npos);
}

TEST(TraceFormat, Detection) {
    EXPECT_EQ(detectTraceFormat(writeBinary(smallTrace())), TraceFormat::Binary);
    EXPECT_EQ(detectTraceFormat("# c\nmemplace-trace 1\n"), TraceFormat::Text);
    EXPECT_EQ(detectTraceFormat("dimension 1 1\n"), TraceFormat::Porple);
    EXPECT_FALSE(detectTraceFormat("nothing").has_value());
}

TEST(Porple, ImportGroupsLanesIntoWarps) {
    // Two arrays; array 0 read by threads 0..63 (two warps), array 1 written by thread 5 and 40.
    std::string text = "dimension 1 2\nsizeof 4 8\nblock_X 1 16\nblock_Y 1 4\narray_size 100 64\n";
    for (int th = 0; th < 64; ++th) {
        text += "0 0 3 0 " + std::to_string(th) + " " + std::to_string(th) + "\n";
    }
    text += "1 1 0 0 5 17\n1 1 0 0 40 18\n0 0 3 1 0 99\n";
    auto t = importPorple(text, "p.txt");
    ASSERT_TRUE(t.ok()) << t.message();
    const auto& h = t->header();
    EXPECT_EQ(h.block.x, 64u);
    EXPECT_EQ(h.grid.x, 1u);
    ASSERT_EQ(h.arrays.size(), 2u);
    EXPECT_EQ(h.arrays[0].mode, ArrayMode::Read);
    EXPECT_EQ(h.arrays[1].mode, ArrayMode::Write);
    EXPECT_EQ(h.arrays[1].dims, 2u);
    EXPECT_EQ(h.arrays[1].rowLength, 16u);
    EXPECT_EQ(h.arrays[1].elementSize, 8u);
    // Warp 0: array 0 (32 lanes), array 1 (lane 5), array 0 loop 1 (lane 0); warp 1: array 0,
    // array 1 (lane 8).
    ASSERT_EQ(t->records().size(), 5u);
    EXPECT_EQ(t->records()[0].lanes, 32u);
    EXPECT_EQ(t->records()[1].mask, 1u << 5);
    EXPECT_EQ(t->lanes(t->records()[2])[0], 99);
    EXPECT_EQ(t->records()[3].warp, 1u);
    EXPECT_EQ(t->records()[4].mask, 1u << 8);
    EXPECT_EQ(t->records()[4].kind, AccessKind::Write);

    auto e1 = importPorple("sizeof 4\narray_size 10\n0 0 0 0 0\n", "p");
    ASSERT_FALSE(e1.ok());
    EXPECT_NE(e1.message().find("p:3:1: error: expected 6 columns"), std::string::npos)
        << e1.message();
    auto e2 = importPorple("dimension 1\nsizeof 4\narray_size 10\n0 0 0 0 0 10\n", "p");
    ASSERT_FALSE(e2.ok());
    EXPECT_NE(e2.message().find("index 10 outside array 0"), std::string::npos) << e2.message();
    auto e3 = importPorple("dimension 1\nsizeof 4 4\narray_size 10\n", "p");
    ASSERT_FALSE(e3.ok());
    EXPECT_NE(e3.message().find("'sizeof' has 2 columns"), std::string::npos) << e3.message();
}

TEST(Examples, BundledTracesParseAndMatchTheGenerators) {
    const std::filesystem::path dir =
        std::filesystem::path(MEMPLACE_SOURCE_DIR) / "examples/traces";
    size_t found = 0;
    for (const auto& k : synth::exampleKernels()) {
        auto path = dir / (std::string(k.name) + ".trace");
        auto t = loadTrace(path);
        ASSERT_TRUE(t.ok()) << t.message();
        auto g = k.make({});
        ASSERT_TRUE(g.ok()) << g.message();
        expectSame(*g, *t);
        ++found;
    }
    EXPECT_GE(found, 6u);
}

} // namespace
} // namespace memplace::trace

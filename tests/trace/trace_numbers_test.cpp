// Every number of a trace header has a range, and no input costs more memory or time than its
// size justifies (issue 30): traced ranges stay ranges, grid products are checked, many arrays
// load in linear time, PORPLE thread ids keep their 64 bits. Large inputs are generated here.
#include "tests/common/time_budget.h"
#include "trace/trace_io.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <sys/resource.h>

namespace memplace::trace {
namespace {

long peakRssKb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

std::string textHead(const std::string& grid, const std::string& traced) {
    return fmt::format("memplace-trace 1\nkernel k\ngrid {}\nblock 32\ntraced {}\n"
                       "array a elem=4 length=64 mode=read\n",
                       grid, traced);
}

// A 20-byte `traced` line once expanded to one 4-byte entry per block: 4-8 GB for 2^30 blocks.
TEST(TraceNumbers, TracedRangesAreNotExpanded) {
    const long before = peakRssKb();
    // 2^28 blocks: 1 GB if expanded (the 2^30 of the report would take 4 GB in this test).
    auto t = parseText(textHead("268435456", "0-268435455") + "r 5 0 0 a * 1\n", "t");
    ASSERT_TRUE(t.ok()) << t.message();
    EXPECT_EQ(t->header().tracedBlockCount(), uint64_t{1} << 28);
    EXPECT_LT(peakRssKb() - before, 100 * 1024) << "KB of peak memory for a 20-byte line";

    // The largest grid, every block but the last traced, the traced ranges written back as is.
    auto big = parseText(textHead("65536 65536", "0-4294967294") + "r 4294967294 0 0 a * 1\n", "t");
    ASSERT_TRUE(big.ok()) << big.message();
    EXPECT_EQ(big->header().tracedBlockCount(), 4294967295u);
    EXPECT_EQ(big->header().tracedBlocks.ranges().size(), 1u);
    EXPECT_NE(writeText(*big).find("traced 0-4294967294\n"), std::string::npos);
    EXPECT_LT(peakRssKb() - before, 100 * 1024);

    // Ranges that cover the grid mean every block: `traced all`, one byte in the binary form.
    auto all = parseText(textHead("65536 65536", "0-4294967295") + "r 7 0 0 a * 1\n", "t");
    ASSERT_TRUE(all.ok()) << all.message();
    EXPECT_TRUE(all->header().tracedBlocks.empty());
    EXPECT_LT(writeBinary(*all).size(), 200u);
}

TEST(TraceNumbers, TracedRangesAreChecked) {
    auto outside = parseText(textHead("8", "0-3 5-8") + "r 0 0 0 a * 1\n", "t");
    ASSERT_FALSE(outside.ok());
    EXPECT_NE(outside.message().find("t:5:12: error: traced block 8 is outside the grid of 8"),
              std::string::npos)
        << outside.message();
    auto overlap = parseText(textHead("8", "0-3 3-5") + "r 0 0 0 a * 1\n", "t");
    ASSERT_FALSE(overlap.ok());
    EXPECT_NE(overlap.message().find("t:5:12: error: traced blocks must be listed in ascending"),
              std::string::npos)
        << overlap.message();
    // A record of an untraced block, between two ranges.
    auto untraced = parseText(textHead("8", "0-3 5-7") + "r 4 0 0 a * 1\n", "t");
    ASSERT_FALSE(untraced.ok());
    EXPECT_NE(untraced.message().find("block 4 is not among the traced blocks"), std::string::npos)
        << untraced.message();
    auto ok = parseText(textHead("8", "0-3 5-7") + "r 7 0 0 a * 1\n", "t");
    ASSERT_TRUE(ok.ok()) << ok.message();
    EXPECT_EQ(ok->header().tracedBlockCount(), 7u);
}

TEST(TraceNumbers, BlockSetKeepsRanges) {
    BlockSet s{0, 1, 2, 5, 7, 8};
    EXPECT_EQ(s.size(), 6u);
    ASSERT_EQ(s.ranges().size(), 3u);
    EXPECT_EQ(s.ranges()[0], (BlockSet::Range{0, 2}));
    EXPECT_EQ(s.ranges()[2], (BlockSet::Range{7, 8}));
    EXPECT_TRUE(s.contains(1));
    EXPECT_FALSE(s.contains(3));
    EXPECT_TRUE(s.contains(8));
    EXPECT_FALSE(s.contains(9));
    EXPECT_TRUE(s.ascending());
    EXPECT_EQ(s.ids(), (std::vector<uint32_t>{0, 1, 2, 5, 7, 8}));
    BlockSet r;
    r.addRange(0, UINT32_MAX);
    EXPECT_EQ(r.size(), uint64_t{1} << 32);
    EXPECT_FALSE((BlockSet{3, 2}).ascending());
}

// 2^31 x 2^31 x 4 wrapped to 0 blocks: the trace was modelled with -nan costs.
TEST(TraceNumbers, GridProductsAreChecked) {
    Dim3 wraps{1u << 31, 1u << 31, 4};
    EXPECT_EQ(wraps.count(), UINT64_MAX);
    TraceHeader h;
    h.kernel = "k";
    h.grid = wraps;
    h.block = {32, 1, 1};
    h.arrays.push_back({.name = "a", .elementSize = 4, .length = 64});
    EXPECT_TRUE(checkHeader(h, "h").hasErrors());
    EXPECT_FALSE(TraceBuilder(h).finish().ok());

    auto text = parseText(textHead("2147483648 2147483648 4", "all") + "r 0 0 0 a * 1\n", "t");
    ASSERT_FALSE(text.ok());
    EXPECT_NE(text.message().find("t:3:6: error: grid 2147483648x2147483648x4 has more than "
                                  "4294967296 blocks"),
              std::string::npos)
        << text.message();
    auto block = parseText("memplace-trace 1\nkernel k\ngrid 1\nblock 64 64 2\n", "t");
    ASSERT_FALSE(block.ok());
    EXPECT_NE(block.message().find("t:4:7: error: block 64x64x2 has more than 4096 threads"),
              std::string::npos)
        << block.message();

    // The binary reader names the grid's byte offset: patch a valid trace's grid varints.
    TraceHeader small;
    small.kernel = "k";
    small.grid = {1, 1, 1};
    small.block = {32, 1, 1};
    small.arrays.push_back({.name = "a", .elementSize = 4, .length = 64});
    auto t = TraceBuilder(small).finish();
    ASSERT_TRUE(t.ok()) << t.message();
    std::string bin = writeBinary(*t);
    // Header at 48: kernel "k" (2 bytes), then grid x, y, z (one byte each for 1).
    ASSERT_EQ(bin.substr(48, 5), std::string("\x01k\x01\x01\x01", 5));
    const std::string grid31 = "\x80\x80\x80\x80\x08"; // 2^31 as a varint
    std::string patched = bin.substr(0, 50) + grid31 + grid31 + "\x04" + bin.substr(53);
    uint64_t headerBytes = 0;
    for (int i = 0; i < 8; ++i) {
        headerBytes |= uint64_t{static_cast<uint8_t>(bin[16 + i])} << (8 * i);
    }
    headerBytes += 8;
    for (int i = 0; i < 8; ++i) {
        patched[16 + i] = static_cast<char>((headerBytes >> (8 * i)) & 0xff);
    }
    patched.resize(patched.size() - 4);
    uint32_t crc = crc32(patched);
    for (int k = 0; k < 4; ++k) {
        patched += static_cast<char>((crc >> (8 * k)) & 0xff);
    }
    auto b = readBinary(patched, "b");
    ASSERT_FALSE(b.ok());
    EXPECT_NE(b.message().find("byte 50: grid 2147483648x2147483648x4 has more than 2^32 blocks"),
              std::string::npos)
        << b.message();
}

TEST(TraceNumbers, HeaderNumbersNameTheLine) {
    const std::string head = "memplace-trace 1\nkernel k\ngrid 1\nblock 32\n";
    struct Case {
        std::string lines;
        std::string message;
    };
    const Case cases[] = {
        {"registers 0\n", "t:5:11: error: expected a register count in 1..1024, found '0'"},
        {"registers 5000\n", "t:5:11: error: expected a register count in 1..1024"},
        {"shared 2000000000\n", "t:5:8: error: expected bytes of shared memory, at most 2^30"},
        {"array a elem=0 length=1 mode=read\n",
         "t:5:9: error: invalid value '0' for array field 'elem' (bytes, 1..4096)"},
        {"array a elem=8192 length=1 mode=read\n", "t:5:9: error: invalid value '8192'"},
        {"array a elem=4 length=0 mode=read\n",
         "t:5:16: error: invalid value '0' for array field 'length' (elements, 1..2^48)"},
        {"array a elem=4 length=281474976710657 mode=read\n", "t:5:16: error: invalid value"},
        {"array a elem=4 length=8 mode=read dims=3\n",
         "t:5:35: error: invalid value '3' for array field 'dims' (1 or 2)"},
        {"array a elem=4 length=8 mode=read dims=2 row=9\n",
         "t:5:1: error: array 'a': a 2-D array needs a row length in 1..length"},
    };
    for (const auto& c : cases) {
        auto t = parseText(head + c.lines + "r 0 0 0 a * 1\n", "t");
        ASSERT_FALSE(t.ok()) << c.lines;
        EXPECT_NE(t.message().find(c.message), std::string::npos) << c.lines << t.message();
    }
}

// 65,535 arrays in a 2.5 MB trace took 12-21 s (a pairwise duplicate check, twice).
TEST(TraceNumbers, ManyArraysLoadInLinearTime) {
    std::string text = "memplace-trace 1\nkernel k\ngrid 1\nblock 32\n";
    for (int i = 0; i < 65535; ++i) {
        text += fmt::format("array a{} elem=4 length=1 mode=read\n", i);
    }
    std::string records;
    for (int i = 0; i < 65535; i += 4096) {
        records += fmt::format("r 0 0 0 a{} * 0\n", i);
    }
    auto start = std::chrono::steady_clock::now();
    auto t = parseText(text + records, "t");
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(t.ok()) << t.message();
    EXPECT_EQ(t->header().arrays.size(), 65535u);
    EXPECT_LT(seconds, test::timeBudget(3.0));

    auto tooMany = parseText(text + "array b elem=4 length=1 mode=read\n", "t");
    ASSERT_FALSE(tooMany.ok());
    EXPECT_NE(tooMany.message().find("t:65540:1: error: more than 65535 arrays"), std::string::npos)
        << tooMany.message().substr(0, 500);
    auto duplicate =
        parseText("memplace-trace 1\nkernel k\ngrid 1\nblock 32\narray a elem=4 length=1 "
                  "mode=read\narray a elem=4 length=1 mode=read\n",
                  "t");
    ASSERT_FALSE(duplicate.ok());
    EXPECT_NE(duplicate.message().find("t:6:7: error: array 'a' is declared twice"),
              std::string::npos)
        << duplicate.message();
}

// Thread ids above 2^32 were truncated to 32 bits: thread 2^32 + 37 landed in block 0.
TEST(TraceNumbers, PorpleThreadIdsKeepTheirBits) {
    const uint64_t thread = (uint64_t{1} << 32) + 37;
    std::string text = fmt::format("dimension 1\nsizeof 4\narray_size 10\n0 0 0 0 {} 3\n", thread);
    PorpleImportOptions o;
    o.threadsPerBlock = 1024;
    auto t = importPorple(text, "p", o);
    ASSERT_TRUE(t.ok()) << t.message();
    ASSERT_EQ(t->records().size(), 1u);
    EXPECT_EQ(t->records()[0].block, thread / 1024);
    EXPECT_EQ(t->records()[0].mask, 1u << (thread % 32));
    EXPECT_EQ(t->header().grid.x, thread / 1024 + 1);

    // More blocks than 32 bits hold: refused, with the thread id.
    o.threadsPerBlock = 32;
    auto many = importPorple(
        fmt::format("dimension 1\nsizeof 4\narray_size 10\n0 0 0 0 {} 3\n", (uint64_t{1} << 39)),
        "p", o);
    ASSERT_FALSE(many.ok());
    EXPECT_NE(many.message().find("thread id 549755813888"), std::string::npos) << many.message();
}

} // namespace
} // namespace memplace::trace

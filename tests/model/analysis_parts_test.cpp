// The analysis's parts on their own (lines_internal.h, stream_order_internal.h): the lines a warp
// request touches, repeats removed in order, and the stream orders of SM- and device-scoped
// caches.
#include "model/lines_internal.h"
#include "model/stream_order_internal.h"

#include <gtest/gtest.h>

#include <vector>

namespace memplace::model::detail {
namespace {

TEST(AnalysisLines, CoalescedLanesTouchOneLinePerEightFloats) {
    std::vector<int64_t> offs;
    for (int64_t i = 0; i < 32; ++i) {
        offs.push_back(i);
    }
    std::vector<uint64_t> lines;
    SmallSet set;
    EXPECT_EQ(linesOf(offs, 4, 32, shiftOf(32), lines, set), 4u);
    EXPECT_EQ(lines, (std::vector<uint64_t>{0, 1, 2, 3}));
}

TEST(AnalysisLines, ScatteredLanesKeepTheOrderOfFirstTouch) {
    const std::vector<int64_t> offs = {40, 0, 41, 8, 0, 16};
    std::vector<uint64_t> lines;
    SmallSet set;
    EXPECT_EQ(linesOf(offs, 4, 32, shiftOf(32), lines, set), 4u);
    EXPECT_EQ(lines, (std::vector<uint64_t>{5, 0, 1, 2}));
}

TEST(AnalysisLines, AnElementAcrossABoundaryTouchesBothLines) {
    // 12-byte elements and 32-byte lines: element 2 covers bytes 24..35.
    const std::vector<int64_t> offs = {2};
    std::vector<uint64_t> lines;
    SmallSet set;
    EXPECT_EQ(linesOf(offs, 12, 32, shiftOf(32), lines, set), 2u);
    EXPECT_EQ(lines, (std::vector<uint64_t>{0, 1}));
    EXPECT_EQ(shiftOf(48), -1);
}

TEST(AnalysisLines, DedupeKeepsFirstOccurrences) {
    std::vector<uint64_t> v = {7, 3, 7, 1, 3, 9};
    SmallSet set;
    dedupe(v, set);
    EXPECT_EQ(v, (std::vector<uint64_t>{7, 3, 1, 9}));
}

TEST(StreamOrder, BlocksGoToSmsRoundRobinAndResidentWarpsInterleave) {
    // Three blocks of two one-record warps: records 2b and 2b+1 are block b's.
    std::vector<BlockWarps> blocks;
    for (uint32_t b = 0; b < 3; ++b) {
        blocks.push_back({b, {{2 * b, 2 * b + 1}, {2 * b + 1, 2 * b + 2}}});
    }
    // Two SMs, one resident block each: SM 0 runs blocks 0 then 2, SM 1 block 1.
    const Order sm = smOrder(blocks, 2, 1);
    EXPECT_EQ(sm.idx, (std::vector<uint32_t>{0, 1, 4, 5, 2, 3}));
    EXPECT_EQ(sm.segmentEnd, (std::vector<size_t>{4, 6}));
    // The device stream takes one record of each SM in turn.
    const Order device = deviceOrder(sm);
    EXPECT_EQ(device.idx, (std::vector<uint32_t>{0, 2, 1, 3, 4, 5}));
    EXPECT_EQ(device.segmentEnd, (std::vector<size_t>{6}));
    // Block streams: one per block.
    const Order block = blockOrder(blocks);
    EXPECT_EQ(block.segmentEnd, (std::vector<size_t>{2, 4, 6}));
}

} // namespace
} // namespace memplace::model::detail

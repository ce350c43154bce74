#include "runtime/src/layout.h"

#include <gtest/gtest.h>

namespace memplace::detail {
namespace {

TEST(ConstantPool, PacksAligned) {
    const auto p = packConstantPool({{0, 10, 0, false}, {1, 100, 0, false}, {2, 4, 0, false}}, 256);
    ASSERT_EQ(p.size(), 3u);
    EXPECT_TRUE(p[0].fits);
    EXPECT_EQ(p[0].offset, 0u);
    EXPECT_EQ(p[1].offset, 16u);
    EXPECT_EQ(p[2].offset, 128u);
    EXPECT_TRUE(p[2].fits);
}

TEST(ConstantPool, WhatDoesNotFitTakesNoSpace) {
    const auto p =
        packConstantPool({{0, 60000, 0, false}, {1, 8000, 0, false}, {2, 5000, 0, false}}, 65536);
    EXPECT_TRUE(p[0].fits);
    EXPECT_FALSE(p[1].fits);
    EXPECT_TRUE(p[2].fits);
    EXPECT_EQ(p[2].offset, 60000u);
}

TEST(ConstantPool, ExactFitAndEmpty) {
    EXPECT_TRUE(packConstantPool({{0, 65536, 0, false}}, 65536)[0].fits);
    EXPECT_FALSE(packConstantPool({{0, 65537, 0, false}}, 65536)[0].fits);
    EXPECT_FALSE(packConstantPool({{0, 0, 0, false}}, 65536)[0].fits);
}

SharedSlot slot(int array, long long count, std::size_t elem, bool written) {
    SharedSlot s;
    s.array = array;
    s.count = count;
    s.elemSize = elem;
    s.written = written;
    return s;
}

TEST(SharedLayout, AfterTheProgramsOwnAndAligned) {
    const SharedLayout l =
        layoutShared(100, {slot(0, 10, 4, false), slot(1, 33, 4, true)}, 0, std::size_t{48} * 1024);
    ASSERT_EQ(l.slots.size(), 2u);
    EXPECT_EQ(l.slots[0].offset, 112u);             // 100 rounded up to 16
    EXPECT_EQ(l.slots[1].offset, 112u + 48u);       // 40 bytes rounded up to 48
    EXPECT_EQ(l.slots[1].dirtyOffset, 160u + 144u); // 132 bytes rounded up to 144
    EXPECT_EQ(l.totalBytes, 304u + 16u);            // two bitmap words rounded up to 16
    EXPECT_TRUE(l.dropped.empty());
}

TEST(SharedLayout, DropsTheLargestUntilItFits) {
    const SharedLayout l = layoutShared(
        0, {slot(0, 1000, 4, false), slot(1, 50000, 4, false), slot(2, 2000, 4, false)}, 1024,
        std::size_t{48} * 1024);
    ASSERT_EQ(l.dropped.size(), 1u);
    EXPECT_EQ(l.dropped[0].array, 1);
    ASSERT_EQ(l.slots.size(), 2u);
    EXPECT_EQ(l.slots[1].array, 2);
    EXPECT_EQ(l.totalBytes, 4000u + 8000u);
}

TEST(SharedLayout, NothingStagedKeepsTheProgramsBytes) {
    const SharedLayout l = layoutShared(777, {}, 0, 1000);
    EXPECT_EQ(l.totalBytes, 777u);
    const SharedLayout d = layoutShared(777, {slot(0, 100000, 4, false)}, 0, 1000);
    EXPECT_EQ(d.totalBytes, 777u);
    EXPECT_EQ(d.dropped.size(), 1u);
}

TEST(LinearTexture, AlignedArray) {
    const Linear1D t = linearTexture(0x10000, 4000, 4, 512, 1 << 27);
    ASSERT_TRUE(t.ok) << t.why;
    EXPECT_EQ(t.base, 0x10000u);
    EXPECT_EQ(t.offsetElems, 0);
    EXPECT_EQ(t.bytes, 4000u);
}

TEST(LinearTexture, MisalignedArrayStartsEarlier) {
    const Linear1D t = linearTexture(0x10000 + 256 + 8, 4002, 8, 512, 1 << 27);
    ASSERT_TRUE(t.ok) << t.why;
    EXPECT_EQ(t.base, 0x10000u);
    EXPECT_EQ(t.offsetElems, 33);
    EXPECT_EQ(t.bytes, 264u + 4000u); // whole elements only
}

TEST(LinearTexture, Refusals) {
    EXPECT_FALSE(linearTexture(0x10000 + 6, 4000, 4, 512, 1 << 27).ok); // not element-aligned
    EXPECT_FALSE(linearTexture(0x10000, 4000, 4, 512, 999).ok);         // too many texels
    EXPECT_FALSE(linearTexture(0x10000, 2, 4, 512, 1 << 27).ok);        // empty
}

TEST(PitchedTexture, AlignedRowsNeedNoCopy) {
    const Pitched2D t =
        pitchedTexture(0x10000, std::size_t{128} * 96 * 4, 4, 128, 512, 32, 131072, 65000, 1 << 21);
    ASSERT_TRUE(t.ok) << t.why;
    EXPECT_FALSE(t.copy);
    EXPECT_EQ(t.height, 96u);
    EXPECT_EQ(t.rowBytes, 512u);
}

TEST(PitchedTexture, UnalignedRowsOrPartialRowNeedACopy) {
    const Pitched2D a =
        pitchedTexture(0x10000, std::size_t{123} * 97 * 4, 4, 123, 512, 32, 131072, 65000, 1 << 21);
    ASSERT_TRUE(a.ok) << a.why;
    EXPECT_TRUE(a.copy);
    EXPECT_EQ(a.fullRows, 97u);
    EXPECT_EQ(a.tailElems, 0u);
    const Pitched2D b = pitchedTexture(0x10000, (std::size_t{128} * 5 + 7) * 4, 4, 128, 512, 32,
                                       131072, 65000, 1 << 21);
    ASSERT_TRUE(b.ok) << b.why;
    EXPECT_TRUE(b.copy);
    EXPECT_EQ(b.height, 6u);
    EXPECT_EQ(b.tailElems, 7u);
    const Pitched2D c = pitchedTexture(0x10000 + 256, std::size_t{128} * 96 * 4, 4, 128, 512, 32,
                                       131072, 65000, 1 << 21);
    EXPECT_TRUE(c.copy); // base not texture-aligned
}

TEST(PitchedTexture, Refusals) {
    EXPECT_FALSE(pitchedTexture(0x10000, 4000, 4, 0, 512, 32, 131072, 65000, 1 << 21).ok);
    EXPECT_FALSE(pitchedTexture(0x10000, 40, 4, 128, 512, 32, 131072, 65000, 1 << 21).ok);
    EXPECT_FALSE(
        pitchedTexture(0x10000, 4000000, 4, 10, 512, 32, 131072, 65000, 1 << 21).ok); // height
}

TEST(PersistingSetAside, SizedToTheWindow) {
    constexpr std::size_t MB = std::size_t{1} << 20;
    const std::size_t maxPersist = 32768000; // the H100's
    // A 4 KB window takes 1 MB, not the device's maximum.
    EXPECT_EQ(persistingSetAside(4096, 0, maxPersist, MB), MB);
    EXPECT_EQ(persistingSetAside(16 * MB + 1, 0, maxPersist, MB), 17 * MB);
    // Never below what the program had set, never above the maximum.
    EXPECT_EQ(persistingSetAside(4096, 8 * MB, maxPersist, MB), 8 * MB);
    EXPECT_EQ(persistingSetAside(64 * MB, 0, maxPersist, MB), maxPersist);
    EXPECT_EQ(persistingSetAside(0, 0, maxPersist, MB), 0u);
}

TEST(PersistingSetAside, ACapBoundsTheWindowNotTheProgram) {
    constexpr std::size_t MB = std::size_t{1} << 20;
    const std::size_t maxPersist = 39321600; // the H200's
    EXPECT_EQ(persistingSetAside(38 * MB, 0, maxPersist, MB, 12 * MB), 12 * MB);
    EXPECT_EQ(persistingSetAside(4 * MB + 1, 0, maxPersist, MB, 12 * MB), 5 * MB); // below it
    EXPECT_EQ(persistingSetAside(64 * MB, 0, maxPersist, MB, 64 * MB), maxPersist);
    // What the program set itself stays, cap or not.
    EXPECT_EQ(persistingSetAside(38 * MB, 20 * MB, maxPersist, MB, 12 * MB), 20 * MB);
}

} // namespace
} // namespace memplace::detail

// The shared vocabulary of common/: the access-mode name table and combination, the binary
// trace's mode numbers, and the feasibility rules every stage applies.
#include "common/access_mode.h"
#include "common/feasibility.h"
#include "trace/trace.h"

#include <gtest/gtest.h>

namespace memplace {
namespace {

TEST(CommonAccessMode, NamesRoundTrip) {
    EXPECT_EQ(accessModeName(AccessMode::None), "none");
    EXPECT_EQ(accessModeName(AccessMode::Read), "read");
    EXPECT_EQ(accessModeName(AccessMode::Write), "write");
    EXPECT_EQ(accessModeName(AccessMode::ReadWrite), "readwrite");
    EXPECT_EQ(accessModeName(AccessMode::Atomic), "atomic");
    for (AccessMode m : kAllAccessModes) {
        EXPECT_EQ(parseAccessMode(accessModeName(m)), m);
    }
    EXPECT_EQ(parseAccessMode("Read"), std::nullopt);
    EXPECT_EQ(parseAccessMode(""), std::nullopt);
}

TEST(CommonAccessMode, CombineAndWrites) {
    EXPECT_EQ(combine(AccessMode::None, AccessMode::Read), AccessMode::Read);
    EXPECT_EQ(combine(AccessMode::Write, AccessMode::None), AccessMode::Write);
    EXPECT_EQ(combine(AccessMode::Read, AccessMode::Write), AccessMode::ReadWrite);
    EXPECT_EQ(combine(AccessMode::Read, AccessMode::Read), AccessMode::Read);
    EXPECT_EQ(combine(AccessMode::Read, AccessMode::Atomic), AccessMode::Atomic);
    EXPECT_EQ(combine(AccessMode::Atomic, AccessMode::None), AccessMode::Atomic);
    EXPECT_FALSE(writes(AccessMode::None));
    EXPECT_FALSE(writes(AccessMode::Read));
    EXPECT_TRUE(writes(AccessMode::Write));
    EXPECT_TRUE(writes(AccessMode::ReadWrite));
    EXPECT_TRUE(writes(AccessMode::Atomic));
}

// The numbers are the binary trace format's (docs/trace-format.md): they must never move.
TEST(CommonAccessMode, TraceCodesAreTheFormats) {
    EXPECT_EQ(trace::arrayModeCode(AccessMode::Read), 0);
    EXPECT_EQ(trace::arrayModeCode(AccessMode::Write), 1);
    EXPECT_EQ(trace::arrayModeCode(AccessMode::ReadWrite), 2);
    EXPECT_EQ(trace::arrayModeCode(AccessMode::Atomic), 3);
    for (uint8_t code = 0; code < 4; ++code) {
        ASSERT_TRUE(trace::arrayModeFromCode(code).has_value());
        EXPECT_EQ(trace::arrayModeCode(*trace::arrayModeFromCode(code)), code);
    }
    EXPECT_EQ(trace::arrayModeFromCode(4), std::nullopt);
    EXPECT_EQ(trace::parseArrayMode("none"), std::nullopt);
    EXPECT_EQ(trace::parseArrayMode("atomic"), AccessMode::Atomic);
    EXPECT_EQ(trace::arrayModeName(AccessMode::ReadWrite), "readwrite");
}

TEST(CommonFeasibility, PlacesThatTakeWritesAndAtomics) {
    for (Place p : kAllPlaces) {
        const bool readOnlyPath =
            p == Place::ReadOnly || p == Place::Texture || p == Place::Constant;
        EXPECT_EQ(placeTakesWrites(p), !readOnlyPath) << placeName(p);
        EXPECT_EQ(placeTakesAtomics(p), p == Place::Global || p == Place::L2Persist)
            << placeName(p);
    }
}

TEST(CommonFeasibility, TextureElementSizesAndConstantBank) {
    for (uint64_t bytes : {1, 2, 4, 8, 16}) {
        EXPECT_TRUE(isTextureElementSize(bytes)) << bytes;
    }
    for (uint64_t bytes : {0, 3, 5, 6, 12, 24, 32}) {
        EXPECT_FALSE(isTextureElementSize(bytes)) << bytes;
    }
    EXPECT_TRUE(fitsConstantBank(65536));
    EXPECT_FALSE(fitsConstantBank(65537));
}

TEST(CommonFeasibility, AccessModeExcludes) {
    EXPECT_EQ(accessModeExcludes(AccessMode::Read, Place::Texture), std::nullopt);
    EXPECT_EQ(accessModeExcludes(AccessMode::None, Place::Constant), std::nullopt);
    EXPECT_EQ(accessModeExcludes(AccessMode::Write, Place::ReadOnly), ModeRule::Written);
    EXPECT_EQ(accessModeExcludes(AccessMode::ReadWrite, Place::Constant), ModeRule::Written);
    EXPECT_EQ(accessModeExcludes(AccessMode::ReadWrite, Place::Shared), std::nullopt);
    // Written wins over Atomic where both apply.
    EXPECT_EQ(accessModeExcludes(AccessMode::Atomic, Place::Texture), ModeRule::Written);
    EXPECT_EQ(accessModeExcludes(AccessMode::Atomic, Place::Shared), ModeRule::Atomic);
    EXPECT_EQ(accessModeExcludes(AccessMode::Atomic, Place::Registers), ModeRule::Atomic);
    EXPECT_EQ(accessModeExcludes(AccessMode::Atomic, Place::Global), std::nullopt);
    EXPECT_EQ(accessModeExcludes(AccessMode::Atomic, Place::L2Persist), std::nullopt);
}

} // namespace
} // namespace memplace

// Trip counts of counted loops (kernel_loops.cpp), from the constants the walker found, without
// parsing CUDA.
#include "frontend/kernel_walker.h"

#include <gtest/gtest.h>

namespace memplace::frontend::detail {
namespace {

TEST(TripCount, AffineUpwards) {
    EXPECT_EQ(affineTripCount(0, 10, 1, BO_LT), 10);
    EXPECT_EQ(affineTripCount(0, 10, 3, BO_LT), 4); // 0 3 6 9
    EXPECT_EQ(affineTripCount(0, 10, 3, BO_LE), 4); // 0 3 6 9
    EXPECT_EQ(affineTripCount(0, 9, 3, BO_LE), 4);  // 0 3 6 9
    EXPECT_EQ(affineTripCount(5, 5, 1, BO_LT), 0);
}

TEST(TripCount, AffineDownwards) {
    EXPECT_EQ(affineTripCount(10, 0, -1, BO_GT), 10);
    EXPECT_EQ(affineTripCount(10, 0, -1, BO_GE), 11);
    EXPECT_EQ(affineTripCount(10, 0, -3, BO_GT), 4); // 10 7 4 1
}

TEST(TripCount, AffineWithoutEnd) {
    EXPECT_EQ(affineTripCount(0, 10, -1, BO_LT), std::nullopt); // moves away from the bound
    EXPECT_EQ(affineTripCount(0, 10, 3, BO_NE), std::nullopt);  // steps over 10
    EXPECT_EQ(affineTripCount(0, 9, 3, BO_NE), 3);
    EXPECT_EQ(affineTripCount(0, 10, 1, BO_EQ), std::nullopt); // not a counted comparison
}

TEST(TripCount, Geometric) {
    EXPECT_EQ(geometricTripCount(1, 1024, 2, BO_LT, BO_Mul), 10); // 1 2 4 ... 512
    EXPECT_EQ(geometricTripCount(256, 0, 1, BO_GT, BO_Shr), 9);   // 256 128 ... 1
    EXPECT_EQ(geometricTripCount(1000, 1, 10, BO_GE, BO_Div), 4); // 1000 100 10 1
    EXPECT_EQ(geometricTripCount(8, 100, 2, BO_GT, BO_Mul), 0);
}

TEST(TripCount, GeometricWithoutEnd) {
    EXPECT_EQ(geometricTripCount(1, 100, 1, BO_LT, BO_Mul), std::nullopt); // x * 1 stays
    EXPECT_EQ(geometricTripCount(0, 100, 1, BO_LT, BO_Shl), std::nullopt); // 0 << 1 stays
}

} // namespace
} // namespace memplace::frontend::detail

#pragma once

// Wall-clock limits of the tests that guard against super-linear work (a pairwise check that
// took minutes, an unbounded search). The limits are an order of magnitude above an optimised
// build's time on a loaded 2-core machine; the sanitizer preset (Debug, ASan and UBSan) runs
// several times slower, so its limits are scaled (MEMPLACE_TEST_TIME_SCALE, set by
// memplace_test in cmake/memplace.cmake).

#ifndef MEMPLACE_TEST_TIME_SCALE
#define MEMPLACE_TEST_TIME_SCALE 1
#endif

namespace memplace::test {

/// The limit a test allows for work an optimised build does in well under `seconds`.
constexpr double timeBudget(double seconds) {
    return seconds * MEMPLACE_TEST_TIME_SCALE;
}

} // namespace memplace::test

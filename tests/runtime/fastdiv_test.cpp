#include "memplace/fastdiv.h"

#include <gtest/gtest.h>

#include <random>

namespace memplace {
namespace {

TEST(FastDiv, SmallDivisorsAndEdgeDividends) {
    const uint32_t edges[] = {0u,     1u,     2u,          31u,         32u,         4095u,
                              65535u, 65536u, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu};
    for (uint32_t d = 1; d <= 5000; ++d) {
        const FastDiv f = FastDiv::make(d);
        for (uint32_t n : edges) {
            ASSERT_EQ(f.div(n), n / d) << n << " / " << d;
        }
        for (uint32_t k = 1; k < 40; ++k) { // around multiples of d
            const uint64_t m = uint64_t{d} * k * 1000;
            for (uint64_t n = m > 0 ? m - 1 : 0; n <= m + 1 && n <= 0xffffffffu; ++n) {
                ASSERT_EQ(f.div(static_cast<uint32_t>(n)), static_cast<uint32_t>(n) / d);
            }
        }
    }
}

TEST(FastDiv, RandomDivisorsAndDividends) {
    std::mt19937 g(42);
    for (int t = 0; t < 2000000; ++t) {
        const uint32_t d = std::max<uint32_t>(1u, g() >> (g() % 32));
        const uint32_t n = g();
        ASSERT_EQ(FastDiv::make(d).div(n), n / d) << n << " / " << d;
    }
}

} // namespace
} // namespace memplace

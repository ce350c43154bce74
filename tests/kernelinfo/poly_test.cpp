// Poly: the arithmetic of index expressions, and its text form (printed and parsed back).
#include "kernelinfo/poly.h"

#include <gtest/gtest.h>

namespace memplace::kernelinfo {
namespace {

Poly sym(const char* s) {
    return Poly::symbol(s);
}
Poly c(int64_t v) {
    return Poly::constant(v);
}

TEST(Poly, ArithmeticIsCanonical) {
    Poly gid = sym("blockIdx.x") * sym("blockDim.x") + sym("threadIdx.x");
    Poly same = sym("threadIdx.x") + sym("blockDim.x") * sym("blockIdx.x");
    EXPECT_EQ(gid, same);
    EXPECT_TRUE((gid - same).isZero());
    EXPECT_EQ((c(2) * sym("n") + c(3)) * c(2), c(4) * sym("n") + c(6));
    EXPECT_EQ(-(sym("n") - c(1)), c(1) - sym("n"));
    EXPECT_EQ(c(0) * sym("n"), Poly());
}

TEST(Poly, Constants) {
    EXPECT_TRUE(Poly().isConstant());
    EXPECT_EQ(Poly().constantValue(), 0);
    EXPECT_EQ((c(6) * c(7)).constantValue(), 42);
    EXPECT_FALSE(sym("n").constantValue().has_value());
    EXPECT_EQ((c(4) * sym("n") + c(8)).divideExact(4), sym("n") + c(2));
    EXPECT_FALSE((c(4) * sym("n") + c(2)).divideExact(4).has_value());
}

TEST(Poly, Overflow) {
    Poly big = c(INT64_MAX) * c(2);
    EXPECT_TRUE(big.overflowed());
    EXPECT_FALSE(big.constantValue().has_value());
}

TEST(Poly, Evaluate) {
    Poly p = c(2) * sym("n") * sym("blockDim.x") + sym("threadIdx.x") - c(1);
    auto v = p.evaluate([](const std::string& s) -> std::optional<int64_t> {
        if (s == "n") {
            return 10;
        }
        if (s == "blockDim.x") {
            return 256;
        }
        if (s == "threadIdx.x") {
            return 3;
        }
        return std::nullopt;
    });
    EXPECT_EQ(v, 2 * 10 * 256 + 3 - 1);
    EXPECT_FALSE(p.evaluate([](const std::string&) { return std::optional<int64_t>(); }));
}

TEST(Poly, PrintsAndParsesBack) {
    struct Case {
        Poly p;
        const char* text = nullptr;
    };
    const Case cases[] = {
        {Poly(), "0"},
        {c(-5), "-5"},
        {sym("n"), "n"},
        {-sym("n"), "-n"},
        {c(2) * sym("blockDim.x") * sym("n") + sym("threadIdx.x") - c(1),
         "2*blockDim.x*n + threadIdx.x - 1"},
        {sym("n") * sym("n") - c(3) * sym("m"), "n*n - 3*m"},
    };
    for (const auto& k : cases) {
        EXPECT_EQ(k.p.toString(), k.text);
        auto back = Poly::parse(k.text);
        EXPECT_EQ(back, std::optional<Poly>(k.p)) << k.text;
    }
    EXPECT_EQ(Poly::parse(" 3 * n*2 - 1"), c(6) * sym("n") - c(1));
    for (const char* bad : {"", "n +", "2 ** n", "n / 2", "(n)", "99999999999999999999"}) {
        EXPECT_FALSE(Poly::parse(bad).has_value()) << bad;
    }
}

} // namespace
} // namespace memplace::kernelinfo

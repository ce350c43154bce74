// The transaction evaluator: fast paths against the general path, and the general path against
// an independent brute-force reading written here.
#include "spec/condition.h"
#include "spec/spec.h"

#include <gtest/gtest.h>

#include <random>

namespace memplace::spec {
namespace {

std::vector<LaneAccess> lanes(const std::vector<int64_t>& indices, int64_t elementSize) {
    std::vector<LaneAccess> out;
    for (int64_t i : indices) {
        out.push_back({i, i * elementSize});
    }
    return out;
}

std::vector<int64_t> strided(int64_t stride, int n = 32, int64_t start = 0) {
    std::vector<int64_t> v;
    for (int l = 0; l < n; ++l) {
        v.push_back(start + l * stride);
    }
    return v;
}

const Spec& h100() {
    static const Spec s = [] {
        auto r = loadSpec("h100");
        EXPECT_TRUE(r) << r.message();
        return *r;
    }();
    return s;
}

TransactionCounter counterFor(const Spec& s, std::string_view memory) {
    const Memory* m = s.findMemory(memory);
    EXPECT_NE(m, nullptr) << memory;
    return TransactionCounter(
        m->serialCondition ? &*m->serialCondition : nullptr,
        {m->banks.value_or(0), static_cast<int64_t>(m->blockSize), m->wordSize});
}

// ---- the exact cases of the issue ----

TEST(Transactions, H100GlobalStrideOneFloatIsFourSectors) {
    auto c = counterFor(h100(), "global");
    EXPECT_EQ(c.strategy(), TransactionCounter::Strategy::Distinct);
    EXPECT_EQ(c.count(lanes(strided(1), 4)), 4u);
    EXPECT_EQ(c.count(lanes(strided(1), 8)), 8u);  // doubles: 256 bytes
    EXPECT_EQ(c.count(lanes(strided(8), 4)), 32u); // one sector per lane
    EXPECT_EQ(c.count(lanes(strided(0), 4)), 1u);  // all lanes, one word
}

TEST(Transactions, H100ConstantBroadcastsOrSerializes) {
    auto c = counterFor(h100(), "constant");
    EXPECT_EQ(c.count(lanes(strided(0), 4)), 1u);
    EXPECT_EQ(c.count(lanes(strided(1), 4)), 32u);
    EXPECT_EQ(c.count(lanes({0, 0, 1, 1, 2, 2}, 4)), 3u);
}

TEST(Transactions, H100SharedBankConflicts) {
    auto c = counterFor(h100(), "shared");
    EXPECT_EQ(c.strategy(), TransactionCounter::Strategy::BankConflict);
    EXPECT_EQ(c.count(lanes(strided(1), 4)), 1u);
    EXPECT_EQ(c.count(lanes(strided(2), 4)), 2u);
    EXPECT_EQ(c.count(lanes(strided(32), 4)), 32u);
    EXPECT_EQ(c.count(lanes(strided(0), 4)), 1u);
    EXPECT_EQ(c.count(lanes(strided(33), 4)), 1u); // padded rows: conflict-free
}

TEST(Transactions, NoLanesNoTransactions) {
    auto c = counterFor(h100(), "global");
    EXPECT_EQ(c.count({}), 0u);
    EXPECT_EQ(c.countGeneral({}), 0u);
    TransactionCounter never(nullptr, {});
    EXPECT_EQ(never.count(lanes(strided(7), 4)), 1u);
}

// ---- an independent reading of a condition ----

int64_t refEval(const ConditionExpr& e, int32_t i, const LaneAccess& a, const LaneAccess& b,
                const ConditionParams& p) {
    const auto& n = e.node(i);
    using K = ConditionExpr::Kind;
    if (n.kind == K::Number) {
        return n.value;
    }
    if (n.kind == K::Variable) {
        switch (n.var) {
        case ConditionVar::Index1:
            return a.index;
        case ConditionVar::Index2:
            return b.index;
        case ConditionVar::Address1:
            return a.address;
        case ConditionVar::Address2:
            return b.address;
        case ConditionVar::Word1:
            return a.address / p.wordSize;
        case ConditionVar::Word2:
            return b.address / p.wordSize;
        case ConditionVar::Banks:
            return p.banks;
        case ConditionVar::BlockSize:
            return p.blockSize;
        case ConditionVar::WordSize:
            return p.wordSize;
        }
    }
    int64_t x = refEval(e, n.lhs, a, b, p);
    if (n.kind == K::Unary) {
        return n.op == ConditionOp::Not ? !x : -x;
    }
    int64_t y = refEval(e, n.rhs, a, b, p);
    switch (n.op) {
    case ConditionOp::Add:
        return x + y;
    case ConditionOp::Sub:
        return x - y;
    case ConditionOp::Mul:
        return x * y;
    case ConditionOp::Div:
        return y == 0 ? 0 : x / y;
    case ConditionOp::Mod:
        return y == 0 ? 0 : x % y;
    case ConditionOp::Eq:
        return x == y;
    case ConditionOp::Ne:
        return x != y;
    case ConditionOp::Lt:
        return x < y;
    case ConditionOp::Le:
        return x <= y;
    case ConditionOp::Gt:
        return x > y;
    case ConditionOp::Ge:
        return x >= y;
    case ConditionOp::And:
        return x && y;
    case ConditionOp::Or:
        return x || y;
    default:
        return 0;
    }
}

/// First-fit grouping, written from the definition in condition.h.
uint32_t refCount(const ConditionExpr& e, const std::vector<LaneAccess>& ls,
                  const ConditionParams& p) {
    std::vector<std::vector<LaneAccess>> groups;
    for (const auto& l : ls) {
        bool placed = false;
        for (auto& g : groups) {
            bool ok = true;
            for (const auto& m : g) {
                if (refEval(e, e.root(), l, m, p) || refEval(e, e.root(), m, l, p)) {
                    ok = false;
                }
            }
            if (ok) {
                g.push_back(l);
                placed = true;
                break;
            }
        }
        if (!placed) {
            groups.push_back({l});
        }
    }
    return static_cast<uint32_t>(groups.size());
}

std::vector<LaneAccess> randomWarp(std::mt19937_64& rng, int64_t elementSize) {
    // Mix the patterns that matter: strided, clustered, scattered, with inactive lanes.
    std::uniform_int_distribution<int> kind(0, 3);
    std::uniform_int_distribution<int64_t> stride(0, 40);
    std::uniform_int_distribution<int64_t> scatter(0, 4096);
    std::uniform_int_distribution<int> active(1, 32);
    std::vector<int64_t> idx;
    int n = active(rng);
    int k = kind(rng);
    int64_t s = stride(rng);
    for (int l = 0; l < n; ++l) {
        switch (k) {
        case 0:
            idx.push_back(l * s);
            break;
        case 1:
            idx.push_back(scatter(rng) % 16);
            break;
        case 2:
            idx.push_back(scatter(rng));
            break;
        default:
            idx.push_back((l / 4) * s + l % 4);
            break;
        }
    }
    return lanes(idx, elementSize);
}

TEST(Transactions, FastPathsEqualGeneralPathOnEveryBuiltinMemory) {
    std::mt19937_64 rng(12345);
    for (const auto& name : builtinSpecNames()) {
        auto s = loadSpec(name);
        ASSERT_TRUE(s) << s.message();
        for (const auto& m : s->memories) {
            auto c = counterFor(*s, m.name);
            ConditionParams p{m.banks.value_or(0), static_cast<int64_t>(m.blockSize), m.wordSize};
            for (int trial = 0; trial < 300; ++trial) {
                for (int64_t es : {1, 2, 4, 8, 16}) {
                    auto warp = randomWarp(rng, es);
                    uint32_t fast = c.count(warp);
                    ASSERT_EQ(fast, c.countGeneral(warp)) << name << " " << m.name;
                    if (m.serialCondition) {
                        ASSERT_EQ(fast, refCount(m.serialCondition->expr, warp, p))
                            << name << " " << m.name;
                    }
                }
            }
        }
    }
}

/// Random expressions, biased towards the shapes the fast paths recognise.
int32_t randomExpr(ConditionExpr& e, std::mt19937_64& rng, int depth) {
    std::uniform_int_distribution<int> pick(0, 9);
    auto firstVar = [&] {
        static const ConditionVar vs[] = {ConditionVar::Index1, ConditionVar::Address1,
                                          ConditionVar::Word1};
        return vs[std::uniform_int_distribution<int>(0, 2)(rng)];
    };
    auto second = [](ConditionVar v) {
        return v == ConditionVar::Index1     ? ConditionVar::Index2
               : v == ConditionVar::Address1 ? ConditionVar::Address2
                                             : ConditionVar::Word2;
    };
    auto constant = [&]() -> int32_t {
        switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
        case 0:
            return e.variable(ConditionVar::Banks);
        case 1:
            return e.variable(ConditionVar::BlockSize);
        default:
            return e.number(std::uniform_int_distribution<int>(1, 130)(rng));
        }
    };
    int k = depth <= 0 ? 9 : pick(rng);
    switch (k) {
    case 0: { // k1 / d != k2 / d (Distinct)
        ConditionVar v = firstVar();
        int32_t d = constant();
        int32_t d2 = e.number(e.node(d).kind == ConditionExpr::Kind::Number ? e.node(d).value : 32);
        bool swap = pick(rng) < 5;
        int32_t l = e.binary(ConditionOp::Div, e.variable(swap ? second(v) : v), d);
        int32_t r = e.binary(ConditionOp::Div, e.variable(swap ? v : second(v)),
                             e.node(d).kind == ConditionExpr::Kind::Number ? d2 : d);
        return e.binary(ConditionOp::Ne, l, r);
    }
    case 1: { // bank conflict shape
        ConditionVar v = firstVar();
        int32_t ne = e.binary(ConditionOp::Ne, e.variable(v), e.variable(second(v)));
        int32_t b = constant();
        int32_t eq = e.binary(ConditionOp::Eq, e.binary(ConditionOp::Mod, e.variable(v), b),
                              e.binary(ConditionOp::Mod, e.variable(second(v)), b));
        return pick(rng) < 5 ? e.binary(ConditionOp::And, ne, eq)
                             : e.binary(ConditionOp::And, eq, ne);
    }
    case 2:
        return e.binary(ConditionOp::Or, randomExpr(e, rng, depth - 1),
                        randomExpr(e, rng, depth - 1));
    case 3:
        return e.binary(ConditionOp::And, randomExpr(e, rng, depth - 1),
                        randomExpr(e, rng, depth - 1));
    case 4:
        return e.unary(ConditionOp::Not, randomExpr(e, rng, depth - 1));
    case 5: {
        static const ConditionOp ops[] = {ConditionOp::Lt, ConditionOp::Ge, ConditionOp::Eq,
                                          ConditionOp::Ne, ConditionOp::Gt, ConditionOp::Le};
        ConditionVar v = firstVar();
        int32_t l = e.binary(ConditionOp::Add, e.variable(v), constant());
        return e.binary(ops[pick(rng) % 6], l, e.variable(second(v)));
    }
    case 6:
        return e.binary(ConditionOp::Ne,
                        e.binary(ConditionOp::Mod, e.variable(firstVar()), constant()),
                        e.binary(ConditionOp::Sub, e.variable(ConditionVar::Word2), constant()));
    case 7:
        return e.number(pick(rng) % 2);
    default:
        return e.binary(ConditionOp::Ne, e.variable(firstVar()), e.variable(firstVar()));
    }
}

TEST(Transactions, RandomExpressionsAgreeWithBruteForce) {
    std::mt19937_64 rng(777);
    int fastPathsSeen = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        SerialCondition cond;
        cond.expr.setRoot(randomExpr(cond.expr, rng, 2));
        ConditionParams p{std::uniform_int_distribution<int64_t>(1, 64)(rng),
                          std::uniform_int_distribution<int64_t>(1, 256)(rng), 4};
        TransactionCounter c(&cond, p);
        fastPathsSeen += c.strategy() != TransactionCounter::Strategy::General ? 1 : 0;
        for (int w = 0; w < 5; ++w) {
            auto warp = randomWarp(rng, 4);
            ASSERT_EQ(c.count(warp), refCount(cond.expr, warp, p)) << cond.toString();
            ASSERT_EQ(c.countGeneral(warp), refCount(cond.expr, warp, p)) << cond.toString();
        }
    }
    EXPECT_GT(fastPathsSeen, 500) << "the generator must exercise the fast paths";
}

TEST(Transactions, BlockScopeCountsWholeBlocks) {
    auto c = counterFor(h100(), "shared");
    EXPECT_EQ(c.scope(), ConditionScope::Block);
    EXPECT_EQ(c.count(lanes(strided(32, 256), 4)), 256u);
    EXPECT_EQ(c.count(lanes(strided(1, 256), 4)), 8u); // 256 words over 32 banks
}

TEST(ConditionText, PrintsWithTheParenthesesPrecedenceNeeds) {
    SerialCondition c;
    auto& e = c.expr;
    int32_t a = e.variable(ConditionVar::Address1);
    int32_t sum = e.binary(ConditionOp::Add, e.number(1), e.number(2));
    int32_t prod = e.binary(ConditionOp::Mul, a, sum);
    int32_t sub = e.binary(ConditionOp::Sub, e.number(8),
                           e.binary(ConditionOp::Sub, e.number(4), e.number(2)));
    e.setRoot(e.binary(ConditionOp::Or, e.binary(ConditionOp::Lt, prod, sub),
                       e.unary(ConditionOp::Not, e.variable(ConditionVar::Banks))));
    EXPECT_EQ(c.toString(), "warp{ address1 * (1 + 2) < 8 - (4 - 2) || !banks }");
}

} // namespace
} // namespace memplace::spec

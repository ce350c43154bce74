// Reuse distance: the Fenwick-tree stack against a naive LRU stack, histogram bins and lookups.
#include "model/reuse.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <random>

namespace memplace::model {
namespace {

/// The definition: distinct lines since the previous access, by walking an LRU list.
class NaiveStack {
public:
    uint64_t access(uint64_t line) {
        uint64_t d = 0;
        for (auto it = stack_.begin(); it != stack_.end(); ++it, ++d) {
            if (*it == line) {
                stack_.erase(it);
                stack_.push_front(line);
                return d;
            }
        }
        stack_.push_front(line);
        return kColdDistance;
    }
    void reset() { stack_.clear(); }
    uint64_t distinct() const { return stack_.size(); }

private:
    std::list<uint64_t> stack_;
};

TEST(StackDistance, TextbookExample) {
    // "b a c c b": the second b has distance 2 (a and c in between).
    StackDistance s(16, 5);
    EXPECT_EQ(s.access('b'), kColdDistance);
    EXPECT_EQ(s.access('a'), kColdDistance);
    EXPECT_EQ(s.access('c'), kColdDistance);
    EXPECT_EQ(s.access('c'), 0u);
    EXPECT_EQ(s.access('b'), 2u);
    EXPECT_EQ(s.distinct(), 3u);
}

TEST(StackDistance, MatchesNaiveStackOnRandomStreams) {
    std::mt19937_64 rng(7);
    for (uint64_t range : {4ull, 50ull, 3000ull, 1ull << 40}) {
        // Dense for small ranges, hashed for the 2^40 one.
        StackDistance s(range, 5000);
        NaiveStack n;
        for (int segment = 0; segment < 3; ++segment) {
            for (int i = 0; i < 6000; ++i) {
                // Mostly a hot set, sometimes far lines, so compaction and growth both happen.
                uint64_t line =
                    rng() % 4 == 0 ? rng() % range : rng() % std::min<uint64_t>(range, 40);
                ASSERT_EQ(s.access(line), n.access(line)) << "range " << range << " i " << i;
            }
            EXPECT_EQ(s.distinct(), n.distinct());
            s.reset();
            n.reset();
        }
    }
}

TEST(StackDistance, StreamAndCyclicPatterns) {
    StackDistance s(1 << 20, 1 << 20);
    // A cyclic sweep over 5000 lines: every reuse has distance 4999.
    for (int pass = 0; pass < 3; ++pass) {
        for (uint64_t l = 0; l < 5000; ++l) {
            uint64_t d = s.access(l);
            if (pass == 0) {
                ASSERT_EQ(d, kColdDistance);
            } else {
                ASSERT_EQ(d, 4999u);
            }
        }
    }
}

TEST(Histogram, BinsAreExactBelowSixteenAndLogLinearAbove) {
    for (uint64_t d = 0; d < 16; ++d) {
        EXPECT_EQ(Histogram::binOf(d), d);
        EXPECT_EQ(Histogram::binLow(static_cast<uint32_t>(d)), d);
    }
    for (uint64_t d : {16ull, 17ull, 31ull, 32ull, 1000ull, 123456789ull, 1ull << 62}) {
        uint32_t b = Histogram::binOf(d);
        EXPECT_LE(Histogram::binLow(b), d);
        EXPECT_GT(Histogram::binHigh(b), d);
        // Eight sub-buckets per octave: a bin is at most 1/8 of its low end wide.
        EXPECT_LE(Histogram::binHigh(b) - Histogram::binLow(b), Histogram::binLow(b) / 8 + 1);
    }
    EXPECT_LT(Histogram::binOf(~0ull - 1), Histogram::kBins);
}

TEST(Histogram, CountBelowIsTheLruHitCount) {
    Histogram h;
    for (uint64_t d : {0ull, 3ull, 3ull, 7ull, 15ull}) {
        h.add(d);
    }
    h.addCold(2);
    h.finalize();
    EXPECT_DOUBLE_EQ(h.total(), 7);
    EXPECT_DOUBLE_EQ(h.countBelow(0), 0);
    EXPECT_DOUBLE_EQ(h.countBelow(1), 1); // distance 0 hits a one-line cache
    EXPECT_DOUBLE_EQ(h.countBelow(3), 1); // distance 3 needs four lines
    EXPECT_DOUBLE_EQ(h.countBelow(4), 3);
    EXPECT_DOUBLE_EQ(h.countBelow(3.5), 3); // fractional capacities round up
    EXPECT_DOUBLE_EQ(h.countBelow(16), 5);
    EXPECT_DOUBLE_EQ(h.countBelow(1e30), 5); // cold accesses never hit
    EXPECT_DOUBLE_EQ(h.hitFraction(16), 5.0 / 7.0);
    // Interpolation inside a wide bin: 100 accesses at distances 64..71 (one bin).
    Histogram w;
    for (uint64_t d = 64; d < 72; ++d) {
        w.add(d, 12.5);
    }
    w.finalize();
    EXPECT_DOUBLE_EQ(w.countBelow(64), 0);
    EXPECT_DOUBLE_EQ(w.countBelow(68), 50);
    EXPECT_DOUBLE_EQ(w.countBelow(72), 100);
}

// Sampled traces' first touches made reuses (warmCold) spread evenly below the distance given:
// an LRU cache holding half those lines serves half of them, not none (a gathered array larger
// than the cache), and one holding them all serves all.
TEST(Histogram, WarmColdSpreadsReusesEvenlyBelowTheDistance) {
    Histogram h;
    h.addCold(100);
    h.warmCold(0.5, 4096);
    h.finalize();
    EXPECT_DOUBLE_EQ(h.cold(), 50);
    EXPECT_DOUBLE_EQ(h.reuses(), 50);
    EXPECT_NEAR(h.countBelow(2048), 25, 1e-9);
    EXPECT_NEAR(h.countBelow(1024), 12.5, 1e-9);
    EXPECT_NEAR(h.countBelow(4096), 50, 1e-9);
    EXPECT_NEAR(h.countBelow(1e9), 50, 1e-9);
    // A distance inside a bin ([96, 104)): the bin holds only the part below it, which
    // countBelow spreads over the whole bin.
    Histogram g;
    g.addCold(10);
    g.warmCold(1.0, 100);
    g.finalize();
    EXPECT_NEAR(g.countBelow(48), 4.8, 1e-9);
    EXPECT_NEAR(g.countBelow(96), 9.6, 1e-9);
    EXPECT_NEAR(g.countBelow(104), 10, 1e-9);
}

TEST(Histogram, Log2Buckets) {
    Histogram h;
    h.add(0);
    h.add(1);
    h.add(2);
    h.add(3);
    h.add(100, 2);
    auto b = h.log2Buckets();
    ASSERT_EQ(b.size(), 8u); // 100 is in [64, 128): bucket 7
    EXPECT_DOUBLE_EQ(b[0], 1);
    EXPECT_DOUBLE_EQ(b[1], 1);
    EXPECT_DOUBLE_EQ(b[2], 2);
    EXPECT_DOUBLE_EQ(b[7], 2);
}

} // namespace
} // namespace memplace::model

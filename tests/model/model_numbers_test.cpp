// The seam between the checks and the model (issue 30): a trace and a spec that pass their
// checks never give a NaN or infinite cost, and a cost that is not a finite number never makes
// a placement look free.
#include "model/analysis.h"
#include "model/model.h"
#include "spec/spec.h"
#include "trace/trace_io.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <sys/resource.h>

namespace memplace::model {
namespace {

std::string tinyText() {
    std::ifstream in(std::string(MEMPLACE_SOURCE_DIR) + "/tests/model/specs/tiny.msl");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

spec::Spec specWith(const std::string& from, const std::string& to) {
    std::string text = tinyText();
    auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    auto s = spec::parseSpec(text, "tiny.msl");
    EXPECT_TRUE(s.ok()) << s.message();
    return *s;
}

/// Every placement that moves one array to one of its candidates, and the original.
std::vector<Placement> singleMoves(const Model& m) {
    std::vector<Placement> out{m.original()};
    for (size_t i = 0; i < m.original().size(); ++i) {
        for (Place p : m.candidates(i)) {
            Placement q = m.original();
            q[i] = p;
            out.push_back(q);
        }
    }
    return out;
}

void expectFiniteCosts(const trace::Trace& t, const spec::Spec& s, const std::string& what) {
    auto st = analyze(t, s);
    ASSERT_TRUE(st.ok()) << what << st.message();
    Model m(s, std::move(*st));
    for (const Placement& p : singleMoves(m)) {
        Prediction pr = m.predict(p);
        EXPECT_FALSE(std::isnan(pr.cycles)) << what;
        if (pr.feasible) {
            EXPECT_TRUE(std::isfinite(pr.cycles)) << what;
            EXPECT_TRUE(std::isfinite(pr.seconds)) << what;
            for (const auto& a : pr.arrays) {
                for (const auto& l : a.levels) {
                    EXPECT_TRUE(std::isfinite(l.cycles)) << what << " " << l.memory;
                }
            }
        }
    }
}

// A grid of 2^31 x 2^31 x 4 wrapped to 0 blocks: -nan costs, and an array still moved to
// shared memory. Every trace either fails its checks or is priced in finite numbers, on the
// extremes of what the checks accept.
TEST(ModelNumbers, CheckedInputsGiveFiniteCosts) {
    const std::string body = "r 0 0 0 a * 0..31\nr 0 0 1 a * 5x32\nw 0 1 2 b * 0..31\n";
    const std::string arrays = "array a elem=4 length=64 mode=read\n"
                               "array b elem=4 length=64 mode=write\n";
    const std::string heads[] = {
        "grid 2147483648 2147483648 4\nblock 64\n",
        "grid 65536 65536\nblock 64\ntraced 0\n",
        "grid 65536 65536\nblock 64\ntraced 0-4294967295\n",
        "grid 1\nblock 64\nregisters 1024\nshared 1073741824\n",
        "grid 1\nblock 4096\n",
    };
    const std::pair<std::string, std::string> specs[] = {
        {"sms = 1;", "sms = 1;"},
        {"sms = 1;", "sms = 1024;"},
        {"clock = 1000 MHz;", "clock = 10000 MHz;"},
        {"clock = 1000 MHz;", "clock = 0.000001 MHz;"},
        {"warpSize = 32;", "warpSize = 64;"},
        {"warpSize = 32;", "warpSize = 1;"},
    };
    size_t priced = 0;
    for (const auto& head : heads) {
        // With no records too: the wrapped grid's records were outside its 0 blocks, but a
        // trace without records was modelled.
        for (const std::string& records : {body, std::string()}) {
            auto t =
                trace::parseText("memplace-trace 1\nkernel k\n" + head + arrays + records, "t");
            if (!t.ok()) {
                continue; // refused by the checks: it never reaches the model
            }
            for (const auto& [from, to] : specs) {
                spec::Spec s = specWith(from, to);
                expectFiniteCosts(*t, s, head + records + " / " + to);
                ++priced;
            }
        }
    }
    EXPECT_GE(priced, 6u * std::size(specs));

    // The largest arrays the checks accept.
    auto huge = trace::parseText("memplace-trace 1\nkernel k\ngrid 1\nblock 32\n"
                                 "array a elem=4096 length=281474976710656 mode=read\n"
                                 "r 0 0 0 a * 281474976710655 0 1\n",
                                 "t");
    ASSERT_TRUE(huge.ok()) << huge.message();
    expectFiniteCosts(*huge, specWith("sms = 1;", "sms = 1;"), "huge array");
}

// Should a NaN reach the model anyway, the placement is refused (it compared false with every
// other cost, so it looked free), and the original placement stays.
TEST(ModelNumbers, NonFiniteCostsAreRefused) {
    auto t = trace::parseText("memplace-trace 1\nkernel k\ngrid 1\nblock 32\n"
                              "array a elem=4 length=64 mode=read\nr 0 0 0 a * 0..31\n",
                              "t");
    ASSERT_TRUE(t.ok()) << t.message();
    spec::Spec s = specWith("sms = 1;", "sms = 1;");
    auto st = analyze(*t, s);
    ASSERT_TRUE(st.ok()) << st.message();
    TraceStats bad = *st;
    for (auto& v : bad.arrays[0].readTransactions) {
        v = std::numeric_limits<double>::quiet_NaN();
    }
    Model m(s, std::move(bad));
    Prediction p = m.predict(m.original());
    EXPECT_FALSE(p.feasible);
    EXPECT_FALSE(std::isnan(p.cycles));
    EXPECT_NE(p.reason.find("not a finite number"), std::string::npos) << p.reason;
    EXPECT_FALSE(std::isnan(m.cycles(m.original())));
}

long peakRssKb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

// 65,535 arrays in a 2.5 MB trace took 4.1 GB to analyse: two 4 KB reuse histograms and a
// 1024-slot stack per array and cache kind, most of them empty. Now they grow with their use.
TEST(ModelNumbers, ManyArraysAnalyseInMemoryTheyUse) {
    const int n = 16384; // 1 GB before
    std::string text = "memplace-trace 1\nkernel k\ngrid 1\nblock 32\n";
    for (int i = 0; i < n; ++i) {
        text += fmt::format("array a{} elem=4 length=1 mode=read\n", i);
    }
    for (int i = 0; i < n; ++i) {
        text += fmt::format("r 0 0 0 a{} * 0\n", i);
    }
    auto t = trace::parseText(text, "t");
    ASSERT_TRUE(t.ok()) << t.message();
    auto s = spec::loadSpec("h100");
    ASSERT_TRUE(s.ok()) << s.message();
    const long before = peakRssKb();
    auto st = analyze(*t, *s);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(st->arrays.size(), static_cast<size_t>(n));
    EXPECT_LT(peakRssKb() - before, 200 * 1024) << "KB to analyse " << n << " one-element arrays";
}

} // namespace
} // namespace memplace::model

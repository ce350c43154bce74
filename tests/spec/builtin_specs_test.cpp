#include "spec/spec.h"

#include <gtest/gtest.h>

namespace memplace::spec {
namespace {

TEST(BuiltinSpecs, AllSevenArePresent) {
    const auto& names = builtinSpecNames();
    for (const char* want : {"h100", "h200", "a100", "v100", "k20c", "m2075", "c1060"}) {
        EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
    }
}

class EachBuiltin : public ::testing::TestWithParam<std::string> {};

TEST_P(EachBuiltin, ParsesWithoutErrorsAndHasAGlobalPlace) {
    auto s = loadSpec(GetParam());
    ASSERT_TRUE(s) << s.message();
    EXPECT_EQ(s->name, GetParam());
    EXPECT_NE(s->findPlace(Place::Global), nullptr);
    EXPECT_GT(s->processor.sms, 0u);
    EXPECT_GT(s->processor.clockMHz, 0.0);
    for (const auto& p : s->places) {
        ASSERT_FALSE(p.levels.empty());
        EXPECT_EQ(p.levels.back(), p.memory) << placeName(p.place);
    }
}

TEST_P(EachBuiltin, PrintThenParseGivesTheSameSpec) {
    auto s = loadSpec(GetParam());
    ASSERT_TRUE(s) << s.message();
    std::string printed = printSpec(*s);
    auto again = parseSpec(printed, GetParam() + ".printed.msl");
    ASSERT_TRUE(again) << again.message() << "\n" << printed;
    EXPECT_TRUE(equivalent(*s, *again)) << printed;
    EXPECT_TRUE(again->assumptions.empty()) << "printing resolves every ? and om";
    EXPECT_EQ(printSpec(*again), printed);
}

INSTANTIATE_TEST_SUITE_P(Builtins, EachBuiltin, ::testing::ValuesIn(builtinSpecNames()),
                         [](const auto& info) { return info.param; });

TEST(BuiltinSpecs, PorpleLatenciesOfTheOriginalStudy) {
    struct Want {
        const char* spec;
        double constant, global, texture, shared;
    };
    for (const Want& w : {Want{"k20c", 250, 345, 351, 48}, Want{"m2075", 360, 600, 617, 48},
                          Want{"c1060", 545, 548, 546, 38}}) {
        auto s = loadSpec(w.spec);
        ASSERT_TRUE(s) << s.message();
        auto latencyOf = [&](Place p) {
            const PlaceEntry* e = s->findPlace(p);
            EXPECT_NE(e, nullptr) << w.spec << " " << placeName(p);
            return e ? s->findMemory(e->levels.back())->latency.read : -1;
        };
        EXPECT_EQ(latencyOf(Place::Constant), w.constant) << w.spec;
        EXPECT_EQ(latencyOf(Place::Global), w.global) << w.spec;
        EXPECT_EQ(latencyOf(Place::Texture), w.texture) << w.spec;
        EXPECT_EQ(latencyOf(Place::Shared), w.shared) << w.spec;
        const Memory* constant = s->findMemory(s->findPlace(Place::Constant)->memory);
        EXPECT_EQ(constant->concurrency.memoryBound, 1.0);
    }
}

TEST(BuiltinSpecs, HopperFactsFromTheDesign) {
    auto h100 = loadSpec("h100");
    auto h200 = loadSpec("h200");
    ASSERT_TRUE(h100 && h200);
    for (const Spec* s : {&*h100, &*h200}) {
        EXPECT_EQ(s->processor.sms, 132u);
        EXPECT_EQ(s->processor.maxSharedPerSm, 228u * 1024);
        EXPECT_EQ(s->processor.maxSharedPerBlock, 227u * 1024);
        EXPECT_EQ(s->findMemory("L1")->size, 256u * 1024);
        EXPECT_EQ(s->findPlace(Place::Constant)->capacity, 64u * 1024);
    }
    EXPECT_EQ(h100->findMemory("L2")->size, 50ull << 20);
    EXPECT_EQ(h200->findMemory("L2")->size, 60ull << 20);
}

} // namespace
} // namespace memplace::spec

#include "spec/spec.h"
#include "spec_fixtures.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace memplace::spec {
namespace {

using testing::minimalSpec;

TEST(MslParse, MinimalSpecReadsEveryField) {
    auto s = parseSpec(minimalSpec(), "min.msl");
    ASSERT_TRUE(s) << s.message();
    EXPECT_EQ(s->processor.sms, 4u);
    EXPECT_EQ(s->processor.clockMHz, 1000.0);
    EXPECT_EQ(s->processor.maxSharedPerSm, 100u * 1024);
    EXPECT_EQ(s->processor.maxWarpsPerSm, 64u); // inferred
    ASSERT_EQ(s->memories.size(), 3u);
    const Memory* l1 = s->findMemory("L1");
    ASSERT_NE(l1, nullptr);
    EXPECT_FALSE(l1->softwareManaged);
    EXPECT_EQ(l1->size, 128u * 1024);
    EXPECT_EQ(l1->blockSize, 32u);
    EXPECT_EQ(l1->latency.read, 30.0);
    EXPECT_EQ(l1->lowerLevels, std::vector<std::string>{"global"});
    EXPECT_EQ(l1->shareScope, ShareScope::Sm);
    ASSERT_TRUE(l1->serialCondition.has_value());
    EXPECT_EQ(l1->serialCondition->toString(), "warp{ address1 / 32 != address2 / 32 }");
    EXPECT_EQ(s->findMemory("1"), l1) << "ids name memories too";
}

TEST(MslParse, OmIsInferredAndListedAsAssumption) {
    auto s = parseSpec(minimalSpec(), "min.msl");
    ASSERT_TRUE(s) << s.message();
    const Memory* global = s->findMemory("global");
    EXPECT_EQ(global->upperLevels, std::vector<std::string>{"L1"});
    EXPECT_EQ(global->latency.write, 400.0) << "om write latency = read latency";
    bool found = false;
    for (const auto& a : s->assumptions) {
        if (a.text.find("upperLevels of 'global' inferred") != std::string::npos) {
            found = true;
            EXPECT_EQ(a.location.line, 37u);
        }
    }
    EXPECT_TRUE(found);
}

TEST(MslParse, UnknownsTakeDocumentedDefaults) {
    auto s = parseSpec(minimalSpec(), "min.msl");
    ASSERT_TRUE(s) << s.message();
    const Memory* shared = s->findMemory("shared");
    EXPECT_EQ(shared->concurrency.memoryBound, 0.2);
    EXPECT_EQ(shared->concurrency.computeBound, 0.2);
    EXPECT_FALSE(shared->dim.has_value());
    size_t unknowns = 0;
    for (const auto& a : s->assumptions) {
        unknowns += a.text.find("unknown") != std::string::npos ? 1 : 0;
    }
    EXPECT_EQ(unknowns, 2u) << "dim ? and concurrencyFactor ? of 'shared'";
}

TEST(MslParse, PlacesInferLevelsAndTakeStorageDefaults) {
    auto s = parseSpec(minimalSpec(), "min.msl");
    ASSERT_TRUE(s) << s.message();
    const PlaceEntry* g = s->findPlace(Place::Global);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->levels, (std::vector<std::string>{"L1", "global"}));
    EXPECT_EQ(g->path, "ldst");
    EXPECT_TRUE(g->writable);
    const PlaceEntry* sh = s->findPlace(Place::Shared);
    ASSERT_NE(sh, nullptr);
    EXPECT_EQ(sh->levels, std::vector<std::string>{"shared"});
    EXPECT_EQ(sh->capacity, 48u * 1024);
    EXPECT_EQ(sh->capacityScope, ShareScope::Block) << "defaults to the memory's scope";
    EXPECT_EQ(s->findPlace(Place::Texture), nullptr);
}

TEST(MslParse, CommentsUnitsHexAndSingleValues) {
    std::string text = minimalSpec();
    text += "# a comment\n// another\n";
    auto s = parseSpec(text, "x.msl");
    ASSERT_TRUE(s) << s.message();
    auto t = testing::minimalSpecWith(18, "    size = 0x20000;  # 128 KiB in hex");
    auto s2 = parseSpec(t, "x.msl");
    ASSERT_TRUE(s2) << s2.message();
    EXPECT_EQ(s2->findMemory("L1")->size, 131072u);
    auto t3 = testing::minimalSpecWith(21, "    latency = 30;");
    auto s3 = parseSpec(t3, "x.msl");
    ASSERT_TRUE(s3) << s3.message();
    EXPECT_EQ(s3->findMemory("L1")->latency.write, 30.0);
}

TEST(MslParse, RequestCostIsReadPrintedAndChecked) {
    auto plain = parseSpec(minimalSpec(), "min.msl");
    ASSERT_TRUE(plain) << plain.message();
    EXPECT_EQ(plain->findMemory("L1")->requestCost, 0.0) << "none unless given";
    EXPECT_EQ(printSpec(*plain).find("requestCost"), std::string::npos);

    auto s = parseSpec(testing::minimalSpecWith(26, "    serialCondition = warp{ address1 / 32 != "
                                                    "address2 / 32 }; requestCost = 12.5;"),
                       "cost.msl");
    ASSERT_TRUE(s) << s.message();
    EXPECT_EQ(s->findMemory("L1")->requestCost, 12.5);
    std::string printed = printSpec(*s);
    EXPECT_NE(printed.find("requestCost = 12.5;"), std::string::npos) << printed;
    auto again = parseSpec(printed, "printed.msl");
    ASSERT_TRUE(again) << again.message();
    EXPECT_EQ(again->findMemory("L1")->requestCost, 12.5);
    EXPECT_FALSE(equivalent(*plain, *s)) << "the cost is part of the memory";

    auto negative = parseSpec(testing::minimalSpecWith(26, "    requestCost = -1;"), "neg.msl");
    ASSERT_FALSE(negative);
    EXPECT_NE(negative.message().find("neg.msl:26:"), std::string::npos) << negative.message();
    EXPECT_NE(negative.message().find("'requestCost' expects a number in [0, "), std::string::npos)
        << negative.message();
    auto withUnit = parseSpec(testing::minimalSpecWith(26, "    requestCost = 4 KB;"), "u.msl");
    ASSERT_FALSE(withUnit) << "a cost has no unit";
}

TEST(MslParse, UnitOverlapIsReadPrintedAndChecked) {
    auto plain = parseSpec(minimalSpec(), "min.msl");
    ASSERT_TRUE(plain) << plain.message();
    EXPECT_EQ(plain->processor.unitOverlap, 0.0) << "units add up unless told";
    EXPECT_EQ(printSpec(*plain).find("unitOverlap"), std::string::npos);

    auto given = parseSpec(testing::minimalSpecWith(11, "    maxSharedPerBlock = 48 KB; "
                                                        "unitOverlap = 0.75;"),
                           "given.msl");
    ASSERT_TRUE(given) << given.message();
    EXPECT_EQ(given->processor.unitOverlap, 0.75);
    std::string printed = printSpec(*given);
    EXPECT_NE(printed.find("unitOverlap = 0.75;"), std::string::npos) << printed;
    auto again = parseSpec(printed, "printed.msl");
    ASSERT_TRUE(again) << again.message();
    EXPECT_TRUE(equivalent(*given, *again));
    EXPECT_FALSE(equivalent(*plain, *given)) << "the overlap is part of the processor";

    for (const char* bad : {"1.5", "-0.1", "64 KB", "om"}) {
        auto wrong =
            parseSpec(testing::minimalSpecWith(11, fmt::format("    maxSharedPerBlock = 48 KB; "
                                                               "unitOverlap = {};",
                                                               bad)),
                      "bad.msl");
        ASSERT_FALSE(wrong) << bad;
        EXPECT_NE(wrong.message().find("bad.msl:11:"), std::string::npos) << wrong.message();
        EXPECT_NE(wrong.message().find("unitOverlap"), std::string::npos) << wrong.message();
    }
}

TEST(MslParse, LaunchCostIsReadPrintedAndChecked) {
    auto plain = parseSpec(minimalSpec(), "min.msl");
    ASSERT_TRUE(plain) << plain.message();
    EXPECT_EQ(plain->findPlace(Place::Shared)->launchCost.memoryBound, 0.0) << "none unless given";
    EXPECT_EQ(printSpec(*plain).find("launchCost"), std::string::npos);

    auto pair = parseSpec(testing::minimalSpecWith(59, "place shared { memory = shared; path = "
                                                       "ldst; launchCost = (1000, 5e3); }"),
                          "pair.msl");
    ASSERT_TRUE(pair) << pair.message();
    EXPECT_EQ(pair->findPlace(Place::Shared)->launchCost.memoryBound, 1000.0);
    EXPECT_EQ(pair->findPlace(Place::Shared)->launchCost.computeBound, 5000.0);
    std::string printed = printSpec(*pair);
    EXPECT_NE(printed.find("launchCost = (1000, 5000);"), std::string::npos) << printed;
    auto again = parseSpec(printed, "printed.msl");
    ASSERT_TRUE(again) << again.message();
    EXPECT_TRUE(equivalent(*pair, *again));
    EXPECT_FALSE(equivalent(*plain, *pair)) << "the cost is part of the place";

    auto one = parseSpec(
        testing::minimalSpecWith(59, "place shared { memory = shared; launchCost = 70; }"),
        "one.msl");
    ASSERT_TRUE(one) << one.message();
    EXPECT_EQ(one->findPlace(Place::Shared)->launchCost.computeBound, 70.0) << "one number: both";

    auto negative = parseSpec(
        testing::minimalSpecWith(59, "place shared { memory = shared; launchCost = (1, -1); }"),
        "neg.msl");
    ASSERT_FALSE(negative);
    EXPECT_NE(negative.message().find("neg.msl:59:"), std::string::npos) << negative.message();
    EXPECT_NE(negative.message().find("'launchCost' expects a number in [0, "), std::string::npos)
        << negative.message();
    auto three = parseSpec(
        testing::minimalSpecWith(59, "place shared { memory = shared; launchCost = (1, 2, 3); }"),
        "three.msl");
    ASSERT_FALSE(three);
    EXPECT_NE(three.message().find("(memory-bound, compute-bound) or one number, found 3 items"),
              std::string::npos)
        << three.message();
}

TEST(MslParse, PrintParsesBackToTheSameSpec) {
    auto s = parseSpec(minimalSpec(), "min.msl");
    ASSERT_TRUE(s) << s.message();
    std::string printed = printSpec(*s);
    auto again = parseSpec(printed, "printed.msl");
    ASSERT_TRUE(again) << again.message() << "\n" << printed;
    EXPECT_TRUE(equivalent(*s, *again)) << printed;
    EXPECT_EQ(printSpec(*again), printed) << "printing is a fixed point";
}

TEST(MslParse, ReportsEveryErrorNotOnlyTheFirst) {
    std::string text = testing::minimalSpecWith(14, "    id = ;");
    // Two more independent mistakes further down.
    text += "memory bad { latency = (1, 2, 3); }\n";
    text += "place nowhere { memory = global; }\n";
    auto s = parseSpec(text, "many.msl");
    ASSERT_FALSE(s);
    EXPECT_GE(s.diagnostics().errorCount(), 3u) << s.message();
    EXPECT_NE(s.message().find("many.msl:14:10"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("many.msl:60:"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("many.msl:61:7"), std::string::npos) << s.message();
}

TEST(MslParse, DeepNestingIsAnErrorNotACrash) {
    std::string deep(5000, '(');
    auto text = testing::minimalSpecWith(26, "    serialCondition = warp{ " + deep + " };");
    auto s = parseSpec(text, "deep.msl");
    ASSERT_FALSE(s);
    EXPECT_NE(s.message().find("nesting deeper"), std::string::npos) << s.message();
}

TEST(MslParse, EmptyFileSaysWhatIsMissing) {
    auto s = parseSpec("", "empty.msl");
    ASSERT_FALSE(s);
    EXPECT_NE(s.message().find("empty.msl:1:1: error: no processor entry"), std::string::npos)
        << s.message();
}

TEST(LoadSpec, UnknownNameListsBuiltins) {
    auto s = loadSpec("h1000");
    ASSERT_FALSE(s);
    EXPECT_NE(s.message().find("h100"), std::string::npos) << s.message();
}

} // namespace
} // namespace memplace::spec

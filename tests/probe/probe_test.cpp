// From measurements to a spec: parsing, the written MSL, and the comparison with a built-in.
#include "common/file_io.h"
#include "probe/probe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <sstream>

namespace memplace::probe {
namespace {

std::string dataFile(const std::string& name) {
    return std::string(MEMPLACE_SOURCE_DIR) + "/tests/probe/data/" + name;
}

Measurements load(const std::string& name) {
    auto text = readFile(dataFile(name));
    EXPECT_TRUE(text) << text.message();
    auto m = parseMeasurements(text ? *text : std::string("{}"), name);
    EXPECT_TRUE(m) << m.message();
    return m ? *m : Measurements{};
}

TEST(ParseMeasurements, RejectsErrorsAndOtherJson) {
    auto err = parseMeasurements(R"({"error": "no CUDA device", "no_device": true})", "run");
    ASSERT_FALSE(err);
    EXPECT_NE(err.message().find("no CUDA device"), std::string::npos);
    EXPECT_FALSE(parseMeasurements("not json", "x"));
    EXPECT_FALSE(parseMeasurements("[1, 2]", "x"));
    auto schema = parseMeasurements(R"({"schema": "other", "version": 1})", "x");
    ASSERT_FALSE(schema);
    EXPECT_NE(schema.message().find("schema"), std::string::npos);
    EXPECT_FALSE(parseMeasurements(
        R"({"schema": "memplace-probe-measurements", "version": 2, "device": {}})", "x"));
    EXPECT_FALSE(parseMeasurements(
        R"({"schema": "memplace-probe-measurements", "version": 1, "device": {"sms": 0}})", "x"));
}

TEST(ParseMeasurements, ReadsTheSyntheticFile) {
    auto m = load("synthetic_measurements.json");
    EXPECT_EQ(m.device.name, "Synthetic GPU");
    EXPECT_EQ(m.device.sms, 132u);
    EXPECT_EQ(m.device.l2Bytes, 50u << 20);
    EXPECT_EQ(m.latency.at("l1_hit").cycles, 32);
    EXPECT_FALSE(m.sweeps.at("l1_capacity").points.empty());
    EXPECT_EQ(m.strides.size(), 4u);
    EXPECT_FALSE(m.sharedBanks.points.empty());
    EXPECT_EQ(m.constantLanes.at("spacing4").size(), 6u);
    EXPECT_GT(m.kernels.size(), 10u);
    ASSERT_TRUE(m.cycles("dram"));
    EXPECT_FALSE(m.cycles("no_such_latency"));
}

TEST(Analyze, RecoversTheSyntheticParameters) {
    auto r = analyze(load("synthetic_measurements.json"));
    ASSERT_TRUE(r) << r.message();
    // The parameters make_synthetic.py generated the file from.
    EXPECT_EQ(roundCapacity(r->l1.bytes), 240u * 1024);
    EXPECT_EQ(roundCapacity(r->texL1.bytes), 240u * 1024);
    EXPECT_EQ(roundCapacity(r->constL1.bytes), 2048u);
    EXPECT_EQ(roundCapacity(r->constL15.bytes), 32u * 1024);
    EXPECT_NEAR(r->l2.bytes, 48 << 20, 0.05 * (48 << 20));
    EXPECT_EQ(r->l1Fetch.bytes, 32u);
    EXPECT_EQ(r->l2Fetch.bytes, 64u);
    EXPECT_EQ(r->texFetch.bytes, 32u);
    EXPECT_EQ(r->constFetch.first, 64u);
    EXPECT_EQ(r->constFetch.second, 256u);
    EXPECT_EQ(r->banks.banks, 32u);
    EXPECT_NEAR(r->clockMHz, 1755, 1e-9);
    const std::map<std::string, double> truth = {
        {"registers", 0.00042}, {"shared", 0.00031},  {"L1", 0.00011}, {"texL1", 0.00014},
        {"constL1", 0.0021},    {"constL15", 0.0009}, {"L2", 0.00005}, {"global", 0.000037}};
    for (const auto& [mem, a] : truth) {
        EXPECT_NEAR(r->concurrency.at(mem).first / a, 1, 0.03) << mem;
        if (mem != "registers") {
            EXPECT_NEAR(r->concurrency.at(mem).second / (3 * a), 1, 0.03) << mem;
        }
    }
    EXPECT_EQ(r->concurrency.at("L2persist"), r->concurrency.at("L2"));
    EXPECT_EQ(r->concurrency.at("constant"), r->concurrency.at("global"));
    // The clock ran below its peak: said in a warning.
    EXPECT_TRUE(std::any_of(r->warnings.begin(), r->warnings.end(), [](const std::string& w) {
        return w.find("below its peak") != std::string::npos;
    }));
}

/// The spec `analyze` writes, checked against the built-in h100's structure.
void expectSameStructureAsH100(const spec::Spec& s) {
    auto h100 = spec::loadSpec("h100");
    ASSERT_TRUE(h100) << h100.message();
    ASSERT_EQ(s.memories.size(), h100->memories.size());
    for (const auto& m : h100->memories) {
        const spec::Memory* p = s.findMemory(m.name);
        ASSERT_NE(p, nullptr) << m.name;
        EXPECT_EQ(p->id, m.id) << m.name;
        EXPECT_EQ(p->softwareManaged, m.softwareManaged) << m.name;
        EXPECT_EQ(p->writable, m.writable) << m.name;
        EXPECT_EQ(p->upperLevels, m.upperLevels) << m.name;
        EXPECT_EQ(p->lowerLevels, m.lowerLevels) << m.name;
        EXPECT_EQ(p->shareScope, m.shareScope) << m.name;
        EXPECT_EQ(p->unit, m.unit) << m.name;
        EXPECT_EQ(p->serialCondition.has_value(), m.serialCondition.has_value()) << m.name;
    }
    ASSERT_EQ(s.places.size(), h100->places.size());
    for (const auto& pl : h100->places) {
        const spec::PlaceEntry* p = s.findPlace(pl.place);
        ASSERT_NE(p, nullptr) << placeName(pl.place);
        EXPECT_EQ(p->memory, pl.memory);
        EXPECT_EQ(p->levels, pl.levels);
        EXPECT_EQ(p->path, pl.path);
        EXPECT_EQ(p->writable, pl.writable);
        EXPECT_EQ(p->dims, pl.dims);
        EXPECT_EQ(p->capacityScope, pl.capacityScope);
    }
}

/// Every line that gives a number (ids aside) carries a comment.
void expectEveryNumberCommented(const std::string& msl) {
    std::istringstream in(msl);
    std::string line;
    int numbered = 0;
    // A digit that does not continue a name (L2 is a name, 32 B a number).
    const std::regex number("(^|[^A-Za-z0-9_])[0-9]");
    while (std::getline(in, line)) {
        auto hash = line.find('#');
        std::string code = line.substr(0, hash);
        if (code.find(" = ") == std::string::npos || code.find("id = ") != std::string::npos) {
            continue;
        }
        // Conditions are formulas, not measurements.
        code = std::regex_replace(code, std::regex("(warp|block)\\{[^}]*\\}"), "");
        if (std::regex_search(code, number)) {
            ++numbered;
            EXPECT_NE(hash, std::string::npos) << "no comment: " << line;
        }
    }
    EXPECT_GT(numbered, 40);
}

TEST(Analyze, WritesACheckedSpecShapedLikeTheBuiltIn) {
    auto r = analyze(load("synthetic_measurements.json"));
    ASSERT_TRUE(r) << r.message();
    auto s = spec::parseSpec(r->msl, "probed.msl");
    ASSERT_TRUE(s) << s.message() << "\n" << r->msl;
    expectSameStructureAsH100(*s);
    expectEveryNumberCommented(r->msl);
    EXPECT_EQ(s->processor.sms, 132u);
    EXPECT_EQ(s->processor.clockMHz, 1755);
    EXPECT_EQ(s->processor.maxSharedPerBlock, 232448u);
    EXPECT_EQ(s->findMemory("L1")->size, 240u * 1024);
    EXPECT_EQ(s->findMemory("L1")->latency.read, 32);
    EXPECT_EQ(s->findMemory("L2")->size, 50u << 20);
    EXPECT_EQ(s->findMemory("L2")->latency.read, 262);
    EXPECT_EQ(s->findMemory("global")->latency.read, 495);
    EXPECT_EQ(s->findMemory("shared")->banks, 32u);
    EXPECT_EQ(s->findMemory("L2persist")->size, 39321600u);
    EXPECT_EQ(s->findPlace(Place::Shared)->capacity, 232448u);
    // Canonical printing round-trips.
    auto again = spec::parseSpec(spec::printSpec(*s), "printed.msl");
    ASSERT_TRUE(again) << again.message();
    EXPECT_TRUE(spec::equivalent(*s, *again));
}

TEST(Analyze, MissingLatencyIsAnError) {
    auto m = load("synthetic_measurements.json");
    m.latency.erase("dram_via_l1");
    m.latency.erase("const_l2");
    auto r = analyze(m);
    ASSERT_FALSE(r);
    EXPECT_NE(r.message().find("dram_via_l1"), std::string::npos);
    EXPECT_NE(r.message().find("const_l2"), std::string::npos);
}

TEST(Analyze, FallsBackWhereASweepIsMissing) {
    auto m = load("synthetic_measurements.json");
    m.sweeps.clear();
    m.strides.clear();
    m.sharedBanks.points.clear();
    m.kernels.clear();
    m.clockMHz.clear();
    auto r = analyze(m);
    ASSERT_TRUE(r) << r.message();
    EXPECT_NEAR(r->clockMHz, 1980, 1e-9);
    EXPECT_FALSE(r->warnings.empty());
    auto s = spec::parseSpec(r->msl, "probed.msl");
    ASSERT_TRUE(s) << s.message() << r->msl;
    expectSameStructureAsH100(*s);
    EXPECT_EQ(s->findMemory("L1")->blockSize, 32u);
    EXPECT_EQ(s->findMemory("shared")->banks, 32u);
    EXPECT_EQ(s->findMemory("global")->concurrency.memoryBound, 0.1);
}

TEST(Analyze, JsonAndSummaryCarryTheFits) {
    auto r = analyze(load("synthetic_measurements.json"));
    ASSERT_TRUE(r) << r.message();
    auto j = toJson(*r);
    for (const char* key :
         {"device", "latency_cycles", "capacity", "fetch_granularity", "shared_banks", "constant",
          "bandwidth", "concurrency_fit", "concurrency", "warnings", "spec", "clock_mhz"}) {
        EXPECT_TRUE(j.contains(key)) << key;
    }
    EXPECT_EQ(j["shared_banks"]["banks"], 32);
    EXPECT_EQ(j["spec"], r->msl);
    std::string text = summaryText(*r);
    EXPECT_NE(text.find("Synthetic GPU"), std::string::npos);
    EXPECT_NE(text.find("bandwidth"), std::string::npos);
}

// Recorded on the H100 of the GPU machines (NVIDIA H100 80GB HBM3, driver 580.159.04, CUDA 13.0)
// on 2026-11-22 by `memplace probe --save-measurements`; see decision 010.
TEST(RecordedH100, FitsGiveTheMeasuredHierarchy) {
    auto r = analyze(load("h100_measurements.json"));
    ASSERT_TRUE(r) << r.message();
    EXPECT_TRUE(r->warnings.empty()) << r->warnings.front();
    EXPECT_EQ(r->clockMHz, 1980);
    EXPECT_EQ(roundCapacity(r->l1.bytes), 232u * 1024);
    EXPECT_EQ(roundCapacity(r->texL1.bytes), 240u * 1024);
    EXPECT_EQ(r->l1.largestFit, 232u * 1024);
    EXPECT_EQ(roundCapacity(r->constL1.bytes), 2048u);
    EXPECT_TRUE(r->constL15.lowerBound);
    EXPECT_EQ(r->constL15.bytes, 65536);
    EXPECT_NEAR(r->l2.bytes, 34.5 * (1 << 20), 2 << 20); // one SM's view of the 50 MB L2
    EXPECT_EQ(r->l1Fetch.bytes, 32u);
    EXPECT_EQ(r->texFetch.bytes, 32u);
    EXPECT_EQ(r->l2Fetch.bytes, 64u);
    EXPECT_EQ(r->constFetch.first, 64u);
    EXPECT_EQ(r->constFetch.second, 256u);
    EXPECT_EQ(r->banks.banks, 32u);
    EXPECT_NEAR(r->banks.perWay, 2, 0.1);
    EXPECT_NEAR(r->constLanes.slope, 11, 0.5); // cycles per further distinct constant address
    // Every calibration kernel is predicted within 10% by the fitted path model.
    for (const auto* f : {&r->memoryBoundFit, &r->computeBoundFit}) {
        EXPECT_GE(f->kernels.size(), 8u);
        for (const auto& k : f->kernels) {
            EXPECT_NEAR(k.predictedCycles / k.measuredCycles, 1, 0.1) << k.name;
        }
    }
    // The memory-bound factors order the levels by their cost per transaction at full load.
    EXPECT_LT(r->concurrency.at("L2").first, r->concurrency.at("L1").first);
    EXPECT_LT(r->concurrency.at("L1").first, r->concurrency.at("shared").first);
    EXPECT_LT(r->concurrency.at("shared").first, r->concurrency.at("constL1").first);
    for (const auto& [mem, ab] : r->concurrency) {
        EXPECT_LE(ab.first, ab.second) << mem << ": compute-bound costs more per transaction";
    }
}

TEST(RecordedH100, WritesTheCommittedSpec) {
    auto r = analyze(load("h100_measurements.json"));
    ASSERT_TRUE(r) << r.message();
    auto s = spec::parseSpec(r->msl, "h100_probed.msl");
    ASSERT_TRUE(s) << s.message();
    expectSameStructureAsH100(*s);
    expectEveryNumberCommented(r->msl);
    EXPECT_EQ(s->findMemory("shared")->latency.read, 23);
    EXPECT_EQ(s->findMemory("L1")->latency.read, 32);
    EXPECT_EQ(s->findMemory("texL1")->latency.read, 88);
    EXPECT_EQ(s->findMemory("constL1")->latency.read, 28);
    EXPECT_EQ(s->findMemory("constL15")->latency.read, 98);
    EXPECT_EQ(s->findMemory("L2")->latency.read, 328);
    EXPECT_EQ(s->findMemory("global")->latency.read, 689);
    EXPECT_EQ(s->findMemory("constant")->latency.read, 759);
    EXPECT_EQ(s->findMemory("L2persist")->size, 32768000u);
    // The output format, byte for byte. After a deliberate change, regenerate with
    //   build/bin/memplace probe --measurements tests/probe/data/h100_measurements.json \
    //       -o tests/probe/data/h100_probed.msl --force
    auto golden = readFile(dataFile("h100_probed.msl"));
    ASSERT_TRUE(golden) << golden.message();
    EXPECT_EQ(r->msl, *golden);
}

// Recorded on the H200 of the GPU machines (NVIDIA H200, driver 580.159.04, CUDA 13.0) on
// 2026-11-26 by memplace-probe-gpu; see decision 028. The built-in h200 spec carries what it
// measured, as h100 carries the H100's.
TEST(RecordedH200, TheBuiltInSpecCarriesTheMeasuredLatenciesAndSetAside) {
    auto r = analyze(load("h200_measurements.json"));
    ASSERT_TRUE(r) << r.message();
    EXPECT_TRUE(r->warnings.empty()) << r->warnings.front();
    auto probed = spec::parseSpec(r->msl, "h200_probed.msl");
    ASSERT_TRUE(probed) << probed.message();
    auto builtin = spec::loadSpec("h200");
    ASSERT_TRUE(builtin) << builtin.message();
    for (const char* mem : {"shared", "L1", "texL1", "constL1", "constL15", "L2", "L2persist",
                            "global", "constant"}) {
        ASSERT_NE(probed->findMemory(mem), nullptr) << mem;
        EXPECT_EQ(builtin->findMemory(mem)->latency.read, probed->findMemory(mem)->latency.read)
            << mem;
    }
    EXPECT_EQ(builtin->findMemory("L2persist")->size, 39321600u); // the device's maximum
    EXPECT_EQ(probed->findMemory("L2persist")->size, 39321600u);
    EXPECT_EQ(builtin->findMemory("L2")->size, probed->findMemory("L2")->size);
}

TEST(CompareSpecs, SameSpecHasNoDifferencesAndH100DiffersInNumbers) {
    auto r = analyze(load("synthetic_measurements.json"));
    ASSERT_TRUE(r) << r.message();
    auto s = spec::parseSpec(r->msl, "probed.msl");
    ASSERT_TRUE(s);
    EXPECT_TRUE(compareSpecs(*s, *s).empty());
    auto h100 = spec::loadSpec("h100");
    ASSERT_TRUE(h100);
    auto diffs = compareSpecs(*s, *h100);
    auto has = [&](const std::string& entry, const std::string& field) {
        return std::any_of(diffs.begin(), diffs.end(), [&](const SpecDifference& d) {
            return d.entry == entry && d.field == field;
        });
    };
    EXPECT_TRUE(has("texL1", "latency read"));
    EXPECT_TRUE(has("L2", "blockSize"));
    EXPECT_FALSE(has("L2", "lowerLevels")); // same structure
    EXPECT_FALSE(has("place global", "levels"));
    for (const auto& d : diffs) {
        EXPECT_NE(d.field, "(memory)");
        EXPECT_NE(d.field, "(place)");
    }
    // A memory one spec lacks is listed.
    spec::Spec fewer = *s;
    fewer.memories.pop_back();
    EXPECT_FALSE(compareSpecs(fewer, *s).empty());
}

} // namespace
} // namespace memplace::probe

// The on-chip analyses (kernelinfo/onchip.h, docs/onchip.md): golden files for the kernels of
// tests/frontend/kernels/onchip/ (each kernel's sites in brief and its "onchip" facts; the
// KernelInfo JSON reads back equal), and unit tests of the decisions on hand-built KernelInfo:
// privacy under block bounds, strided slots, loop-weighted counts, the barrier verdict and the
// JSON form.
#include "frontend/frontend.h"
#include "frontend/source_prep.h"
#include "kernelinfo/kernel_info_json.h"
#include "kernelinfo/onchip_json.h"
#include "tests/common/golden.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>

namespace memplace::kernelinfo {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> onchipPrograms() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(fs::path(MEMPLACE_SOURCE_DIR) / "tests" /
                                                "frontend" / "kernels" / "onchip")) {
        if (e.path().extension() == ".cu") {
            names.push_back(e.path().stem().string());
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

/// A kernel's sites in brief (what the facts' site ids and texts refer to) and its facts.
nlohmann::ordered_json briefJson(const FileInfo& info) {
    nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
    for (const auto& k : info.kernels) {
        nlohmann::ordered_json jk;
        jk["kernel"] = k.instantiation;
        if (k.blockDim) {
            jk["block_dim"] = *k.blockDim;
        }
        std::vector<std::string> sites;
        for (const auto& s : k.sites) {
            sites.push_back(fmt::format("{} {}[{}] {} {}", s.id, s.array, s.index.text,
                                        accessModeName(s.access), formatLocation(s.location)));
        }
        jk["sites"] = sites;
        jk["onchip"] = onChipJson(k.onchip, k.name, info.file);
        kernels.push_back(std::move(jk));
    }
    return {{"file", info.file}, {"kernels", kernels}};
}

class OnChipGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(OnChipGolden, MatchesReviewedFacts) {
    if (!frontend::findCudaInstallation({}).ok()) {
        GTEST_SKIP() << "no CUDA installation";
    }
    frontend::AnalyzeOptions o;
    o.file = "tests/frontend/kernels/onchip/" + GetParam() + ".cu";
    auto info = frontend::analyzeFile(o);
    ASSERT_TRUE(info.ok()) << info.message();
    const fs::path file = fs::path(MEMPLACE_SOURCE_DIR) / "tests" / "frontend" / "golden" /
                          "onchip" / (GetParam() + ".json");
    golden::expectMatches(file, formatJson(briefJson(*info)));
    // The whole KernelInfo, facts included, reads back from its JSON.
    auto back = fileInfoFromJson(nlohmann::json::parse(formatJson(toJson(*info))));
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(*back, *info);
}

INSTANTIATE_TEST_SUITE_P(Kernels, OnChipGolden, ::testing::ValuesIn(onchipPrograms()),
                         [](const auto& p) { return p.param; });

// ---- unit tests on hand-built KernelInfo ----------------------------------------------------

AffineTerm term(const std::string& var, int64_t c) {
    return {var, Poly::constant(c)};
}

/// A site of `array` with an affine index.
Site site(int id, const std::string& array, AccessMode access, std::vector<AffineTerm> terms,
          int64_t offset = 0, std::vector<int> loops = {}) {
    Site s;
    s.id = id;
    s.array = array;
    s.access = access;
    s.location = {"", static_cast<uint32_t>(10 + id), 5};
    s.index.kind = IndexKind::Affine;
    s.index.text = fmt::format("i{}", id);
    s.index.terms = std::move(terms);
    s.index.offset = Poly::constant(offset);
    s.loops = std::move(loops);
    return s;
}

KernelInfo kernelWith(std::vector<Site> sites, std::optional<std::array<int64_t, 3>> block) {
    KernelInfo k;
    k.name = "k";
    k.blockDim = block;
    ArrayInfo s;
    s.name = "s";
    s.kind = ArrayKind::Shared;
    s.extent.bytes = 4096;
    k.arrays.push_back(s);
    k.sites = std::move(sites);
    return k;
}

const SharedArrayFacts& factsOf(KernelInfo& k) {
    computeSharedFacts(k);
    EXPECT_EQ(k.onchip.shared.size(), 1u);
    return k.onchip.shared.front();
}

TEST(OnChipPrivacy, OneSlotPerThreadIsPrivateOnlyForAKnownOneDimensionalBlock) {
    std::vector<Site> sites = {site(0, "s", AccessMode::Write, {term("threadIdx.x", 1)}),
                               site(1, "s", AccessMode::Read, {term("threadIdx.x", 1)})};
    KernelInfo known = kernelWith(sites, std::array<int64_t, 3>{64, 1, 1});
    EXPECT_TRUE(factsOf(known).threadPrivate) << factsOf(known).privacy;
    EXPECT_TRUE(factsOf(known).constantIndices);

    KernelInfo unknown = kernelWith(sites, std::nullopt);
    const SharedArrayFacts& f = factsOf(unknown);
    EXPECT_FALSE(f.threadPrivate);
    EXPECT_NE(f.privacy.find("blockDim.y is not known to be 1"), std::string::npos) << f.privacy;
    EXPECT_NE(f.privacy.find("would be private if blockDim.y and blockDim.z were 1"),
              std::string::npos)
        << f.privacy;
}

TEST(OnChipPrivacy, StridedSlotsArePrivateWhenTheStrideCoversTheBlock) {
    KernelInfo k;
    k.loops.push_back({});
    k.loops[0].var = "j";
    k.loops[0].tripCount = 4;
    auto slots = [&](int64_t stride) {
        return std::vector<Site>{
            site(0, "s", AccessMode::Write, {term("threadIdx.x", 1), term("j", stride)}, 0, {0}),
            site(1, "s", AccessMode::Read, {term("threadIdx.x", 1), term("j", stride)}, 0, {0})};
    };
    KernelInfo fits = kernelWith(slots(32), std::array<int64_t, 3>{32, 1, 1});
    fits.loops = k.loops;
    EXPECT_TRUE(factsOf(fits).threadPrivate) << factsOf(fits).privacy;
    EXPECT_TRUE(factsOf(fits).constantIndices) << factsOf(fits).indexReason;
    EXPECT_EQ(factsOf(fits).reads, 4u);
    EXPECT_EQ(factsOf(fits).writes, 4u);

    // A 64-thread block: thread t and thread t + 32 meet at slot j and j + 1.
    KernelInfo overlaps = kernelWith(slots(32), std::array<int64_t, 3>{64, 1, 1});
    overlaps.loops = k.loops;
    EXPECT_FALSE(factsOf(overlaps).threadPrivate);
    EXPECT_NE(factsOf(overlaps).privacy.find("threads 32 apart in x"), std::string::npos)
        << factsOf(overlaps).privacy;
}

TEST(OnChipPrivacy, NeighboursAndIndirectIndicesAreNotPrivate) {
    KernelInfo nb = kernelWith({site(0, "s", AccessMode::Write, {term("threadIdx.x", 1)}, 1),
                                site(1, "s", AccessMode::Read, {term("threadIdx.x", 1)})},
                               std::array<int64_t, 3>{128, 1, 1});
    EXPECT_FALSE(factsOf(nb).threadPrivate);
    EXPECT_NE(factsOf(nb).privacy.find("threads 1 apart in x"), std::string::npos);

    // Even and odd elements of one thread: the same thread part, offsets 2 apart in parity.
    KernelInfo pairs = kernelWith({site(0, "s", AccessMode::Write, {term("threadIdx.x", 2)}),
                                   site(1, "s", AccessMode::Write, {term("threadIdx.x", 2)}, 1)},
                                  std::array<int64_t, 3>{128, 1, 1});
    EXPECT_TRUE(factsOf(pairs).threadPrivate) << factsOf(pairs).privacy;

    Site indirect = site(0, "s", AccessMode::Read, {});
    indirect.index.kind = IndexKind::Indirect;
    KernelInfo ind = kernelWith({indirect}, std::array<int64_t, 3>{128, 1, 1});
    EXPECT_FALSE(factsOf(ind).threadPrivate);
    EXPECT_FALSE(factsOf(ind).constantIndices);
}

TEST(OnChipPrivacy, TwoDimensionalTilesAndSymbolicStrides) {
    auto tile = [](int64_t row) {
        return std::vector<Site>{
            site(0, "s", AccessMode::Write, {term("threadIdx.x", 1), term("threadIdx.y", row)})};
    };
    KernelInfo fits = kernelWith(tile(16), std::array<int64_t, 3>{16, 16, 1});
    EXPECT_TRUE(factsOf(fits).threadPrivate) << factsOf(fits).privacy;
    KernelInfo wide = kernelWith(tile(16), std::array<int64_t, 3>{32, 16, 1});
    EXPECT_FALSE(factsOf(wide).threadPrivate);

    // blockDim.x * threadIdx.y + threadIdx.x with no launch: the stride is not known.
    Site linear = site(0, "s", AccessMode::Write, {term("threadIdx.x", 1)});
    linear.index.terms.push_back({"threadIdx.y", Poly::symbol("blockDim.x")});
    KernelInfo sym = kernelWith({linear}, std::nullopt);
    EXPECT_FALSE(factsOf(sym).threadPrivate);
    EXPECT_NE(factsOf(sym).privacy.find("not known before launch"), std::string::npos)
        << factsOf(sym).privacy;
    // With the launch's block the same index is private.
    KernelInfo launched = kernelWith({linear}, std::array<int64_t, 3>{8, 8, 1});
    EXPECT_TRUE(factsOf(launched).threadPrivate) << factsOf(launched).privacy;
}

TEST(OnChipPrivacy, UnknownBlocksAreSearchedOverEveryShape) {
    // tx + 16*ty + 256*tz: private for a 16 x 16 x 4 block, but a block may be 32 wide, where
    // thread (16, 0, 0) meets thread (0, 1, 0).
    std::vector<Site> sites = {
        site(0, "s", AccessMode::Write,
             {term("threadIdx.x", 1), term("threadIdx.y", 16), term("threadIdx.z", 256)})};
    KernelInfo unknown = kernelWith(sites, std::nullopt);
    EXPECT_FALSE(factsOf(unknown).threadPrivate) << factsOf(unknown).privacy;
    KernelInfo known = kernelWith(sites, std::array<int64_t, 3>{16, 16, 4});
    EXPECT_TRUE(factsOf(known).threadPrivate) << factsOf(known).privacy;
}

TEST(OnChipPrivacy, InvalidLaunchesFallBackToTheHardwareBounds) {
    KernelInfo k = kernelWith({site(0, "s", AccessMode::Write, {term("threadIdx.x", 1)})},
                              std::array<int64_t, 3>{1 << 20, 1 << 20, 1 << 20});
    EXPECT_FALSE(blockBounds(k).exact);
    EXPECT_FALSE(factsOf(k).threadPrivate);
    k.blockDim = std::array<int64_t, 3>{0, 1, 1};
    EXPECT_FALSE(blockBounds(k).exact);
}

TEST(OnChipCounts, UnknownTripCountsWeighFourAndAreMarked) {
    KernelInfo k =
        kernelWith({site(0, "s", AccessMode::ReadWrite, {term("threadIdx.x", 1)}, 0, {0, 1})},
                   std::array<int64_t, 3>{32, 1, 1});
    k.loops.resize(2);
    k.loops[0].id = 0;
    k.loops[0].tripCount = 8;
    k.loops[1].id = 1;
    const SharedArrayFacts& f = factsOf(k);
    EXPECT_EQ(f.reads, 8u * kUnknownTripWeight);
    EXPECT_EQ(f.writes, 8u * kUnknownTripWeight);
    EXPECT_TRUE(f.estimated);
}

TEST(OnChipIndices, LoopsWithoutConstantTripsAndBlockIndicesAreDynamic) {
    KernelInfo k = kernelWith(
        {site(0, "s", AccessMode::Write, {term("threadIdx.x", 1), term("k", 32)}, 0, {0})},
        std::array<int64_t, 3>{32, 1, 1});
    k.loops.resize(1);
    k.loops[0].var = "k"; // no trip count
    const SharedArrayFacts& f = factsOf(k);
    EXPECT_TRUE(f.threadPrivate) << f.privacy;
    EXPECT_FALSE(f.constantIndices);
    EXPECT_NE(f.indexReason.find("no constant trip count"), std::string::npos) << f.indexReason;

    KernelInfo b = kernelWith(
        {site(0, "s", AccessMode::Write, {term("blockIdx.x", 1), term("threadIdx.x", 1)})},
        std::array<int64_t, 3>{32, 1, 1});
    EXPECT_FALSE(factsOf(b).constantIndices);
}

TEST(OnChipBarrier, NeededOnlyForACrossThreadDependence) {
    KernelInfo k = kernelWith({site(0, "s", AccessMode::Write, {term("threadIdx.x", 1)}),
                               site(1, "s", AccessMode::Read, {term("threadIdx.x", 1)}),
                               site(2, "s", AccessMode::Read, {term("threadIdx.x", 1)}, 1)},
                              std::array<int64_t, 3>{64, 1, 1});
    BarrierInfo own;
    judgeBarrier(k, {{0}, {1}, ""}, own);
    EXPECT_FALSE(own.needed) << own.reason;
    BarrierInfo neighbour;
    judgeBarrier(k, {{0}, {2}, ""}, neighbour);
    EXPECT_TRUE(neighbour.needed);
    BarrierInfo war; // read of the neighbour before, write after
    judgeBarrier(k, {{2}, {0}, ""}, war);
    EXPECT_TRUE(war.needed);
    BarrierInfo reads; // reads on both sides order nothing
    judgeBarrier(k, {{1, 2}, {1, 2}, ""}, reads);
    EXPECT_FALSE(reads.needed) << reads.reason;
    BarrierInfo opaque;
    judgeBarrier(k, {{0}, {1}, "a call at 3:4 whose body is not visible"}, opaque);
    EXPECT_TRUE(opaque.needed);
    EXPECT_EQ(opaque.reason, "a call at 3:4 whose body is not visible");

    k.hazards.push_back({HazardKind::Stored, "s", "", {"", 7, 3}, "stored", {}});
    BarrierInfo hidden;
    judgeBarrier(k, {{0}, {1}, ""}, hidden);
    EXPECT_TRUE(hidden.needed);
}

TEST(OnChipBarrier, GlobalArraysMayAliasUnlessRestrict) {
    KernelInfo k;
    k.name = "k";
    k.blockDim = std::array<int64_t, 3>{64, 1, 1};
    for (const char* name : {"in", "out"}) {
        ArrayInfo a;
        a.name = name;
        a.kind = ArrayKind::Parameter;
        k.arrays.push_back(a);
    }
    k.sites = {site(0, "in", AccessMode::Read, {term("threadIdx.x", 1)}),
               site(1, "out", AccessMode::Write, {term("threadIdx.x", 1)})};
    BarrierInfo may;
    judgeBarrier(k, {{0}, {1}, ""}, may);
    EXPECT_TRUE(may.needed);
    EXPECT_NE(may.reason.find("neither is __restrict__"), std::string::npos) << may.reason;
    k.arrays[0].isRestrict = true;
    BarrierInfo restricted;
    judgeBarrier(k, {{0}, {1}, ""}, restricted);
    EXPECT_FALSE(restricted.needed) << restricted.reason;
}

TEST(OnChipInvariantLoads, ReportsTheDimensionsAnIndexDoesNotUse) {
    KernelInfo k =
        kernelWith({site(0, "s", AccessMode::Read, {term("threadIdx.y", 16)}),
                    site(1, "s", AccessMode::Read, {term("threadIdx.x", 1)}),
                    site(2, "s", AccessMode::Write, {}), site(3, "s", AccessMode::Read, {}, 3)},
                   std::array<int64_t, 3>{16, 16, 1});
    computeInvariantLoads(k);
    ASSERT_EQ(k.onchip.invariantLoads.size(), 3u);
    EXPECT_EQ(k.onchip.invariantLoads[0], (InvariantLoad{0, "s", "x"}));
    EXPECT_EQ(k.onchip.invariantLoads[1], (InvariantLoad{1, "s", "y"}));
    EXPECT_EQ(k.onchip.invariantLoads[2], (InvariantLoad{3, "s", "xy"}));
    // A 1-D block has no y dimension to coarsen along.
    k.blockDim = std::array<int64_t, 3>{256, 1, 1};
    computeInvariantLoads(k);
    ASSERT_EQ(k.onchip.invariantLoads.size(), 2u);
    EXPECT_EQ(k.onchip.invariantLoads[0].dims, "x");
}

TEST(OnChipJson, RoundTripsAndStaysOptional) {
    OnChipFacts f;
    f.maxThreads = 256;
    f.externShared = {"buf"};
    f.shared.push_back({"s", true, "why", false, "dynamic", 12, 4, true});
    f.barriers.push_back({{"h.cuh", 9, 5}, "helper", false, "nothing crosses"});
    f.barriers.push_back({{"", 20, 3}, "k", true, "dependence"});
    f.invariantLoads.push_back({3, "a", "xy"});
    auto j = onChipJson(f, "k", "main.cu");
    EXPECT_FALSE(j["barriers"][1].contains("function"));
    EXPECT_EQ(onChipFromJson(nlohmann::json::parse(j.dump()), "k"), f);

    KernelInfo k;
    k.name = "plain";
    EXPECT_FALSE(toJson(k, "main.cu").contains("onchip"));
}

} // namespace
} // namespace memplace::kernelinfo

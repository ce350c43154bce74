// The feasibility rules: every excluded place has a reason; the home place stays.
#include "kernelinfo/feasibility.h"

#include <gtest/gtest.h>

namespace memplace::kernelinfo {
namespace {

ArrayInfo param(const char* name, int index, AccessMode mode, uint64_t elementSize = 4) {
    ArrayInfo a;
    a.name = name;
    a.paramIndex = index;
    a.elementType = elementSize == 4 ? "float" : "S";
    a.elementSize = elementSize;
    a.mode = mode;
    return a;
}

Site site(int id, const char* array, AccessMode access, uint32_t line) {
    Site s;
    s.id = id;
    s.array = array;
    s.access = access;
    s.location = {"", line, 5};
    return s;
}

void expectConsistent(const KernelInfo& k) {
    for (const auto& a : k.arrays) {
        EXPECT_TRUE(a.feasible.contains(homePlace(a.kind))) << a.name;
        for (Place p : kAllPlaces) {
            EXPECT_NE(a.feasible.contains(p), a.excluded.count(p) == 1)
                << a.name << " " << placeName(p);
        }
        for (const auto& [p, reason] : a.excluded) {
            EXPECT_FALSE(reason.empty()) << a.name << " " << placeName(p);
        }
    }
}

TEST(Feasibility, ReadOnlyArrayGoesAnywhereButRegisters) {
    KernelInfo k;
    k.arrays = {param("x", 0, AccessMode::Read)};
    k.sites = {site(0, "x", AccessMode::Read, 3)};
    computeFeasibility(k);
    const ArrayInfo& x = k.arrays[0];
    for (Place p : {Place::Global, Place::ReadOnly, Place::Texture, Place::Constant, Place::Shared,
                    Place::L2Persist}) {
        EXPECT_TRUE(x.feasible.contains(p)) << placeName(p);
    }
    EXPECT_FALSE(x.feasible.contains(Place::Registers));
    expectConsistent(k);
}

TEST(Feasibility, WrittenAndAtomicArrays) {
    KernelInfo k;
    k.arrays = {param("y", 0, AccessMode::ReadWrite), param("h", 1, AccessMode::Atomic)};
    k.sites = {site(0, "y", AccessMode::Read, 3), site(1, "y", AccessMode::Write, 4),
               site(2, "h", AccessMode::Atomic, 7)};
    computeFeasibility(k);
    const ArrayInfo& y = k.arrays[0];
    EXPECT_FALSE(y.feasible.contains(Place::ReadOnly));
    EXPECT_FALSE(y.feasible.contains(Place::Texture));
    EXPECT_FALSE(y.feasible.contains(Place::Constant));
    EXPECT_TRUE(y.feasible.contains(Place::Shared));
    EXPECT_NE(y.excluded.at(Place::Texture).find("written at 4:5"), std::string::npos);
    const ArrayInfo& h = k.arrays[1];
    EXPECT_FALSE(h.feasible.contains(Place::Shared));
    EXPECT_NE(h.excluded.at(Place::Shared).find("atomically at 7:5"), std::string::npos);
    expectConsistent(k);
}

TEST(Feasibility, SizesRuleOutTextureAndConstant) {
    KernelInfo k;
    k.arrays = {param("p", 0, AccessMode::Read, 24), param("big", 1, AccessMode::Read)};
    k.arrays[1].extent.bytes = 65537;
    computeFeasibility(k);
    EXPECT_FALSE(k.arrays[0].feasible.contains(Place::Texture));
    EXPECT_TRUE(k.arrays[0].feasible.contains(Place::Constant));
    EXPECT_FALSE(k.arrays[1].feasible.contains(Place::Constant));
    EXPECT_NE(k.arrays[1].excluded.at(Place::Constant).find("64 KB"), std::string::npos);
    k.arrays[1].extent.bytes = 65536;
    computeFeasibility(k);
    EXPECT_TRUE(k.arrays[1].feasible.contains(Place::Constant));
    expectConsistent(k);
}

TEST(Feasibility, HazardsKeepTheHomePlace) {
    KernelInfo k;
    k.arrays = {param("a", 0, AccessMode::Read)};
    ArrayInfo tile;
    tile.name = "tile";
    tile.kind = ArrayKind::Shared;
    tile.elementType = "float";
    tile.elementSize = 4;
    tile.mode = AccessMode::Atomic;
    k.arrays.push_back(tile);
    Hazard h;
    h.kind = HazardKind::PointerArithmetic;
    h.array = "a";
    h.location = {"", 9, 3};
    h.message = "pointer arithmetic 'a + 1'";
    k.hazards = {h};
    computeFeasibility(k);
    EXPECT_EQ(k.arrays[0].feasible, PlaceSet{Place::Global});
    EXPECT_NE(k.arrays[0].excluded.at(Place::Texture).find("9:3"), std::string::npos);
    EXPECT_EQ(k.arrays[1].feasible, PlaceSet{Place::Shared}); // atomics stay fine in shared
    expectConsistent(k);
}

TEST(Feasibility, AliasingWithAWrittenArray) {
    KernelInfo k;
    k.arrays = {param("in", 0, AccessMode::Read), param("out", 1, AccessMode::Write)};
    Hazard h;
    h.kind = HazardKind::Aliasing;
    h.array = "in";
    h.other = "out";
    h.location = {"", 40, 5};
    h.message = "same allocation";
    k.hazards = {h};
    computeFeasibility(k);
    const ArrayInfo& in = k.arrays[0];
    EXPECT_TRUE(in.feasible.contains(Place::Global));
    EXPECT_TRUE(in.feasible.contains(Place::L2Persist));
    EXPECT_FALSE(in.feasible.contains(Place::ReadOnly));
    EXPECT_FALSE(in.feasible.contains(Place::Texture));
    EXPECT_FALSE(in.feasible.contains(Place::Shared));
    EXPECT_FALSE(k.arrays[1].feasible.contains(Place::Shared));
    expectConsistent(k);
}

TEST(Feasibility, TextureObjectsStayTextures) {
    KernelInfo k;
    ArrayInfo t;
    t.name = "img";
    t.kind = ArrayKind::TextureObject;
    t.elementType = "float";
    t.elementSize = 4;
    t.mode = AccessMode::Read;
    k.arrays = {t};
    computeFeasibility(k);
    EXPECT_EQ(k.arrays[0].feasible, PlaceSet{Place::Texture});
    expectConsistent(k);
}

TEST(Feasibility, OriginalIsTheReadOnlyPathWhereTheProgramAsksForIt) {
    KernelInfo k;
    ArrayInfo restrictConst = param("a", 0, AccessMode::Read);
    restrictConst.isConst = true;
    restrictConst.isRestrict = true;
    ArrayInfo constOnly = param("b", 1, AccessMode::Read);
    constOnly.isConst = true;
    ArrayInfo ldgOnly = param("c", 2, AccessMode::Read);
    ArrayInfo ldgAndPlain = param("d", 3, AccessMode::Read);
    ArrayInfo restrictWritten = param("e", 4, AccessMode::ReadWrite);
    restrictWritten.isRestrict = true;
    k.arrays = {restrictConst, constOnly, ldgOnly, ldgAndPlain, restrictWritten};
    Site c0 = site(2, "c", AccessMode::Read, 5);
    c0.form = SiteForm::PointerOffset;
    c0.intrinsic = "__ldg";
    Site d0 = c0;
    d0.id = 3;
    d0.array = "d";
    k.sites = {site(0, "a", AccessMode::Read, 3), site(1, "b", AccessMode::Read, 4), c0, d0,
               site(4, "d", AccessMode::Read, 6), site(5, "e", AccessMode::Write, 7)};
    computeFeasibility(k);
    EXPECT_EQ(k.arrays[0].original, Place::ReadOnly); // const T* __restrict__
    EXPECT_EQ(k.arrays[1].original, Place::Global);   // const without __restrict__
    EXPECT_EQ(k.arrays[2].original, Place::ReadOnly); // read only through __ldg
    EXPECT_EQ(k.arrays[3].original, Place::Global);   // __ldg at one site, a plain load at another
    EXPECT_EQ(k.arrays[4].original, Place::Global);   // written
    expectConsistent(k);
}

TEST(Feasibility, OriginalStaysHomeWhenTheReadOnlyPathIsExcluded) {
    KernelInfo k;
    ArrayInfo a = param("a", 0, AccessMode::Read);
    a.isConst = true;
    a.isRestrict = true;
    ArrayInfo s = param("s", 1, AccessMode::ReadWrite);
    s.kind = ArrayKind::Shared;
    k.arrays = {a, s};
    k.sites = {site(0, "a", AccessMode::Read, 3), site(1, "s", AccessMode::Write, 4)};
    Hazard h;
    h.kind = HazardKind::PointerArithmetic;
    h.array = "a";
    h.location = {"", 3, 9};
    h.message = "pointer arithmetic";
    k.hazards = {h};
    computeFeasibility(k);
    EXPECT_EQ(k.arrays[0].original, Place::Global);
    EXPECT_EQ(k.arrays[1].original, Place::Shared);
    expectConsistent(k);
}

} // namespace
} // namespace memplace::kernelinfo

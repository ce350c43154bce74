// The Placer's pure functions: signatures, sampling, TraceResult -> trace::Trace.
#include "placer/convert.h"

#include <gtest/gtest.h>

#include <cstring>

namespace memplace::placer {
namespace {

LaunchInfo saxpyInfo(std::size_t n) {
    LaunchInfo info;
    info.kernel = "saxpy";
    info.grid = dim3(static_cast<unsigned>((n + 255) / 256));
    info.block = dim3(256);
    info.device = 0;
    info.constantPoolBytes = 65536;
    ArrayInfo x;
    x.name = "x";
    x.param = 2;
    x.elemSize = 4;
    x.mode = Mode::Read;
    x.feasible = kPlaces_ro_1d;
    x.ptr = reinterpret_cast<const void*>(0x1000);
    x.extentBytes = n * 4;
    x.extentKnown = true;
    ArrayInfo y = x;
    y.name = "y";
    y.param = 3;
    y.mode = Mode::ReadWrite;
    y.feasible = kPlaces_rw;
    y.ptr = reinterpret_cast<const void*>(0x90000);
    info.arrays = {x, y};
    return info;
}

TraceRecord record(uint32_t block, uint16_t warp, uint32_t site, uint16_t array, uint32_t flags,
                   uint32_t mask, int64_t base, int64_t step = 1) {
    TraceRecord r;
    std::memset(&r, 0, sizeof r);
    r.block = block;
    r.warp = warp;
    r.site = site;
    r.array = array;
    r.flags = flags;
    r.activeMask = mask;
    for (int l = 0; l < 32; ++l) {
        if ((mask >> l) & 1u) {
            r.offset[l] = base + l * step;
        }
    }
    return r;
}

TraceResult saxpyResult(const LaunchInfo& info, std::vector<uint32_t> blocks) {
    TraceResult t;
    t.kernel = info.kernel;
    t.grid = info.grid;
    t.block = info.block;
    for (const ArrayInfo& a : info.arrays) {
        t.arrays.push_back({a.name, a.ptr, a.elemSize, a.extentBytes, a.extentKnown, a.mode});
    }
    t.sampledBlocks = blocks;
    for (uint32_t b : blocks) {
        for (uint16_t w = 0; w < 8; ++w) {
            const int64_t base = static_cast<int64_t>(b) * 256 + w * 32;
            t.records.push_back(record(b, w, 0, 0, kTraceRead, 0xffffffffu, base));
            t.records.push_back(record(b, w, 1, 1, kTraceRead, 0xffffffffu, base));
            t.records.push_back(record(b, w, 2, 1, kTraceWrite, 0xffffffffu, base));
        }
    }
    t.produced = t.records.size();
    t.capacity = 1 << 17;
    return t;
}

TEST(Signature, PointersDoNotCountExtentsAndGeometryDo) {
    LaunchInfo a = saxpyInfo(1 << 16);
    LaunchInfo b = a;
    b.arrays[0].ptr = reinterpret_cast<const void*>(0x5000);
    b.arrays[1].ptr = reinterpret_cast<const void*>(0x6000);
    b.stream = reinterpret_cast<cudaStream_t>(0x1);
    EXPECT_EQ(signatureKey(a), signatureKey(b));
    LaunchInfo c = saxpyInfo(1 << 17);
    EXPECT_NE(signatureKey(a), signatureKey(c));
    LaunchInfo d = a;
    d.arrays[0].extentBytes += 4;
    EXPECT_NE(signatureKey(a), signatureKey(d));
    LaunchInfo e = a;
    e.block = dim3(128);
    EXPECT_NE(signatureKey(a), signatureKey(e));
    LaunchInfo f = a;
    f.device = 1;
    EXPECT_NE(signatureKey(a), signatureKey(f));
    LaunchInfo g = a;
    g.arrays[1].extentKnown = false;
    EXPECT_NE(signatureKey(a), signatureKey(g));
    EXPECT_NE(signatureText(a).find("saxpy grid 256x1x1 block 256x1x1 x:256KB y:256KB"),
              std::string::npos);
}

TEST(Signature, AGridFamilyIgnoresOnlyTheGrid) {
    const LaunchInfo a = saxpyInfo(1 << 16);
    LaunchInfo b = a;
    b.grid = dim3(17, 3);
    EXPECT_NE(signatureKey(a), signatureKey(b));
    EXPECT_EQ(gridFamilyKey(a), gridFamilyKey(b));
    LaunchInfo c = a;
    c.block = dim3(128);
    EXPECT_NE(gridFamilyKey(a), gridFamilyKey(c));
    LaunchInfo d = a;
    d.arrays[0].extentBytes += 4;
    EXPECT_NE(gridFamilyKey(a), gridFamilyKey(d));
    LaunchInfo e = a;
    e.sharedBytes = 1024;
    EXPECT_NE(gridFamilyKey(a), gridFamilyKey(e));
    EXPECT_EQ(gridFamilyKey(a).rfind("saxpy|*|256x1x1|", 0), 0u) << gridFamilyKey(a);
}

TEST(Sampling, Resolve) {
    Sampling s; // 2 SMs, 2 waves
    EXPECT_EQ(resolveSampling(s, 8).blocksPerSm, 16u);
    EXPECT_EQ(resolveSampling(s, 0).blocksPerSm, 2u);
    EXPECT_EQ(resolveSampling(s, 32).blocksPerSm, 64u);
    EXPECT_EQ(resolveSampling(s, 64).blocksPerSm, 64u);
    s.blocksPerSm = 5;
    EXPECT_EQ(resolveSampling(s, 8).blocksPerSm, 5u);
}

TEST(Sampling, SmallGridsAreTracedWhole) {
    Sampling s;
    s.blocksPerSm = 32;
    EXPECT_TRUE(sampledBlocks(1, 132, s).empty());
    EXPECT_TRUE(sampledBlocks(64, 132, s).empty());
    EXPECT_TRUE(sampledBlocks(48, 16, s).empty());
}

TEST(Sampling, WholeSmsFirstWaves) {
    Sampling s;
    s.sms = 2;
    s.blocksPerSm = 3;
    const auto b = sampledBlocks(1000, 132, s);
    EXPECT_EQ(b, (std::vector<uint32_t>{0, 1, 132, 133, 264, 265}));
    // Fewer blocks than SMs: each traced SM has one block.
    const auto c = sampledBlocks(100, 132, s);
    EXPECT_EQ(c, (std::vector<uint32_t>{0, 1}));
    // An SM with fewer blocks than asked: all of them.
    const auto d = sampledBlocks(140, 132, s);
    EXPECT_EQ(d, (std::vector<uint32_t>{0, 1, 132, 133}));
}

TEST(Sampling, TraceOptionsCarryCapacity) {
    LaunchInfo info = saxpyInfo(1 << 20); // 4096 blocks
    Sampling s;
    s.blocksPerSm = 32;
    s.maxRecords = 1234;
    const TraceOptions o = traceOptions(info, 132, s);
    EXPECT_EQ(o.maxRecords, 1234u);
    EXPECT_EQ(o.blocks.size(), 64u);
    EXPECT_EQ(o.sampleEvery, 1u);
    for (uint32_t b : o.blocks) {
        EXPECT_TRUE(b % 132 == 0 || b % 132 == 1) << b;
    }
}

TEST(Sampling, ShrinkAfterOverflow) {
    Sampling s;
    s.blocksPerSm = 32; // 2 x 32 = 64 blocks
    const Sampling a = shrink(s, 4 * 1000, 1000);
    EXPECT_EQ(a.sms, 2u);
    EXPECT_EQ(a.blocksPerSm, 6u); // 64 * 0.8 / 4 = 12.8 blocks
    const Sampling b = shrink(s, 1000 * 1000, 1000);
    EXPECT_EQ(b.sms, 1u);
    EXPECT_EQ(b.blocksPerSm, 1u);
    const Sampling c = shrink(b, 10000, 1000);
    EXPECT_EQ(c.sms, 1u);
    EXPECT_EQ(c.blocksPerSm, 1u); // cannot shrink further
    const Sampling d = shrink(s, 500, 1000);
    EXPECT_EQ(d.blocksPerSm, s.blocksPerSm); // no overflow: unchanged
}

TEST(TraceName, InvalidCharactersAreReplaced) {
    EXPECT_EQ(traceName("saxpy"), "saxpy");
    EXPECT_EQ(traceName("ns::k<float, 4>"), "ns::k<float,_4>");
    EXPECT_EQ(traceName("3d"), "_3d");
    EXPECT_EQ(traceName(""), "_");
    EXPECT_TRUE(trace::validTraceName(traceName("a b-c")));
}

TEST(ToTrace, SaxpyRecordsBecomeTheTrace) {
    const LaunchInfo info = saxpyInfo(1 << 16);
    const TraceResult r = saxpyResult(info, {0, 132});
    ConvertInfo ci;
    auto t = toTrace(info, r, &ci);
    ASSERT_TRUE(t) << t.message();
    const trace::TraceHeader& h = t->header();
    EXPECT_EQ(h.kernel, "saxpy");
    EXPECT_EQ(h.grid, (trace::Dim3{256, 1, 1}));
    EXPECT_EQ(h.block, (trace::Dim3{256, 1, 1}));
    EXPECT_EQ(h.tracedBlocks.ids(), (std::vector<uint32_t>{0, 132}));
    EXPECT_FALSE(h.registersPerThread.has_value());
    ASSERT_EQ(h.arrays.size(), 2u);
    EXPECT_EQ(h.arrays[0].name, "x");
    EXPECT_EQ(h.arrays[0].length, 1u << 16);
    EXPECT_EQ(h.arrays[0].elementSize, 4u);
    EXPECT_EQ(h.arrays[0].mode, trace::ArrayMode::Read);
    EXPECT_TRUE(h.arrays[0].feasible.contains(Place::Texture));
    EXPECT_TRUE(h.arrays[0].feasible.contains(Place::Constant) == false); // 256 KB > the pool
    EXPECT_EQ(h.arrays[1].mode, trace::ArrayMode::ReadWrite);
    EXPECT_FALSE(h.arrays[1].feasible.contains(Place::Texture));
    EXPECT_TRUE(h.arrays[1].feasible.contains(Place::Shared));
    EXPECT_EQ(t->records().size(), 2u * 8 * 3);
    EXPECT_EQ(ci.records, 48u);
    EXPECT_EQ(ci.lanes, 48u * 32);
    EXPECT_FALSE(ci.truncated);
    // Per warp, program order; lanes in lane order.
    const auto ranges = t->warpRanges();
    ASSERT_EQ(ranges.size(), 16u);
    const trace::Record& first = t->records()[ranges[0].begin];
    EXPECT_EQ(first.site, 0u);
    EXPECT_EQ(first.kind, trace::AccessKind::Read);
    EXPECT_EQ(t->lanes(first)[5], 5);
    const trace::Record& third = t->records()[ranges[0].begin + 2];
    EXPECT_EQ(third.kind, trace::AccessKind::Write);
    EXPECT_EQ(third.array, 1u);
}

TEST(ToTrace, ArraysSharingMemoryWithAWrittenOneKeepTheSafePlaces) {
    LaunchInfo info = saxpyInfo(1 << 10);
    info.arrays[0].original = Place::ReadOnly;
    info.arrays[1].ptr = info.arrays[0].ptr; // y = a*y + y, called as saxpy(y, y)
    EXPECT_EQ(info.sharesMemoryWithWritten(0), "y");
    EXPECT_EQ(info.sharesMemoryWithWritten(1), "x");
    const TraceResult r = saxpyResult(info, {0});
    auto t = toTrace(info, r, nullptr);
    ASSERT_TRUE(t) << t.message();
    const trace::TraceHeader& h = t->header();
    EXPECT_EQ(h.arrays[0].feasible, (PlaceSet{Place::Global, Place::ReadOnly, Place::L2Persist}));
    EXPECT_EQ(h.arrays[0].original, Place::ReadOnly);
    EXPECT_EQ(h.arrays[1].feasible, (PlaceSet{Place::Global, Place::L2Persist}));
    // Apart, everything the descriptor allows.
    info.arrays[1].ptr = reinterpret_cast<const void*>(0x90000);
    EXPECT_EQ(info.sharesMemoryWithWritten(0), "");
    auto apart = toTrace(info, saxpyResult(info, {0}), nullptr);
    ASSERT_TRUE(apart) << apart.message();
    EXPECT_TRUE(apart->header().arrays[0].feasible.contains(Place::Texture));
    EXPECT_TRUE(apart->header().arrays[1].feasible.contains(Place::Shared));
}

TEST(ToTrace, ArraysThatMayAliasAWrittenGlobalKeepTheSafePlaces) {
    // saxpy(x, y) with x pointing into a __device__ array the kernel writes by name.
    LaunchInfo info = saxpyInfo(1 << 10);
    const auto x = reinterpret_cast<std::uintptr_t>(info.arrays[0].ptr);
    GlobalRange g;
    g.name = "g_buf";
    g.mode = Mode::ReadWrite;
    g.ptr = reinterpret_cast<const void*>(x - 64); // x is a sub-range of it
    g.bytes = info.arrays[0].extentBytes + 64;
    g.found = true;
    info.globals.push_back(g);
    EXPECT_EQ(info.sharesMemoryWithWritten(0), ""); // the parameters do not overlap
    EXPECT_NE(info.aliasHazard(0).find("the global 'g_buf', which the kernel writes by name"),
              std::string::npos)
        << info.aliasHazard(0);
    EXPECT_EQ(info.aliasHazard(1), "");
    auto t = toTrace(info, saxpyResult(info, {0}), nullptr);
    ASSERT_TRUE(t) << t.message();
    EXPECT_EQ(t->header().arrays[0].feasible, (PlaceSet{Place::Global, Place::L2Persist}));
    EXPECT_TRUE(t->header().arrays[1].feasible.contains(Place::Shared));

    // Read by name only: a read-only array may move; a written one that overlaps it may not.
    info.globals[0].mode = Mode::Read;
    EXPECT_EQ(info.aliasHazard(0), "");
    info.globals[0].ptr = info.arrays[1].ptr;
    EXPECT_NE(info.aliasHazard(1).find("reads by name, and the array is written"),
              std::string::npos)
        << info.aliasHazard(1);
    // Elsewhere: no hazard; not found: it may be anywhere.
    info.globals[0].mode = Mode::ReadWrite;
    info.globals[0].ptr = reinterpret_cast<const void*>(0x10);
    info.globals[0].bytes = 16;
    EXPECT_EQ(info.aliasHazard(0), "");
    EXPECT_EQ(info.aliasHazard(1), "");
    info.globals[0].found = false;
    EXPECT_NE(info.aliasHazard(0).find("was not found"), std::string::npos);
    info.globals.clear();

    // Writes through an unknown pointer: every array; reads through one: written arrays.
    info.unknownReads = "9:5: 't.p[i]': a pointer read from a structure member";
    EXPECT_EQ(info.aliasHazard(0), "");
    EXPECT_NE(info.aliasHazard(1).find("reads through a pointer whose target is unknown"),
              std::string::npos);
    info.unknownWrites = "9:5: 't.p[i]': a pointer read from a structure member";
    EXPECT_NE(info.aliasHazard(0).find("writes through a pointer whose target is unknown (9:5"),
              std::string::npos);
    auto u = toTrace(info, saxpyResult(info, {0}), nullptr);
    ASSERT_TRUE(u) << u.message();
    EXPECT_EQ(u->header().arrays[0].feasible, (PlaceSet{Place::Global, Place::L2Persist}));
    EXPECT_EQ(u->header().arrays[1].feasible, (PlaceSet{Place::Global, Place::L2Persist}));
}

TEST(ToTrace, RegistersSharedAndPartialWarps) {
    LaunchInfo info = saxpyInfo(1000);
    info.registers = 40;
    info.staticSharedBytes = 1024;
    info.sharedBytes = 512;
    TraceResult r = saxpyResult(info, {});
    r.records.clear();
    r.records.push_back(record(3, 7, 0, 0, kTraceRead, 0x000000ffu, 3 * 256 + 7 * 32));
    auto t = toTrace(info, r);
    ASSERT_TRUE(t) << t.message();
    EXPECT_EQ(t->header().registersPerThread, 40u);
    EXPECT_EQ(t->header().sharedPerBlock, 1536u);
    EXPECT_TRUE(t->header().tracedBlocks.empty());
    ASSERT_EQ(t->records().size(), 1u);
    EXPECT_EQ(t->records()[0].lanes, 8u);
}

TEST(ToTrace, ModesWidenAndAtomicsAndReadWriteRecords) {
    LaunchInfo info = saxpyInfo(4096);
    info.arrays[1].mode = Mode::Write;
    TraceResult r = saxpyResult(info, {});
    r.records.clear();
    // A write-only array that is also read (its descriptor is wrong): read-write.
    r.records.push_back(record(0, 0, 1, 1, kTraceRead, 0xffffffffu, 0));
    // One record with read and write and no atomic flag: a read, then a write.
    r.records.push_back(record(0, 1, 2, 1, kTraceRead | kTraceWrite, 0xffffffffu, 32));
    auto t = toTrace(info, r);
    ASSERT_TRUE(t) << t.message();
    EXPECT_EQ(t->header().arrays[1].mode, trace::ArrayMode::ReadWrite);
    ASSERT_EQ(t->records().size(), 3u);
    // Atomics make the array atomic (it stays global or l2persist).
    r.records.push_back(
        record(0, 2, 3, 1, kTraceRead | kTraceWrite | kTraceAtomic, 0xffffffffu, 64));
    auto a = toTrace(info, r);
    ASSERT_TRUE(a) << a.message();
    EXPECT_EQ(a->header().arrays[1].mode, trace::ArrayMode::Atomic);
    EXPECT_EQ(a->records().back().kind, trace::AccessKind::Atomic);
}

TEST(ToTrace, FeasibleNarrowedByWhatTheRuntimeCanMaterialise) {
    LaunchInfo info = saxpyInfo(1024); // 4 KB: fits the constant pool
    info.arrays[0].textureFeasible = false;
    TraceResult r = saxpyResult(info, {});
    r.records.resize(0);
    r.records.push_back(record(0, 0, 0, 0, kTraceRead, 0xffffffffu, 0));
    auto t = toTrace(info, r);
    ASSERT_TRUE(t) << t.message();
    EXPECT_FALSE(t->header().arrays[0].feasible.contains(Place::Texture));
    EXPECT_TRUE(t->header().arrays[0].feasible.contains(Place::Constant));
    // A smaller pool (the TU has its own constants): no constant.
    info.constantPoolBytes = 2048;
    auto u = toTrace(info, r);
    ASSERT_TRUE(u);
    EXPECT_FALSE(u->header().arrays[0].feasible.contains(Place::Constant));
    // Unknown extent: only global and read-only, length from the largest offset.
    info.arrays[0].extentKnown = false;
    info.arrays[0].textureFeasible = true;
    auto v = toTrace(info, r);
    ASSERT_TRUE(v) << v.message();
    EXPECT_EQ(v->header().arrays[0].length, 32u);
    EXPECT_EQ(v->header().arrays[0].feasible, (PlaceSet{Place::Global, Place::ReadOnly}));
    // 2-D without a row length: no texture, and dims 1.
    info = saxpyInfo(1024);
    info.arrays[0].dims = 2;
    info.arrays[0].width = 0;
    auto w = toTrace(info, r);
    ASSERT_TRUE(w);
    EXPECT_FALSE(w->header().arrays[0].feasible.contains(Place::Texture));
    EXPECT_EQ(w->header().arrays[0].dims, 1u);
    info.arrays[0].width = 32;
    auto x = toTrace(info, r);
    ASSERT_TRUE(x);
    EXPECT_EQ(x->header().arrays[0].dims, 2u);
    EXPECT_EQ(x->header().arrays[0].rowLength, 32u);
}

TEST(ToTrace, ErrorsAreReported) {
    const LaunchInfo info = saxpyInfo(64);
    TraceResult r = saxpyResult(info, {});
    r.records.clear();
    r.records.push_back(record(0, 0, 0, 0, kTraceRead, 0xffffffffu, 60)); // 60..91 > 64
    auto t = toTrace(info, r);
    ASSERT_FALSE(t);
    EXPECT_NE(t.message().find("trace of saxpy"), std::string::npos);
    r.records[0].array = 7;
    EXPECT_FALSE(toTrace(info, r));
    TraceResult s = saxpyResult(info, {});
    s.arrays.pop_back();
    EXPECT_FALSE(toTrace(info, s));
}

TEST(ToTrace, OverflowIsATruncatedTrace) {
    const LaunchInfo info = saxpyInfo(1 << 16);
    TraceResult r = saxpyResult(info, {0, 132});
    r.records.resize(10);
    r.overflow = true;
    r.produced = 48;
    r.dropped = 38;
    ConvertInfo ci;
    auto t = toTrace(info, r, &ci);
    ASSERT_TRUE(t) << t.message();
    EXPECT_TRUE(ci.truncated);
    ASSERT_FALSE(ci.notes.empty());
    EXPECT_NE(ci.notes.back().find("38 of 48"), std::string::npos);
}

} // namespace
} // namespace memplace::placer

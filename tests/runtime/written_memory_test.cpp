// The host library's seam between a launch and the memory it writes (runtime/src/
// written_memory.cpp), which sweeps and shadow launches rely on: which buffers a launch writes,
// when they must be restored rather than poisoned, why they cannot all be known, and the
// host-side comparison of two copies. Built against the emulated runtime (no GPU).
#include "runtime/src/runtime_internal.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace memplace::detail {
namespace {

ArrayInfo array(const char* name, const void* ptr, Mode mode, std::size_t bytes) {
    ArrayInfo a;
    a.name = name;
    a.ptr = ptr;
    a.mode = mode;
    a.elemSize = 4;
    a.extentBytes = bytes;
    a.extentKnown = bytes > 0;
    return a;
}

TEST(RuntimeWrittenMemory, ReadOnlyLaunchWritesNothing) {
    static float x[16];
    LaunchInfo info;
    info.arrays = {array("x", x, Mode::Read, sizeof x)};
    std::string why;
    EXPECT_TRUE(writtenBuffers(info, why).empty());
    EXPECT_EQ(why, "");
}

TEST(RuntimeWrittenMemory, WriteOnlyIsPoisonedUnlessAnAliasReadsIt) {
    static float out[16];
    static float other[16];
    LaunchInfo info;
    info.arrays = {array("out", out, Mode::Write, sizeof out),
                   array("other", other, Mode::Write, sizeof other),
                   array("in", other, Mode::Read, sizeof other)};
    std::string why;
    const std::vector<WrittenBuffer> bufs = writtenBuffers(info, why);
    ASSERT_EQ(bufs.size(), 2u);
    EXPECT_EQ(why, "");
    EXPECT_EQ(bufs[0].names, "out");
    EXPECT_FALSE(bufs[0].restore);
    EXPECT_EQ(bufs[1].names, "other");
    EXPECT_TRUE(bufs[1].restore); // "in" reads the same memory
}

TEST(RuntimeWrittenMemory, OneBufferPerPointerTheLargestExtent) {
    static float a[32];
    LaunchInfo info;
    info.arrays = {array("a", a, Mode::ReadWrite, 64), array("b", a, Mode::Write, sizeof a)};
    std::string why;
    const std::vector<WrittenBuffer> bufs = writtenBuffers(info, why);
    ASSERT_EQ(bufs.size(), 1u);
    EXPECT_EQ(bufs[0].bytes, sizeof a);
    EXPECT_EQ(bufs[0].names, "a/b");
    EXPECT_TRUE(bufs[0].restore);
}

TEST(RuntimeWrittenMemory, GlobalsWrittenByNameAreRestored) {
    static int counter[4];
    LaunchInfo info;
    GlobalRange g;
    g.name = "counter";
    g.mode = Mode::ReadWrite;
    g.ptr = counter;
    g.bytes = sizeof counter;
    g.found = true;
    info.globals = {g};
    std::string why;
    const std::vector<WrittenBuffer> bufs = writtenBuffers(info, why);
    ASSERT_EQ(bufs.size(), 1u);
    EXPECT_TRUE(bufs[0].global);
    EXPECT_TRUE(bufs[0].restore);
    EXPECT_EQ(bufs[0].bytes, sizeof counter);
}

TEST(RuntimeWrittenMemory, SaysWhyItCannotKnow) {
    static float a[4];
    {
        LaunchInfo info;
        info.arrays = {array("a", a, Mode::Write, 0)};
        std::string why;
        (void)writtenBuffers(info, why);
        EXPECT_EQ(why, "the extent of written array a is unknown");
    }
    {
        LaunchInfo info;
        GlobalRange g;
        g.name = "g";
        g.mode = Mode::ReadWrite;
        info.globals = {g};
        std::string why;
        (void)writtenBuffers(info, why);
        EXPECT_EQ(why, "the memory of the global g, which the kernel writes, was not found");
    }
    {
        LaunchInfo info;
        info.unknownWrites = "p";
        std::string why;
        (void)writtenBuffers(info, why);
        EXPECT_NE(why.find("writes through a pointer whose target is unknown (p)"),
                  std::string::npos);
    }
}

TEST(RuntimeWrittenMemory, CountsDifferingBytesOnTheHostWithoutACompareKernel) {
    const std::size_t bytes = 64;
    void* a = nullptr;
    void* b = nullptr;
    ASSERT_EQ(cudaMalloc(&a, bytes), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&b, bytes), cudaSuccess);
    std::vector<unsigned char> x(bytes, 7);
    std::vector<unsigned char> y = x;
    y[3] = 1;
    y[40] = 2;
    y[63] = 3;
    ASSERT_EQ(cudaMemcpy(a, x.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(b, y.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
    uint64_t diff = 0;
    std::string what;
    EXPECT_EQ(countDifferences(nullptr, nullptr, a, b, bytes, nullptr, diff, what), cudaSuccess);
    EXPECT_EQ(diff, 3u);
    EXPECT_EQ(countDifferences(nullptr, nullptr, a, a, bytes, nullptr, diff, what), cudaSuccess);
    EXPECT_EQ(diff, 0u);
    (void)cudaFree(a);
    (void)cudaFree(b);
}

} // namespace
} // namespace memplace::detail

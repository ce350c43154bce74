// Just-in-time instantiation without a GPU (runtime/src/jit.h): name expressions, NVRTC options,
// the content address, the disk cache (atomic writes, corrupt entries), and compilations of
// the runtime's device headers with NVRTC (skipped when libnvrtc is missing).
#include "runtime/src/jit.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace memplace::detail::jit {
namespace {

namespace fs = std::filesystem;

fs::path tempDir(const std::string& name) {
    fs::path d = fs::temp_directory_path() /
                 ("memplace_jit_test_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(d);
    return d;
}

TEST(JitNames, AccessorNames) {
    EXPECT_EQ(accessorName(Place::Global, 1, "const float"),
              "memplace::GlobalAccessor<const float>");
    EXPECT_EQ(accessorName(Place::ReadOnly, 1, "const int"),
              "memplace::ReadOnlyAccessor<const int>");
    EXPECT_EQ(accessorName(Place::Texture, 1, "const float"),
              "memplace::TextureAccessor<const float>");
    EXPECT_EQ(accessorName(Place::Texture, 2, "const float"),
              "memplace::Texture2DAccessor<const float>");
    EXPECT_EQ(accessorName(Place::Constant, 1, "const double"),
              "memplace::ConstantAccessor<const double>");
    EXPECT_EQ(accessorName(Place::Shared, 1, "float"), "memplace::SharedAccessor<float>");
    EXPECT_EQ(accessorName(Place::L2Persist, 1, "float"), "memplace::L2PersistAccessor<float>");
    EXPECT_EQ(accessorName(Place::Registers, 1, "float"), "");
    EXPECT_EQ(nameExpression("ns::k",
                             {"memplace::GlobalAccessor<float>", "memplace::SharedAccessor<int>"}),
              "ns::k<memplace::GlobalAccessor<float>, memplace::SharedAccessor<int> >");
}

TEST(JitOptions, ArchitectureChoice) {
    CompileRequest r;
    r.ccMajor = 9;
    r.ccMinor = 0;
    r.poolBytes = 65280;
    bool ptx = true;
    auto o = compileOptions(r, {75, 80, 86, 89, 90, 100, 120}, &ptx);
    ASSERT_FALSE(o.empty());
    EXPECT_EQ(o[0], "-arch=sm_90");
    EXPECT_FALSE(ptx);
    EXPECT_NE(std::find(o.begin(), o.end(), "-DMEMPLACE_CONSTANT_POOL_BYTES=65280"), o.end());
    EXPECT_NE(std::find(o.begin(), o.end(), "-std=c++20"), o.end());
    // A device newer than NVRTC knows: PTX for the newest architecture below it.
    r.ccMajor = 12;
    r.ccMinor = 1;
    o = compileOptions(r, {75, 80, 90, 100, 120}, &ptx);
    ASSERT_FALSE(o.empty());
    EXPECT_EQ(o[0], "-arch=compute_120");
    EXPECT_TRUE(ptx);
    // Older than every architecture NVRTC knows: nothing.
    r.ccMajor = 6;
    r.ccMinor = 0;
    EXPECT_TRUE(compileOptions(r, {75, 80, 90}, &ptx).empty());
    // Extra options come last.
    r.ccMajor = 9;
    r.ccMinor = 0;
    r.extra = {"--use_fast_math"};
    o = compileOptions(r, {90}, &ptx);
    EXPECT_EQ(o.back(), "--use_fast_math");
}

TEST(JitCache, KeyIsAContentAddress) {
    CompileRequest r;
    r.source = "__global__ void k() {}";
    r.nameExpression = "k";
    r.ccMajor = 9;
    const std::vector<std::string> o = {"-arch=sm_90"};
    const std::string k = cacheKey(r, o, "13.0");
    EXPECT_EQ(k.size(), 32u);
    EXPECT_EQ(k, cacheKey(r, o, "13.0"));
    EXPECT_NE(k, cacheKey(r, o, "13.1"));
    EXPECT_NE(k, cacheKey(r, {"-arch=sm_100"}, "13.0"));
    CompileRequest s = r;
    s.source += " ";
    EXPECT_NE(k, cacheKey(s, o, "13.0"));
    s = r;
    s.nameExpression = "k2";
    EXPECT_NE(k, cacheKey(s, o, "13.0"));
    s = r;
    s.ccMinor = 1;
    EXPECT_NE(k, cacheKey(s, o, "13.0"));
    s = r;
    s.constants = {"c_gamma"};
    EXPECT_NE(k, cacheKey(s, o, "13.0"));
}

Binary sampleBinary() {
    Binary b;
    b.ok = true;
    b.image = std::string("\x7f"
                          "ELF\0\1\2 binary bytes\n\nwith blank lines",
                          36);
    b.kernelName = "_Z1kIN8memplace14GlobalAccessorIfEEEvT_";
    b.poolName = "_ZN8memplace2tu12constantPoolE";
    b.constantNames = {"c_gamma", "_ZN2ns7c_tableE"};
    return b;
}

TEST(JitCache, EntryRoundTripAndCorruption) {
    const Binary b = sampleBinary();
    const std::string text = serializeEntry("abc", "k<A>", b);
    CacheRead r = parseEntry(text, "abc", "k<A>");
    ASSERT_EQ(r.status, CacheRead::Status::Hit) << r.why;
    EXPECT_TRUE(r.binary.ok);
    EXPECT_EQ(r.binary.image, b.image);
    EXPECT_EQ(r.binary.kernelName, b.kernelName);
    EXPECT_EQ(r.binary.poolName, b.poolName);
    EXPECT_EQ(r.binary.constantNames, b.constantNames);
    EXPECT_FALSE(r.binary.ptx);

    EXPECT_EQ(parseEntry(text, "abd", "k<A>").status, CacheRead::Status::Corrupt);
    EXPECT_EQ(parseEntry(text, "abc", "k<B>").status, CacheRead::Status::Corrupt);
    EXPECT_EQ(parseEntry(text.substr(0, text.size() - 3), "abc", "k<A>").status,
              CacheRead::Status::Corrupt);
    std::string flipped = text;
    flipped.back() ^= 1;
    CacheRead f = parseEntry(flipped, "abc", "k<A>");
    EXPECT_EQ(f.status, CacheRead::Status::Corrupt);
    EXPECT_NE(f.why.find("checksum"), std::string::npos) << f.why;
    EXPECT_EQ(parseEntry("garbage", "abc", "k<A>").status, CacheRead::Status::Corrupt);
    EXPECT_EQ(parseEntry("", "abc", "k<A>").status, CacheRead::Status::Corrupt);

    // A cached failure: no image, the log kept (newlines too).
    Binary failed;
    failed.error = "NVRTC: NVRTC_ERROR_COMPILATION\nline 2";
    failed.cacheable = true;
    CacheRead fr = parseEntry(serializeEntry("abc", "k<A>", failed), "abc", "k<A>");
    ASSERT_EQ(fr.status, CacheRead::Status::Hit) << fr.why;
    EXPECT_FALSE(fr.binary.ok);
    EXPECT_EQ(fr.binary.error, failed.error);
}

TEST(JitCache, DiskWritesAtomicallyAndSurvivesCorruption) {
    const fs::path dir = tempDir("disk");
    EXPECT_EQ(readCache(dir.string(), "k1", "n").status, CacheRead::Status::Miss);
    std::string error;
    ASSERT_TRUE(writeCache(dir.string(), "k1", "n", sampleBinary(), &error)) << error;
    CacheRead r = readCache(dir.string(), "k1", "n");
    ASSERT_EQ(r.status, CacheRead::Status::Hit) << r.why;
    EXPECT_EQ(r.binary.image, sampleBinary().image);
    // Replacing an entry leaves exactly one file (no temporary left over).
    ASSERT_TRUE(writeCache(dir.string(), "k1", "n", sampleBinary(), &error)) << error;
    int files = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        (void)e;
        ++files;
    }
    EXPECT_EQ(files, 1);
    // A damaged entry is Corrupt (the runtime warns and compiles anew), never a crash.
    {
        std::ofstream out(dir / "k1.jit", std::ios::binary | std::ios::trunc);
        out << "memplace-jit 1\nkey k1\nname n\n";
    }
    r = readCache(dir.string(), "k1", "n");
    EXPECT_EQ(r.status, CacheRead::Status::Corrupt);
    EXPECT_NE(r.why.find("k1.jit"), std::string::npos) << r.why;
    // ... and a new write repairs it.
    ASSERT_TRUE(writeCache(dir.string(), "k1", "n", sampleBinary(), &error)) << error;
    EXPECT_EQ(readCache(dir.string(), "k1", "n").status, CacheRead::Status::Hit);
    // An empty folder name: no cache at all.
    EXPECT_EQ(readCache("", "k1", "n").status, CacheRead::Status::Miss);
    fs::remove_all(dir);
}

TEST(JitCache, DefaultFolder) {
    auto set = [](const char* name, const char* value) {
        if (value == nullptr) {
            ::unsetenv(name);
        } else {
            ::setenv(name, value, 1);
        }
    };
    const char* names[] = {"MEMPLACE_JIT_CACHE", "MEMPLACE_CACHE", "XDG_CACHE_HOME", "HOME"};
    std::vector<std::pair<std::string, std::string>> saved;
    for (const char* n : names) {
        const char* v = std::getenv(n);
        saved.emplace_back(n, v != nullptr ? v : "\x01");
    }
    set("MEMPLACE_JIT_CACHE", "/tmp/x");
    EXPECT_EQ(defaultCacheDir(), "/tmp/x");
    set("MEMPLACE_JIT_CACHE", "off");
    EXPECT_EQ(defaultCacheDir(), "");
    set("MEMPLACE_JIT_CACHE", nullptr);
    set("MEMPLACE_CACHE", "/tmp/c");
    EXPECT_EQ(defaultCacheDir(), "/tmp/c/jit");
    set("XDG_CACHE_HOME", "/tmp/xdg");
    set("MEMPLACE_CACHE", "off"); // the decisions off: the images stay in the user's cache
    EXPECT_EQ(defaultCacheDir(), "/tmp/xdg/memplace/jit");
    set("MEMPLACE_CACHE", nullptr);
    set("XDG_CACHE_HOME", "/tmp/xdg");
    EXPECT_EQ(defaultCacheDir(), "/tmp/xdg/memplace/jit");
    set("XDG_CACHE_HOME", nullptr);
    set("HOME", "/home/u");
    EXPECT_EQ(defaultCacheDir(), "/home/u/.cache/memplace/jit");
    for (const auto& [n, v] : saved) {
        set(n.c_str(), v == "\x01" ? nullptr : v.c_str());
    }
}

TEST(JitHeaders, Embedded) {
    const std::vector<EmbeddedHeader> h = embeddedHeaders();
    ASSERT_FALSE(h.empty());
    bool accessors = false;
    bool place = false;
    for (const EmbeddedHeader& e : h) {
        accessors = accessors || std::string(e.name) == "memplace/accessors.cuh";
        place = place || std::string(e.name) == "common/place.h";
        EXPECT_GT(std::string(e.text).size(), 100u) << e.name;
    }
    EXPECT_TRUE(accessors);
    EXPECT_TRUE(place);
}

// A kernel written as the rewriter writes one, compiled for several placements.
constexpr const char* kKernel = R"(#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"
struct Pair { float a; float b; };
__constant__ float k_scale[4];
template <class MP_x, class MP_p, class MP_y>
__global__ void axpy(int n, float s, MP_x x, MP_p p, MP_y y) {
    memplace::stage(x, p, y);
    [&]() {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        Pair q = p[memplace::at<1>(i)];
        y[memplace::at<2>(i)] += s * x[memplace::at<0>(i)] + q.a * q.b * k_scale[i & 3];
    }();
    memplace::unstage(y);
}
)";

TEST(JitCompile, RuntimeHeadersCompileWithNvrtc) {
    std::string why;
    if (!nvrtcAvailable(&why)) {
        GTEST_SKIP() << why;
    }
    EXPECT_FALSE(nvrtcVersion().empty());
    CompileRequest r;
    r.source = kKernel;
    r.ccMajor = 9;
    r.ccMinor = 0;
    r.poolBytes = 65536 - 16; // k_scale comes first
    r.constants = {"k_scale"};
    const std::vector<Place> xs = {Place::Global,   Place::ReadOnly, Place::Texture,
                                   Place::Constant, Place::Shared,   Place::L2Persist};
    std::vector<std::string> names;
    for (Place x : xs) {
        for (Place p : {Place::Global, Place::ReadOnly, Place::Constant, Place::Shared}) {
            for (Place y : {Place::Global, Place::Shared, Place::L2Persist}) {
                names.push_back(nameExpression("axpy", {accessorName(x, 1, "const float"),
                                                        accessorName(p, 1, "const Pair"),
                                                        accessorName(y, 1, "float")}));
            }
        }
    }
    names.push_back(nameExpression("axpy", {accessorName(Place::Texture, 2, "const float"),
                                            accessorName(Place::Global, 1, "const Pair"),
                                            accessorName(Place::Global, 1, "float")}));
    r.nameExpression = names.front();
    const std::vector<std::string> more(names.begin() + 1, names.end());
    std::vector<std::string> lowered;
    const Binary b = compile(r, nullptr, &more, &lowered);
    ASSERT_TRUE(b.ok) << b.error;
    EXPECT_FALSE(b.ptx);
    ASSERT_GE(b.image.size(), 4u);
    EXPECT_EQ(b.image.substr(0, 4), "\x7f"
                                    "ELF"); // a CUBIN
    EXPECT_EQ(b.kernelName.rfind("_Z4axpyI", 0), 0u) << b.kernelName;
    EXPECT_EQ(b.poolName, "_ZN8memplace2tu12constantPoolE");
    ASSERT_EQ(b.constantNames.size(), 1u);
    EXPECT_EQ(b.constantNames[0], "k_scale");
    ASSERT_EQ(lowered.size(), more.size());
    for (std::size_t i = 0; i < lowered.size(); ++i) {
        EXPECT_FALSE(lowered[i].empty()) << more[i];
    }
    EXPECT_GT(b.compileMs, 0.0);
}

// The warm-up before the first background compilation must compile (else NVRTC's first real
// compilation would again come after the runtime's wait at exit) and keep the caller's target.
TEST(JitCompile, WarmUpCompiles) {
    std::string why;
    if (!nvrtcAvailable(&why)) {
        GTEST_SKIP() << why;
    }
    CompileRequest like;
    like.source = "this is not compiled";
    like.nameExpression = "nor this";
    like.ccMajor = 9;
    like.ccMinor = 0;
    like.constants = {"k_scale"};
    const CompileRequest w = warmUpRequest(like);
    EXPECT_EQ(w.ccMajor, 9);
    EXPECT_TRUE(w.constants.empty());
    const Binary b = compile(w);
    ASSERT_TRUE(b.ok) << b.error;
    EXPECT_NE(b.kernelName.find("memplace_nvrtc_warm_up"), std::string::npos) << b.kernelName;
}

TEST(JitCompile, ErrorsCarryTheLogAndAreCacheable) {
    std::string why;
    if (!nvrtcAvailable(&why)) {
        GTEST_SKIP() << why;
    }
    CompileRequest r;
    r.source = std::string(kKernel) + "\n__device__ int broken() { return undeclared; }\n";
    r.nameExpression = nameExpression("axpy", {accessorName(Place::Global, 1, "const float"),
                                               accessorName(Place::Global, 1, "const Pair"),
                                               accessorName(Place::Global, 1, "float")});
    r.ccMajor = 9;
    const Binary b = compile(r);
    EXPECT_FALSE(b.ok);
    EXPECT_TRUE(b.cacheable);
    EXPECT_NE(b.error.find("undeclared"), std::string::npos) << b.error;
}

} // namespace
} // namespace memplace::detail::jit

// Which spec the Placer uses for a device, and decisions on disk.
#include "common/file_io.h"
#include "placer/cache.h"
#include "placer/device_spec.h"
#include "placer/placer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace memplace::placer {
namespace {

namespace fs = std::filesystem;

fs::path tempDir(const std::string& name) {
    std::random_device rd;
    fs::path d =
        fs::temp_directory_path() / ("memplace-placer-" + name + "-" + std::to_string(rd()));
    fs::create_directories(d);
    return d;
}

TEST(DeviceSpec, BuiltinByName) {
    EXPECT_EQ(builtinForDeviceName("NVIDIA H100 80GB HBM3"), "h100");
    EXPECT_EQ(builtinForDeviceName("NVIDIA H100 PCIe"), "h100");
    EXPECT_EQ(builtinForDeviceName("NVIDIA H200"), "h200");
    EXPECT_EQ(builtinForDeviceName("NVIDIA A100-SXM4-80GB"), "a100");
    EXPECT_EQ(builtinForDeviceName("Tesla V100-PCIE-32GB"), "v100");
    EXPECT_EQ(builtinForDeviceName("Tesla K20c"), "k20c");
    EXPECT_EQ(builtinForDeviceName("NVIDIA H100 SXM5 80GB"), "h100"); // the emulated H100
    EXPECT_FALSE(builtinForDeviceName("NVIDIA GeForce RTX 4090").has_value());
    EXPECT_EQ(builtinForArch(9, 0), "h100");
    EXPECT_EQ(builtinForArch(8, 9), "a100");
    EXPECT_EQ(builtinForArch(12, 0), "h200");
    EXPECT_FALSE(builtinForArch(5, 2).has_value());
    EXPECT_EQ(specFileName("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3.msl");
    EXPECT_EQ(specFileName("  "), "device.msl");
}

TEST(DeviceSpec, Order) {
    // An explicit spec wins.
    auto a = selectSpec("a100", "", "NVIDIA H100 80GB HBM3", 9, 0);
    ASSERT_TRUE(a) << a.message();
    EXPECT_EQ(a->source, "MEMPLACE_SPEC");
    EXPECT_EQ(a->from, "a100");
    // A probed spec for the device, in the spec folder.
    const fs::path dir = tempDir("specs");
    auto text = spec::builtinSpecText("v100");
    ASSERT_TRUE(static_cast<bool>(text));
    ASSERT_TRUE(writeFileAtomic(dir / "nvidia-h100-80gb-hbm3.msl", *text));
    auto b = selectSpec("", dir.string(), "NVIDIA H100 80GB HBM3", 9, 0);
    ASSERT_TRUE(b) << b.message();
    EXPECT_EQ(b->source, "probed");
    EXPECT_EQ(b->spec.processor.name, "Tesla V100-SXM2-16GB");
    // The built-in for the name.
    auto c = selectSpec("", dir.string(), "NVIDIA H200", 9, 0);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->source, "built-in");
    EXPECT_EQ(c->from, "h200");
    EXPECT_TRUE(c->warnings.empty());
    // The nearest by architecture, with a warning.
    auto d = selectSpec("", "", "NVIDIA GeForce RTX 4090", 8, 9);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->source, "nearest");
    EXPECT_EQ(d->from, "a100");
    ASSERT_EQ(d->warnings.size(), 1u);
    EXPECT_NE(d->warnings[0].find("memplace probe -o"), std::string::npos);
    // A broken probed spec: a warning, then the built-in.
    ASSERT_TRUE(writeFileAtomic(dir / "nvidia-h200.msl", "processor {", Overwrite::Yes));
    auto e = selectSpec("", dir.string(), "NVIDIA H200", 9, 0);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->source, "built-in");
    EXPECT_EQ(e->warnings.size(), 1u);
    // Errors: an explicit spec that does not load; nothing matches.
    EXPECT_FALSE(selectSpec("no-such-spec", "", "NVIDIA H100", 9, 0));
    EXPECT_FALSE(selectSpec("", "", "Some GPU", 5, 0));
    fs::remove_all(dir);
}

CachedDecision decision(const std::string& key, Place x) {
    CachedDecision d;
    d.key = key;
    d.signature = "saxpy ...";
    d.kernel = "saxpy";
    d.arrays = {"x", "y"};
    d.placement = {x, Place::Global};
    d.predictedSeconds = 1e-5;
    d.originalSeconds = 2e-5;
    d.engineBest = "x=texture,y=global";
    return d;
}

TEST(DecisionCache, RoundTripAndMerge) {
    const fs::path dir = tempDir("cache");
    const BinaryId bin = BinaryId::current();
    ASSERT_FALSE(bin.path.empty());
    EXPECT_GT(bin.size, 0u);
    DecisionCache a(dir, bin, "NVIDIA H100", "h100:1");
    EXPECT_TRUE(a.load().empty()); // no file yet: nothing, no warning
    EXPECT_FALSE(a.store(decision("k1", Place::Texture)).has_value());
    EXPECT_TRUE(fs::exists(a.file()));
    // Another process (another cache object) stores a second decision: both survive.
    DecisionCache b(dir, bin, "NVIDIA H100", "h100:1");
    EXPECT_TRUE(b.load().empty());
    EXPECT_FALSE(b.store(decision("k2", Place::Constant)).has_value());
    DecisionCache c(dir, bin, "NVIDIA H100", "h100:1");
    EXPECT_TRUE(c.load().empty());
    ASSERT_EQ(c.size(), 2u);
    const CachedDecision* k1 = c.find("k1");
    ASSERT_NE(k1, nullptr);
    EXPECT_EQ(k1->placement, (std::vector<Place>{Place::Texture, Place::Global}));
    EXPECT_EQ(k1->arrays, (std::vector<std::string>{"x", "y"}));
    EXPECT_DOUBLE_EQ(k1->predictedSeconds, 1e-5);
    EXPECT_EQ(c.find("k2")->placement[0], Place::Constant);
    EXPECT_EQ(c.find("k3"), nullptr);
    // Written atomically: no temporary left beside it.
    int files = 0;
    for (const auto& f : fs::directory_iterator(dir)) {
        (void)f;
        ++files;
    }
    EXPECT_EQ(files, 1);
    fs::remove_all(dir);
}

TEST(DecisionCache, CorruptFileIsIgnoredWithAWarningAndReplaced) {
    const fs::path dir = tempDir("corrupt");
    const BinaryId bin = BinaryId::current();
    DecisionCache a(dir, bin, "NVIDIA H100", "h100:1");
    ASSERT_TRUE(writeFileAtomic(a.file(), "{\"format\": \"memplace-placer-cache\", \"vers",
                                Overwrite::Yes));
    auto w = a.load();
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("corrupt"), std::string::npos);
    EXPECT_NE(w[0].find("ignored"), std::string::npos);
    EXPECT_EQ(a.size(), 0u);
    // A valid JSON file with a bad place is corrupt too.
    ASSERT_TRUE(writeFileAtomic(a.file(), "[1, 2, 3]", Overwrite::Yes));
    EXPECT_EQ(a.load().size(), 1u);
    // The next store replaces it with a valid file.
    EXPECT_FALSE(a.store(decision("k1", Place::Shared)).has_value());
    DecisionCache b(dir, bin, "NVIDIA H100", "h100:1");
    EXPECT_TRUE(b.load().empty());
    EXPECT_EQ(b.size(), 1u);
    fs::remove_all(dir);
}

TEST(DecisionCache, AFileThatIsNotRegularIsNeitherReadNorReplaced) {
    const fs::path dir = tempDir("fifo");
    const BinaryId bin = BinaryId::current();
    DecisionCache a(dir, bin, "NVIDIA H100", "h100:1");
    fs::create_directories(dir);
    // A FIFO without a writer: opening it to read would block the program forever.
    ASSERT_EQ(mkfifo(a.file().c_str(), 0600), 0);
    auto w = a.load();
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("not a regular file"), std::string::npos);
    const auto stored = a.store(decision("k1", Place::Shared));
    ASSERT_TRUE(stored.has_value());
    EXPECT_NE(stored->find("not a regular file"), std::string::npos);
    EXPECT_TRUE(fs::is_fifo(a.file()));
    // A link to a device: left a link, the device untouched.
    fs::remove(a.file());
    fs::create_symlink("/dev/null", a.file());
    EXPECT_EQ(a.load().size(), 1u);
    EXPECT_TRUE(a.store(decision("k1", Place::Shared)).has_value());
    EXPECT_TRUE(fs::is_symlink(a.file()));
    EXPECT_TRUE(fs::is_character_file("/dev/null"));
    fs::remove_all(dir);
}

TEST(DecisionCache, StaleFilesAreIgnored) {
    const fs::path dir = tempDir("stale");
    BinaryId bin = BinaryId::current();
    DecisionCache a(dir, bin, "NVIDIA H100", "h100:1");
    ASSERT_FALSE(a.store(decision("k1", Place::Texture)).has_value());
    // Another build of the binary (same path, other size).
    BinaryId rebuilt = bin;
    rebuilt.size += 1;
    DecisionCache b(dir, rebuilt, "NVIDIA H100", "h100:1");
    ASSERT_EQ(b.file(), a.file());
    auto w = b.load();
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("stale"), std::string::npos);
    EXPECT_EQ(b.size(), 0u);
    // Another spec.
    DecisionCache c(dir, bin, "NVIDIA H100", "probed:2");
    ASSERT_EQ(c.load().size(), 1u);
    EXPECT_EQ(c.size(), 0u);
    // A stale file is not merged into a store.
    EXPECT_FALSE(b.store(decision("k9", Place::Global)).has_value());
    DecisionCache d(dir, rebuilt, "NVIDIA H100", "h100:1");
    EXPECT_TRUE(d.load().empty());
    EXPECT_EQ(d.size(), 1u);
    EXPECT_EQ(d.find("k1"), nullptr);
    fs::remove_all(dir);
}

TEST(DecisionCache, OutcomesWithoutADecisionRoundTripAndNeverReplaceOne) {
    const fs::path dir = tempDir("outcomes");
    const BinaryId bin = BinaryId::current();
    DecisionCache a(dir, bin, "NVIDIA H100", "h100:1");
    CachedDecision once = decision("k1", Place::Global);
    once.status = CachedStatus::Untraced;
    once.placement.clear();
    once.why = "not traced: launched once";
    once.launches = 1;
    CachedDecision pending = decision("k2", Place::Global);
    pending.status = CachedStatus::Pending;
    pending.placement.clear();
    pending.traceAttempts = 1;
    pending.sms = 1;
    pending.blocksPerSm = 3;
    CachedDecision bound = once;
    bound.key = "k3";
    bound.traceBound = true;
    CachedDecision failed = once;
    failed.key = "k4";
    failed.status = CachedStatus::Failed;
    failed.why = "the trace does not convert";
    CachedDecision original = decision("k5", Place::Global);
    original.status = CachedStatus::Original;
    EXPECT_FALSE(a.store({once, pending, bound, failed, original}).has_value());
    DecisionCache b(dir, bin, "NVIDIA H100", "h100:1");
    EXPECT_TRUE(b.load().empty());
    ASSERT_EQ(b.size(), 5u);
    EXPECT_EQ(b.find("k1")->status, CachedStatus::Untraced);
    EXPECT_FALSE(b.find("k1")->decided());
    EXPECT_EQ(b.find("k1")->why, "not traced: launched once");
    EXPECT_EQ(b.find("k1")->launches, 1u);
    EXPECT_FALSE(b.find("k1")->traceBound);
    EXPECT_TRUE(b.find("k3")->traceBound);
    EXPECT_EQ(b.find("k2")->status, CachedStatus::Pending);
    EXPECT_EQ(b.find("k2")->traceAttempts, 1);
    EXPECT_EQ(b.find("k2")->sms, 1u);
    EXPECT_EQ(b.find("k2")->blocksPerSm, 3u);
    EXPECT_EQ(b.find("k4")->status, CachedStatus::Failed);
    EXPECT_TRUE(b.find("k5")->decided());
    EXPECT_EQ(b.find("k5")->placement, (std::vector<Place>{Place::Global, Place::Global}));
    // A decision replaces an outcome; an outcome never replaces a decision.
    EXPECT_FALSE(b.store(decision("k1", Place::Texture)).has_value());
    CachedDecision late = once;
    late.key = "k5";
    EXPECT_FALSE(b.store(late).has_value());
    DecisionCache c(dir, bin, "NVIDIA H100", "h100:1");
    EXPECT_TRUE(c.load().empty());
    EXPECT_EQ(c.find("k1")->status, CachedStatus::Placed);
    EXPECT_EQ(c.find("k1")->placement[0], Place::Texture);
    EXPECT_EQ(c.find("k5")->status, CachedStatus::Original);
    // An unknown status is corrupt.
    auto text = readFile(c.file());
    ASSERT_TRUE(static_cast<bool>(text));
    const std::string bad =
        std::string(*text).replace(text->find("\"untraced\""), 10, "\"unknown\"");
    ASSERT_TRUE(writeFileAtomic(c.file(), bad, Overwrite::Yes));
    const auto w = c.load();
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("unknown status"), std::string::npos) << w[0];
    fs::remove_all(dir);
}

TEST(DecisionCache, AFileWrittenBeforeTheEnumStatesReadsAndWritesTheSame) {
    // tests/placer/data/decision_cache_v2.json: every status, written with string statuses.
    const std::string fixture =
        std::string(MEMPLACE_SOURCE_DIR) + "/tests/placer/data/decision_cache_v2.json";
    const auto before = readFile(fixture);
    ASSERT_TRUE(static_cast<bool>(before)) << fixture;
    const fs::path dir = tempDir("fixture");
    const BinaryId bin{"/opt/app/program", 123456, 1700000000123456789};
    DecisionCache a(dir, bin, "NVIDIA H100 80GB HBM3", "h100:0123456789abcdef");
    ASSERT_TRUE(writeFileAtomic(a.file(), *before, Overwrite::Yes));
    EXPECT_TRUE(a.load().empty());
    ASSERT_EQ(a.size(), 6u);
    const CachedDecision* placed = a.find("scale|256,1,1|0|0|4:4096,4:4096");
    ASSERT_NE(placed, nullptr);
    EXPECT_EQ(placed->status, CachedStatus::Placed);
    EXPECT_EQ(placed->placement, (std::vector<Place>{Place::Texture, Place::Global}));
    EXPECT_EQ(placed->jitPlacement, (std::vector<Place>{Place::Shared, Place::Global}));
    EXPECT_EQ(a.find("scale|128,1,1|0|0|4:64,4:64")->status, CachedStatus::Original);
    EXPECT_EQ(a.find("lookup|64,1,1|0|0|4:256")->status, CachedStatus::Untraced);
    EXPECT_FALSE(a.find("lookup|64,1,1|0|0|4:256")->traceBound);
    EXPECT_TRUE(a.find("lookup|64,1,1|0|0|4:512")->traceBound);
    const CachedDecision* pending = a.find("hist|256,1,1|1024|0|4:65536");
    ASSERT_NE(pending, nullptr);
    EXPECT_EQ(pending->status, CachedStatus::Pending);
    EXPECT_EQ(pending->traceAttempts, 2);
    EXPECT_EQ(pending->sms, 1u);
    EXPECT_EQ(pending->blocksPerSm, 3u);
    EXPECT_EQ(a.find("stencil|16,16,1|0|0|4:1048576")->status, CachedStatus::Failed);
    // Written back (nothing added), the file is the same bytes.
    ASSERT_FALSE(a.store(std::vector<CachedDecision>{}).has_value());
    const auto after = readFile(a.file());
    ASSERT_TRUE(static_cast<bool>(after));
    EXPECT_EQ(*after, *before);
    fs::remove_all(dir);
}

TEST(DecisionCache, AVersion1FileIsIgnoredWithOneWarningAndReplaced) {
    // Version 1 keyed signatures with their grid; its decisions would never be found.
    const fs::path dir = tempDir("v1");
    const BinaryId bin = BinaryId::current();
    DecisionCache a(dir, bin, "NVIDIA H100", "h100:1");
    ASSERT_FALSE(a.store(decision("k1", Place::Texture)).has_value());
    auto text = readFile(a.file());
    ASSERT_TRUE(static_cast<bool>(text));
    const std::size_t at = text->find("\"version\": 2");
    ASSERT_NE(at, std::string::npos);
    const std::string v1 = std::string(*text).replace(at, 12, "\"version\": 1");
    ASSERT_TRUE(writeFileAtomic(a.file(), v1, Overwrite::Yes));
    DecisionCache b(dir, bin, "NVIDIA H100", "h100:1");
    const auto w = b.load();
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("stale (version 1, this program writes 2)"), std::string::npos) << w[0];
    EXPECT_EQ(b.size(), 0u);
    EXPECT_FALSE(b.store(decision("k2", Place::Shared)).has_value());
    DecisionCache c(dir, bin, "NVIDIA H100", "h100:1");
    EXPECT_TRUE(c.load().empty());
    EXPECT_EQ(c.size(), 1u);
    EXPECT_EQ(c.find("k1"), nullptr);
    fs::remove_all(dir);
}

TEST(DecisionCache, AFileByAnotherMemplaceOrDriverIsStale) {
    const fs::path dir = tempDir("writer");
    const BinaryId bin = BinaryId::current();
    DecisionCache a(dir, bin, "NVIDIA H100", "h100:1", "memplace 0.1.0, driver 13000");
    ASSERT_FALSE(a.store(decision("k1", Place::Texture)).has_value());
    DecisionCache same(dir, bin, "NVIDIA H100", "h100:1", "memplace 0.1.0, driver 13000");
    EXPECT_TRUE(same.load().empty());
    EXPECT_EQ(same.size(), 1u);
    for (const char* other : {"memplace 0.2.0, driver 13000", "memplace 0.1.0, driver 13010"}) {
        DecisionCache b(dir, bin, "NVIDIA H100", "h100:1", other);
        const auto w = b.load();
        ASSERT_EQ(w.size(), 1u) << other;
        EXPECT_NE(w[0].find("stale (written by memplace 0.1.0, driver 13000)"), std::string::npos)
            << w[0];
        EXPECT_EQ(b.size(), 0u);
    }
    // A file from before the writer was recorded.
    DecisionCache old(dir / "old", bin, "NVIDIA H100", "h100:1");
    ASSERT_FALSE(old.store(decision("k1", Place::Texture)).has_value());
    DecisionCache now(dir / "old", bin, "NVIDIA H100", "h100:1", "memplace 0.1.0, driver 1");
    const auto w = now.load();
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("stale (written by an older memplace)"), std::string::npos) << w[0];
    fs::remove_all(dir);
}

TEST(DecisionCache, ProcessesStoringAtOnceLoseNothingAndLeaveAWholeFile) {
    const fs::path dir = tempDir("concurrent");
    const BinaryId bin = BinaryId::current();
    constexpr int kProcesses = 8;
    constexpr int kStores = 25;
    std::vector<pid_t> children;
    for (int p = 0; p < kProcesses; ++p) {
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            DecisionCache c(dir, bin, "NVIDIA H100", "h100:1", "w");
            bool ok = c.load().empty();
            for (int i = 0; i < kStores; ++i) {
                ok = ok &&
                     !c.store(decision(std::to_string(p) + "/" + std::to_string(i), Place::Texture))
                          .has_value();
            }
            ::_exit(ok ? 0 : 1);
        }
        children.push_back(pid);
    }
    for (const pid_t pid : children) {
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    DecisionCache all(dir, bin, "NVIDIA H100", "h100:1", "w");
    EXPECT_TRUE(all.load().empty()); // whole: it parses, and is this binary's
    EXPECT_EQ(all.size(), static_cast<size_t>(kProcesses * kStores)); // none lost
    int files = 0;
    for (const auto& f : fs::directory_iterator(dir)) {
        (void)f;
        ++files;
    }
    EXPECT_EQ(files, 1); // no temporary left behind
    fs::remove_all(dir);
}

TEST(DecisionCacheDir, TheUsersCacheByDefaultAFolderOrOff) {
    const char* names[] = {"MEMPLACE_CACHE", "XDG_CACHE_HOME", "HOME"};
    std::vector<std::optional<std::string>> saved;
    for (const char* n : names) {
        const char* v = std::getenv(n);
        saved.push_back(v != nullptr ? std::optional<std::string>(v) : std::nullopt);
    }
    auto set = [](const char* name, const char* value) {
        value == nullptr ? ::unsetenv(name) : ::setenv(name, value, 1);
    };
    set("MEMPLACE_CACHE", nullptr);
    set("XDG_CACHE_HOME", "/tmp/xdg");
    EXPECT_EQ(decisionCacheDir(), "/tmp/xdg/memplace/decisions");
    set("XDG_CACHE_HOME", nullptr);
    set("HOME", "/home/u");
    EXPECT_EQ(decisionCacheDir(), "/home/u/.cache/memplace/decisions");
    set("HOME", nullptr);
    EXPECT_EQ(decisionCacheDir(), ""); // nowhere to keep it: not kept
    set("MEMPLACE_CACHE", "/tmp/mine");
    EXPECT_EQ(decisionCacheDir(), "/tmp/mine");
    for (const char* off : {"off", "0", "no", "false", "none", " off "}) {
        set("MEMPLACE_CACHE", off);
        EXPECT_EQ(decisionCacheDir(), "") << off;
    }
    EXPECT_EQ(Options::fromEnvironment().cacheDir, "");
    for (size_t i = 0; i < saved.size(); ++i) {
        set(names[i], saved[i] ? saved[i]->c_str() : nullptr);
    }
}

} // namespace
} // namespace memplace::placer

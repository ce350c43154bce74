// libFuzzer target: the Placer's environment and its decision cache on fuzzed values. Every
// value gives options or a warning (never a crash, a sanitizer report or an option outside its
// range), and every cache file loads or is ignored with a warning; a decision stored after it
// reads back as stored.
//
// Input layout (docs/fuzzing.md): lines up to "\n%%cache\n", then the cache file's bytes.
// Each line sets one variable: its first byte picks the name (kVariables, modulo their
// number), the rest is the value (up to the first NUL). The cache is read as the file of the
// program "/fuzz/prog" (size 1, mtime 2) on device "fuzzdev" with spec "specfp".
#include "placer/cache.h"
#include "placer/placer.h"
#include "placer/sweep.h"
#include "runtime/src/env.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

using namespace memplace;

namespace {

constexpr const char* kVariables[] = {
    "MEMPLACE",
    "MEMPLACE_DISPATCH",
    "MEMPLACE_JIT",
    "MEMPLACE_JIT_SYNC",
    "MEMPLACE_L2_LIMIT",
    "MEMPLACE_TIME",
    "MEMPLACE_VERIFY",
    "MEMPLACE_QUIET",
    "MEMPLACE_SEARCH",
    "MEMPLACE_SEARCH_MS",
    "MEMPLACE_TRACE_SMS",
    "MEMPLACE_TRACE_BLOCKS",
    "MEMPLACE_TRACE_WAVES",
    "MEMPLACE_TRACE_RECORDS",
    "MEMPLACE_TUNE",
    "MEMPLACE_TUNE_EXPLORE",
    "MEMPLACE_TIMING_SPIN_US",
    "MEMPLACE_SWEEP_MAX",
    "MEMPLACE_SWEEP_TOP",
    "MEMPLACE_SWEEP_BUDGET_MS",
    "MEMPLACE_SWEEP_WARMUP",
    "MEMPLACE_SWEEP_REPEAT",
    "MEMPLACE_SWEEP_SPIN_US",
    "MEMPLACE_SWEEP_SEED",
    "MEMPLACE_SWEEP_KERNELS",
    "MEMPLACE_SWEEP_NO_DYNAMIC",
    "MEMPLACE_SPEC",
    "MEMPLACE_CACHE",
    "MEMPLACE_REPORT",
    "MEMPLACE_TRACE_DIR",
};
constexpr size_t kVariableCount = sizeof kVariables / sizeof kVariables[0];
constexpr std::string_view kCacheSeparator = "\n%%cache\n";

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "placer_env_cache_fuzz: %s\n", what.c_str());
    std::abort();
}

const std::filesystem::path& cacheDir() {
    static const std::filesystem::path dir = [] {
        std::error_code ec;
        std::filesystem::path d = std::filesystem::is_directory("/dev/shm", ec)
                                      ? std::filesystem::path("/dev/shm")
                                      : std::filesystem::temp_directory_path();
        return d / ("memplace_placer_fuzz_" + std::to_string(::getpid()));
    }();
    return dir;
}

void removeCacheDir() {
    std::error_code ec;
    std::filesystem::remove_all(cacheDir(), ec);
}

/// Sets the variables the lines give (every other one of kVariables unset); returns the values.
std::vector<std::string> setEnvironment(std::string_view lines) {
    std::vector<std::string> values(kVariableCount);
    std::vector<bool> set(kVariableCount, false);
    while (!lines.empty()) {
        const size_t nl = lines.find('\n');
        std::string_view line = lines.substr(0, nl);
        lines = nl == std::string_view::npos ? std::string_view() : lines.substr(nl + 1);
        if (line.empty()) {
            continue;
        }
        const size_t v = static_cast<unsigned char>(line[0]) % kVariableCount;
        std::string value(line.substr(1));
        value = value.substr(0, value.find('\0'));
        values[v] = value;
        set[v] = true;
    }
    for (size_t v = 0; v < kVariableCount; ++v) {
        if (set[v]) {
            ::setenv(kVariables[v], values[v].c_str(), 1);
        } else {
            ::unsetenv(kVariables[v]);
        }
    }
    return values;
}

/// The ranges Options::fromEnvironment documents (placer.cpp is linked uninstrumented, so a
/// NaN cast to an integer shows here, not as a UBSan report).
void checkOptions(const placer::Options& o) {
    const auto& s = o.sampling;
    if (s.sms < 1 || s.sms > 1024 || s.blocksPerSm > (1u << 20) || s.waves < 1 || s.waves > 1024 ||
        s.maxRecords < 1 || s.maxRecords > (size_t{1} << 26) ||
        !(o.searchMs >= 1 && o.searchMs <= 3600000) || o.tuneCandidates < 0 ||
        o.tuneCandidates > 16 || o.tuneExplore < 0 || o.tuneExplore > 8 ||
        !(o.timingSpinUs >= 0 && o.timingSpinUs <= 100000)) {
        fail("an option outside its documented range");
    }
}

void parseEachDirectly(const std::vector<std::string>& values) {
    std::vector<std::string> w;
    (void)detail::parseMemplaceEnv(values[0].c_str());
    (void)detail::parseDispatchEnv(values[1].c_str(), w);
    (void)detail::parseJitEnv(values[2].c_str(), w);
    (void)detail::parseSwitchEnv("MEMPLACE_JIT_SYNC", values[3].c_str(), w);
    std::size_t cap = 0;
    (void)detail::parseL2LimitEnv(values[4].c_str(), w, &cap);
    const auto env = detail::parseMemplaceEnv(values[0].c_str());
    for (const auto& e : env.force) {
        (void)detail::forcedPlace(env.force, e.kernel, e.array);
    }
}

void exerciseCache(std::string_view bytes) {
    const placer::BinaryId binary{"/fuzz/prog", 1, 2};
    placer::DecisionCache cache(cacheDir(), binary, "fuzzdev", "specfp");
    std::error_code ec;
    std::filesystem::create_directories(cacheDir(), ec);
    {
        std::ofstream out(cache.file(), std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    (void)cache.load();
    placer::CachedDecision d;
    d.key = "fuzz-key";
    d.kernel = "k";
    d.arrays = {"a", "b"};
    d.placement = {Place::Global, Place::Shared};
    d.predictedSeconds = 1e-3;
    d.originalSeconds = 2e-3;
    if (auto why = cache.store(d)) {
        fail("store: " + *why);
    }
    placer::DecisionCache again(cacheDir(), binary, "fuzzdev", "specfp");
    const auto warnings = again.load();
    const placer::CachedDecision* back = again.find("fuzz-key");
    if (!warnings.empty() || back == nullptr || back->placement != d.placement ||
        back->arrays != d.arrays || back->kernel != d.kernel) {
        fail("a stored decision does not read back");
    }
    std::filesystem::remove(cache.file(), ec);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    std::atexit(removeCacheDir);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view input(reinterpret_cast<const char*>(data), size);
    std::string_view lines = input;
    std::string_view cacheBytes;
    const size_t at = input.find(kCacheSeparator);
    if (at != std::string_view::npos) {
        lines = input.substr(0, at);
        cacheBytes = input.substr(at + kCacheSeparator.size());
    }
    const auto values = setEnvironment(lines);
    std::vector<std::string> warnings;
    checkOptions(placer::Options::fromEnvironment(&warnings));
    (void)placer::SweepOptions::fromEnvironment(&warnings);
    parseEachDirectly(values);
    if (at != std::string_view::npos) {
        exerciseCache(cacheBytes);
    }
    return 0;
}

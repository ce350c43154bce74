// `memplace probe` as a user runs it. No test here needs a GPU: recorded measurements and fake
// GPU programs stand in for the device.
#include "run_command.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace memplace {
namespace {

namespace fs = std::filesystem;
using testing::runMemplace;

const std::string kSynthetic =
    std::string(MEMPLACE_SOURCE_DIR) + "/tests/probe/data/synthetic_measurements.json";

std::string tempPath(const std::string& name) {
    return (fs::temp_directory_path() / fmt::format("memplace_probe_{}_{}", ::getpid(), name))
        .string();
}

/// A stand-in for memplace-probe-gpu: a script that prints `out` and exits with `code`.
std::string fakeProgram(const std::string& name, const std::string& out, int code) {
    std::string path = tempPath(name);
    std::ofstream(path) << "#!/bin/sh\ncat <<'JSON'\n" << out << "\nJSON\nexit " << code << "\n";
    fs::permissions(path, fs::perms::owner_all);
    return path;
}

std::string readAll(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(ProbeCli, HelpDocumentsTheOptions) {
    auto r = runMemplace("probe --help");
    EXPECT_EQ(r.exitCode, 0);
    for (const char* opt : {"--output", "--force", "--json", "--measurements", "--gpu-program",
                            "--compare", "--save-measurements"}) {
        EXPECT_NE(r.out.find(opt), std::string::npos) << opt;
    }
    EXPECT_NE(runMemplace("--help").out.find("probe"), std::string::npos);
}

TEST(ProbeCli, WithoutAGpuSaysSoAndExitsTwo) {
    if (fs::exists("/dev/nvidiactl") || fs::exists("/dev/nvidia0")) {
        GTEST_SKIP() << "this machine has an NVIDIA device";
    }
    auto r = runMemplace("probe -o " + tempPath("nogpu.msl"));
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find("no GPU"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(tempPath("nogpu.msl")));
}

TEST(ProbeCli, FakeGpuProgramsExitCodes) {
    std::string good = fakeProgram("good.sh", readAll(kSynthetic), 0);
    auto ok = runMemplace("probe --gpu-program " + good);
    EXPECT_EQ(ok.exitCode, 0) << ok.err;
    EXPECT_NE(ok.out.find("processor {"), std::string::npos);

    std::string none =
        fakeProgram("none.sh", R"({"error": "no CUDA device", "no_device": true})", 3);
    auto r = runMemplace("probe --gpu-program " + none);
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("no GPU: no CUDA device"), std::string::npos) << r.err;

    std::string broken = fakeProgram("broken.sh", R"({"error": "cudaMalloc failed"})", 4);
    auto b = runMemplace("probe --gpu-program " + broken);
    EXPECT_EQ(b.exitCode, 1);
    EXPECT_NE(b.err.find("cudaMalloc failed"), std::string::npos) << b.err;

    auto missing = runMemplace("probe --gpu-program /no/such/program");
    EXPECT_EQ(missing.exitCode, 2);
    for (const auto& p : {good, none, broken}) {
        fs::remove(p);
    }
}

TEST(ProbeCli, WritesAtomicallyAndOnlyWithForceOverAFile) {
    std::string out = tempPath("spec.msl");
    fs::remove(out);
    auto r = runMemplace("probe --measurements " + kSynthetic + " -o " + out);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("wrote"), std::string::npos);
    auto check = runMemplace("spec check " + out);
    EXPECT_EQ(check.exitCode, 0) << check.err;

    std::ofstream(out) << "keep me";
    auto again = runMemplace("probe --measurements " + kSynthetic + " -o " + out);
    EXPECT_EQ(again.exitCode, 2);
    EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
    EXPECT_EQ(readAll(out), "keep me");

    auto forced = runMemplace("probe --measurements " + kSynthetic + " -o " + out + " --force");
    EXPECT_EQ(forced.exitCode, 0) << forced.err;
    EXPECT_NE(readAll(out).find("memory L2persist"), std::string::npos);
    fs::remove(out);
}

TEST(ProbeCli, JsonWithComparison) {
    auto r = runMemplace("probe --measurements " + kSynthetic + " --json --compare h100");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["device"]["name"], "Synthetic GPU");
    EXPECT_TRUE(j["output"].is_null());
    EXPECT_FALSE(j["comparison"]["differences"].empty());
    EXPECT_NE(j["spec"].get<std::string>().find("processor {"), std::string::npos);
    EXPECT_EQ(j["fetch_granularity"]["L1"]["bytes"], 32);
}

TEST(ProbeCli, SavesMeasurementsAndRejectsBadOnes) {
    std::string saved = tempPath("saved.json");
    fs::remove(saved);
    auto r = runMemplace("probe --measurements " + kSynthetic + " --save-measurements " + saved);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(readAll(saved), readAll(kSynthetic));
    fs::remove(saved);

    std::string bad = tempPath("bad.json");
    std::ofstream(bad) << R"({"schema": "memplace-probe-measurements", "version": 1})";
    auto b = runMemplace("probe --measurements " + bad);
    EXPECT_EQ(b.exitCode, 2);
    EXPECT_FALSE(b.err.empty());
    EXPECT_EQ(runMemplace("probe --measurements /no/such/file.json").exitCode, 2);
    EXPECT_EQ(runMemplace("probe --measurements " + kSynthetic + " --compare no-such-gpu").exitCode,
              2);
    fs::remove(bad);
}

} // namespace
} // namespace memplace

// The CLI as a user meets it: exit codes, --help, --version, --json.
#include "run_command.h"
#include "tests/common/time_budget.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <set>

namespace memplace {
namespace {

using testing::runMemplace;

TEST(Cli, VersionAndHelp) {
    auto v = runMemplace("--version");
    EXPECT_EQ(v.exitCode, 0);
    EXPECT_NE(v.out.find("memplace "), std::string::npos);
    auto h = runMemplace("--help");
    EXPECT_EQ(h.exitCode, 0);
    EXPECT_NE(h.out.find("spec"), std::string::npos);
    EXPECT_EQ(runMemplace("spec --help").exitCode, 0);
    for (const char* sub :
         {"spec list --help", "spec show --help", "spec check --help", "spec eval --help"}) {
        auto r = runMemplace(sub);
        EXPECT_EQ(r.exitCode, 0) << sub;
        EXPECT_NE(r.out.find("--json"), std::string::npos) << sub << " documents --json";
    }
}

TEST(Cli, BadUsageExitsTwo) {
    EXPECT_EQ(runMemplace("").exitCode, 2);
    EXPECT_EQ(runMemplace("no-such-command").exitCode, 2);
    EXPECT_EQ(runMemplace("spec show").exitCode, 2);
    EXPECT_EQ(runMemplace("spec list --no-such-flag").exitCode, 2);
}

TEST(Cli, SpecListShowsEveryBuiltin) {
    auto r = runMemplace("spec list --json");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    ASSERT_TRUE(j.is_array());
    EXPECT_EQ(j.size(), 7u);
    auto human = runMemplace("spec list");
    EXPECT_NE(human.out.find("NVIDIA H100"), std::string::npos);
}

TEST(Cli, SpecShowJsonHasTheSpec) {
    auto r = runMemplace("spec show h100 --json");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["processor"]["sms"], 132);
    EXPECT_FALSE(j["memories"].empty());
    EXPECT_FALSE(j["places"].empty());
}

TEST(Cli, SpecShowMslReparses) {
    auto r = runMemplace("spec show h100 --msl");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    std::string path = "/tmp/memplace_cli_h100_printed.msl";
    std::ofstream(path) << r.out;
    auto check = runMemplace("spec check " + path);
    EXPECT_EQ(check.exitCode, 0) << check.err;
    std::remove(path.c_str());
}

TEST(Cli, SpecCheckBuiltinsPass) {
    auto r = runMemplace("spec check specs/h100.msl specs/h200.msl specs/a100.msl specs/v100.msl "
                         "specs/k20c.msl specs/m2075.msl specs/c1060.msl",
                         MEMPLACE_SOURCE_DIR);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("specs/h100.msl: ok"), std::string::npos) << r.out;
}

TEST(Cli, SpecCheckMalformedExitsTwoWithLocation) {
    std::string path = "/tmp/memplace_cli_bad.msl";
    std::ofstream(path) << "processor {\n    sms = ;\n}\n";
    auto r = runMemplace("spec check " + path);
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find(path + ":2:11: error: expected a value, found ';'"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("    sms = ;\n            ^"), std::string::npos) << r.err;
    auto j = runMemplace("spec check --json " + path);
    EXPECT_EQ(j.exitCode, 2);
    auto parsed = nlohmann::json::parse(j.out);
    EXPECT_FALSE(parsed[0]["ok"].get<bool>());
    EXPECT_EQ(parsed[0]["diagnostics"][0]["line"], 2);
    std::remove(path.c_str());
}

TEST(Cli, SpecCheckMissingFileExitsTwo) {
    auto r = runMemplace("spec check /nonexistent/x.msl");
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("/nonexistent/x.msl"), std::string::npos);
}

TEST(Cli, SpecEvalCountsTransactions) {
    auto r = runMemplace("spec eval h100 --access stride:1 --access same --json");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    auto find = [&](const std::string& access, const std::string& memory) {
        for (const auto& row : j) {
            if (row["access"] == access && row["memory"] == memory) {
                return row["transactions"].get<int>();
            }
        }
        return -1;
    };
    EXPECT_EQ(find("stride:1", "global"), 4);
    EXPECT_EQ(find("stride:1", "constant"), 32);
    EXPECT_EQ(find("same", "constant"), 1);
    EXPECT_EQ(find("stride:1", "shared"), 1);
    EXPECT_EQ(runMemplace("spec eval h100 --access zigzag").exitCode, 2);
}

TEST(Cli, PlaceJsonHasTheKeysTheIssueNames) {
    auto r = runMemplace("place examples/traces/poly_eval.trace --spec h100 --json --top 3",
                         MEMPLACE_SOURCE_DIR);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["kernel"], "poly_eval");
    // Staged in shared memory: the constant bank's upload before each launch (its launchCost)
    // costs more than this 2 MB kernel's broadcast saves.
    EXPECT_EQ(j["placement"]["coef"], "shared");
    EXPECT_EQ(j["placement"]["x"], "global");
    EXPECT_GT(j["predicted_time"].get<double>(), 0);
    ASSERT_TRUE(j["alternatives"].is_array());
    EXPECT_EQ(j["alternatives"].size(), 3u);
    EXPECT_EQ(j["alternatives"][0]["placement"], j["placement"]);
    EXPECT_EQ(j["search"]["algorithm"], "bnb");
    EXPECT_GT(j["search"]["evaluated"].get<int>(), 0);
    EXPECT_GE(j["search"]["seconds"].get<double>(), 0);
    EXPECT_TRUE(j["search"]["exact"].get<bool>());
    // The breakdown: per path, per array, per level.
    EXPECT_FALSE(j["breakdown"]["paths"].empty());
    EXPECT_EQ(j["breakdown"]["launch_cycles"].get<double>(), 0.0) << "nothing uploaded";
    EXPECT_EQ(j["breakdown"]["arrays"].size(), 3u);
    EXPECT_FALSE(j["breakdown"]["arrays"][1]["levels"].empty());
    EXPECT_TRUE(j["original"]["feasible"].get<bool>());
    EXPECT_GE(j["original"]["speedup"].get<double>(), 1.0);
    for (const char* algo : {"exhaustive", "greedy", "rules"}) {
        auto a = runMemplace(std::string("place examples/traces/saxpy.trace --spec h100 --json "
                                         "--search ") +
                                 algo,
                             MEMPLACE_SOURCE_DIR);
        ASSERT_EQ(a.exitCode, 0) << algo << a.err;
        EXPECT_EQ(nlohmann::json::parse(a.out)["search"]["algorithm"], algo);
    }
    auto human =
        runMemplace("place examples/traces/table_lookup.trace --spec h100", MEMPLACE_SOURCE_DIR);
    ASSERT_EQ(human.exitCode, 0) << human.err;
    EXPECT_NE(human.out.find("table  shared"), std::string::npos) << human.out;
    EXPECT_NE(human.out.find("predicted:"), std::string::npos);
    EXPECT_NE(human.out.find("alternatives:"), std::string::npos);
}

TEST(Cli, PlaceEvaluatesGivenPlacementsWithCounters) {
    auto r = runMemplace("place examples/traces/saxpy.trace --spec h100 --json --evaluate default "
                         "--evaluate saxpy.x=texture",
                         MEMPLACE_SOURCE_DIR);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["evaluated"].size(), 2u);
    EXPECT_EQ(j["evaluated"][0]["placement"]["x"], "global");
    EXPECT_EQ(j["evaluated"][1]["placement"]["x"], "texture");
    EXPECT_EQ(j["evaluated"][1]["placement"]["y"], "global");
    auto memories = [](const nlohmann::json& e) {
        std::set<std::string> m;
        for (const auto& c : e["breakdown"]["counters"]) {
            m.insert(c["memory"].get<std::string>());
        }
        return m;
    };
    EXPECT_TRUE(memories(j["evaluated"][0]).contains("L1"));
    EXPECT_FALSE(memories(j["evaluated"][0]).contains("texL1"));
    EXPECT_TRUE(memories(j["evaluated"][1]).contains("texL1"));
    EXPECT_FALSE(j["breakdown"]["counters"].empty());
    auto human = runMemplace("place examples/traces/saxpy.trace --spec h100 --evaluate x=texture",
                             MEMPLACE_SOURCE_DIR);
    ASSERT_EQ(human.exitCode, 0) << human.err;
    EXPECT_NE(human.out.find("evaluated x=texture y=global"), std::string::npos) << human.out;
    EXPECT_NE(human.out.find("texL1 read"), std::string::npos) << human.out;
    for (const char* bad : {"x=nowhere", "nosuch=global", "x"}) {
        auto e = runMemplace(std::string("place examples/traces/saxpy.trace --spec h100 "
                                         "--evaluate ") +
                                 bad,
                             MEMPLACE_SOURCE_DIR);
        EXPECT_EQ(e.exitCode, 2) << bad;
        EXPECT_NE(e.err.find("--evaluate"), std::string::npos) << e.err;
    }
}

TEST(Cli, PlaceRejectsBadInput) {
    EXPECT_EQ(runMemplace("place examples/traces/saxpy.trace", MEMPLACE_SOURCE_DIR).exitCode, 2);
    EXPECT_EQ(runMemplace("place examples/traces/saxpy.trace --spec nosuch", MEMPLACE_SOURCE_DIR)
                  .exitCode,
              2);
    EXPECT_EQ(runMemplace("place examples/traces/saxpy.trace --spec h100 --search magic",
                          MEMPLACE_SOURCE_DIR)
                  .exitCode,
              2);
    auto missing = runMemplace("place /nonexistent.trace --spec h100");
    EXPECT_EQ(missing.exitCode, 2);
    // A truncated binary trace is an error with a message, not a crash.
    auto conv = runMemplace("trace convert examples/traces/saxpy.trace -o /tmp/memplace_cli.bin "
                            "--to binary --force",
                            MEMPLACE_SOURCE_DIR);
    ASSERT_EQ(conv.exitCode, 0) << conv.err;
    std::ifstream in("/tmp/memplace_cli.bin", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream("/tmp/memplace_cli_cut.bin", std::ios::binary)
        << bytes.substr(0, bytes.size() / 2);
    auto cut = runMemplace("place /tmp/memplace_cli_cut.bin --spec h100");
    EXPECT_EQ(cut.exitCode, 2);
    EXPECT_NE(cut.err.find("truncated"), std::string::npos) << cut.err;
    auto whole = runMemplace("place /tmp/memplace_cli.bin --spec h100 --json");
    EXPECT_EQ(whole.exitCode, 0) << whole.err;
    std::remove("/tmp/memplace_cli.bin");
    std::remove("/tmp/memplace_cli_cut.bin");
}

TEST(Cli, TraceCommands) {
    auto list = runMemplace("trace synth --list");
    EXPECT_EQ(list.exitCode, 0);
    EXPECT_NE(list.out.find("table_lookup"), std::string::npos);
    auto info = runMemplace("trace info examples/traces/jacobi2d.trace --spec h100 --json",
                            MEMPLACE_SOURCE_DIR);
    ASSERT_EQ(info.exitCode, 0) << info.err;
    auto j = nlohmann::json::parse(info.out);
    EXPECT_EQ(j["kernel"], "jacobi2d");
    EXPECT_FALSE(j["analysis"]["arrays"][0]["streams"].empty());
    EXPECT_EQ(runMemplace("trace info /nonexistent").exitCode, 2);
}

TEST(Cli, TraceConvertAndSynthPrintJson) {
    auto list = runMemplace("trace synth --list --json");
    ASSERT_EQ(list.exitCode, 0) << list.err;
    auto names = nlohmann::json::parse(list.out);
    ASSERT_TRUE(names.is_array());
    EXPECT_FALSE(names.empty());
    EXPECT_TRUE(names[0].contains("name") && names[0].contains("description"));
    auto synth = runMemplace("trace synth saxpy -o /tmp/memplace_cli_synth.trace --force --json");
    ASSERT_EQ(synth.exitCode, 0) << synth.err;
    auto s = nlohmann::json::parse(synth.out);
    EXPECT_EQ(s["file"], "/tmp/memplace_cli_synth.trace");
    EXPECT_EQ(s["form"], "text");
    EXPECT_GT(s["records"].get<int>(), 0);
    auto conv = runMemplace("trace convert /tmp/memplace_cli_synth.trace -o "
                            "/tmp/memplace_cli_synth.bin --force --json");
    ASSERT_EQ(conv.exitCode, 0) << conv.err;
    auto c = nlohmann::json::parse(conv.out);
    EXPECT_EQ(c["form"], "binary");
    EXPECT_EQ(c["records"], s["records"]);
    EXPECT_EQ(c["lanes"], s["lanes"]);
    std::remove("/tmp/memplace_cli_synth.trace");
    std::remove("/tmp/memplace_cli_synth.bin");
}

TEST(Cli, NonUtf8FileNamesInJsonAreReplacedNotFatal) {
    // A Latin-1 file name: every JSON writer that quoted it used to abort (nlohmann type_error).
    const std::string file = "/tmp/memplace_cli_caf\xe9.trace";
    const std::string bin = "/tmp/memplace_cli_caf\xe9.bin";
    const std::string replaced = "caf\xef\xbf\xbd"; // U+FFFD
    auto synth = runMemplace("trace synth saxpy -o '" + file + "' --force --json");
    ASSERT_EQ(synth.exitCode, 0) << synth.err;
    EXPECT_NE(nlohmann::json::parse(synth.out)["file"].get<std::string>().find(replaced),
              std::string::npos);
    auto conv = runMemplace("trace convert '" + file + "' -o '" + bin + "' --force --json");
    ASSERT_EQ(conv.exitCode, 0) << conv.err;
    EXPECT_NE(nlohmann::json::parse(conv.out)["file"].get<std::string>().find(replaced),
              std::string::npos);
    auto info = runMemplace("trace info '" + bin + "' --spec h100 --json");
    ASSERT_EQ(info.exitCode, 0) << info.err;
    EXPECT_EQ(nlohmann::json::parse(info.out)["kernel"], "saxpy");
    std::remove(file.c_str());
    std::remove(bin.c_str());
}

/// A text trace of `n` alike arrays, each read once by one warp: nothing tells
/// branch-and-bound's bound one array from another, so proving the optimum of 20 takes minutes.
std::string alikeArraysTrace(int n) {
    std::string t = "memplace-trace 1\nkernel alike\ngrid 264 1 1\nblock 256 1 1\n";
    for (int a = 0; a < n; ++a) {
        t += fmt::format("array a{} elem=4 length=4096 mode=read\n", a);
    }
    for (int a = 0; a < n; ++a) {
        t += fmt::format("r 0 0 {} a{} * 0..31\n", a, a);
    }
    return t;
}

TEST(Cli, PlaceStopsAtItsTimeLimitAndSaysSo) {
    const std::string file = "/tmp/memplace_cli_alike20.trace";
    std::ofstream(file, std::ios::trunc) << alikeArraysTrace(20);
    const auto start = std::chrono::steady_clock::now();
    auto r = runMemplace("place " + file + " --spec h100 --json --time-limit 1");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_LT(seconds, test::timeBudget(30));
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["search"]["proven_optimal"], false);
    EXPECT_EQ(j["search"]["time_limit_seconds"], 1.0);
    EXPECT_NE(j["search"]["notes"].dump().find("not proven optimal"), std::string::npos);
    // The default limit applies without the option; the text says it too.
    auto text = runMemplace("place " + file + " --spec h100");
    ASSERT_EQ(text.exitCode, 0) << text.err;
    EXPECT_NE(text.out.find("bnb (not proven optimal)"), std::string::npos) << text.out;
    EXPECT_EQ(runMemplace("place " + file + " --spec h100 --time-limit nan").exitCode, 2);
    EXPECT_EQ(runMemplace("place " + file + " --spec h100 --time-limit -1").exitCode, 2);
    std::remove(file.c_str());
}

} // namespace
} // namespace memplace

// Google Benchmark programs for the placement engine:
//   BM_AnalyzeExact/N     trace analysis (transactions + exact reuse distances), N lane accesses
//   BM_AnalyzeSampled/N   the same with SHARDS line sampling at rate 0.01
//   BM_Gather{Exact,Sampled}/N  random gathers over a 64 MB array (the expensive case)
//   BM_Search<algo>/A     search time for a random kernel of A arrays on H100
// Run: build/bin/bench_engine --benchmark_filter=... (one core: taskset -c 0).
#include "model/analysis.h"
#include "model/model.h"
#include "search/search.h"
#include "spec/spec.h"
#include "trace/synth.h"

#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <optional>

namespace {

using namespace memplace;

const spec::Spec& h100() {
    static spec::Spec s = *spec::loadSpec("h100");
    return s;
}

const trace::Trace& benchTrace(uint64_t lanes, bool gather = false) {
    static std::map<std::pair<uint64_t, bool>, std::unique_ptr<trace::Trace>> cache;
    auto& t = cache[{lanes, gather}];
    if (!t) {
        t = std::make_unique<trace::Trace>(gather ? *trace::synth::gatherTrace(lanes)
                                                  : *trace::synth::benchmarkTrace(lanes));
    }
    return *t;
}

void analyze(benchmark::State& state, double rate, bool gather = false) {
    const trace::Trace& t = benchTrace(static_cast<uint64_t>(state.range(0)), gather);
    model::AnalysisOptions o;
    o.lineSampleRate = rate;
    std::optional<model::TraceStats> last;
    for (auto _ : state) {
        auto st = model::analyze(t, h100(), o);
        benchmark::DoNotOptimize(st);
        last = std::move(*st);
    }
    state.counters["lanes/s"] = benchmark::Counter(static_cast<double>(t.laneCount()) *
                                                       static_cast<double>(state.iterations()),
                                                   benchmark::Counter::kIsRate);
    state.counters["lanes"] = static_cast<double>(t.laneCount());
    if (rate < 1.0 && last) {
        // Accuracy against the exact analysis (outside the timed loop).
        auto exact = model::analyze(t, h100());
        state.counters["hit_ratio_error"] = model::hitRatioError(*exact, *last);
    }
}

void BM_AnalyzeExact(benchmark::State& state) {
    analyze(state, 1.0);
}
void BM_AnalyzeSampled(benchmark::State& state) {
    analyze(state, 0.01);
}
void BM_GatherExact(benchmark::State& state) {
    analyze(state, 1.0, true);
}
void BM_GatherSampled(benchmark::State& state) {
    analyze(state, 0.01, true);
}
BENCHMARK(BM_GatherExact)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GatherSampled)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AnalyzeExact)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Arg(10'000'000)
    ->Arg(100'000'000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AnalyzeSampled)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Arg(10'000'000)
    ->Arg(100'000'000)
    ->Unit(benchmark::kMillisecond);

const model::Model& modelFor(uint32_t arrays) {
    static std::map<uint32_t, std::unique_ptr<model::Model>> cache;
    auto& m = cache[arrays];
    if (!m) {
        auto t = trace::synth::randomKernel(1000 + arrays, arrays, 8, 128);
        auto st = model::analyze(*t, h100());
        m = std::make_unique<model::Model>(h100(), std::move(*st));
    }
    return *m;
}

void searchBench(benchmark::State& state, search::Algorithm a) {
    const model::Model& m = modelFor(static_cast<uint32_t>(state.range(0)));
    search::SearchOptions o;
    o.algorithm = a;
    o.topK = 1;
    uint64_t evaluated = 0;
    for (auto _ : state) {
        auto r = search::search(m, o);
        if (!r) {
            state.SkipWithError(r.message().c_str());
            return;
        }
        evaluated = r->evaluated;
        benchmark::DoNotOptimize(r);
    }
    state.counters["evaluated"] = static_cast<double>(evaluated);
    state.counters["space"] = static_cast<double>(search::spaceSize(m));
}

void BM_SearchGreedy(benchmark::State& s) {
    searchBench(s, search::Algorithm::Greedy);
}
void BM_SearchBnB(benchmark::State& s) {
    searchBench(s, search::Algorithm::BranchAndBound);
}
void BM_SearchExhaustive(benchmark::State& s) {
    searchBench(s, search::Algorithm::Exhaustive);
}
void BM_SearchRules(benchmark::State& s) {
    searchBench(s, search::Algorithm::Rules);
}
BENCHMARK(BM_SearchGreedy)
    ->Arg(2)
    ->Arg(4)
    ->Arg(8)
    ->Arg(10)
    ->Arg(16)
    ->Arg(32)
    ->Arg(64)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SearchBnB)
    ->Arg(2)
    ->Arg(4)
    ->Arg(8)
    ->Arg(10)
    ->Arg(12)
    ->Arg(16)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SearchExhaustive)->Arg(2)->Arg(4)->Arg(6)->Arg(8)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SearchRules)->Arg(2)->Arg(16)->Arg(64)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();

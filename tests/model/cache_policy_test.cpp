// The cache-sharing policies against ground truth: a fully associative LRU L1 shared by every
// array, simulated on the interleaved SM streams (model::simulateSharedLru). For each L1TEX size
// the model's predicted L1 read hits per array (all arrays in global memory) are compared with
// the simulation. Decision 007 has the table this test prints.
#include "model/analysis.h"
#include "model/model.h"
#include "model/occupancy.h"
#include "spec/spec.h"
#include "trace/synth.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace memplace::model {
namespace {

TEST(CachePolicy, FootprintCompositionTracksSharedLruBetterThanEqualSplit) {
    std::vector<trace::Trace> traces;
    for (const auto& k : trace::synth::exampleKernels()) {
        traces.push_back(*k.make({}));
    }
    for (uint64_t seed = 1; seed <= 10; ++seed) {
        traces.push_back(*trace::synth::randomKernel(seed, 6, 16, 256));
    }
    for (double kb : {16.0, 32.0, 64.0, 128.0, 256.0}) {
        auto s = spec::loadSpec("h100");
        ASSERT_TRUE(s.ok());
        for (auto& m : s->memories) {
            if (m.name == "L1" || m.name == "texL1" || m.name == "shared") {
                m.size = static_cast<uint64_t>(kb * 1024);
            }
        }
        double err[2] = {0, 0};
        double refs = 0;
        for (const auto& t : traces) {
            auto st = analyze(t, *s);
            ASSERT_TRUE(st.ok()) << st.message();
            std::vector<double> sim;
            for (int policy = 0; policy < 2; ++policy) {
                ModelOptions o;
                o.cache = policy == 0 ? CachePolicy::EqualSplit : CachePolicy::Footprint;
                Model m(*s, *st, o);
                Prediction p = m.predict(m.baseline());
                ASSERT_TRUE(p.feasible);
                std::vector<bool> shares(m.arrayCount(), false);
                std::vector<double> predicted(m.arrayCount(), 0), requests(m.arrayCount(), 0);
                for (size_t i = 0; i < p.arrays.size(); ++i) {
                    for (const auto& l : p.arrays[i].levels) {
                        if (l.memory == "L1") {
                            shares[i] = true;
                            predicted[i] = l.readHits;
                            requests[i] = l.readRequests;
                        }
                    }
                }
                if (sim.empty()) {
                    double carve = m.stats().residentBlocks *
                                   static_cast<double>(
                                       sharedAllocation(s->processor, m.stats().sharedPerBlock));
                    sim = simulateSharedLru(t, *s, spec::ShareScope::Sm, 32, kb * 1024 - carve,
                                            shares, m.stats().residentBlocks);
                }
                for (size_t i = 0; i < predicted.size(); ++i) {
                    err[policy] += std::abs(predicted[i] - sim[i]);
                    refs += policy == 0 ? requests[i] : 0;
                }
            }
        }
        std::printf("[ L1 %5.0f KB ] hit error per L1 request: equal split %.4f, footprint %.4f\n",
                    kb, err[0] / refs, err[1] / refs);
        EXPECT_LE(err[1], err[0] + 1e-9) << kb << " KB";
        EXPECT_LT(err[1] / refs, 0.05) << kb << " KB";
    }
}

} // namespace
} // namespace memplace::model

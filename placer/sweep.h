// The evaluation's in-process sweep (decision 018): MEMPLACE=sweep installs a SweepPolicy around
// the online Placer. For each input signature the Placer traces the first launch and decides as it
// does under MEMPLACE=auto; the policy then builds a plan from the same trace (the original
// placement, the default, the Placer's decision, the engine's best, the rule-based baseline,
// the engine's top K, then every other feasible placement or a documented sample of them, each
// with the model's predicted time) and asks the runtime to measure every placement of the plan
// on the next launch's arguments (host.h: Decision::Kind::Sweep; runtime/README.md "Sweeps").
// Results go to MEMPLACE_SWEEP_OUT as JSON lines; later launches take the Placer's decision.
// See docs/EVALUATION.md for how the evaluation uses it.
#pragma once

#include "model/model.h"
#include "placer/placer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace memplace::placer {

struct SweepOptions {
    std::string out;                ///< MEMPLACE_SWEEP_OUT: JSON lines appended here (required)
    std::size_t maxPlacements = 64; ///< MEMPLACE_SWEEP_MAX: placements measured per signature
    std::size_t top = 8;            ///< MEMPLACE_SWEEP_TOP: the engine's best K, always planned
    double budgetMs = 0;            ///< MEMPLACE_SWEEP_BUDGET_MS: per signature; 0: none
    int warmup = 2;                 ///< MEMPLACE_SWEEP_WARMUP
    int repeat = 10;                ///< MEMPLACE_SWEEP_REPEAT (at least 1)
    double spinUs = 500; ///< MEMPLACE_SWEEP_SPIN_US: GPU busy-wait before each launch (longer than
                         ///< the host work of a launch, even on a busy host: 50 us was not)
    uint64_t enumerateLimit = 200000; ///< spaces up to this size are enumerated, else sampled
    uint64_t samples = 20000;         ///< random placements drawn from a larger space
    uint64_t seed = 1;                ///< MEMPLACE_SWEEP_SEED
    /// MEMPLACE_SWEEP_ORIGINAL: the program's own placement, `[kernel.]array=place,...` (as
    /// MEMPLACE=force:); arrays not named keep the descriptor's `original` place (where the
    /// rewritten source says the program keeps them). It is measured first: the reference.
    std::string original;
    bool dynamicBaselines = true;     ///< also the original and the default through DynamicAccessor
    std::vector<std::string> kernels; ///< MEMPLACE_SWEEP_KERNELS (comma list); empty: all
    /// MEMPLACE_SWEEP_COMPARE_SPEC: a second spec (built-in name or MSL file, for example a
    /// probed one) whose model also predicts every planned placement; its best placement is
    /// planned too (role compare_best), so that the two specs' rankings can be compared.
    std::string compareSpec;

    static SweepOptions fromEnvironment(std::vector<std::string>* warnings = nullptr);
};

/// One placement of a plan.
struct PlanEntry {
    Placement placement;
    bool dynamic = false;  ///< measured through DynamicAccessor even if compiled
    bool compiled = false; ///< among the compiled instantiations (else: dynamic accessor)
    /// Why it is planned: original, default, memplace, engine_best, rules, top<k>, compiled,
    /// all (the space is enumerated and fits), sample (quantile of the predicted times).
    std::vector<std::string> roles;
    bool modelFeasible = true;
    std::string infeasibleReason;
    double predictedSeconds = -1;        ///< -1 when infeasible in the model
    double comparePredictedSeconds = -1; ///< the compare spec's model; -1: none or infeasible
};

struct Plan {
    std::vector<PlanEntry> entries;
    std::vector<std::vector<Place>> places; ///< per array: the places the space combines
    uint64_t space = 0;                     ///< product of the per-array place counts (saturating)
    uint64_t feasible = 0;                  ///< model-feasible placements (exact when enumerated)
    bool enumerated = false;                ///< the whole space was enumerated
    bool complete = false;                  ///< every feasible placement is planned
    uint64_t pool = 0;                      ///< feasible placements the sample was drawn from
    Placement rules;                        ///< the rule-based baseline's placement
    std::vector<std::string> notes;
};

/// What buildPlan needs besides the model.
struct PlanInputs {
    std::vector<PlaceSet> masks;       ///< per array: what the runtime can place it in
    Placement original;                ///< the program's own placement
    Placement memplace;                ///< the Placer's decision (empty: none)
    Placement engineBest;              ///< the engine's best (empty: none)
    std::vector<Placement> candidates; ///< the Placer's tuning shortlist (KernelRecord)
    std::vector<Placement> compiled;   ///< compiled instantiations (the default included)
};

/// The plan for one signature (pure: the same inputs give the same plan). Entry 0 is the
/// original placement, the reference every other entry's outputs are compared with. `compare`
/// (optional) is the same trace modelled with the compare spec.
Plan buildPlan(const model::Model& m, const PlanInputs& in, const SweepOptions& o,
               const model::Model* compare = nullptr);

/// Parses `[kernel.]array=place,...` for one kernel's arrays (others keep their place in
/// `base`, or global when it is empty); warnings for entries naming no array of it are not
/// given (other kernels' entries are expected).
Placement parsePlacementList(const std::string& list, const std::string& kernel,
                             const std::vector<std::string>& arrays, const Placement& base = {});

class SweepPolicy : public PlacementPolicy {
public:
    SweepPolicy(std::shared_ptr<Placer> placer, SweepOptions options);
    ~SweepPolicy() override;
    Decision decide(const LaunchInfo& info) override;
    void traced(const LaunchInfo& info, TraceResult trace) override;
    void launched(const LaunchInfo& info, const LaunchReport& report) override;
    void swept(const LaunchInfo& info, std::vector<SweepResult> results) override;
    /// Signatures swept so far.
    std::size_t sweeps() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// Installs the Placer (placer::install) and a SweepPolicy around it; the Placer's report is
/// written at exit as under MEMPLACE=auto.
std::shared_ptr<SweepPolicy> installSweep(const Options& options, const SweepOptions& sweep);

} // namespace memplace::placer

// The placement model: for a placement (a place per array), the predicted time and where it
// goes. Built once per trace and spec from TraceStats (analysis.h); evaluating a placement
// then costs O(arrays x levels) plus the cache-sharing computation, with no allocation, so a
// search can evaluate millions.
//
// For each array i in place p the model walks p's levels (nearest first). At a cache, the
// fraction of the array's line references whose reuse distance is below the capacity the
// array gets there is served (cumulative over the levels above); the rest goes on; the storage
// serves what is left. The transactions served at level j are the array's transactions under
// j's serialization condition times that fraction, and cost N_ij * T_j * a_j cycles (latency,
// concurrency factor: memory- or compute-bound). Writes skip write-through caches (SM-scoped).
// A write-back cache (device-scoped: L2) allocates on write without fetching (sectored lines),
// so every write that reaches it is served there (Nsight Compute counts them as L2 hits); what
// goes on to the level below is the dirty data the kernel evicts: one write-back per write that
// misses (a new dirty residency), less the dirty lines still resident when the kernel ends (the
// capacity the array gets there, times the written share of its references). Measured on an
// H100 against ncu: decision 008 (docs/eval/logs/model-counters.md).
//
// Requests. A memory with a requestCost (MSL) charges it for every warp-level request that
// reaches it, hit or miss, on its unit: the texture pipeline, slower per request than the
// load/store one, costs every texture fetch that time even when it misses (docs/msl.md). The
// requests reaching a level are the array's requests times the share of its transactions that
// reach it.
//
// Cache sharing. Arrays reaching memories of one physical unit share its capacity:
//  - EqualSplit (PORPLE): each of the k arrays gets 1/k of it;
//  - Footprint: array i gets x with x + sum_j min(x * s_j / s_i, F_j) = C, where s are the
//    arrays' access shares and F their footprints: i's reuse distances scaled by the access
//    share of the arrays it shares the cache with, each other array contributing at most its
//    whole footprint.
// A unit's capacity shrinks by the shared memory the resident blocks use (L1, texture L1 and
// shared are one L1TEX unit); the L2 persisting window (the memory of the l2persist place that
// the global place does not reach) is set aside for the persisting array, and L2 shrinks by it.
// A written array wholly in that set-aside keeps its dirty lines from one launch to the next
// when the kernel's arrays take more than half the L2 (else nothing is evicted between launches
// anyway): none is written back.
//
// Ordered reads. A read that follows, in the warp's program order, a store which waited on a load
// (ArrayStats::orderedReadRequests) pays its levels' read cost twice through a plain load
// (global, l2persist): the compiler keeps it behind the store. Not when any array of the
// placement is on the read-only path: its restricted pointer lets nvcc make every read-only
// array's load non-coherent and issue it first (readsStayOrdered; decision 023).
//
// Time. PORPLE's path-based model: T = max over paths p of T(p). With PathModel::Porple,
// T(p) sums the arrays whose place is on p. With PathModel::SharedUnits (default), T(p) takes
// the load on every unit p passes through, whichever array put it there: paths overlap except
// where they share hardware (texture and load/store both end in L2 and DRAM), so moving a
// stream to the texture path does not make DRAM faster. The units of one path (L1TEX, L2,
// DRAM) work at once too: T(p) is the busiest unit's load plus (1 - unitOverlap) times the
// others' (spec::Processor::unitOverlap; 0 sums them, as PORPLE; decision 029).
//
// Launch costs. A place whose arrays the runtime copies before every launch (the constant bank's
// upload, one copy for all of a kernel's constant arrays) adds its spec launchCost to the time
// of any placement that uses it, after the paths' maximum: the copy runs before the kernel.
//
// Shared memory. Each block loads the whole array from global memory (through L2; DRAM once
// when it fits L2) and stores it to shared memory; written arrays are copied back (the
// sectors each block wrote) and need a dirty bitmap. The staged bytes count for occupancy: a
// placement that lowers the resident blocks per SM below the original placement's is
// infeasible, as is one over a place's capacity (64 KB constant pool, shared memory per block)
// or with more persisting arrays than access-policy windows (one per launch).
#pragma once

#include "model/analysis.h"
#include "spec/spec.h"

#include <limits>
#include <string>
#include <vector>

namespace memplace::model {

enum class CachePolicy { EqualSplit, Footprint };
enum class PathModel { SharedUnits, Porple };
enum class Boundedness { Auto, Memory, Compute };
std::string_view cachePolicyName(CachePolicy p); ///< "equal", "footprint"
std::optional<CachePolicy> parseCachePolicy(std::string_view s);
std::string_view pathModelName(PathModel p); ///< "shared-units", "porple"
std::optional<PathModel> parsePathModel(std::string_view s);
std::string_view boundednessName(Boundedness b); ///< "auto", "memory", "compute"
std::optional<Boundedness> parseBoundedness(std::string_view s);

struct ModelOptions {
    CachePolicy cache = CachePolicy::Footprint;
    PathModel paths = PathModel::SharedUnits;
    /// Which concurrency factor applies. Auto: memory-bound when, in the original placement
    /// priced as memory-bound, device memory carries at least half the critical path's time.
    Boundedness bound = Boundedness::Auto;
    uint32_t maxPersistingArrays = 1; ///< access-policy windows per launch
};

inline constexpr double kInfeasible = std::numeric_limits<double>::infinity();

/// One place per array, in the trace header's order (common/place.h; search and the CLI spell it
/// model::Placement).
using memplace::Placement;

struct LevelBreakdown {
    std::string memory;
    bool cache = false;
    double capacityBytes = 0; ///< what this array gets of the cache (0 for a storage)
    double readRequests = 0;  ///< read transactions reaching this level
    double readHits = 0;      ///< served here
    double writeRequests = 0;
    double writeHits = 0;
    double cycles = 0;
};

struct ArrayBreakdown {
    std::string name;
    Place place = Place::Global;
    std::string path;
    std::vector<LevelBreakdown> levels;
    double stagingCycles = 0; ///< shared memory: loading, storing, copying back
    double cycles = 0;        ///< levels + staging
};

struct UnitLoad {
    std::string unit;
    double cycles = 0;
};

struct PathTime {
    std::string path;
    double cycles = 0;
    std::vector<std::string> units; ///< the units this path's time includes
};

struct Prediction {
    bool feasible = true;
    std::string reason; ///< why not, when infeasible
    double cycles = 0;  ///< max over paths, plus launchCycles
    double seconds = 0; ///< cycles / (clock * SMs the grid occupies)
    /// The stream work before the kernel that the places of the placement cost (the constant
    /// bank's upload): spec::PlaceEntry::launchCost, once per place used.
    double launchCycles = 0;
    std::string criticalPath;
    std::vector<PathTime> paths;
    std::vector<UnitLoad> units;
    std::vector<ArrayBreakdown> arrays;
    uint32_t residentBlocks = 0;
    uint32_t originalResidentBlocks = 0;
    uint64_t sharedPerBlock = 0; ///< the kernel's own plus staged arrays and bitmaps
    bool memoryBound = true;
};

class Model {
public:
    Model(const spec::Spec& spec, TraceStats stats, ModelOptions options = {});
    // The precomputed levels point into stats(): a Model stays where it was built.
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;

    const TraceStats& stats() const { return stats_; }
    const ModelOptions& options() const { return options_; }
    size_t arrayCount() const { return arrays_.size(); }
    const std::string& arrayName(size_t i) const { return arrays_[i].name; }
    /// Feasible places of array i on its own, global first, then in Place order; a place that is
    /// reached exactly like an earlier one (e.g. the read-only path like global on sm_70+, in a
    /// kernel without ordered reads) is left out, since it costs the same in every placement
    /// (see aliases()). An array the trace never accesses has one candidate: its original place.
    const std::vector<Place>& candidates(size_t i) const { return arrays_[i].places; }
    /// Feasible places left out of candidates() because they cost exactly what an earlier
    /// candidate costs. A placement may still use them.
    const std::vector<Place>& aliases(size_t i) const { return arrays_[i].aliases; }
    /// Whether array i costs the same in places a and b in every placement (one is an alias of
    /// the other, or they are the same); false when either is not feasible for it.
    bool equivalent(size_t i, Place a, Place b) const {
        const int oa = arrays_[i].optionOf[static_cast<size_t>(a)];
        return oa >= 0 && oa == arrays_[i].optionOf[static_cast<size_t>(b)];
    }
    bool memoryBound() const { return memoryBound_; }
    size_t pathCount() const { return paths_.size(); }

    /// The unmodified program's placement (an infeasible original place becomes global).
    Placement original() const;
    /// Global for every array that can be global (else its first candidate).
    Placement baseline() const;

    /// Whether a whole placement fits: candidates, capacities, occupancy, persisting windows.
    bool feasible(const Placement& p, std::string* reason = nullptr) const;
    /// Predicted cycles of a placement; kInfeasible when it does not fit. Thread-safe.
    double cycles(const Placement& p) const;
    /// Cycles, and the sum of the path times (a tie-breaker among equal maxima).
    std::pair<double, double> cyclesAndSum(const Placement& p) const;
    /// The full breakdown.
    Prediction predict(const Placement& p) const;
    double seconds(double cycles) const;

    /// The model's own cost of array i (levels + staging) within placement p; used by the
    /// greedy search for PORPLE's per-array benefits.
    double arrayCycles(const Placement& p, size_t i) const;

    /// A lower bound on the cycles of every completion of a partial placement: arrays with
    /// fixed[i] == false are free. kInfeasible when no completion fits.
    double lowerBound(const Placement& p, const std::vector<uint8_t>& fixed) const;

private:
    struct LevelPre {
        int memory = -1;
        int unit = -1;
        int pool = -1; ///< cache capacity pool; -1 for a storage
        bool cache = false;
        bool writeThrough = false;
        double readTx = 0, writeTx = 0;
        double readCost = 0, writeCost = 0; ///< latency x concurrency factor
        /// The memory's requestCost times the array's warp-level reads (writes): what they
        /// cost here when all of them reach the level.
        double readRequestCost = 0, writeRequestCost = 0;
        const Histogram* readHist = nullptr;
        const Histogram* writeHist = nullptr;
        double lineBytes = 32;
        double sizeBytes = 0; ///< the cache memory's own size: no array gets more of it
        double extrapolation = 1;
        double footprintBytes = 0;
        double refs = 0; ///< line references this array makes at the level (access share)
        /// Write-back caches: the share of the array's line references that are writes (the
        /// dirty share of what it keeps resident) and write transactions per written line.
        double writtenShare = 0;
        double txPerWriteLine = 1;
    };
    /// A write-back cache level `l` that `capBytes` of capacity: the share of its write
    /// transactions that the kernel writes back to the level below (`fw`: the share served
    /// above). See the header comment (Writes).
    static double writeBackShare(const LevelPre& l, double fw, double capBytes);
    /// What the requests reaching level `l` cost there (its requestCost), `fr` (`fw`) of the
    /// array's read (write) transactions having been served above.
    static double requestCost(const LevelPre& l, double fr, double fw);
    /// The lines of cache level `l` an array of `arrayBytes` holds with `capBytes` of it, in its
    /// reuse histogram's units (sampled traces' distances are stretched: see extrapolation).
    double cacheLines(const LevelPre& l, double capBytes, uint64_t arrayBytes) const;
    /// Whether a written array keeps its dirty lines in level `l` from one launch to the next,
    /// so that none is written back: the whole array in a persisting partition the kernel's
    /// other data would otherwise have evicted between launches.
    bool keepsDirtyLines(const LevelPre& l, double capBytes, uint64_t arrayBytes) const;
    struct Option {
        Place place = Place::Global;
        int path = 0;
        std::vector<LevelPre> levels;
        int capacityGroup = -1;
        uint64_t bytes = 0;
        uint64_t stagedBytes = 0; ///< shared memory per block (array + dirty bitmap)
        bool persisting = false;
        /// Plain loads (global, l2persist) of an array with reads behind a store that waited on
        /// a load: those reads wait for that load too, and pay their latency twice, unless the
        /// array is read-only and some array of the placement is on the read-only path
        /// (readsStayOrdered). 1 elsewhere.
        double readSerialization = 1;
        std::vector<std::pair<int, double>> staging; ///< unit, cycles
        double stagingCycles = 0;
        uint64_t units = 0;   ///< bit per unit this option loads
        bool monotone = true; ///< cost never rises with more cache capacity
        double minCost = 0;   ///< a context-free lower bound on its cost
        double bestCost = 0;  ///< lower bound: cost with the most capacity it could get
    };
    struct ArrayPre {
        std::string name;
        bool written = false; ///< a store reaches it: its loads are never the read-only path's
        std::vector<Place> places;
        std::vector<Place> aliases;
        std::vector<Option> options;
        int optionOf[kAllPlaces.size()] = {-1, -1, -1, -1, -1, -1, -1};
        Place original = Place::Global;
        double minCost = 0; ///< min over options of bestCost
        /// Per unit, the least storage load of any option (leastStorageLoads; lowerBound).
        std::vector<double> leastStorage;
    };
    struct Pool {
        std::string name;
        int unit = -1;
        bool partition = false;
        double baseBytes = 0;  ///< the unit's capacity (a partition: its own size)
        double cacheBytes = 0; ///< the largest cache memory of the pool: no more is usable
        bool carved = false;   ///< shrinks by the resident blocks' shared memory
        bool device = true;    ///< one instance per device (else per SM/block/warp)
        /// A partition the kernel's other data would not leave alone between launches: the
        /// kernel's arrays take more than half the unit's capacity (keepsDirtyLines).
        bool outlivesLaunches = false;
    };
    struct CapacityGroup {
        std::string place;
        uint64_t capacity = 0;
        uint64_t base = 0; ///< bytes already used (the kernel's own shared memory)
    };
    struct Scratch;
    struct Layout;

    // Building (model_build.cpp).
    void buildOptions(const spec::Spec& spec);
    void buildUnits(const spec::Spec& spec, Layout& layout);
    void buildPools(const spec::Spec& spec, Layout& layout);
    void buildPaths(const spec::Spec& spec, const Layout& layout);
    void buildCapacityGroups(const spec::Spec& spec, Layout& layout);
    ArrayPre buildArray(const spec::Spec& spec, const ArrayStats& as, const Layout& layout);
    Option buildOption(const spec::Spec& spec, const ArrayStats& as, Place p, const Layout& layout);
    int sameOption(const ArrayPre& a, const Option& o) const;
    void setCosts(const spec::Spec& spec, bool memoryBound);
    // Bounds (model_bounds.cpp).
    void computeBounds();
    /// Option `o`'s monotonicity and least costs; `hmaxR`, `capMax`: per level, the read hit
    /// fraction and capacity with the most capacity the level could give.
    void boundOption(Option& o, const std::vector<double>& maxCap, std::vector<double>& hmaxR,
                     std::vector<double>& capMax) const;
    void findBoundPaths();
    void buildLambdas();
    // Evaluation (model_evaluate.cpp).
    /// Core evaluation. `present` null: every array. Returns cycles (kInfeasible when the
    /// present arrays do not fit); fills scratch per-array costs and loads; fills `out` when
    /// non-null.
    double evaluate(const Place* places, const uint8_t* present, Scratch& s, Prediction* out,
                    std::string* reason) const;
    /// Each pool's capacity and members; returns the resident blocks per SM and sets `shared`
    /// (the kernel's shared memory per block plus the staged arrays').
    uint32_t poolCapacities(const Place* places, const uint8_t* present, Scratch& s,
                            uint64_t& shared) const;
    /// The capacity each member of each pool gets (CachePolicy).
    void shareCapacities(const Place* places, Scratch& s) const;
    void footprintComposition(const Place* places,
                              const std::vector<std::pair<uint32_t, uint32_t>>& mem, double cap,
                              Scratch& s) const;
    /// Every present array's cost down its levels, into the scratch's unit and path loads.
    void walkArrays(const Place* places, const uint8_t* present, Scratch& s, Prediction* out,
                    bool keepStorage) const;
    void fillPrediction(double t, size_t critical, uint32_t resident, uint64_t shared,
                        const Scratch& s, Prediction& out) const;
    bool fits(const Place* places, const uint8_t* present, Scratch& s, std::string* reason) const;
    /// Whether the ordered reads of read-only arrays (Option::readSerialization) pay their
    /// second latency in this placement: only while no array of the kernel is on the read-only
    /// path. One restricted pointer in the kernel (ReadOnlyAccessor's) and nvcc compiles every
    /// read-only array's loads to LDG.E.CONSTANT and issues them before the stores (SASS of
    /// the particle filter: decision 023). A free array (`present` 0) that could be on the
    /// read-only path is taken to be (a lower bound).
    bool readsStayOrdered(const Place* places, const uint8_t* present) const;

    TraceStats stats_;
    ModelOptions options_;
    std::string specName_;
    spec::Processor processor_;
    std::vector<std::string> memoryNames_;
    std::vector<std::string> units_;
    std::vector<std::string> paths_;
    std::vector<uint64_t> pathUnits_;
    std::vector<Pool> pools_;
    std::vector<CapacityGroup> capacityGroups_;
    std::vector<ArrayPre> arrays_;
    int sharedUnit_ = -1;     ///< unit of the staged (shared) memory
    uint32_t otherLimit_ = 0; ///< resident blocks from everything but shared memory
    uint32_t originalResident_ = 1;
    bool memoryBound_ = true;
    bool ordersReads_ = false; ///< some array has ordered reads (ArrayStats::orderedReadRequests)
    size_t maxLevels_ = 1;
    std::vector<size_t> boundPaths_; ///< paths no other path's units contain (bounds only)
    /// Per array, per option, per bound path: its least cost when that path passes all its
    /// units, else 0.
    std::vector<std::vector<std::vector<double>>> contribution_;
    std::vector<std::vector<uint64_t>> onBoundPath_; ///< per array, option: bound paths it is on
    std::vector<std::vector<double>> lambdas_;       ///< weights over boundPaths_ for the bound
    /// Per bound path: the least share of its units' summed load its time can be (overlap).
    std::vector<double> boundScale_;
    /// Per place: its launch cost for this kernel's boundedness (spec::PlaceEntry::launchCost).
    double launchCycles_[kAllPlaces.size()] = {};
    /// A path's time from its units' loads: the busiest unit's plus the others' not hidden
    /// behind it (spec::Processor::unitOverlap).
    double overlappedLoad(size_t path, const std::vector<double>& unitLoad) const;
    /// The spec's unitOverlap under the shared-units path model, else 0 (PORPLE's paths have no
    /// units).
    double overlap() const;
    /// Per unit, a context-free lower bound on what option `o`'s storage levels and staging
    /// load there: the hit fractions with the most capacity each cache could give.
    std::vector<double> leastStorageLoads(const Option& o, const std::vector<double>& hmaxR,
                                          const std::vector<double>& capMax) const;
    /// lowerBound's bound for weights `w` over the bound paths: `constant` plus the weighted
    /// loads of the fixed arrays (`base`, per bound path) and the free arrays' least.
    double weightedBound(const double* w, const double* base, const std::vector<uint8_t>& fixed,
                         double constant) const;
    /// The launch costs of the places `places` uses (`present` null: every array).
    double launchCycles(const Place* places, const uint8_t* present) const;
};

} // namespace memplace::model

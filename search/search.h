// Searching the placement space with the model.
//
//  - Exhaustive: every combination of the arrays' candidate places (refused above a limit).
//  - BranchAndBound: depth-first over arrays, most consequential first, places cheapest first;
//    a partial placement is pruned when Model::lowerBound exceeds the K-th best complete
//    placement found so far (the greedy result seeds the incumbent). Exact: it returns what
//    Exhaustive returns, ties broken the same way.
//  - Greedy: PORPLE's Procedure 1. Constant memory first: arrays sorted by the benefit of
//    constant memory over global (d_c), placed while it helps and the 64 KB pool has room;
//    then the other arrays in descending order of potential (the largest benefit of any other
//    place over global), each put where the whole placement is fastest given those before.
//  - Rules: a rule-based baseline from the literature: read-only and warp-uniform -> constant;
//    read-only with 2-D locality or poorly coalesced -> texture; reused within a block ->
//    shared; otherwise global (each rule only where the place is feasible and fits).
//
// Placements compare by predicted cycles, then by the sum of the path times, then
// lexicographically by place (global first), so every algorithm breaks ties the same way.
#pragma once

#include "common/expected.h"
#include "model/model.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memplace::search {

enum class Algorithm { Exhaustive, BranchAndBound, Greedy, Rules };
std::string_view algorithmName(Algorithm a); ///< "exhaustive", "bnb", "greedy", "rules"
std::optional<Algorithm> parseAlgorithm(std::string_view s);

struct Candidate {
    model::Placement placement;
    double cycles = model::kInfeasible;
    double pathSum = model::kInfeasible; ///< tie-breaker
};
/// The order every algorithm uses: cycles, path sum, then places (Place order).
bool better(const Candidate& a, const Candidate& b);

struct SearchOptions {
    Algorithm algorithm = Algorithm::BranchAndBound;
    size_t topK = 5;                       ///< alternatives kept (the best included)
    uint64_t exhaustiveLimit = 50'000'000; ///< placements Exhaustive agrees to enumerate
    /// Branch-and-bound gives up after this many partial placements and returns the best found
    /// (exact = false, with a note); the greedy answer is always among the candidates.
    uint64_t nodeLimit = 20'000'000;
    /// Branch-and-bound also gives up after this many seconds (0: no limit): the online Placer
    /// cannot spend seconds on a kernel that runs for microseconds.
    double timeLimitSeconds = 0;
};

struct SearchResult {
    Algorithm algorithm = Algorithm::BranchAndBound;
    Candidate best;
    /// The best K placements found, best first (exact for Exhaustive and BranchAndBound; for
    /// Greedy and Rules, the result and its best one-array neighbours).
    std::vector<Candidate> alternatives;
    uint64_t evaluated = 0; ///< complete placements the model evaluated
    uint64_t nodes = 0;     ///< branch-and-bound: partial placements bounded
    double seconds = 0;
    bool exact = false; ///< the best is the model's optimum
    std::vector<std::string> notes;
};

Expected<SearchResult> search(const model::Model& m, const SearchOptions& options = {});

/// Number of combinations of candidate places (saturates at UINT64_MAX).
uint64_t spaceSize(const model::Model& m);

} // namespace memplace::search

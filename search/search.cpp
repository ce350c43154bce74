#include "search/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <numeric>

namespace memplace::search {

using model::kInfeasible;
using model::Model;
using model::Placement;

std::string_view algorithmName(Algorithm a) {
    switch (a) {
    case Algorithm::Exhaustive:
        return "exhaustive";
    case Algorithm::BranchAndBound:
        return "bnb";
    case Algorithm::Greedy:
        return "greedy";
    case Algorithm::Rules:
        return "rules";
    }
    return "bnb";
}

std::optional<Algorithm> parseAlgorithm(std::string_view s) {
    for (Algorithm a :
         {Algorithm::Exhaustive, Algorithm::BranchAndBound, Algorithm::Greedy, Algorithm::Rules}) {
        if (algorithmName(a) == s) {
            return a;
        }
    }
    if (s == "branch-and-bound") {
        return Algorithm::BranchAndBound;
    }
    return std::nullopt;
}

bool better(const Candidate& a, const Candidate& b) {
    if (a.cycles != b.cycles) {
        return a.cycles < b.cycles;
    }
    if (a.pathSum != b.pathSum) {
        return a.pathSum < b.pathSum;
    }
    return a.placement < b.placement;
}

uint64_t spaceSize(const Model& m) {
    uint64_t n = 1;
    for (size_t i = 0; i < m.arrayCount(); ++i) {
        uint64_t k = m.candidates(i).size();
        if (k != 0 && n > UINT64_MAX / k) {
            return UINT64_MAX;
        }
        n *= k;
    }
    return n;
}

namespace {

/// The K best candidates, best first.
class TopK {
public:
    explicit TopK(size_t k) : k_(std::max<size_t>(1, k)) {}
    void offer(Candidate c) {
        if (c.cycles == kInfeasible) {
            return;
        }
        if (items_.size() == k_ && !better(c, items_.back())) {
            return;
        }
        for (const auto& x : items_) {
            if (x.placement == c.placement) {
                return;
            }
        }
        auto it = std::lower_bound(items_.begin(), items_.end(), c, better);
        items_.insert(it, std::move(c));
        if (items_.size() > k_) {
            items_.pop_back();
        }
    }
    /// Cycles a placement must not exceed to enter.
    double threshold() const { return items_.size() < k_ ? kInfeasible : items_.back().cycles; }
    const std::vector<Candidate>& items() const { return items_; }

private:
    size_t k_;
    std::vector<Candidate> items_;
};

class Evaluator {
public:
    explicit Evaluator(const Model& m) : m_(m) {}
    Candidate eval(const Placement& p) {
        ++evaluated;
        auto [c, s] = m_.cyclesAndSum(p);
        return {p, c, s};
    }
    uint64_t evaluated = 0;

private:
    const Model& m_;
};

/// Ranks the greedy and rules results against their one-array neighbours.
void neighbours(const Model& m, const Candidate& start, Evaluator& ev, TopK& top) {
    top.offer(start);
    Placement p = start.placement;
    for (size_t i = 0; i < m.arrayCount(); ++i) {
        Place keep = p[i];
        for (Place q : m.candidates(i)) {
            if (q == keep) {
                continue;
            }
            p[i] = q;
            top.offer(ev.eval(p));
        }
        p[i] = keep;
    }
}

Expected<Candidate> greedy(const Model& m, Evaluator& ev, std::vector<std::string>& notes) {
    const size_t n = m.arrayCount();
    Placement p = m.baseline();
    Candidate cur = ev.eval(p);
    if (cur.cycles == kInfeasible) {
        p = m.original();
        cur = ev.eval(p);
        if (cur.cycles == kInfeasible) {
            return fail("neither the all-global nor the original placement is feasible");
        }
        notes.push_back("greedy starts from the original placement (all-global does not fit)");
    }
    // The benefit of moving array i to q, everything else as it is: (cycles saved, path-sum
    // saved), compared lexicographically.
    using Benefit = std::pair<double, double>;
    auto benefit = [&](size_t i, Place q) -> Benefit {
        Placement t = p;
        t[i] = q;
        Candidate c = ev.eval(t);
        if (c.cycles == kInfeasible) {
            return {-kInfeasible, -kInfeasible};
        }
        return {cur.cycles - c.cycles, cur.pathSum - c.pathSum};
    };
    auto has = [&](size_t i, Place q) {
        const auto& c = m.candidates(i);
        return std::find(c.begin(), c.end(), q) != c.end();
    };
    // 1. Constant memory first, by broadcast benefit, while it helps and fits.
    std::vector<std::pair<Benefit, size_t>> dc;
    for (size_t i = 0; i < n; ++i) {
        if (has(i, Place::Constant) && p[i] != Place::Constant) {
            dc.emplace_back(benefit(i, Place::Constant), i);
        }
    }
    // Descending benefit; equal benefits keep array order (no stable_sort: libstdc++ 12 warns).
    std::sort(dc.begin(), dc.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    std::vector<bool> placed(n, false);
    for (const auto& [b, i] : dc) {
        if (!(b > Benefit{0, 0})) {
            break;
        }
        // PORPLE fills the pool in this order; placing an array only while it still helps
        // given those placed before keeps one array's broadcast benefit from overloading the
        // constant path.
        Placement t = p;
        t[i] = Place::Constant;
        Candidate c = ev.eval(t);
        if (c.cycles == kInfeasible || !better(c, cur)) {
            continue; // the pool is full for this one, or it no longer helps
        }
        p = t;
        cur = c;
        placed[i] = true;
    }
    // 2. The others by potential: the best benefit of any place but global and constant.
    std::vector<std::pair<Benefit, size_t>> potential;
    for (size_t i = 0; i < n; ++i) {
        if (placed[i]) {
            continue;
        }
        Benefit best{-kInfeasible, -kInfeasible};
        for (Place q : m.candidates(i)) {
            if (q != Place::Global && q != Place::Constant && q != p[i]) {
                best = std::max(best, benefit(i, q));
            }
        }
        potential.emplace_back(best, i);
    }
    std::sort(potential.begin(), potential.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    for (const auto& [b, i] : potential) {
        (void)b;
        Candidate best = cur;
        for (Place q : m.candidates(i)) {
            if (q == p[i]) {
                continue;
            }
            Placement t = p;
            t[i] = q;
            Candidate c = ev.eval(t);
            if (better(c, best)) {
                best = c;
            }
        }
        p = best.placement;
        cur = best;
    }
    return cur;
}

Candidate rules(const Model& m, Evaluator& ev, std::vector<std::string>& notes) {
    const auto& st = m.stats();
    Placement p = m.baseline();
    for (size_t i = 0; i < m.arrayCount(); ++i) {
        const auto& a = st.arrays[i];
        const bool readOnly = a.info.mode == trace::ArrayMode::Read;
        const bool uniform = a.uniformFraction >= 0.9;
        const bool poorlyCoalesced =
            a.idealSectorsPerRequest > 0 && a.sectorsPerRequest >= 2.0 * a.idealSectorsPerRequest;
        const bool twoD = a.info.dims == 2;
        const bool blockReuse = a.blockReuse >= 2.0;
        std::vector<std::pair<Place, const char*>> wanted;
        if (readOnly && uniform) {
            wanted.emplace_back(Place::Constant, "read-only, warp-uniform");
        }
        if (readOnly && (twoD || poorlyCoalesced)) {
            wanted.emplace_back(Place::Texture,
                                twoD ? "read-only, 2-D" : "read-only, poorly coalesced");
        }
        if (blockReuse) {
            wanted.emplace_back(Place::Shared, "reused within a block");
        }
        for (const auto& [q, why] : wanted) {
            const auto& c = m.candidates(i);
            if (std::find(c.begin(), c.end(), q) == c.end()) {
                continue;
            }
            Placement t = p;
            t[i] = q;
            if (m.feasible(t)) {
                p = t;
                notes.push_back(
                    fmt::format("rules: {} -> {} ({})", m.arrayName(i), placeName(q), why));
                break;
            }
        }
    }
    return ev.eval(p);
}

class BranchAndBound {
public:
    BranchAndBound(const Model& m, Evaluator& ev, TopK& top, uint64_t nodeLimit,
                   double timeLimitSeconds)
        : m_(m), ev_(ev), top_(top), nodeLimit_(nodeLimit), timeLimit_(timeLimitSeconds),
          started_(std::chrono::steady_clock::now()) {}

    void run() {
        const size_t n = m_.arrayCount();
        // Arrays with the widest spread of least costs first: their choice moves the bound
        // most. Places cheapest first: good incumbents early.
        order_.resize(n);
        std::iota(order_.begin(), order_.end(), size_t{0});
        std::vector<double> spread(n, 0);
        places_.resize(n);
        Placement probe = m_.baseline();
        std::vector<uint8_t> one(n, 0);
        for (size_t i = 0; i < n; ++i) {
            // Each bound costs O(n): with thousands of arrays the ordering alone outlasts the
            // time limit, so it is checked here too; out of time, the placement as written is
            // the answer (not proven optimal).
            if (timeLimit_ > 0 && (i & 63u) == 63u && elapsed() > timeLimit_) {
                stopped = true;
                top_.offer(ev_.eval(m_.baseline()));
                return;
            }
            std::vector<std::pair<double, Place>> costs;
            one.assign(n, 0);
            one[i] = 1;
            for (Place q : m_.candidates(i)) {
                probe[i] = q;
                costs.emplace_back(m_.lowerBound(probe, one), q);
            }
            probe[i] = m_.baseline()[i];
            std::sort(costs.begin(), costs.end(), [](const auto& a, const auto& b) {
                return a.first != b.first ? a.first < b.first : a.second < b.second;
            });
            for (const auto& c : costs) {
                places_[i].push_back(c.second);
            }
            double lo = kInfeasible, hi = 0;
            for (const auto& c : costs) {
                if (c.first != kInfeasible) {
                    lo = std::min(lo, c.first);
                    hi = std::max(hi, c.first);
                }
            }
            spread[i] = lo == kInfeasible ? 0 : hi - lo;
        }
        std::sort(order_.begin(), order_.end(), [&](size_t a, size_t b) {
            return spread[a] != spread[b] ? spread[a] > spread[b] : a < b;
        });
        current_ = m_.baseline();
        fixed_.assign(n, 0);
        if (n == 0) {
            top_.offer(ev_.eval(current_));
            return;
        }
        dfs(0);
    }
    uint64_t nodes = 0;
    bool stopped = false;

private:
    void dfs(size_t depth) {
        const size_t i = order_[depth];
        const bool leaf = depth + 1 == order_.size();
        for (Place q : places_[i]) {
            if (stopped || nodes >= nodeLimit_ || outOfTime()) {
                stopped = true;
                break;
            }
            current_[i] = q;
            fixed_[i] = 1;
            if (leaf) {
                top_.offer(ev_.eval(current_));
            } else {
                ++nodes;
                double lb = m_.lowerBound(current_, fixed_);
                double limit = top_.threshold();
                if (lb != kInfeasible && !(lb > limit * (1 + 1e-9) + 1e-9)) {
                    dfs(depth + 1);
                }
            }
        }
        fixed_[i] = 0;
        current_[i] = m_.baseline()[i];
    }

    /// Checked every 1024 partial placements: the clock costs more than a bound.
    bool outOfTime() {
        if (timeLimit_ <= 0 || (nodes & 1023u) != 0 || nodes == lastCheck_) {
            return false;
        }
        lastCheck_ = nodes;
        return elapsed() > timeLimit_;
    }
    double elapsed() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    }

    const Model& m_;
    Evaluator& ev_;
    TopK& top_;
    std::vector<size_t> order_;
    std::vector<std::vector<Place>> places_;
    Placement current_;
    std::vector<uint8_t> fixed_;
    uint64_t nodeLimit_;
    double timeLimit_;
    std::chrono::steady_clock::time_point started_;
    uint64_t lastCheck_ = 0;
};

/// Every placement, odometer order (the caller checked the space's size).
void exhaustive(const Model& m, Evaluator& ev, TopK& top) {
    const size_t n = m.arrayCount();
    std::vector<size_t> digit(n, 0);
    Placement p(n);
    for (size_t i = 0; i < n; ++i) {
        p[i] = m.candidates(i)[0];
    }
    while (true) {
        top.offer(ev.eval(p));
        size_t i = 0;
        for (; i < n; ++i) {
            if (++digit[i] < m.candidates(i).size()) {
                p[i] = m.candidates(i)[digit[i]];
                break;
            }
            digit[i] = 0;
            p[i] = m.candidates(i)[0];
        }
        if (i == n) {
            break;
        }
    }
}

/// An algorithm's own answer first, then the best of its neighbours (`near`), at most topK in
/// all: the answer stays first even when a neighbour is better, the neighbours show what it
/// missed.
std::vector<Candidate> alternativesLedBy(const Candidate& best, std::vector<Candidate> near,
                                         size_t topK) {
    near.erase(std::remove_if(near.begin(), near.end(),
                              [&](const Candidate& c) { return c.placement == best.placement; }),
               near.end());
    near.insert(near.begin(), best);
    near.resize(std::min(near.size(), std::max<size_t>(1, topK)));
    return near;
}

} // namespace

Expected<SearchResult> search(const Model& m, const SearchOptions& options) {
    auto started = std::chrono::steady_clock::now();
    SearchResult r;
    r.algorithm = options.algorithm;
    Evaluator ev(m);
    TopK top(options.topK);
    switch (options.algorithm) {
    case Algorithm::Exhaustive: {
        uint64_t size = spaceSize(m);
        if (size > options.exhaustiveLimit) {
            return fail(fmt::format("exhaustive search over {} placements exceeds the limit of {}; "
                                    "use --search bnb or greedy",
                                    size == UINT64_MAX ? std::string("more than 1.8e19")
                                                       : std::to_string(size),
                                    options.exhaustiveLimit));
        }
        exhaustive(m, ev, top);
        r.exact = true;
        break;
    }
    case Algorithm::BranchAndBound: {
        // Seed the incumbent with the greedy answer and its neighbours.
        std::vector<std::string> ignored;
        auto g = greedy(m, ev, ignored);
        if (g) {
            neighbours(m, *g, ev, top);
        }
        BranchAndBound bb(m, ev, top, options.nodeLimit, options.timeLimitSeconds);
        bb.run();
        r.nodes = bb.nodes;
        r.exact = !bb.stopped;
        if (bb.stopped) {
            r.notes.push_back(
                fmt::format("branch-and-bound stopped after {} partial placements{}: "
                            "the best placement found is not proven optimal",
                            bb.nodes,
                            bb.nodes < options.nodeLimit
                                ? fmt::format(" ({:g} s limit)", options.timeLimitSeconds)
                                : std::string()));
        }
        break;
    }
    case Algorithm::Greedy: {
        auto g = greedy(m, ev, r.notes);
        if (!g) {
            return std::move(g).takeFailure();
        }
        Candidate best = *g;
        neighbours(m, best, ev, top);
        // The greedy answer stays first even when a neighbour is better: that is the
        // algorithm's output; the neighbours show what it missed.
        r.best = best;
        r.alternatives = alternativesLedBy(best, top.items(), options.topK);
        r.evaluated = ev.evaluated;
        r.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return r;
    }
    case Algorithm::Rules: {
        Candidate best = rules(m, ev, r.notes);
        if (best.cycles == kInfeasible) {
            return fail("the rule-based placement does not fit");
        }
        TopK near(options.topK);
        neighbours(m, best, ev, near);
        r.best = best;
        r.alternatives = alternativesLedBy(best, near.items(), options.topK);
        r.evaluated = ev.evaluated;
        r.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return r;
    }
    }
    if (top.items().empty()) {
        return fail("no feasible placement");
    }
    r.best = top.items().front();
    r.alternatives = top.items();
    r.evaluated = ev.evaluated;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return r;
}

} // namespace memplace::search

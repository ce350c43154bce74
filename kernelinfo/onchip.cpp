// The clang-free on-chip analyses (onchip.h): which elements two threads of a block may share,
// thread-privacy and constant indices of `__shared__` arrays, loop-weighted reference counts,
// loads that do not depend on a thread dimension, and the verdict on a barrier given what can
// run on its two sides.
#include "kernelinfo/onchip.h"

#include "kernelinfo/kernel_info.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace memplace::kernelinfo {

namespace {

constexpr std::array<const char*, 3> kDimName = {"x", "y", "z"};
/// Pairs of accesses compared at most for one array or one barrier (each pair enumerates up to
/// a few hundred thousand thread offsets); beyond, the answer is the conservative one.
constexpr size_t kMaxPairs = 20000;

int threadDim(const std::string& var) {
    for (int d = 0; d < 3; ++d) {
        if (var == std::string("threadIdx.") + kDimName[d]) {
            return d;
        }
    }
    return -1;
}

/// `p` with blockDim.* replaced by the block's size when the launch gives it.
Poly substituteBlock(const Poly& p, const BlockBounds& b) {
    if (!b.exact) {
        return p;
    }
    Poly out;
    for (const auto& m : p.monomials()) {
        Poly term = Poly::constant(m.scale);
        for (const auto& s : m.symbols) {
            int d = s.starts_with("blockDim.") ? threadDim("threadIdx." + s.substr(9)) : -1;
            term = term * (d >= 0 ? Poly::constant(b.max[d]) : Poly::symbol(s));
        }
        out += term;
    }
    return out;
}

/// An affine index split by how its variables vary between two threads of one block.
struct SplitIndex {
    std::array<Poly, 3> thread; ///< coefficients of threadIdx.x, y, z
    Poly common;                ///< blockIdx terms and the offset: the same for both threads
    std::vector<Poly> free;     ///< loop-iteration coefficients: any value on either side
};

std::string siteText(const Site& s) {
    const bool multi = s.index.text.starts_with("["); // "[i][j]" for a 2-D subscript
    return fmt::format("'{}{}{}{}' at {}", s.array, multi ? "" : "[", s.index.text,
                       multi ? "" : "]", formatLocation(s.location));
}

std::optional<SplitIndex> splitIndex(const Site& s, const BlockBounds& b, std::string& why) {
    if (s.index.kind != IndexKind::Affine) {
        why = fmt::format("the index of {} is {}{}", siteText(s), indexKindName(s.index.kind),
                          s.index.reason.empty() ? "" : " (" + s.index.reason + ")");
        return std::nullopt;
    }
    SplitIndex out;
    for (const auto& t : s.index.terms) {
        Poly c = substituteBlock(t.coeff, b);
        if (int d = threadDim(t.var); d >= 0) {
            out.thread[d] += c;
        } else if (t.var.starts_with("blockIdx.")) {
            out.common += c * Poly::symbol(t.var);
        } else {
            out.free.push_back(c);
        }
    }
    out.common += substituteBlock(s.index.offset, b);
    return out;
}

std::string boundsText(const BlockBounds& b) {
    if (b.exact) {
        return fmt::format("block ({},{},{})", b.max[0], b.max[1], b.max[2]);
    }
    return fmt::format("block size not known: at most ({},{},{}), {} threads", b.max[0], b.max[1],
                       b.max[2], b.maxThreads);
}

/// c·delta + d ≡ 0 (mod g), or = 0 when g is 0; overflow counts as a match (conservative).
bool collides(const std::array<int64_t, 3>& c, const std::array<int64_t, 3>& delta, int64_t d,
              int64_t g) {
    int64_t sum = d;
    for (int i = 0; i < 3; ++i) {
        int64_t prod = 0;
        if (__builtin_mul_overflow(c[i], delta[i], &prod) ||
            __builtin_add_overflow(sum, prod, &sum)) {
            return true;
        }
    }
    return g == 0 ? sum == 0 : sum % g == 0;
}

/// The offset t1 - t2 between two different threads of the block at which c·t1 + d and c·t2
/// agree modulo g, when there is one.
std::optional<std::array<int64_t, 3>> collidingOffset(const std::array<int64_t, 3>& c, int64_t d,
                                                      int64_t g, const BlockBounds& b) {
    // A dimension the index does not use: two threads differing only there agree exactly.
    for (int i = 0; i < 3; ++i) {
        if (c[i] == 0 && b.max[i] > 1 && collides(c, {0, 0, 0}, d, g)) {
            std::array<int64_t, 3> delta{0, 0, 0};
            delta[i] = 1;
            return delta;
        }
    }
    // |δx|+1, |δy|+1, |δz|+1 are at most the block's sizes, whose product is at most maxThreads.
    auto limit = [&](int i, int64_t used) {
        return c[i] == 0 ? int64_t{0} : std::min(b.max[i], b.maxThreads / used) - 1;
    };
    for (int64_t dx = -limit(0, 1); dx <= limit(0, 1); ++dx) {
        const int64_t ax = std::abs(dx) + 1;
        for (int64_t dy = -limit(1, ax); dy <= limit(1, ax); ++dy) {
            const int64_t axy = ax * (std::abs(dy) + 1);
            for (int64_t dz = -limit(2, axy); dz <= limit(2, axy); ++dz) {
                if ((dx != 0 || dy != 0 || dz != 0) && collides(c, {dx, dy, dz}, d, g)) {
                    return std::array<int64_t, 3>{dx, dy, dz};
                }
            }
        }
    }
    return std::nullopt;
}

std::string offsetText(const std::array<int64_t, 3>& delta, const BlockBounds& b) {
    std::string out;
    for (int i = 0; i < 3; ++i) {
        if (delta[i] != 0) {
            out += fmt::format("{}{} apart in {}", out.empty() ? "" : " and ", std::abs(delta[i]),
                               kDimName[i]);
        }
    }
    std::string note;
    for (int i = 0; i < 3; ++i) {
        if (delta[i] != 0 && !b.exact && i > 0) {
            note = fmt::format(" (blockDim.{} is not known to be 1)", kDimName[i]);
        }
    }
    return "threads " + out + note;
}

/// The thread coefficients of two split indices as constants, when they are equal constants.
std::optional<std::array<int64_t, 3>>
commonThreadCoefficients(const SplitIndex& a, const SplitIndex& b, std::string& why) {
    std::array<int64_t, 3> c{};
    for (int d = 0; d < 3; ++d) {
        if (a.thread[d] != b.thread[d]) {
            why = "they map threads to elements differently";
            return std::nullopt;
        }
        auto v = a.thread[d].constantValue();
        if (!v) {
            why = fmt::format("the coefficient of threadIdx.{} ('{}') is not known before launch",
                              kDimName[d], a.thread[d].toString());
            return std::nullopt;
        }
        c[d] = *v;
    }
    return c;
}

/// The gcd of the loop strides of both indices (0 when none), when they are constants.
std::optional<int64_t> strideGcd(const SplitIndex& a, const SplitIndex& b, std::string& why) {
    int64_t g = 0;
    for (const auto* s : {&a, &b}) {
        for (const Poly& p : s->free) {
            auto v = p.constantValue();
            if (!v || *v == INT64_MIN) {
                why = fmt::format("a loop stride ('{}') is not a constant", p.toString());
                return std::nullopt;
            }
            g = std::gcd(g, std::abs(*v));
        }
    }
    return g;
}

/// The sites that access `array` (directly or through a helper reached with several arrays).
std::vector<const Site*> sitesOf(const KernelInfo& k, const std::string& array) {
    std::vector<const Site*> out;
    for (const auto& s : k.sites) {
        if (s.array == array ||
            std::find(s.otherArrays.begin(), s.otherArrays.end(), array) != s.otherArrays.end()) {
            out.push_back(&s);
        }
    }
    return out;
}

std::vector<std::string> arraysOf(const Site& s) {
    std::vector<std::string> out{s.array};
    out.insert(out.end(), s.otherArrays.begin(), s.otherArrays.end());
    return out;
}

/// A hazard that hides accesses of its array (all but the ones about rewriting or launches).
const Hazard* hidingHazard(const KernelInfo& k, const std::string& array) {
    for (const auto& h : k.hazards) {
        if ((array.empty() || h.array == array) && restrictsToHome(h.kind) &&
            h.kind != HazardKind::Macro) {
            return &h;
        }
    }
    return nullptr;
}

} // namespace

BlockBounds blockBounds(const KernelInfo& k) {
    BlockBounds b;
    // A launch CUDA would refuse says nothing: the hardware's bounds stand.
    const bool valid = k.blockDim && (*k.blockDim)[0] >= 1 && (*k.blockDim)[1] >= 1 &&
                       (*k.blockDim)[2] >= 1 && (*k.blockDim)[0] <= 1024 &&
                       (*k.blockDim)[1] <= 1024 && (*k.blockDim)[2] <= 64 &&
                       (*k.blockDim)[0] * (*k.blockDim)[1] * (*k.blockDim)[2] <= 1024;
    if (valid) {
        b.max = *k.blockDim;
        b.exact = true;
        b.maxThreads = b.max[0] * b.max[1] * b.max[2];
        return b;
    }
    if (k.onchip.maxThreads && *k.onchip.maxThreads > 0) {
        b.maxThreads = std::min<int64_t>(*k.onchip.maxThreads, 1024);
        for (auto& m : b.max) {
            m = std::min(m, b.maxThreads);
        }
    }
    return b;
}

bool mayTouchSameElement(const Site& a, const Site& b, const BlockBounds& bounds,
                         std::string& why) {
    auto sa = splitIndex(a, bounds, why);
    auto sb = sa ? splitIndex(b, bounds, why) : std::nullopt;
    if (!sa || !sb) {
        return true;
    }
    auto c = commonThreadCoefficients(*sa, *sb, why);
    auto g = c ? strideGcd(*sa, *sb, why) : std::nullopt;
    auto d = (sa->common - sb->common).constantValue();
    if (c && g && !d) {
        why = fmt::format("their offsets differ by '{}', not a constant",
                          (sa->common - sb->common).toString());
    }
    if (!c || !g || !d) {
        return true;
    }
    if (auto delta = collidingOffset(*c, *d, *g, bounds)) {
        why = offsetText(*delta, bounds) + " may touch one element";
        return true;
    }
    why = fmt::format("no two threads touch one element ({})", boundsText(bounds));
    return false;
}

namespace {

/// An `extern __shared__` array: it starts where every other one of the kernel starts.
bool isDynamicShared(const KernelInfo& k, const ArrayInfo& a) {
    auto it = std::find(k.onchip.externShared.begin(), k.onchip.externShared.end(), a.name);
    return it != k.onchip.externShared.end() || a.extent.dynamic();
}

/// Whether two different arrays may be the same memory; `why` when they may.
bool mayShareMemory(const KernelInfo& k, const std::string& nameA, const std::string& nameB,
                    std::string& why) {
    const ArrayInfo* a = k.findArray(nameA);
    const ArrayInfo* b = k.findArray(nameB);
    if (a == nullptr || b == nullptr) {
        why = fmt::format("'{}' and '{}' may be the same memory", nameA, nameB);
        return true;
    }
    if (a->kind == ArrayKind::Shared || b->kind == ArrayKind::Shared) {
        if (a->kind == b->kind && isDynamicShared(k, *a) && isDynamicShared(k, *b)) {
            why = fmt::format("'{}' and '{}' are both the block's dynamic shared memory", nameA,
                              nameB);
            return true;
        }
        return false;
    }
    if (a->kind == ArrayKind::ConstantGlobal || b->kind == ArrayKind::ConstantGlobal) {
        return false;
    }
    if (a->kind == ArrayKind::DeviceGlobal && b->kind == ArrayKind::DeviceGlobal &&
        !a->extent.dynamic() && !b->extent.dynamic()) {
        return false; // two __device__ arrays (not pointers) are two variables
    }
    for (const auto& h : k.hazards) {
        if (h.kind == HazardKind::Aliasing &&
            ((h.array == nameA && h.other == nameB) || (h.array == nameB && h.other == nameA))) {
            why = fmt::format("a launch passes the same memory as '{}' and '{}'", nameA, nameB);
            return true;
        }
    }
    if (a->isRestrict || b->isRestrict) {
        return false;
    }
    why =
        fmt::format("'{}' and '{}' may be the same memory (neither is __restrict__)", nameA, nameB);
    return true;
}

} // namespace

std::optional<std::string> hiddenAccess(const KernelInfo& k) {
    if (const Hazard* h = hidingHazard(k, "")) {
        return fmt::format("'{}' is used where the analysis does not follow it ({}: {})", h->array,
                           formatLocation(h->location), h->message);
    }
    for (const auto* list : {&k.untracked, &k.unknownWrites, &k.unknownReads}) {
        if (!list->empty()) {
            return "an access the analysis does not track: " + list->front();
        }
    }
    return std::nullopt;
}

namespace {

/// The first pair of accesses on the two sides that may be a cross-thread dependence.
std::optional<std::string> crossingDependence(const KernelInfo& k, const BarrierSides& sides) {
    std::map<SiteId, const Site*> byId;
    for (const auto& s : k.sites) {
        byId[s.id] = &s;
    }
    const BlockBounds bounds = blockBounds(k);
    if (sides.before.size() * sides.after.size() > kMaxPairs) {
        return fmt::format("{} accesses before it and {} after it are too many to compare",
                           sides.before.size(), sides.after.size());
    }
    for (SiteId ia : sides.before) {
        for (SiteId ib : sides.after) {
            const Site* a = byId.count(ia) != 0 ? byId[ia] : nullptr;
            const Site* b = byId.count(ib) != 0 ? byId[ib] : nullptr;
            if (a == nullptr || b == nullptr) {
                return fmt::format("site {} is not one of the kernel's", a == nullptr ? ia : ib);
            }
            if (!writes(a->access) && !writes(b->access)) {
                continue;
            }
            for (const auto& arrA : arraysOf(*a)) {
                for (const auto& arrB : arraysOf(*b)) {
                    std::string why;
                    bool dep = arrA == arrB ? mayTouchSameElement(*a, *b, bounds, why)
                                            : mayShareMemory(k, arrA, arrB, why);
                    if (dep) {
                        return fmt::format("{} ({}) before it and {} ({}) after it: {}",
                                           siteText(*a), accessModeName(a->access), siteText(*b),
                                           accessModeName(b->access), why);
                    }
                }
            }
        }
    }
    return std::nullopt;
}

} // namespace

void judgeBarrier(const KernelInfo& k, const BarrierSides& sides, BarrierInfo& out) {
    out.needed = true;
    if (!sides.opaque.empty()) {
        out.reason = sides.opaque;
        return;
    }
    if (auto why = hiddenAccess(k)) {
        out.reason = *why;
        return;
    }
    if (auto why = crossingDependence(k, sides)) {
        out.reason = *why;
        return;
    }
    out.needed = false;
    out.reason = sides.before.empty() || sides.after.empty()
                     ? fmt::format("no access can run {} it without another barrier between",
                                   sides.before.empty() ? "before" : "after")
                     : fmt::format("no element written on one side is accessed by another "
                                   "thread on the other ({} sites before, {} after)",
                                   sides.before.size(), sides.after.size());
}

} // namespace memplace::kernelinfo

namespace memplace::kernelinfo {

namespace {

/// The name a site's affine terms give a loop's iteration number (kernel_report.cpp).
std::string loopVarName(const LoopInfo& l) {
    return l.var.empty() ? fmt::format("loop{}", l.id) : l.var;
}

/// Why the per-thread index of `s` (its index less the thread part) is not a compile-time
/// constant once constant-trip loops are unrolled; nullopt when it is.
std::optional<std::string> dynamicIndexReason(const KernelInfo& k, const Site& s,
                                              const BlockBounds& b) {
    if (s.index.kind != IndexKind::Affine) {
        return fmt::format("the index of {} is {}", siteText(s), indexKindName(s.index.kind));
    }
    for (const auto& t : s.index.terms) {
        if (threadDim(t.var) >= 0) {
            continue;
        }
        if (t.var.starts_with("blockIdx.")) {
            return fmt::format("the index of {} depends on {}", siteText(s), t.var);
        }
        if (!substituteBlock(t.coeff, b).isConstant()) {
            return fmt::format("the index of {} has the stride '{}' for '{}', not a constant",
                               siteText(s), t.coeff.toString(), t.var);
        }
        const LoopInfo* loop = nullptr;
        for (int id : s.loops) { // innermost last: a shadowing loop wins
            if (id >= 0 && id < static_cast<int>(k.loops.size()) &&
                loopVarName(k.loops[id]) == t.var) {
                loop = &k.loops[id];
            }
        }
        if (loop == nullptr || !loop->tripCount) {
            return fmt::format("the index of {} depends on '{}', whose loop has no constant trip "
                               "count",
                               siteText(s), t.var);
        }
    }
    if (!substituteBlock(s.index.offset, b).isConstant()) {
        return fmt::format("the index of {} has the offset '{}', not a constant", siteText(s),
                           s.index.offset.toString());
    }
    return std::nullopt;
}

/// The site's weight: its call paths times its loops' trip counts (saturating).
uint64_t siteWeight(const KernelInfo& k, const Site& s, bool& estimated) {
    uint64_t w = static_cast<uint64_t>(std::max(s.contexts, 1));
    for (int id : s.loops) {
        uint64_t trips = kUnknownTripWeight;
        if (id >= 0 && id < static_cast<int>(k.loops.size()) && k.loops[id].tripCount) {
            trips = static_cast<uint64_t>(std::max<int64_t>(*k.loops[id].tripCount, 0));
        } else {
            estimated = true;
        }
        if (__builtin_mul_overflow(w, trips, &w)) {
            w = UINT64_MAX;
        }
    }
    return w;
}

void addSaturating(uint64_t& total, uint64_t w) {
    if (__builtin_add_overflow(total, w, &total)) {
        total = UINT64_MAX;
    }
}

/// Decides thread-privacy of one shared array; false with a reason when not proven.
bool decidePrivacy(const KernelInfo& k, const ArrayInfo& a, const std::vector<const Site*>& sites,
                   const BlockBounds& bounds, std::string& why) {
    if (const Hazard* h = hidingHazard(k, a.name)) {
        why = fmt::format("it is used where the analysis does not follow it ({}: {})",
                          formatLocation(h->location), h->message);
        return false;
    }
    for (const auto& other : k.arrays) {
        std::string share;
        if (other.name != a.name && mayShareMemory(k, a.name, other.name, share)) {
            why = share;
            return false;
        }
    }
    if (sites.empty()) {
        why = "it is never accessed";
        return false;
    }
    if (sites.size() * sites.size() > 2 * kMaxPairs) {
        why = fmt::format("its {} accesses are too many to compare", sites.size());
        return false;
    }
    for (size_t i = 0; i < sites.size(); ++i) {
        for (size_t j = i; j < sites.size(); ++j) {
            if (mayTouchSameElement(*sites[i], *sites[j], bounds, why)) {
                why = fmt::format("{}{}: {}", siteText(*sites[i]),
                                  i == j ? " in two threads" : " and " + siteText(*sites[j]), why);
                return false;
            }
        }
    }
    why = fmt::format("each element is touched by one thread only ({})", boundsText(bounds));
    return true;
}

} // namespace

void computeSharedFacts(KernelInfo& k) {
    k.onchip.shared.clear();
    const BlockBounds bounds = blockBounds(k);
    for (const auto& a : k.arrays) {
        if (a.kind != ArrayKind::Shared) {
            continue;
        }
        SharedArrayFacts f;
        f.array = a.name;
        const std::vector<const Site*> sites = sitesOf(k, a.name);
        f.threadPrivate = decidePrivacy(k, a, sites, bounds, f.privacy);
        if (!f.threadPrivate && !bounds.exact && !sites.empty()) {
            // What a 1-D launch would give: said, never assumed.
            BlockBounds oneD = bounds;
            oneD.max = {std::min<int64_t>(bounds.max[0], bounds.maxThreads), 1, 1};
            std::string ignored;
            if (decidePrivacy(k, a, sites, oneD, ignored)) {
                f.privacy += "; it would be private if blockDim.y and blockDim.z were 1";
            }
        }
        f.constantIndices = !sites.empty();
        for (const Site* s : sites) {
            if (auto why = dynamicIndexReason(k, *s, bounds); why && f.constantIndices) {
                f.constantIndices = false;
                f.indexReason = *why;
            }
            uint64_t w = siteWeight(k, *s, f.estimated);
            if (s->access != AccessMode::Write) {
                addSaturating(f.reads, w);
            }
            if (writes(s->access)) {
                addSaturating(f.writes, w);
            }
        }
        k.onchip.shared.push_back(std::move(f));
    }
}

void computeInvariantLoads(KernelInfo& k) {
    k.onchip.invariantLoads.clear();
    const BlockBounds bounds = blockBounds(k);
    // A dimension counts when the block may have several threads in it: the launch says so, or
    // (no constant launch) some index uses it.
    std::array<bool, 2> used{false, false};
    for (int d = 0; d < 2; ++d) {
        if (bounds.exact) {
            used[d] = bounds.max[d] > 1;
            continue;
        }
        for (const auto& s : k.sites) {
            for (const auto& t : s.index.terms) {
                used[d] = used[d] || (s.index.kind == IndexKind::Affine && threadDim(t.var) == d);
            }
        }
    }
    for (const auto& s : k.sites) {
        const ArrayInfo* a = k.findArray(s.array);
        if (a == nullptr || a->kind == ArrayKind::TextureObject ||
            s.index.kind != IndexKind::Affine ||
            !(s.access == AccessMode::Read || s.access == AccessMode::ReadWrite)) {
            continue;
        }
        std::string dims;
        for (int d = 0; d < 2; ++d) {
            bool mentions = std::any_of(s.index.terms.begin(), s.index.terms.end(),
                                        [&](const AffineTerm& t) { return threadDim(t.var) == d; });
            if (used[d] && !mentions) {
                dims += kDimName[d];
            }
        }
        if (!dims.empty()) {
            k.onchip.invariantLoads.push_back({s.id, s.array, dims});
        }
    }
}

} // namespace memplace::kernelinfo

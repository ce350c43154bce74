// The analysis's reuse distances: one traversal of the records per sharing scope, in the order
// the scope's caches see them (stream_order_internal.h), feeding every array's stack at every
// line size of that scope; then, for traces of some blocks only, the device-scoped distances
// stretched by the footprint the untraced blocks would add.
#include "model/analysis_internal.h"
#include "model/stream_order_internal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

namespace memplace::model::detail {

namespace {

using spec::ShareScope;
using trace::AccessKind;
using trace::Record;

uint64_t hashLine(uint64_t line, uint64_t salt) {
    uint64_t x = line ^ salt;
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/// Lines of array a the whole grid touches at stream kind k: the traced footprint scaled to the
/// grid, at most the array's lines.
double gridLines(const TraceStats& st, size_t a, size_t k) {
    const double lineBytes = static_cast<double>(st.kinds[k].lineBytes);
    const double arrayLines = std::ceil(static_cast<double>(st.arrays[a].info.bytes()) / lineBytes);
    return std::min(arrayLines, st.arrays[a].streams[k].footprintLines * st.scale);
}

/// The stream orders, each built the first time a scope asks for it.
class Orders {
public:
    explicit Orders(const Analysis& A) : A_(A), blocks_(blocksOf(A.t)) {}
    const Order& of(ShareScope scope) {
        switch (scope) {
        case ShareScope::Sm:
            if (!sm_) {
                sm_ = smOrder(blocks_, A_.sms, A_.st.residentBlocks);
            }
            return *sm_;
        case ShareScope::Device:
            if (!sm_) {
                sm_ = smOrder(blocks_, A_.sms, A_.st.residentBlocks);
            }
            if (!device_) {
                device_ = deviceOrder(*sm_);
            }
            return *device_;
        case ShareScope::Block:
            if (!block_) {
                block_ = blockOrder(blocks_);
            }
            return *block_;
        case ShareScope::Warp:
        case ShareScope::Thread:
            break;
        }
        if (!warp_) {
            warp_ = warpOrder(A_.t);
        }
        return *warp_;
    }

private:
    const Analysis& A_;
    const std::vector<BlockWarps> blocks_;
    std::optional<Order> sm_, device_, block_, warp_;
};

/// SHARDS line sampling (AnalysisOptions::lineSampleRate).
struct Sampling {
    bool on = false;
    double invRate = 1;
    uint64_t threshold = 0;      ///< a line is tracked when its hash's low 24 bits are below
    std::vector<uint64_t> salts; ///< per array
};

Sampling samplingOf(const Analysis& A) {
    Sampling sm;
    sm.on = A.options.lineSampleRate < 1.0;
    sm.invRate = 1.0 / A.options.lineSampleRate;
    sm.threshold = static_cast<uint64_t>(A.options.lineSampleRate * 16777216.0);
    sm.salts.resize(A.narrays);
    for (size_t a = 0; a < A.narrays; ++a) {
        sm.salts[a] = hashLine(a + 1, A.options.seed);
    }
    return sm;
}

/// One stream kind (line size) of the scope being traversed.
struct KindState {
    size_t k;
    StreamKind kind;
    int shift;
    bool cached; ///< its lines are the record pass's 32-byte lines (LineCache)
    std::vector<std::unique_ptr<StackDistance>> stacks;
    std::vector<uint8_t> sampled; ///< SHARDS for this array (large footprints only)
    std::vector<uint8_t> need;    ///< a candidate place of the array uses this kind
};

/// The kinds of `scope` some array's candidate places need (marking those streams analysed).
std::vector<KindState> kindStatesOf(Analysis& A, ShareScope scope, const Sampling& sampling) {
    TraceStats& st = A.st;
    const size_t narrays = A.narrays;
    std::vector<KindState> ks;
    for (size_t k = 0; k < st.kinds.size(); ++k) {
        if (st.kinds[k].scope != scope) {
            continue;
        }
        bool any = false;
        for (size_t a = 0; a < narrays; ++a) {
            if (A.needKind[a][k]) {
                any = true;
                st.arrays[a].streams[k].analysed = true;
            }
        }
        if (!any) {
            continue;
        }
        ks.push_back({k,
                      st.kinds[k],
                      shiftOf(st.kinds[k].lineBytes),
                      A.lineCache.enabled && st.kinds[k].lineBytes == 32,
                      {},
                      {},
                      {}});
        ks.back().stacks.resize(narrays);
        // Sampling a small footprint saves little and leaves too few lines to measure:
        // only arrays with at least ~1024 expected sampled lines are sampled.
        ks.back().sampled.assign(narrays, 0);
        ks.back().need.assign(narrays, 0);
        for (size_t a = 0; a < narrays; ++a) {
            ks.back().need[a] = A.needKind[a][k] ? 1 : 0;
            double range = static_cast<double>(A.h.arrays[a].bytes()) /
                           static_cast<double>(st.kinds[k].lineBytes);
            ks.back().sampled[a] = sampling.on && range * A.options.lineSampleRate >= 1024;
        }
    }
    return ks;
}

/// Record `ri`'s lines at kind `kst`: their reuse distances into array a's histogram.
void addLineReferences(Analysis& A, KindState& kst, uint32_t ri, const Sampling& sampling) {
    const Record& r = A.records[ri];
    const uint16_t a = r.array;
    const auto& info = A.h.arrays[a];
    const bool read = r.kind == AccessKind::Read;
    const double invRate = sampling.invRate;
    auto& stack = kst.stacks[a];
    const bool sampleThis = kst.sampled[a] != 0;
    if (!stack) {
        uint64_t range = (info.bytes() + kst.kind.lineBytes - 1) / kst.kind.lineBytes + 1;
        stack = std::make_unique<StackDistance>(
            range, static_cast<uint64_t>(A.arrayLanes[a] / (sampleThis ? invRate : 1.0)));
    }
    ArrayStream& as = A.st.arrays[a].streams[kst.k];
    Histogram& hist = read ? as.reads : as.writes;
    const uint64_t* first = nullptr;
    const uint64_t* last = nullptr;
    const uint32_t* cfirst = nullptr;
    const uint32_t* clast = nullptr;
    if (kst.cached) {
        cfirst = A.lineCache.lines.data() + A.lineCache.start[ri];
        clast = A.lineCache.lines.data() + A.lineCache.start[ri + 1];
    } else {
        linesOf(A.t.lanes(r), info.elementSize, kst.kind.lineBytes, kst.shift, A.lines, A.set);
        first = A.lines.data();
        last = A.lines.data() + A.lines.size();
    }
    StackDistance& sd = *stack;
    if (!sampleThis) {
        // The hot loop: exact distances.
        for (const uint32_t* c = cfirst; c != clast; ++c) {
            hist.add(sd.access(*c));
        }
        for (const uint64_t* c = first; c != last; ++c) {
            hist.add(sd.access(*c));
        }
        return;
    }
    auto visit = [&](uint64_t l) {
        if ((hashLine(l, sampling.salts[a]) & 0xffffffu) >= sampling.threshold) {
            return;
        }
        uint64_t d = sd.access(l);
        hist.add(d == kColdDistance ? d : static_cast<uint64_t>(static_cast<double>(d) * invRate),
                 invRate);
    };
    for (const uint32_t* c = cfirst; c != clast; ++c) {
        visit(*c);
    }
    for (const uint64_t* c = first; c != last; ++c) {
        visit(*c);
    }
}

/// Walks the scope's stream instances (segments of `order`); at the end of each, every touched
/// array's stacks give their footprint and are reset.
void traverseScope(Analysis& A, ShareScope scope, const Order& order, std::vector<KindState>& ks,
                   const Sampling& sampling) {
    const bool deviceScope = scope == ShareScope::Device;
    std::vector<uint8_t> touchedFlag(A.narrays, 0);
    std::vector<uint32_t> touched;
    size_t begin = 0;
    for (size_t end : order.segmentEnd) {
        for (size_t p = begin; p < end; ++p) {
            const uint32_t ri = order.idx[p];
            const Record& r = A.records[ri];
            const uint16_t a = r.array;
            if (!deviceScope && r.kind != AccessKind::Read) {
                continue; // write-through: writes skip SM-, block- and warp-scoped caches
            }
            for (auto& kst : ks) {
                if (kst.need[a] == 0) {
                    continue;
                }
                if (touchedFlag[a] == 0) {
                    touchedFlag[a] = 1;
                    touched.push_back(a);
                }
                addLineReferences(A, kst, ri, sampling);
            }
        }
        for (uint32_t a : touched) {
            for (auto& kst : ks) {
                if (!kst.stacks[a]) {
                    continue;
                }
                ArrayStream& as = A.st.arrays[a].streams[kst.k];
                as.footprintLines += static_cast<double>(kst.stacks[a]->distinct()) *
                                     (kst.sampled[a] != 0 ? sampling.invRate : 1.0);
                as.instances += 1;
                kst.stacks[a]->reset();
            }
            touchedFlag[a] = 0;
        }
        touched.clear();
        begin = end;
    }
}

} // namespace

void reuseDistances(Analysis& A) {
    Orders orders(A);
    const Sampling sampling = samplingOf(A);
    // One traversal per sharing scope serves every kind (line size) of that scope.
    std::vector<ShareScope> scopes;
    for (const auto& k : A.st.kinds) {
        if (std::find(scopes.begin(), scopes.end(), k.scope) == scopes.end()) {
            scopes.push_back(k.scope);
        }
    }
    for (ShareScope scope : scopes) {
        std::vector<KindState> ks = kindStatesOf(A, scope, sampling);
        if (ks.empty()) {
            continue;
        }
        traverseScope(A, scope, orders.of(scope), ks, sampling);
        A.phase(fmt::format("reuse distances, {} scope", spec::shareScopeName(scope)));
    }
    for (auto& as : A.st.arrays) {
        for (auto& stream : as.streams) {
            if (stream.instances > 0) {
                stream.footprintLines /= stream.instances;
            }
            stream.reads.finalize();
            stream.writes.finalize();
        }
    }
}

void stretchSampledBlocks(Analysis& A) {
    // Sampled blocks: stretch device-scoped distances by the footprint the untraced blocks
    // would add, judged by how much the traced blocks' footprints overlap.
    TraceStats& st = A.st;
    const double concurrent = std::min<double>(static_cast<double>(st.blocks),
                                               static_cast<double>(A.sms) * st.residentBlocks);
    const double tracedConcurrent =
        std::min<double>(static_cast<double>(st.tracedBlocks), concurrent);
    for (size_t dk = 0; dk < A.deviceKinds.size(); ++dk) {
        size_t k = A.deviceKinds[dk];
        for (size_t a = 0; a < A.narrays; ++a) {
            ArrayStream& as = st.arrays[a].streams[k];
            double n = A.pa[a].blocksTouched;
            double sum = A.pa[a].perBlockLines[dk];
            if (!as.analysed || n <= 0 || sum <= 0) {
                continue;
            }
            double overlap = std::clamp(as.footprintLines / sum, 1.0 / n, 1.0);
            double disjoint = n > 1 ? (overlap - 1.0 / n) / (1.0 - 1.0 / n) : 1.0;
            as.extrapolation = 1.0 + (concurrent / tracedConcurrent - 1.0) * disjoint;
            // First touches. The traced blocks' cold lines stand for scale times as many in
            // the grid, but the grid touches at most the array's lines (or the traced
            // footprint scaled, for arrays blocks share little of): the rest were first
            // touched by an untraced block, and are reuses spread evenly below the grid's
            // footprint (Histogram::warmCold): for gathers, a cache holding a share of the
            // array serves that share of them, not all or nothing.
            const double lines = gridLines(st, a, k);
            const double cold = (as.reads.cold() + as.writes.cold()) * st.scale;
            if (cold > lines && lines > 0) {
                const double warm = 1.0 - lines / cold;
                const auto distance =
                    static_cast<uint64_t>(std::max(1.0, lines / std::max(1.0, as.extrapolation)));
                as.reads.warmCold(warm, distance);
                as.writes.warmCold(warm, distance);
                as.reads.finalize();
                as.writes.finalize();
            }
        }
    }
    st.notes.push_back(fmt::format(
        "the trace covers {} of {} blocks: counts are scaled by {:.4g}, L2 reuse distances "
        "stretched by each array's footprint overlap across blocks, and first touches beyond "
        "the array's lines made L2 reuses",
        st.tracedBlocks, st.blocks, st.scale));
}

} // namespace memplace::model::detail

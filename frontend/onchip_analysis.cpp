// Barrier dependence on the control-flow graph: the kernel's clang CFG, with each call of a helper
// whose body is visible replaced by the helper's own graph (inlined per call), reduced to the
// events that matter: an access (a site), a barrier, or something opaque (a call whose body is not
// visible). For each barrier, the sites reachable forward and backward without crossing another
// barrier are the two sides kernelinfo::judgeBarrier compares. Every approximation adds paths or
// accesses, never removes them: clang's possibly-unreachable edges are kept, a site reached twice
// counts twice, and a block barrier the analysis does not recognise (cooperative groups) is not a
// barrier here, which only merges segments.
#include "frontend/onchip_analysis.h"

#include "kernelinfo/onchip.h"

#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Analysis/CFG.h>
#include <fmt/format.h>

#include <set>

namespace memplace::frontend::detail {

using namespace clang;
namespace ki = memplace::kernelinfo;

namespace {

constexpr size_t kMaxCallDepth = 12;
/// Past this many events the graph is abandoned and every barrier stays needed.
constexpr size_t kMaxEvents = 200000;

bool isBarrierName(const std::string& n) {
    return n.starts_with("__syncthreads") || n == "__barrier_sync" || n == "__barrier_sync_count";
}

/// A helper the walker follows into (kernel_calls.cpp): a body, not a kernel, not a library's.
const FunctionDecl* inlinableBody(const CallExpr* call, const Locator& loc) {
    const FunctionDecl* fd = call->getDirectCallee();
    const FunctionDecl* def = nullptr;
    if (fd == nullptr || isa<CUDAKernelCallExpr>(call) || !fd->hasBody(def) || def == nullptr ||
        fd->hasAttr<CUDAGlobalAttr>() || loc.inSystemHeader(def->getLocation())) {
        return nullptr;
    }
    return def;
}

/// The first `__shared__` variable the kernel or a helper it calls reaches that is not one of its
/// arrays (a scalar, a structure): its accesses are not sites, so no barrier can be judged
/// without them (a `__shared__ int next` written by one thread and read by all after a barrier).
class UntrackedSharedFinder : public RecursiveASTVisitor<UntrackedSharedFinder> {
public:
    UntrackedSharedFinder(const RawKernel& raw, const Locator& loc) : raw_(raw), loc_(loc) {}
    bool VisitDeclRefExpr(DeclRefExpr* e) {
        const auto* vd = dyn_cast<VarDecl>(e->getDecl());
        if (vd != nullptr && vd->hasAttr<CUDASharedAttr>() && raw_.arrayOfDecl.count(vd) == 0) {
            found = vd->getNameAsString();
        }
        return !found;
    }
    bool VisitCallExpr(CallExpr* call) {
        const FunctionDecl* body = inlinableBody(call, loc_);
        if (body != nullptr && seen_.size() < kMaxCallDepth * 8 && seen_.insert(body).second) {
            TraverseStmt(body->getBody());
        }
        return !found;
    }
    std::optional<std::string> found;

private:
    const RawKernel& raw_;
    const Locator& loc_;
    std::set<const FunctionDecl*> seen_;
};

std::optional<std::string> untrackedShared(const RawKernel& raw, const Locator& loc) {
    UntrackedSharedFinder finder(raw, loc);
    finder.TraverseStmt(raw.fn->getBody());
    if (!finder.found) {
        return std::nullopt;
    }
    return fmt::format("'{}' is a __shared__ variable the analysis does not follow (not an array "
                       "of the kernel): its accesses may cross any barrier",
                       *finder.found);
}

struct Event {
    enum class Kind { Nop, Access, Barrier, Opaque };
    Kind kind = Kind::Nop;
    int site = -1;    ///< Access: the site id
    int barrier = -1; ///< Barrier: index into EventGraph::barriers
    std::string what; ///< Opaque: what cannot be seen into
    std::vector<int> succ, pred;
};

Event eventOf(Event::Kind kind) {
    Event e;
    e.kind = kind;
    return e;
}

struct BarrierCall {
    LocKey key;
    SourceLocation location;
    std::string function;
};

/// The barrier calls written in the kernel and the helpers it reaches, each once, in source
/// order. Iterative: the code may be nested deeper than the stack allows recursion.
std::vector<BarrierCall> barrierCalls(const FunctionDecl* kernel, const std::string& kernelName,
                                      const Locator& loc) {
    std::map<LocKey, BarrierCall> found;
    std::set<const FunctionDecl*> seen{kernel};
    std::vector<std::pair<const Stmt*, const FunctionDecl*>> work{{kernel->getBody(), kernel}};
    while (!work.empty()) {
        auto [s, fn] = work.back();
        work.pop_back();
        if (s == nullptr) {
            continue;
        }
        if (const auto* call = dyn_cast<CallExpr>(s)) {
            if (isBarrierName(calleeName(call))) {
                LocKey key = locKey(loc.sm(), call->getBeginLoc());
                found.emplace(key, BarrierCall{key, loc.location(call->getBeginLoc()),
                                               fn == kernel ? kernelName : fn->getNameAsString()});
            } else if (const FunctionDecl* def = inlinableBody(call, loc);
                       def != nullptr && seen.insert(def).second) {
                work.emplace_back(def->getBody(), def);
            }
        }
        for (const Stmt* child : s->children()) {
            work.emplace_back(child, fn);
        }
    }
    std::vector<BarrierCall> out;
    for (auto& [key, call] : found) {
        out.push_back(std::move(call));
    }
    return out;
}

class EventGraph {
public:
    EventGraph(const std::map<LocKey, int>& siteIds, const Locator& loc, const ki::KernelInfo& k)
        : siteIds_(siteIds), loc_(loc), kernelName_(k.name) {
        for (const auto& s : k.sites) {
            kernelSites_.insert(s.id);
        }
    }

    /// The graph of the kernel; false when it could not be built (`failure` says why).
    bool build(const FunctionDecl* kernel) {
        buildFunction(kernel, true);
        if (failure.empty()) {
            for (int id : kernelSites_) {
                if (placedSites_.count(id) == 0) {
                    failure =
                        fmt::format("site {} could not be placed relative to the barriers", id);
                    break;
                }
            }
        }
        return failure.empty();
    }

    /// The two sides of every event of one barrier call, merged.
    ki::BarrierSides sides(const std::vector<int>& barrierEvents) const;

    std::vector<Event> events;
    std::vector<BarrierCall> barriers;
    std::string failure;

private:
    int add(Event e) {
        if (events.size() >= kMaxEvents) {
            failure = "the kernel's control flow is too large to follow";
            return static_cast<int>(events.size()) - 1;
        }
        events.push_back(std::move(e));
        return static_cast<int>(events.size()) - 1;
    }
    void link(int from, int to) {
        if (from == to) {
            return;
        }
        events[from].succ.push_back(to);
        events[to].pred.push_back(from);
    }
    int chain(int cur, Event e) {
        int n = add(std::move(e));
        link(cur, n);
        return n;
    }
    std::pair<int, int> buildFunction(const FunctionDecl* fn, bool isKernel);
    int appendStmt(const Stmt* s, int cur, const FunctionDecl* fn, bool isKernel);
    int appendCall(const CallExpr* call, int cur, const FunctionDecl* fn, bool isKernel);

    const std::map<LocKey, int>& siteIds_;
    const Locator& loc_;
    std::string kernelName_;
    std::set<int> kernelSites_;
    std::set<int> placedSites_;
    std::vector<const FunctionDecl*> stack_;
};

std::pair<int, int> EventGraph::buildFunction(const FunctionDecl* fn, bool isKernel) {
    CFG::BuildOptions options;
    options.setAllAlwaysAdd();
    std::unique_ptr<CFG> cfg = CFG::buildCFG(fn, fn->getBody(), &fn->getASTContext(), options);
    if (!cfg) {
        Event e = eventOf(Event::Kind::Opaque);
        e.what =
            fmt::format("no control-flow graph could be built for '{}'", fn->getNameAsString());
        int n = add(std::move(e));
        return {n, n};
    }
    stack_.push_back(fn);
    std::map<const CFGBlock*, std::pair<int, int>> ends;
    for (const CFGBlock* block : *cfg) {
        int entry = add(Event{});
        int cur = entry;
        for (const CFGElement& element : *block) {
            if (auto cs = element.getAs<CFGStmt>(); cs && failure.empty()) {
                cur = appendStmt(cs->getStmt(), cur, fn, isKernel);
            }
        }
        ends[block] = {entry, cur};
    }
    for (const CFGBlock* block : *cfg) {
        for (const CFGBlock::AdjacentBlock& next : block->succs()) {
            // Edges clang proved unreachable are kept: more paths, never fewer.
            const CFGBlock* to = next.getReachableBlock() != nullptr
                                     ? next.getReachableBlock()
                                     : next.getPossiblyUnreachableBlock();
            if (to != nullptr && failure.empty()) {
                link(ends[block].second, ends[to].first);
            }
        }
    }
    stack_.pop_back();
    return {ends[&cfg->getEntry()].first, ends[&cfg->getExit()].second};
}

int EventGraph::appendStmt(const Stmt* s, int cur, const FunctionDecl* fn, bool isKernel) {
    if (isa<AsmStmt>(s)) {
        // It may synchronise (bar.sync) or access memory through addresses the walker never saw.
        Event opaque = eventOf(Event::Kind::Opaque);
        opaque.what = fmt::format("inline assembly at {}",
                                  ki::formatLocation(loc_.location(s->getBeginLoc())));
        return chain(cur, std::move(opaque));
    }
    const auto* e = dyn_cast<Expr>(s);
    if (e == nullptr) {
        return cur;
    }
    // A site is keyed by where its access expression begins (kernel_accesses.cpp); expressions
    // that begin there too (the enclosing assignment) repeat it, which changes nothing.
    auto it = siteIds_.find(locKey(loc_.sm(), e->getBeginLoc()));
    if (it != siteIds_.end() && kernelSites_.count(it->second) != 0) {
        placedSites_.insert(it->second);
        if (events[cur].kind != Event::Kind::Access || events[cur].site != it->second) {
            Event access = eventOf(Event::Kind::Access);
            access.site = it->second;
            cur = chain(cur, std::move(access));
        }
    }
    if (const auto* call = dyn_cast<CallExpr>(e)) {
        cur = appendCall(call, cur, fn, isKernel);
    }
    return cur;
}

int EventGraph::appendCall(const CallExpr* call, int cur, const FunctionDecl* fn, bool isKernel) {
    const std::string name = calleeName(call);
    if (isBarrierName(name)) {
        barriers.push_back({locKey(loc_.sm(), call->getBeginLoc()),
                            loc_.location(call->getBeginLoc()),
                            isKernel ? kernelName_ : fn->getNameAsString()});
        Event b = eventOf(Event::Kind::Barrier);
        b.barrier = static_cast<int>(barriers.size()) - 1;
        return chain(cur, std::move(b));
    }
    const FunctionDecl* fd = call->getDirectCallee();
    Event opaque = eventOf(Event::Kind::Opaque);
    if (const FunctionDecl* def = inlinableBody(call, loc_)) {
        bool recursive = std::find(stack_.begin(), stack_.end(), def) != stack_.end();
        if (!recursive && stack_.size() < kMaxCallDepth) {
            auto [entry, exit] = buildFunction(def, false);
            link(cur, entry);
            return exit;
        }
        opaque.what =
            fmt::format("a {} call of '{}' at {}", recursive ? "recursive" : "too deeply nested",
                        name, ki::formatLocation(loc_.location(call->getBeginLoc())));
    } else if (fd != nullptr && !isa<CUDAKernelCallExpr>(call) &&
               loc_.inSystemHeader(fd->getLocation())) {
        // A library function reaches the kernel's arrays only through its arguments, which the
        // walker reports as hazards.
        return cur;
    } else {
        opaque.what = fmt::format("a call at {} whose body is not visible",
                                  ki::formatLocation(loc_.location(call->getBeginLoc())));
    }
    return chain(cur, std::move(opaque));
}

ki::BarrierSides EventGraph::sides(const std::vector<int>& barrierEvents) const {
    std::set<int> before;
    std::set<int> after;
    std::string opaque;
    auto walk = [&](bool forward, std::set<int>& out) {
        std::vector<int> work;
        std::vector<bool> seen(events.size(), false);
        for (int b : barrierEvents) {
            const auto& next = forward ? events[b].succ : events[b].pred;
            work.insert(work.end(), next.begin(), next.end());
        }
        while (!work.empty()) {
            int n = work.back();
            work.pop_back();
            if (seen[n]) {
                continue;
            }
            seen[n] = true;
            const Event& e = events[n];
            if (e.kind == Event::Kind::Barrier) {
                continue; // another barrier orders what lies beyond it
            }
            if (e.kind == Event::Kind::Access) {
                out.insert(e.site);
            } else if (e.kind == Event::Kind::Opaque && opaque.empty()) {
                opaque = e.what;
            }
            const auto& next = forward ? e.succ : e.pred;
            work.insert(work.end(), next.begin(), next.end());
        }
    };
    walk(false, before);
    walk(true, after);
    ki::BarrierSides s;
    s.before.assign(before.begin(), before.end());
    s.after.assign(after.begin(), after.end());
    s.opaque = opaque;
    return s;
}

std::optional<int64_t> launchBoundsMaxThreads(const FunctionDecl* fn) {
    const auto* attr = fn->getAttr<CUDALaunchBoundsAttr>();
    if (attr == nullptr || attr->getMaxThreads() == nullptr) {
        return std::nullopt;
    }
    Expr::EvalResult r;
    const Expr* e = attr->getMaxThreads();
    if (e->isValueDependent() || !e->EvaluateAsInt(r, fn->getASTContext())) {
        return std::nullopt;
    }
    const llvm::APSInt& v = r.Val.getInt();
    if (v.getSignificantBits() > 63) {
        return std::nullopt;
    }
    return v.getExtValue();
}

void analyzeBarriers(const RawKernel& raw, const std::map<LocKey, int>& siteIds, const Locator& loc,
                     ki::KernelInfo& k) {
    const std::vector<BarrierCall> calls = barrierCalls(raw.fn, k.name, loc);
    if (calls.empty()) {
        return;
    }
    // Hidden accesses keep every barrier, and may be code too deep for a graph: none is built.
    std::optional<std::string> hidden = ki::hiddenAccess(k);
    if (!hidden) {
        hidden = untrackedShared(raw, loc);
    }
    EventGraph graph(siteIds, loc, k);
    if (!hidden) {
        graph.build(raw.fn);
    }
    // One verdict per barrier as written: a helper's barrier is removed from every call.
    std::map<LocKey, std::vector<int>> eventsOf;
    for (size_t i = 0; i < graph.events.size(); ++i) {
        if (graph.events[i].kind == Event::Kind::Barrier) {
            eventsOf[graph.barriers[graph.events[i].barrier].key].push_back(static_cast<int>(i));
        }
    }
    for (const BarrierCall& call : calls) {
        ki::BarrierInfo info;
        info.location = call.location;
        info.function = call.function;
        ki::BarrierSides sides;
        if (hidden) {
            sides.opaque = *hidden;
        } else if (!graph.failure.empty()) {
            sides.opaque = graph.failure;
        } else if (eventsOf.count(call.key) == 0) {
            sides.opaque = "it is not on the kernel's control-flow graph";
        } else {
            sides = graph.sides(eventsOf[call.key]);
        }
        ki::judgeBarrier(k, sides, info);
        k.onchip.barriers.push_back(std::move(info));
    }
}

} // namespace

void analyzeOnChip(const RawKernel& raw, const std::map<LocKey, int>& siteIds, const Locator& loc,
                   ki::KernelInfo& k) {
    k.onchip.maxThreads = launchBoundsMaxThreads(raw.fn);
    for (const auto& [decl, index] : raw.arrayOfDecl) {
        const auto* vd = dyn_cast<VarDecl>(decl);
        if (vd != nullptr && vd->hasAttr<CUDASharedAttr>() &&
            (vd->hasExternalStorage() || vd->getType()->isIncompleteArrayType())) {
            k.onchip.externShared.push_back(raw.info.arrays[index].name);
        }
    }
    std::sort(k.onchip.externShared.begin(), k.onchip.externShared.end());
    ki::computeSharedFacts(k);
    ki::computeInvariantLoads(k);
    analyzeBarriers(raw, siteIds, loc, k);
}

} // namespace memplace::frontend::detail

// The Placer's signatures: per-device state (properties, spec, decision cache), the entry
// of each launch signature, what the decision cache says of it, and what is stored back.

#include "model/occupancy.h"
#include "placer_internal.h"

#include <cstdio>

#ifndef MEMPLACE_VERSION
#define MEMPLACE_VERSION "unknown" // set by placer/CMakeLists.txt
#endif

namespace memplace::placer {

namespace {

/// What writes the decision cache besides the binary: a decision taken by another memplace
/// (another engine, another model) or under another driver (other timings) is not reused.
std::string cacheWriter() {
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) {
        (void)cudaGetLastError();
    }
    return std::string("memplace ") + MEMPLACE_VERSION + ", driver " + std::to_string(driver);
}

} // namespace

void Placer::Impl::warn(const std::string& w) {
    if (!warned.insert(w).second) {
        return;
    }
    warnings.push_back(w);
    if (!options.quiet) {
        std::fprintf(stderr, "memplace placer: %s\n", w.c_str());
    }
}

DeviceState& Placer::Impl::device(int dev) {
    auto it = devices.find(dev);
    if (it != devices.end()) {
        return it->second;
    }
    const auto t0 = Clock::now();
    struct Timed {
        double& ms;
        Clock::time_point t0;
        ~Timed() { ms += msSince(t0); }
    } timed{deviceSetupMs, t0};
    DeviceState& d = devices[dev];
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        d.failed = true;
        warn("cannot read the properties of device " + std::to_string(dev) +
             "; its launches keep the original placement");
        return d;
    }
    d.name = prop.name;
    d.major = prop.major;
    d.minor = prop.minor;
    auto s = selectSpec(options.spec, options.specDir, d.name, d.major, d.minor);
    if (!s) {
        d.failed = true;
        warn("device " + std::to_string(dev) + " (" + d.name + "): " + s.message() +
             "; its launches keep the original placement");
        return d;
    }
    d.spec = std::move(*s);
    for (const std::string& w : d.spec.warnings) {
        warn(w);
    }
    d.sms = d.spec.spec.processor.sms > 0
                ? d.spec.spec.processor.sms
                : static_cast<uint32_t>(std::max(1, prop.multiProcessorCount));
    d.fingerprint = d.spec.from + ":" + hash16(spec::printSpec(d.spec.spec));
    if (!options.cacheDir.empty()) {
        d.cache = std::make_unique<DecisionCache>(options.cacheDir, BinaryId::current(), d.name,
                                                  d.fingerprint, cacheWriter());
        for (const std::string& w : d.cache->load()) {
            warn(w);
        }
    }
    return d;
}

Entry& Placer::Impl::entry(const LaunchInfo& info, const std::string& key, DeviceState& dev) {
    auto it = index.find(key);
    if (it != index.end()) {
        return entries[it->second];
    }
    index.emplace(key, entries.size());
    Entry& e = entries.emplace_back();
    KernelRecord& r = e.rec;
    r.kernel = info.kernel;
    r.key = key;
    r.signature = signatureText(info);
    r.grid = info.grid;
    r.block = info.block;
    r.sharedBytes = info.sharedBytes;
    r.device = info.device;
    r.blocks = static_cast<uint64_t>(info.grid.x) * info.grid.y * info.grid.z;
    for (const ArrayInfo& a : info.arrays) {
        r.arrays.push_back(a.name);
        r.extents.push_back(a.extentKnown ? a.extentBytes : 0);
        r.elemSizes.push_back(a.elemSize);
        e.original.push_back(a.original);
    }
    r.specName = dev.spec.from;
    // Trace the first waves of whole SMs: the resident blocks per SM of the original launch.
    const model::Occupancy occ = model::occupancy(
        dev.spec.spec.processor, static_cast<uint32_t>(info.block.x * info.block.y * info.block.z),
        info.registers > 0 ? std::optional<uint32_t>(static_cast<uint32_t>(info.registers))
                           : std::nullopt,
        info.staticSharedBytes + info.sharedBytes);
    e.sampling = resolveSampling(options.sampling, occ.blocksPerSm);
    const CachedDecision* c = dev.cache ? dev.cache->find(key) : nullptr;
    if (c != nullptr && c->arrays == r.arrays && !c->decided()) {
        cachedOutcome(e, *c);
    } else if (c != nullptr) {
        if (c->arrays == r.arrays && c->placement.size() == r.arrays.size()) {
            e.phase = Entry::Phase::Decided;
            e.verified = true;
            r.source = RecordSource::Cache;
            r.decision = c->placement;
            e.applied = c->placement;
            r.predictedSeconds = c->predictedSeconds;
            r.originalSeconds = c->originalSeconds;
            r.status = c->placement == e.original ? RecordStatus::Original : RecordStatus::Placed;
            r.why = "from the decision cache " + dev.cache->file().string();
            if (!c->engineBest.empty()) {
                r.notes.push_back("engine's best when decided: " + c->engineBest);
            }
            r.compiled = c->placement == e.original ||
                         std::find(info.compiled.begin(), info.compiled.end(), c->placement) !=
                             info.compiled.end();
            if (info.jitAvailable && options.jit && c->jitPlacement.size() == r.arrays.size()) {
                e.jit = c->jitPlacement;
                r.jitPlacement = c->jitPlacement;
                r.jitPredictedSeconds = c->jitSeconds;
                r.jitWhy = "from the decision cache";
                r.jitState = JitState::Pending;
                r.status = RecordStatus::Placed;
            }
        }
    }
    return e;
}

void Placer::Impl::cachedOutcome(Entry& e, const CachedDecision& c) {
    KernelRecord& r = e.rec;
    e.cachedOutcome = {c.status, c.why};
    if (c.status == CachedStatus::Failed) {
        e.phase = Entry::Phase::Failed;
        r.status = RecordStatus::Failed;
        r.source = RecordSource::Cache;
        r.failure = "in an earlier run (decision cache): " + c.why;
    } else if (c.status == CachedStatus::Untraced && c.traceBound) {
        e.phase = Entry::Phase::Untraced;
        r.status = RecordStatus::Untraced;
        r.source = RecordSource::Cache;
        r.why = c.why + " (in an earlier run; decision cache)";
    } else if (c.status == CachedStatus::Untraced) {
        // Launched too few times to be traced: the same rule applies in this run.
        r.source = RecordSource::Cache;
        r.notes.push_back("an earlier run did not trace it either: " + c.why);
    } else if (c.status == CachedStatus::Pending) {
        // Its trace overflowed and the run ended before the next attempt: this run goes on
        // from there (fewer blocks), the attempts counted across runs.
        r.traceAttempts = std::max(0, c.traceAttempts);
        if (c.sms > 0 && c.blocksPerSm > 0) {
            e.sampling.sms = c.sms;
            e.sampling.blocksPerSm = c.blocksPerSm;
        }
        r.notes.push_back("an earlier run's trace was not finished (" +
                          std::to_string(c.traceAttempts) + " attempt(s)): traced with " +
                          std::to_string(e.sampling.sms) + " SM(s), " +
                          std::to_string(e.sampling.blocksPerSm) + " block(s) each");
    }
}

std::string Placer::Impl::untracedWhy(uint64_t launches) const {
    return "not traced: launched " +
           (launches == 1 ? std::string("once") : std::to_string(launches) + " times") +
           " (a signature is traced at its launch " + std::to_string(options.traceAfter + 1) +
           ": a trace pays only through the launches after it; MEMPLACE_TRACE_AFTER)";
}

void Placer::Impl::keepOriginal(Entry& e, DeviceState& dev, const std::string& why) {
    KernelRecord& r = e.rec;
    e.phase = Entry::Phase::Decided;
    e.applied = e.original;
    e.jit.clear();
    e.verified = true; // nothing to verify: the original runs
    r.decision = e.original;
    r.status = RecordStatus::Original;
    r.why = why;
    if (dev.cache) {
        storeDecision(dev, r, e.original, 0, {}, 0);
    }
}

void Placer::Impl::storeDecision(DeviceState& dev, const KernelRecord& r,
                                 const Placement& placement, double predictedSeconds,
                                 const Placement& jitPlacement, double jitSeconds) {
    CachedDecision c;
    c.key = r.key;
    c.signature = r.signature;
    c.kernel = r.kernel;
    c.arrays = r.arrays;
    c.placement = placement;
    c.predictedSeconds = predictedSeconds;
    c.originalSeconds = r.originalSeconds;
    c.engineBest = placementText(r.arrays, r.engineBest);
    c.jitPlacement = jitPlacement;
    c.jitSeconds = jitSeconds;
    if (auto w = dev.cache->store(c)) {
        warn(*w);
    }
}

bool Placer::Impl::waitingForTrace(const Entry& e) const {
    return options.mode == PlacerMode::Auto && e.phase == Entry::Phase::NeedTrace &&
           !e.traceCounted;
}

void Placer::storeOutcomes() {
    Impl& m = *impl_;
    std::lock_guard<std::mutex> g(m.mu);
    if (m.options.mode != PlacerMode::Auto) {
        return; // trace mode decides nothing
    }
    std::map<int, std::vector<CachedDecision>> outcomes; // per device
    for (const Entry& e : m.entries) {
        const KernelRecord& r = e.rec;
        auto dev = m.devices.find(r.device);
        if (dev == m.devices.end() || !dev->second.cache) {
            continue;
        }
        CachedDecision c;
        c.key = r.key;
        c.signature = r.signature;
        c.kernel = r.kernel;
        c.arrays = r.arrays;
        c.launches = r.launches;
        if (e.phase == Entry::Phase::NeedTrace && r.traceAttempts > 0) {
            c.status = CachedStatus::Pending;
            c.why = "the trace overflowed and the run ended before it was finished";
            c.traceAttempts = r.traceAttempts;
            c.sms = e.sampling.sms;
            c.blocksPerSm = e.sampling.blocksPerSm;
        } else if (e.phase == Entry::Phase::NeedTrace) {
            c.status = CachedStatus::Untraced;
            c.why = m.untracedWhy(r.launches);
        } else if (e.phase == Entry::Phase::Untraced) {
            c.status = CachedStatus::Untraced;
            c.why = r.why;
            c.traceBound = true;
        } else if (e.phase == Entry::Phase::Failed && r.source != RecordSource::Cache) {
            c.status = CachedStatus::Failed;
            c.why = r.failure;
        } else {
            continue;
        }
        if (e.cachedOutcome == std::pair(c.status, c.why)) {
            continue; // the cache says so already
        }
        outcomes[r.device].push_back(std::move(c));
    }
    for (auto& [device, list] : outcomes) {
        if (auto w = m.devices[device].cache->store(list)) {
            m.warn(*w);
        }
    }
}

} // namespace memplace::placer

// Shadow launches (TraceOptions::Shadow): the first traced run of a kernel runs the tracing
// instantiation on scratch copies of the memory it writes, then the original instantiation on
// the program's memory, and compares what the two wrote. Here: which regions are copied, why a
// launch cannot be shadowed, the copies, the comparison, and the step between the two runs
// (endShadowTrace).
#include "runtime/src/runtime_internal.h"

#include <algorithm>

namespace memplace::detail {

namespace {

/// The memory a shadow launch copies: the written arrays' buffers grown into regions that take
/// in every array overlapping them (another argument into the same allocation, the same buffer
/// passed twice), merged where they overlap, then the globals. Every array in a region is
/// pointed at the region's scratch copy at its own offset, so the traced run sees through each
/// pointer what the original sees, its own writes included.
std::vector<WrittenBuffer> shadowRegions(const LaunchInfo& info, std::vector<WrittenBuffer> bufs) {
    std::vector<WrittenBuffer> regions;
    std::vector<WrittenBuffer> globals;
    for (WrittenBuffer& b : bufs) {
        (b.global ? globals : regions).push_back(std::move(b));
    }
    auto lo = [](const WrittenBuffer& b) { return reinterpret_cast<std::uintptr_t>(b.ptr); };
    auto hi = [&](const WrittenBuffer& b) { return lo(b) + b.bytes; };
    auto join = [](std::string& names, const std::string& name) {
        if (("/" + names + "/").find("/" + name + "/") == std::string::npos) {
            names += (names.empty() ? "" : "/") + name;
        }
    };
    for (bool grown = true; grown;) {
        grown = false;
        for (const ArrayInfo& a : info.arrays) {
            const auto alo = reinterpret_cast<std::uintptr_t>(a.ptr);
            const std::uintptr_t ahi = alo + (a.extentKnown ? a.extentBytes : 1);
            for (WrittenBuffer& r : regions) {
                if (a.ptr != nullptr && alo < hi(r) && lo(r) < ahi &&
                    (alo < lo(r) || ahi > hi(r))) {
                    const std::uintptr_t h = std::max(hi(r), ahi);
                    r.ptr = reinterpret_cast<void*>(std::min(lo(r), alo));
                    r.bytes = h - lo(r);
                    join(r.names, a.name);
                    grown = true;
                }
            }
        }
        for (std::size_t i = 0; i < regions.size(); ++i) {
            for (std::size_t k = i + 1; k < regions.size(); ++k) {
                if (lo(regions[k]) < hi(regions[i]) && lo(regions[i]) < hi(regions[k])) {
                    const std::uintptr_t h = std::max(hi(regions[i]), hi(regions[k]));
                    regions[i].ptr =
                        reinterpret_cast<void*>(std::min(lo(regions[i]), lo(regions[k])));
                    regions[i].bytes = h - lo(regions[i]);
                    join(regions[i].names, regions[k].names);
                    regions.erase(regions.begin() + static_cast<std::ptrdiff_t>(k));
                    grown = true;
                    break;
                }
            }
        }
    }
    for (WrittenBuffer& g : globals) {
        regions.push_back(std::move(g));
    }
    return regions;
}

/// Why this launch cannot be shadowed (TraceOptions::Shadow), or empty: every buffer it writes
/// is known (writtenBuffers), no array overlaps a global the kernel writes by name (the traced
/// run writes the global itself, the array would read its scratch copy), and the copies fit the
/// limit.
std::string shadowObstacle(const LaunchInfo& info, const std::vector<WrittenBuffer>& bufs,
                           const std::string& unknown, const TraceOptions& opt) {
    if (!unknown.empty()) {
        return unknown;
    }
    for (std::size_t j = 0; j < info.arrays.size(); ++j) {
        const ArrayInfo& a = info.arrays[j];
        const auto lo = reinterpret_cast<std::uintptr_t>(a.ptr);
        const std::uintptr_t hi = lo + (a.extentKnown ? a.extentBytes : 1);
        for (const WrittenBuffer& b : bufs) {
            const auto blo = reinterpret_cast<std::uintptr_t>(b.ptr);
            if (b.global && a.ptr != nullptr && lo < blo + b.bytes && blo < hi) {
                return "the array " + a.name + " may share memory with the global " + b.names +
                       ", which the kernel writes by name";
            }
        }
    }
    std::size_t bytes = 0;
    for (const WrittenBuffer& b : bufs) {
        bytes += b.global ? 2 * b.bytes : b.bytes; // a global: its snapshot and the traced copy
    }
    std::size_t freeBytes = 0;
    std::size_t totalBytes = 0;
    const bool known = cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess;
    if (!known) {
        (void)cudaGetLastError();
    }
    if (bytes > opt.shadowMaxBytes || (known && bytes > freeBytes / 2)) {
        return "its scratch copies would take " + std::to_string(bytes) + " bytes (the limit: " +
               std::to_string(known ? std::min(opt.shadowMaxBytes, freeBytes / 2)
                                    : opt.shadowMaxBytes) +
               ")";
    }
    return {};
}

/// After a shadow launch's traced run: compares each buffer the tracing instantiation wrote (its
/// scratch copy, or a global's copy) with what the original instantiation wrote, into the trace.
/// A comparison that fails counts as a difference (it cannot say the outputs agree).
void compareShadow(const KernelView& kv, const LaunchArgs& la, LaunchState& st, TraceResult& tr) {
    for (const WrittenBuffer& b : st.shadowBuffers) {
        uint64_t diff = 0;
        std::string what;
        const void* traced = b.global ? b.reference : b.snapshot;
        const cudaError_t e = countDifferences(kv.compare, st.shadowCounter, b.ptr, traced, b.bytes,
                                               la.stream, diff, what);
        std::string item;
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            item = b.names + " (not compared: " + what + ": " + cudaMessage(e) + ")";
            st.report.errors.push_back("comparing the shadow launch's " + item);
        } else if (diff != 0) {
            item = b.names + " (" + std::to_string(diff) + " words)";
        }
        if (!item.empty()) {
            tr.outputsDiffer = true;
            tr.differing += (tr.differing.empty() ? "" : ", ") + item;
        }
    }
}

} // namespace

/// Frees a shadow launch's scratch copies and counter.
void releaseShadow(LaunchState& st) {
    for (WrittenBuffer& b : st.shadowBuffers) {
        if (b.snapshot != nullptr) {
            (void)cudaFree(b.snapshot);
        }
        if (b.reference != nullptr) {
            (void)cudaFree(b.reference);
        }
    }
    st.shadowBuffers.clear();
    if (st.shadowCounter != nullptr) {
        (void)cudaFree(st.shadowCounter);
        st.shadowCounter = nullptr;
    }
    st.shadow = false;
}

/// Sets up a shadow launch: copies each buffer the kernel writes (arrays into scratch copies
/// the tracing instantiation will write instead, globals into snapshots restored after it) on
/// the launch's stream. Empty when done, else why not (nothing is left allocated).
std::string prepareShadow(const KernelView& kv, const LaunchArgs& la, LaunchState& st,
                          const TraceOptions& opt) {
    std::string unknown;
    std::vector<WrittenBuffer> bufs = shadowRegions(st.info, writtenBuffers(st.info, unknown));
    if (std::string why = shadowObstacle(st.info, bufs, unknown, opt); !why.empty()) {
        return why;
    }
    st.shadowBuffers = std::move(bufs);
    st.shadow = true;
    std::string failed;
    auto ok = [&](cudaError_t e, const std::string& what) {
        if (e != cudaSuccess && failed.empty()) {
            (void)cudaGetLastError();
            failed = what + ": " + cudaMessage(e);
        }
        return failed.empty();
    };
    for (WrittenBuffer& b : st.shadowBuffers) {
        if (ok(cudaMalloc(&b.snapshot, b.bytes), "cudaMalloc(scratch copy of " + b.names + ")") &&
            (!b.global ||
             ok(cudaMalloc(&b.reference, b.bytes), "cudaMalloc(copy of " + b.names + ")"))) {
            (void)ok(
                cudaMemcpyAsync(b.snapshot, b.ptr, b.bytes, cudaMemcpyDeviceToDevice, la.stream),
                "cudaMemcpyAsync(scratch copy of " + b.names + ")");
        }
    }
    if (kv.compare != nullptr) {
        (void)ok(cudaMalloc(&st.shadowCounter, sizeof(unsigned long long)),
                 "cudaMalloc(comparison counter)");
    }
    if (!failed.empty()) {
        releaseShadow(st);
    }
    return failed;
}

void redirectToShadow(const LaunchState& st, const LaunchArgs& la, int j, ArrayHandle& h) {
    const auto p = reinterpret_cast<std::uintptr_t>(la.ptrs[j]);
    for (const WrittenBuffer& b : st.shadowBuffers) {
        const auto lo = reinterpret_cast<std::uintptr_t>(b.ptr);
        if (!b.global && la.ptrs[j] != nullptr && p >= lo && p < lo + b.bytes) {
            h.ptr = static_cast<char*>(b.snapshot) + (p - lo);
        }
    }
}

void finishShadow(Runtime& r, const KernelView& kv, const LaunchArgs& la, LaunchState& st,
                  cudaError_t status, TraceResult& tr) {
    tr.shadowed = true;
    if (status == cudaSuccess && st.traceStatus == cudaSuccess) {
        compareShadow(kv, la, st, tr);
    }
    releaseShadow(st);
    if (tr.outputsDiffer && !(st.policyTrace && r.policy)) {
        warnOnce(r, std::string(kv.name) + ": the traced run's outputs differ from the " +
                        "original's (" + tr.differing + ")");
    }
}

void endShadowTrace(const KernelView& kv, const LaunchArgs& la, LaunchPlan& plan,
                    cudaError_t traceStatus) {
    LaunchState& st = *plan.state;
    LaunchReport& rep = st.report;
    st.traceStatus = traceStatus;
    if (traceStatus != cudaSuccess) {
        rep.errors.push_back(std::string("traced launch of ") + kv.name + ": " +
                             cudaMessage(traceStatus));
        if (!sticky(traceStatus)) {
            (void)cudaGetLastError(); // the program sees the original instantiation's status
        }
    }
    // The globals written by name: keep what the traced run wrote, put back what was there.
    for (const WrittenBuffer& b : st.shadowBuffers) {
        if (b.global) {
            (void)check(
                cudaMemcpyAsync(b.reference, b.ptr, b.bytes, cudaMemcpyDeviceToDevice, la.stream),
                "cudaMemcpyAsync(traced copy of " + b.names + ")", rep);
            (void)check(
                cudaMemcpyAsync(b.ptr, b.snapshot, b.bytes, cudaMemcpyDeviceToDevice, la.stream),
                "cudaMemcpyAsync(restoring " + b.names + ")", rep);
        }
    }
    for (int j = 0; j < kv.numArrays; ++j) {
        plan.handles[j].ptr = const_cast<void*>(la.ptrs[j]);
    }
    plan.instantiation = 0;
}

} // namespace memplace::detail

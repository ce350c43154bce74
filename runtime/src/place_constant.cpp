// Constant placement: the constant arrays packed into the translation unit's constant pool
// (layout.h: packConstantPool), uploaded into the chosen instantiation's pool after its last
// reader (a just-in-time module has a pool of its own), the pool's reader recorded after the
// launch.
#include "runtime/src/device.h"
#include "runtime/src/runtime_internal.h"

namespace memplace::detail {

namespace {

/// Uploads the packed arrays into the pool at poolKey (jitPool: a JIT module's pool, else the
/// translation unit's symbol); empty when done, else why not.
std::string uploadInto(Launch& l, PoolState& pool, std::uintptr_t jitPool,
                       const std::vector<ConstantSlot>& packed) {
    LaunchReport& rep = l.rep;
    const LaunchArgs& la = l.la;
    std::string why;
    if (pool.lastUse == nullptr &&
        !check(cudaEventCreateWithFlags(&pool.lastUse, cudaEventDisableTiming),
               "cudaEventCreate(constant pool)", rep)) {
        pool.lastUse = nullptr;
        why = "constant: cannot order the upload after the pool's last reader";
    }
    l.beginTiming(); // the upload is stream work
    if (why.empty() && pool.used &&
        !check(cudaStreamWaitEvent(la.stream, pool.lastUse, 0),
               "cudaStreamWaitEvent(constant pool)", rep)) {
        why = "constant: cannot order the upload after the pool's last reader";
    }
    for (const ConstantSlot& s : packed) {
        if (!why.empty()) {
            break;
        }
        const ArrayInfo& ai = l.info.arrays[s.array];
        const cudaError_t e =
            jitPool != 0 ? cudaMemcpyAsync(reinterpret_cast<void*>(jitPool + s.offset), // NOLINT
                                           ai.ptr, s.bytes, cudaMemcpyDeviceToDevice, la.stream)
                         : cudaMemcpyToSymbolAsync(la.poolSymbol, ai.ptr, s.bytes, s.offset,
                                                   cudaMemcpyDeviceToDevice, la.stream);
        if (!check(e,
                   (jitPool != 0 ? "cudaMemcpyAsync(" : "cudaMemcpyToSymbolAsync(") + ai.name + ")",
                   rep)) {
            why = "constant: the upload failed";
            break;
        }
        l.plan.handles[s.array].constOffset = static_cast<unsigned>(s.offset);
        rep.arrays[s.array].bytesMoved += s.bytes;
    }
    return why;
}

} // namespace

// Pack now (what does not fit falls back), upload once the instantiation is chosen.
std::vector<ConstantSlot> packConstants(Launch& l, const std::vector<ConstantSlot>& wanted) {
    std::vector<ConstantSlot> packed;
    if (!wanted.empty()) {
        for (const ConstantSlot& s : packConstantPool(wanted, l.la.poolBytes)) {
            if (!s.fits) {
                l.fallback(s.array, "constant: " + std::to_string(s.bytes) +
                                        " bytes do not fit in what is left of the " +
                                        std::to_string(l.la.poolBytes) + "-byte pool");
            } else {
                packed.push_back(s);
            }
        }
    }
    return packed;
}

// The constant pool of the chosen instantiation: wait for its last reader, upload. A failed
// upload puts every constant array back in global memory (and the instantiation is chosen
// again, with no constant array left to upload).
// A just-in-time module also gets the program's __constant__ variables the kernel reads,
// copied into its own before each launch (ordered like its pool). If they cannot be, the
// launch does not run just in time.
void uploadConstants(Launch& l, std::vector<ConstantSlot> packed) {
    LaunchPlan& plan = l.plan;
    for (int attempt = 0; attempt < 3; ++attempt) {
        const bool jit = plan.instantiation == LaunchPlan::kJit;
        const bool jitCopies = jit && device::jitCopiesConstants(l);
        if (packed.empty() && !jitCopies) {
            break;
        }
        const void* poolKey = l.la.poolSymbol;
        std::uintptr_t jitPool = 0;
        if (jit) {
            jitPool = device::jitConstantPool(l);
            poolKey = reinterpret_cast<const void*>(jitPool); // NOLINT(performance-no-int-to-ptr)
        }
        PoolState& pool = l.r.pools[{l.st.device, poolKey}];
        const std::string why = uploadInto(l, pool, jitPool, packed);
        bool copied = true;
        if (jitCopies && why.empty()) {
            copied = device::copyJitConstants(l);
        }
        if (why.empty() && copied) {
            l.st.pool = &pool;
            break;
        }
        if (!copied) {
            l.jitBlocked = true; // its constants are not in place: no JIT for this launch
        }
        if (!why.empty()) {
            for (const ConstantSlot& s : packed) {
                l.rep.arrays[s.array].bytesMoved = 0;
                l.fallback(s.array, why);
            }
            packed.clear();
        }
        plan.instantiation = chooseInstantiation(l);
    }
}

void recordPoolReader(LaunchState& st, const LaunchArgs& la) {
    LaunchReport& rep = st.report;
    if (st.pool != nullptr && check(cudaEventRecord(st.pool->lastUse, la.stream),
                                    "cudaEventRecord(constant pool)", rep)) {
        st.pool->used = true;
    }
}

void releasePools(Runtime& r) {
    for (auto& [key, p] : r.pools) {
        if (p.lastUse != nullptr) {
            (void)cudaEventDestroy(p.lastUse);
        }
    }
    r.pools.clear();
}

} // namespace memplace::detail

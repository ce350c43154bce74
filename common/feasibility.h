// The feasibility rules every stage applies the same way: which places take stores and atomics,
// which element sizes a texture can fetch, how much the constant bank holds. The frontend
// (kernelinfo/feasibility.cpp), the model (model/analysis.cpp) and the runtime
// (runtime/src/decide.cpp) call these and word their own reasons; each keeps its stage's own
// rules (spec capacities, occupancy, null pointers, unknown extents). Header only and standard
// C++ only, because the runtime is compiled by nvcc alone; the device accessors
// (runtime/include/memplace/accessors.cuh) take the texture rule from here, under NVRTC too,
// which sees only the functions that need no standard header.
#pragma once

#include "common/access_mode.h"
#include "common/place.h"

#if !defined(__CUDACC_RTC__) // NVRTC (runtime/src/jit.cpp) has no standard headers
#include <cstdint>
#include <optional>
#endif

namespace memplace {

/// Whether a texture can fetch elements of this many bytes (1, 2, 4, 8 or 16).
constexpr bool isTextureElementSize(unsigned long long bytes) {
    return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16;
}

#if !defined(__CUDACC_RTC__)

/// The size of the constant bank a `__constant__` pool lives in.
inline constexpr uint64_t kConstantBankBytes = 64 * 1024;

/// Whether stores through a place reach memory every thread sees: not the read-only path (not
/// coherent), textures (read-only) or the constant bank (read-only in kernels).
constexpr bool placeTakesWrites(Place p) {
    return p != Place::ReadOnly && p != Place::Texture && p != Place::Constant;
}

/// Whether atomics through a place combine across the whole grid: global memory, with or
/// without a persisting L2 window (per-block or per-thread copies would not).
constexpr bool placeTakesAtomics(Place p) {
    return p == Place::Global || p == Place::L2Persist;
}

/// Whether an array of this many bytes fits the constant bank.
constexpr bool fitsConstantBank(uint64_t bytes) {
    return bytes <= kConstantBankBytes;
}

/// Which access-mode rule keeps an array out of a place.
enum class ModeRule : unsigned char {
    Written, ///< the kernel writes the array (plainly or atomically) and the place takes no stores
    Atomic,  ///< the kernel updates the array atomically and the place does not combine atomics
};

/// The first access-mode rule that excludes `p` for an array accessed as `m` (Written before
/// Atomic), or nullopt when the mode allows the place.
constexpr std::optional<ModeRule> accessModeExcludes(AccessMode m, Place p) {
    if (writes(m) && !placeTakesWrites(p)) {
        return ModeRule::Written;
    }
    if (m == AccessMode::Atomic && !placeTakesAtomics(p)) {
        return ModeRule::Atomic;
    }
    return std::nullopt;
}

#endif // !__CUDACC_RTC__

} // namespace memplace

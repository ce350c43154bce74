// What the generated kernel descriptor (`struct memplace_kernel_<name>`) says about each array:
// ArrayDesc, Mode, and the place masks the rewriter uses for the feasible places. Host and device
// code; the place vocabulary is common/place.h, shared with every other stage.
#pragma once

#include "common/access_mode.h"
#include "common/place.h"
#include "memplace/rtc_std.h"

namespace memplace {

/// How the kernel uses an array (common/access_mode.h). A descriptor holds Read, Write or
/// ReadWrite only: the rewriter spells them `memplace::Mode::Read` and so on.
using Mode = AccessMode;

// The rest is host information (NVRTC, which compiles device code only, has no
// std::initializer_list for PlaceSet's constructor).
#if !defined(__CUDACC_RTC__)

/// One placeable array of a kernel, in the order of the kernel's accessor template parameters.
struct ArrayDesc {
    const char* name;     ///< the parameter's name in the original source
    int param;            ///< its position in the kernel's parameter list (0-based)
    std::size_t elemSize; ///< sizeof the element type
    Mode mode;            ///< read, write or both
    PlaceSet places;      ///< feasible places (the frontend's analysis)
    int dims;             ///< 1, or 2 when the array is indexed as row * width + column
    int widthParam = -1;  ///< dims == 2: the parameter holding the row length in elements
    /// Where the program as written keeps it (`const T* __restrict__`: ReadOnly): the default
    /// placement, which the runtime runs when nothing else is asked for (MEMPLACE=off too).
    Place original = Place::Global;
};

/// A `__device__` or `__managed__` variable the kernel accesses by name (the descriptor's
/// optional `globals`, with `globalRange(k, &address, &bytes)` finding its device memory). A
/// pointer argument into it sees those accesses behind the accessor's back, so the runtime
/// keeps an array that may share memory with it where the program keeps it (or global, or the
/// L2 persisting window) when either of the two is written.
struct GlobalDesc {
    const char* name; ///< as host code names it ("ns::g")
    Mode mode;        ///< Read, or ReadWrite: written, atomically updated, or its address taken
};

// Place masks for ArrayDesc::places. The runtime re-checks what it can (a written array never
// goes to a read-only place; texture needs an element size of 1, 2, 4, 8 or 16 bytes; constant
// and shared need the array to fit), so a mask may be generous but never wrong about what the
// kernel does: shared is feasible for a written array only when every element is written by at
// most one block and no block reads an element another block writes.

/// Read-only, element type texture-feasible, indexed 1-D.
inline constexpr PlaceSet kPlaces_ro_1d{Place::Global,   Place::ReadOnly, Place::Texture,
                                        Place::Constant, Place::Shared,   Place::L2Persist};
/// Read-only, element type texture-feasible, indexed as row * width + column (2-D texture).
inline constexpr PlaceSet kPlaces_ro_2d = kPlaces_ro_1d;
/// Read-only, element type not texture-feasible (size not 1, 2, 4, 8 or 16 bytes).
inline constexpr PlaceSet kPlaces_ro_notex{Place::Global, Place::ReadOnly, Place::Constant,
                                           Place::Shared, Place::L2Persist};
/// Written; each element written by at most one block, read only by the block that writes it.
inline constexpr PlaceSet kPlaces_rw{Place::Global, Place::Shared, Place::L2Persist};
/// Written by several blocks, or atomics, or cross-block reads: no staging.
inline constexpr PlaceSet kPlaces_rw_noshared{Place::Global, Place::L2Persist};
/// The pointer escapes or the analysis gave up: the original's place only.
inline constexpr PlaceSet kPlaces_global{Place::Global};

#endif // !__CUDACC_RTC__

} // namespace memplace

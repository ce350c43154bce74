// The runtime's arithmetic, kept free of CUDA so it can be unit-tested: constant-pool packing,
// dynamic shared memory layout, and texture geometry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace memplace::detail {

constexpr std::size_t alignUp(std::size_t v, std::size_t a) {
    return (v + a - 1) / a * a;
}

// ---- constant pool -------------------------------------------------------------------------

struct ConstantSlot {
    int array = -1;
    std::size_t bytes = 0;
    std::size_t offset = 0; ///< byte offset in the pool (16-aligned)
    bool fits = false;
};

/// Packs arrays into a pool of poolBytes in the given order, each at a 16-byte aligned offset;
/// an array that does not fit in what is left gets fits = false and takes no space.
std::vector<ConstantSlot> packConstantPool(const std::vector<ConstantSlot>& arrays,
                                           std::size_t poolBytes);

// ---- dynamic shared memory -----------------------------------------------------------------

struct SharedSlot {
    int array = -1;
    long long count = 0; ///< elements staged
    std::size_t elemSize = 0;
    bool written = false;        ///< needs a dirty bitmap
    std::size_t offset = 0;      ///< byte offset of the staged copy (16-aligned)
    std::size_t dirtyOffset = 0; ///< byte offset of the dirty bitmap (16-aligned), written only
};

struct SharedLayout {
    std::size_t totalBytes = 0;      ///< dynamic shared memory to launch with
    std::vector<SharedSlot> slots;   ///< the arrays that stay staged
    std::vector<SharedSlot> dropped; ///< the arrays that did not fit, largest first
};

/// Bytes one staged array takes: the copy and, if written, one bit per element (words), each
/// rounded up to 16 bytes.
std::size_t sharedFootprint(const SharedSlot& s);

/// Lays out the staged arrays after the program's own dynamic shared memory (programBytes,
/// rounded up to 16). While staticBytes + total > limit, drops the largest staged array.
SharedLayout layoutShared(std::size_t programBytes, std::vector<SharedSlot> slots,
                          std::size_t staticBytes, std::size_t limit);

// ---- textures ------------------------------------------------------------------------------

/// A 1-D linear texture over [ptr, ptr + extent): the resource starts at ptr aligned down to
/// texAlign, offsetElems elements before the array.
struct Linear1D {
    bool ok = false;
    std::string why;
    std::uintptr_t base = 0;
    std::size_t bytes = 0;
    long long offsetElems = 0;
};
Linear1D linearTexture(std::uintptr_t ptr, std::size_t extent, std::size_t elemSize,
                       std::size_t texAlign, std::size_t maxTexels);

/// A 2-D pitched texture over an array of `elems` elements read as rows of `width`.
struct Pitched2D {
    bool ok = false;
    std::string why;
    bool copy = false;      ///< the rows need a pitched copy (alignment, or a partial row)
    std::size_t width = 0;  ///< elements per row
    std::size_t height = 0; ///< rows (the last may be partial when copy)
    std::size_t rowBytes = 0;
    std::size_t fullRows = 0;  ///< rows entirely inside the array
    std::size_t tailElems = 0; ///< elements of the partial last row
};
Pitched2D pitchedTexture(std::uintptr_t ptr, std::size_t extent, std::size_t elemSize,
                         long long width, std::size_t texAlign, std::size_t pitchAlign,
                         std::size_t maxWidth, std::size_t maxHeight, std::size_t maxPitch);

// ---- persisting L2 set-aside ---------------------------------------------------------------

/// The persisting L2 set-aside for a window of windowBytes: the window rounded up to
/// granularity, at least what the program had set (before), at most the device's maximum.
/// Sized to the window rather than the maximum because the set-aside slows every write that
/// misses it: on an H100 a 256 MB copy ran 1.00x, 1.25x, 1.41x and 2.37x its time with
/// set-asides of 12, 16, 24 and 31.25 MB (decision 016). A nonzero cap bounds the window's share
/// (MEMPLACE_L2_LIMIT=window:SIZE; decision 030), never what the program had set itself.
std::size_t persistingSetAside(std::size_t windowBytes, std::size_t before, std::size_t maxPersist,
                               std::size_t granularity, std::size_t cap = 0);

} // namespace memplace::detail

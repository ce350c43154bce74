#include "runtime/src/layout.h"

#include <algorithm>
#include <numeric>

namespace memplace::detail {

std::vector<ConstantSlot> packConstantPool(const std::vector<ConstantSlot>& arrays,
                                           std::size_t poolBytes) {
    std::vector<ConstantSlot> out = arrays;
    std::size_t next = 0;
    for (ConstantSlot& s : out) {
        const std::size_t at = alignUp(next, 16);
        if (s.bytes > 0 && at <= poolBytes && s.bytes <= poolBytes - at) {
            s.offset = at;
            s.fits = true;
            next = at + s.bytes;
        } else {
            s.fits = false;
            s.offset = 0;
        }
    }
    return out;
}

std::size_t sharedFootprint(const SharedSlot& s) {
    std::size_t bytes = alignUp(static_cast<std::size_t>(s.count) * s.elemSize, 16);
    if (s.written) {
        bytes += alignUp(static_cast<std::size_t>((s.count + 31) / 32) * 4, 16);
    }
    return bytes;
}

SharedLayout layoutShared(std::size_t programBytes, std::vector<SharedSlot> slots,
                          std::size_t staticBytes, std::size_t limit) {
    SharedLayout out;
    for (;;) {
        std::size_t next = alignUp(programBytes, 16);
        for (SharedSlot& s : slots) {
            s.offset = next;
            next += alignUp(static_cast<std::size_t>(s.count) * s.elemSize, 16);
            if (s.written) {
                s.dirtyOffset = next;
                next += alignUp(static_cast<std::size_t>((s.count + 31) / 32) * 4, 16);
            }
        }
        const std::size_t total = slots.empty() ? programBytes : next;
        if (slots.empty() || staticBytes + total <= limit) {
            out.totalBytes = total;
            out.slots = std::move(slots);
            return out;
        }
        auto largest = std::max_element(slots.begin(), slots.end(),
                                        [](const SharedSlot& a, const SharedSlot& b) {
                                            return sharedFootprint(a) < sharedFootprint(b);
                                        });
        out.dropped.push_back(*largest);
        slots.erase(largest);
    }
}

Linear1D linearTexture(std::uintptr_t ptr, std::size_t extent, std::size_t elemSize,
                       std::size_t texAlign, std::size_t maxTexels) {
    Linear1D t;
    if (elemSize == 0 || texAlign == 0) {
        t.why = "bad element size or texture alignment";
        return t;
    }
    const std::size_t elems = extent / elemSize;
    if (elems == 0) {
        t.why = "the array is empty";
        return t;
    }
    t.base = ptr / texAlign * texAlign;
    const std::size_t delta = ptr - t.base;
    if (delta % elemSize != 0) {
        t.why = "the array's address is not a whole number of elements past the texture "
                "alignment (" +
                std::to_string(texAlign) + " bytes)";
        return t;
    }
    t.offsetElems = static_cast<long long>(delta / elemSize);
    t.bytes = delta + elems * elemSize;
    const std::size_t texels = t.bytes / elemSize;
    if (texels > maxTexels) {
        t.why = "the array has " + std::to_string(texels) +
                " texels, more than the 1-D linear "
                "texture limit of " +
                std::to_string(maxTexels);
        return t;
    }
    if (texels > static_cast<std::size_t>(INT32_MAX)) {
        t.why = "tex1Dfetch takes an int index: more than 2^31-1 texels";
        return t;
    }
    t.ok = true;
    return t;
}

Pitched2D pitchedTexture(std::uintptr_t ptr, std::size_t extent, std::size_t elemSize,
                         long long width, std::size_t texAlign, std::size_t pitchAlign,
                         std::size_t maxWidth, std::size_t maxHeight, std::size_t maxPitch) {
    Pitched2D t;
    if (width <= 0) {
        t.why = "the row length (width) of the 2-D array is unknown";
        return t;
    }
    if (elemSize == 0) {
        t.why = "bad element size";
        return t;
    }
    const std::size_t elems = extent / elemSize;
    t.width = static_cast<std::size_t>(width);
    if (elems < t.width) {
        t.why = "the array is shorter than one row";
        return t;
    }
    t.fullRows = elems / t.width;
    t.tailElems = elems % t.width;
    t.height = t.fullRows + (t.tailElems != 0 ? 1 : 0);
    t.rowBytes = t.width * elemSize;
    if (t.width > maxWidth || t.height > maxHeight) {
        t.why = "the array is " + std::to_string(t.width) + " x " + std::to_string(t.height) +
                ", beyond the 2-D linear texture limit of " + std::to_string(maxWidth) + " x " +
                std::to_string(maxHeight);
        return t;
    }
    if (t.width * t.height > UINT32_MAX) {
        t.why = "more than 2^32 elements: the 2-D index split is 32-bit";
        return t;
    }
    const bool aligned =
        texAlign != 0 && ptr % texAlign == 0 && pitchAlign != 0 && t.rowBytes % pitchAlign == 0;
    t.copy = !aligned || t.tailElems != 0;
    const std::size_t pitch =
        t.copy ? alignUp(t.rowBytes, pitchAlign == 0 ? 1 : pitchAlign) : t.rowBytes;
    if (pitch > maxPitch) {
        t.why = "the row pitch " + std::to_string(pitch) +
                " exceeds the 2-D linear texture "
                "limit of " +
                std::to_string(maxPitch) + " bytes";
        return t;
    }
    t.ok = true;
    return t;
}

std::size_t persistingSetAside(std::size_t windowBytes, std::size_t before, std::size_t maxPersist,
                               std::size_t granularity, std::size_t cap) {
    const std::size_t bytes = cap == 0 ? windowBytes : std::min(windowBytes, cap);
    const std::size_t want = alignUp(bytes, granularity == 0 ? 1 : granularity);
    return std::min(std::max(want, before), maxPersist);
}

} // namespace memplace::detail

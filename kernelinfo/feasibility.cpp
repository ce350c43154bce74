#include "kernelinfo/feasibility.h"

#include "common/feasibility.h"

#include <fmt/format.h>

namespace memplace::kernelinfo {

namespace {

class ArrayPlaces {
public:
    explicit ArrayPlaces(ArrayInfo& a) : a_(a), home_(homePlace(a.kind)) {
        a_.feasible = PlaceSet::all();
        a_.excluded.clear();
    }
    /// Excludes `p` unless it is the home place, which is always feasible: the original program
    /// keeps the array there.
    void exclude(Place p, const std::string& reason) {
        if (p != home_ && a_.feasible.contains(p)) {
            a_.feasible.erase(p);
            a_.excluded[p] = reason;
        }
    }
    void keepOnly(Place keep, const std::string& reason) {
        for (Place p : kAllPlaces) {
            if (p != keep) {
                exclude(p, reason);
            }
        }
    }

private:
    ArrayInfo& a_;
    Place home_;
};

/// Where the program as written keeps `a`: the read-only path when it asks for it and that is
/// feasible (nvcc loads a `const T* __restrict__` parameter through LDG.E.CONSTANT, as it does
/// `__ldg`), else the home place.
Place originalPlace(const KernelInfo& kernel, const ArrayInfo& a) {
    const Place home = homePlace(a.kind);
    if (home != Place::Global || !a.feasible.contains(Place::ReadOnly)) {
        return home;
    }
    if (a.kind == ArrayKind::Parameter && a.isConst && a.isRestrict) {
        return Place::ReadOnly;
    }
    bool reads = false;
    for (const Site& s : kernel.sites) {
        if (s.array != a.name) {
            continue;
        }
        if (s.intrinsic != "__ldg") {
            return home;
        }
        reads = true;
    }
    return reads ? Place::ReadOnly : home;
}

std::string hazardReason(const Hazard& h) {
    return fmt::format("{} at {}: its accesses cannot go through an accessor", h.message,
                       formatLocation(h.location));
}

/// Why a place that takes no stores cannot hold a written array.
std::string_view noStoresReason(Place p) {
    switch (p) {
    case Place::ReadOnly:
        return ": the read-only path is not coherent";
    case Place::Texture:
        return ": textures are read-only";
    default:
        return ": constant memory is read-only in kernels";
    }
}

/// The access-mode rules (common/feasibility.h): a written array takes no read-only place; an
/// atomically updated one stays where atomics combine (only shared is left to exclude by then:
/// registers are out for every grid-visible array).
void excludeByAccessMode(ArrayPlaces& places, const ArrayInfo& a, const Site* firstWrite,
                         const Site* firstAtomic) {
    const std::string written =
        firstAtomic != nullptr
            ? fmt::format("updated atomically at {}", formatLocation(firstAtomic->location))
        : firstWrite != nullptr ? fmt::format("written at {}", formatLocation(firstWrite->location))
                                : std::string("may be written");
    for (Place p : kAllPlaces) {
        const std::optional<ModeRule> rule = accessModeExcludes(a.mode, p);
        if (rule == ModeRule::Written) {
            places.exclude(p, written + std::string(noStoresReason(p)));
        } else if (rule == ModeRule::Atomic) {
            places.exclude(p, fmt::format("updated atomically at {}: per-block copies would not "
                                          "combine across blocks",
                                          firstAtomic != nullptr
                                              ? formatLocation(firstAtomic->location)
                                              : std::string("?")));
        }
    }
}

} // namespace

void computeFeasibility(KernelInfo& kernel) {
    for (ArrayInfo& a : kernel.arrays) {
        ArrayPlaces places(a);
        const Place home = homePlace(a.kind);

        for (const Hazard& h : kernel.hazards) {
            if (h.array == a.name && restrictsToHome(h.kind)) {
                places.keepOnly(home, hazardReason(h));
            }
        }
        if (a.kind == ArrayKind::TextureObject) {
            places.keepOnly(Place::Texture,
                            "a texture object: the array behind it is bound by the host code");
        }
        if (a.kind == ArrayKind::Shared) {
            places.exclude(Place::Registers,
                           "shared by the threads of a block; registers are thread-private");
            places.keepOnly(Place::Shared,
                            "a __shared__ array: block-private storage the kernel declares");
        }
        places.exclude(Place::Registers,
                       "visible to every thread of the grid; registers are thread-private");

        // The first write and the first atomic, for the reasons.
        const Site* firstWrite = nullptr;
        const Site* firstAtomic = nullptr;
        for (const Site& s : kernel.sites) {
            if (s.array != a.name) {
                continue;
            }
            if (firstWrite == nullptr && writes(s.access)) {
                firstWrite = &s;
            }
            if (firstAtomic == nullptr && s.access == AccessMode::Atomic) {
                firstAtomic = &s;
            }
        }
        excludeByAccessMode(places, a, firstWrite, firstAtomic);
        if (a.elementSize == 0) {
            std::string reason = fmt::format("element type '{}' has no known size", a.elementType);
            places.exclude(Place::Texture, reason);
            places.exclude(Place::Constant, reason);
            places.exclude(Place::Shared, reason);
        } else if (!isTextureElementSize(a.elementSize)) {
            places.exclude(Place::Texture,
                           fmt::format("element type '{}' has {} bytes: no texture format fits "
                                       "(1, 2, 4, 8 or 16 bytes)",
                                       a.elementType, a.elementSize));
        }
        if (a.extent.bytes && !fitsConstantBank(*a.extent.bytes)) {
            places.exclude(Place::Constant,
                           fmt::format("{} bytes exceed the 64 KB constant bank", *a.extent.bytes));
        }

        for (const Hazard& h : kernel.hazards) {
            if (h.kind != HazardKind::Aliasing) {
                continue;
            }
            const std::string* otherName = h.array == a.name   ? &h.other
                                           : h.other == a.name ? &h.array
                                                               : nullptr;
            if (otherName == nullptr) {
                continue;
            }
            const ArrayInfo* other = kernel.findArray(*otherName);
            bool otherWritten = other != nullptr && writes(other->mode);
            std::string where = formatLocation(h.location);
            if (otherWritten) {
                std::string reason = fmt::format(
                    "may alias '{}', which the kernel writes (launch at {})", *otherName, where);
                places.exclude(Place::ReadOnly, reason);
                places.exclude(Place::Texture, reason);
                places.exclude(Place::Constant, reason);
                places.exclude(Place::Shared, reason);
            }
            if (writes(a.mode)) {
                places.exclude(Place::Shared,
                               fmt::format("written and may alias '{}' (launch at {}): a staged "
                                           "copy would diverge from it",
                                           *otherName, where));
            }
        }
        a.original = originalPlace(kernel, a);
    }
}

} // namespace memplace::kernelinfo

#include "rewrite/descriptor.h"

namespace memplace::rewrite::detail {

std::string placeEnum(Place p) {
    switch (p) {
    case Place::Global:
        return "memplace::Place::Global";
    case Place::ReadOnly:
        return "memplace::Place::ReadOnly";
    case Place::Texture:
        return "memplace::Place::Texture";
    case Place::Constant:
        return "memplace::Place::Constant";
    case Place::Shared:
        return "memplace::Place::Shared";
    case Place::L2Persist:
        return "memplace::Place::L2Persist";
    case Place::Registers:
        return "memplace::Place::Registers";
    }
    return "memplace::Place::Global";
}

std::string modeName(kernelinfo::AccessMode m) {
    switch (m) {
    case kernelinfo::AccessMode::Read:
        return "Read";
    case kernelinfo::AccessMode::Write:
        return "Write";
    default:
        return "ReadWrite";
    }
}

std::string modeText(kernelinfo::AccessMode m) {
    return "memplace::Mode::" + modeName(m);
}

std::string maskText(const PlaceSet& places, int dims, bool written) {
    PlaceSet s = places;
    s.erase(Place::Registers);
    const PlaceSet ro{Place::Global,   Place::ReadOnly, Place::Texture,
                      Place::Constant, Place::Shared,   Place::L2Persist};
    const PlaceSet roNotex{Place::Global, Place::ReadOnly, Place::Constant, Place::Shared,
                           Place::L2Persist};
    const PlaceSet rw{Place::Global, Place::Shared, Place::L2Persist};
    const PlaceSet rwNoShared{Place::Global, Place::L2Persist};
    if (!written && s == ro) {
        return dims == 2 ? "memplace::kPlaces_ro_2d" : "memplace::kPlaces_ro_1d";
    }
    if (!written && s == roNotex) {
        return "memplace::kPlaces_ro_notex";
    }
    if (written && s == rw) {
        return "memplace::kPlaces_rw";
    }
    if (written && s == rwNoShared) {
        return "memplace::kPlaces_rw_noshared";
    }
    if (s == PlaceSet{Place::Global}) {
        return "memplace::kPlaces_global";
    }
    std::string out = "memplace::PlaceSet{";
    bool first = true;
    for (Place p : kAllPlaces) {
        if (s.contains(p)) {
            out += (first ? "" : ", ") + placeEnum(p);
            first = false;
        }
    }
    return out + "}";
}

} // namespace memplace::rewrite::detail

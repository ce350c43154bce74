#include "common/place.h"

namespace memplace {

std::string_view placeName(Place p) {
    switch (p) {
    case Place::Global:
        return "global";
    case Place::ReadOnly:
        return "readonly";
    case Place::Texture:
        return "texture";
    case Place::Constant:
        return "constant";
    case Place::Shared:
        return "shared";
    case Place::L2Persist:
        return "l2persist";
    case Place::Registers:
        return "registers";
    }
    return "global";
}

std::optional<Place> parsePlace(std::string_view name) {
    for (Place p : kAllPlaces) {
        if (placeName(p) == name) {
            return p;
        }
    }
    return std::nullopt;
}

} // namespace memplace

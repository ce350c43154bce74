// How the generated kernel descriptor spells modes, places and place masks
// (docs/rewrite-contract.md section 6, runtime/include/memplace/desc.h). Pure functions.
#pragma once

#include "common/place.h"
#include "kernelinfo/kernel_info.h"

#include <string>

namespace memplace::rewrite::detail {

/// "memplace::Place::Texture".
std::string placeEnum(Place p);
/// The runtime's Mode for an access mode: "Read", "Write" or "ReadWrite" (atomic: ReadWrite).
std::string modeName(kernelinfo::AccessMode m);
/// "memplace::Mode::Read".
std::string modeText(kernelinfo::AccessMode m);
/// The named mask of desc.h when `places` is one meant for the array's kind (read-only arrays:
/// kPlaces_ro_1d, kPlaces_ro_2d for dims 2, kPlaces_ro_notex; written arrays: kPlaces_rw,
/// kPlaces_rw_noshared; either: kPlaces_global), else
/// "memplace::PlaceSet{memplace::Place::Global, ...}". Registers never appear.
std::string maskText(const PlaceSet& places, int dims, bool written);

} // namespace memplace::rewrite::detail

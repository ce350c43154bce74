// What the model's analysis and its cost model both ask of a spec's place entry. Model-private.
#pragma once

#include "spec/spec.h"

namespace memplace::model::detail {

/// Whether the entry's memory is software-managed and shared per block: an array placed there
/// is staged into it by each block (its footprint counts against shared memory and occupancy).
inline bool isStagedEntry(const spec::Spec& s, const spec::PlaceEntry& e) {
    const spec::Memory* m = s.findMemory(e.memory);
    return m != nullptr && m->softwareManaged && m->shareScope == spec::ShareScope::Block;
}

} // namespace memplace::model::detail

// What the Model's files share (model.cpp, model_build.cpp, model_evaluate.cpp,
// model_bounds.cpp): the evaluation scratch, the tables building uses, and small spec helpers.
#pragma once

#include "model/model.h"
#include "model/staged.h"

#include <algorithm>
#include <string>
#include <vector>

namespace memplace::model {

struct Model::Scratch {
    std::vector<double> arrayCost;
    std::vector<double> unitLoad;
    /// Per unit, the load its storage levels and staging carry: it only grows as the arrays
    /// left out of a partial placement come in and take cache capacity (lowerBound; kept only
    /// for partial placements under overlapping units).
    std::vector<double> storageLoad;
    std::vector<double> pathLoad;
    double launch = 0; ///< the placement's launch costs (Model::launchCycles)
    std::vector<double> poolCap;
    std::vector<double> setAside;
    std::vector<uint64_t> groupBytes;
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> members; // per pool: array, level
    std::vector<double> levelCap;                                    // array * maxLevels + level
    std::vector<uint32_t> order;
    struct Member {
        double ratio; ///< footprint / refs
        double refs;
        double footprint; ///< bytes, extrapolated
        uint32_t index;   ///< into the pool's member list
    };
    std::vector<Member> member;
    size_t maxLevels = 0;
};

/// While building: where each spec memory's unit and pool are, and each place's capacity group.
struct Model::Layout {
    std::vector<double> unitBytes; ///< per unit: its largest memory
    std::vector<int> memoryUnit;   ///< per spec memory
    std::vector<int> memoryPool;   ///< per spec memory: its cache pool, or -1
    std::vector<int> placeGroup;   ///< per place: its capacity group, or -1
};

namespace detail {

inline std::string unitOf(const spec::Memory& m) {
    return m.unit.empty() ? m.name : m.unit;
}

template <typename T>
inline int indexOf(std::vector<T>& v, const T& x) {
    auto it = std::find(v.begin(), v.end(), x);
    if (it == v.end()) {
        v.push_back(x);
        return static_cast<int>(v.size() - 1);
    }
    return static_cast<int>(it - v.begin());
}

/// The index of the spec memory called `name`, or -1.
inline int memoryIndex(const spec::Spec& spec, const std::string& name) {
    const spec::Memory* m = spec.findMemory(name);
    return m == nullptr ? -1 : static_cast<int>(m - spec.memories.data());
}

} // namespace detail

} // namespace memplace::model

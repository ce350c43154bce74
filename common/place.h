// The places an array can live in. Shared vocabulary of every stage: the frontend says which
// are feasible, the spec says how each is reached, the model prices them, the runtime makes
// them real.
#pragma once

#if !defined(__CUDACC_RTC__) // NVRTC (runtime/src/jit.cpp) sees the enum only
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>
#endif

namespace memplace {

enum class Place : unsigned char { // uint8_t, spelled so that NVRTC needs no <cstdint>
    Global,                        ///< plain loads and stores, L1/L2 cached
    ReadOnly,                      ///< __ldg / const __restrict__: the non-coherent read-only path
    Texture,                       ///< texture object fetches
    Constant,                      ///< the 64 KB __constant__ pool
    Shared,                        ///< staged into dynamic shared memory by each block
    L2Persist,                     ///< global, with a persisting L2 access-policy window
    Registers,                     ///< thread-private, compile-time indexed
};

#if !defined(__CUDACC_RTC__)

/// A placement: one place per array of a kernel, in the kernel's array (descriptor) order.
using Placement = std::vector<Place>;

inline constexpr std::array<Place, 7> kAllPlaces = {
    Place::Global, Place::ReadOnly,  Place::Texture,   Place::Constant,
    Place::Shared, Place::L2Persist, Place::Registers,
};

/// The MSL and JSON name of a place: "global", "readonly", "texture", "constant", "shared",
/// "l2persist", "registers".
std::string_view placeName(Place p);
std::optional<Place> parsePlace(std::string_view name);

/// A small set of places, as a bit mask.
class PlaceSet {
public:
    constexpr PlaceSet() = default;
    constexpr PlaceSet(std::initializer_list<Place> places) {
        for (Place p : places) {
            insert(p);
        }
    }
    static constexpr PlaceSet all() {
        PlaceSet s;
        s.bits_ = (1u << kAllPlaces.size()) - 1;
        return s;
    }
    constexpr void insert(Place p) { bits_ |= bit(p); }
    constexpr void erase(Place p) { bits_ &= ~bit(p); }
    constexpr bool contains(Place p) const { return (bits_ & bit(p)) != 0; }
    constexpr bool empty() const { return bits_ == 0; }
    constexpr uint32_t bits() const { return bits_; }
    constexpr bool operator==(const PlaceSet&) const = default;

private:
    static constexpr uint32_t bit(Place p) { return 1u << static_cast<unsigned>(p); }
    uint32_t bits_ = 0;
};

#endif // !__CUDACC_RTC__

} // namespace memplace

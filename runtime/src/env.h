// The runtime's environment controls, parsed without CUDA so they can be unit-tested:
//   MEMPLACE=off | auto | trace | sweep | force:[kernel.]array=place,...
//   MEMPLACE_DISPATCH=auto | dynamic
//   MEMPLACE_TIME=0 | 1
//   MEMPLACE_JIT=off | auto | always, MEMPLACE_JIT_SYNC=0 | 1
// auto, trace and sweep are the online Placer's modes (placer/): the runtime itself treats them
// like the default (the installed PlacementPolicy decides); the Placer reads them to install
// itself (sweep: placer/sweep.h, the evaluation's in-process measurement of placements).
// What each accepts, and the readers for switches and numbers: common/env.h.
#pragma once

#include "common/env.h"
#include "common/place.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memplace::detail {

// MEMPLACE itself (its force list included) is read by the Placer too: common/env.h.
using env::EnvConfig;
using env::forcedPlace;
using env::ForceEntry;
using env::parseMemplaceEnv;

/// Parses a boolean switch such as MEMPLACE_TIME: true for 1, on, yes, true; false for unset,
/// empty, 0, off, no, false; anything else is false with a warning naming `variable`.
bool parseSwitchEnv(const char* variable, const char* value, std::vector<std::string>& warnings);

/// Parses MEMPLACE_DISPATCH: true for "dynamic"; a warning for anything but auto/dynamic/empty.
bool parseDispatchEnv(const char* value, std::vector<std::string>& warnings);

/// When the runtime compiles a placement just in time (NVRTC), MEMPLACE_JIT:
enum class JitPolicy {
    Off,    ///< never: placements that were not compiled in run through the dynamic accessor
    Auto,   ///< when the PlacementPolicy asks (Decision::jitPlacement); instantiations compiled
            ///< already (in this process or the disk cache) serve any placement (the default)
    Always, ///< every placement that was not compiled in (forced placements too)
};
/// Parses MEMPLACE_JIT (unset or empty: Auto); a warning for anything else.
JitPolicy parseJitEnv(const char* value, std::vector<std::string>& warnings);

/// How the runtime sizes the persisting L2 set-aside for an l2persist launch, MEMPLACE_L2_LIMIT:
enum class L2LimitPolicy {
    Window, ///< the window's bytes (rounded up to 1 MB), put back before the next launch that
            ///< places nothing there (the default)
    Max,    ///< the device's maximum, put back the same way
    Keep,   ///< the device's maximum, left raised for the rest of the process
};
/// Parses MEMPLACE_L2_LIMIT (unset or empty: Window); a warning for anything else.
/// `window:SIZE` (SIZE in bytes, or with a KB/MB suffix: 1024-based) is Window with the
/// set-aside capped at SIZE: `*capBytes` gets it (0 when there is no cap), and a window larger
/// than the cap persists only the cap's share of its lines (the access policy's hitRatio).
L2LimitPolicy parseL2LimitEnv(const char* value, std::vector<std::string>& warnings,
                              std::size_t* capBytes = nullptr);

} // namespace memplace::detail

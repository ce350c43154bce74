// The runtime's environment controls, parsed without CUDA so they can be unit-tested:
//   MEMPLACE=off | auto | force:[kernel.]array=place,...   (trace is the Placer's, issue 7)
//   MEMPLACE_DISPATCH=auto | dynamic
#pragma once

#include "common/place.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memplace::detail {

struct ForceEntry {
    std::string kernel; ///< empty: any kernel
    std::string array;
    Place place = Place::Global;
};

struct EnvConfig {
    enum class Mode { Default, Off, Force } mode = Mode::Default;
    std::vector<ForceEntry> force;
    std::vector<std::string> warnings; ///< what was ignored, and why
};

/// Parses the value of MEMPLACE (null or empty: Default).
EnvConfig parseMemplaceEnv(const char* value);

/// The forced place for kernel/array, if an entry names it (a kernel-qualified entry wins over
/// an unqualified one).
std::optional<Place> forcedPlace(const std::vector<ForceEntry>& entries, std::string_view kernel,
                                 std::string_view array);

/// Parses MEMPLACE_DISPATCH: true for "dynamic"; a warning for anything but auto/dynamic/empty.
bool parseDispatchEnv(const char* value, std::vector<std::string>& warnings);

} // namespace memplace::detail

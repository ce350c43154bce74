// Which memory specification the Placer models the present GPU with.
#pragma once

#include "common/expected.h"
#include "spec/spec.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memplace::placer {

/// The built-in spec for a device name (cudaDeviceProp::name): H200, H100, A100, V100 and the
/// original study's K20c, M2075 and C1060, matched case-insensitively anywhere in the name
/// ("NVIDIA H100 80GB HBM3" -> "h100"). nullopt for any other device.
std::optional<std::string> builtinForDeviceName(std::string_view deviceName);

/// The nearest built-in by compute capability (9.x -> h100, 8.x -> a100, 7.x -> v100, 3.x ->
/// k20c, 2.x -> m2075, 1.x -> c1060, 10 and later -> h200).
std::optional<std::string> builtinForArch(int major, int minor);

/// The file name a probed spec of this device has in a spec folder: the name lower-cased, every
/// run of other characters than letters and digits one '-', and ".msl"
/// ("NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3.msl").
std::string specFileName(std::string_view deviceName);

/// The default folder of probed specs: $MEMPLACE_SPEC_DIR, else $XDG_CONFIG_HOME/memplace/specs,
/// else $HOME/.config/memplace/specs (empty when none is set).
std::string defaultSpecDir();

/// The chosen spec and why it was chosen.
struct DeviceSpec {
    spec::Spec spec;
    std::string source;                ///< "MEMPLACE_SPEC", "probed", "built-in", "nearest"
    std::string from;                  ///< the name or file
    std::vector<std::string> warnings; ///< what the user should know (fallbacks)
};

/// In order: `explicitSpec` (a built-in name or an MSL file: MEMPLACE_SPEC), a probed spec
/// `<specDir>/<specFileName(deviceName)>`, the built-in for the device name, the nearest built-in
/// by architecture (with a warning). A failure only when an explicit spec does not load or
/// nothing matches.
Expected<DeviceSpec> selectSpec(const std::string& explicitSpec, const std::string& specDir,
                                std::string_view deviceName, int major, int minor);

} // namespace memplace::placer

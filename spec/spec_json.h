// The JSON form of a Spec, for `memplace spec show --json` and for tools.
#pragma once

#include "spec/spec.h"

#include <nlohmann/json.hpp>

namespace memplace::spec {

nlohmann::json toJson(const Spec& spec);

} // namespace memplace::spec

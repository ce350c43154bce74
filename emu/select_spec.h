// Choosing the emulated GPU from C++ (in-process users such as the tracer). Programs built for
// emulation choose it with MEMPLACE_SPEC=<built-in name or MSL file> (default h100).
#pragma once

#include "spec/spec.h"

namespace memplace::emu {

/// Makes `spec` the emulated device: properties, attributes and limits are answered from it
/// from now on. Allocations stay.
void useSpec(const spec::Spec& spec);

/// The spec the emulated device answers from (loading MEMPLACE_SPEC if nothing chose one).
const spec::Spec& currentSpec();

} // namespace memplace::emu

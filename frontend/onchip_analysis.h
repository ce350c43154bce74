// The frontend's part of the on-chip analyses (kernelinfo/onchip.h): the launch bounds, and for
// each `__syncthreads()` the accesses that can run on its two sides with no other barrier
// between, found on the kernel's control-flow graph with its helpers inlined (internal).
#pragma once

#include "frontend/analysis_internal.h"

namespace memplace::frontend::detail {

/// Fills k.onchip for a reported kernel: `siteIds` numbers the file's sites (analysis.cpp).
void analyzeOnChip(const RawKernel& raw, const std::map<LocKey, int>& siteIds, const Locator& loc,
                   kernelinfo::KernelInfo& k);

} // namespace memplace::frontend::detail

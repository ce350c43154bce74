// Which places each array of a kernel can live in, from what the frontend saw: access mode,
// element size, extent, hazards, aliasing. Pure logic on KernelInfo, so the runtime can
// recompute it once it knows the real extents at launch time.
#pragma once

#include "common/feasibility.h"
#include "kernelinfo/kernel_info.h"

namespace memplace::kernelinfo {

/// The size of the constant bank a `__constant__` pool lives in (common/feasibility.h).
using memplace::kConstantBankBytes;

/// Fills `feasible` and `excluded` of every array of `kernel` (every excluded place gets a
/// reason). The home place (homePlace) is always feasible. Rules, first reason wins:
/// - a hazard other than aliasing (pointer arithmetic, stored or escaping pointer, reinterpret
///   cast, access spelled in a macro, a use not understood) keeps the array in its home place;
/// - texture objects stay textures; `__shared__` arrays stay shared;
/// - registers hold thread-private data: never an array visible to every thread;
/// - written or atomic arrays: not readonly, texture or constant;
/// - atomic arrays: not shared (per-block copies would not combine across blocks);
/// - texture needs an element of 1, 2, 4, 8 or 16 bytes (fetched as 32-bit words);
/// - constant needs an extent of at most 64 KB when the extent is known (checked at launch
///   when it is dynamic);
/// - an array that may alias a written parameter: not readonly, texture, constant or shared;
///   a written array that may alias another: not shared.
/// Also sets `original`: the read-only path where the program asks for it (`const T*
/// __restrict__` parameters, arrays read only through `__ldg`) and it is feasible, else home.
void computeFeasibility(KernelInfo& kernel);

} // namespace memplace::kernelinfo

// The device interface (internal): the operations in which the GPU build of the host library
// and its build for the CPU emulation layer (emu/) differ. Everything else calls the CUDA
// runtime API, which the emulation layer implements itself. Implemented once for each:
//   device_cuda.cpp      the GPU: just-in-time instantiation with NVRTC (jit_instances.cpp,
//                        jit.cpp), the kernels' register and static shared memory counts;
//   emu/device_emu.cpp   the emulation layer: no NVRTC, no function attributes; active profiles
//                        of traced launches (memplace/emu/profile.h).
// A build compiles one of the two (runtime/CMakeLists.txt).
#pragma once

#include "runtime/src/runtime_internal.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memplace::detail::device {

// ---- just-in-time instantiation -------------------------------------------------------------

/// The environment's JIT options (MEMPLACE_JIT_OPTIONS) and cache folder, read with the rest.
void loadJitEnv(Runtime& r);
/// Whether this kernel's launches can run just in time (LaunchInfo::jitAvailable, jitUnavailable,
/// jitSynchronous).
void describeJit(const Runtime& r, const KernelView& kv, bool forcedDynamic, LaunchInfo& info);
/// The placement the policy's arrays take: its jitPlacement once that is compiled (compiling it
/// when not; l.policyJitNote says why it is not placed), else its placement.
const Placement* policyPlacement(Launch& l, const Decision& decision);
/// The just-in-time instantiation of `placed` when there is one ready (l.chosenJit,
/// plan.jitFunction: LaunchPlan::kJit), else LaunchPlan::kDynamic with the reason in the report.
int chooseJit(Launch& l, const Placement& placed, bool dynamicOnly);
/// Raises the chosen JIT instantiation's dynamic shared memory limit to plan.sharedBytes.
bool raiseJitSharedLimit(Launch& l);
/// The device address of the chosen JIT module's constant pool.
std::uintptr_t jitConstantPool(const Launch& l);
/// Whether the chosen JIT module has copies of the program's __constant__ variables.
bool jitCopiesConstants(const Launch& l);
/// Copies the program's __constant__ variables into the chosen JIT module's; false on failure.
bool copyJitConstants(Launch& l);
/// The first launch of a JIT instantiation says how it came to be.
void announceJit(Launch& l);
/// Before a sweep's measurements: the JIT instantiations it will measure, compiled (under
/// MEMPLACE_JIT=always); `budgetStart` restarts (the sweep's budget is for measuring).
void prepareSweepJit(Runtime& r, const KernelView& kv, const LaunchArgs& la, const LaunchInfo& info,
                     const SweepRequest& req, std::chrono::steady_clock::time_point& budgetStart);
/// releaseResources: the JIT modules unloaded.
void releaseJit();

// ---- kernels --------------------------------------------------------------------------------

/// The default instantiation's registers and static shared memory, for the policy (LaunchInfo).
void describeKernelResources(Launch& l);

// ---- traces ---------------------------------------------------------------------------------

/// A traced launch is about to run with these sampled blocks.
void announceTracedLaunch(const std::vector<uint32_t>& sampled);
/// The records of the traced launch just run, when they come from elsewhere than the trace
/// buffer (an active profile of the emulation layer).
std::optional<std::vector<TraceRecord>> takeProfiledRecords(const LaunchInfo& info);

} // namespace memplace::detail::device

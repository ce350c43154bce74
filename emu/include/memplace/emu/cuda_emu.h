// memplace's CPU CUDA layer: include this (or compile with `-include memplace/emu/cuda_emu.h`,
// which stands in for nvcc's implicit cuda_runtime.h) and a CUDA program compiles as C++ and
// runs its kernels on fibers. See docs/emulation.md.
#pragma once

#if defined(__CUDA__) || defined(__CUDACC__)
#error "memplace emu: compile as C++ (-x c++), not as CUDA: the emulator replaces the CUDA compiler"
#endif

/// Lets code that must differ under emulation (rarely: the runtime registers its constant pool)
/// tell it is running on the CPU layer.
#ifndef MEMPLACE_EMU
#define MEMPLACE_EMU 1
#endif

// clang-format off
// What nvcc's implicit includes bring into every CUDA translation unit.
#include <cassert>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <math.h>
#include <new>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The keywords first, then the types, the host API, the device functions.
#include "memplace/emu/keywords.h"
#include "memplace/emu/enums.h"
#include "memplace/emu/vector_types.h"
#include "memplace/emu/runtime_types.h"
#include "memplace/emu/lane.h"
#include "memplace/emu/runtime_api.h"
#include "memplace/emu/device_functions.h"
#include "memplace/emu/device_math.h"
#include "memplace/emu/textures.h"
#include "memplace/emu/launch.h"
#include "memplace/emu/driver_api.h"
#include "memplace/emu/emu.h"
// clang-format on

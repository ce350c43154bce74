// memplace emu: sm_20_atomic_functions.h (atomics) is provided by the CPU CUDA layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

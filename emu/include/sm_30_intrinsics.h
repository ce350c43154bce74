// memplace emu: sm_30_intrinsics.h (warp intrinsics) is provided by the CPU CUDA layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

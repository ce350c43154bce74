// memplace emu: sm_32_intrinsics.h (__ldg) is provided by the CPU CUDA layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

// memplace emu: device_launch_parameters.h (threadIdx, blockIdx, blockDim, gridDim, warpSize) is
// provided by the CPU CUDA layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

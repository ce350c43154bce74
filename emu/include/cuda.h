// memplace emu: cuda.h (the driver API subset (cuMemGetAddressRange)) is provided by the CPU CUDA
// layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

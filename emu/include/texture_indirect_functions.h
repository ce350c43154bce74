// memplace emu: texture_indirect_functions.h (texture object fetches) is provided by the CPU CUDA
// layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

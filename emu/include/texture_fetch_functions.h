// memplace emu: texture_fetch_functions.h (texture object fetches) is provided by the CPU CUDA
// layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

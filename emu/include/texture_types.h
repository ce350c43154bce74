// memplace emu: texture_types.h (texture types) is provided by the CPU CUDA layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

// memplace emu: builtin_types.h (built-in types) is provided by the CPU CUDA layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

// memplace emu: vector_types.h (vector types) is provided by the CPU CUDA layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

// memplace emu: driver_types.h (runtime types) is provided by the CPU CUDA layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

// memplace emu: cuda_runtime_api.h (the CUDA runtime API) is provided by the CPU CUDA layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

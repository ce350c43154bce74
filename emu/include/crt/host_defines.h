// memplace emu: crt/host_defines.h (CUDA keywords) is provided by the CPU CUDA layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

// memplace emu: crt/common_functions.h (common functions) is provided by the CPU CUDA layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

// memplace emu: crt/math_functions.h (device math) is provided by the CPU CUDA layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

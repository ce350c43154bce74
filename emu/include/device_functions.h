// memplace emu: device_functions.h (device functions) is provided by the CPU CUDA layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

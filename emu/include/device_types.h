// memplace emu: device_types.h (device types) is provided by the CPU CUDA layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

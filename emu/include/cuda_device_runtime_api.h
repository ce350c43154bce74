// memplace emu: cuda_device_runtime_api.h (device runtime declarations) is provided by the CPU CUDA
// layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

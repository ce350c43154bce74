// memplace emu: cuda_profiler_api.h (cudaProfilerStart/Stop) is provided by the CPU CUDA layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

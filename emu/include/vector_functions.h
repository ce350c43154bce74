// memplace emu: vector_functions.h (make_ vector functions) is provided by the CPU CUDA layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

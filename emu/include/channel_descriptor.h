// memplace emu: channel_descriptor.h (cudaCreateChannelDesc) is provided by the CPU CUDA layer.
#pragma once
#include "memplace/emu/cuda_emu.h"

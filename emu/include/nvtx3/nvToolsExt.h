// memplace emu: nvtx3/nvToolsExt.h is not supported by the CPU CUDA layer.
#error "memplace emu: nvtx3/nvToolsExt.h is not supported (NVTX); see docs/emulation.md"

// memplace emu: nvToolsExt.h is not supported by the CPU CUDA layer.
#error "memplace emu: nvToolsExt.h is not supported (NVTX); see docs/emulation.md"

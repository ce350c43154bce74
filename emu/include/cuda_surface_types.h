// memplace emu: cuda_surface_types.h is not supported by the CPU CUDA layer.
#error "memplace emu: cuda_surface_types.h is not supported (surfaces); see docs/emulation.md"

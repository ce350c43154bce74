// memplace emu: surface_types.h is not supported by the CPU CUDA layer.
#error "memplace emu: surface_types.h is not supported (surfaces); see docs/emulation.md"

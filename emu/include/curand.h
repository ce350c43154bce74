// memplace emu: curand.h is not supported by the CPU CUDA layer.
#error "memplace emu: curand.h is not supported (cuRAND); see docs/emulation.md"

// memplace emu: curand_kernel.h is not supported by the CPU CUDA layer.
#error "memplace emu: curand_kernel.h is not supported (cuRAND device API); see docs/emulation.md"

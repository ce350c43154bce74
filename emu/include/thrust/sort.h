// memplace emu: thrust/sort.h is not supported by the CPU CUDA layer.
#error "memplace emu: thrust/sort.h is not supported (Thrust); see docs/emulation.md"

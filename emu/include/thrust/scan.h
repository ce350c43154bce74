// memplace emu: thrust/scan.h is not supported by the CPU CUDA layer.
#error "memplace emu: thrust/scan.h is not supported (Thrust); see docs/emulation.md"

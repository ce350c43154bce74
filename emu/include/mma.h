// memplace emu: mma.h is not supported by the CPU CUDA layer.
#error "memplace emu: mma.h is not supported (warp matrix operations (wmma)); see docs/emulation.md"

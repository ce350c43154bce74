// memplace emu: cufft.h is not supported by the CPU CUDA layer.
#error "memplace emu: cufft.h is not supported (cuFFT); see docs/emulation.md"

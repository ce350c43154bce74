// memplace emu: cuda_fp6.h is not supported by the CPU CUDA layer.
#error "memplace emu: cuda_fp6.h is not supported (6-bit floats); see docs/emulation.md"

// memplace emu: cuda_fp4.h is not supported by the CPU CUDA layer.
#error "memplace emu: cuda_fp4.h is not supported (4-bit floats); see docs/emulation.md"

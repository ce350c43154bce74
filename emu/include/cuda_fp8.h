// memplace emu: cuda_fp8.h is not supported by the CPU CUDA layer.
#error "memplace emu: cuda_fp8.h is not supported (8-bit floats); see docs/emulation.md"

// memplace emu: cuda_bf16.h is not supported by the CPU CUDA layer.
#error "memplace emu: cuda_bf16.h is not supported (bfloat16); see docs/emulation.md"

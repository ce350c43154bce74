// memplace emu: cuda_fp16.h is not supported by the CPU CUDA layer.
#error "memplace emu: cuda_fp16.h is not supported (half precision (__half)); see docs/emulation.md"

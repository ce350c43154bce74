// memplace emu: cublas.h is not supported by the CPU CUDA layer.
#error "memplace emu: cublas.h is not supported (cuBLAS); see docs/emulation.md"

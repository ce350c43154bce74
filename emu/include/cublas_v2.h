// memplace emu: cublas_v2.h is not supported by the CPU CUDA layer.
#error "memplace emu: cublas_v2.h is not supported (cuBLAS); see docs/emulation.md"

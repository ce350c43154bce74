// memplace emu: cuda_awbarrier.h is not supported by the CPU CUDA layer.
#error                                                                                             \
    "memplace emu: cuda_awbarrier.h is not supported (arrive/wait barriers); see docs/emulation.md"

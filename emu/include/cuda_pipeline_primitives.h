// memplace emu: cuda_pipeline_primitives.h is not supported by the CPU CUDA layer.
#error                                                                                             \
    "memplace emu: cuda_pipeline_primitives.h is not supported (asynchronous copies); see docs/emulation.md"

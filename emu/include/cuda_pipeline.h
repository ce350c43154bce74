// memplace emu: cuda_pipeline.h is not supported by the CPU CUDA layer.
#error                                                                                             \
    "memplace emu: cuda_pipeline.h is not supported (asynchronous copies (pipelines)); see docs/emulation.md"

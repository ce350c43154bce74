// memplace emu: cuda_occupancy.h is not supported by the CPU CUDA layer.
#error                                                                                             \
    "memplace emu: cuda_occupancy.h is not supported (the occupancy calculator header); see docs/emulation.md"

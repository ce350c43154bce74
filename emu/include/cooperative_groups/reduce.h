// memplace emu: cooperative_groups/reduce.h is not supported by the CPU CUDA layer.
#error                                                                                             \
    "memplace emu: cooperative_groups/reduce.h is not supported (cooperative groups); see docs/emulation.md"

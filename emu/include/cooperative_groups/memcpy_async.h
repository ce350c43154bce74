// memplace emu: cooperative_groups/memcpy_async.h is not supported by the CPU CUDA layer.
#error                                                                                             \
    "memplace emu: cooperative_groups/memcpy_async.h is not supported (cooperative groups); see docs/emulation.md"

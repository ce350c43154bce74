// memplace emu: cub/device/device_radix_sort.cuh is not supported by the CPU CUDA layer.
#error                                                                                             \
    "memplace emu: cub/device/device_radix_sort.cuh is not supported (CUB); see docs/emulation.md"

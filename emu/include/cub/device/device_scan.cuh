// memplace emu: cub/device/device_scan.cuh is not supported by the CPU CUDA layer.
#error "memplace emu: cub/device/device_scan.cuh is not supported (CUB); see docs/emulation.md"

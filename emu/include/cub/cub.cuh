// memplace emu: cub/cub.cuh is not supported by the CPU CUDA layer.
#error "memplace emu: cub/cub.cuh is not supported (CUB); see docs/emulation.md"

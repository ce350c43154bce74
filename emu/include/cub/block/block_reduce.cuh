// memplace emu: cub/block/block_reduce.cuh is not supported by the CPU CUDA layer.
#error "memplace emu: cub/block/block_reduce.cuh is not supported (CUB); see docs/emulation.md"

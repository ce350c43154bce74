// memplace emu: nvml.h is not supported by the CPU CUDA layer.
#error "memplace emu: nvml.h is not supported (NVML); see docs/emulation.md"

// memplace emu: nvrtc.h is not supported by the CPU CUDA layer.
#error "memplace emu: nvrtc.h is not supported (NVRTC); see docs/emulation.md"

// memplace emu: sm_90_rt.h is not supported by the CPU CUDA layer.
#error "memplace emu: sm_90_rt.h is not supported (cluster intrinsics); see docs/emulation.md"

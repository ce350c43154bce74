// memplace emu: cusolverDn.h is not supported by the CPU CUDA layer.
#error "memplace emu: cusolverDn.h is not supported (cuSOLVER); see docs/emulation.md"

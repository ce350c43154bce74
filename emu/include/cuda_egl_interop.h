// memplace emu: cuda_egl_interop.h is not supported by the CPU CUDA layer.
#error                                                                                             \
    "memplace emu: cuda_egl_interop.h is not supported (graphics interoperability); see docs/emulation.md"

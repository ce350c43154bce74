// memplace emu: cudaGL.h is not supported by the CPU CUDA layer.
#error "memplace emu: cudaGL.h is not supported (graphics interoperability); see docs/emulation.md"

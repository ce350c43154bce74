// memplace emu: cudnn.h is not supported by the CPU CUDA layer.
#error "memplace emu: cudnn.h is not supported (cuDNN); see docs/emulation.md"

// memplace emu: cusparse.h is not supported by the CPU CUDA layer.
#error "memplace emu: cusparse.h is not supported (cuSPARSE); see docs/emulation.md"

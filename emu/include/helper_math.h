// memplace emu: helper_math.h is not supported by the CPU CUDA layer.
#error                                                                                             \
    "memplace emu: helper_math.h is not supported (the CUDA samples helpers (vector operators): copy the operators into the program); see docs/emulation.md"

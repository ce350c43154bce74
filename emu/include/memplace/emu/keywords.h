// CUDA's declaration keywords for a host C++ compiler (the memplace CPU CUDA layer).
//
// Kernels and device functions become ordinary C++ functions; `__shared__` variables become
// `static thread_local`: the fibers of one block all run on one OS thread and the blocks an OS
// thread runs run to completion one after another, so every thread of a block sees one
// instance, as on the GPU (docs/emulation.md, "Shared memory").
#pragma once

#define MEMPLACE_EMU 1

// Programs test these to enable CUDA syntax; the emulator answers for CUDA 13.0. __CUDA_ARCH__
// stays undefined: the whole program is one host compilation, so `#ifdef __CUDA_ARCH__` code
// paths are not taken (see docs/emulation.md).
#ifndef __CUDACC__
#define __CUDACC__ 1
#endif
#ifndef __NVCC__
#define __NVCC__ 1
#endif
#define __CUDACC_VER_MAJOR__ 13
#define __CUDACC_VER_MINOR__ 0
#define __CUDACC_VER_BUILD__ 0
#ifdef __CUDA_ARCH__
#error                                                                                             \
    "memplace emu: __CUDA_ARCH__ must not be defined: device code is compiled as host code under emulation"
#endif

#define __global__
#define __device__
#define __host__
#define __shared__ static thread_local
#define __constant__
#define __managed__
#define __grid_constant__
#define __forceinline__ inline
// Empty rather than __attribute__((noinline)): libstdc++ writes __attribute__((__noinline__)).
#define __noinline__
#define __launch_bounds__(...)
#define __maxnreg__(n)
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __attribute__((aligned(n)))
#define __device_builtin__
#define __cudart_builtin__
#define __location__(a)
#define CUDARTAPI
#define CUDART_CB
#define CUDAAPI
#define CUDA_CB

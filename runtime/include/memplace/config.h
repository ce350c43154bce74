// Build configuration of the memplace runtime headers: function qualifiers, the constant-pool
// size, and the switches the CPU emulation layer (emu/) flips.
#pragma once

#if defined(__CUDACC__) || defined(MEMPLACE_EMU)
/// Device code: inlined everywhere, so an accessor costs what the access it performs costs.
#define MEMPLACE_DEV __device__ __forceinline__
/// Host and device code.
#define MEMPLACE_HD __host__ __device__ __forceinline__
#else
#define MEMPLACE_DEV inline
#define MEMPLACE_HD inline
#endif

/// The block's dynamic shared memory as `T* name` (docs/rewrite-contract.md section 5). The
/// CPU emulation layer defines its own; on nvcc it is the usual extern array, 16-byte aligned.
#ifndef MEMPLACE_DYNAMIC_SHARED
#define MEMPLACE_DYNAMIC_SHARED(T, name) extern __shared__ __align__(16) T name[]
#endif

/// Bytes of the per-translation-unit `__constant__` pool that the constant place uses. The
/// hardware limit is 64 KB per module *including the program's own `__constant__` data*: a
/// rewriter that sees the translation unit declare N bytes of its own constant data defines
/// this to 65536 - (N + 15) / 16 * 16 before including memplace.cuh.
#ifndef MEMPLACE_CONSTANT_POOL_BYTES
#define MEMPLACE_CONSTANT_POOL_BYTES 65536
#endif
static_assert(MEMPLACE_CONSTANT_POOL_BYTES % 16 == 0 && MEMPLACE_CONSTANT_POOL_BYTES <= 65536 &&
                  MEMPLACE_CONSTANT_POOL_BYTES >= 16,
              "MEMPLACE_CONSTANT_POOL_BYTES must be a multiple of 16 in [16, 65536]");

/// Define MEMPLACE_NO_TRACING to leave the tracing instantiation of every kernel out (saves
/// compile time; tracing requests then fail and are reported).

/// Opens and closes the unnamed namespace that gives the constant pool, and everything that
/// names it, internal linkage (one pool per translation unit; see accessors.cuh). Under NVRTC
/// (a just-in-time module is one translation unit of its own) the names keep external linkage,
/// so that the runtime finds the module's kernel and its pool by their lowered names.
#if defined(__CUDACC_RTC__)
#define MEMPLACE_TU_BEGIN
#define MEMPLACE_TU_END
#else
#define MEMPLACE_TU_BEGIN namespace {
#define MEMPLACE_TU_END }
#endif

// The few driver API calls a runtime-API program needs next to it (cuda.h): initialisation,
// errors, and cuMemGetAddressRange, answered from the emulator's allocation table.
#pragma once

#include "memplace/emu/runtime_types.h"

#include <cstddef>

#define CUDA_VERSION 13000

typedef unsigned long long CUdeviceptr_v2;
typedef CUdeviceptr_v2 CUdeviceptr;
typedef int CUdevice_v1;
typedef CUdevice_v1 CUdevice;
typedef struct CUctx_st* CUcontext;
typedef struct CUstream_st* CUstream;

// The CUresult values the emulator returns, (name, value): the enum and cuGetErrorName's
// names are generated from this one list.
#define MEMPLACE_EMU_CU_RESULTS(X)                                                                 \
    X(CUDA_SUCCESS, 0)                                                                             \
    X(CUDA_ERROR_INVALID_VALUE, 1)                                                                 \
    X(CUDA_ERROR_OUT_OF_MEMORY, 2)                                                                 \
    X(CUDA_ERROR_NOT_INITIALIZED, 3)                                                               \
    X(CUDA_ERROR_DEINITIALIZED, 4)                                                                 \
    X(CUDA_ERROR_NO_DEVICE, 100)                                                                   \
    X(CUDA_ERROR_INVALID_DEVICE, 101)                                                              \
    X(CUDA_ERROR_INVALID_CONTEXT, 201)                                                             \
    X(CUDA_ERROR_NOT_FOUND, 500)                                                                   \
    X(CUDA_ERROR_NOT_SUPPORTED, 801)                                                               \
    X(CUDA_ERROR_UNKNOWN, 999)

#define MEMPLACE_EMU_ENUMERATOR(name, value) name = value,
enum cudaError_enum { MEMPLACE_EMU_CU_RESULTS(MEMPLACE_EMU_ENUMERATOR) };
#undef MEMPLACE_EMU_ENUMERATOR
typedef enum cudaError_enum CUresult;

CUresult cuInit(unsigned int flags);
CUresult cuDriverGetVersion(int* driverVersion);
CUresult cuDeviceGet(CUdevice* device, int ordinal);
CUresult cuDeviceGetCount(int* count);
CUresult cuCtxGetCurrent(CUcontext* pctx);
CUresult cuCtxGetDevice(CUdevice* device);
CUresult cuCtxSynchronize(void);
CUresult cuGetErrorString(CUresult error, const char** pStr);
CUresult cuGetErrorName(CUresult error, const char** pStr);
CUresult cuMemGetAddressRange_v2(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr);
#define cuMemGetAddressRange cuMemGetAddressRange_v2

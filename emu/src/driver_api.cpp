// The few driver API functions programs call (cu*), and cudaGetDriverEntryPoint's table of
// them.
#include "state.h"

#include <cstring>

using namespace memplace::emu::detail;

CUresult cuInit(unsigned int) {
    return ensureDevice() == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}
CUresult cuDriverGetVersion(int* v) {
    if (v == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    *v = CUDA_VERSION;
    return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice* dev, int ordinal) {
    if (dev == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *dev = 0;
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetCount(int* count) {
    if (count == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    *count = ensureDevice() == cudaSuccess ? 1 : 0;
    return CUDA_SUCCESS;
}
CUresult cuCtxGetCurrent(CUcontext* ctx) {
    if (ctx == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    static int primary;
    *ctx = reinterpret_cast<CUcontext>(&primary);
    return CUDA_SUCCESS;
}
CUresult cuCtxGetDevice(CUdevice* dev) {
    return cuDeviceGet(dev, 0);
}
CUresult cuCtxSynchronize(void) {
    return stickyError() == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
}
CUresult cuGetErrorName(CUresult error, const char** str) {
    if (str == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    switch (error) {
#define MEMPLACE_EMU_NAME_CASE(name, value)                                                        \
    case name:                                                                                     \
        *str = #name;                                                                              \
        return CUDA_SUCCESS;
        MEMPLACE_EMU_CU_RESULTS(MEMPLACE_EMU_NAME_CASE)
#undef MEMPLACE_EMU_NAME_CASE
    default:
        *str = nullptr;
        return CUDA_ERROR_INVALID_VALUE;
    }
}
CUresult cuGetErrorString(CUresult error, const char** str) {
    if (str == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    switch (error) {
    case CUDA_SUCCESS:
        *str = "no error";
        break;
    case CUDA_ERROR_INVALID_VALUE:
        *str = "invalid argument";
        break;
    case CUDA_ERROR_OUT_OF_MEMORY:
        *str = "out of memory";
        break;
    case CUDA_ERROR_NOT_FOUND:
        *str = "named symbol not found";
        break;
    case CUDA_ERROR_NO_DEVICE:
        *str = "no CUDA-capable device is detected";
        break;
    default:
        return cuGetErrorName(error, str);
    }
    return CUDA_SUCCESS;
}
namespace {
struct EntryPoint {
    const char* name;
    void* fn;
};
} // namespace

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr, unsigned int,
                                             unsigned long long,
                                             cudaDriverEntryPointQueryResult* status) {
    if (symbol == nullptr || funcPtr == nullptr)
        return fail(cudaErrorInvalidValue);
    static const EntryPoint table[] = {
        {"cuInit", reinterpret_cast<void*>(&cuInit)},
        {"cuDriverGetVersion", reinterpret_cast<void*>(&cuDriverGetVersion)},
        {"cuDeviceGet", reinterpret_cast<void*>(&cuDeviceGet)},
        {"cuDeviceGetCount", reinterpret_cast<void*>(&cuDeviceGetCount)},
        {"cuCtxGetCurrent", reinterpret_cast<void*>(&cuCtxGetCurrent)},
        {"cuCtxGetDevice", reinterpret_cast<void*>(&cuCtxGetDevice)},
        {"cuCtxSynchronize", reinterpret_cast<void*>(&cuCtxSynchronize)},
        {"cuGetErrorString", reinterpret_cast<void*>(&cuGetErrorString)},
        {"cuGetErrorName", reinterpret_cast<void*>(&cuGetErrorName)},
        {"cuMemGetAddressRange", reinterpret_cast<void*>(&cuMemGetAddressRange_v2)},
        {"cuMemGetAddressRange_v2", reinterpret_cast<void*>(&cuMemGetAddressRange_v2)},
    };
    for (const EntryPoint& e : table) {
        if (std::strcmp(e.name, symbol) == 0) {
            *funcPtr = e.fn;
            if (status != nullptr)
                *status = cudaDriverEntryPointSuccess;
            return cudaSuccess;
        }
    }
    report(std::string("cudaGetDriverEntryPoint: the driver function ") + symbol +
           " is not emulated");
    *funcPtr = nullptr;
    if (status != nullptr)
        *status = cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess;
}
cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                                    cudaDriverEntryPointQueryResult* status) {
    return cudaGetDriverEntryPointByVersion(symbol, funcPtr, CUDART_VERSION, flags, status);
}

// Errors: the calling thread's last error, the process's sticky error (a fault inside a kernel),
// the emulator's reports on stderr, and the runtime API's error queries and strings.
#include "state.h"

#include <atomic>
#include <cstdio>

namespace memplace::emu::detail {

namespace {

thread_local cudaError_t t_lastError = cudaSuccess;
std::atomic<int> g_sticky{cudaSuccess};

} // namespace

cudaError_t fail(cudaError_t e) {
    if (e != cudaSuccess)
        t_lastError = e;
    return e;
}

cudaError_t stickyError() {
    return static_cast<cudaError_t>(g_sticky.load());
}
void setStickyError(cudaError_t e) {
    int expected = cudaSuccess;
    g_sticky.compare_exchange_strong(expected, e);
    t_lastError = e;
}

void clearStickyError() {
    g_sticky = cudaSuccess;
    t_lastError = cudaSuccess;
}

void report(const std::string& message) {
    std::fprintf(stderr, "memplace emu: %s\n", message.c_str());
    std::fflush(stderr);
}

} // namespace memplace::emu::detail

using namespace memplace::emu::detail;

// ---- errors ---------------------------------------------------------------------------------

cudaError_t cudaGetLastError(void) {
    cudaError_t e = t_lastError;
    t_lastError = stickyError();
    return e;
}
cudaError_t cudaPeekAtLastError(void) {
    return t_lastError;
}

const char* cudaGetErrorName(cudaError_t error) {
    const char* n = errorName(error);
    return n != nullptr ? n : "cudaErrorUnknown";
}
const char* cudaGetErrorString(cudaError_t error) {
    switch (error) {
    case cudaSuccess:
        return "no error";
    case cudaErrorInvalidValue:
        return "invalid argument";
    case cudaErrorMemoryAllocation:
        return "out of memory";
    case cudaErrorInitializationError:
        return "initialization error (memplace emu: the device spec could not be loaded)";
    case cudaErrorInvalidConfiguration:
        return "invalid configuration argument";
    case cudaErrorInvalidSymbol:
        return "invalid device symbol";
    case cudaErrorInvalidDevicePointer:
        return "invalid device pointer";
    case cudaErrorInvalidTexture:
        return "invalid texture reference";
    case cudaErrorInvalidChannelDescriptor:
        return "invalid channel descriptor";
    case cudaErrorInvalidMemcpyDirection:
        return "invalid copy direction for memcpy";
    case cudaErrorInvalidFilterSetting:
        return "linear filtering not supported for non-float type";
    case cudaErrorNoDevice:
        return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice:
        return "invalid device ordinal";
    case cudaErrorUnsupportedLimit:
        return "limit is not supported on this architecture";
    case cudaErrorInvalidResourceHandle:
        return "invalid resource handle";
    case cudaErrorNotReady:
        return "device not ready";
    case cudaErrorIllegalAddress:
        return "an illegal memory access was encountered";
    case cudaErrorLaunchOutOfResources:
        return "too many resources requested for launch";
    case cudaErrorAssert:
        return "device-side assert triggered";
    case cudaErrorLaunchFailure:
        return "unspecified launch failure";
    case cudaErrorNotSupported:
        return "operation not supported (memplace emu: not emulated)";
    case cudaErrorNotPermitted:
        return "operation not permitted";
    case cudaErrorUnknown:
        return "unknown error";
    default: {
        const char* n = errorName(error);
        return n != nullptr ? n : "unrecognized error code";
    }
    }
}

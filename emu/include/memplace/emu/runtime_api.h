// The CUDA runtime API on the CPU: device and properties (answered from the chosen memplace
// spec), errors, memory, streams, events, symbols, function attributes, textures.
//
// Launches run when they are made (streams are in order trivially); events hold host times.
#pragma once

#include "memplace/emu/runtime_types.h"

#include <cstddef>
#include <type_traits>

// ---- device --------------------------------------------------------------------------------

cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags);
cudaError_t cudaSetDeviceFlags(unsigned int flags);
cudaError_t cudaGetDeviceFlags(unsigned int* flags);
cudaError_t cudaChooseDevice(int* device, const struct cudaDeviceProp* prop);
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int device);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value);
cudaError_t cudaDeviceGetLimit(size_t* value, enum cudaLimit limit);
cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache config);
cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache* config);
cudaError_t cudaCtxResetPersistingL2Cache(void);
cudaError_t cudaDriverGetVersion(int* version);
cudaError_t cudaRuntimeGetVersion(int* version);
cudaError_t cudaMemGetInfo(size_t* free, size_t* total);
cudaError_t cudaDeviceGetTexture1DLinearMaxWidth(size_t* maxWidthInElements,
                                                 const struct cudaChannelFormatDesc* fmtDesc,
                                                 int device);
/// The emulator's driver functions by name (cuMemGetAddressRange, cuInit, cuGetErrorName, ...).
cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult* driverStatus = nullptr);
cudaError_t
cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr, unsigned int cudaVersion,
                                 unsigned long long flags,
                                 enum cudaDriverEntryPointQueryResult* driverStatus = nullptr);

// ---- errors --------------------------------------------------------------------------------

cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);

// ---- memory --------------------------------------------------------------------------------

cudaError_t cudaMalloc(void** devPtr, size_t size);
cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned int flags = cudaMemAttachGlobal);
cudaError_t cudaMallocHost(void** ptr, size_t size);
cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned int flags);
cudaError_t cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height);
cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t stream);
cudaError_t cudaFree(void* devPtr);
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t stream);
cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags);
cudaError_t cudaHostUnregister(void* ptr);
cudaError_t cudaHostGetDevicePointer(void** devPtr, void* host, unsigned int flags);
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes* attributes, const void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream = 0);
cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                         size_t height, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                              size_t width, size_t height, enum cudaMemcpyKind kind,
                              cudaStream_t stream = 0);
cudaError_t cudaMemset(void* devPtr, int value, size_t count);
cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream = 0);
cudaError_t cudaMemset2D(void* devPtr, size_t pitch, int value, size_t width, size_t height);
cudaError_t cudaMemset2DAsync(void* devPtr, size_t pitch, int value, size_t width, size_t height,
                              cudaStream_t stream = 0);
cudaError_t cudaMemPrefetchAsync(const void* devPtr, size_t count, int dstDevice,
                                 cudaStream_t stream = 0);

// ---- streams and events --------------------------------------------------------------------

cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int priority);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags = 0);
cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                  void* userData, unsigned int flags);
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData);
cudaError_t cudaStreamSetAttribute(cudaStream_t stream, cudaStreamAttrID attr,
                                   const cudaStreamAttrValue* value);
cudaError_t cudaStreamGetAttribute(cudaStream_t stream, cudaStreamAttrID attr,
                                   cudaStreamAttrValue* value);
cudaError_t cudaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority);
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0);
cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream = 0,
                                     unsigned int flags = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);

// ---- textures ------------------------------------------------------------------------------

cudaError_t cudaCreateTextureObject(cudaTextureObject_t* texObject,
                                    const struct cudaResourceDesc* resDesc,
                                    const struct cudaTextureDesc* texDesc,
                                    const struct cudaResourceViewDesc* resViewDesc);
cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texObject);
cudaError_t cudaGetTextureObjectResourceDesc(struct cudaResourceDesc* resDesc,
                                             cudaTextureObject_t texObject);
cudaError_t cudaGetTextureObjectTextureDesc(struct cudaTextureDesc* texDesc,
                                            cudaTextureObject_t texObject);
cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w,
                                            enum cudaChannelFormatKind f);

namespace memplace::emu::detail {
template <class T>
struct ChannelDescOf {
    static constexpr cudaChannelFormatDesc value{0, 0, 0, 0, cudaChannelFormatKindNone};
};
#define MEMPLACE_EMU_CHANNEL(T, kind, n)                                                           \
    template <>                                                                                    \
    struct ChannelDescOf<T> {                                                                      \
        static constexpr int b = static_cast<int>(sizeof(T) / (n) * 8);                            \
        static constexpr cudaChannelFormatDesc value{b, (n) > 1 ? b : 0, (n) > 2 ? b : 0,          \
                                                     (n) > 3 ? b : 0, kind};                       \
    };
#define MEMPLACE_EMU_CHANNEL4(base, T, kind)                                                       \
    MEMPLACE_EMU_CHANNEL(T, kind, 1)                                                               \
    MEMPLACE_EMU_CHANNEL(base##1, kind, 1)                                                         \
    MEMPLACE_EMU_CHANNEL(base##2, kind, 2)                                                         \
    MEMPLACE_EMU_CHANNEL(base##4, kind, 4)
MEMPLACE_EMU_CHANNEL(char, cudaChannelFormatKindSigned, 1)
MEMPLACE_EMU_CHANNEL4(char, signed char, cudaChannelFormatKindSigned)
MEMPLACE_EMU_CHANNEL4(uchar, unsigned char, cudaChannelFormatKindUnsigned)
MEMPLACE_EMU_CHANNEL4(short, short, cudaChannelFormatKindSigned)
MEMPLACE_EMU_CHANNEL4(ushort, unsigned short, cudaChannelFormatKindUnsigned)
MEMPLACE_EMU_CHANNEL4(int, int, cudaChannelFormatKindSigned)
MEMPLACE_EMU_CHANNEL4(uint, unsigned int, cudaChannelFormatKindUnsigned)
MEMPLACE_EMU_CHANNEL4(float, float, cudaChannelFormatKindFloat)
#undef MEMPLACE_EMU_CHANNEL4
#undef MEMPLACE_EMU_CHANNEL
} // namespace memplace::emu::detail

template <class T>
inline cudaChannelFormatDesc cudaCreateChannelDesc() {
    return ::memplace::emu::detail::ChannelDescOf<T>::value;
}

// ---- symbols (__device__ and __constant__ variables are ordinary globals here) -------------

namespace memplace::emu::detail {
/// Records [address, address + size) as a device symbol (for cuMemGetAddressRange and copies).
void registerSymbol(const void* address, size_t size);
cudaError_t symbolCopy(void* dst, const void* src, size_t count, const void* symbol,
                       size_t symbolSize, size_t offset, bool toSymbol, cudaMemcpyKind kind);
template <class T>
inline constexpr bool kNotAddressOf = !std::is_pointer_v<T>;
/// The C API's form: `symbol` is the symbol's address, which must be a registered symbol (one
/// that was named by reference in a cudaMemcpyToSymbol or cudaGetSymbolAddress before).
cudaError_t symbolCopyByAddress(void* dst, const void* src, size_t count, const void* symbol,
                                size_t offset, bool toSymbol, cudaMemcpyKind kind);
} // namespace memplace::emu::detail

// The C API's overloads, taking the symbol's address (`const void* symbol`), as CUDA's
// cuda_runtime_api.h declares them; the templates below take the symbol itself.
inline cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count,
                                      size_t offset = 0,
                                      enum cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
    return ::memplace::emu::detail::symbolCopyByAddress(nullptr, src, count, symbol, offset, true,
                                                        kind);
}
inline cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count,
                                           size_t offset = 0,
                                           enum cudaMemcpyKind kind = cudaMemcpyHostToDevice,
                                           cudaStream_t = 0) {
    return cudaMemcpyToSymbol(symbol, src, count, offset, kind);
}
inline cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count,
                                        size_t offset = 0,
                                        enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
    return ::memplace::emu::detail::symbolCopyByAddress(dst, nullptr, count, symbol, offset, false,
                                                        kind);
}
inline cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t count,
                                             size_t offset = 0,
                                             enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost,
                                             cudaStream_t = 0) {
    return cudaMemcpyFromSymbol(dst, symbol, count, offset, kind);
}

template <class T>
    requires(!std::is_pointer_v<T>)
inline cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, size_t count,
                                      size_t offset = 0,
                                      enum cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
    return ::memplace::emu::detail::symbolCopy(const_cast<T*>(&symbol), src, count, &symbol,
                                               sizeof(T), offset, true, kind);
}
template <class T>
    requires(!std::is_pointer_v<T>)
inline cudaError_t
cudaMemcpyToSymbolAsync(const T& symbol, const void* src, size_t count, size_t offset = 0,
                        enum cudaMemcpyKind kind = cudaMemcpyHostToDevice, cudaStream_t = 0) {
    return cudaMemcpyToSymbol(symbol, src, count, offset, kind);
}
template <class T>
    requires(!std::is_pointer_v<T>)
inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t count, size_t offset = 0,
                                        enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
    return ::memplace::emu::detail::symbolCopy(dst, &symbol, count, &symbol, sizeof(T), offset,
                                               false, kind);
}
template <class T>
    requires(!std::is_pointer_v<T>)
inline cudaError_t
cudaMemcpyFromSymbolAsync(void* dst, const T& symbol, size_t count, size_t offset = 0,
                          enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost, cudaStream_t = 0) {
    return cudaMemcpyFromSymbol(dst, symbol, count, offset, kind);
}
template <class T>
inline cudaError_t cudaGetSymbolAddress(void** devPtr, const T& symbol) {
    ::memplace::emu::detail::registerSymbol(&symbol, sizeof(T));
    *devPtr = const_cast<void*>(static_cast<const void*>(&symbol));
    return cudaSuccess;
}
template <class T>
inline cudaError_t cudaGetSymbolSize(size_t* size, const T& symbol) {
    (void)symbol;
    *size = sizeof(T);
    return cudaSuccess;
}
// A temporary (e.g. `&symbol`) is not a symbol: CUDA answers cudaErrorInvalidSymbol; here it
// does not compile.
template <class T>
cudaError_t cudaMemcpyToSymbol(const T&& notASymbol, const void*, size_t, size_t = 0,
                               enum cudaMemcpyKind = cudaMemcpyHostToDevice) = delete;
template <class T>
cudaError_t cudaMemcpyToSymbolAsync(const T&& notASymbol, const void*, size_t, size_t = 0,
                                    enum cudaMemcpyKind = cudaMemcpyHostToDevice,
                                    cudaStream_t = 0) = delete;
template <class T>
cudaError_t cudaMemcpyFromSymbol(void*, const T&& notASymbol, size_t, size_t = 0,
                                 enum cudaMemcpyKind = cudaMemcpyDeviceToHost) = delete;
template <class T>
cudaError_t cudaGetSymbolAddress(void**, const T&& notASymbol) = delete;

// ---- function attributes (keyed by the kernel's address) -----------------------------------

namespace memplace::emu::detail {
cudaError_t funcSetAttribute(const void* func, cudaFuncAttribute attr, int value);
cudaError_t funcGetAttributes(cudaFuncAttributes* attr, const void* func);
cudaError_t occupancyMaxActiveBlocks(int* numBlocks, const void* func, int blockSize,
                                     size_t dynamicSmem);
template <class F>
inline const void* funcKey(F* f) {
    static_assert(std::is_function_v<F>, "memplace emu: pass the kernel function itself");
    return reinterpret_cast<const void*>(f);
}
} // namespace memplace::emu::detail

// The C API's forms take the kernel's address as const void*.
inline cudaError_t cudaFuncSetAttribute(const void* func, enum cudaFuncAttribute attr, int value) {
    return ::memplace::emu::detail::funcSetAttribute(func, attr, value);
}
inline cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes* attr, const void* func) {
    return ::memplace::emu::detail::funcGetAttributes(attr, func);
}
inline cudaError_t cudaFuncSetCacheConfig(const void*, enum cudaFuncCache) {
    return cudaSuccess;
}
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func,
                                                                 int blockSize,
                                                                 size_t dynamicSMemSize) {
    return ::memplace::emu::detail::occupancyMaxActiveBlocks(numBlocks, func, blockSize,
                                                             dynamicSMemSize);
}
template <class F>
inline cudaError_t cudaFuncSetAttribute(F* func, enum cudaFuncAttribute attr, int value) {
    return ::memplace::emu::detail::funcSetAttribute(::memplace::emu::detail::funcKey(func), attr,
                                                     value);
}
template <class F>
inline cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes* attr, F* func) {
    return ::memplace::emu::detail::funcGetAttributes(attr, ::memplace::emu::detail::funcKey(func));
}
template <class F>
inline cudaError_t cudaFuncSetCacheConfig(F* func, enum cudaFuncCache) {
    (void)::memplace::emu::detail::funcKey(func);
    return cudaSuccess;
}
template <class F>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, F* func,
                                                                 int blockSize,
                                                                 size_t dynamicSMemSize) {
    return ::memplace::emu::detail::occupancyMaxActiveBlocks(
        numBlocks, ::memplace::emu::detail::funcKey(func), blockSize, dynamicSMemSize);
}

// ---- profiler ------------------------------------------------------------------------------

cudaError_t cudaProfilerStart(void);
cudaError_t cudaProfilerStop(void);

// ---- the typed overloads cuda_runtime.h adds ----------------------------------------------

template <class T>
inline cudaError_t cudaMalloc(T** devPtr, size_t size) {
    return cudaMalloc(reinterpret_cast<void**>(devPtr), size);
}
template <class T>
inline cudaError_t cudaMallocManaged(T** devPtr, size_t size,
                                     unsigned int flags = cudaMemAttachGlobal) {
    return cudaMallocManaged(reinterpret_cast<void**>(devPtr), size, flags);
}
template <class T>
inline cudaError_t cudaMallocHost(T** ptr, size_t size, unsigned int flags = 0) {
    (void)flags;
    return cudaMallocHost(reinterpret_cast<void**>(ptr), size);
}
template <class T>
inline cudaError_t cudaHostAlloc(T** ptr, size_t size, unsigned int flags) {
    return cudaHostAlloc(reinterpret_cast<void**>(ptr), size, flags);
}
template <class T>
inline cudaError_t cudaMallocPitch(T** devPtr, size_t* pitch, size_t width, size_t height) {
    return cudaMallocPitch(reinterpret_cast<void**>(devPtr), pitch, width, height);
}
template <class T>
inline cudaError_t cudaMallocAsync(T** devPtr, size_t size, cudaStream_t stream) {
    return cudaMallocAsync(reinterpret_cast<void**>(devPtr), size, stream);
}
template <class T>
inline cudaError_t cudaHostGetDevicePointer(T** devPtr, void* host, unsigned int flags) {
    return cudaHostGetDevicePointer(reinterpret_cast<void**>(devPtr), host, flags);
}

// Attributes: the device's (cudaDeviceGetAttribute, one table row per supported attribute) and
// the kernels' (cudaFuncSetAttribute, cudaFuncGetAttributes, occupancy).
#include "state.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace memplace::emu::detail {

cudaError_t funcSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    Device& d = device();
    std::lock_guard lock(d.mutex);
    FuncAttributes& f = d.funcs[func];
    switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize:
        if (value < 0 || static_cast<std::size_t>(value) > d.prop.sharedMemPerBlockOptin) {
            return fail(cudaErrorInvalidValue);
        }
        f.maxDynamicSharedBytes = value;
        return cudaSuccess;
    case cudaFuncAttributePreferredSharedMemoryCarveout:
        if (value < -1 || value > 100)
            return fail(cudaErrorInvalidValue);
        f.carveout = value;
        return cudaSuccess;
    default:
        report("cudaFuncSetAttribute: attribute " + std::to_string(static_cast<int>(attr)) +
               " (thread block clusters) is not supported");
        return fail(cudaErrorNotSupported);
    }
}

namespace {
void warnUnknownFuncResources(const char* api) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true)) {
        report(std::string(api) +
               ": static shared memory, registers and local memory of a kernel are not known "
               "under emulation; they count as 0");
    }
}
} // namespace

cudaError_t funcGetAttributes(cudaFuncAttributes* attr, const void* func) {
    if (attr == nullptr)
        return fail(cudaErrorInvalidValue);
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    warnUnknownFuncResources("cudaFuncGetAttributes");
    Device& d = device();
    std::lock_guard lock(d.mutex);
    FuncAttributes f = d.funcs[func];
    std::memset(attr, 0, sizeof(*attr));
    attr->maxThreadsPerBlock = d.prop.maxThreadsPerBlock;
    attr->ptxVersion = d.prop.major * 10 + d.prop.minor;
    attr->binaryVersion = attr->ptxVersion;
    attr->maxDynamicSharedSizeBytes = f.maxDynamicSharedBytes;
    attr->preferredShmemCarveout = f.carveout;
    return cudaSuccess;
}

cudaError_t occupancyMaxActiveBlocks(int* numBlocks, const void*, int blockSize,
                                     std::size_t dynamicSmem) {
    if (numBlocks == nullptr || blockSize <= 0)
        return fail(cudaErrorInvalidValue);
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    warnUnknownFuncResources("cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    Device& d = device();
    std::lock_guard lock(d.mutex);
    const cudaDeviceProp& p = d.prop;
    if (blockSize > p.maxThreadsPerBlock) {
        *numBlocks = 0;
        return cudaSuccess;
    }
    int warps = (blockSize + 31) / 32;
    int byThreads = p.maxThreadsPerMultiProcessor / (warps * 32);
    int bySlots = p.maxBlocksPerMultiProcessor;
    std::size_t perBlock = dynamicSmem + p.reservedSharedMemPerBlock;
    int byShared =
        perBlock == 0 ? bySlots : static_cast<int>(p.sharedMemPerMultiprocessor / perBlock);
    *numBlocks = std::max(0, std::min({byThreads, bySlots, byShared}));
    return cudaSuccess;
}

namespace {

/// A size in bytes as CUDA answers it: an int, clamped to INT32_MAX.
int bytes(std::size_t v) {
    return v > static_cast<std::size_t>(INT32_MAX) ? INT32_MAX : static_cast<int>(v);
}

struct DeviceAttribute {
    cudaDeviceAttr attr;
    int (*value)(const Device& d); ///< called with d.mutex held
};

/// The attributes the emulator answers; any other is reported as not supported.
const DeviceAttribute kDeviceAttributes[] = {
    {cudaDevAttrMaxThreadsPerBlock, [](const Device& d) { return d.prop.maxThreadsPerBlock; }},
    {cudaDevAttrMaxBlockDimX, [](const Device& d) { return d.prop.maxThreadsDim[0]; }},
    {cudaDevAttrMaxBlockDimY, [](const Device& d) { return d.prop.maxThreadsDim[1]; }},
    {cudaDevAttrMaxBlockDimZ, [](const Device& d) { return d.prop.maxThreadsDim[2]; }},
    {cudaDevAttrMaxGridDimX, [](const Device& d) { return d.prop.maxGridSize[0]; }},
    {cudaDevAttrMaxGridDimY, [](const Device& d) { return d.prop.maxGridSize[1]; }},
    {cudaDevAttrMaxGridDimZ, [](const Device& d) { return d.prop.maxGridSize[2]; }},
    {cudaDevAttrMaxSharedMemoryPerBlock,
     [](const Device& d) { return bytes(d.prop.sharedMemPerBlock); }},
    {cudaDevAttrTotalConstantMemory, [](const Device& d) { return bytes(d.prop.totalConstMem); }},
    {cudaDevAttrWarpSize, [](const Device& d) { return d.prop.warpSize; }},
    {cudaDevAttrMaxPitch, [](const Device& d) { return bytes(d.prop.memPitch); }},
    {cudaDevAttrMaxRegistersPerBlock, [](const Device& d) { return d.prop.regsPerBlock; }},
    {cudaDevAttrClockRate,
     [](const Device& d) { return static_cast<int>(d.spec.processor.clockMHz * 1000.0); }},
    {cudaDevAttrTextureAlignment, [](const Device& d) { return bytes(d.prop.textureAlignment); }},
    {cudaDevAttrGpuOverlap, [](const Device&) { return 1; }},
    {cudaDevAttrMultiProcessorCount, [](const Device& d) { return d.prop.multiProcessorCount; }},
    {cudaDevAttrKernelExecTimeout, [](const Device&) { return 0; }},
    {cudaDevAttrIntegrated, [](const Device&) { return 0; }},
    {cudaDevAttrCanMapHostMemory, [](const Device&) { return 1; }},
    {cudaDevAttrComputeMode, [](const Device&) { return 0; }},
    {cudaDevAttrMaxTexture1DWidth, [](const Device& d) { return d.prop.maxTexture1D; }},
    {cudaDevAttrMaxTexture2DWidth, [](const Device& d) { return d.prop.maxTexture2D[0]; }},
    {cudaDevAttrMaxTexture2DHeight, [](const Device& d) { return d.prop.maxTexture2D[1]; }},
    {cudaDevAttrSurfaceAlignment, [](const Device& d) { return bytes(d.prop.surfaceAlignment); }},
    {cudaDevAttrConcurrentKernels, [](const Device&) { return 1; }},
    {cudaDevAttrEccEnabled, [](const Device&) { return 0; }},
    {cudaDevAttrPciBusId, [](const Device&) { return 0; }},
    {cudaDevAttrPciDeviceId, [](const Device&) { return 0; }},
    {cudaDevAttrTccDriver, [](const Device&) { return 0; }},
    {cudaDevAttrL2CacheSize, [](const Device& d) { return d.prop.l2CacheSize; }},
    {cudaDevAttrMaxThreadsPerMultiProcessor,
     [](const Device& d) { return d.prop.maxThreadsPerMultiProcessor; }},
    {cudaDevAttrAsyncEngineCount, [](const Device& d) { return d.prop.asyncEngineCount; }},
    {cudaDevAttrUnifiedAddressing, [](const Device&) { return 1; }},
    {cudaDevAttrPciDomainId, [](const Device&) { return 0; }},
    {cudaDevAttrTexturePitchAlignment,
     [](const Device& d) { return bytes(d.prop.texturePitchAlignment); }},
    {cudaDevAttrMaxTexture1DLinearWidth, [](const Device&) { return 1 << 27; }},
    {cudaDevAttrMaxTexture2DLinearWidth,
     [](const Device& d) { return d.prop.maxTexture2DLinear[0]; }},
    {cudaDevAttrMaxTexture2DLinearHeight,
     [](const Device& d) { return d.prop.maxTexture2DLinear[1]; }},
    {cudaDevAttrMaxTexture2DLinearPitch,
     [](const Device& d) { return d.prop.maxTexture2DLinear[2]; }},
    {cudaDevAttrComputeCapabilityMajor, [](const Device& d) { return d.prop.major; }},
    {cudaDevAttrComputeCapabilityMinor, [](const Device& d) { return d.prop.minor; }},
    {cudaDevAttrStreamPrioritiesSupported, [](const Device&) { return 1; }},
    {cudaDevAttrGlobalL1CacheSupported, [](const Device&) { return 1; }},
    {cudaDevAttrLocalL1CacheSupported, [](const Device&) { return 1; }},
    {cudaDevAttrMaxSharedMemoryPerMultiprocessor,
     [](const Device& d) { return bytes(d.prop.sharedMemPerMultiprocessor); }},
    {cudaDevAttrMaxRegistersPerMultiprocessor,
     [](const Device& d) { return d.prop.regsPerMultiprocessor; }},
    {cudaDevAttrManagedMemory, [](const Device&) { return 1; }},
    {cudaDevAttrIsMultiGpuBoard, [](const Device&) { return 0; }},
    {cudaDevAttrHostNativeAtomicSupported, [](const Device&) { return 1; }},
    {cudaDevAttrPageableMemoryAccess, [](const Device&) { return 0; }},
    {cudaDevAttrConcurrentManagedAccess, [](const Device&) { return 1; }},
    {cudaDevAttrComputePreemptionSupported, [](const Device&) { return 1; }},
    {cudaDevAttrCanUseHostPointerForRegisteredMem, [](const Device&) { return 1; }},
    {cudaDevAttrCooperativeLaunch, [](const Device&) { return 0; }},
    {cudaDevAttrMaxSharedMemoryPerBlockOptin,
     [](const Device& d) { return bytes(d.prop.sharedMemPerBlockOptin); }},
    {cudaDevAttrHostRegisterSupported, [](const Device&) { return 1; }},
    {cudaDevAttrMaxBlocksPerMultiprocessor,
     [](const Device& d) { return d.prop.maxBlocksPerMultiProcessor; }},
    {cudaDevAttrMaxPersistingL2CacheSize,
     [](const Device& d) { return d.prop.persistingL2CacheMaxSize; }},
    {cudaDevAttrMaxAccessPolicyWindowSize,
     [](const Device& d) { return d.prop.accessPolicyMaxWindowSize; }},
    {cudaDevAttrReservedSharedMemoryPerBlock,
     [](const Device& d) { return bytes(d.prop.reservedSharedMemPerBlock); }},
    {cudaDevAttrMemoryPoolsSupported, [](const Device&) { return 0; }},
    {cudaDevAttrClusterLaunch, [](const Device&) { return 0; }},
};

} // namespace

} // namespace memplace::emu::detail

using namespace memplace::emu::detail;

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int dev) {
    if (cudaError_t e = checkDeviceQuery(value, dev); e != cudaSuccess)
        return e;
    Device& d = device();
    std::lock_guard lock(d.mutex);
    for (const DeviceAttribute& a : kDeviceAttributes) {
        if (a.attr == attr) {
            *value = a.value(d);
            return cudaSuccess;
        }
    }
    const char* name = deviceAttrName(attr);
    report(std::string("cudaDeviceGetAttribute: ") + (name ? name : "attribute ") +
           (name ? "" : std::to_string(static_cast<int>(attr))) + " is not supported");
    return fail(cudaErrorNotSupported);
}

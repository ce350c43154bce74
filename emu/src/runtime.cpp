// The CUDA runtime API on the CPU: device, properties from the spec, errors, memory, streams,
// events, symbols, function attributes, limits, and the driver's cuMemGetAddressRange.
#include "state.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

namespace memplace::emu::detail {

namespace {

thread_local cudaError_t t_lastError = cudaSuccess;
std::atomic<int> g_sticky{cudaSuccess};

constexpr std::size_t kAllocAlign =
    512; // cudaMalloc guarantees 256; textures need textureAlignment (512)
constexpr std::size_t kPitchAlign = 512;          // cudaMallocPitch's row alignment
constexpr int kAccessPolicyMaxWindow = 134213632; // sm_80+ (cudaDevAttrMaxAccessPolicyWindowSize)

std::size_t memorySize(const spec::Spec& s, const char* name) {
    const spec::Memory* m = s.findMemory(name);
    return m != nullptr ? static_cast<std::size_t>(m->size) : 0;
}

int clampInt(std::uint64_t v) {
    return v > static_cast<std::uint64_t>(INT32_MAX) ? INT32_MAX : static_cast<int>(v);
}

void fillProperties(Device& d) {
    const spec::Spec& s = d.spec;
    const spec::Processor& p = s.processor;
    cudaDeviceProp& prop = d.prop;
    std::memset(&prop, 0, sizeof(prop));
    std::snprintf(prop.name, sizeof(prop.name), "%s (memplace emulation)", p.name.c_str());
    int major = 0, minor = 0;
    if (p.arch.size() >= 5 && p.arch.compare(0, 3, "sm_") == 0) {
        int v = std::atoi(p.arch.c_str() + 3);
        major = v / 10;
        minor = v % 10;
    }
    prop.major = major;
    prop.minor = minor;
    prop.totalGlobalMem = memorySize(s, "global");
    prop.sharedMemPerBlockOptin = p.maxSharedPerBlock;
    prop.sharedMemPerBlock = std::min<std::size_t>(48 * 1024, p.maxSharedPerBlock);
    prop.sharedMemPerMultiprocessor = p.maxSharedPerSm;
    prop.reservedSharedMemPerBlock = p.reservedSharedPerBlock;
    prop.regsPerBlock = static_cast<int>(p.maxRegistersPerBlock);
    prop.regsPerMultiprocessor = static_cast<int>(p.maxRegistersPerSm);
    prop.warpSize = static_cast<int>(p.warpSize);
    prop.memPitch = INT32_MAX;
    prop.maxThreadsPerBlock = static_cast<int>(p.maxThreadsPerBlock);
    prop.maxThreadsDim[0] = static_cast<int>(p.maxThreadsPerBlock);
    prop.maxThreadsDim[1] = static_cast<int>(p.maxThreadsPerBlock);
    prop.maxThreadsDim[2] = 64;
    prop.maxGridSize[0] = major >= 3 ? INT32_MAX : 65535;
    prop.maxGridSize[1] = 65535;
    prop.maxGridSize[2] = 65535;
    prop.totalConstMem = memorySize(s, "constant");
    prop.textureAlignment = 512;
    prop.texturePitchAlignment = 32;
    prop.multiProcessorCount = static_cast<int>(p.sms);
    prop.canMapHostMemory = 1;
    prop.maxTexture1D = 131072;
    prop.maxTexture2D[0] = 131072;
    prop.maxTexture2D[1] = 65536;
    prop.maxTexture2DLinear[0] = 131072;
    prop.maxTexture2DLinear[1] = 65000;
    prop.maxTexture2DLinear[2] = 2097120;
    prop.surfaceAlignment = 512;
    prop.concurrentKernels = 1;
    prop.asyncEngineCount = 2;
    prop.unifiedAddressing = 1;
    prop.l2CacheSize = clampInt(memorySize(s, "L2"));
    prop.persistingL2CacheMaxSize = clampInt(memorySize(s, "L2persist"));
    prop.accessPolicyMaxWindowSize = prop.persistingL2CacheMaxSize > 0 ? kAccessPolicyMaxWindow : 0;
    prop.maxThreadsPerMultiProcessor = static_cast<int>(p.maxThreadsPerSm);
    prop.maxBlocksPerMultiProcessor = static_cast<int>(p.maxBlocksPerSm);
    prop.streamPrioritiesSupported = 1;
    prop.globalL1CacheSupported = 1;
    prop.localL1CacheSupported = 1;
    prop.managedMemory = 1;
    prop.concurrentManagedAccess = 1;
    prop.hostNativeAtomicSupported = 1;
    prop.computePreemptionSupported = 1;
    prop.cooperativeLaunch = 0; // not emulated
    prop.clusterLaunch = 0;     // not emulated
    prop.hostRegisterSupported = 1;
    prop.deviceNumaId = -1;
    prop.hostNumaId = -1;
}

Device& deviceStorage() {
    static Device* d = new Device; // never destroyed: kernels may run during static destruction
    return *d;
}

void initLocked(Device& d) {
    if (d.initialized)
        return;
    d.initialized = true;
    const char* env = std::getenv("MEMPLACE_SPEC");
    std::string name = env != nullptr && *env != '\0' ? env : "h100";
    auto loaded = spec::loadSpec(name);
    if (!loaded) {
        d.initError = "MEMPLACE_SPEC=" + name + ": " + loaded.message();
        report("cannot load the device spec: " + d.initError);
        return;
    }
    d.spec = std::move(*loaded);
    d.usable = true;
    fillProperties(d);
}

} // namespace

Device& device() {
    Device& d = deviceStorage();
    std::lock_guard lock(d.mutex);
    initLocked(d);
    return d;
}

cudaError_t ensureDevice() {
    Device& d = device();
    return d.usable ? cudaSuccess : cudaErrorInitializationError;
}

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

const Allocation* findAllocationLocked(const void* p, std::size_t size) {
    auto& allocs = deviceStorage().allocations;
    auto a = reinterpret_cast<std::uintptr_t>(p);
    auto it = allocs.upper_bound(a);
    if (it == allocs.begin())
        return nullptr;
    --it;
    const Allocation& al = it->second;
    if (a < al.base || a - al.base > al.size || size > al.size - (a - al.base))
        return nullptr;
    if (size == 0 && a == al.base + al.size && al.size != 0)
        return nullptr;
    return &al;
}

std::size_t maxDynamicSharedCapacity() {
    Device& d = device();
    std::size_t optin = d.usable ? d.prop.sharedMemPerBlockOptin : 0;
    return std::max<std::size_t>(optin, 48 * 1024);
}

void registerSymbol(const void* address, std::size_t size) {
    Device& d = device();
    std::lock_guard lock(d.mutex);
    auto base = reinterpret_cast<std::uintptr_t>(address);
    auto it = d.allocations.find(base);
    if (it != d.allocations.end())
        return;
    d.allocations[base] = Allocation{base, size, AllocKind::Symbol, false};
}

namespace {

/// Checks that the device side of a copy lies in one device-accessible allocation.
cudaError_t checkCopy(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind) {
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    if (count == 0)
        return cudaSuccess;
    if (dst == nullptr || src == nullptr)
        return cudaErrorInvalidValue;
    Device& d = deviceStorage();
    std::lock_guard lock(d.mutex);
    bool checkDst = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    bool checkSrc = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (checkDst && findAllocationLocked(dst, count) == nullptr)
        return cudaErrorInvalidValue;
    if (checkSrc && findAllocationLocked(src, count) == nullptr)
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

cudaError_t allocate(void** ptr, std::size_t size, AllocKind kind) {
    if (ptr == nullptr)
        return fail(cudaErrorInvalidValue);
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    if (cudaError_t e = stickyError(); e != cudaSuccess)
        return fail(e);
    if (size == 0) {
        *ptr = nullptr;
        return cudaSuccess;
    }
    Device& d = deviceStorage();
    std::size_t rounded = (size + kAllocAlign - 1) / kAllocAlign * kAllocAlign;
    {
        std::lock_guard lock(d.mutex);
        if (kind == AllocKind::Device || kind == AllocKind::Managed) {
            if (d.deviceBytes + rounded > d.prop.totalGlobalMem) {
                *ptr = nullptr;
                return fail(cudaErrorMemoryAllocation);
            }
        }
    }
    void* p = std::aligned_alloc(kAllocAlign, rounded);
    if (p == nullptr) {
        *ptr = nullptr;
        return fail(cudaErrorMemoryAllocation);
    }
    std::memset(p, 0, rounded); // deterministic contents (a GPU's are unspecified)
    std::lock_guard lock(d.mutex);
    auto base = reinterpret_cast<std::uintptr_t>(p);
    d.allocations[base] = Allocation{base, size, kind, true};
    if (kind == AllocKind::Device || kind == AllocKind::Managed)
        d.deviceBytes += rounded;
    *ptr = p;
    return cudaSuccess;
}

cudaError_t release(void* ptr, bool host) {
    if (ptr == nullptr)
        return cudaSuccess;
    Device& d = deviceStorage();
    std::lock_guard lock(d.mutex);
    auto it = d.allocations.find(reinterpret_cast<std::uintptr_t>(ptr));
    if (it == d.allocations.end() || !it->second.owned ||
        (host != (it->second.kind == AllocKind::Host))) {
        return fail(host ? cudaErrorInvalidValue : cudaErrorInvalidDevicePointer);
    }
    if (it->second.kind != AllocKind::Host) {
        d.deviceBytes -= (it->second.size + kAllocAlign - 1) / kAllocAlign * kAllocAlign;
    }
    std::free(ptr);
    d.allocations.erase(it);
    return cudaSuccess;
}

} // namespace

cudaError_t symbolCopy(void* dst, const void* src, std::size_t count, const void* symbol,
                       std::size_t symbolSize, std::size_t offset, bool toSymbol,
                       cudaMemcpyKind kind) {
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    if (cudaError_t e = stickyError(); e != cudaSuccess)
        return fail(e);
    registerSymbol(symbol, symbolSize);
    if (offset > symbolSize || count > symbolSize - offset)
        return fail(cudaErrorInvalidValue);
    bool okKind = toSymbol ? (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice ||
                              kind == cudaMemcpyDefault)
                           : (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice ||
                              kind == cudaMemcpyDefault);
    if (!okKind)
        return fail(cudaErrorInvalidMemcpyDirection);
    if (count == 0)
        return cudaSuccess;
    char* sym = const_cast<char*>(static_cast<const char*>(symbol)) + offset;
    if (toSymbol) {
        if (kind == cudaMemcpyDeviceToDevice) {
            if (cudaError_t e = checkCopy(sym, src, count, kind); e != cudaSuccess)
                return fail(e);
        }
        std::memmove(sym, src, count);
    } else {
        if (kind == cudaMemcpyDeviceToDevice) {
            if (cudaError_t e = checkCopy(dst, sym, count, kind); e != cudaSuccess)
                return fail(e);
        }
        std::memmove(dst, sym, count);
    }
    return cudaSuccess;
}

cudaError_t symbolCopyByAddress(void* dst, const void* src, std::size_t count, const void* symbol,
                                std::size_t offset, bool toSymbol, cudaMemcpyKind kind) {
    const Allocation* a = nullptr;
    {
        Device& d = deviceStorage();
        std::lock_guard lock(d.mutex);
        a = findAllocationLocked(symbol, 1);
    }
    if (a == nullptr || a->kind != AllocKind::Symbol ||
        reinterpret_cast<std::uintptr_t>(symbol) != a->base) {
        return fail(cudaErrorInvalidSymbol);
    }
    return symbolCopy(dst, src, count, symbol, a->size, offset, toSymbol, kind);
}

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

} // namespace memplace::emu::detail

using namespace memplace::emu::detail;

// ---- device ---------------------------------------------------------------------------------

cudaError_t cudaGetDeviceCount(int* count) {
    if (count == nullptr)
        return fail(cudaErrorInvalidValue);
    if (ensureDevice() != cudaSuccess) {
        *count = 0;
        return fail(cudaErrorNoDevice);
    }
    *count = 1;
    return cudaSuccess;
}
cudaError_t cudaGetDevice(int* dev) {
    if (dev == nullptr)
        return fail(cudaErrorInvalidValue);
    *dev = 0;
    return fail(ensureDevice());
}
cudaError_t cudaSetDevice(int dev) {
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    return dev == 0 ? cudaSuccess : fail(cudaErrorInvalidDevice);
}
cudaError_t cudaInitDevice(int dev, unsigned int, unsigned int) {
    return cudaSetDevice(dev);
}
cudaError_t cudaSetDeviceFlags(unsigned int) {
    return fail(ensureDevice());
}
cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
    if (flags == nullptr)
        return fail(cudaErrorInvalidValue);
    *flags = cudaDeviceMapHost;
    return fail(ensureDevice());
}
cudaError_t cudaChooseDevice(int* dev, const cudaDeviceProp*) {
    if (dev == nullptr)
        return fail(cudaErrorInvalidValue);
    *dev = 0;
    return fail(ensureDevice());
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int dev) {
    if (prop == nullptr)
        return fail(cudaErrorInvalidValue);
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    if (dev != 0)
        return fail(cudaErrorInvalidDevice);
    Device& d = device();
    std::lock_guard lock(d.mutex);
    *prop = d.prop;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int dev) {
    if (value == nullptr)
        return fail(cudaErrorInvalidValue);
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    if (dev != 0)
        return fail(cudaErrorInvalidDevice);
    Device& d = device();
    std::lock_guard lock(d.mutex);
    const cudaDeviceProp& p = d.prop;
    auto sz = [](std::size_t v) {
        return v > static_cast<std::size_t>(INT32_MAX) ? INT32_MAX : static_cast<int>(v);
    };
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
        *value = p.maxThreadsPerBlock;
        break;
    case cudaDevAttrMaxBlockDimX:
        *value = p.maxThreadsDim[0];
        break;
    case cudaDevAttrMaxBlockDimY:
        *value = p.maxThreadsDim[1];
        break;
    case cudaDevAttrMaxBlockDimZ:
        *value = p.maxThreadsDim[2];
        break;
    case cudaDevAttrMaxGridDimX:
        *value = p.maxGridSize[0];
        break;
    case cudaDevAttrMaxGridDimY:
        *value = p.maxGridSize[1];
        break;
    case cudaDevAttrMaxGridDimZ:
        *value = p.maxGridSize[2];
        break;
    case cudaDevAttrMaxSharedMemoryPerBlock:
        *value = sz(p.sharedMemPerBlock);
        break;
    case cudaDevAttrTotalConstantMemory:
        *value = sz(p.totalConstMem);
        break;
    case cudaDevAttrWarpSize:
        *value = p.warpSize;
        break;
    case cudaDevAttrMaxPitch:
        *value = sz(p.memPitch);
        break;
    case cudaDevAttrMaxRegistersPerBlock:
        *value = p.regsPerBlock;
        break;
    case cudaDevAttrClockRate:
        *value = static_cast<int>(d.spec.processor.clockMHz * 1000.0);
        break;
    case cudaDevAttrTextureAlignment:
        *value = sz(p.textureAlignment);
        break;
    case cudaDevAttrGpuOverlap:
        *value = 1;
        break;
    case cudaDevAttrMultiProcessorCount:
        *value = p.multiProcessorCount;
        break;
    case cudaDevAttrKernelExecTimeout:
        *value = 0;
        break;
    case cudaDevAttrIntegrated:
        *value = 0;
        break;
    case cudaDevAttrCanMapHostMemory:
        *value = 1;
        break;
    case cudaDevAttrComputeMode:
        *value = 0;
        break;
    case cudaDevAttrMaxTexture1DWidth:
        *value = p.maxTexture1D;
        break;
    case cudaDevAttrMaxTexture2DWidth:
        *value = p.maxTexture2D[0];
        break;
    case cudaDevAttrMaxTexture2DHeight:
        *value = p.maxTexture2D[1];
        break;
    case cudaDevAttrSurfaceAlignment:
        *value = sz(p.surfaceAlignment);
        break;
    case cudaDevAttrConcurrentKernels:
        *value = 1;
        break;
    case cudaDevAttrEccEnabled:
        *value = 0;
        break;
    case cudaDevAttrPciBusId:
        *value = 0;
        break;
    case cudaDevAttrPciDeviceId:
        *value = 0;
        break;
    case cudaDevAttrTccDriver:
        *value = 0;
        break;
    case cudaDevAttrL2CacheSize:
        *value = p.l2CacheSize;
        break;
    case cudaDevAttrMaxThreadsPerMultiProcessor:
        *value = p.maxThreadsPerMultiProcessor;
        break;
    case cudaDevAttrAsyncEngineCount:
        *value = p.asyncEngineCount;
        break;
    case cudaDevAttrUnifiedAddressing:
        *value = 1;
        break;
    case cudaDevAttrPciDomainId:
        *value = 0;
        break;
    case cudaDevAttrTexturePitchAlignment:
        *value = sz(p.texturePitchAlignment);
        break;
    case cudaDevAttrMaxTexture1DLinearWidth:
        *value = 1 << 27;
        break;
    case cudaDevAttrMaxTexture2DLinearWidth:
        *value = p.maxTexture2DLinear[0];
        break;
    case cudaDevAttrMaxTexture2DLinearHeight:
        *value = p.maxTexture2DLinear[1];
        break;
    case cudaDevAttrMaxTexture2DLinearPitch:
        *value = p.maxTexture2DLinear[2];
        break;
    case cudaDevAttrComputeCapabilityMajor:
        *value = p.major;
        break;
    case cudaDevAttrComputeCapabilityMinor:
        *value = p.minor;
        break;
    case cudaDevAttrStreamPrioritiesSupported:
        *value = 1;
        break;
    case cudaDevAttrGlobalL1CacheSupported:
        *value = 1;
        break;
    case cudaDevAttrLocalL1CacheSupported:
        *value = 1;
        break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
        *value = sz(p.sharedMemPerMultiprocessor);
        break;
    case cudaDevAttrMaxRegistersPerMultiprocessor:
        *value = p.regsPerMultiprocessor;
        break;
    case cudaDevAttrManagedMemory:
        *value = 1;
        break;
    case cudaDevAttrIsMultiGpuBoard:
        *value = 0;
        break;
    case cudaDevAttrHostNativeAtomicSupported:
        *value = 1;
        break;
    case cudaDevAttrPageableMemoryAccess:
        *value = 0;
        break;
    case cudaDevAttrConcurrentManagedAccess:
        *value = 1;
        break;
    case cudaDevAttrComputePreemptionSupported:
        *value = 1;
        break;
    case cudaDevAttrCanUseHostPointerForRegisteredMem:
        *value = 1;
        break;
    case cudaDevAttrCooperativeLaunch:
        *value = 0;
        break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
        *value = sz(p.sharedMemPerBlockOptin);
        break;
    case cudaDevAttrHostRegisterSupported:
        *value = 1;
        break;
    case cudaDevAttrMaxBlocksPerMultiprocessor:
        *value = p.maxBlocksPerMultiProcessor;
        break;
    case cudaDevAttrMaxPersistingL2CacheSize:
        *value = p.persistingL2CacheMaxSize;
        break;
    case cudaDevAttrMaxAccessPolicyWindowSize:
        *value = p.accessPolicyMaxWindowSize;
        break;
    case cudaDevAttrReservedSharedMemoryPerBlock:
        *value = sz(p.reservedSharedMemPerBlock);
        break;
    case cudaDevAttrMemoryPoolsSupported:
        *value = 0;
        break;
    case cudaDevAttrClusterLaunch:
        *value = 0;
        break;
    default: {
        const char* name = deviceAttrName(attr);
        report(std::string("cudaDeviceGetAttribute: ") + (name ? name : "attribute ") +
               (name ? "" : std::to_string(static_cast<int>(attr))) + " is not supported");
        return fail(cudaErrorNotSupported);
    }
    }
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) {
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    return fail(stickyError());
}

cudaError_t cudaDeviceReset(void) {
    Device& d = device();
    std::lock_guard lock(d.mutex);
    for (auto& [base, a] : d.allocations) {
        if (a.owned)
            std::free(reinterpret_cast<void*>(base));
    }
    std::erase_if(d.allocations,
                  [](const auto& kv) { return kv.second.kind != AllocKind::Symbol; });
    d.deviceBytes = 0;
    d.funcs.clear();
    return cudaSuccess;
}

cudaError_t cudaDeviceSetLimit(cudaLimit limit, std::size_t value) {
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    Device& d = device();
    std::lock_guard lock(d.mutex);
    if (limit < cudaLimitStackSize || limit > cudaLimitPersistingL2CacheSize)
        return fail(cudaErrorUnsupportedLimit);
    if (limit == cudaLimitPersistingL2CacheSize) {
        if (d.prop.persistingL2CacheMaxSize == 0)
            return fail(cudaErrorUnsupportedLimit);
        value =
            std::min<std::size_t>(value, static_cast<std::size_t>(d.prop.persistingL2CacheMaxSize));
    }
    d.limits[limit] = value;
    return cudaSuccess;
}
cudaError_t cudaDeviceGetLimit(std::size_t* value, cudaLimit limit) {
    if (value == nullptr)
        return fail(cudaErrorInvalidValue);
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    Device& d = device();
    std::lock_guard lock(d.mutex);
    if (limit < cudaLimitStackSize || limit > cudaLimitPersistingL2CacheSize)
        return fail(cudaErrorUnsupportedLimit);
    *value = d.limits[limit];
    return cudaSuccess;
}
cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache config) {
    Device& d = device();
    std::lock_guard lock(d.mutex);
    d.cacheConfig = config;
    return cudaSuccess;
}
cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* config) {
    if (config == nullptr)
        return fail(cudaErrorInvalidValue);
    Device& d = device();
    std::lock_guard lock(d.mutex);
    *config = d.cacheConfig;
    return cudaSuccess;
}
cudaError_t cudaCtxResetPersistingL2Cache(void) {
    return fail(ensureDevice());
}
cudaError_t cudaDriverGetVersion(int* v) {
    if (v == nullptr)
        return fail(cudaErrorInvalidValue);
    *v = CUDART_VERSION;
    return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* v) {
    if (v == nullptr)
        return fail(cudaErrorInvalidValue);
    *v = CUDART_VERSION;
    return cudaSuccess;
}
cudaError_t cudaMemGetInfo(std::size_t* freeBytes, std::size_t* total) {
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    Device& d = device();
    std::lock_guard lock(d.mutex);
    if (total != nullptr)
        *total = d.prop.totalGlobalMem;
    if (freeBytes != nullptr)
        *freeBytes = d.prop.totalGlobalMem - d.deviceBytes;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetTexture1DLinearMaxWidth(std::size_t* maxWidth,
                                                 const cudaChannelFormatDesc* fmt, int dev) {
    if (maxWidth == nullptr || fmt == nullptr)
        return fail(cudaErrorInvalidValue);
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    if (dev != 0)
        return fail(cudaErrorInvalidDevice);
    *maxWidth = std::size_t{1} << 27; // the texture code's limit (texture.cpp)
    return cudaSuccess;
}

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

// ---- memory ---------------------------------------------------------------------------------

cudaError_t cudaMalloc(void** p, std::size_t size) {
    return allocate(p, size, AllocKind::Device);
}
cudaError_t cudaMallocManaged(void** p, std::size_t size, unsigned int) {
    return allocate(p, size, AllocKind::Managed);
}
cudaError_t cudaMallocHost(void** p, std::size_t size) {
    return allocate(p, size, AllocKind::Host);
}
cudaError_t cudaHostAlloc(void** p, std::size_t size, unsigned int) {
    return allocate(p, size, AllocKind::Host);
}
cudaError_t cudaMallocAsync(void** p, std::size_t size, cudaStream_t) {
    return allocate(p, size, AllocKind::Device);
}
cudaError_t cudaMallocPitch(void** p, std::size_t* pitch, std::size_t width, std::size_t height) {
    if (pitch == nullptr)
        return fail(cudaErrorInvalidValue);
    *pitch = (width + kPitchAlign - 1) / kPitchAlign * kPitchAlign;
    return allocate(p, *pitch * height, AllocKind::Device);
}
cudaError_t cudaFree(void* p) {
    return release(p, false);
}
cudaError_t cudaFreeAsync(void* p, cudaStream_t) {
    return release(p, false);
}
cudaError_t cudaFreeHost(void* p) {
    return release(p, true);
}

cudaError_t cudaHostRegister(void* ptr, std::size_t size, unsigned int) {
    if (ptr == nullptr || size == 0)
        return fail(cudaErrorInvalidValue);
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    Device& d = device();
    std::lock_guard lock(d.mutex);
    auto base = reinterpret_cast<std::uintptr_t>(ptr);
    if (d.allocations.count(base) != 0)
        return fail(cudaErrorHostMemoryAlreadyRegistered);
    d.allocations[base] = Allocation{base, size, AllocKind::Registered, false};
    return cudaSuccess;
}
cudaError_t cudaHostUnregister(void* ptr) {
    Device& d = device();
    std::lock_guard lock(d.mutex);
    auto it = d.allocations.find(reinterpret_cast<std::uintptr_t>(ptr));
    if (it == d.allocations.end() || it->second.kind != AllocKind::Registered) {
        return fail(cudaErrorHostMemoryNotRegistered);
    }
    d.allocations.erase(it);
    return cudaSuccess;
}
cudaError_t cudaHostGetDevicePointer(void** devPtr, void* host, unsigned int) {
    if (devPtr == nullptr)
        return fail(cudaErrorInvalidValue);
    Device& d = device();
    std::lock_guard lock(d.mutex);
    const Allocation* a = findAllocationLocked(host, 1);
    if (a == nullptr || (a->kind != AllocKind::Host && a->kind != AllocKind::Registered)) {
        return fail(cudaErrorInvalidValue);
    }
    *devPtr = host;
    return cudaSuccess;
}
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attr, const void* ptr) {
    if (attr == nullptr)
        return fail(cudaErrorInvalidValue);
    Device& d = device();
    std::lock_guard lock(d.mutex);
    std::memset(attr, 0, sizeof(*attr));
    const Allocation* a = findAllocationLocked(ptr, 1);
    void* p = const_cast<void*>(ptr);
    attr->device = 0;
    if (a == nullptr) {
        attr->type = cudaMemoryTypeUnregistered;
        attr->device = -2;
        attr->hostPointer = p;
        return cudaSuccess;
    }
    switch (a->kind) {
    case AllocKind::Device:
    case AllocKind::Symbol:
        attr->type = cudaMemoryTypeDevice;
        attr->devicePointer = p;
        break;
    case AllocKind::Managed:
        attr->type = cudaMemoryTypeManaged;
        attr->devicePointer = p;
        attr->hostPointer = p;
        break;
    case AllocKind::Host:
    case AllocKind::Registered:
        attr->type = cudaMemoryTypeHost;
        attr->devicePointer = p;
        attr->hostPointer = p;
        break;
    }
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind) {
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    if (cudaError_t e = stickyError(); e != cudaSuccess)
        return fail(e);
    if (cudaError_t e = checkCopy(dst, const_cast<void*>(src), count, kind); e != cudaSuccess)
        return fail(e);
    if (count != 0)
        std::memmove(dst, src, count);
    return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind,
                            cudaStream_t) {
    return cudaMemcpy(dst, src, count, kind);
}
cudaError_t cudaMemcpy2D(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                         std::size_t width, std::size_t height, cudaMemcpyKind kind) {
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    if (cudaError_t e = stickyError(); e != cudaSuccess)
        return fail(e);
    if (width > dpitch || width > spitch)
        return fail(cudaErrorInvalidPitchValue);
    if (height == 0 || width == 0)
        return cudaSuccess;
    std::size_t dspan = dpitch * (height - 1) + width, sspan = spitch * (height - 1) + width;
    {
        bool checkDst = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
        bool checkSrc = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
        if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
            return fail(cudaErrorInvalidMemcpyDirection);
        Device& d = deviceStorage();
        std::lock_guard lock(d.mutex);
        if (checkDst && findAllocationLocked(dst, dspan) == nullptr)
            return fail(cudaErrorInvalidValue);
        if (checkSrc && findAllocationLocked(src, sspan) == nullptr)
            return fail(cudaErrorInvalidValue);
    }
    for (std::size_t r = 0; r < height; ++r) {
        std::memmove(static_cast<char*>(dst) + r * dpitch,
                     static_cast<const char*>(src) + r * spitch, width);
    }
    return cudaSuccess;
}
cudaError_t cudaMemcpy2DAsync(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                              std::size_t width, std::size_t height, cudaMemcpyKind kind,
                              cudaStream_t) {
    return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}
cudaError_t cudaMemset(void* p, int value, std::size_t count) {
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    if (cudaError_t e = stickyError(); e != cudaSuccess)
        return fail(e);
    if (count == 0)
        return cudaSuccess;
    {
        Device& d = deviceStorage();
        std::lock_guard lock(d.mutex);
        if (findAllocationLocked(p, count) == nullptr)
            return fail(cudaErrorInvalidValue);
    }
    std::memset(p, value, count);
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* p, int value, std::size_t count, cudaStream_t) {
    return cudaMemset(p, value, count);
}
cudaError_t cudaMemset2D(void* p, std::size_t pitch, int value, std::size_t width,
                         std::size_t height) {
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    if (width > pitch)
        return fail(cudaErrorInvalidPitchValue);
    if (width == 0 || height == 0)
        return cudaSuccess;
    {
        Device& d = deviceStorage();
        std::lock_guard lock(d.mutex);
        if (findAllocationLocked(p, pitch * (height - 1) + width) == nullptr)
            return fail(cudaErrorInvalidValue);
    }
    for (std::size_t r = 0; r < height; ++r)
        std::memset(static_cast<char*>(p) + r * pitch, value, width);
    return cudaSuccess;
}
cudaError_t cudaMemset2DAsync(void* p, std::size_t pitch, int value, std::size_t width,
                              std::size_t height, cudaStream_t) {
    return cudaMemset2D(p, pitch, value, width, height);
}
cudaError_t cudaMemPrefetchAsync(const void*, std::size_t, int, cudaStream_t) {
    return fail(ensureDevice());
}

// ---- streams and events ---------------------------------------------------------------------

struct CUstream_st {
    unsigned flags = 0;
    int priority = 0;
    cudaLaunchAttributeValue window{};
    int syncPolicy = cudaSyncPolicyAuto;
};
struct CUevent_st {
    unsigned flags = 0;
    bool recorded = false;
    std::chrono::steady_clock::time_point time;
};

namespace {
std::mutex g_handles;
std::set<const void*> g_streams, g_events;
CUstream_st g_defaultStream;

CUstream_st* streamState(cudaStream_t s) {
    if (s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread)
        return &g_defaultStream;
    std::lock_guard lock(g_handles);
    return g_streams.count(s) != 0 ? s : nullptr;
}
bool validEvent(cudaEvent_t e) {
    std::lock_guard lock(g_handles);
    return e != nullptr && g_events.count(e) != 0;
}
} // namespace

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int priority) {
    if (stream == nullptr)
        return fail(cudaErrorInvalidValue);
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    auto* s = new CUstream_st;
    s->flags = flags;
    s->priority = priority;
    std::lock_guard lock(g_handles);
    g_streams.insert(s);
    *stream = s;
    return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t* s) {
    return cudaStreamCreateWithPriority(s, 0, 0);
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int flags) {
    return cudaStreamCreateWithPriority(s, flags, 0);
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
    std::lock_guard lock(g_handles);
    if (g_streams.erase(s) == 0)
        return fail(cudaErrorInvalidResourceHandle);
    delete s;
    return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
    if (streamState(s) == nullptr)
        return fail(cudaErrorInvalidResourceHandle);
    return fail(stickyError());
}
cudaError_t cudaStreamQuery(cudaStream_t s) {
    if (streamState(s) == nullptr)
        return fail(cudaErrorInvalidResourceHandle);
    return fail(stickyError());
}
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int) {
    if (streamState(s) == nullptr || !validEvent(e))
        return fail(cudaErrorInvalidResourceHandle);
    return cudaSuccess;
}
cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb, void* user,
                                  unsigned int) {
    if (streamState(s) == nullptr || cb == nullptr)
        return fail(cudaErrorInvalidValue);
    cb(s, stickyError(), user);
    return cudaSuccess;
}
cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void* user) {
    if (streamState(s) == nullptr || fn == nullptr)
        return fail(cudaErrorInvalidValue);
    fn(user);
    return cudaSuccess;
}
cudaError_t cudaStreamSetAttribute(cudaStream_t s, cudaStreamAttrID attr,
                                   const cudaStreamAttrValue* value) {
    CUstream_st* st = streamState(s);
    if (st == nullptr)
        return fail(cudaErrorInvalidResourceHandle);
    if (value == nullptr)
        return fail(cudaErrorInvalidValue);
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    if (attr == cudaLaunchAttributeAccessPolicyWindow) {
        const cudaAccessPolicyWindow& w = value->accessPolicyWindow;
        int maxWindow = 0;
        {
            Device& d = device();
            std::lock_guard lock(d.mutex);
            maxWindow = d.prop.accessPolicyMaxWindowSize;
        }
        if (maxWindow == 0)
            return fail(cudaErrorNotSupported);
        if (w.num_bytes > static_cast<std::size_t>(maxWindow) ||
            !(w.hitRatio >= 0.0f && w.hitRatio <= 1.0f) ||
            w.missProp == cudaAccessPropertyPersisting) {
            return fail(cudaErrorInvalidValue);
        }
        st->window.accessPolicyWindow = w;
        return cudaSuccess;
    }
    if (attr == cudaLaunchAttributeSynchronizationPolicy) {
        st->syncPolicy = value->syncPolicy;
        return cudaSuccess;
    }
    if (attr == cudaLaunchAttributePriority) {
        st->priority = value->priority;
        return cudaSuccess;
    }
    report("cudaStreamSetAttribute: attribute " + std::to_string(static_cast<int>(attr)) +
           " is not supported");
    return fail(cudaErrorNotSupported);
}
cudaError_t cudaStreamGetAttribute(cudaStream_t s, cudaStreamAttrID attr,
                                   cudaStreamAttrValue* value) {
    CUstream_st* st = streamState(s);
    if (st == nullptr)
        return fail(cudaErrorInvalidResourceHandle);
    if (value == nullptr)
        return fail(cudaErrorInvalidValue);
    std::memset(value, 0, sizeof(*value));
    switch (attr) {
    case cudaLaunchAttributeAccessPolicyWindow:
        value->accessPolicyWindow = st->window.accessPolicyWindow;
        return cudaSuccess;
    case cudaLaunchAttributeSynchronizationPolicy:
        value->syncPolicy = static_cast<cudaSynchronizationPolicy>(st->syncPolicy);
        return cudaSuccess;
    case cudaLaunchAttributePriority:
        value->priority = st->priority;
        return cudaSuccess;
    default:
        return fail(cudaErrorNotSupported);
    }
}
cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
    if (least != nullptr)
        *least = 0;
    if (greatest != nullptr)
        *greatest = -5;
    return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
    if (event == nullptr)
        return fail(cudaErrorInvalidValue);
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    auto* ev = new CUevent_st;
    ev->flags = flags;
    std::lock_guard lock(g_handles);
    g_events.insert(ev);
    *event = ev;
    return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t* e) {
    return cudaEventCreateWithFlags(e, 0);
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
    std::lock_guard lock(g_handles);
    if (g_events.erase(e) == 0)
        return fail(cudaErrorInvalidResourceHandle);
    delete e;
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
    if (!validEvent(e) || streamState(s) == nullptr)
        return fail(cudaErrorInvalidResourceHandle);
    e->recorded = true;
    e->time = std::chrono::steady_clock::now();
    return cudaSuccess;
}
cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned int) {
    return cudaEventRecord(e, s);
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
    if (!validEvent(e))
        return fail(cudaErrorInvalidResourceHandle);
    return fail(stickyError());
}
cudaError_t cudaEventQuery(cudaEvent_t e) {
    if (!validEvent(e))
        return fail(cudaErrorInvalidResourceHandle);
    return fail(stickyError());
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    if (ms == nullptr)
        return fail(cudaErrorInvalidValue);
    if (!validEvent(start) || !validEvent(end))
        return fail(cudaErrorInvalidResourceHandle);
    if ((start->flags | end->flags) & cudaEventDisableTiming)
        return fail(cudaErrorInvalidResourceHandle);
    if (!start->recorded || !end->recorded)
        return fail(cudaErrorNotReady);
    *ms = std::chrono::duration<float, std::milli>(end->time - start->time).count();
    return cudaSuccess;
}

cudaError_t cudaProfilerStart(void) {
    return cudaSuccess;
}
cudaError_t cudaProfilerStop(void) {
    return cudaSuccess;
}

// ---- driver API -------------------------------------------------------------------------------

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
    case CUDA_SUCCESS:
        *str = "CUDA_SUCCESS";
        break;
    case CUDA_ERROR_INVALID_VALUE:
        *str = "CUDA_ERROR_INVALID_VALUE";
        break;
    case CUDA_ERROR_OUT_OF_MEMORY:
        *str = "CUDA_ERROR_OUT_OF_MEMORY";
        break;
    case CUDA_ERROR_NOT_INITIALIZED:
        *str = "CUDA_ERROR_NOT_INITIALIZED";
        break;
    case CUDA_ERROR_DEINITIALIZED:
        *str = "CUDA_ERROR_DEINITIALIZED";
        break;
    case CUDA_ERROR_NO_DEVICE:
        *str = "CUDA_ERROR_NO_DEVICE";
        break;
    case CUDA_ERROR_INVALID_DEVICE:
        *str = "CUDA_ERROR_INVALID_DEVICE";
        break;
    case CUDA_ERROR_INVALID_CONTEXT:
        *str = "CUDA_ERROR_INVALID_CONTEXT";
        break;
    case CUDA_ERROR_NOT_FOUND:
        *str = "CUDA_ERROR_NOT_FOUND";
        break;
    case CUDA_ERROR_NOT_SUPPORTED:
        *str = "CUDA_ERROR_NOT_SUPPORTED";
        break;
    case CUDA_ERROR_UNKNOWN:
        *str = "CUDA_ERROR_UNKNOWN";
        break;
    default:
        *str = nullptr;
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
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

CUresult cuMemGetAddressRange_v2(CUdeviceptr* pbase, std::size_t* psize, CUdeviceptr dptr) {
    if (ensureDevice() != cudaSuccess)
        return CUDA_ERROR_NOT_INITIALIZED;
    Device& d = device();
    std::lock_guard lock(d.mutex);
    const Allocation* a = findAllocationLocked(reinterpret_cast<const void*>(dptr), 1);
    if (a == nullptr)
        return CUDA_ERROR_NOT_FOUND;
    if (pbase != nullptr)
        *pbase = static_cast<CUdeviceptr>(a->base);
    if (psize != nullptr)
        *psize = a->size;
    return CUDA_SUCCESS;
}

// ---- choosing the spec from C++ ------------------------------------------------------------

#include "emu/select_spec.h"

namespace memplace::emu {
void useSpec(const spec::Spec& s) {
    Device& d = deviceStorage();
    std::lock_guard lock(d.mutex);
    d.initialized = true;
    d.usable = true;
    d.initError.clear();
    d.spec = s;
    fillProperties(d);
}
const spec::Spec& currentSpec() {
    return device().spec;
}
} // namespace memplace::emu

// The emulated device: its state (the spec named by MEMPLACE_SPEC, the properties derived from
// it) and the runtime API that asks about or configures it (device choice, properties, limits,
// cache configuration, versions, memory info, reset), and choosing the spec from C++.
#include "emu/select_spec.h"
#include "state.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace memplace::emu::detail {

namespace {

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

Device& deviceStorage() {
    static Device* d = new Device; // never destroyed: kernels may run during static destruction
    return *d;
}

Device& device() {
    Device& d = deviceStorage();
    std::lock_guard lock(d.mutex);
    initLocked(d);
    return d;
}

cudaError_t checkDeviceQuery(const void* out, int dev) {
    if (out == nullptr)
        return fail(cudaErrorInvalidValue);
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    if (dev != 0)
        return fail(cudaErrorInvalidDevice);
    return cudaSuccess;
}

cudaError_t ensureDevice() {
    Device& d = device();
    return d.usable ? cudaSuccess : cudaErrorInitializationError;
}

std::size_t maxDynamicSharedCapacity() {
    Device& d = device();
    std::size_t optin = d.usable ? d.prop.sharedMemPerBlockOptin : 0;
    return std::max<std::size_t>(optin, 48 * 1024);
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
    if (cudaError_t e = checkDeviceQuery(prop, dev); e != cudaSuccess)
        return e;
    Device& d = device();
    std::lock_guard lock(d.mutex);
    *prop = d.prop;
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
    if (fmt == nullptr)
        return fail(cudaErrorInvalidValue);
    if (cudaError_t e = checkDeviceQuery(maxWidth, dev); e != cudaSuccess)
        return e;
    *maxWidth = std::size_t{1} << 27; // the texture code's limit (texture.cpp)
    return cudaSuccess;
}

// ---- choosing the spec from C++ ------------------------------------------------------------

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

// Memory: the allocation table (device, managed, host, registered memory and registered
// symbols), allocation and release, copies and sets checked against the table, symbol copies,
// pointer attributes and the driver's cuMemGetAddressRange.
#include "state.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace memplace::emu::detail {

namespace {

constexpr std::size_t kAllocAlign =
    512; // cudaMalloc guarantees 256; textures need textureAlignment (512)
constexpr std::size_t kPitchAlign = 512; // cudaMallocPitch's row alignment

} // namespace

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

} // namespace memplace::emu::detail

using namespace memplace::emu::detail;

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

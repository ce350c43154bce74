// Process-wide state of the emulated device, shared by the library's files.
#pragma once

#include "memplace/emu/cuda_emu.h"
#include "spec/spec.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace memplace::emu::detail {

enum class AllocKind { Device, Managed, Host, Registered, Symbol };

struct Allocation {
    std::uintptr_t base = 0;
    std::size_t size = 0;
    AllocKind kind = AllocKind::Device;
    bool owned = true; ///< freed by the emulator (not for registered host memory and symbols)
};

struct FuncAttributes {
    int maxDynamicSharedBytes = 48 * 1024;
    int carveout = -1;
};

/// The emulated GPU: its spec, properties, allocations, attributes. All members under `mutex`
/// unless atomic.
struct Device {
    std::mutex mutex;
    bool initialized = false;
    bool usable = false;
    std::string initError;
    spec::Spec spec;
    cudaDeviceProp prop{};
    std::map<std::uintptr_t, Allocation> allocations; ///< by base address
    std::size_t deviceBytes = 0;
    std::map<const void*, FuncAttributes> funcs;
    std::size_t limits[7] = {1024, 1 << 20, 8 << 20, 2, 2048, 32, 0};
    cudaFuncCache cacheConfig = cudaFuncCachePreferNone;
};

/// The device, initialised from MEMPLACE_SPEC (default h100) on first use.
Device& device();
/// The device without initialising it: for callers that hold its mutex (device() locks it).
Device& deviceStorage();
/// Initialises the device if needed; cudaSuccess or the initialisation error.
cudaError_t ensureDevice();
/// The checks before a query of device `dev` into `out`: cudaErrorInvalidValue (out is null),
/// the initialisation error, cudaErrorInvalidDevice (dev is not 0), recorded; or cudaSuccess.
cudaError_t checkDeviceQuery(const void* out, int dev);

/// Records `e` as the calling thread's last error (unless cudaSuccess) and returns it.
cudaError_t fail(cudaError_t e);
/// The sticky error (a fault inside a kernel), or cudaSuccess.
cudaError_t stickyError();
void setStickyError(cudaError_t e);
void clearStickyError();

/// Prints "memplace emu: <message>" on stderr (one line, flushed).
void report(const std::string& message);

/// The allocation containing [p, p + size), or nullptr. Caller holds device().mutex.
const Allocation* findAllocationLocked(const void* p, std::size_t size);

/// Spec-derived numbers the scheduler needs.
std::size_t maxDynamicSharedCapacity();

} // namespace memplace::emu::detail

#include "model/occupancy.h"

#include <algorithm>

namespace memplace::model {

namespace {
uint64_t roundUp(uint64_t v, uint64_t unit) {
    return unit == 0 ? v : (v + unit - 1) / unit * unit;
}
} // namespace

uint64_t sharedAllocation(const spec::Processor& p, uint64_t sharedBytesPerBlock) {
    return roundUp(sharedBytesPerBlock + p.reservedSharedPerBlock, p.sharedAllocationUnit);
}

Occupancy occupancy(const spec::Processor& p, uint32_t threadsPerBlock,
                    std::optional<uint32_t> registersPerThread, uint64_t sharedBytesPerBlock) {
    Occupancy o;
    const uint32_t warpSize = std::max<uint32_t>(1, p.warpSize);
    const uint32_t warps = std::max<uint32_t>(1, (threadsPerBlock + warpSize - 1) / warpSize);
    const uint32_t maxWarps = p.maxWarpsPerSm != 0 ? p.maxWarpsPerSm : p.maxThreadsPerSm / warpSize;
    o.byWarps = threadsPerBlock > p.maxThreadsPerBlock ? 0 : maxWarps / warps;
    o.byBlocks = p.maxBlocksPerSm;
    o.byRegisters = p.maxBlocksPerSm;
    if (registersPerThread && *registersPerThread > 0) {
        if (*registersPerThread > p.maxRegistersPerThread) {
            o.byRegisters = 0;
        } else {
            uint64_t perWarp = roundUp(uint64_t{*registersPerThread} * warpSize,
                                       std::max<uint32_t>(1, p.registerAllocationUnit));
            uint64_t warpsByRegs = perWarp == 0 ? maxWarps : p.maxRegistersPerSm / perWarp;
            o.byRegisters = static_cast<uint32_t>(warpsByRegs / warps);
            if (uint64_t{*registersPerThread} * threadsPerBlock > p.maxRegistersPerBlock) {
                o.byRegisters = 0;
            }
        }
    }
    o.byShared = p.maxBlocksPerSm;
    if (sharedBytesPerBlock > p.maxSharedPerBlock) {
        o.byShared = 0;
    } else {
        uint64_t alloc = sharedAllocation(p, sharedBytesPerBlock);
        if (alloc > 0) {
            o.byShared = static_cast<uint32_t>(
                std::min<uint64_t>(p.maxBlocksPerSm, p.maxSharedPerSm / alloc));
        }
    }
    o.blocksPerSm = std::min({o.byWarps, o.byBlocks, o.byRegisters, o.byShared});
    o.limiter = o.blocksPerSm == o.byShared && o.byShared < o.byBlocks         ? "shared"
                : o.blocksPerSm == o.byRegisters && o.byRegisters < o.byBlocks ? "registers"
                : o.blocksPerSm == o.byWarps && o.byWarps < o.byBlocks         ? "warps"
                                                                               : "blocks";
    return o;
}

} // namespace memplace::model

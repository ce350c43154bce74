// Resident blocks per SM, as CUDA's occupancy calculator computes them from the processor
// entry of the spec and the kernel's threads, registers and shared memory per block.
#pragma once

#include "spec/spec.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace memplace::model {

struct Occupancy {
    uint32_t blocksPerSm = 0; ///< 0: the kernel cannot launch with these resources
    uint32_t byWarps = 0;     ///< limit from maxWarpsPerSm (threads)
    uint32_t byBlocks = 0;    ///< limit from maxBlocksPerSm
    uint32_t byRegisters = 0; ///< limit from registers (maxBlocksPerSm when unknown)
    uint32_t byShared = 0;    ///< limit from shared memory
    std::string_view limiter; ///< "warps", "blocks", "registers" or "shared"
};

/// Shared memory a block takes from its SM: its bytes plus the reserved part, rounded up to
/// the allocation unit.
uint64_t sharedAllocation(const spec::Processor& p, uint64_t sharedBytesPerBlock);

Occupancy occupancy(const spec::Processor& p, uint32_t threadsPerBlock,
                    std::optional<uint32_t> registersPerThread, uint64_t sharedBytesPerBlock);

} // namespace memplace::model

// Division by a run-time constant with one multiply-high, an add and a shift (Granlund and
// Montgomery, round-up method): the 2-D texture accessor turns linear indices into (row,
// column) with it. Exact for every 32-bit unsigned dividend and divisor >= 1.
#pragma once

#include "memplace/config.h"
#include "memplace/rtc_std.h"

namespace memplace {

struct FastDiv {
    uint32_t d = 0;     ///< the divisor; 0 means "not set"
    uint32_t mul = 0;   ///< magic multiplier
    uint32_t shift = 0; ///< post-shift

    /// Host-side construction; d must be >= 1.
    static FastDiv make(uint32_t divisor) {
        FastDiv f;
        f.d = divisor;
        uint32_t s = 0;
        while ((uint64_t{1} << s) < divisor) {
            ++s;
        }
        f.shift = s;
        f.mul = static_cast<uint32_t>(
            ((uint64_t{1} << 32) * ((uint64_t{1} << s) - divisor)) / divisor + 1);
        return f;
    }

    /// n / d.
    MEMPLACE_HD uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
        const uint32_t t = __umulhi(n, mul);
#else
        const uint32_t t = static_cast<uint32_t>((uint64_t{n} * mul) >> 32);
#endif
        return static_cast<uint32_t>((uint64_t{t} + n) >> shift);
    }
};

} // namespace memplace

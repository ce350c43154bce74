// How a kernel accesses an array or a site: the one access-mode vocabulary of the frontend's
// KernelInfo, the trace, the model and the runtime's kernel descriptor (memplace::Mode). Header
// only and standard C++ only, because the runtime is compiled by nvcc alone; NVRTC
// (runtime/src/jit.cpp) sees the enum only.
#pragma once

#if !defined(__CUDACC_RTC__)
#include <array>
#include <optional>
#include <string_view>
#endif

namespace memplace {

/// Atomic dominates: an array with one atomic site is Atomic whatever else it does. The
/// numbers are not a file format: the binary trace maps them explicitly (trace::arrayModeCode).
/// The underlying type is uint8_t, spelled so that NVRTC needs no <cstdint>.
enum class AccessMode : unsigned char {
    None,      ///< not accessed (yet)
    Read,      ///< only read: read-only, texture and constant possible
    Write,     ///< only written (never read): shared staging skips the copy-in
    ReadWrite, ///< read and written
    Atomic,    ///< updated atomically (with or without plain accesses)
};

#if !defined(__CUDACC_RTC__)

inline constexpr std::array<AccessMode, 5> kAllAccessModes = {
    AccessMode::None, AccessMode::Read, AccessMode::Write, AccessMode::ReadWrite,
    AccessMode::Atomic};

/// The JSON and trace name of a mode: "none", "read", "write", "readwrite", "atomic".
constexpr std::string_view accessModeName(AccessMode m) {
    switch (m) {
    case AccessMode::None:
        return "none";
    case AccessMode::Read:
        return "read";
    case AccessMode::Write:
        return "write";
    case AccessMode::ReadWrite:
        return "readwrite";
    case AccessMode::Atomic:
        return "atomic";
    }
    return "none";
}

constexpr std::optional<AccessMode> parseAccessMode(std::string_view name) {
    for (AccessMode m : kAllAccessModes) {
        if (accessModeName(m) == name) {
            return m;
        }
    }
    return std::nullopt;
}

/// The mode of an array accessed both ways: Read+Write = ReadWrite, anything+Atomic = Atomic.
constexpr AccessMode combine(AccessMode a, AccessMode b) {
    if (a == AccessMode::Atomic || b == AccessMode::Atomic) {
        return AccessMode::Atomic;
    }
    if (a == AccessMode::None) {
        return b;
    }
    if (b == AccessMode::None || a == b) {
        return a;
    }
    return AccessMode::ReadWrite;
}

/// Whether the kernel stores to the array (plainly or atomically).
constexpr bool writes(AccessMode m) {
    return m == AccessMode::Write || m == AccessMode::ReadWrite || m == AccessMode::Atomic;
}

#endif // !__CUDACC_RTC__

} // namespace memplace

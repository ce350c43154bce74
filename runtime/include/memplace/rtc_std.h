// The little of the C++ standard library the device headers use, for nvcc, clang, the CPU
// emulation layer and NVRTC alike. NVRTC (`__CUDACC_RTC__`, the just-in-time compilation of a
// chosen placement: runtime/src/jit.cpp) compiles device code only and has no host standard
// library, not even <cstdint> or <type_traits>: there the fixed-width integers are declared here
// as glibc declares them on LP64 (so that a program's own `typedef long int64_t;` repeats the
// same declaration) and the type traits are written out; elsewhere they are the standard ones.
// The device headers (accessors.cuh, stage.cuh, site.cuh, config.h, desc.h, fastdiv.h,
// trace_record.h, common/place.h) include this instead of the standard headers; they are
// embedded into the runtime library and handed to NVRTC by name (runtime/CMakeLists.txt).
#pragma once

#if defined(__CUDACC_RTC__)

typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;

namespace memplace::mstd {

template <class T, T V>
struct integral_constant {
    static constexpr T value = V;
};
using true_type = integral_constant<bool, true>;
using false_type = integral_constant<bool, false>;

template <class T>
struct remove_cv {
    using type = T;
};
template <class T>
struct remove_cv<const T> {
    using type = T;
};
template <class T>
struct remove_cv<volatile T> {
    using type = T;
};
template <class T>
struct remove_cv<const volatile T> {
    using type = T;
};
template <class T>
using remove_cv_t = typename remove_cv<T>::type;

template <class T>
inline constexpr bool is_const_v = false;
template <class T>
inline constexpr bool is_const_v<const T> = true;

template <class T>
inline constexpr bool is_trivially_copyable_v = __is_trivially_copyable(T);

template <class...>
using void_t = void;

template <class T>
T&& declval() noexcept;

} // namespace memplace::mstd

#else

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

namespace memplace::mstd {
using std::declval;
using std::false_type;
using std::is_const_v;
using std::is_trivially_copyable_v;
using std::remove_cv_t;
using std::true_type;
using std::void_t;
} // namespace memplace::mstd

#endif

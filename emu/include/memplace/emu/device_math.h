// CUDA's device math: intrinsics, integer bit operations, conversions with a rounding mode,
// the global min/max overloads, and the functions CUDA adds to the C library's.
//
// The fast approximate intrinsics (__expf, __sinf, __fdividef, ...) compute the exact function
// on the host: results can differ from a GPU's in the last bits (docs/emulation.md, "Math").
// Directed-rounding arithmetic (_rz, _ru, _rd) is exact (computed under that rounding mode).
#pragma once

#include <bit>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <math.h>
#include <stdlib.h>

// ---- global min / max as CUDA declares them ------------------------------------------------

inline int min(int a, int b) {
    return a < b ? a : b;
}
inline unsigned int min(unsigned int a, unsigned int b) {
    return a < b ? a : b;
}
inline unsigned int min(int a, unsigned int b) {
    return min(static_cast<unsigned>(a), b);
}
inline unsigned int min(unsigned int a, int b) {
    return min(a, static_cast<unsigned>(b));
}
inline long min(long a, long b) {
    return a < b ? a : b;
}
inline unsigned long min(unsigned long a, unsigned long b) {
    return a < b ? a : b;
}
inline unsigned long min(long a, unsigned long b) {
    return min(static_cast<unsigned long>(a), b);
}
inline unsigned long min(unsigned long a, long b) {
    return min(a, static_cast<unsigned long>(b));
}
inline long long min(long long a, long long b) {
    return a < b ? a : b;
}
inline unsigned long long min(unsigned long long a, unsigned long long b) {
    return a < b ? a : b;
}
inline unsigned long long min(long long a, unsigned long long b) {
    return min(static_cast<unsigned long long>(a), b);
}
inline unsigned long long min(unsigned long long a, long long b) {
    return min(a, static_cast<unsigned long long>(b));
}
inline float min(float a, float b) {
    return std::fmin(a, b);
}
inline double min(double a, double b) {
    return std::fmin(a, b);
}
inline double min(float a, double b) {
    return std::fmin(static_cast<double>(a), b);
}
inline double min(double a, float b) {
    return std::fmin(a, static_cast<double>(b));
}
inline int max(int a, int b) {
    return a > b ? a : b;
}
inline unsigned int max(unsigned int a, unsigned int b) {
    return a > b ? a : b;
}
inline unsigned int max(int a, unsigned int b) {
    return max(static_cast<unsigned>(a), b);
}
inline unsigned int max(unsigned int a, int b) {
    return max(a, static_cast<unsigned>(b));
}
inline long max(long a, long b) {
    return a > b ? a : b;
}
inline unsigned long max(unsigned long a, unsigned long b) {
    return a > b ? a : b;
}
inline unsigned long max(long a, unsigned long b) {
    return max(static_cast<unsigned long>(a), b);
}
inline unsigned long max(unsigned long a, long b) {
    return max(a, static_cast<unsigned long>(b));
}
inline long long max(long long a, long long b) {
    return a > b ? a : b;
}
inline unsigned long long max(unsigned long long a, unsigned long long b) {
    return a > b ? a : b;
}
inline unsigned long long max(long long a, unsigned long long b) {
    return max(static_cast<unsigned long long>(a), b);
}
inline unsigned long long max(unsigned long long a, long long b) {
    return max(a, static_cast<unsigned long long>(b));
}
inline float max(float a, float b) {
    return std::fmax(a, b);
}
inline double max(double a, double b) {
    return std::fmax(a, b);
}
inline double max(float a, double b) {
    return std::fmax(static_cast<double>(a), b);
}
inline double max(double a, float b) {
    return std::fmax(a, static_cast<double>(b));
}
inline unsigned int umin(unsigned int a, unsigned int b) {
    return a < b ? a : b;
}
inline unsigned int umax(unsigned int a, unsigned int b) {
    return a > b ? a : b;
}
inline long long llmin(long long a, long long b) {
    return a < b ? a : b;
}
inline long long llmax(long long a, long long b) {
    return a > b ? a : b;
}
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) {
    return a < b ? a : b;
}
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) {
    return a > b ? a : b;
}

// ---- integer intrinsics --------------------------------------------------------------------

inline int __popc(unsigned int x) {
    return std::popcount(x);
}
inline int __popcll(unsigned long long x) {
    return std::popcount(x);
}
inline int __clz(int x) {
    return std::countl_zero(static_cast<unsigned>(x));
}
inline int __clzll(long long x) {
    return std::countl_zero(static_cast<unsigned long long>(x));
}
inline int __ffs(int x) {
    return x == 0 ? 0 : std::countr_zero(static_cast<unsigned>(x)) + 1;
}
inline int __ffsll(long long x) {
    return x == 0 ? 0 : std::countr_zero(static_cast<unsigned long long>(x)) + 1;
}
inline unsigned int __brev(unsigned int x) {
    unsigned r = 0;
    for (int i = 0; i < 32; ++i)
        r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
inline unsigned long long __brevll(unsigned long long x) {
    return (static_cast<unsigned long long>(__brev(static_cast<unsigned>(x))) << 32) |
           __brev(static_cast<unsigned>(x >> 32));
}
inline int __fns(unsigned mask, unsigned base, int offset) {
    // n-th set bit of mask starting at base (CUDA semantics, offset may be negative)
    if (offset == 0)
        return -1;
    int step = offset > 0 ? 1 : -1;
    int n = offset > 0 ? offset : -offset;
    for (int i = static_cast<int>(base); i >= 0 && i < 32; i += step) {
        if ((mask >> i) & 1u) {
            if (--n == 0)
                return i;
        }
    }
    return -1;
}
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
    unsigned long long v = (static_cast<unsigned long long>(y) << 32) | x;
    unsigned r = 0;
    for (int i = 0; i < 4; ++i) {
        unsigned sel = (s >> (4 * i)) & 7u;
        r |= static_cast<unsigned>((v >> (8 * sel)) & 0xffu) << (8 * i);
    }
    return r;
}
inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift) {
    unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned>((v << (shift & 31u)) >> 32);
}
inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift) {
    unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned>((v << (shift > 32u ? 32u : shift)) >> 32);
}
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift) {
    unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned>(v >> (shift & 31u));
}
inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift) {
    unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned>(v >> (shift > 32u ? 32u : shift));
}
inline int __mul24(int x, int y) {
    return static_cast<int>(static_cast<unsigned>((x << 8) >> 8) *
                            static_cast<unsigned>((y << 8) >> 8));
}
inline unsigned int __umul24(unsigned int x, unsigned int y) {
    return (x & 0xffffffu) * (y & 0xffffffu);
}
inline int __mulhi(int x, int y) {
    return static_cast<int>((static_cast<long long>(x) * y) >> 32);
}
inline unsigned int __umulhi(unsigned int x, unsigned int y) {
    return static_cast<unsigned>((static_cast<unsigned long long>(x) * y) >> 32);
}
inline long long __mul64hi(long long x, long long y) {
    return static_cast<long long>((static_cast<__int128>(x) * y) >> 64);
}
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
    return static_cast<unsigned long long>((static_cast<unsigned __int128>(x) * y) >> 64);
}
inline int __hadd(int x, int y) {
    return static_cast<int>((static_cast<long long>(x) + y) >> 1);
}
inline int __rhadd(int x, int y) {
    return static_cast<int>((static_cast<long long>(x) + y + 1) >> 1);
}
inline unsigned int __uhadd(unsigned int x, unsigned int y) {
    return static_cast<unsigned>((static_cast<unsigned long long>(x) + y) >> 1);
}
inline unsigned int __urhadd(unsigned int x, unsigned int y) {
    return static_cast<unsigned>((static_cast<unsigned long long>(x) + y + 1) >> 1);
}
inline unsigned int __sad(int x, int y, unsigned int z) {
    return z + static_cast<unsigned>(x > y ? static_cast<long long>(x) - y
                                           : static_cast<long long>(y) - x);
}
inline unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) {
    return z + (x > y ? x - y : y - x);
}
inline int __dp4a(int a, int b, int c) {
    for (int i = 0; i < 4; ++i) {
        c += static_cast<signed char>(a >> (8 * i)) * static_cast<signed char>(b >> (8 * i));
    }
    return c;
}
inline unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) {
    for (int i = 0; i < 4; ++i)
        c += ((a >> (8 * i)) & 0xffu) * ((b >> (8 * i)) & 0xffu);
    return c;
}

// ---- reinterpretation ----------------------------------------------------------------------

inline float __int_as_float(int x) {
    return std::bit_cast<float>(x);
}
inline int __float_as_int(float x) {
    return std::bit_cast<int>(x);
}
inline float __uint_as_float(unsigned int x) {
    return std::bit_cast<float>(x);
}
inline unsigned int __float_as_uint(float x) {
    return std::bit_cast<unsigned>(x);
}
inline double __longlong_as_double(long long x) {
    return std::bit_cast<double>(x);
}
inline long long __double_as_longlong(double x) {
    return std::bit_cast<long long>(x);
}
inline int __double2hiint(double x) {
    return static_cast<int>(std::bit_cast<unsigned long long>(x) >> 32);
}
inline int __double2loint(double x) {
    return static_cast<int>(std::bit_cast<unsigned long long>(x));
}
inline double __hiloint2double(int hi, int lo) {
    return std::bit_cast<double>(
        (static_cast<unsigned long long>(static_cast<unsigned>(hi)) << 32) |
        static_cast<unsigned>(lo));
}

// ---- conversions: CUDA saturates out-of-range values and maps NaN to 0 ----------------------

namespace memplace::emu::detail {
template <class I, class F>
inline I saturate(F v) {
    if (std::isnan(v))
        return 0;
    if (v <= static_cast<F>(std::numeric_limits<I>::min()))
        return std::numeric_limits<I>::min();
    if (v >= static_cast<F>(std::numeric_limits<I>::max()))
        return std::numeric_limits<I>::max();
    return static_cast<I>(v);
}
/// Directed-rounding arithmetic, computed in the library under the rounding mode.
/// mode: 0 nearest-even, 1 toward zero, 2 up, 3 down.
float roundedF(int op, int mode, float a, float b, float c);
double roundedD(int op, int mode, double a, double b, double c);
float intToFloat(long long v, bool isUnsigned, int mode);
double intToDouble(long long v, bool isUnsigned, int mode);
float doubleToFloat(double v, int mode);
enum RoundOp { kAdd, kSub, kMul, kDiv, kFma, kSqrt, kRcp };
} // namespace memplace::emu::detail

#define MEMPLACE_EMU_F2I(name, I, F)                                                               \
    inline I name##_rn(F v) {                                                                      \
        return ::memplace::emu::detail::saturate<I>(std::nearbyint(v));                            \
    }                                                                                              \
    inline I name##_rz(F v) {                                                                      \
        return ::memplace::emu::detail::saturate<I>(std::trunc(v));                                \
    }                                                                                              \
    inline I name##_ru(F v) {                                                                      \
        return ::memplace::emu::detail::saturate<I>(std::ceil(v));                                 \
    }                                                                                              \
    inline I name##_rd(F v) {                                                                      \
        return ::memplace::emu::detail::saturate<I>(std::floor(v));                                \
    }
MEMPLACE_EMU_F2I(__float2int, int, float)
MEMPLACE_EMU_F2I(__float2uint, unsigned int, float)
MEMPLACE_EMU_F2I(__float2ll, long long, float)
MEMPLACE_EMU_F2I(__float2ull, unsigned long long, float)
MEMPLACE_EMU_F2I(__double2int, int, double)
MEMPLACE_EMU_F2I(__double2uint, unsigned int, double)
MEMPLACE_EMU_F2I(__double2ll, long long, double)
MEMPLACE_EMU_F2I(__double2ull, unsigned long long, double)
#undef MEMPLACE_EMU_F2I

#define MEMPLACE_EMU_I2F(name, I, uns, fn, R)                                                      \
    inline R name##_rn(I v) {                                                                      \
        return ::memplace::emu::detail::fn(static_cast<long long>(v), uns, 0);                     \
    }                                                                                              \
    inline R name##_rz(I v) {                                                                      \
        return ::memplace::emu::detail::fn(static_cast<long long>(v), uns, 1);                     \
    }                                                                                              \
    inline R name##_ru(I v) {                                                                      \
        return ::memplace::emu::detail::fn(static_cast<long long>(v), uns, 2);                     \
    }                                                                                              \
    inline R name##_rd(I v) {                                                                      \
        return ::memplace::emu::detail::fn(static_cast<long long>(v), uns, 3);                     \
    }
MEMPLACE_EMU_I2F(__int2float, int, false, intToFloat, float)
MEMPLACE_EMU_I2F(__uint2float, unsigned int, true, intToFloat, float)
MEMPLACE_EMU_I2F(__ll2float, long long, false, intToFloat, float)
MEMPLACE_EMU_I2F(__ull2float, unsigned long long, true, intToFloat, float)
MEMPLACE_EMU_I2F(__ll2double, long long, false, intToDouble, double)
MEMPLACE_EMU_I2F(__ull2double, unsigned long long, true, intToDouble, double)
#undef MEMPLACE_EMU_I2F
inline double __int2double_rn(int v) {
    return static_cast<double>(v);
}
inline double __uint2double_rn(unsigned int v) {
    return static_cast<double>(v);
}
inline float __double2float_rn(double v) {
    return static_cast<float>(v);
}
inline float __double2float_rz(double v) {
    return ::memplace::emu::detail::doubleToFloat(v, 1);
}
inline float __double2float_ru(double v) {
    return ::memplace::emu::detail::doubleToFloat(v, 2);
}
inline float __double2float_rd(double v) {
    return ::memplace::emu::detail::doubleToFloat(v, 3);
}

// ---- float arithmetic with explicit rounding -----------------------------------------------

#define MEMPLACE_EMU_RND(suffix, mode)                                                             \
    inline float __fadd##suffix(float a, float b) {                                                \
        return ::memplace::emu::detail::roundedF(::memplace::emu::detail::kAdd, mode, a, b, 0);    \
    }                                                                                              \
    inline float __fsub##suffix(float a, float b) {                                                \
        return ::memplace::emu::detail::roundedF(::memplace::emu::detail::kSub, mode, a, b, 0);    \
    }                                                                                              \
    inline float __fmul##suffix(float a, float b) {                                                \
        return ::memplace::emu::detail::roundedF(::memplace::emu::detail::kMul, mode, a, b, 0);    \
    }                                                                                              \
    inline float __fdiv##suffix(float a, float b) {                                                \
        return ::memplace::emu::detail::roundedF(::memplace::emu::detail::kDiv, mode, a, b, 0);    \
    }                                                                                              \
    inline float __fmaf##suffix(float a, float b, float c) {                                       \
        return ::memplace::emu::detail::roundedF(::memplace::emu::detail::kFma, mode, a, b, c);    \
    }                                                                                              \
    inline float __fsqrt##suffix(float a) {                                                        \
        return ::memplace::emu::detail::roundedF(::memplace::emu::detail::kSqrt, mode, a, 0, 0);   \
    }                                                                                              \
    inline float __frcp##suffix(float a) {                                                         \
        return ::memplace::emu::detail::roundedF(::memplace::emu::detail::kRcp, mode, a, 0, 0);    \
    }                                                                                              \
    inline double __dadd##suffix(double a, double b) {                                             \
        return ::memplace::emu::detail::roundedD(::memplace::emu::detail::kAdd, mode, a, b, 0);    \
    }                                                                                              \
    inline double __dsub##suffix(double a, double b) {                                             \
        return ::memplace::emu::detail::roundedD(::memplace::emu::detail::kSub, mode, a, b, 0);    \
    }                                                                                              \
    inline double __dmul##suffix(double a, double b) {                                             \
        return ::memplace::emu::detail::roundedD(::memplace::emu::detail::kMul, mode, a, b, 0);    \
    }                                                                                              \
    inline double __ddiv##suffix(double a, double b) {                                             \
        return ::memplace::emu::detail::roundedD(::memplace::emu::detail::kDiv, mode, a, b, 0);    \
    }                                                                                              \
    inline double __fma##suffix(double a, double b, double c) {                                    \
        return ::memplace::emu::detail::roundedD(::memplace::emu::detail::kFma, mode, a, b, c);    \
    }                                                                                              \
    inline double __dsqrt##suffix(double a) {                                                      \
        return ::memplace::emu::detail::roundedD(::memplace::emu::detail::kSqrt, mode, a, 0, 0);   \
    }                                                                                              \
    inline double __drcp##suffix(double a) {                                                       \
        return ::memplace::emu::detail::roundedD(::memplace::emu::detail::kRcp, mode, a, 0, 0);    \
    }
MEMPLACE_EMU_RND(_rz, 1)
MEMPLACE_EMU_RND(_ru, 2)
MEMPLACE_EMU_RND(_rd, 3)
#undef MEMPLACE_EMU_RND
inline float __fadd_rn(float a, float b) {
    return a + b;
}
inline float __fsub_rn(float a, float b) {
    return a - b;
}
inline float __fmul_rn(float a, float b) {
    return a * b;
}
inline float __fdiv_rn(float a, float b) {
    return a / b;
}
inline float __fmaf_rn(float a, float b, float c) {
    return std::fma(a, b, c);
}
inline float __fsqrt_rn(float a) {
    return std::sqrt(a);
}
inline float __frcp_rn(float a) {
    return 1.0f / a;
}
inline double __dadd_rn(double a, double b) {
    return a + b;
}
inline double __dsub_rn(double a, double b) {
    return a - b;
}
inline double __dmul_rn(double a, double b) {
    return a * b;
}
inline double __ddiv_rn(double a, double b) {
    return a / b;
}
inline double __fma_rn(double a, double b, double c) {
    return std::fma(a, b, c);
}
inline double __dsqrt_rn(double a) {
    return std::sqrt(a);
}
inline double __drcp_rn(double a) {
    return 1.0 / a;
}
inline float __frsqrt_rn(float a) {
    return 1.0f / std::sqrt(a);
}

// ---- fast intrinsics (exact on the host) -----------------------------------------------------

inline float __fdividef(float a, float b) {
    return a / b;
}
inline float fdividef(float a, float b) {
    return a / b;
}
inline float __expf(float x) {
    return std::exp(x);
}
inline float __exp10f(float x) {
    return std::pow(10.0f, x);
}
inline float __logf(float x) {
    return std::log(x);
}
inline float __log2f(float x) {
    return std::log2(x);
}
inline float __log10f(float x) {
    return std::log10(x);
}
inline float __sinf(float x) {
    return std::sin(x);
}
inline float __cosf(float x) {
    return std::cos(x);
}
inline float __tanf(float x) {
    return std::tan(x);
}
inline void __sincosf(float x, float* s, float* c) {
    *s = std::sin(x);
    *c = std::cos(x);
}
inline float __powf(float x, float y) {
    return std::pow(x, y);
}
inline float __saturatef(float x) {
    return std::isnan(x) ? 0.0f : (x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x));
}

// ---- functions CUDA adds to the C library ----------------------------------------------------

inline float rsqrtf(float x) {
    return 1.0f / std::sqrt(x);
}
inline double rsqrt(double x) {
    return 1.0 / std::sqrt(x);
}
inline float rcbrtf(float x) {
    return 1.0f / std::cbrt(x);
}
inline double rcbrt(double x) {
    return 1.0 / std::cbrt(x);
}
inline float sinpif(float x) {
    return std::sin(static_cast<float>(M_PI) * x);
}
inline double sinpi(double x) {
    return std::sin(M_PI * x);
}
inline float cospif(float x) {
    return std::cos(static_cast<float>(M_PI) * x);
}
inline double cospi(double x) {
    return std::cos(M_PI * x);
}
inline void sincospif(float x, float* s, float* c) {
    *s = sinpif(x);
    *c = cospif(x);
}
inline void sincospi(double x, double* s, double* c) {
    *s = sinpi(x);
    *c = cospi(x);
}
inline float normcdff(float x) {
    return 0.5f * std::erfc(-x / std::sqrt(2.0f));
}
inline double normcdf(double x) {
    return 0.5 * std::erfc(-x / std::sqrt(2.0));
}
inline float norm3df(float a, float b, float c) {
    return std::sqrt(a * a + b * b + c * c);
}
inline float rnorm3df(float a, float b, float c) {
    return 1.0f / std::sqrt(a * a + b * b + c * c);
}
inline float norm4df(float a, float b, float c, float d) {
    return std::sqrt(a * a + b * b + c * c + d * d);
}
inline float rhypotf(float a, float b) {
    return 1.0f / std::hypot(a, b);
}
inline double rhypot(double a, double b) {
    return 1.0 / std::hypot(a, b);
}
inline float saturatef(float x) {
    return __saturatef(x);
}

// Arithmetic and conversions under a directed rounding mode (CUDA's _rz, _ru, _rd intrinsics),
// computed exactly by switching the FPU's rounding mode around one operation. This file is
// compiled with -frounding-math so that the compiler keeps the operations after fesetround.
#include "memplace/emu/cuda_emu.h"

#include <cfenv>
#include <cmath>

#pragma STDC FENV_ACCESS ON

namespace memplace::emu::detail {
namespace {

int fenvMode(int mode) {
    switch (mode) {
    case 1:
        return FE_TOWARDZERO;
    case 2:
        return FE_UPWARD;
    case 3:
        return FE_DOWNWARD;
    default:
        return FE_TONEAREST;
    }
}

struct RoundingScope {
    int saved;
    explicit RoundingScope(int mode) : saved(std::fegetround()) { std::fesetround(fenvMode(mode)); }
    ~RoundingScope() { std::fesetround(saved); }
};

template <class T>
T compute(int op, T a0, T b0, T c0) {
    volatile T a = a0, b = b0, c = c0;
    switch (op) {
    case kAdd:
        return a + b;
    case kSub:
        return a - b;
    case kMul:
        return a * b;
    case kDiv:
        return a / b;
    case kFma:
        return std::fma(static_cast<T>(a), static_cast<T>(b), static_cast<T>(c));
    case kSqrt:
        return std::sqrt(static_cast<T>(a));
    case kRcp:
        return T(1) / a;
    default:
        return a;
    }
}

} // namespace

float roundedF(int op, int mode, float a, float b, float c) {
    RoundingScope scope(mode);
    volatile float r = compute<float>(op, a, b, c);
    return r;
}

double roundedD(int op, int mode, double a, double b, double c) {
    RoundingScope scope(mode);
    volatile double r = compute<double>(op, a, b, c);
    return r;
}

float intToFloat(long long v, bool isUnsigned, int mode) {
    RoundingScope scope(mode);
    volatile float r =
        isUnsigned ? static_cast<float>(static_cast<unsigned long long>(v)) : static_cast<float>(v);
    return r;
}

double intToDouble(long long v, bool isUnsigned, int mode) {
    RoundingScope scope(mode);
    volatile double r = isUnsigned ? static_cast<double>(static_cast<unsigned long long>(v))
                                   : static_cast<double>(v);
    return r;
}

float doubleToFloat(double v, int mode) {
    RoundingScope scope(mode);
    volatile double in = v;
    volatile float r = static_cast<float>(in);
    return r;
}

} // namespace memplace::emu::detail

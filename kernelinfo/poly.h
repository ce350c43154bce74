// Poly: a polynomial with integer coefficients over named symbols, the arithmetic of index
// expressions. `2*blockDim.x*n + threadIdx.x - 1` is three monomials. The frontend builds index
// expressions from it; KernelInfo stores affine coefficients and loop bounds in it; later stages
// evaluate it once the symbols (blockDim.x, a kernel parameter n, ...) have values.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memplace::kernelinfo {

/// scale * product(symbols). `symbols` is sorted; a symbol appears once per power.
struct Monomial {
    int64_t scale = 0;
    std::vector<std::string> symbols;

    bool operator==(const Monomial&) const = default;
};

class Poly {
public:
    Poly() = default; ///< the zero polynomial
    static Poly constant(int64_t value);
    static Poly symbol(std::string name);

    Poly operator+(const Poly& other) const;
    Poly operator-(const Poly& other) const;
    Poly operator*(const Poly& other) const;
    Poly operator-() const;
    Poly& operator+=(const Poly& other) { return *this = *this + other; }
    bool operator==(const Poly& other) const {
        return overflow_ == other.overflow_ && monomials_ == other.monomials_;
    }

    /// Canonical form: merged, without zero scales, ordered by degree then symbols.
    const std::vector<Monomial>& monomials() const { return monomials_; }
    bool isZero() const { return monomials_.empty(); }
    bool isConstant() const;
    /// The value of a constant polynomial.
    std::optional<int64_t> constantValue() const;
    /// True when some operation overflowed int64: the value is meaningless.
    bool overflowed() const { return overflow_; }
    /// Whether any monomial mentions a symbol for which `pred` holds.
    bool mentions(const std::function<bool(const std::string&)>& pred) const;
    /// The exact quotient by a non-zero integer, when every scale is divisible by it.
    std::optional<Poly> divideExact(int64_t divisor) const;
    /// The value with every symbol given by `lookup`; nullopt when a symbol has none.
    std::optional<int64_t>
    evaluate(const std::function<std::optional<int64_t>(const std::string&)>& lookup) const;

    /// "2*n*blockDim.x + threadIdx.x - 1"; "0" for zero. Parsed back by `parse`.
    std::string toString() const;
    /// Parses the form `toString` prints: a sum of products of integers and symbols
    /// (identifiers, possibly with `.` as in `blockDim.x`), with `+`, `-`, `*`.
    static std::optional<Poly> parse(std::string_view text);

private:
    void normalize();
    std::vector<Monomial> monomials_;
    bool overflow_ = false;
};

} // namespace memplace::kernelinfo

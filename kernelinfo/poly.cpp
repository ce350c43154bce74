#include "kernelinfo/poly.h"

#include <algorithm>
#include <cctype>

namespace memplace::kernelinfo {

namespace {

bool monomialLess(const Monomial& a, const Monomial& b) {
    if (a.symbols.size() != b.symbols.size()) {
        return a.symbols.size() > b.symbols.size(); // higher degree first, constant last
    }
    return a.symbols < b.symbols;
}

} // namespace

Poly Poly::constant(int64_t value) {
    Poly p;
    if (value != 0) {
        p.monomials_.push_back({value, {}});
    }
    return p;
}

Poly Poly::symbol(std::string name) {
    Poly p;
    p.monomials_.push_back({1, {std::move(name)}});
    return p;
}

void Poly::normalize() {
    std::sort(monomials_.begin(), monomials_.end(), monomialLess);
    std::vector<Monomial> merged;
    for (auto& m : monomials_) {
        if (!merged.empty() && merged.back().symbols == m.symbols) {
            if (__builtin_add_overflow(merged.back().scale, m.scale, &merged.back().scale)) {
                overflow_ = true;
            }
        } else {
            merged.push_back(std::move(m));
        }
    }
    std::erase_if(merged, [](const Monomial& m) { return m.scale == 0; });
    monomials_ = std::move(merged);
}

Poly Poly::operator+(const Poly& other) const {
    Poly r = *this;
    r.overflow_ = overflow_ || other.overflow_;
    r.monomials_.insert(r.monomials_.end(), other.monomials_.begin(), other.monomials_.end());
    r.normalize();
    return r;
}

Poly Poly::operator-() const {
    Poly r = *this;
    for (auto& m : r.monomials_) {
        if (__builtin_sub_overflow(int64_t{0}, m.scale, &m.scale)) {
            r.overflow_ = true;
        }
    }
    return r;
}

Poly Poly::operator-(const Poly& other) const {
    return *this + (-other);
}

Poly Poly::operator*(const Poly& other) const {
    Poly r;
    r.overflow_ = overflow_ || other.overflow_;
    for (const auto& a : monomials_) {
        for (const auto& b : other.monomials_) {
            Monomial m;
            if (__builtin_mul_overflow(a.scale, b.scale, &m.scale)) {
                r.overflow_ = true;
            }
            m.symbols = a.symbols;
            m.symbols.insert(m.symbols.end(), b.symbols.begin(), b.symbols.end());
            std::sort(m.symbols.begin(), m.symbols.end());
            r.monomials_.push_back(std::move(m));
        }
    }
    r.normalize();
    return r;
}

bool Poly::isConstant() const {
    return monomials_.empty() || (monomials_.size() == 1 && monomials_[0].symbols.empty());
}

std::optional<int64_t> Poly::constantValue() const {
    if (overflow_ || !isConstant()) {
        return std::nullopt;
    }
    return monomials_.empty() ? 0 : monomials_[0].scale;
}

bool Poly::mentions(const std::function<bool(const std::string&)>& pred) const {
    for (const auto& m : monomials_) {
        for (const auto& s : m.symbols) {
            if (pred(s)) {
                return true;
            }
        }
    }
    return false;
}

std::optional<Poly> Poly::divideExact(int64_t divisor) const {
    if (divisor == 0 || overflow_) {
        return std::nullopt;
    }
    Poly r = *this;
    for (auto& m : r.monomials_) {
        if (m.scale % divisor != 0) {
            return std::nullopt;
        }
        m.scale /= divisor;
    }
    return r;
}

std::optional<int64_t>
Poly::evaluate(const std::function<std::optional<int64_t>(const std::string&)>& lookup) const {
    if (overflow_) {
        return std::nullopt;
    }
    int64_t total = 0;
    for (const auto& m : monomials_) {
        int64_t v = m.scale;
        for (const auto& s : m.symbols) {
            auto x = lookup(s);
            if (!x || __builtin_mul_overflow(v, *x, &v)) {
                return std::nullopt;
            }
        }
        if (__builtin_add_overflow(total, v, &total)) {
            return std::nullopt;
        }
    }
    return total;
}

std::string Poly::toString() const {
    if (monomials_.empty()) {
        return "0";
    }
    std::string out;
    bool first = true;
    for (const auto& m : monomials_) {
        int64_t s = m.scale;
        bool negative = s < 0;
        uint64_t mag = negative ? 0 - static_cast<uint64_t>(s) : static_cast<uint64_t>(s);
        if (first) {
            out += negative ? "-" : "";
        } else {
            out += negative ? " - " : " + ";
        }
        first = false;
        std::string body;
        if (mag != 1 || m.symbols.empty()) {
            body = std::to_string(mag);
        }
        for (const auto& sym : m.symbols) {
            body += body.empty() ? sym : "*" + sym;
        }
        out += body;
    }
    return out;
}

std::optional<Poly> Poly::parse(std::string_view text) {
    size_t pos = 0;
    auto skipSpace = [&] {
        while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) {
            ++pos;
        }
    };
    auto isSymbolChar = [](char c, bool first) {
        return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
               (!first && (std::isdigit(static_cast<unsigned char>(c)) || c == '.'));
    };
    Poly result;
    bool firstTerm = true;
    while (true) {
        skipSpace();
        int64_t sign = 1;
        if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
            sign = text[pos] == '-' ? -1 : 1;
            ++pos;
            skipSpace();
        } else if (!firstTerm) {
            break;
        }
        firstTerm = false;
        Poly term = Poly::constant(sign);
        bool any = false;
        while (true) {
            skipSpace();
            if (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
                uint64_t v = 0;
                while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
                    if (__builtin_mul_overflow(v, 10u, &v) ||
                        __builtin_add_overflow(v, static_cast<uint64_t>(text[pos] - '0'), &v)) {
                        return std::nullopt;
                    }
                    ++pos;
                }
                if (v > static_cast<uint64_t>(INT64_MAX)) {
                    return std::nullopt;
                }
                term = term * Poly::constant(static_cast<int64_t>(v));
            } else if (pos < text.size() && isSymbolChar(text[pos], true)) {
                size_t start = pos;
                while (pos < text.size() && isSymbolChar(text[pos], false)) {
                    ++pos;
                }
                term = term * Poly::symbol(std::string(text.substr(start, pos - start)));
            } else {
                return std::nullopt;
            }
            any = true;
            skipSpace();
            if (pos < text.size() && text[pos] == '*') {
                ++pos;
                continue;
            }
            break;
        }
        if (!any) {
            return std::nullopt;
        }
        result = result + term;
    }
    skipSpace();
    if (pos != text.size() || result.overflowed()) {
        return std::nullopt;
    }
    return result;
}

} // namespace memplace::kernelinfo

// Per warp request: the distinct lines its lanes touch and the transactions a memory's
// serialization condition counts for it. Internal to the model's analysis; inline because the
// record pass and the reuse pass call these once per record (the analysis's hot loops).
#pragma once

#include "spec/spec.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

namespace memplace::model::detail {

using spec::ConditionVar;
using spec::TransactionCounter;

inline uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/// A set of at most 128 keys, emptied in O(1).
class SmallSet {
public:
    static constexpr size_t kSlots = 256;
    static constexpr size_t kMaxKeys = kSlots / 2;
    void clear() {
        if (++current_ == 0) {
            std::fill(std::begin(stamp_), std::end(stamp_), 0u);
            current_ = 1;
        }
        size_ = 0;
    }
    /// True when `k` is new. Needs size() < kMaxKeys.
    bool insert(uint64_t k) {
        size_t i = mix64(k) & (kSlots - 1);
        while (stamp_[i] == current_) {
            if (keys_[i] == k) {
                return false;
            }
            i = (i + 1) & (kSlots - 1);
        }
        stamp_[i] = current_;
        keys_[i] = k;
        ++size_;
        return true;
    }
    size_t size() const { return size_; }

private:
    uint64_t keys_[kSlots] = {};
    uint32_t stamp_[kSlots] = {};
    uint32_t current_ = 0;
    size_t size_ = 0;
};

/// Removes repeats from `v`, keeping first occurrences in order.
inline void dedupe(std::vector<uint64_t>& v, SmallSet& set) {
    // Common case: non-decreasing (coalesced lanes).
    bool sorted = true;
    for (size_t i = 1; i < v.size(); ++i) {
        if (v[i] < v[i - 1]) {
            sorted = false;
            break;
        }
    }
    if (sorted) {
        v.erase(std::unique(v.begin(), v.end()), v.end());
        return;
    }
    if (v.size() > SmallSet::kMaxKeys) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
        return;
    }
    set.clear();
    size_t k = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        if (set.insert(v[i])) {
            v[k++] = v[i];
        }
    }
    v.resize(k);
}

/// Distinct lines the lanes touch, in order of first touch; an element that crosses a line
/// boundary touches every line it covers.
inline size_t linesOf(std::span<const int64_t> offs, uint64_t elem, uint64_t lineBytes, int shift,
                      std::vector<uint64_t>& out, SmallSet& set) {
    out.clear();
    const bool whole = elem <= lineBytes && lineBytes % elem == 0; // never crosses a line
    if (whole) {
        // Fast path: lanes in ascending order (coalesced, strided, uniform).
        uint64_t prev = 0;
        bool ascending = true;
        for (int64_t o : offs) {
            uint64_t a = static_cast<uint64_t>(o) * elem;
            uint64_t l = shift >= 0 ? a >> shift : a / lineBytes;
            if (!out.empty()) {
                if (l == prev) {
                    continue;
                }
                if (l < prev) {
                    ascending = false;
                    break;
                }
            }
            out.push_back(l);
            prev = l;
        }
        if (ascending) {
            return out.size();
        }
        out.clear();
        set.clear();
        for (int64_t o : offs) {
            uint64_t a = static_cast<uint64_t>(o) * elem;
            uint64_t l = shift >= 0 ? a >> shift : a / lineBytes;
            if (set.insert(l)) {
                out.push_back(l);
            }
        }
        return out.size();
    }
    for (int64_t o : offs) {
        uint64_t a = static_cast<uint64_t>(o) * elem;
        uint64_t last = (a + elem - 1) / lineBytes;
        for (uint64_t l = a / lineBytes; l <= last; ++l) {
            out.push_back(l);
        }
    }
    dedupe(out, set);
    return out.size();
}

inline int shiftOf(uint64_t v) {
    return std::has_single_bit(v) ? std::countr_zero(v) : -1;
}

/// Memories whose serialization conditions count alike share one counting pass.
struct ConditionGroup {
    TransactionCounter counter;
    uint64_t blockSize = 32;
    uint64_t wordSize = 4;
    std::vector<size_t> memories;
    bool sectors32 = false; ///< counts distinct 32-byte lines (with spans): reuse the pass's lines
};

inline uint32_t countTransactions(const ConditionGroup& g, std::span<const int64_t> offs,
                                  uint64_t elem, std::vector<uint64_t>& keys, SmallSet& set) {
    const TransactionCounter& c = g.counter;
    const size_t n = offs.size();
    auto keyOf = [&](int64_t o) -> uint64_t {
        switch (c.keyVariable()) {
        case ConditionVar::Address1:
        case ConditionVar::Address2:
            return static_cast<uint64_t>(o) * elem;
        case ConditionVar::Word1:
        case ConditionVar::Word2:
            return static_cast<uint64_t>(o) * elem / g.wordSize;
        default:
            return static_cast<uint64_t>(o);
        }
    };
    switch (c.strategy()) {
    case TransactionCounter::Strategy::Never:
        return n == 0 ? 0 : 1;
    case TransactionCounter::Strategy::Always:
        return static_cast<uint32_t>(n);
    case TransactionCounter::Strategy::Distinct: {
        auto d = static_cast<uint64_t>(c.keyDivisor());
        bool address =
            c.keyVariable() == ConditionVar::Address1 || c.keyVariable() == ConditionVar::Address2;
        if (address && d >= g.blockSize && elem > 1) {
            return static_cast<uint32_t>(linesOf(offs, elem, d, shiftOf(d), keys, set));
        }
        keys.clear();
        for (size_t i = 0; i < n; ++i) {
            keys.push_back(keyOf(offs[i]) / d);
        }
        dedupe(keys, set);
        return static_cast<uint32_t>(keys.size());
    }
    case TransactionCounter::Strategy::BankConflict: {
        keys.clear();
        for (size_t i = 0; i < n; ++i) {
            keys.push_back(keyOf(offs[i]));
        }
        dedupe(keys, set);
        auto banks = static_cast<uint64_t>(c.bankModulus());
        uint32_t counts[256];
        if (banks <= 256) {
            std::fill(counts, counts + banks, 0u);
            uint32_t best = 0;
            for (uint64_t w : keys) {
                best = std::max(best, ++counts[w % banks]);
            }
            return best;
        }
        for (auto& w : keys) {
            w %= banks;
        }
        std::sort(keys.begin(), keys.end());
        uint32_t best = 0;
        for (size_t i = 0; i < keys.size();) {
            size_t j = i;
            while (j < keys.size() && keys[j] == keys[i]) {
                ++j;
            }
            best = std::max(best, static_cast<uint32_t>(j - i));
            i = j;
        }
        return best;
    }
    case TransactionCounter::Strategy::General: {
        spec::LaneAccess la[32];
        for (size_t i = 0; i < n; ++i) {
            la[i] = {offs[i], offs[i] * static_cast<int64_t>(elem)};
        }
        return c.countGeneral(std::span<const spec::LaneAccess>(la, n));
    }
    }
    return 1;
}

} // namespace memplace::model::detail

#include "model/reuse.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace memplace::model {

uint64_t Histogram::binLow(uint32_t bin) {
    if (bin < kExact) {
        return bin;
    }
    uint32_t e = 4 + (bin - kExact) / kSub;
    uint64_t sub = (bin - kExact) % kSub;
    return (8 + sub) << (e - 3);
}

uint64_t Histogram::binHigh(uint32_t bin) {
    if (bin < kExact) {
        return bin + 1;
    }
    uint32_t e = 4 + (bin - kExact) / kSub;
    uint64_t sub = (bin - kExact) % kSub;
    if (e == 63 && sub == 7) {
        return std::numeric_limits<uint64_t>::max();
    }
    return (9 + sub) << (e - 3);
}

void Histogram::merge(const Histogram& other) {
    if (!other.bins_.empty()) {
        if (bins_.empty()) {
            bins_.assign(kBins, 0.0);
        }
        for (uint32_t b = 0; b < kBins; ++b) {
            bins_[b] += other.bins_[b];
        }
    }
    reuses_ += other.reuses_;
    cold_ += other.cold_;
}

void Histogram::warmCold(double fraction, uint64_t distance) {
    const double moved = cold_ * std::clamp(fraction, 0.0, 1.0);
    if (moved <= 0 || distance == kColdDistance) {
        return;
    }
    cold_ -= moved;
    reuses_ += moved;
    if (bins_.empty()) {
        bins_.assign(kBins, 0.0);
    }
    // Evenly over [0, distance): each bin gets the share of that range it covers.
    const auto d = static_cast<double>(distance);
    for (uint32_t b = 0; b < kBins && static_cast<double>(binLow(b)) < d; ++b) {
        const double covered =
            std::min(d, static_cast<double>(binHigh(b))) - static_cast<double>(binLow(b));
        bins_[b] += moved * covered / d;
    }
}

void Histogram::finalize() {
    if (bins_.empty()) {
        prefix_.clear(); // no reuse: countBelow() answers 0 without prefix sums
        return;
    }
    prefix_.assign(kBins + 1, 0.0);
    for (uint32_t b = 0; b < kBins; ++b) {
        prefix_[b + 1] = prefix_[b] + bins_[b];
    }
}

double Histogram::countBelow(double capacityLines) const {
    if (capacityLines <= 0 || reuses_ == 0 || bins_.empty()) {
        return 0;
    }
    if (prefix_.empty()) {
        // Not finalized: sum directly (slow path, correct).
        Histogram copy = *this;
        copy.finalize();
        return copy.countBelow(capacityLines);
    }
    if (capacityLines >= 1.8e19) {
        return reuses_;
    }
    // A hit needs distance < C; distances are integers, so distance < ceil(C).
    auto c = static_cast<uint64_t>(std::ceil(capacityLines));
    uint32_t b = binOf(c);
    double low = static_cast<double>(binLow(b));
    double high = static_cast<double>(binHigh(b));
    double part = (static_cast<double>(c) - low) / (high - low);
    return prefix_[b] + bins_[b] * std::clamp(part, 0.0, 1.0);
}

double Histogram::hitFraction(double capacityLines) const {
    double t = total();
    return t > 0 ? countBelow(capacityLines) / t : 0.0;
}

std::vector<double> Histogram::log2Buckets() const {
    std::vector<double> out;
    for (uint32_t b = 0; b < bins_.size(); ++b) {
        if (bins_[b] == 0) {
            continue;
        }
        uint64_t low = binLow(b);
        size_t k = low == 0 ? 0 : static_cast<size_t>(64 - std::countl_zero(low));
        if (out.size() <= k) {
            out.resize(k + 1, 0.0);
        }
        out[k] += bins_[b];
    }
    return out;
}

// ---------------------------------------------------------------------------------------------

namespace {
// A multiple of 64. Small: a trace of 65535 arrays has a stack per array and cache kind, and
// 1024 slots each took 1.7 GB; the stack doubles as it fills.
constexpr uint32_t kMinCap = 64;
constexpr uint64_t kEmpty = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kDenseLimit = uint64_t{1} << 26;

uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}
} // namespace

KeyTable::KeyTable(uint64_t keyRange, uint64_t expectedKeys) {
    dense_ = keyRange <= kDenseLimit &&
             keyRange <= std::max<uint64_t>(uint64_t{1} << 16, 8 * expectedKeys);
    if (dense_) {
        denseTable_.assign(keyRange, 0);
    } else {
        keys_.assign(1024, kEmpty);
        values_.assign(1024, 0);
    }
}

uint32_t KeyTable::get(uint64_t key) const {
    if (dense_) {
        return key < denseTable_.size() ? denseTable_[key] : 0;
    }
    size_t mask = keys_.size() - 1;
    for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
        if (keys_[i] == key) {
            return values_[i];
        }
        if (keys_[i] == kEmpty) {
            return 0;
        }
    }
}

uint32_t& KeyTable::atSlow(uint64_t key) {
    if (dense_) {
        if (key >= denseTable_.size()) {
            denseTable_.resize(key + 1, 0);
        }
        return denseTable_[key];
    }
    size_t mask = keys_.size() - 1;
    size_t i = mix(key) & mask;
    while (keys_[i] != kEmpty) {
        if (keys_[i] == key) {
            return values_[i];
        }
        i = (i + 1) & mask;
    }
    if ((used_ + 1) * 2 > keys_.size()) {
        std::vector<uint64_t> oldKeys(keys_.size() * 2, kEmpty);
        std::vector<uint32_t> oldValues(keys_.size() * 2, 0);
        oldKeys.swap(keys_);
        oldValues.swap(values_);
        mask = keys_.size() - 1;
        for (size_t j = 0; j < oldKeys.size(); ++j) {
            if (oldKeys[j] != kEmpty) {
                size_t k = mix(oldKeys[j]) & mask;
                while (keys_[k] != kEmpty) {
                    k = (k + 1) & mask;
                }
                keys_[k] = oldKeys[j];
                values_[k] = oldValues[j];
            }
        }
        i = mix(key) & mask;
        while (keys_[i] != kEmpty) {
            i = (i + 1) & mask;
        }
    }
    keys_[i] = key;
    values_[i] = 0;
    ++used_;
    return values_[i];
}

void KeyTable::clearAll() {
    if (dense_) {
        std::fill(denseTable_.begin(), denseTable_.end(), 0);
    } else {
        std::fill(keys_.begin(), keys_.end(), kEmpty);
        used_ = 0;
    }
}

StackDistance::StackDistance(uint64_t lineRange, uint64_t expectedAccesses)
    : table_(lineRange, expectedAccesses) {
    cap_ = kMinCap;
    slotLine_.assign(cap_, 0);
    removedBits_.assign(cap_ / 64, 0);
    fenwick_.assign(cap_ / 64 + 1, 0);
}

void StackDistance::compact() {
    uint32_t live = now_ - removed_;
    uint32_t k = 0;
    for (uint32_t s = 0; s < now_; ++s) {
        if (!isRemoved(s)) {
            uint64_t line = slotLine_[s];
            slotLine_[k] = line;
            table_.at(line) = k + 1;
            ++k;
        }
    }
    // Keep at least three quarters of the slots free: compaction then costs O(1) per access.
    while (uint64_t{live} * 4 > cap_) {
        cap_ *= 2;
        slotLine_.resize(cap_);
    }
    removedBits_.assign(cap_ / 64, 0);
    fenwick_.assign(cap_ / 64 + 1, 0);
    now_ = live;
    removed_ = 0;
}

void StackDistance::reset() {
    if (table_.dense()) {
        for (uint32_t s = 0; s < now_; ++s) {
            if (!isRemoved(s)) {
                table_.zero(slotLine_[s]);
            }
        }
    } else {
        table_.clearAll();
    }
    std::fill(removedBits_.begin(), removedBits_.begin() + (now_ + 63) / 64, 0);
    std::fill(fenwick_.begin(), fenwick_.end(), 0);
    now_ = 0;
    removed_ = 0;
}

} // namespace memplace::model

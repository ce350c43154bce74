// Reuse (stack) distance: the number of distinct lines touched between two accesses to the same
// line. An access hits in a fully associative LRU cache of C lines exactly when its distance is
// below C; PORPLE (and the literature it cites) uses that as the estimate for set-associative
// caches too.
//
// StackDistance computes exact distances in O(log n) per access: every access takes the next
// slot; a slot is marked removed when its line is accessed again; the distance of a reuse is the
// number of live slots after the line's previous slot. Removed slots are a bit set with a
// Fenwick tree over its 64-bit words (64 times smaller than one over slots, so it stays in
// cache); slots are compacted when they run out, so the structure stays about twice the number
// of live lines and the total cost is O(N log L) for N accesses to L distinct lines. Histogram
// stores distances in log2 buckets, each split into 8 linear sub-buckets (distances below 16
// exactly), and answers "how many accesses have a distance below C" in O(1) after finalize().
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace memplace::model {

inline constexpr uint64_t kColdDistance = std::numeric_limits<uint64_t>::max();

class Histogram {
public:
    static constexpr uint32_t kExact = 16; ///< distances 0..15 have a bin each
    static constexpr uint32_t kSub = 8;    ///< sub-buckets per octave above that
    static constexpr uint32_t kBins = kExact + (64 - 4) * kSub;

    static uint32_t binOf(uint64_t distance) {
        if (distance < kExact) {
            return static_cast<uint32_t>(distance);
        }
        auto e = static_cast<uint32_t>(63 - std::countl_zero(distance)); // >= 4
        auto sub = static_cast<uint32_t>((distance >> (e - 3)) & 7u);
        return kExact + (e - 4) * kSub + sub;
    }
    static uint64_t binLow(uint32_t bin);  ///< smallest distance in the bin
    static uint64_t binHigh(uint32_t bin); ///< one past the largest

    /// kColdDistance counts as cold.
    void add(uint64_t distance, double weight = 1.0) {
        if (distance == kColdDistance) {
            cold_ += weight;
            return;
        }
        if (bins_.empty()) {
            bins_.assign(kBins, 0.0);
        }
        bins_[binOf(distance)] += weight;
        reuses_ += weight;
    }
    void addCold(double weight = 1.0) { cold_ += weight; }
    /// Turns `fraction` (0..1) of the cold accesses into reuses spread evenly over the
    /// distances below `distance` (finalize() again afterwards): sampled traces, whose first
    /// touches other blocks would have made, in an order the sample does not show. Even
    /// spreading is the independent-reference assumption: an LRU cache holding C of the L lines
    /// such reuses fall on serves C / L of them.
    void warmCold(double fraction, uint64_t distance);
    void merge(const Histogram& other);

    double total() const { return reuses_ + cold_; }
    double reuses() const { return reuses_; }
    double cold() const { return cold_; }
    bool empty() const { return total() == 0; }

    /// Builds the prefix sums countBelow() reads. Call after the last add().
    void finalize();
    /// Accesses whose distance is below `capacityLines` (a hit in an LRU cache of that many
    /// lines), interpolating linearly inside a bin. Needs finalize().
    double countBelow(double capacityLines) const;
    /// countBelow / total, 0 for an empty histogram.
    double hitFraction(double capacityLines) const;

    /// Log2 buckets: entry k counts distances in [2^(k-1), 2^k) (k = 0: distance 0), then
    /// the cold accesses separately.
    std::vector<double> log2Buckets() const;
    /// kBins entries, or none while no reuse was added.
    const std::vector<double>& bins() const { return bins_; }

private:
    /// Allocated at the first reuse: a trace of 65535 arrays has two histograms per array and
    /// cache kind, most of them empty, and 4 KB each took 4 GB.
    std::vector<double> bins_;
    std::vector<double> prefix_; ///< prefix_[b] = sum of bins_[0..b)
    double reuses_ = 0;
    double cold_ = 0;
};

/// A map from line (or element) numbers to a 32-bit value, 0 meaning absent: a dense table
/// when the key range is small enough for the expected number of keys, open addressing
/// otherwise.
class KeyTable {
public:
    KeyTable(uint64_t keyRange, uint64_t expectedKeys);
    /// The value of `key`, inserting 0. The reference stays valid until the next insertion.
    uint32_t& at(uint64_t key) {
        if (dense_ && key < denseTable_.size()) {
            return denseTable_[key];
        }
        return atSlow(key);
    }
    uint32_t get(uint64_t key) const;
    /// Sets `key` to 0 (dense) or forgets every key (hashed: use clearAll()).
    bool dense() const { return dense_; }
    void zero(uint64_t key) {
        if (dense_ && key < dense_table_size()) {
            denseTable_[key] = 0;
        }
    }
    void clearAll();

private:
    uint32_t& atSlow(uint64_t key);
    uint64_t dense_table_size() const { return denseTable_.size(); }
    bool dense_ = true;
    std::vector<uint32_t> denseTable_;
    std::vector<uint64_t> keys_;
    std::vector<uint32_t> values_;
    uint64_t used_ = 0;
};

/// Exact stack distances for one stream of line numbers.
class StackDistance {
public:
    /// `lineRange`: lines are in [0, lineRange). Dense tables are used when that range is small
    /// enough for `expectedAccesses`, a hash table otherwise.
    StackDistance(uint64_t lineRange, uint64_t expectedAccesses);

    /// Distance of an access to `line` since its previous access, or kColdDistance.
    uint64_t access(uint64_t line) {
        uint32_t& ref = table_.at(line);
        uint64_t d = kColdDistance;
        if (ref != 0) {
            const uint32_t p = ref - 1;
            if (p + 1 == now_) {
                return 0; // already the most recent line: nothing moves
            }
            const uint32_t removedAfter = removed_ - removedUpTo(p);
            d = uint64_t{now_} - p - 1 - removedAfter;
            remove(p);
        }
        if (now_ == cap_) {
            compact(); // updates other lines' entries in place; `ref` stays valid
        }
        slotLine_[now_] = line;
        ref = now_ + 1;
        ++now_;
        return d;
    }
    /// Lines touched since the last reset.
    uint64_t distinct() const { return now_ - removed_; }
    /// Forgets everything (a new stream instance, e.g. the next SM's L1).
    void reset();

private:
    void remove(uint32_t slot) {
        removedBits_[slot >> 6] |= uint64_t{1} << (slot & 63);
        ++removed_;
        const uint32_t words = cap_ / 64;
        for (uint32_t i = (slot >> 6) + 1; i <= words; i += i & (0u - i)) {
            ++fenwick_[i];
        }
    }
    /// Removed slots in [0, slot].
    uint32_t removedUpTo(uint32_t slot) const {
        const uint32_t word = slot >> 6;
        uint32_t sum = 0;
        for (uint32_t i = word; i > 0; i -= i & (0u - i)) {
            sum += fenwick_[i];
        }
        const uint32_t bit = slot & 63;
        const uint64_t mask = bit == 63 ? ~uint64_t{0} : (uint64_t{2} << bit) - 1;
        return sum + static_cast<uint32_t>(std::popcount(removedBits_[word] & mask));
    }
    void compact();

    KeyTable table_; ///< line -> slot + 1
    std::vector<uint64_t> slotLine_;
    std::vector<uint64_t> removedBits_; ///< bit per slot: accessed again later
    std::vector<uint32_t> fenwick_;     ///< 1-based, removed slots per 64-slot word
    bool isRemoved(uint32_t slot) const { return (removedBits_[slot >> 6] >> (slot & 63)) & 1u; }
    uint32_t cap_ = 0;
    uint32_t now_ = 0;
    uint32_t removed_ = 0;
};

} // namespace memplace::model

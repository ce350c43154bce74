// What the JIT's files share (internal): the content hash of cache keys and cache entries, and
// the entries' format tag (jit.cpp: cacheKey; jit_cache.cpp: the entries).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace memplace::detail::jit {

/// 64-bit FNV-1a.
struct Fnv {
    uint64_t h;
    void add(const void* data, std::size_t bytes) {
        const auto* p = static_cast<const unsigned char*>(data);
        for (std::size_t i = 0; i < bytes; ++i) {
            h = (h ^ p[i]) * 1099511628211ull;
        }
    }
    void add(const std::string& s) {
        const uint64_t n = s.size();
        add(&n, sizeof n); // length first: no two sequences of strings hash alike by shifting
        add(s.data(), s.size());
    }
};

inline std::string hex64(uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

/// The first line of a cache entry, and part of every cache key: a new format changes both.
constexpr const char* kEntryMagic = "memplace-jit 2";

} // namespace memplace::detail::jit

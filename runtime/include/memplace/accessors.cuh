// Device accessors, one per place. A rewritten kernel is a template over one accessor type per
// array and indexes it as `a[memplace::at<Site>(i)]`. Every accessor is a trivially copyable
// aggregate passed to the kernel by value; the host library fills it in (runtime/src), the CPU
// emulation layer (emu/) will give each a CPU definition of the intrinsics used here.
//
// What `operator[]` returns:
//   - read-only places (ReadOnly, Texture, Texture2D, Constant) and every accessor whose element
//     type is `const T`: the value, `T`;
//   - Global and L2Persist with a non-const T: `T&`;
//   - Shared, Dynamic and Tracing with a non-const T: a proxy with `=`, the compound
//     assignments, `++`, `--`, conversion to T, and `&` (which yields a `T*` to the element, for
//     atomics: shared marks the element dirty, tracing records an atomic access).
#pragma once

#include "common/feasibility.h"
#include "memplace/config.h"
#include "memplace/desc.h"
#include "memplace/fastdiv.h"
#include "memplace/rtc_std.h"
#include "memplace/site.cuh"
#include "memplace/trace_record.h"

#if !defined(__CUDACC_RTC__)
#include <cuda_runtime.h>
#endif
#if defined(MEMPLACE_EMU)
#include "memplace/emu/emu.h"
#include "memplace/emu/profile.h"
#endif

namespace memplace {

namespace detail {

// ---- element types and raw transfers -------------------------------------------------------

template <size_t N>
struct RawType;
template <>
struct RawType<1> {
    using type = unsigned char;
};
template <>
struct RawType<2> {
    using type = unsigned short;
};
template <>
struct RawType<4> {
    using type = unsigned int;
};
template <>
struct RawType<8> {
    using type = uint2;
};
template <>
struct RawType<16> {
    using type = uint4;
};

template <class To, class From>
MEMPLACE_DEV To bitCast(const From& from) {
    static_assert(sizeof(To) == sizeof(From), "bitCast needs equal sizes");
    To to;
    memcpy(&to, &from, sizeof(To));
    return to;
}

/// A load through the read-only (non-coherent) path for any trivially copyable V: a plain load
/// through a `const __restrict__` pointer, which nvcc compiles to LDG.E.CONSTANT exactly as it
/// does the original program's `const T* __restrict__` parameters. Not `__ldg`: CUDA's headers
/// implement it as inline assembly, which stops the compiler from unrolling and batching the
/// loads of a loop (SpMV's row loop ran 2.5x slower that way: decision 031).
/// The restricted pointer must be the array's base (nvcc does not use the qualifier on a
/// pointer already offset by the index).
template <class V>
MEMPLACE_DEV V ldgValue(const V* base, long long i) {
    const V* __restrict__ q = base;
    return q[i];
}

/// The widest unsigned unit that divides sizeof(V) and that V's alignment allows.
template <class V>
inline constexpr size_t kRawUnit = (sizeof(V) % 16 == 0 && alignof(V) >= 16) ? 16
                                   : (sizeof(V) % 8 == 0 && alignof(V) >= 8) ? 8
                                   : (sizeof(V) % 4 == 0 && alignof(V) >= 4) ? 4
                                   : (sizeof(V) % 2 == 0 && alignof(V) >= 2) ? 2
                                                                             : 1;

/// A load through the read-only path with `__ldg`, for any trivially copyable V (read as the
/// widest units its size and alignment allow). The dynamic accessor needs it: there the
/// restricted-pointer load of ldgValue shares its address with the global case, nvcc merges the
/// two, and the load leaves the read-only path (hydro_force's dynamic kernel had no
/// LDG.E.CONSTANT at all).
template <class V>
MEMPLACE_DEV V ldgUnits(const V* p) {
    using U = typename RawType<kRawUnit<V>>::type;
    constexpr int kUnits = static_cast<int>(sizeof(V) / sizeof(U));
    const U* q = reinterpret_cast<const U*>(p);
    U buf[kUnits];
#pragma unroll
    for (int k = 0; k < kUnits; ++k) {
        buf[k] = __ldg(q + k);
    }
    V v;
    memcpy(&v, buf, sizeof(V));
    return v;
}

} // namespace detail

/// Texture feasibility of an element type: trivially copyable with a size of 1, 2, 4, 8 or 16
/// bytes. The texture is created with the unsigned integer format of that size (1, 2 or 4
/// channels of 8 or 32 bits), fetched in element-type read mode with point sampling, and the
/// texel bit-cast back, so the value is bit-identical to a global load. This covers char, short,
/// int, float and their 1/2/4-vector forms, and also double, long long, double2, longlong2 and
/// structs of those sizes. Not texture-feasible: sizes 3, 5-7, 9-15 and above 16 bytes (float3,
/// int3, double3, 12- or 24-byte structs, ...) and types that are not trivially copyable.
template <class T>
inline constexpr bool kTextureFeasible =
    mstd::is_trivially_copyable_v<T> && isTextureElementSize(sizeof(T));

/// The texel type a texture of T is created with and fetched as.
template <class T>
using TexelOf = typename detail::RawType<sizeof(T)>::type;

namespace detail {

template <class V>
MEMPLACE_DEV V texFetch1D(cudaTextureObject_t tex, long long i) {
    using X = TexelOf<V>;
    return bitCast<V>(tex1Dfetch<X>(tex, static_cast<int>(i)));
}

template <class V>
MEMPLACE_DEV V texFetch2D(cudaTextureObject_t tex, const FastDiv& width, long long i) {
    using X = TexelOf<V>;
    const auto li = static_cast<uint32_t>(i);
    const uint32_t row = width.div(li);
    const uint32_t col = li - row * width.d;
    // Point sampling at integer, unnormalised coordinates: texel (col, row) exactly.
    return bitCast<V>(tex2D<X>(tex, static_cast<float>(col), static_cast<float>(row)));
}

// ---- the per-translation-unit constant pool and the dynamic shared memory --------------------

} // namespace detail

// Everything that names the per-translation-unit constant pool has internal linkage, so that
// with -rdc two translation units never share an instantiation that reads the other's pool.
MEMPLACE_TU_BEGIN
namespace tu {
/// The constant place: arrays placed in constant memory are packed here at offsets the runtime
/// chooses and uploaded before each launch (cudaMemcpyToSymbolAsync, device to device).
__constant__ __align__(16) unsigned char constantPool[MEMPLACE_CONSTANT_POOL_BYTES];
} // namespace tu
MEMPLACE_TU_END

namespace detail {

/// The block's dynamic shared memory. The program's own dynamic shared memory (the launch's
/// sharedBytes) comes first; staged arrays and their dirty bitmaps follow at offsets the runtime
/// chose (each 16-byte aligned).
MEMPLACE_DEV unsigned char* dynamicShared() {
    MEMPLACE_DYNAMIC_SHARED(unsigned char, memplaceDynamicShared);
    return memplaceDynamicShared;
}

MEMPLACE_DEV unsigned threadInBlock() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
MEMPLACE_DEV unsigned threadsInBlock() {
    return blockDim.x * blockDim.y * blockDim.z;
}
MEMPLACE_DEV unsigned blockInGrid() {
    return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}

MEMPLACE_DEV void markDirty(unsigned* dirty, long long e) {
    atomicOr(dirty + (e >> 5), 1u << (static_cast<unsigned>(e) & 31u));
}

/// Copies `bytes` from global memory to shared memory with the whole block; dst is 16-aligned.
/// Staged arrays fit in shared memory, so 32-bit counters suffice.
MEMPLACE_DEV void blockCopyIn(unsigned char* dst, const unsigned char* src, unsigned bytes) {
    const unsigned t = threadInBlock();
    const unsigned nt = threadsInBlock();
    unsigned done = 0;
    const auto a = reinterpret_cast<uintptr_t>(src);
    if ((a & 15u) == 0) {
        const unsigned n16 = bytes >> 4;
        for (unsigned k = t; k < n16; k += nt) {
            reinterpret_cast<uint4*>(dst)[k] = reinterpret_cast<const uint4*>(src)[k];
        }
        done = n16 << 4;
    } else if ((a & 3u) == 0) {
        const unsigned n4 = bytes >> 2;
        for (unsigned k = t; k < n4; k += nt) {
            reinterpret_cast<unsigned*>(dst)[k] = reinterpret_cast<const unsigned*>(src)[k];
        }
        done = n4 << 2;
    }
    for (unsigned k = done + t; k < bytes; k += nt) {
        dst[k] = src[k];
    }
}

MEMPLACE_DEV void blockZero(unsigned* words, unsigned n) {
    const unsigned nt = threadsInBlock();
    for (unsigned k = threadInBlock(); k < n; k += nt) {
        words[k] = 0u;
    }
}

/// Copies back the elements of a staged array whose dirty bit is set. Thread t handles
/// elements t, t + nt, ...: with a block size that is a multiple of 32 each warp reads one
/// bitmap word (a broadcast) per step.
template <class V>
MEMPLACE_DEV void blockCopyBackDirty(V* g, const V* s, const unsigned* dirty, unsigned n) {
    const unsigned nt = threadsInBlock();
    for (unsigned e = threadInBlock(); e < n; e += nt) {
        if ((dirty[e >> 5] >> (e & 31u)) & 1u) {
            g[e] = s[e];
        }
    }
}

// ---- proxies for writable places -----------------------------------------------------------

/// The operators every element proxy offers, from Derived::load(), store() and address().
template <class Derived, class V>
struct RefOps {
    MEMPLACE_DEV const Derived& self() const { return static_cast<const Derived&>(*this); }

    MEMPLACE_DEV operator V() const { return self().load(); } // NOLINT(google-explicit-constructor)

    template <class U>
    MEMPLACE_DEV const Derived& operator+=(const U& u) const {
        V t = self().load();
        t += u;
        self().store(t);
        return self();
    }
    template <class U>
    MEMPLACE_DEV const Derived& operator-=(const U& u) const {
        V t = self().load();
        t -= u;
        self().store(t);
        return self();
    }
    template <class U>
    MEMPLACE_DEV const Derived& operator*=(const U& u) const {
        V t = self().load();
        t *= u;
        self().store(t);
        return self();
    }
    template <class U>
    MEMPLACE_DEV const Derived& operator/=(const U& u) const {
        V t = self().load();
        t /= u;
        self().store(t);
        return self();
    }
    template <class U>
    MEMPLACE_DEV const Derived& operator%=(const U& u) const {
        V t = self().load();
        t %= u;
        self().store(t);
        return self();
    }
    template <class U>
    MEMPLACE_DEV const Derived& operator&=(const U& u) const {
        V t = self().load();
        t &= u;
        self().store(t);
        return self();
    }
    template <class U>
    MEMPLACE_DEV const Derived& operator|=(const U& u) const {
        V t = self().load();
        t |= u;
        self().store(t);
        return self();
    }
    template <class U>
    MEMPLACE_DEV const Derived& operator^=(const U& u) const {
        V t = self().load();
        t ^= u;
        self().store(t);
        return self();
    }
    template <class U>
    MEMPLACE_DEV const Derived& operator<<=(const U& u) const {
        V t = self().load();
        t <<= u;
        self().store(t);
        return self();
    }
    template <class U>
    MEMPLACE_DEV const Derived& operator>>=(const U& u) const {
        V t = self().load();
        t >>= u;
        self().store(t);
        return self();
    }
    MEMPLACE_DEV const Derived& operator++() const {
        V t = self().load();
        ++t;
        self().store(t);
        return self();
    }
    MEMPLACE_DEV const Derived& operator--() const {
        V t = self().load();
        --t;
        self().store(t);
        return self();
    }
    MEMPLACE_DEV V operator++(int) const {
        V t = self().load();
        V u = t;
        ++u;
        self().store(u);
        return t;
    }
    MEMPLACE_DEV V operator--(int) const {
        V t = self().load();
        V u = t;
        --u;
        self().store(u);
        return t;
    }
    /// `&a[i]`, for atomics: a pointer to the element where it lives now.
    MEMPLACE_DEV V* operator&() const { return self().address(); }
};

// Each proxy defines its own operator= (a proxy's assignment stores, it never rebinds). A
// volatile right-hand side (`out[b] = vsdata[0]` in a warp-synchronous reduction) is read once,
// as the original assignment reads it; a const V& cannot bind to it.
#define MEMPLACE_PROXY_ASSIGN(Proxy, V)                                                            \
    MEMPLACE_DEV const Proxy& operator=(const V& v) const {                                        \
        store(v);                                                                                  \
        return *this;                                                                              \
    }                                                                                              \
    MEMPLACE_DEV const Proxy& operator=(const volatile V& v) const {                               \
        const V value = v;                                                                         \
        store(value);                                                                              \
        return *this;                                                                              \
    }                                                                                              \
    MEMPLACE_DEV const Proxy& operator=(const Proxy& o) const {                                    \
        store(o.load());                                                                           \
        return *this;                                                                              \
    }

/// An element of a staged (shared) array: stores mark the element dirty.
template <class V>
struct SharedRef : RefOps<SharedRef<V>, V> {
    V* s;
    unsigned* dirty;
    long long e;

    MEMPLACE_DEV SharedRef(V* s_, unsigned* dirty_, long long e_) : s(s_), dirty(dirty_), e(e_) {}
    SharedRef(const SharedRef&) = default;
    MEMPLACE_DEV V load() const { return s[e]; }
    MEMPLACE_DEV void store(const V& v) const {
        s[e] = v;
        markDirty(dirty, e);
    }
    MEMPLACE_DEV V* address() const {
        markDirty(dirty, e);
        return s + e;
    }
    MEMPLACE_PROXY_ASSIGN(SharedRef, V)
};

} // namespace detail

// ---- the accessors -------------------------------------------------------------------------

/// Global memory: plain loads and stores (L1/L2 cached). The original's place.
template <class T>
struct GlobalAccessor {
    using element_type = T;
    using value_type = mstd::remove_cv_t<T>;
    static constexpr Place kPlace = Place::Global;
    T* p;

    template <int S>
    MEMPLACE_DEV T& operator[](SiteIndex<S> s) const {
        return p[s.i];
    }
};

/// Global access inside the stream's persisting L2 access-policy window (set by the host).
template <class T>
struct L2PersistAccessor {
    using element_type = T;
    using value_type = mstd::remove_cv_t<T>;
    static constexpr Place kPlace = Place::L2Persist;
    T* p;

    template <int S>
    MEMPLACE_DEV T& operator[](SiteIndex<S> s) const {
        return p[s.i];
    }
};

/// The read-only data path (`ld.global.nc`, LDG.E.CONSTANT). Read-only arrays only.
template <class T>
struct ReadOnlyAccessor {
    using element_type = T;
    using value_type = mstd::remove_cv_t<T>;
    static constexpr Place kPlace = Place::ReadOnly;
    const value_type* p;

    template <int S>
    MEMPLACE_DEV value_type operator[](SiteIndex<S> s) const {
        return detail::ldgValue(p, s.i);
    }
};

/// A 1-D linear texture object over the array (tex1Dfetch). The texture may start before the
/// array (the array's address aligned down to the texture alignment): `offset` elements.
template <class T>
struct TextureAccessor {
    using element_type = T;
    using value_type = mstd::remove_cv_t<T>;
    static constexpr Place kPlace = Place::Texture;
    static_assert(kTextureFeasible<value_type>,
                  "element type is not texture-feasible (size must be 1, 2, 4, 8 or 16 bytes)");
    cudaTextureObject_t tex;
    long long offset;

    template <int S>
    MEMPLACE_DEV value_type operator[](SiteIndex<S> s) const {
        return detail::texFetch1D<value_type>(tex, offset + s.i);
    }
};

/// A 2-D pitched texture object over an array indexed as row * width + column: the linear
/// index is split with a FastDiv and fetched with tex2D at (column, row). The texture is over the
/// array itself when its rows meet the pitch alignment, else over a pitched copy the host made.
template <class T>
struct Texture2DAccessor {
    using element_type = T;
    using value_type = mstd::remove_cv_t<T>;
    static constexpr Place kPlace = Place::Texture;
    static_assert(kTextureFeasible<value_type>,
                  "element type is not texture-feasible (size must be 1, 2, 4, 8 or 16 bytes)");
    cudaTextureObject_t tex;
    FastDiv width;

    template <int S>
    MEMPLACE_DEV value_type operator[](SiteIndex<S> s) const {
        return detail::texFetch2D<value_type>(tex, width, s.i);
    }
};

// Accessors that read the constant pool have internal linkage (see tu::constantPool).
MEMPLACE_TU_BEGIN

/// The constant pool: `offset` bytes into this translation unit's `__constant__` pool. Loads
/// compile to LDC / ULDC c[0x3][...]: a broadcast when the warp's lanes read one address.
template <class T>
struct ConstantAccessor {
    using element_type = T;
    using value_type = mstd::remove_cv_t<T>;
    static constexpr Place kPlace = Place::Constant;
    unsigned offset;

    template <int S>
    MEMPLACE_DEV value_type operator[](SiteIndex<S> s) const {
        return reinterpret_cast<const value_type*>(tu::constantPool + offset)[s.i];
    }
};

MEMPLACE_TU_END

/// Which part of an array a block stages. WholeArray: all of it, the same for every block.
/// A tile window for affine accesses (follow-up) provides the same two members with the first
/// element computed from blockIdx (for instance first = dot(blockIdx, blockStride) + base), and
/// count = the tile's extent; the accessor indexes shared memory at i - first.
struct WholeArray {
    template <class A>
    MEMPLACE_DEV static constexpr long long first(const A&) {
        return 0;
    }
};

/// Shared memory: the block stages the array into dynamic shared memory in memplace::stage and,
/// for a written array, copies back the elements it wrote in memplace::unstage (dirty bitmap).
template <class T, class Window = WholeArray>
struct SharedAccessor {
    using element_type = T;
    using value_type = mstd::remove_cv_t<T>;
    static constexpr Place kPlace = Place::Shared;
    value_type* g;         ///< the array in global memory
    long long count;       ///< elements staged
    unsigned sharedOffset; ///< byte offset of the staged copy in dynamic shared memory
    unsigned dirtyOffset;  ///< byte offset of the dirty bitmap (written arrays)
    unsigned copyIn;       ///< 0 for write-only arrays: staging skips the copy-in

    MEMPLACE_DEV value_type* shared() const {
        return reinterpret_cast<value_type*>(detail::dynamicShared() + sharedOffset);
    }
    MEMPLACE_DEV unsigned* dirty() const {
        return reinterpret_cast<unsigned*>(detail::dynamicShared() + dirtyOffset);
    }

    template <int S>
    MEMPLACE_DEV auto operator[](SiteIndex<S> s) const {
        const long long e = s.i - Window::first(*this);
        if constexpr (mstd::is_const_v<T>) {
            return static_cast<value_type>(shared()[e]);
        } else {
            return detail::SharedRef<value_type>(shared(), dirty(), e);
        }
    }
};

// ---- tracing -------------------------------------------------------------------------------

namespace detail {

MEMPLACE_DEV bool blockSampled(const TraceSink& sink) {
    if (sink.sampledBlocks == nullptr) {
        return true;
    }
    const unsigned b = blockInGrid();
    return ((sink.sampledBlocks[b >> 5] >> (b & 31u)) & 1u) != 0;
}

/// Records one access of the calling lane. The lanes now at this point of the code are grouped
/// by (site, array, flags) with __match_any_sync; the lowest lane of each group reserves a
/// record and writes its header, every lane writes its own offset.
MEMPLACE_DEV void traceAccess(const TraceSink& sink, unsigned array, unsigned site, unsigned flags,
                              long long offset) {
    if (!blockSampled(sink)) {
        return;
    }
#if defined(MEMPLACE_EMU)
    // Under the CPU emulation layer the lanes of a warp meet at a warp rendezvous keyed by
    // (site, array, flags): lanes that ran ahead wait for the lanes behind them (ordered by site),
    // so the groups are those of a GPU's reconverged warp (docs/emulation.md). An active profile
    // (memplace/emu/profile.h) only observes the groups, and its real run does not trace.
    const emu::TraceState state = emu::traceState();
    if (state == emu::TraceState::Off) {
        return;
    }
    const emu::WarpGroup g =
        emu::warpRendezvous(emu::rendezvousKey(site, (array << 8) | flags),
                            (static_cast<unsigned long long>(site) << 3) | (flags & 7u), offset);
    if (state == emu::TraceState::Observe || !g.isLeader) {
        return;
    }
    const unsigned long long idx = __atomic_fetch_add(&sink.header->count, 1ull, __ATOMIC_RELAXED);
    if (idx < sink.capacity) {
        TraceRecord& r = sink.records[idx];
        r.block = blockInGrid();
        r.site = site;
        r.warp = static_cast<uint16_t>(g.warp);
        r.array = static_cast<uint16_t>(array);
        r.activeMask = g.mask;
        r.flags = flags;
        r.reserved = 0;
        for (unsigned m = g.mask; m != 0; m &= m - 1) {
            const unsigned l = static_cast<unsigned>(__builtin_ctz(m));
            r.offset[l] = g.values[l];
        }
    }
#else
    const unsigned active = __activemask();
    const unsigned long long key = (static_cast<unsigned long long>(site) << 32) |
                                   (static_cast<unsigned long long>(array) << 8) | flags;
    const unsigned peers = __match_any_sync(active, key);
    const unsigned tib = threadInBlock();
    const unsigned lane = tib & 31u;
    const unsigned leader = __ffs(peers) - 1;
    unsigned long long idx = 0;
    if (lane == leader) {
        idx = atomicAdd(&sink.header->count, 1ull);
    }
    idx = __shfl_sync(peers, idx, leader);
    if (idx < sink.capacity) {
        TraceRecord& r = sink.records[idx];
        r.offset[lane] = offset;
        if (lane == leader) {
            r.block = blockInGrid();
            r.site = site;
            r.warp = static_cast<uint16_t>(tib >> 5);
            r.array = static_cast<uint16_t>(array);
            r.activeMask = peers;
            r.flags = flags;
            r.reserved = 0;
        }
    }
#endif
}

template <class V>
struct TraceRef : RefOps<TraceRef<V>, V> {
    V* p;
    long long i;
    TraceSink sink;
    unsigned array;
    unsigned site;

    MEMPLACE_DEV TraceRef(V* p_, long long i_, const TraceSink& sink_, unsigned array_,
                          unsigned site_)
        : p(p_), i(i_), sink(sink_), array(array_), site(site_) {}
    TraceRef(const TraceRef&) = default;
    MEMPLACE_DEV V load() const {
        traceAccess(sink, array, site, kTraceRead, i);
        return p[i];
    }
    MEMPLACE_DEV void store(const V& v) const {
        traceAccess(sink, array, site, kTraceWrite, i);
        p[i] = v;
    }
    MEMPLACE_DEV V* address() const {
        traceAccess(sink, array, site, kTraceRead | kTraceWrite | kTraceAtomic, i);
        return p + i;
    }
    MEMPLACE_PROXY_ASSIGN(TraceRef, V)
};

} // namespace detail

/// Global access that also records warp-level access records (see TraceRecord) for the sampled
/// blocks into a bounded device buffer. Overflow is counted (header->count > capacity) and
/// reported by the host, never silent.
template <class T>
struct TracingAccessor {
    using element_type = T;
    using value_type = mstd::remove_cv_t<T>;
    static constexpr Place kPlace = Place::Global;
    T* p;
    TraceSink sink;
    unsigned array; ///< index in the kernel descriptor's arrays

    template <int S>
    MEMPLACE_DEV auto operator[](SiteIndex<S> s) const {
        if constexpr (mstd::is_const_v<T>) {
            detail::traceAccess(sink, array, static_cast<unsigned>(S), kTraceRead, s.i);
            return static_cast<value_type>(p[s.i]);
        } else {
            return detail::TraceRef<value_type>(p, s.i, sink, array, static_cast<unsigned>(S));
        }
    }
};

// ---- dynamic -------------------------------------------------------------------------------

namespace detail {
/// The place, hidden from the optimiser at each access. Without this nvcc unswitches the kernel
/// body on the (uniform) place of every array: hydro_force's dynamic instantiation grew to 354k
/// PTX lines (eleven copies of the arithmetic), ran 5x slower than a specialised one, and its
/// copies contracted multiply-adds differently, so its results differed in the last bits from
/// one placement to another (decision 009).
MEMPLACE_DEV Place opaquePlace(Place place) {
#if defined(__CUDA_ARCH__)
    unsigned v = static_cast<unsigned>(place);
    asm volatile("" : "+r"(v));
    return static_cast<Place>(v);
#else
    return place;
#endif
}
} // namespace detail

MEMPLACE_TU_BEGIN

/// Carries every handle and the place chosen at run time, and switches on it per access
/// (PORPLE's fine-grained versioning): one compiled kernel serves every placement. The switch is
/// on a kernel parameter, uniform across the grid.
template <class T>
struct DynamicAccessor {
    using element_type = T;
    using value_type = mstd::remove_cv_t<T>;
    value_type* p;           ///< the array (global, read-only, L2 window, staging source)
    cudaTextureObject_t tex; ///< texture object (1-D, or 2-D when width.d != 0)
    long long texOffset;     ///< 1-D texture: element offset of the array in the texture
    FastDiv width;           ///< 2-D texture: row length
    long long count;         ///< shared: elements staged
    unsigned constOffset;    ///< constant: byte offset in the pool
    unsigned sharedOffset;   ///< shared: byte offset of the staged copy
    unsigned dirtyOffset;    ///< shared: byte offset of the dirty bitmap
    Place place;
    uint8_t copyIn; ///< shared: 0 for write-only arrays

    MEMPLACE_DEV value_type* shared() const {
        return reinterpret_cast<value_type*>(detail::dynamicShared() + sharedOffset);
    }
    MEMPLACE_DEV unsigned* dirty() const {
        return reinterpret_cast<unsigned*>(detail::dynamicShared() + dirtyOffset);
    }

    MEMPLACE_DEV value_type read(long long i) const {
        switch (detail::opaquePlace(place)) {
        case Place::ReadOnly:
            return detail::ldgUnits(p + i);
        case Place::Texture:
            if constexpr (kTextureFeasible<value_type>) {
                return width.d != 0 ? detail::texFetch2D<value_type>(tex, width, i)
                                    : detail::texFetch1D<value_type>(tex, texOffset + i);
            } else {
                return p[i];
            }
        case Place::Constant:
            return reinterpret_cast<const value_type*>(tu::constantPool + constOffset)[i];
        case Place::Shared:
            return shared()[i];
        default: // Global, L2Persist
            return p[i];
        }
    }

    struct Ref : detail::RefOps<Ref, value_type> {
        value_type* g;
        value_type* s; // null unless the array is staged
        unsigned* d;
        long long i;
        MEMPLACE_DEV Ref(value_type* g_, value_type* s_, unsigned* d_, long long i_)
            : g(g_), s(s_), d(d_), i(i_) {}
        Ref(const Ref&) = default;
        MEMPLACE_DEV value_type load() const { return s != nullptr ? s[i] : g[i]; }
        MEMPLACE_DEV void store(const value_type& v) const {
            if (s != nullptr) {
                s[i] = v;
                detail::markDirty(d, i);
            } else {
                g[i] = v;
            }
        }
        MEMPLACE_DEV value_type* address() const {
            if (s != nullptr) {
                detail::markDirty(d, i);
                return s + i;
            }
            return g + i;
        }
        MEMPLACE_PROXY_ASSIGN(Ref, value_type)
    };

    template <int S>
    MEMPLACE_DEV auto operator[](SiteIndex<S> s) const {
        if constexpr (mstd::is_const_v<T>) {
            return read(s.i);
        } else {
            const bool staged = detail::opaquePlace(place) == Place::Shared;
            return Ref(p, staged ? shared() : nullptr, staged ? dirty() : nullptr, s.i);
        }
    }
};

MEMPLACE_TU_END

#undef MEMPLACE_PROXY_ASSIGN

/// `memplace::value(a[at<1>(i)])`: the element's value, for places that return a proxy. Use it
/// where the rewritten body would otherwise deduce a proxy type (`auto v = a[...]`).
namespace detail {
template <class X, class = void>
struct IsProxy : mstd::false_type {};
template <class X>
struct IsProxy<X, mstd::void_t<decltype(mstd::declval<const X&>().load())>> : mstd::true_type {};
} // namespace detail

template <class X>
MEMPLACE_DEV auto value(const X& x) {
    if constexpr (detail::IsProxy<X>::value) {
        return x.load();
    } else {
        return x;
    }
}

/// A local pointer into an array, `const float* row = m + r * cols;`, rewritten as a view of
/// the array's accessor: `auto row = memplace::offset(m, r * cols);`. `row[at<S>(k)]` is
/// `m[at<S>(r * cols + k)]` with the offset evaluated once, where the original computed the
/// pointer; each term is converted to the index type on its own, as in `at`. Works over every
/// accessor (the dynamic and tracing ones too: they see the element's index in the array).
template <class A>
struct OffsetView {
    A a;
    long long offset;
    template <int S>
    MEMPLACE_DEV decltype(auto) operator[](SiteIndex<S> s) const {
        return a[SiteIndex<S>{offset + s.i}];
    }
};

template <class A, class... I>
MEMPLACE_DEV OffsetView<A> offset(const A& a, I... terms) {
    return OffsetView<A>{a, (0LL + ... + static_cast<long long>(terms))};
}

} // namespace memplace

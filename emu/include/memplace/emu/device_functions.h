// Device-side CUDA: barriers, warp collectives, atomics, fences, read-only loads, textures.
// Math intrinsics are in device_math.h.
//
// Barriers and warp collectives block the calling fiber until its partners arrive (see
// docs/emulation.md, "Scheduling"); their source location is captured for error reports.
#pragma once

#include "memplace/emu/enums.h"
#include "memplace/emu/lane.h"
#include "memplace/emu/runtime_types.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <source_location>
#include <string>
#include <type_traits>

namespace memplace::emu::detail {

enum class Coll : unsigned char {
    SyncWarp,
    Shfl,
    ShflUp,
    ShflDown,
    ShflXor,
    Ballot,
    Any,
    All,
    MatchAny,
    MatchAll,
    ReduceAdd,
    ReduceMinU,
    ReduceMaxU,
    ReduceMinS,
    ReduceMaxS,
    ReduceAnd,
    ReduceOr,
    ReduceXor,
};

enum class BarrierKind : unsigned char { Sync, Count, And, Or };

/// Blocks the calling lane until the live lanes of `mask` are at the same collective, then
/// returns this lane's result. `arg` is the source lane, delta or lane mask of shuffles.
unsigned long long warpCollective(Coll op, unsigned mask, unsigned long long value, int arg,
                                  int width, const char* name, const std::source_location& loc);
/// Blocks until every live thread of the block is at a barrier; returns the reduction.
int blockBarrier(BarrierKind kind, int predicate, const char* name,
                 const std::source_location& loc);
/// __activemask(): a warp rendezvous keyed by the call's source location.
unsigned activeMask(const std::source_location& loc);
/// A scheduling point for spin loops (failed atomicCAS, __nanosleep): other threads run.
void spinYield();
/// Stops the kernel with `error`: printed with the kernel and block (see setFatalErrors).
[[noreturn]] void deviceFault(cudaError_t error, const std::string& message);

template <class T>
inline constexpr bool kShuffleable =
    (std::is_arithmetic_v<T> || std::is_enum_v<T>) && sizeof(T) <= 8;

template <class T>
inline unsigned long long toBits(T v) {
    unsigned long long b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
}
template <class T>
inline T fromBits(unsigned long long b) {
    T v;
    std::memcpy(&v, &b, sizeof(T));
    return v;
}

/// Device code may not call this: nested launches (dynamic parallelism) are not emulated.
void checkHostContext(const char* what);

} // namespace memplace::emu::detail

// ---- barriers ----------------------------------------------------------------------------

inline void __syncthreads(std::source_location loc = std::source_location::current()) {
    ::memplace::emu::detail::blockBarrier(::memplace::emu::detail::BarrierKind::Sync, 0,
                                          "__syncthreads", loc);
}
inline int __syncthreads_count(int predicate,
                               std::source_location loc = std::source_location::current()) {
    return ::memplace::emu::detail::blockBarrier(::memplace::emu::detail::BarrierKind::Count,
                                                 predicate, "__syncthreads_count", loc);
}
inline int __syncthreads_and(int predicate,
                             std::source_location loc = std::source_location::current()) {
    return ::memplace::emu::detail::blockBarrier(::memplace::emu::detail::BarrierKind::And,
                                                 predicate, "__syncthreads_and", loc);
}
inline int __syncthreads_or(int predicate,
                            std::source_location loc = std::source_location::current()) {
    return ::memplace::emu::detail::blockBarrier(::memplace::emu::detail::BarrierKind::Or,
                                                 predicate, "__syncthreads_or", loc);
}
inline void __syncwarp(unsigned mask = 0xffffffffu,
                       std::source_location loc = std::source_location::current()) {
    ::memplace::emu::detail::warpCollective(::memplace::emu::detail::Coll::SyncWarp, mask, 0, 0, 32,
                                            "__syncwarp", loc);
}

// ---- warp collectives ----------------------------------------------------------------------

inline unsigned __activemask(std::source_location loc = std::source_location::current()) {
    return ::memplace::emu::detail::activeMask(loc);
}

#define MEMPLACE_EMU_SHFL(fn, op)                                                                  \
    template <class T>                                                                             \
    inline T fn(unsigned mask, T var, int arg, int width = warpSize,                               \
                std::source_location loc = std::source_location::current()) {                      \
        static_assert(::memplace::emu::detail::kShuffleable<T>,                                    \
                      "memplace emu: " #fn " supports scalar types of at most 8 bytes");           \
        return ::memplace::emu::detail::fromBits<T>(::memplace::emu::detail::warpCollective(       \
            ::memplace::emu::detail::Coll::op, mask, ::memplace::emu::detail::toBits(var), arg,    \
            width, #fn, loc));                                                                     \
    }
MEMPLACE_EMU_SHFL(__shfl_sync, Shfl)
MEMPLACE_EMU_SHFL(__shfl_up_sync, ShflUp)
MEMPLACE_EMU_SHFL(__shfl_down_sync, ShflDown)
MEMPLACE_EMU_SHFL(__shfl_xor_sync, ShflXor)
#undef MEMPLACE_EMU_SHFL

inline unsigned __ballot_sync(unsigned mask, int predicate,
                              std::source_location loc = std::source_location::current()) {
    return static_cast<unsigned>(::memplace::emu::detail::warpCollective(
        ::memplace::emu::detail::Coll::Ballot, mask, predicate != 0, 0, 32, "__ballot_sync", loc));
}
inline int __any_sync(unsigned mask, int predicate,
                      std::source_location loc = std::source_location::current()) {
    return static_cast<int>(::memplace::emu::detail::warpCollective(
        ::memplace::emu::detail::Coll::Any, mask, predicate != 0, 0, 32, "__any_sync", loc));
}
inline int __all_sync(unsigned mask, int predicate,
                      std::source_location loc = std::source_location::current()) {
    return static_cast<int>(::memplace::emu::detail::warpCollective(
        ::memplace::emu::detail::Coll::All, mask, predicate != 0, 0, 32, "__all_sync", loc));
}
inline int __uni_sync(unsigned mask, int predicate,
                      std::source_location loc = std::source_location::current()) {
    int all = __all_sync(mask, predicate, loc);
    int any = __any_sync(mask, predicate, loc);
    return all || !any;
}
template <class T>
inline unsigned __match_any_sync(unsigned mask, T value,
                                 std::source_location loc = std::source_location::current()) {
    static_assert((std::is_integral_v<T> || std::is_floating_point_v<T>) && sizeof(T) >= 4 &&
                      sizeof(T) <= 8,
                  "memplace emu: __match_any_sync takes int, unsigned, long, long long and their "
                  "unsigned forms, float or double");
    return static_cast<unsigned>(::memplace::emu::detail::warpCollective(
        ::memplace::emu::detail::Coll::MatchAny, mask, ::memplace::emu::detail::toBits(value), 0,
        32, "__match_any_sync", loc));
}
template <class T>
inline unsigned __match_all_sync(unsigned mask, T value, int* pred,
                                 std::source_location loc = std::source_location::current()) {
    static_assert((std::is_integral_v<T> || std::is_floating_point_v<T>) && sizeof(T) >= 4 &&
                      sizeof(T) <= 8,
                  "memplace emu: __match_all_sync takes int, unsigned, long, long long and their "
                  "unsigned forms, float or double");
    unsigned r = static_cast<unsigned>(::memplace::emu::detail::warpCollective(
        ::memplace::emu::detail::Coll::MatchAll, mask, ::memplace::emu::detail::toBits(value), 0,
        32, "__match_all_sync", loc));
    *pred = r != 0;
    return r;
}

#define MEMPLACE_EMU_REDUCE(fn, T, op)                                                             \
    inline T fn(unsigned mask, T value,                                                            \
                std::source_location loc = std::source_location::current()) {                      \
        return static_cast<T>(::memplace::emu::detail::warpCollective(                             \
            ::memplace::emu::detail::Coll::op, mask,                                               \
            static_cast<unsigned long long>(static_cast<long long>(value)), 0, 32, #fn, loc));     \
    }
MEMPLACE_EMU_REDUCE(__reduce_add_sync, unsigned, ReduceAdd)
MEMPLACE_EMU_REDUCE(__reduce_add_sync, int, ReduceAdd)
MEMPLACE_EMU_REDUCE(__reduce_min_sync, unsigned, ReduceMinU)
MEMPLACE_EMU_REDUCE(__reduce_min_sync, int, ReduceMinS)
MEMPLACE_EMU_REDUCE(__reduce_max_sync, unsigned, ReduceMaxU)
MEMPLACE_EMU_REDUCE(__reduce_max_sync, int, ReduceMaxS)
MEMPLACE_EMU_REDUCE(__reduce_and_sync, unsigned, ReduceAnd)
MEMPLACE_EMU_REDUCE(__reduce_or_sync, unsigned, ReduceOr)
MEMPLACE_EMU_REDUCE(__reduce_xor_sync, unsigned, ReduceXor)
#undef MEMPLACE_EMU_REDUCE

// ---- fences, timing, traps -----------------------------------------------------------------

inline void __threadfence() {
    if (::memplace::emu::detail::t_profileStrict != 0)
        ::memplace::emu::detail::profileDependence(::memplace::emu::detail::Dependence::Fence);
    std::atomic_thread_fence(std::memory_order_seq_cst);
}
inline void __threadfence_block() {
    if (::memplace::emu::detail::t_profileStrict != 0)
        ::memplace::emu::detail::profileDependence(::memplace::emu::detail::Dependence::Fence);
    std::atomic_thread_fence(std::memory_order_seq_cst);
}
inline void __threadfence_system() {
    if (::memplace::emu::detail::t_profileStrict != 0)
        ::memplace::emu::detail::profileDependence(::memplace::emu::detail::Dependence::Fence);
    std::atomic_thread_fence(std::memory_order_seq_cst);
}
inline void __nanosleep(unsigned) {
    ::memplace::emu::detail::spinYield();
}
[[noreturn]] inline void __trap() {
    ::memplace::emu::detail::deviceFault(cudaErrorLaunchFailure, "the kernel executed __trap()");
}
[[noreturn]] inline void __brkpt() {
    ::memplace::emu::detail::deviceFault(cudaErrorLaunchFailure, "the kernel executed __brkpt()");
}
long long clock64();
unsigned long long __globaltimer();

// ---- loads and stores with cache hints: plain accesses on the CPU ---------------------------

template <class T>
inline T __ldg(const T* p) {
    return *p;
}
template <class T>
inline T __ldcg(const T* p) {
    return *p;
}
template <class T>
inline T __ldca(const T* p) {
    return *p;
}
template <class T>
inline T __ldcs(const T* p) {
    return *p;
}
template <class T>
inline T __ldlu(const T* p) {
    return *p;
}
template <class T>
inline T __ldcv(const T* p) {
    return *p;
}
template <class T>
inline void __stwb(T* p, T v) {
    *p = v;
}
template <class T>
inline void __stcg(T* p, T v) {
    *p = v;
}
template <class T>
inline void __stcs(T* p, T v) {
    *p = v;
}
template <class T>
inline void __stwt(T* p, T v) {
    *p = v;
}

// ---- atomics: std::atomic_ref, correct across OS threads -----------------------------------

namespace memplace::emu::detail {
template <class T>
inline std::atomic_ref<T> aref(T* p) {
    if (t_profileStrict != 0)
        profileDependence(Dependence::Atomic);
    return std::atomic_ref<T>(*p);
}
template <class T, class F>
inline T atomicUpdate(T* p, F f) {
    auto r = aref(p);
    T old = r.load(std::memory_order_relaxed);
    while (!r.compare_exchange_weak(old, f(old), std::memory_order_seq_cst)) {
    }
    return old;
}
} // namespace memplace::emu::detail

#define MEMPLACE_EMU_ATOMIC_SCOPES(decl) decl() decl(_block) decl(_system)

#define MEMPLACE_EMU_ADD(S)                                                                        \
    inline int atomicAdd##S(int* a, int v) {                                                       \
        return ::memplace::emu::detail::aref(a).fetch_add(v);                                      \
    }                                                                                              \
    inline unsigned atomicAdd##S(unsigned* a, unsigned v) {                                        \
        return ::memplace::emu::detail::aref(a).fetch_add(v);                                      \
    }                                                                                              \
    inline unsigned long long atomicAdd##S(unsigned long long* a, unsigned long long v) {          \
        return ::memplace::emu::detail::aref(a).fetch_add(v);                                      \
    }                                                                                              \
    inline float atomicAdd##S(float* a, float v) {                                                 \
        return ::memplace::emu::detail::aref(a).fetch_add(v);                                      \
    }                                                                                              \
    inline double atomicAdd##S(double* a, double v) {                                              \
        return ::memplace::emu::detail::aref(a).fetch_add(v);                                      \
    }                                                                                              \
    inline int atomicSub##S(int* a, int v) {                                                       \
        return ::memplace::emu::detail::aref(a).fetch_sub(v);                                      \
    }                                                                                              \
    inline unsigned atomicSub##S(unsigned* a, unsigned v) {                                        \
        return ::memplace::emu::detail::aref(a).fetch_sub(v);                                      \
    }
MEMPLACE_EMU_ATOMIC_SCOPES(MEMPLACE_EMU_ADD)
#undef MEMPLACE_EMU_ADD

// An atomicExch that stores the value already there, or an atomicCAS that fails, is the shape
// of a spin loop: the lane yields so that the thread it waits for can run.
#define MEMPLACE_EMU_EXCH(S)                                                                       \
    template <class T>                                                                             \
    inline T memplaceEmuExch##S(T* a, T v) {                                                       \
        T old = ::memplace::emu::detail::aref(a).exchange(v);                                      \
        if (std::memcmp(&old, &v, sizeof(T)) == 0)                                                 \
            ::memplace::emu::detail::spinYield();                                                  \
        return old;                                                                                \
    }                                                                                              \
    inline int atomicExch##S(int* a, int v) {                                                      \
        return memplaceEmuExch##S(a, v);                                                           \
    }                                                                                              \
    inline unsigned atomicExch##S(unsigned* a, unsigned v) {                                       \
        return memplaceEmuExch##S(a, v);                                                           \
    }                                                                                              \
    inline unsigned long long atomicExch##S(unsigned long long* a, unsigned long long v) {         \
        return memplaceEmuExch##S(a, v);                                                           \
    }                                                                                              \
    inline float atomicExch##S(float* a, float v) {                                                \
        return memplaceEmuExch##S(a, v);                                                           \
    }                                                                                              \
    template <class T>                                                                             \
    inline T memplaceEmuCas##S(T* a, T compare, T v) {                                             \
        T expected = compare;                                                                      \
        if (!::memplace::emu::detail::aref(a).compare_exchange_strong(expected, v)) {              \
            ::memplace::emu::detail::spinYield();                                                  \
        }                                                                                          \
        return expected;                                                                           \
    }                                                                                              \
    inline int atomicCAS##S(int* a, int c, int v) {                                                \
        return memplaceEmuCas##S(a, c, v);                                                         \
    }                                                                                              \
    inline unsigned atomicCAS##S(unsigned* a, unsigned c, unsigned v) {                            \
        return memplaceEmuCas##S(a, c, v);                                                         \
    }                                                                                              \
    inline unsigned long long atomicCAS##S(unsigned long long* a, unsigned long long c,            \
                                           unsigned long long v) {                                 \
        return memplaceEmuCas##S(a, c, v);                                                         \
    }                                                                                              \
    inline unsigned short atomicCAS##S(unsigned short* a, unsigned short c, unsigned short v) {    \
        return memplaceEmuCas##S(a, c, v);                                                         \
    }
MEMPLACE_EMU_ATOMIC_SCOPES(MEMPLACE_EMU_EXCH)
#undef MEMPLACE_EMU_EXCH

#define MEMPLACE_EMU_MINMAX(S)                                                                     \
    template <class T>                                                                             \
    inline T memplaceEmuMin##S(T* a, T v) {                                                        \
        return ::memplace::emu::detail::atomicUpdate(a, [v](T o) { return v < o ? v : o; });       \
    }                                                                                              \
    template <class T>                                                                             \
    inline T memplaceEmuMax##S(T* a, T v) {                                                        \
        return ::memplace::emu::detail::atomicUpdate(a, [v](T o) { return v > o ? v : o; });       \
    }                                                                                              \
    inline int atomicMin##S(int* a, int v) {                                                       \
        return memplaceEmuMin##S(a, v);                                                            \
    }                                                                                              \
    inline unsigned atomicMin##S(unsigned* a, unsigned v) {                                        \
        return memplaceEmuMin##S(a, v);                                                            \
    }                                                                                              \
    inline long long atomicMin##S(long long* a, long long v) {                                     \
        return memplaceEmuMin##S(a, v);                                                            \
    }                                                                                              \
    inline unsigned long long atomicMin##S(unsigned long long* a, unsigned long long v) {          \
        return memplaceEmuMin##S(a, v);                                                            \
    }                                                                                              \
    inline int atomicMax##S(int* a, int v) {                                                       \
        return memplaceEmuMax##S(a, v);                                                            \
    }                                                                                              \
    inline unsigned atomicMax##S(unsigned* a, unsigned v) {                                        \
        return memplaceEmuMax##S(a, v);                                                            \
    }                                                                                              \
    inline long long atomicMax##S(long long* a, long long v) {                                     \
        return memplaceEmuMax##S(a, v);                                                            \
    }                                                                                              \
    inline unsigned long long atomicMax##S(unsigned long long* a, unsigned long long v) {          \
        return memplaceEmuMax##S(a, v);                                                            \
    }                                                                                              \
    inline unsigned atomicInc##S(unsigned* a, unsigned v) {                                        \
        return ::memplace::emu::detail::atomicUpdate(                                              \
            a, [v](unsigned o) { return o >= v ? 0u : o + 1u; });                                  \
    }                                                                                              \
    inline unsigned atomicDec##S(unsigned* a, unsigned v) {                                        \
        return ::memplace::emu::detail::atomicUpdate(                                              \
            a, [v](unsigned o) { return (o == 0u || o > v) ? v : o - 1u; });                       \
    }                                                                                              \
    inline int atomicAnd##S(int* a, int v) {                                                       \
        return ::memplace::emu::detail::aref(a).fetch_and(v);                                      \
    }                                                                                              \
    inline unsigned atomicAnd##S(unsigned* a, unsigned v) {                                        \
        return ::memplace::emu::detail::aref(a).fetch_and(v);                                      \
    }                                                                                              \
    inline unsigned long long atomicAnd##S(unsigned long long* a, unsigned long long v) {          \
        return ::memplace::emu::detail::aref(a).fetch_and(v);                                      \
    }                                                                                              \
    inline int atomicOr##S(int* a, int v) {                                                        \
        return ::memplace::emu::detail::aref(a).fetch_or(v);                                       \
    }                                                                                              \
    inline unsigned atomicOr##S(unsigned* a, unsigned v) {                                         \
        return ::memplace::emu::detail::aref(a).fetch_or(v);                                       \
    }                                                                                              \
    inline unsigned long long atomicOr##S(unsigned long long* a, unsigned long long v) {           \
        return ::memplace::emu::detail::aref(a).fetch_or(v);                                       \
    }                                                                                              \
    inline int atomicXor##S(int* a, int v) {                                                       \
        return ::memplace::emu::detail::aref(a).fetch_xor(v);                                      \
    }                                                                                              \
    inline unsigned atomicXor##S(unsigned* a, unsigned v) {                                        \
        return ::memplace::emu::detail::aref(a).fetch_xor(v);                                      \
    }                                                                                              \
    inline unsigned long long atomicXor##S(unsigned long long* a, unsigned long long v) {          \
        return ::memplace::emu::detail::aref(a).fetch_xor(v);                                      \
    }
MEMPLACE_EMU_ATOMIC_SCOPES(MEMPLACE_EMU_MINMAX)
#undef MEMPLACE_EMU_MINMAX
#undef MEMPLACE_EMU_ATOMIC_SCOPES

// ---- texture fetches -----------------------------------------------------------------------

namespace memplace::emu::detail {
/// Fetches one texel of `obj` into `out` (`size` bytes of the requested type `want`).
/// 1-D: tex1Dfetch on a linear resource, integer x. 2-D: tex2D on a pitch2D resource.
void textureFetch(cudaTextureObject_t obj, const cudaChannelFormatDesc& want, std::size_t size,
                  int dims, int ix, float x, float y, void* out, const char* fn);
} // namespace memplace::emu::detail

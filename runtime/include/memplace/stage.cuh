// memplace::stage(acc...) and memplace::unstage(acc...): the prologue and epilogue of every
// rewritten kernel. For shared accessors (and dynamic accessors whose run-time place is shared)
// stage copies the array into dynamic shared memory with the whole block, clears the dirty
// bitmap and synchronises; unstage synchronises and copies back the elements this block wrote.
// For every other accessor both compile to nothing.
#pragma once

#include "memplace/accessors.cuh"
#include "memplace/rtc_std.h"

namespace memplace {

namespace detail {

template <class A>
struct StageTraits {
    static constexpr bool kMayStage = false;
    MEMPLACE_DEV static bool stage(const A&) { return false; }
    MEMPLACE_DEV static bool mayUnstage(const A&) { return false; }
    MEMPLACE_DEV static void unstage(const A&) {}
};

template <class T, class W>
struct StageTraits<SharedAccessor<T, W>> {
    using A = SharedAccessor<T, W>;
    using V = typename A::value_type;
    static constexpr bool kMayStage = true;
    MEMPLACE_DEV static bool stage(const A& a) {
        if (a.copyIn != 0u) {
            blockCopyIn(reinterpret_cast<unsigned char*>(a.shared()),
                        reinterpret_cast<const unsigned char*>(a.g + W::first(a)),
                        static_cast<unsigned>(a.count) * static_cast<unsigned>(sizeof(V)));
        }
        if constexpr (!mstd::is_const_v<T>) {
            blockZero(a.dirty(), static_cast<unsigned>((a.count + 31) >> 5));
        }
        return true;
    }
    MEMPLACE_DEV static bool mayUnstage(const A&) { return !mstd::is_const_v<T>; }
    MEMPLACE_DEV static void unstage(const A& a) {
        if constexpr (!mstd::is_const_v<T>) {
            blockCopyBackDirty(a.g + W::first(a), a.shared(), a.dirty(),
                               static_cast<unsigned>(a.count));
        }
    }
};

template <class T>
struct StageTraits<DynamicAccessor<T>> {
    using A = DynamicAccessor<T>;
    using V = typename A::value_type;
    static constexpr bool kMayStage = true;
    MEMPLACE_DEV static bool stage(const A& a) {
        if (a.place != Place::Shared) {
            return false;
        }
        if (a.copyIn != 0u) {
            blockCopyIn(reinterpret_cast<unsigned char*>(a.shared()),
                        reinterpret_cast<const unsigned char*>(a.p),
                        static_cast<unsigned>(a.count) * static_cast<unsigned>(sizeof(V)));
        }
        if constexpr (!mstd::is_const_v<T>) {
            blockZero(a.dirty(), static_cast<unsigned>((a.count + 31) >> 5));
        }
        return true;
    }
    MEMPLACE_DEV static bool mayUnstage(const A& a) {
        return !mstd::is_const_v<T> && a.place == Place::Shared;
    }
    MEMPLACE_DEV static void unstage(const A& a) {
        if constexpr (!mstd::is_const_v<T>) {
            if (a.place == Place::Shared) {
                blockCopyBackDirty(a.p, a.shared(), a.dirty(), static_cast<unsigned>(a.count));
            }
        }
    }
};

} // namespace detail

/// Kernel prologue: stage every shared array, then one __syncthreads() if anything was staged.
/// Call it with all of the kernel's accessors, from every thread of the block, before the body.
template <class... A>
MEMPLACE_DEV void stage(const A&... acc) {
    if constexpr ((detail::StageTraits<A>::kMayStage || ... || false)) {
        bool any = false;
        ((any = detail::StageTraits<A>::stage(acc) || any), ...);
        if (any) { // uniform across the block: the places are kernel parameters
            __syncthreads();
        }
    }
}

/// Kernel epilogue: one __syncthreads(), then each written shared array copies back the elements
/// this block marked dirty. Call it from every thread of the block after the body.
template <class... A>
MEMPLACE_DEV void unstage(const A&... acc) {
    if constexpr ((detail::StageTraits<A>::kMayStage || ... || false)) {
        bool any = false;
        ((any = detail::StageTraits<A>::mayUnstage(acc) || any), ...);
        if (any) {
            __syncthreads();
            (detail::StageTraits<A>::unstage(acc), ...);
        }
    }
}

} // namespace memplace

// memplace::launch<K>(grid, block, sharedBytes, stream, args...): the call that replaces
// `kernel<<<grid, block, sharedBytes, stream>>>(args...)` in a rewritten program. It reads the
// array pointers out of the original arguments, asks the host library to decide and materialise
// the placement, builds the accessors of the instantiation it picked and calls K::launch with
// the original arguments, each array replaced by its accessor.
//
// What the generated descriptor K provides (the full contract: docs/rewrite-contract.md §1, §6):
//   static constexpr const char* name;
//   static constexpr int numArrays;
//   static constexpr memplace::ArrayDesc arrays[numArrays];
//   template <class... Acc> static auto kernel();          // &kernel<Acc...>, array order
//   template <...> static void launch(dim3, dim3, size_t, cudaStream_t, <params>...);
//                                                          // parameter order, arrays as accessors
//   using types = memplace::Types<T0, T1, ...>;            // optional: element types, array order
//   using compiled = memplace::Instantiations<memplace::Places<...>, ...>;  // optional
//   static constexpr const char* jitSource = R"memplace(...)memplace";    // optional (JIT)
//   static constexpr const char* jitKernel = "kernel";                     // with jitSource
//   static constexpr const char* jitTypes[numArrays] = {"const float", ...};
//   static constexpr memplace::GlobalDesc globals[N] = {{"g", memplace::Mode::ReadWrite}};
//   static cudaError_t globalRange(int k, void** address, size_t* bytes);  // with globals
//   static constexpr const char* unknownWrites = "12:5: ...";  // optional (aliasing)
//   static constexpr const char* unknownReads = "12:5: ...";   // optional (aliasing)
#pragma once

#include "memplace/accessors.cuh"
#include "memplace/handles.h"
#include "memplace/host.h"
#include "memplace/stage.cuh"
#include "memplace/sweep.cuh"

#include <cstddef>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

#if defined(__CUDACC__) && !defined(MEMPLACE_LAUNCH)
/// The one place the rewritten program launches a kernel; the CPU emulation layer defines it to
/// run the kernel on the emulator. Generated code never writes `<<<` itself.
#define MEMPLACE_LAUNCH(kernel, grid, block, sharedBytes, stream, ...)                             \
    kernel<<<grid, block, sharedBytes, stream>>>(__VA_ARGS__)
#endif

namespace memplace {

/// Element types of the arrays, in descriptor order (`using types = Types<const float, float>`).
template <class... T>
struct Types {};
/// A placement known at compile time: one place per array, in descriptor order.
template <Place... P>
struct Places {};
/// The placements compiled as specialised instantiations (`using compiled = ...`).
template <class... P>
struct Instantiations {};
/// The places one array may take, for Cartesian.
template <Place... P>
struct PlaceList {};

/// The device memory of a `__device__` variable of the program (the descriptor's globalRange):
/// the CUDA runtime finds it from the host shadow, per device.
template <class T>
cudaError_t symbolRange(const T& symbol, void** address, std::size_t* bytes) {
    const cudaError_t e = cudaGetSymbolAddress(address, symbol);
    return e != cudaSuccess ? e : cudaGetSymbolSize(bytes, symbol);
}
/// The same for a `__managed__` variable: host code's address of it is its unified address.
template <class T>
cudaError_t managedRange(const T& symbol, void** address, std::size_t* bytes) {
    *address = const_cast<void*>(static_cast<const void*>(&symbol));
    *bytes = sizeof(T);
    return cudaSuccess;
}

namespace detail {

template <class A, class B>
struct ConcatInst;
template <class... A, class... B>
struct ConcatInst<Instantiations<A...>, Instantiations<B...>> {
    using type = Instantiations<A..., B...>;
};

template <class Prefix, class List>
struct AppendEach;
template <Place... P, Place... Q>
struct AppendEach<Places<P...>, PlaceList<Q...>> {
    using type = Instantiations<Places<P..., Q>...>;
};

template <class Insts, class List>
struct Extend;
template <class List>
struct Extend<Instantiations<>, List> {
    using type = Instantiations<>;
};
template <class First, class... Rest, class List>
struct Extend<Instantiations<First, Rest...>, List> {
    using type = typename ConcatInst<typename AppendEach<First, List>::type,
                                     typename Extend<Instantiations<Rest...>, List>::type>::type;
};

template <class Insts, class... Lists>
struct CartesianImpl {
    using type = Insts;
};
template <class Insts, class L, class... Ls>
struct CartesianImpl<Insts, L, Ls...> {
    using type = typename CartesianImpl<typename Extend<Insts, L>::type, Ls...>::type;
};

} // namespace detail

/// Every combination of the given per-array place lists, as Instantiations: for instance
/// `using compiled = Cartesian<PlaceList<Place::Global, Place::Texture>,
/// PlaceList<Place::Global>>`.
template <class... Lists>
using Cartesian = typename detail::CartesianImpl<Instantiations<Places<>>, Lists...>::type;

namespace detail {

// ---- accessor types per place --------------------------------------------------------------

template <Place P, class T, int Dims>
struct AccessorFor;
template <class T, int D>
struct AccessorFor<Place::Global, T, D> {
    using type = GlobalAccessor<T>;
};
template <class T, int D>
struct AccessorFor<Place::ReadOnly, T, D> {
    using type = ReadOnlyAccessor<T>;
};
template <class T, int D>
struct AccessorFor<Place::Texture, T, D> {
    using type = std::conditional_t<D == 2, Texture2DAccessor<T>, TextureAccessor<T>>;
};
template <class T, int D>
struct AccessorFor<Place::Constant, T, D> {
    using type = ConstantAccessor<T>;
};
template <class T, int D>
struct AccessorFor<Place::Shared, T, D> {
    using type = SharedAccessor<T>;
};
template <class T, int D>
struct AccessorFor<Place::L2Persist, T, D> {
    using type = L2PersistAccessor<T>;
};

template <class T>
struct Tag {};

template <class T>
GlobalAccessor<T> makeAccessor(Tag<GlobalAccessor<T>>, const ArrayHandle& h, unsigned,
                               const TraceSink&) {
    return GlobalAccessor<T>{static_cast<T*>(h.ptr)};
}
template <class T>
L2PersistAccessor<T> makeAccessor(Tag<L2PersistAccessor<T>>, const ArrayHandle& h, unsigned,
                                  const TraceSink&) {
    return L2PersistAccessor<T>{static_cast<T*>(h.ptr)};
}
template <class T>
ReadOnlyAccessor<T> makeAccessor(Tag<ReadOnlyAccessor<T>>, const ArrayHandle& h, unsigned,
                                 const TraceSink&) {
    using V = typename ReadOnlyAccessor<T>::value_type;
    return ReadOnlyAccessor<T>{static_cast<const V*>(h.ptr)};
}
template <class T>
TextureAccessor<T> makeAccessor(Tag<TextureAccessor<T>>, const ArrayHandle& h, unsigned,
                                const TraceSink&) {
    return TextureAccessor<T>{static_cast<cudaTextureObject_t>(h.tex), h.texOffset};
}
template <class T>
Texture2DAccessor<T> makeAccessor(Tag<Texture2DAccessor<T>>, const ArrayHandle& h, unsigned,
                                  const TraceSink&) {
    return Texture2DAccessor<T>{static_cast<cudaTextureObject_t>(h.tex), h.width};
}
template <class T>
ConstantAccessor<T> makeAccessor(Tag<ConstantAccessor<T>>, const ArrayHandle& h, unsigned,
                                 const TraceSink&) {
    return ConstantAccessor<T>{h.constOffset};
}
template <class T, class W>
SharedAccessor<T, W> makeAccessor(Tag<SharedAccessor<T, W>>, const ArrayHandle& h, unsigned,
                                  const TraceSink&) {
    using V = typename SharedAccessor<T, W>::value_type;
    return SharedAccessor<T, W>{static_cast<V*>(const_cast<void*>(h.ptr)), h.count, h.sharedOffset,
                                h.dirtyOffset, h.copyIn};
}
template <class T>
DynamicAccessor<T> makeAccessor(Tag<DynamicAccessor<T>>, const ArrayHandle& h, unsigned,
                                const TraceSink&) {
    using V = typename DynamicAccessor<T>::value_type;
    DynamicAccessor<T> a{};
    a.p = static_cast<V*>(h.ptr);
    a.tex = static_cast<cudaTextureObject_t>(h.tex);
    a.texOffset = h.texOffset;
    a.width = h.width;
    a.count = h.count;
    a.constOffset = h.constOffset;
    a.sharedOffset = h.sharedOffset;
    a.dirtyOffset = h.dirtyOffset;
    a.place = h.place;
    a.copyIn = static_cast<uint8_t>(h.copyIn);
    return a;
}
template <class T>
TracingAccessor<T> makeAccessor(Tag<TracingAccessor<T>>, const ArrayHandle& h, unsigned j,
                                const TraceSink& sink) {
    return TracingAccessor<T>{static_cast<T*>(h.ptr), sink, j};
}

// ---- the descriptor's optional members ---------------------------------------------------

template <class K, class = void>
struct CompiledOf {
    using type = Instantiations<>;
};
template <class K>
struct CompiledOf<K, std::void_t<typename K::compiled>> {
    using type = typename K::compiled;
};

template <class K, class = void>
struct HasTypes : std::false_type {};
template <class K>
struct HasTypes<K, std::void_t<typename K::types>> : std::true_type {};

/// The descriptor's just-in-time members (docs/rewrite-contract.md): the source, the kernel's
/// name and the element types, or nulls.
template <class K, class = void>
struct JitOf {
    static constexpr const char* source = nullptr;
    static constexpr const char* kernel = nullptr;
    static const char* const* types() { return nullptr; }
};
template <class K>
struct JitOf<K,
             std::void_t<decltype(K::jitSource), decltype(K::jitKernel), decltype(K::jitTypes)>> {
    static constexpr const char* source = K::jitSource;
    static constexpr const char* kernel = K::jitKernel;
    static const char* const* types() { return K::jitTypes; }
};

/// The descriptor's __constant__ variables (jitConstants, jitConstant(k)), or none.
template <class K, class = void>
struct JitConstantsOf {
    static constexpr int count = 0;
    static const char* const* names() { return nullptr; }
    static const void* shadow(int) { return nullptr; }
};
template <class K>
struct JitConstantsOf<K, std::void_t<decltype(K::jitConstants), decltype(K::jitConstant(0))>> {
    static constexpr int count =
        static_cast<int>(sizeof(K::jitConstants) / sizeof(K::jitConstants[0]));
    static const char* const* names() { return K::jitConstants; }
    static const void* shadow(int k) { return K::jitConstant(k); }
};

/// The descriptor's aliasing members (docs/rewrite-contract.md §6): the globals it accesses by
/// name and the writes and reads through pointers nobody can follow, or none (an older
/// descriptor: nothing known beyond its parameters).
template <class K, class = void>
struct GlobalsOf {
    static constexpr int count = 0;
    static const GlobalDesc* descs() { return nullptr; }
    static constexpr cudaError_t (*range)(int, void**, std::size_t*) = nullptr;
};
template <class K>
struct GlobalsOf<K, std::void_t<decltype(K::globals), decltype(&K::globalRange)>> {
    static constexpr int count = static_cast<int>(sizeof(K::globals) / sizeof(K::globals[0]));
    static const GlobalDesc* descs() { return K::globals; }
    static constexpr cudaError_t (*range)(int, void**, std::size_t*) = &K::globalRange;
};
template <class K, class = void>
struct UnknownWritesOf {
    static constexpr const char* value = nullptr;
};
template <class K>
struct UnknownWritesOf<K, std::void_t<decltype(K::unknownWrites)>> {
    static constexpr const char* value = K::unknownWrites;
};
template <class K, class = void>
struct UnknownReadsOf {
    static constexpr const char* value = nullptr;
};
template <class K>
struct UnknownReadsOf<K, std::void_t<decltype(K::unknownReads)>> {
    static constexpr const char* value = K::unknownReads;
};

template <int J, class L>
struct TypeAt;
template <int J, class T0, class... T>
struct TypeAt<J, Types<T0, T...>> {
    using type = typename TypeAt<J - 1, Types<T...>>::type;
};
template <class T0, class... T>
struct TypeAt<0, Types<T0, T...>> {
    using type = T0;
};

template <class K, class ArgsTuple, int J, bool FromTypes = HasTypes<K>::value>
struct RawElem {
    using type = typename TypeAt<J, typename K::types>::type;
};
template <class K, class ArgsTuple, int J>
struct RawElem<K, ArgsTuple, J, false> {
    using arg = std::decay_t<std::tuple_element_t<K::arrays[J].param, ArgsTuple>>;
    static_assert(std::is_pointer_v<arg>,
                  "the argument at an array's parameter position must be a pointer (or give "
                  "the element types with `using types = memplace::Types<...>`)");
    using type = std::remove_pointer_t<arg>;
};

/// The element type the accessors of array J use: const for read-only arrays.
template <class K, class ArgsTuple, int J>
using ElemT = std::conditional_t<K::arrays[J].mode == Mode::Read,
                                 std::add_const_t<typename RawElem<K, ArgsTuple, J>::type>,
                                 std::remove_const_t<typename RawElem<K, ArgsTuple, J>::type>>;

template <class K>
constexpr int arrayOfParam(std::size_t param) {
    for (int j = 0; j < K::numArrays; ++j) {
        if (K::arrays[j].param == static_cast<int>(param)) {
            return j;
        }
    }
    return -1;
}

template <class K, class P>
struct PlacesFeasible;
template <class K, Place... P>
struct PlacesFeasible<K, Places<P...>> {
    template <int... J>
    static constexpr bool check(std::integer_sequence<int, J...>) {
        return ((K::arrays[J].places.contains(P)) && ... && true);
    }
    static constexpr bool value =
        sizeof...(P) == K::numArrays && check(std::make_integer_sequence<int, sizeof...(P)>{});
};

template <class K, class ArgsTuple, class P, class Seq>
struct AccTupleImpl;
template <class K, class ArgsTuple, Place... P, int... J>
struct AccTupleImpl<K, ArgsTuple, Places<P...>, std::integer_sequence<int, J...>> {
    using type =
        std::tuple<typename AccessorFor<P, ElemT<K, ArgsTuple, J>, K::arrays[J].dims>::type...>;
};
/// The accessor types of a compiled placement.
template <class K, class ArgsTuple, class P>
using AccTuple =
    typename AccTupleImpl<K, ArgsTuple, P, std::make_integer_sequence<int, K::numArrays>>::type;

template <class K, class ArgsTuple, template <class> class Acc, class Seq>
struct UniformTupleImpl;
template <class K, class ArgsTuple, template <class> class Acc, int... J>
struct UniformTupleImpl<K, ArgsTuple, Acc, std::integer_sequence<int, J...>> {
    using type = std::tuple<Acc<ElemT<K, ArgsTuple, J>>...>;
};
template <class K, class ArgsTuple, template <class> class Acc>
using UniformTuple = typename UniformTupleImpl<K, ArgsTuple, Acc,
                                               std::make_integer_sequence<int, K::numArrays>>::type;

/// The default instantiation's placement: every array where the program keeps it.
template <class K, class Seq>
struct DefaultPlacesImpl;
template <class K, int... J>
struct DefaultPlacesImpl<K, std::integer_sequence<int, J...>> {
    using type = Places<K::arrays[J].original...>;
};

template <class K, class... A>
const void* kernelAddress(std::tuple<A...>*) {
    return reinterpret_cast<const void*>(K::template kernel<A...>());
}

template <class P>
struct PlacesArray;
template <Place... P>
struct PlacesArray<Places<P...>> {
    static void write(Place* out) {
        int k = 0;
        ((out[k++] = P), ...);
    }
};

template <class K, class AccT, class ArgsTuple, std::size_t... I>
void callLaunch(dim3 grid, dim3 block, std::size_t shmem, cudaStream_t stream, AccT& accs,
                ArgsTuple& args, std::index_sequence<I...>) {
    auto pick = [&](auto index) -> decltype(auto) {
        constexpr int j = arrayOfParam<K>(decltype(index)::value);
        if constexpr (j >= 0) {
            return std::get<j>(accs);
        } else {
            return std::get<decltype(index)::value>(args);
        }
    };
    K::launch(grid, block, shmem, stream, pick(std::integral_constant<std::size_t, I>{})...);
}

template <class K, class AccT, class ArgsTuple, int... J>
void buildAndLaunch(const LaunchArgs& la, const LaunchPlan& plan, ArgsTuple& args,
                    std::integer_sequence<int, J...>) {
    AccT accs{makeAccessor(Tag<std::tuple_element_t<J, AccT>>{}, plan.handles[J],
                           static_cast<unsigned>(J), plan.sink)...};
    callLaunch<K>(la.grid, la.block, plan.sharedBytes, la.stream, accs, args,
                  std::make_index_sequence<std::tuple_size_v<ArgsTuple>>{});
}

template <class K, class ArgsTuple, class Insts>
struct Dispatcher;
template <class K, class ArgsTuple, class... P>
struct Dispatcher<K, ArgsTuple, Instantiations<P...>> {
    static constexpr int kCount = static_cast<int>(sizeof...(P));
    static_assert((PlacesFeasible<K, P>::value && ... && true),
                  "a compiled placement names a place outside an array's feasible places (or has "
                  "the wrong number of places)");

    static void places(Place* out) {
        int k = 0;
        ((PlacesArray<P>::write(out + (k++) * K::numArrays)), ...);
    }
    static void fns(const void** out) {
        int k = 0;
        ((out[k++] = kernelAddress<K>(static_cast<AccTuple<K, ArgsTuple, P>*>(nullptr))), ...);
    }
    template <std::size_t... I>
    static void launchIndex(int index, const LaunchArgs& la, const LaunchPlan& plan,
                            ArgsTuple& args, std::index_sequence<I...>) {
        ((index == static_cast<int>(I)
              ? (buildAndLaunch<K, AccTuple<K, ArgsTuple, P>>(
                     la, plan, args, std::make_integer_sequence<int, K::numArrays>{}),
                 0)
              : 0),
         ...);
    }
};

template <class K, class ArgsTuple, int... J>
void textureFeasibility(bool* out, std::integer_sequence<int, J...>) {
    ((out[J] = kTextureFeasible<std::remove_cv_t<ElemT<K, ArgsTuple, J>>>), ...);
}

template <class K, class ArgsTuple, int... J>
void arrayArguments(ArgsTuple& args, const void** ptrs, long long* widths,
                    std::integer_sequence<int, J...>) {
    auto one = [&](auto jc) {
        constexpr int j = decltype(jc)::value;
        using Arg = std::decay_t<std::tuple_element_t<K::arrays[j].param, ArgsTuple>>;
        if constexpr (std::is_pointer_v<Arg>) {
            ptrs[j] = static_cast<const void*>(std::get<K::arrays[j].param>(args));
        } else {
            static_assert(std::is_null_pointer_v<Arg>,
                          "the argument at an array's parameter position must be a pointer");
            ptrs[j] = nullptr;
        }
        widths[j] = 0;
        if constexpr (K::arrays[j].dims == 2 && K::arrays[j].widthParam >= 0) {
            using W = std::decay_t<std::tuple_element_t<K::arrays[j].widthParam, ArgsTuple>>;
            static_assert(std::is_integral_v<W>, "an array's widthParam must be an integer");
            widths[j] = static_cast<long long>(std::get<K::arrays[j].widthParam>(args));
        }
    };
    (one(std::integral_constant<int, J>{}), ...);
}

// ---- a just-in-time instantiation: the same arguments through cuLaunchKernel ---------------

template <class F>
struct FnParams;
template <class... P>
struct FnParams<void (*)(P...)> {
    using type = std::tuple<P...>;
};

/// Room for one accessor of any place (the largest, SharedAccessor, takes 32 bytes).
struct alignas(16) JitAccessorSlot {
    unsigned char bytes[64];
};

template <class A>
bool putAccessor(const ArrayHandle& h, unsigned j, const TraceSink& sink, JitAccessorSlot& out) {
    static_assert(sizeof(A) <= sizeof(JitAccessorSlot) && alignof(A) <= alignof(JitAccessorSlot),
                  "an accessor does not fit the just-in-time launch's argument slot");
    static_assert(std::is_trivially_copyable_v<A>, "accessors are trivially copyable");
    ::new (static_cast<void*>(out.bytes)) A(makeAccessor(Tag<A>{}, h, j, sink));
    return true;
}

/// Array J's accessor for its run-time place, as the just-in-time instantiation takes it (the
/// types AccessorFor gives a compiled placement).
template <class K, class ArgsTuple, int J>
bool jitAccessor(const LaunchPlan& plan, JitAccessorSlot& out) {
    using T = ElemT<K, ArgsTuple, J>;
    constexpr int D = K::arrays[J].dims;
    const ArrayHandle& h = plan.handles[J];
    const auto j = static_cast<unsigned>(J);
    switch (h.place) {
    case Place::Global:
        return putAccessor<GlobalAccessor<T>>(h, j, plan.sink, out);
    case Place::ReadOnly:
        return putAccessor<ReadOnlyAccessor<T>>(h, j, plan.sink, out);
    case Place::Texture:
        if constexpr (kTextureFeasible<std::remove_cv_t<T>>) {
            return putAccessor<typename AccessorFor<Place::Texture, T, D>::type>(h, j, plan.sink,
                                                                                 out);
        } else {
            return false;
        }
    case Place::Constant:
        return putAccessor<ConstantAccessor<T>>(h, j, plan.sink, out);
    case Place::Shared:
        return putAccessor<SharedAccessor<T>>(h, j, plan.sink, out);
    case Place::L2Persist:
        return putAccessor<L2PersistAccessor<T>>(h, j, plan.sink, out);
    default:
        return false;
    }
}

/// The value handed to parameter I: the argument converted to the parameter's type (as the
/// call of K::launch converts it), or a placeholder for an array (its accessor is in a slot).
template <class K, class Params, std::size_t I>
using JitArgT = std::conditional_t<(arrayOfParam<K>(I) >= 0), char,
                                   std::remove_cv_t<std::tuple_element_t<I, Params>>>;

template <class K, class Params, std::size_t I, class ArgsTuple>
JitArgT<K, Params, I> jitArg(ArgsTuple& args) {
    if constexpr (arrayOfParam<K>(I) >= 0) {
        return 0;
    } else {
        return static_cast<JitArgT<K, Params, I>>(std::get<I>(args));
    }
}

/// Whether a just-in-time instantiation of K can be launched with these arguments: one argument
/// per kernel parameter (no defaulted trailing parameters).
template <class K, class ArgsTuple, class DynT>
struct JitLaunchable;
template <class K, class ArgsTuple, class... A>
struct JitLaunchable<K, ArgsTuple, std::tuple<A...>> {
    using Params = typename FnParams<decltype(K::template kernel<A...>())>::type;
    static constexpr bool value = std::tuple_size_v<Params> == std::tuple_size_v<ArgsTuple>;
};

template <class K, class ArgsTuple, class Params, int... J, std::size_t... I>
cudaError_t launchJitImpl(const LaunchArgs& la, const LaunchPlan& plan, ArgsTuple& args,
                          std::integer_sequence<int, J...>, std::index_sequence<I...>) {
    JitAccessorSlot slots[sizeof...(J) > 0 ? sizeof...(J) : 1];
    if (!(jitAccessor<K, ArgsTuple, J>(plan, slots[J]) && ... && true)) {
        return cudaErrorInvalidValue;
    }
    std::tuple<JitArgT<K, Params, I>...> values{jitArg<K, Params, I>(args)...};
    auto pointer = [&](auto index) -> void* {
        constexpr std::size_t i = decltype(index)::value;
        constexpr int j = arrayOfParam<K>(i);
        if constexpr (j >= 0) {
            return static_cast<void*>(slots[j].bytes);
        } else {
            return static_cast<void*>(&std::get<i>(values));
        }
    };
    void* params[sizeof...(I) > 0 ? sizeof...(I) : 1] = {
        pointer(std::integral_constant<std::size_t, I>{})...};
    return launchJit(la, plan, params);
}

} // namespace detail

// Internal linkage: each translation unit's launch names its own constant pool.
namespace {

/// The address of this translation unit's constant pool, as the runtime's upload expects it.
/// Under the CPU emulation layer the pool is first named as a symbol, so that the upload by
/// address finds it (on a GPU the address alone is the symbol).
inline const void* constantPoolSymbol() {
#if defined(MEMPLACE_EMU)
    static const bool registered = [] {
        void* address = nullptr;
        return cudaGetSymbolAddress(&address, tu::constantPool) == cudaSuccess;
    }();
    (void)registered;
#endif
    return static_cast<const void*>(&tu::constantPool);
}

/// The types and steps of one kernel's launch: the instantiation list, the dispatch on the
/// plan's instantiation, and a sweep's launch of one placement.
template <class K, class ArgsTuple>
struct LaunchOps {
    static constexpr int kArrays = K::numArrays;
    using Seq = std::make_integer_sequence<int, kArrays>;
    using Default = typename detail::DefaultPlacesImpl<K, Seq>::type;
    using Insts = typename detail::ConcatInst<Instantiations<Default>,
                                              typename detail::CompiledOf<K>::type>::type;
    using D = detail::Dispatcher<K, ArgsTuple, Insts>;
    using DynT = detail::UniformTuple<K, ArgsTuple, DynamicAccessor>;
#if !defined(MEMPLACE_NO_TRACING)
    using TraceT = detail::UniformTuple<K, ArgsTuple, TracingAccessor>;
#endif
    static constexpr bool kJitLaunchable = detail::JitLaunchable<K, ArgsTuple, DynT>::value;

    /// Launches what prepareLaunch planned, then finishLaunch; the launch's status.
    static cudaError_t dispatch(const detail::KernelView& kv, const detail::LaunchArgs& la,
                                detail::LaunchPlan& plan, ArgsTuple& at) {
#if !defined(MEMPLACE_NO_TRACING)
        if (plan.instantiation == detail::LaunchPlan::kTracing) {
            detail::buildAndLaunch<K, TraceT>(la, plan, at, Seq{});
            if (plan.shadow) {
                // A shadow launch: the traced run wrote scratch copies; the program's results
                // come from the original instantiation, launched next on its own memory.
                detail::endShadowTrace(kv, la, plan, cudaPeekAtLastError());
            }
        }
#endif
        if (plan.instantiation >= 0) {
            D::launchIndex(plan.instantiation, la, plan, at,
                           std::make_index_sequence<static_cast<std::size_t>(D::kCount)>{});
        } else if (plan.instantiation == detail::LaunchPlan::kDynamic) {
            detail::buildAndLaunch<K, DynT>(la, plan, at, Seq{});
        }
#if !defined(MEMPLACE_EMU)
        if (plan.instantiation == detail::LaunchPlan::kJit) {
            if constexpr (kJitLaunchable) {
                using Params = typename detail::JitLaunchable<K, ArgsTuple, DynT>::Params;
                const cudaError_t s = detail::launchJitImpl<K, ArgsTuple, Params>(
                    la, plan, at, Seq{}, std::make_index_sequence<std::tuple_size_v<ArgsTuple>>{});
                detail::finishLaunch(kv, la, plan, s);
                return s;
            }
        }
#endif
        const cudaError_t status = cudaPeekAtLastError();
        detail::finishLaunch(kv, la, plan, status);
        return status;
    }

    struct SweepCtx {
        const detail::KernelView* kv;
        const detail::LaunchArgs* la;
        ArgsTuple* at;
    };
    /// One launch of a sweep: the runtime applies the sweep's current placement.
    static cudaError_t sweepOne(void* p) {
        SweepCtx& c = *static_cast<SweepCtx*>(p);
        detail::LaunchPlan plan;
        detail::prepareLaunch(*c.kv, *c.la, plan);
        return dispatch(*c.kv, *c.la, plan, *c.at);
    }
};

/// Launches kernel descriptor K like `kernel<<<grid, block, sharedBytes, stream>>>(args...)`
/// with the placement the runtime decides (see host.h for the controls). Returns the launch's
/// cudaPeekAtLastError(), as the program would see it after `<<<>>>`.
template <class K, class... Args>
cudaError_t launch(dim3 grid, dim3 block, std::size_t sharedBytes, cudaStream_t stream,
                   Args&&... args) {
    using ArgsTuple = std::tuple<Args&&...>;
    using Ops = LaunchOps<K, ArgsTuple>;
    using D = typename Ops::D;
    using DynT = typename Ops::DynT;
    constexpr int kArrays = K::numArrays;
    constexpr int kSlots = kArrays > 0 ? kArrays : 1;
    using Seq = typename Ops::Seq;

    ArgsTuple at(std::forward<Args>(args)...);

    const void* ptrs[kSlots] = {};
    long long widths[kSlots] = {};
    bool texOk[kSlots] = {};
    detail::arrayArguments<K>(at, ptrs, widths, Seq{});
    detail::textureFeasibility<K, ArgsTuple>(texOk, Seq{});

    Place compiled[D::kCount * kSlots] = {};
    const void* fns[D::kCount] = {};
    D::places(compiled);
    D::fns(fns);
    const void* dynFn = detail::kernelAddress<K>(static_cast<DynT*>(nullptr));
#if defined(MEMPLACE_NO_TRACING)
    const void* traceFn = nullptr;
#else
    const void* traceFn = detail::kernelAddress<K>(static_cast<typename Ops::TraceT*>(nullptr));
#endif

    detail::KernelView kv{K::name,  kArrays, K::arrays, texOk,  D::kCount,
                          compiled, fns,     dynFn,     traceFn};
    kv.spin = sweepSpinFn();
    kv.compare = &sweepCompare;
    kv.globalCount = detail::GlobalsOf<K>::count;
    kv.globals = detail::GlobalsOf<K>::descs();
    kv.globalRange = detail::GlobalsOf<K>::range;
    kv.unknownWrites = detail::UnknownWritesOf<K>::value;
    kv.unknownReads = detail::UnknownReadsOf<K>::value;
#if !defined(MEMPLACE_EMU) // no NVRTC under the CPU emulation layer
    using JitConstants = detail::JitConstantsOf<K>;
    const void* jitShadows[JitConstants::count > 0 ? JitConstants::count : 1] = {};
    if constexpr (Ops::kJitLaunchable) {
        kv.jitSource = detail::JitOf<K>::source;
        kv.jitKernel = detail::JitOf<K>::kernel;
        kv.jitTypes = detail::JitOf<K>::types();
        for (int k = 0; k < JitConstants::count; ++k) {
            jitShadows[k] = JitConstants::shadow(k);
        }
        kv.jitConstantCount = JitConstants::count;
        kv.jitConstants = JitConstants::names();
        kv.jitConstantShadows = jitShadows;
    }
#if defined(__USE_FAST_MATH__)
    kv.jitOptions = "--use_fast_math";
#endif
#endif
    const detail::LaunchArgs la{
        grid, block,  sharedBytes,          stream,
        ptrs, widths, constantPoolSymbol(), static_cast<std::size_t>(MEMPLACE_CONSTANT_POOL_BYTES)};
    detail::LaunchPlan plan;
    detail::prepareLaunch(kv, la, plan);
    if (plan.instantiation == detail::LaunchPlan::kSweep) {
        // The policy asked to measure placements on this launch's arguments first.
        typename Ops::SweepCtx ctx{&kv, &la, &at};
        detail::SweepHooks hooks;
        hooks.launch = &Ops::sweepOne;
        hooks.ctx = &ctx;
        hooks.compare = &sweepCompare;
        hooks.spin = sweepSpinFn();
        detail::runSweep(kv, la, plan, hooks);
        plan = detail::LaunchPlan{};
        detail::prepareLaunch(kv, la, plan);
    }
    return Ops::dispatch(kv, la, plan, at);
}

} // namespace

} // namespace memplace

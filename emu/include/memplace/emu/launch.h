// Kernel launches and dynamic shared memory on the emulator.
//
//   MEMPLACE_LAUNCH(kernel, grid, block, sharedBytes, stream, args...)
//       runs `kernel(args...)` on a grid of fibers (nvcc: kernel<<<grid, block, sharedBytes,
//       stream>>>(args...)). `kernel` is a function or a pointer to one; a template kernel is
//       named with its template arguments. Each argument is converted to the parameter's type
//       once, as a call would, and every thread gets its own copy.
//   MEMPLACE_DYNAMIC_SHARED(T, name);
//       `T* const name`: the running block's dynamic shared memory (nvcc: extern __shared__ T
//       name[]). Valid at namespace scope and in functions.
#pragma once

#include "memplace/emu/runtime_types.h"

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace memplace::emu::detail {

struct LaunchRequest {
    const char* text; ///< the kernel expression as written at the launch
    const void* func; ///< the kernel's address (attributes, symbol name)
    dim3 grid, block;
    size_t sharedBytes;
    cudaStream_t stream;
    void (*invoke)(const void* closure); ///< runs the kernel once for the current thread
    const void* closure;
    /// sizeof the closure (the kernel pointer and the arguments): active profiling scans it for
    /// pointers into allocations, the memory a partial run can write (memplace/emu/profile.h).
    size_t closureBytes = 0;
};

/// Validates, runs every block, reports errors; returns the launch's error (also recorded as
/// the last error).
cudaError_t launch(const LaunchRequest& request);

/// The running OS thread's dynamic shared memory buffer (allocated once per thread, large
/// enough for the spec's largest block).
void* dynamicSharedBase();

template <class T>
inline T convertArgument(T value) {
    return value;
}

template <class... P, class... A>
inline cudaError_t launchKernel(const char* text, void (*kernel)(P...), dim3 grid, dim3 block,
                                size_t sharedBytes, cudaStream_t stream, A&&... args) {
    static_assert(sizeof...(P) == sizeof...(A),
                  "memplace emu: MEMPLACE_LAUNCH passes a different number of arguments than the "
                  "kernel has parameters");
    struct Closure {
        void (*kernel)(P...);
        std::tuple<std::decay_t<P>...> args;
    };
    Closure closure{kernel, std::tuple<std::decay_t<P>...>{
                                convertArgument<std::decay_t<P>>(std::forward<A>(args))...}};
    LaunchRequest request{text,
                          reinterpret_cast<const void*>(kernel),
                          grid,
                          block,
                          sharedBytes,
                          stream,
                          [](const void* c) {
                              const auto* cl = static_cast<const Closure*>(c);
                              std::apply(cl->kernel, cl->args);
                          },
                          &closure,
                          sizeof(Closure)};
    return launch(request);
}

template <class... P, std::size_t... I>
inline cudaError_t launchFromPointers(void (*kernel)(P...), dim3 grid, dim3 block, void** args,
                                      size_t sharedBytes, cudaStream_t stream,
                                      std::index_sequence<I...>) {
    return launchKernel("cudaLaunchKernel", kernel, grid, block, sharedBytes, stream,
                        *static_cast<std::decay_t<P>*>(args[I])...);
}

} // namespace memplace::emu::detail

namespace memplace::emu {

/// A launch written `k<<<grid, block, sharedBytes, stream>>>(args...)` in a plain CUDA program,
/// for tools that convert such launches textually into `chevrons(grid, block, ...)(k, args...)`
/// (bench/kernels/tools/cpu_check.sh). Rewritten programs use MEMPLACE_LAUNCH instead.
struct Chevrons {
    dim3 grid;
    dim3 block;
    size_t sharedBytes = 0;
    cudaStream_t stream = 0;

    template <class... P, class... A>
    cudaError_t operator()(void (*kernel)(P...), A&&... args) const {
        return detail::launchKernel("<<<>>>", kernel, grid, block, sharedBytes, stream,
                                    std::forward<A>(args)...);
    }
};

inline Chevrons chevrons(dim3 grid, dim3 block, size_t sharedBytes = 0, cudaStream_t stream = 0) {
    return Chevrons{grid, block, sharedBytes, stream};
}

} // namespace memplace::emu

#define MEMPLACE_LAUNCH(kernel, grid, block, sharedBytes, stream, ...)                             \
    ((void)::memplace::emu::detail::launchKernel(#kernel, kernel, grid, block, sharedBytes,        \
                                                 stream __VA_OPT__(, ) __VA_ARGS__))

#define MEMPLACE_DYNAMIC_SHARED(T, name)                                                           \
    static thread_local T* const name =                                                            \
        static_cast<T*>(::memplace::emu::detail::dynamicSharedBase())

/// cudaLaunchKernel with the kernel itself (its parameter types rebuild the argument list).
template <class... P>
inline cudaError_t cudaLaunchKernel(void (*func)(P...), dim3 grid, dim3 block, void** args,
                                    size_t sharedMem = 0, cudaStream_t stream = 0) {
    return ::memplace::emu::detail::launchFromPointers(func, grid, block, args, sharedMem, stream,
                                                       std::index_sequence_for<P...>{});
}
template <class V, class = std::enable_if_t<std::is_void_v<V>>>
inline cudaError_t cudaLaunchKernel(V* func, dim3, dim3, void**, size_t = 0, cudaStream_t = 0) {
    static_assert(!std::is_void_v<V>,
                  "memplace emu: cudaLaunchKernel with a void* kernel is not supported: the "
                  "emulator needs the kernel's type; pass the kernel function itself");
    (void)func;
    return cudaErrorNotSupported;
}

// A minimal CPU stand-in for the CUDA runtime, used only to test the benchmark programs of
// bench/kernels/ on machines without a GPU (tools/cpu_check.sh). It is not memplace's CPU
// emulator (emu/, issue 6) and knows nothing of accessors; it runs the *original* programs.
//
// Model: the blocks of a launch run one after another; within a block every CUDA thread is a
// fiber (Boost.Context) and one OS thread switches between them at barriers. __shared__ becomes
// `static` (one copy, shared by the threads of the block in flight). __syncthreads() and the
// warp-level intrinsics are barriers over the threads still running (a thread that returned
// drops out of the barriers of its block, as on sm_70+).
// Launches are written `shim::launch(grid, block)(kernel, args...)`; tools/cpu_check.sh turns
// `kernel<<<grid, block>>>(args...)` into that form.
#pragma once

#include <boost/context/fiber.hpp>

#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __constant__
#define __shared__ static
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)

struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct alignas(8) float2 {
    float x, y;
};
struct alignas(16) float4 {
    float x, y, z, w;
};
struct alignas(8) int2 {
    int x, y;
};
struct alignas(16) int4 {
    int x, y, z, w;
};
struct alignas(16) double2 {
    double x, y;
};
inline float2 make_float2(float x, float y) {
    return {x, y};
}
inline float4 make_float4(float x, float y, float z, float w) {
    return {x, y, z, w};
}
inline int2 make_int2(int x, int y) {
    return {x, y};
}
inline int4 make_int4(int x, int y, int z, int w) {
    return {x, y, z, w};
}
inline double2 make_double2(double x, double y) {
    return {x, y};
}

inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;
constexpr int warpSize = 32;

namespace shim {

// Cooperative threads: every CUDA thread of a block is a fiber (Boost.Context), run by one OS
// thread until it reaches a barrier (or returns); a barrier releases when every fiber that has not
// returned has arrived.
struct Barrier {
    int expected = 0, arrived = 0;
    long gen = 0;
    void reset(int n) { expected = n, arrived = 0; }
    void arrive() {
        if (++arrived == expected)
            arrived = 0, ++gen;
    }
    void drop() {
        --expected;
        if (arrived > 0 && arrived == expected)
            arrived = 0, ++gen;
    }
};

struct Warp {
    Barrier bar;
    uint64_t slot[32];
    bool active[32];
};

struct Fiber {
    boost::context::fiber self; // resumed by the scheduler
    boost::context::fiber sink; // resumed by the fiber to yield to the scheduler
    bool done = false;
    Barrier* waitOn = nullptr;
    long waitGen = 0;
};

// Fiber stacks come from a pool that lives as long as the program: allocating them for every
// block costs more than running most blocks.
class StackPool {
public:
    static constexpr size_t kSize = 64 * 1024;
    boost::context::stack_context allocate() {
        if (free_.empty())
            free_.push_back(static_cast<char*>(std::malloc(kSize)));
        char* base = free_.back();
        free_.pop_back();
        boost::context::stack_context sc;
        sc.size = kSize;
        sc.sp = base + kSize;
        return sc;
    }
    void deallocate(boost::context::stack_context& sc) {
        free_.push_back(static_cast<char*>(sc.sp) - kSize);
    }

private:
    std::vector<char*> free_;
};
inline StackPool gStacks;
struct PooledStack {
    boost::context::stack_context allocate() { return gStacks.allocate(); }
    void deallocate(boost::context::stack_context& sc) { gStacks.deallocate(sc); }
};

struct BlockState {
    Barrier sync;
    std::vector<Warp> warps;
    std::vector<Fiber> fibers;
    std::function<void()> body;
};

inline thread_local BlockState* tBlock = nullptr;
inline thread_local int tLinear = 0;

inline int lane() {
    return tLinear % 32;
}
inline Warp& warp() {
    return tBlock->warps[tLinear / 32];
}

inline void wait(Barrier& b) {
    long g = b.gen;
    b.arrive();
    if (b.gen != g)
        return; // this fiber was the last to arrive
    Fiber& f = tBlock->fibers[tLinear];
    f.waitOn = &b;
    f.waitGen = g;
    f.sink = std::move(f.sink).resume();
}

template <class F>
void runGrid(dim3 g, dim3 b, F&& body) {
    int n = static_cast<int>(b.x * b.y * b.z);
    if (n <= 0 || n > 1024 || g.x == 0 || g.y == 0 || g.z == 0) {
        std::fprintf(stderr, "shim: bad launch configuration\n");
        std::exit(2);
    }
    int nwarps = (n + 31) / 32;
    BlockState blk;
    blk.warps = std::vector<Warp>(nwarps);
    blk.fibers = std::vector<Fiber>(n);
    blk.body = body;
    tBlock = &blk;
    blockDim = b;
    gridDim = g;
    long long nblocks = static_cast<long long>(g.x) * g.y * g.z;
    for (long long bl = 0; bl < nblocks; ++bl) {
        blockIdx = {static_cast<unsigned>(bl % g.x), static_cast<unsigned>((bl / g.x) % g.y),
                    static_cast<unsigned>(bl / (static_cast<long long>(g.x) * g.y))};
        blk.sync.reset(n);
        for (int w = 0; w < nwarps; ++w) {
            int lanes = std::min(32, n - 32 * w);
            blk.warps[w].bar.reset(lanes);
            for (int l = 0; l < 32; ++l)
                blk.warps[w].active[l] = l < lanes;
        }
        for (int t = 0; t < n; ++t) {
            Fiber& f = blk.fibers[t];
            f.done = false;
            f.waitOn = nullptr;
            f.self = boost::context::fiber(std::allocator_arg, PooledStack{},
                                           [&blk, t](boost::context::fiber&& sink) {
                                               blk.fibers[t].sink = std::move(sink);
                                               blk.body();
                                               Warp& w = blk.warps[t / 32];
                                               w.active[t % 32] = false;
                                               w.bar.drop();
                                               blk.sync.drop();
                                               blk.fibers[t].done = true;
                                               return std::move(blk.fibers[t].sink);
                                           });
        }
        for (;;) {
            bool alive = false, progress = false;
            for (int t = 0; t < n; ++t) {
                Fiber& f = blk.fibers[t];
                if (f.done)
                    continue;
                alive = true;
                if (f.waitOn != nullptr && f.waitOn->gen == f.waitGen)
                    continue;
                f.waitOn = nullptr;
                tLinear = t;
                threadIdx = {t % b.x, (t / b.x) % b.y, t / (b.x * b.y)};
                f.self = std::move(f.self).resume();
                progress = true;
            }
            if (!alive)
                break;
            if (!progress) {
                std::fprintf(stderr,
                             "shim: deadlock: threads wait at barriers no one else reaches\n");
                std::exit(2);
            }
        }
    }
    tBlock = nullptr;
}

struct Launch {
    dim3 grid, block;
    template <class... P, class... A>
    void operator()(void (*kernel)(P...), A&&... args) const {
        static const bool skip = std::getenv("SHIM_SKIP_KERNELS") != nullptr; // time the host side
        if (skip)
            return;
        runGrid(grid, block, [&] { kernel(args...); });
    }
};

inline Launch launch(dim3 g, dim3 b, size_t = 0, void* = nullptr) {
    return {g, b};
}

} // namespace shim

inline void __syncthreads() {
    shim::wait(shim::tBlock->sync);
}
inline void __syncwarp(unsigned = 0xffffffffu) {
    shim::wait(shim::warp().bar);
}
inline unsigned __activemask() {
    unsigned m = 0;
    for (int l = 0; l < 32; ++l)
        if (shim::warp().active[l])
            m |= 1u << l;
    return m;
}

namespace shim {
template <class T>
T exchange(T v, int src) {
    static_assert(sizeof(T) <= 8, "shuffle of more than 8 bytes");
    Warp& w = warp();
    std::memcpy(&w.slot[lane()], &v, sizeof(T));
    wait(w.bar);
    T r;
    std::memcpy(&r, &w.slot[src], sizeof(T));
    wait(w.bar);
    return r;
}
} // namespace shim

template <class T>
T __shfl_sync(unsigned, T v, int src, int width = 32) {
    int l = shim::lane();
    return shim::exchange(v, (l & ~(width - 1)) + (src & (width - 1)));
}
template <class T>
T __shfl_down_sync(unsigned, T v, unsigned delta, int width = 32) {
    int l = shim::lane();
    int s = (l & (width - 1)) + static_cast<int>(delta) < width ? l + static_cast<int>(delta) : l;
    return shim::exchange(v, s);
}
template <class T>
T __shfl_up_sync(unsigned, T v, unsigned delta, int width = 32) {
    int l = shim::lane();
    int s = (l & (width - 1)) >= static_cast<int>(delta) ? l - static_cast<int>(delta) : l;
    return shim::exchange(v, s);
}
template <class T>
T __shfl_xor_sync(unsigned, T v, int mask, int width = 32) {
    int l = shim::lane();
    int s = l ^ mask;
    if ((s & ~(width - 1)) != (l & ~(width - 1)))
        s = l;
    return shim::exchange(v, s);
}
inline unsigned __ballot_sync(unsigned, int pred) {
    shim::Warp& w = shim::warp();
    w.slot[shim::lane()] = pred ? 1 : 0;
    shim::wait(w.bar);
    unsigned m = 0;
    for (int l = 0; l < 32; ++l)
        if (w.active[l] && w.slot[l])
            m |= 1u << l;
    shim::wait(w.bar);
    return m;
}

// Atomics
template <class T, class U>
T atomicAdd(T* p, U v) {
    return std::atomic_ref<T>(*p).fetch_add(static_cast<T>(v));
}
template <class T, class U>
T atomicSub(T* p, U v) {
    return std::atomic_ref<T>(*p).fetch_sub(static_cast<T>(v));
}
template <class T, class U>
T atomicExch(T* p, U v) {
    return std::atomic_ref<T>(*p).exchange(static_cast<T>(v));
}
template <class T, class U>
T atomicCAS(T* p, U cmp, U v) {
    T expected = static_cast<T>(cmp);
    std::atomic_ref<T>(*p).compare_exchange_strong(expected, static_cast<T>(v));
    return expected;
}
template <class T, class U>
T atomicMin(T* p, U v) {
    std::atomic_ref<T> a(*p);
    T old = a.load();
    while (static_cast<T>(v) < old && !a.compare_exchange_weak(old, static_cast<T>(v))) {
    }
    return old;
}
template <class T, class U>
T atomicMax(T* p, U v) {
    std::atomic_ref<T> a(*p);
    T old = a.load();
    while (old < static_cast<T>(v) && !a.compare_exchange_weak(old, static_cast<T>(v))) {
    }
    return old;
}
template <class T, class U>
T atomicOr(T* p, U v) {
    return std::atomic_ref<T>(*p).fetch_or(static_cast<T>(v));
}
template <class T, class U>
T atomicAnd(T* p, U v) {
    return std::atomic_ref<T>(*p).fetch_and(static_cast<T>(v));
}
inline void __threadfence() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

// Intrinsics and device math
template <class T>
T __ldg(const T* p) {
    return *p;
}
inline int __popc(unsigned x) {
    return std::popcount(x);
}
inline int __popcll(unsigned long long x) {
    return std::popcount(x);
}
inline int __clz(unsigned x) {
    return x == 0 ? 32 : std::countl_zero(x);
}
inline int __ffs(unsigned x) {
    return x == 0 ? 0 : std::countr_zero(x) + 1;
}
inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; ++i)
        r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
inline float rsqrtf(float x) {
    return 1.0f / std::sqrt(x);
}
inline double rsqrt(double x) {
    return 1.0 / std::sqrt(x);
}
inline float __fdividef(float a, float b) {
    return a / b;
}
inline float __expf(float x) {
    return std::exp(x);
}
inline float __sinf(float x) {
    return std::sin(x);
}
inline float __cosf(float x) {
    return std::cos(x);
}
inline float __saturatef(float x) {
    return x < 0 ? 0 : x > 1 ? 1 : x;
}
inline int __float_as_int(float f) {
    return std::bit_cast<int>(f);
}
inline float __int_as_float(int i) {
    return std::bit_cast<float>(i);
}
inline unsigned __float_as_uint(float f) {
    return std::bit_cast<unsigned>(f);
}
template <class T>
T min(T a, T b) {
    return b < a ? b : a;
}
template <class T>
T max(T a, T b) {
    return a < b ? b : a;
}

// Host API
enum cudaError_t { cudaSuccess = 0, cudaErrorMemoryAllocation = 2, cudaErrorInvalidValue = 1 };
enum cudaMemcpyKind {
    cudaMemcpyHostToHost,
    cudaMemcpyHostToDevice,
    cudaMemcpyDeviceToHost,
    cudaMemcpyDeviceToDevice,
    cudaMemcpyDefault
};
using cudaStream_t = void*;
struct ShimEvent {
    std::chrono::steady_clock::time_point t;
};
using cudaEvent_t = ShimEvent*;
struct cudaDeviceProp {
    char name[256];
    int multiProcessorCount;
    int l2CacheSize;
};

inline const char* cudaGetErrorString(cudaError_t e) {
    return e == cudaSuccess ? "no error" : "shim error";
}
inline cudaError_t cudaGetLastError() {
    return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() {
    return cudaSuccess;
}
inline cudaError_t cudaGetDevice(int* d) {
    *d = 0;
    return cudaSuccess;
}
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int) {
    std::snprintf(p->name, sizeof p->name, "cpu-shim");
    p->multiProcessorCount = 1;
    p->l2CacheSize = 0;
    return cudaSuccess;
}
template <class T>
cudaError_t cudaMalloc(T** p, size_t bytes) {
    *p = static_cast<T*>(std::malloc(bytes ? bytes : 1));
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t cudaFree(void* p) {
    std::free(p);
    return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind) {
    std::memmove(d, s, n);
    return cudaSuccess;
}
inline cudaError_t cudaMemset(void* d, int v, size_t n) {
    std::memset(d, v, n);
    return cudaSuccess;
}
template <class T>
cudaError_t cudaMemcpyToSymbol(T& symbol, const void* src, size_t n, size_t offset = 0,
                               cudaMemcpyKind = cudaMemcpyHostToDevice) {
    if (offset + n > sizeof(T))
        return cudaErrorInvalidValue;
    std::memcpy(reinterpret_cast<char*>(&symbol) + offset, src, n);
    return cudaSuccess;
}
template <class T>
cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t n, size_t offset = 0,
                                 cudaMemcpyKind = cudaMemcpyDeviceToHost) {
    if (offset + n > sizeof(T))
        return cudaErrorInvalidValue;
    std::memcpy(dst, reinterpret_cast<const char*>(&symbol) + offset, n);
    return cudaSuccess;
}
inline cudaError_t cudaEventCreate(cudaEvent_t* e) {
    *e = new ShimEvent;
    return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
    delete e;
    return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t = nullptr) {
    e->t = std::chrono::steady_clock::now();
    return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t) {
    return cudaSuccess;
}
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
    *ms = std::chrono::duration<float, std::milli>(b->t - a->t).count();
    return cudaSuccess;
}

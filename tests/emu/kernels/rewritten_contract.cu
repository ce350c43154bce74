// A program in the rewritten form of docs/rewrite-contract.md, with stand-in accessors written
// in plain CUDA the way runtime/ writes its own (__ldg, tex1Dfetch, a __constant__ pool filled
// with cudaMemcpyToSymbolAsync, dynamic shared memory with staging and a dirty bitmap,
// cuMemGetAddressRange for extents, cudaFuncSetAttribute, an L2 access-policy window, and a
// tracing accessor). Every placement must compute what the original kernel computes, bitwise.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "check.h"

// ---- stand-in device accessors ---------------------------------------------------------------
namespace memplace {
template <int Site>
struct SiteIndex {
    long long i;
};
template <int Site>
__device__ __forceinline__ SiteIndex<Site> at(long long i) {
    return SiteIndex<Site>{i};
}

template <class T>
struct GlobalAccessor {
    T* p;
    template <int S>
    __device__ T& operator[](SiteIndex<S> s) const { return p[s.i]; }
};
template <class T>
struct ReadOnlyAccessor {
    const T* __restrict__ p;
    template <int S>
    __device__ T operator[](SiteIndex<S> s) const { return __ldg(p + s.i); }
};
template <class T>
struct TextureAccessor {
    cudaTextureObject_t tex;
    template <int S>
    __device__ T operator[](SiteIndex<S> s) const { return tex1Dfetch<T>(tex, static_cast<int>(s.i)); }
};
__constant__ unsigned char constantPool[65536];
template <class T>
struct ConstantAccessor {
    unsigned offset;
    template <int S>
    __device__ T operator[](SiteIndex<S> s) const {
        return reinterpret_cast<const T*>(constantPool + offset)[s.i];
    }
};
template <class T>
struct SharedAccessor {
    T* global;
    int n;
    unsigned offset; // bytes into dynamic shared memory
    template <int S>
    __device__ T& operator[](SiteIndex<S> s) const {
        MEMPLACE_DYNAMIC_SHARED(unsigned char, smem);
        return reinterpret_cast<T*>(smem + offset)[s.i];
    }
};
struct TraceRecord {
    unsigned site, warp, mask;
    long long first;
};
__device__ TraceRecord traceBuffer[4096];
__device__ unsigned traceCount;
template <class T>
struct TracingAccessor {
    T* p;
    unsigned array;
    template <int S>
    __device__ T& operator[](SiteIndex<S> s) const {
#ifdef MEMPLACE_EMU
        auto g = memplace::emu::warpRendezvous(memplace::emu::rendezvousKey(S, array), S, s.i);
        if (g.isLeader) {
            unsigned slot = atomicAdd(&traceCount, 1u);
            if (slot < 4096) traceBuffer[slot] = TraceRecord{static_cast<unsigned>(S), g.warp, g.mask, g.values[g.leader]};
        }
#else
        unsigned active = __activemask();
        unsigned group = __match_any_sync(active, S * 64 + array);
        int leader = __ffs(group) - 1;
        long long first = __shfl_sync(group, s.i, leader);
        if (static_cast<int>(threadIdx.x & 31) == leader) {
            unsigned slot = atomicAdd(&traceCount, 1u);
            if (slot < 4096) traceBuffer[slot] = TraceRecord{static_cast<unsigned>(S), threadIdx.x / 32, group, first};
        }
#endif
        return p[s.i];
    }
};

template <class A>
__device__ void stageOne(const A&) {}
template <class T>
__device__ void stageOne(const SharedAccessor<T>& a) {
    MEMPLACE_DYNAMIC_SHARED(unsigned char, smem);
    T* s = reinterpret_cast<T*>(smem + a.offset);
    for (int i = threadIdx.x; i < a.n; i += blockDim.x) s[i] = a.global[i];
}
template <class... A>
__device__ void stage(const A&... a) {
    (stageOne(a), ...);
    __syncthreads();
}
template <class... A>
__device__ void unstage(const A&...) {}
} // namespace memplace

// ---- the original kernel and its rewritten form ------------------------------------------------

__global__ void polyOriginal(int n, float a, const float* x, const float* c, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    y[i] = a * x[i] + c[i % 64] * y[i];
}

template <class MP_x, class MP_c, class MP_y>
__global__ void poly(int n, float a, MP_x x, MP_c c, MP_y y) {
    memplace::stage(x, c, y);
    [&]() {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        y[memplace::at<3>(i)] = a * x[memplace::at<0>(i)] + c[memplace::at<1>(i % 64)] * y[memplace::at<2>(i)];
    }();
    memplace::unstage(y);
}

struct memplace_kernel_poly {
    template <class... Acc>
    static auto kernel() { return &poly<Acc...>; }
    template <class... Acc>
    static void launch(dim3 g, dim3 b, size_t shmem, cudaStream_t s, int n, float a, Acc... acc) {
        auto k = kernel<Acc...>();
        MEMPLACE_LAUNCH(k, g, b, shmem, s, n, a, acc...);
    }
};

int main() {
    const int n = 3000, threads = 128, blocks = (n + threads - 1) / threads;
    std::vector<float> hx(n), hc(64), hy(n);
    for (int i = 0; i < n; ++i) {
        hx[i] = static_cast<float>(i % 19) * 0.5f;
        hy[i] = static_cast<float>(i % 7) - 3.0f;
    }
    for (int i = 0; i < 64; ++i) hc[i] = 1.0f / static_cast<float>(i + 1);
    float *x, *c, *y;
    CUDA_OK(cudaMalloc(&x, n * sizeof(float)));
    CUDA_OK(cudaMalloc(&c, 64 * sizeof(float)));
    CUDA_OK(cudaMalloc(&y, n * sizeof(float)));
    CUDA_OK(cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(c, hc.data(), 64 * sizeof(float), cudaMemcpyHostToDevice));
    auto reset = [&] { CUDA_OK(cudaMemcpy(y, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice)); };

    reset();
    MEMPLACE_LAUNCH(polyOriginal, blocks, threads, 0, 0, n, 2.0f, x, c, y);
    std::vector<float> expect(n), got(n);
    CUDA_OK(cudaMemcpy(expect.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
    auto same = [&] {
        CUDA_OK(cudaMemcpy(got.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
        return std::memcmp(got.data(), expect.data(), n * sizeof(float)) == 0;
    };
    using memplace::GlobalAccessor;

    // The runtime finds extents with the driver.
    CUdeviceptr base;
    size_t extent;
    CHECK(cuMemGetAddressRange(&base, &extent, reinterpret_cast<CUdeviceptr>(c + 10)) == CUDA_SUCCESS);
    CHECK(base == reinterpret_cast<CUdeviceptr>(c) && extent == 64 * sizeof(float));

    // global (the default placement)
    reset();
    memplace_kernel_poly::launch(blocks, threads, 0, 0, n, 2.0f, GlobalAccessor<const float>{x},
                                 GlobalAccessor<const float>{c}, GlobalAccessor<float>{y});
    CHECK(same());
    // read-only path for x and c
    reset();
    memplace_kernel_poly::launch(blocks, threads, 0, 0, n, 2.0f, memplace::ReadOnlyAccessor<float>{x},
                                 memplace::ReadOnlyAccessor<float>{c}, GlobalAccessor<float>{y});
    CHECK(same());
    // texture for x, constant for c
    cudaResourceDesc res{};
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = x;
    res.res.linear.desc = cudaCreateChannelDesc<float>();
    res.res.linear.sizeInBytes = n * sizeof(float);
    cudaTextureDesc td{};
    cudaTextureObject_t tex;
    CUDA_OK(cudaCreateTextureObject(&tex, &res, &td, nullptr));
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreate(&stream));
    CUDA_OK(cudaMemcpyToSymbolAsync(memplace::constantPool, hc.data(), 64 * sizeof(float), 256, cudaMemcpyHostToDevice, stream));
    reset();
    memplace_kernel_poly::launch(blocks, threads, 0, stream, n, 2.0f, memplace::TextureAccessor<float>{tex},
                                 memplace::ConstantAccessor<float>{256}, GlobalAccessor<float>{y});
    CUDA_OK(cudaStreamSynchronize(stream));
    CHECK(same());
    CUDA_OK(cudaDestroyTextureObject(tex));
    // shared staging for c (after 1000 bytes the program asked for), with the opt-in attribute
    auto k = memplace_kernel_poly::kernel<GlobalAccessor<const float>, memplace::SharedAccessor<float>, GlobalAccessor<float>>();
    CUDA_OK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024 + 256));
    reset();
    memplace_kernel_poly::launch(blocks, threads, 1024 + 256, 0, n, 2.0f, GlobalAccessor<const float>{x},
                                 memplace::SharedAccessor<float>{c, 64, 1024}, GlobalAccessor<float>{y});
    CHECK(same());
    // L2 persisting window for y
    cudaStreamAttrValue w{};
    w.accessPolicyWindow.base_ptr = y;
    w.accessPolicyWindow.num_bytes = n * sizeof(float);
    w.accessPolicyWindow.hitRatio = 1.0f;
    w.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    w.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    CUDA_OK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, n * sizeof(float)));
    CUDA_OK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &w));
    reset();
    memplace_kernel_poly::launch(blocks, threads, 0, stream, n, 2.0f, GlobalAccessor<const float>{x},
                                 GlobalAccessor<const float>{c}, GlobalAccessor<float>{y});
    CUDA_OK(cudaStreamSynchronize(stream));
    CHECK(same());
    w.accessPolicyWindow.num_bytes = 0;
    CUDA_OK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &w));
    CUDA_OK(cudaCtxResetPersistingL2Cache());
    // tracing: one record per warp and site, all lanes of full warps
    reset();
    memplace_kernel_poly::launch(blocks, threads, 0, 0, n, 2.0f, memplace::TracingAccessor<const float>{x, 0},
                                 memplace::TracingAccessor<const float>{c, 1}, memplace::TracingAccessor<float>{y, 2});
    CHECK(same());
    unsigned count = 0;
    CUDA_OK(cudaMemcpyFromSymbol(&count, memplace::traceCount, sizeof count));
    const int warps = (n + 31) / 32;
    CHECK(count == static_cast<unsigned>(warps * 4));
    std::vector<memplace::TraceRecord> records(count);
    CUDA_OK(cudaMemcpyFromSymbol(records.data(), memplace::traceBuffer, count * sizeof(memplace::TraceRecord)));
    for (const auto& r : records) CHECK(r.mask == 0xffffffffu || r.mask == (1u << (n % 32)) - 1);
    CUDA_OK(cudaStreamDestroy(stream));
    CUDA_OK(cudaDeviceSynchronize());
    return finish("rewritten_contract");
}

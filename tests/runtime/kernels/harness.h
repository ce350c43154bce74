// Test harness for the hand-rewritten kernels: each kernel file registers a Case that owns its
// buffers, runs the original (plain CUDA) and the rewritten kernel (memplace::launch), and says
// which places each array may take. gpu_tests.cu runs every case over every placement.
#pragma once

#include "memplace/memplace.cuh"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#define MPT_CHECK(call)                                                                            \
    do {                                                                                           \
        cudaError_t mptErr_ = (call);                                                              \
        if (mptErr_ != cudaSuccess) {                                                              \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                     \
                         cudaGetErrorString(mptErr_));                                             \
            std::exit(2);                                                                          \
        }                                                                                          \
    } while (0)

namespace mptest {

using memplace::Place;

/// Host-to-device copy that has landed when it returns. A plain cudaMemcpy from pageable memory
/// may return before its DMA completes, and kernels on a non-blocking stream do not wait for it.
inline void h2d(void* dst, const void* src, std::size_t bytes) {
    MPT_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    MPT_CHECK(cudaDeviceSynchronize());
}

inline constexpr Place G = Place::Global;
inline constexpr Place RO = Place::ReadOnly;
inline constexpr Place TEX = Place::Texture;
inline constexpr Place CONST = Place::Constant;
inline constexpr Place SH = Place::Shared;
inline constexpr Place L2 = Place::L2Persist;

/// A device buffer of a case. Inputs are filled once; outputs are poisoned (0xFF bytes, a NaN
/// for floats) before every run; in-out buffers are restored to their initial contents.
struct Buffer {
    enum Kind { Input, Output, InOut };
    std::string name;
    Kind kind = Input;
    void* d = nullptr;
    std::size_t bytes = 0;
    std::vector<unsigned char> init; // Input and InOut
};

class Case {
public:
    virtual ~Case() = default;
    virtual std::string name() const = 0;
    virtual std::string kernel() const = 0;           ///< the descriptor's kernel name
    virtual std::vector<std::string> arrays() const = 0;
    virtual std::vector<std::vector<Place>> places() const = 0; ///< tested places per array
    virtual void setup(uint64_t seed) = 0;
    virtual void runOriginal(cudaStream_t s) = 0;
    virtual cudaError_t runRewritten(cudaStream_t s) = 0;

    void reset(cudaStream_t s) {
        for (Buffer& b : buffers) {
            if (b.kind == Buffer::Output) {
                MPT_CHECK(cudaMemsetAsync(b.d, 0xFF, b.bytes, s));
            } else if (b.kind == Buffer::InOut) {
                MPT_CHECK(cudaMemcpyAsync(b.d, b.init.data(), b.bytes, cudaMemcpyHostToDevice, s));
            }
        }
    }
    std::vector<std::vector<unsigned char>> results() {
        std::vector<std::vector<unsigned char>> out;
        for (Buffer& b : buffers) {
            if (b.kind != Buffer::Input) {
                out.emplace_back(b.bytes);
                MPT_CHECK(cudaMemcpy(out.back().data(), b.d, b.bytes, cudaMemcpyDeviceToHost));
            }
        }
        return out;
    }
    void teardown() {
        for (Buffer& b : buffers) {
            MPT_CHECK(cudaFree(b.d));
        }
        buffers.clear();
    }

protected:
    /// Allocates a buffer of `count` T and fills inputs and in-outs with gen(i).
    template <class T>
    T* add(const std::string& name, Buffer::Kind kind, std::size_t count,
           const std::function<T(std::size_t)>& gen = {}) {
        Buffer b;
        b.name = name;
        b.kind = kind;
        b.bytes = count * sizeof(T);
        MPT_CHECK(cudaMalloc(&b.d, b.bytes));
        if (kind != Buffer::Output) {
            std::vector<T> host(count);
            for (std::size_t i = 0; i < count; ++i) {
                host[i] = gen(i);
            }
            b.init.resize(b.bytes);
            std::memcpy(b.init.data(), host.data(), b.bytes);
            h2d(b.d, b.init.data(), b.bytes);
        }
        buffers.push_back(std::move(b));
        return static_cast<T*>(buffers.back().d);
    }

    std::vector<Buffer> buffers;
};

inline std::vector<std::function<std::unique_ptr<Case>()>>& registry() {
    static std::vector<std::function<std::unique_ptr<Case>()>> r;
    return r;
}

struct Register {
    explicit Register(std::function<std::unique_ptr<Case>()> f) {
        registry().push_back(std::move(f));
    }
};

inline float randomFloat(std::mt19937_64& g) {
    return std::uniform_real_distribution<float>(-1.0f, 1.0f)(g);
}

// Launchers the tracing tests and the benchmark use (defined in the kernel files).
cudaError_t saxpyRewritten(int n, float a, const float* x, float* y, dim3 block, cudaStream_t s);
void saxpyOriginal(int n, float a, const float* x, float* y, dim3 block, cudaStream_t s);
/// saxpy with x's original place the read-only path (`const float* __restrict__ x`).
cudaError_t saxpyRestrictRewritten(int n, float a, const float* x, float* y, dim3 block,
                                   cudaStream_t s);
cudaError_t uniformLookupRewritten(int n, int iters, unsigned mask, const float* coef, float* out,
                                   cudaStream_t s);
void uniformLookupOriginal(int n, int iters, unsigned mask, const float* coef, float* out,
                           cudaStream_t s);
cudaError_t scatteredLookupRewritten(int n, int iters, unsigned mask, const float* table,
                                     float* out, cudaStream_t s);
void scatteredLookupOriginal(int n, int iters, unsigned mask, const float* table, float* out,
                             cudaStream_t s);
cudaError_t histogramRewritten(int n, int bins, const unsigned* data, unsigned* hist,
                               cudaStream_t s);
cudaError_t divergeRewritten(int n, const float* a, float* out, cudaStream_t s);
/// The 5-point stencil over a w x h image (`in` is 2-D, rows of w floats), not registered.
std::unique_ptr<Case> makeStencilCase(int w, int h);

} // namespace mptest

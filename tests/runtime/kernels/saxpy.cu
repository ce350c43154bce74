// Streaming: y = a * x + y. Hand-written in the rewritten form of docs/rewrite-contract.md,
// with the original kernel beside it for comparison.
#include "harness.h"

// ---- original ----------------------------------------------------------------------------
__global__ void saxpy_original(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    y[i] = a * x[i] + y[i];
}

// ---- rewritten ---------------------------------------------------------------------------
template <class MP_x, class MP_y>
__global__ void saxpy(int n, float a, MP_x x, MP_y y) {
    memplace::stage(x, y);
    [&]() {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        y[memplace::at<2>(i)] = a * x[memplace::at<0>(i)] + y[memplace::at<1>(i)];
    }();
    memplace::unstage(y);
}

struct memplace_kernel_saxpy {
    static constexpr const char* name = "saxpy";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"x", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"y", 3, sizeof(float), memplace::Mode::ReadWrite, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    using compiled = memplace::Cartesian<
        memplace::PlaceList<memplace::Place::Global, memplace::Place::ReadOnly,
                            memplace::Place::Texture, memplace::Place::Constant,
                            memplace::Place::Shared, memplace::Place::L2Persist>,
        memplace::PlaceList<memplace::Place::Global, memplace::Place::Shared,
                            memplace::Place::L2Persist>>;
    template <class... Acc>
    static auto kernel() { return &saxpy<Acc...>; }
    template <class... Acc>
    static void launch(dim3 g, dim3 b, size_t shmem, cudaStream_t s, int n, float a, Acc... acc) {
        auto k = kernel<Acc...>();
        MEMPLACE_LAUNCH(k, g, b, shmem, s, n, a, acc...);
    }
};

// The same kernel as a program that declared `const float* __restrict__ x` would have it
// rewritten: x's original place is the read-only path, which the default instantiation uses.
struct memplace_kernel_saxpy_restrict {
    static constexpr const char* name = "saxpy_restrict";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"x", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1, -1,
         memplace::Place::ReadOnly},
        {"y", 3, sizeof(float), memplace::Mode::ReadWrite, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::Global, memplace::Place::Global>>;
    template <class... Acc>
    static auto kernel() { return &saxpy<Acc...>; }
    template <class... Acc>
    static void launch(dim3 g, dim3 b, size_t shmem, cudaStream_t s, int n, float a, Acc... acc) {
        auto k = kernel<Acc...>();
        MEMPLACE_LAUNCH(k, g, b, shmem, s, n, a, acc...);
    }
};

namespace mptest {

cudaError_t saxpyRestrictRewritten(int n, float a, const float* x, float* y, dim3 block,
                                   cudaStream_t s) {
    return memplace::launch<memplace_kernel_saxpy_restrict>((n + block.x - 1) / block.x, block, 0,
                                                            s, n, a, x, y);
}

cudaError_t saxpyRewritten(int n, float a, const float* x, float* y, dim3 block, cudaStream_t s) {
    return memplace::launch<memplace_kernel_saxpy>((n + block.x - 1) / block.x, block, 0, s, n, a,
                                                   x, y);
}
void saxpyOriginal(int n, float a, const float* x, float* y, dim3 block, cudaStream_t s) {
    MEMPLACE_LAUNCH(saxpy_original, (n + block.x - 1) / block.x, block, 0, s, n, a, x, y);
}

namespace {
class SaxpyCase : public Case {
public:
    std::string name() const override { return "saxpy"; }
    std::string kernel() const override { return "saxpy"; }
    std::vector<std::string> arrays() const override { return {"x", "y"}; }
    std::vector<std::vector<Place>> places() const override {
        return {{G, RO, TEX, CONST, SH, L2}, {G, SH, L2}};
    }
    void setup(uint64_t seed) override {
        std::mt19937_64 g(seed);
        x_ = add<float>("x", Buffer::Input, n_, [&](std::size_t) { return randomFloat(g); });
        y_ = add<float>("y", Buffer::InOut, n_, [&](std::size_t) { return randomFloat(g); });
    }
    void runOriginal(cudaStream_t s) override { saxpyOriginal(n_, 1.7f, x_, y_, 256, s); }
    cudaError_t runRewritten(cudaStream_t s) override {
        return saxpyRewritten(n_, 1.7f, x_, y_, 256, s);
    }

private:
    int n_ = 10000; // 40 KB per array: fits the constant pool; the last block is partial
    float* x_ = nullptr;
    float* y_ = nullptr;
};
Register reg([] { return std::make_unique<SaxpyCase>(); });
} // namespace

} // namespace mptest

// Each element of `out` is written by one block, and a block reads elements of `out` that other
// threads of the same block wrote (after a barrier); every third element is never written and
// must keep its value. Shared staging is feasible for `out` and exercises the dirty bitmap.
#include "harness.h"

// ---- original ----------------------------------------------------------------------------
__global__ void blockwise_original(int n, const float* in, float* out) {
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    if (i < n && t % 3 != 2) out[i] = in[i] * 2.0f + 1.0f;
    __syncthreads();
    if (i + 1 < n && t % 3 == 0 && t + 1 < (int)blockDim.x) out[i] += out[i + 1];
}

// ---- rewritten ---------------------------------------------------------------------------
template <class MP_in, class MP_out>
__global__ void blockwise(int n, MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
        int t = threadIdx.x;
        int i = blockIdx.x * blockDim.x + t;
        if (i < n && t % 3 != 2) out[memplace::at<1>(i)] = in[memplace::at<0>(i)] * 2.0f + 1.0f;
        __syncthreads();
        if (i + 1 < n && t % 3 == 0 && t + 1 < (int)blockDim.x)
            out[memplace::at<2>(i)] += out[memplace::at<3>(i + 1)];
    }();
    memplace::unstage(out);
}

struct memplace_kernel_blockwise {
    static constexpr const char* name = "blockwise";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"in", 1, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 2, sizeof(float), memplace::Mode::ReadWrite, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    using compiled = memplace::Cartesian<
        memplace::PlaceList<memplace::Place::Global, memplace::Place::ReadOnly,
                            memplace::Place::Texture, memplace::Place::Constant,
                            memplace::Place::Shared, memplace::Place::L2Persist>,
        memplace::PlaceList<memplace::Place::Global, memplace::Place::Shared,
                            memplace::Place::L2Persist>>;
    template <class... Acc>
    static auto kernel() { return &blockwise<Acc...>; }
    template <class MP_in, class MP_out>
    static void launch(dim3 g, dim3 b, size_t shmem, cudaStream_t s, int n, MP_in in,
                       MP_out out) {
        auto k = kernel<MP_in, MP_out>();
        MEMPLACE_LAUNCH(k, g, b, shmem, s, n, in, out);
    }
};

namespace mptest {
namespace {
class BlockwiseCase : public Case {
public:
    std::string name() const override { return "blockwise"; }
    std::string kernel() const override { return "blockwise"; }
    std::vector<std::string> arrays() const override { return {"in", "out"}; }
    std::vector<std::vector<Place>> places() const override {
        return {{G, RO, TEX, CONST, SH, L2}, {G, SH, L2}};
    }
    void setup(uint64_t seed) override {
        std::mt19937_64 g(seed);
        in_ = add<float>("in", Buffer::Input, n_, [&](std::size_t) { return randomFloat(g); });
        out_ = add<float>("out", Buffer::InOut, n_, [&](std::size_t) { return randomFloat(g); });
    }
    void runOriginal(cudaStream_t s) override {
        MEMPLACE_LAUNCH(blockwise_original, (n_ + 191) / 192, 192, 0, s, n_, in_, out_);
    }
    cudaError_t runRewritten(cudaStream_t s) override {
        return memplace::launch<memplace_kernel_blockwise>((n_ + 191) / 192, 192, 0, s, n_, in_,
                                                           out_);
    }

private:
    int n_ = 6001;
    float* in_ = nullptr;
    float* out_ = nullptr;
};
Register reg([] { return std::make_unique<BlockwiseCase>(); });
} // namespace
} // namespace mptest

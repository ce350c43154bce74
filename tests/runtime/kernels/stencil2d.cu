// A 5-point stencil over a W x H image: the input is indexed as row * W + column, so the
// texture place is a 2-D pitched texture (over a pitched copy when a row is not pitch-aligned).
#include "harness.h"

// ---- original ----------------------------------------------------------------------------
__global__ void stencil2d_original(int W, int H, const float* in, float* out) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    float c = in[y * W + x];
    float l = x > 0 ? in[y * W + x - 1] : c;
    float r = x < W - 1 ? in[y * W + x + 1] : c;
    float u = y > 0 ? in[(y - 1) * W + x] : c;
    float d = y < H - 1 ? in[(y + 1) * W + x] : c;
    out[y * W + x] = 0.5f * c + 0.125f * (l + r + u + d);
}

// ---- rewritten ---------------------------------------------------------------------------
template <class MP_in, class MP_out>
__global__ void stencil2d(int W, int H, MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
        int x = blockIdx.x * blockDim.x + threadIdx.x;
        int y = blockIdx.y * blockDim.y + threadIdx.y;
        if (x >= W || y >= H) return;
        float c = in[memplace::at<0>(y * W + x)];
        float l = x > 0 ? in[memplace::at<1>(y * W + x - 1)] : c;
        float r = x < W - 1 ? in[memplace::at<2>(y * W + x + 1)] : c;
        float u = y > 0 ? in[memplace::at<3>((y - 1) * W + x)] : c;
        float d = y < H - 1 ? in[memplace::at<4>((y + 1) * W + x)] : c;
        out[memplace::at<5>(y * W + x)] = 0.5f * c + 0.125f * (l + r + u + d);
    }();
    memplace::unstage(out);
}

struct memplace_kernel_stencil2d {
    static constexpr const char* name = "stencil2d";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"in", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_2d, 2, 0},
        {"out", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    using compiled = memplace::Cartesian<
        memplace::PlaceList<memplace::Place::Global, memplace::Place::ReadOnly,
                            memplace::Place::Texture, memplace::Place::Constant,
                            memplace::Place::Shared, memplace::Place::L2Persist>,
        memplace::PlaceList<memplace::Place::Global, memplace::Place::Shared,
                            memplace::Place::L2Persist>>;
    template <class... Acc>
    static auto kernel() { return &stencil2d<Acc...>; }
    template <class... Acc>
    static void launch(dim3 g, dim3 b, size_t shmem, cudaStream_t s, int W, int H, Acc... acc) {
        auto k = kernel<Acc...>();
        MEMPLACE_LAUNCH(k, g, b, shmem, s, W, H, acc...);
    }
};

namespace mptest {
namespace {
class StencilCase : public Case {
public:
    StencilCase(int w, int h) : w_(w), h_(h) {}
    std::string name() const override {
        return "stencil2d_" + std::to_string(w_) + "x" + std::to_string(h_);
    }
    std::string kernel() const override { return "stencil2d"; }
    std::vector<std::string> arrays() const override { return {"in", "out"}; }
    std::vector<std::vector<Place>> places() const override {
        return {{G, RO, TEX, CONST, SH, L2}, {G, SH, L2}};
    }
    void setup(uint64_t seed) override {
        std::mt19937_64 g(seed);
        const std::size_t n = static_cast<std::size_t>(w_) * h_;
        in_ = add<float>("in", Buffer::Input, n, [&](std::size_t) { return randomFloat(g); });
        out_ = add<float>("out", Buffer::Output, n);
    }
    dim3 grid() const { return dim3((w_ + 31) / 32, (h_ + 7) / 8); }
    void runOriginal(cudaStream_t s) override {
        MEMPLACE_LAUNCH(stencil2d_original, grid(), dim3(32, 8), 0, s, w_, h_, in_, out_);
    }
    cudaError_t runRewritten(cudaStream_t s) override {
        return memplace::launch<memplace_kernel_stencil2d>(grid(), dim3(32, 8), 0, s, w_, h_,
                                                           in_, out_);
    }

private:
    int w_;
    int h_;
    float* in_ = nullptr;
    float* out_ = nullptr;
};
// 123 floats = 492-byte rows: not pitch-aligned, the 2-D texture reads a pitched copy.
Register regA([] { return std::make_unique<StencilCase>(123, 97); });
// 128 floats = 512-byte rows: the 2-D texture is over the array itself.
Register regB([] { return std::make_unique<StencilCase>(128, 96); });
} // namespace

std::unique_ptr<Case> makeStencilCase(int w, int h) {
    return std::make_unique<StencilCase>(w, h);
}
} // namespace mptest

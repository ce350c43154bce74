// A histogram with atomics: `hist` is updated by every block (atomicAdd on &hist[...]), so only
// global and L2-persisting are feasible for it; the input takes every read-only place.
#include "harness.h"

// ---- original ----------------------------------------------------------------------------
__global__ void histogram_original(int n, int bins, const unsigned* data, unsigned* hist) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(&hist[data[i] % bins], 1u);
}

// ---- rewritten ---------------------------------------------------------------------------
template <class MP_data, class MP_hist>
__global__ void histogram(int n, int bins, MP_data data, MP_hist hist) {
    memplace::stage(data, hist);
    [&]() {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        atomicAdd(&hist[memplace::at<1>(data[memplace::at<0>(i)] % bins)], 1u);
    }();
    memplace::unstage(hist);
}

struct memplace_kernel_histogram {
    static constexpr const char* name = "histogram";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"data", 2, sizeof(unsigned), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"hist", 3, sizeof(unsigned), memplace::Mode::ReadWrite, memplace::kPlaces_rw_noshared, 1},
    };
    using types = memplace::Types<const unsigned, unsigned>;
    using compiled = memplace::Cartesian<
        memplace::PlaceList<memplace::Place::Global, memplace::Place::ReadOnly,
                            memplace::Place::Texture, memplace::Place::Constant,
                            memplace::Place::Shared, memplace::Place::L2Persist>,
        memplace::PlaceList<memplace::Place::Global, memplace::Place::L2Persist>>;
    template <class... Acc>
    static auto kernel() { return &histogram<Acc...>; }
    template <class... Acc>
    static void launch(dim3 g, dim3 b, size_t shmem, cudaStream_t s, int n, int bins,
                       Acc... acc) {
        auto k = kernel<Acc...>();
        MEMPLACE_LAUNCH(k, g, b, shmem, s, n, bins, acc...);
    }
};

// A kernel for the tracing tests only: a divergent branch reads through two sites.
template <class MP_a, class MP_out>
__global__ void diverge(int n, MP_a a, MP_out out) {
    memplace::stage(a, out);
    [&]() {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        float v;
        if ((threadIdx.x & 31) < 12) {
            v = a[memplace::at<0>(i)];
        } else {
            v = a[memplace::at<1>(2 * i)];
        }
        out[memplace::at<2>(i)] = v;
    }();
    memplace::unstage(out);
}

struct memplace_kernel_diverge {
    static constexpr const char* name = "diverge";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"a", 1, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 2, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    template <class... Acc>
    static auto kernel() { return &diverge<Acc...>; }
    template <class... Acc>
    static void launch(dim3 g, dim3 b, size_t shmem, cudaStream_t s, int n, Acc... acc) {
        auto k = kernel<Acc...>();
        MEMPLACE_LAUNCH(k, g, b, shmem, s, n, acc...);
    }
};

namespace mptest {

cudaError_t histogramRewritten(int n, int bins, const unsigned* data, unsigned* hist,
                               cudaStream_t s) {
    return memplace::launch<memplace_kernel_histogram>((n + 255) / 256, 256, 0, s, n, bins, data,
                                                       hist);
}
cudaError_t divergeRewritten(int n, const float* a, float* out, cudaStream_t s) {
    return memplace::launch<memplace_kernel_diverge>((n + 127) / 128, 128, 0, s, n, a, out);
}

namespace {
class HistogramCase : public Case {
public:
    std::string name() const override { return "histogram"; }
    std::string kernel() const override { return "histogram"; }
    std::vector<std::string> arrays() const override { return {"data", "hist"}; }
    std::vector<std::vector<Place>> places() const override {
        return {{G, RO, TEX, CONST, SH, L2}, {G, L2}};
    }
    void setup(uint64_t seed) override {
        std::mt19937_64 g(seed);
        data_ = add<unsigned>("data", Buffer::Input, n_,
                              [&](std::size_t) { return static_cast<unsigned>(g()); });
        hist_ = add<unsigned>("hist", Buffer::InOut, bins_,
                              [&](std::size_t i) { return static_cast<unsigned>(i * 7); });
    }
    void runOriginal(cudaStream_t s) override {
        MEMPLACE_LAUNCH(histogram_original, (n_ + 255) / 256, 256, 0, s, n_, bins_, data_, hist_);
    }
    cudaError_t runRewritten(cudaStream_t s) override {
        return histogramRewritten(n_, bins_, data_, hist_, s);
    }

private:
    int n_ = 16000;  // 62.5 KB: fits the constant pool
    int bins_ = 251;
    unsigned* data_ = nullptr;
    unsigned* hist_ = nullptr;
};
Register reg([] { return std::make_unique<HistogramCase>(); });
} // namespace

} // namespace mptest

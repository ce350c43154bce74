// Table lookups: a warp-uniform one (every lane of a warp reads the same element: constant
// memory's broadcast case) and a scattered one (lanes read pseudo-random elements of a small
// table many times: the block reuses the table, shared memory's case). Rewritten by hand in the
// form of docs/rewrite-contract.md, originals beside them.
#include "harness.h"

// ---- originals ---------------------------------------------------------------------------
__global__ void uniform_lookup_original(int n, int iters, unsigned mask, const float* coef,
                                        float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned w = (unsigned)i >> 5;
    float acc = 0.0f;
    for (int k = 0; k < iters; ++k) acc += coef[(w + k * 97u) & mask];
    out[i] = acc;
}

__global__ void scattered_lookup_original(int n, int iters, unsigned mask, const float* table,
                                          float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned h = (unsigned)i * 2654435761u;
    float acc = 0.0f;
    for (int k = 0; k < iters; ++k) {
        h = h * 1664525u + 1013904223u;
        acc += table[(h >> 7) & mask];
    }
    out[i] = acc;
}

// ---- rewritten ---------------------------------------------------------------------------
template <class MP_coef, class MP_out>
__global__ void uniform_lookup(int n, int iters, unsigned mask, MP_coef coef, MP_out out) {
    memplace::stage(coef, out);
    [&]() {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        unsigned w = (unsigned)i >> 5;
        float acc = 0.0f;
        for (int k = 0; k < iters; ++k) acc += coef[memplace::at<0>((w + k * 97u) & mask)];
        out[memplace::at<1>(i)] = acc;
    }();
    memplace::unstage(out);
}

template <class MP_table, class MP_out>
__global__ void scattered_lookup(int n, int iters, unsigned mask, MP_table table, MP_out out) {
    memplace::stage(table, out);
    [&]() {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        unsigned h = (unsigned)i * 2654435761u;
        float acc = 0.0f;
        for (int k = 0; k < iters; ++k) {
            h = h * 1664525u + 1013904223u;
            acc += table[memplace::at<0>((h >> 7) & mask)];
        }
        out[memplace::at<1>(i)] = acc;
    }();
    memplace::unstage(out);
}

using AllReadPlaces =
    memplace::PlaceList<memplace::Place::Global, memplace::Place::ReadOnly,
                        memplace::Place::Texture, memplace::Place::Constant,
                        memplace::Place::Shared, memplace::Place::L2Persist>;
using AllWritePlaces = memplace::PlaceList<memplace::Place::Global, memplace::Place::Shared,
                                           memplace::Place::L2Persist>;

struct memplace_kernel_uniform_lookup {
    static constexpr const char* name = "uniform_lookup";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"coef", 3, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 4, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    using compiled = memplace::Cartesian<AllReadPlaces, AllWritePlaces>;
    template <class... Acc>
    static auto kernel() { return &uniform_lookup<Acc...>; }
    template <class... Acc>
    static void launch(dim3 g, dim3 b, size_t shmem, cudaStream_t s, int n, int iters,
                       unsigned mask, Acc... acc) {
        auto k = kernel<Acc...>();
        MEMPLACE_LAUNCH(k, g, b, shmem, s, n, iters, mask, acc...);
    }
};

struct memplace_kernel_scattered_lookup {
    static constexpr const char* name = "scattered_lookup";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"table", 3, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 4, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    using compiled = memplace::Cartesian<AllReadPlaces, AllWritePlaces>;
    template <class... Acc>
    static auto kernel() { return &scattered_lookup<Acc...>; }
    template <class... Acc>
    static void launch(dim3 g, dim3 b, size_t shmem, cudaStream_t s, int n, int iters,
                       unsigned mask, Acc... acc) {
        auto k = kernel<Acc...>();
        MEMPLACE_LAUNCH(k, g, b, shmem, s, n, iters, mask, acc...);
    }
};

namespace mptest {

cudaError_t uniformLookupRewritten(int n, int iters, unsigned mask, const float* coef, float* out,
                                   cudaStream_t s) {
    return memplace::launch<memplace_kernel_uniform_lookup>((n + 255) / 256, 256, 0, s, n, iters,
                                                            mask, coef, out);
}
void uniformLookupOriginal(int n, int iters, unsigned mask, const float* coef, float* out,
                           cudaStream_t s) {
    MEMPLACE_LAUNCH(uniform_lookup_original, (n + 255) / 256, 256, 0, s, n, iters, mask, coef, out);
}
cudaError_t scatteredLookupRewritten(int n, int iters, unsigned mask, const float* table,
                                     float* out, cudaStream_t s) {
    return memplace::launch<memplace_kernel_scattered_lookup>((n + 255) / 256, 256, 0, s, n,
                                                              iters, mask, table, out);
}
void scatteredLookupOriginal(int n, int iters, unsigned mask, const float* table, float* out,
                             cudaStream_t s) {
    MEMPLACE_LAUNCH(scattered_lookup_original, (n + 255) / 256, 256, 0, s, n, iters, mask, table, out);
}

namespace {
class LookupCase : public Case {
public:
    explicit LookupCase(bool uniform) : uniform_(uniform) {}
    std::string name() const override { return uniform_ ? "uniform_lookup" : "scattered_lookup"; }
    std::string kernel() const override { return name(); }
    std::vector<std::string> arrays() const override {
        return {uniform_ ? "coef" : "table", "out"};
    }
    std::vector<std::vector<Place>> places() const override {
        return {{G, RO, TEX, CONST, SH, L2}, {G, SH, L2}};
    }
    void setup(uint64_t seed) override {
        std::mt19937_64 g(seed);
        table_ = add<float>("table", Buffer::Input, mask_ + 1,
                            [&](std::size_t) { return randomFloat(g); });
        out_ = add<float>("out", Buffer::Output, n_);
    }
    void runOriginal(cudaStream_t s) override {
        if (uniform_) {
            uniformLookupOriginal(n_, iters_, mask_, table_, out_, s);
        } else {
            scatteredLookupOriginal(n_, iters_, mask_, table_, out_, s);
        }
    }
    cudaError_t runRewritten(cudaStream_t s) override {
        return uniform_ ? uniformLookupRewritten(n_, iters_, mask_, table_, out_, s)
                        : scatteredLookupRewritten(n_, iters_, mask_, table_, out_, s);
    }

private:
    bool uniform_;
    int n_ = 12345;          // out: 48 KB, so staging it needs the raised shared-memory limit
    int iters_ = 8;
    unsigned mask_ = 4095;   // 16 KB table
    float* table_ = nullptr;
    float* out_ = nullptr;
};
Register regU([] { return std::make_unique<LookupCase>(true); });
Register regS([] { return std::make_unique<LookupCase>(false); });
} // namespace

} // namespace mptest

// The resampling step of a particle filter, as Rodinia's particlefilter writes it (find_index):
// each particle draws u[i] and takes the position of the first particle whose cumulative weight
// reaches it, by a linear search of the CDF. With systematic resampling neighbouring threads
// look for nearby values, so the lanes of a warp read the same CDF entries in step for most of
// the search; whether the CDF fits constant memory depends on the particle count.
// memplace: rewritten by `memplace rewrite` from particle_filter.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
// The file declares 4 bytes of __constant__ data of its own: the constant pool
// gets the rest of the 64 KB.
#define MEMPLACE_CONSTANT_POOL_BYTES (65536 - (4 + 15) / 16 * 16)
#include "memplace/memplace.cuh"
#include "demo.h"

#include <chrono>
#include <cuda_runtime.h>

template <class MP_cdf, class MP_u, class MP_x, class MP_y, class MP_xo, class MP_yo>
__global__ void find_index(int n, MP_cdf cdf, MP_u u, MP_x x, MP_y y,
                           MP_xo xo, MP_yo yo) {
    memplace::stage(cdf, u, x, y, xo, yo);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float v = u[memplace::at<0>(i)];
    int index = n - 1;
    for (int j = 0; j < n; ++j) {
        if (cdf[memplace::at<1>(j)] >= v) {
            index = j;
            break;
        }
    }
    xo[memplace::at<2>(i)] = x[memplace::at<3>(index)];
    yo[memplace::at<4>(i)] = y[memplace::at<5>(index)];
    }();
    memplace::unstage(xo, yo);
}

// memplace: what the runtime needs to know about kernel 'find_index' (docs/rewrite-contract.md)
struct memplace_kernel_find_index {
    static constexpr const char* name = "find_index";
    static constexpr int numArrays = 6;
    static constexpr memplace::ArrayDesc arrays[6] = {
        {"cdf", 1, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"u", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"x", 3, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"y", 4, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"xo", 5, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
        {"yo", 6, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, const float, const float, const float, float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::ReadOnly,
            memplace::Place::ReadOnly, memplace::Place::ReadOnly, memplace::Place::Global,
            memplace::Place::Global>,
        memplace::Places<memplace::Place::Constant, memplace::Place::ReadOnly,
            memplace::Place::ReadOnly, memplace::Place::ReadOnly, memplace::Place::Global,
            memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "find_index";
    static constexpr const char* jitTypes[6] = {"const float", "const float", "const float",
        "const float", "float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_cdf, class MP_u, class MP_x, class MP_y, class MP_xo, class MP_yo>
__global__ void find_index(int n, MP_cdf cdf, MP_u u, MP_x x, MP_y y,
                           MP_xo xo, MP_yo yo) {
    memplace::stage(cdf, u, x, y, xo, yo);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float v = u[memplace::at<0>(i)];
    int index = n - 1;
    for (int j = 0; j < n; ++j) {
        if (cdf[memplace::at<1>(j)] >= v) {
            index = j;
            break;
        }
    }
    xo[memplace::at<2>(i)] = x[memplace::at<3>(index)];
    yo[memplace::at<4>(i)] = y[memplace::at<5>(index)];
    }();
    memplace::unstage(xo, yo);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::find_index<Acc...>; }
    template <class MP_cdf, class MP_u, class MP_x, class MP_y, class MP_xo, class MP_yo>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_cdf cdf, MP_u u, MP_x x, MP_y y, MP_xo xo, MP_yo yo) {
        auto mp_kernel = kernel<MP_cdf, MP_u, MP_x, MP_y, MP_xo, MP_yo>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, cdf, u, x, y, xo,
            yo);
    }
};

namespace demo {

namespace {

constexpr int kBlock = 128;

bool ok(cudaError_t e, const char* what, std::string& error) {
    if (e == cudaSuccess) {
        return true;
    }
    error = std::string(what) + ": " + cudaGetErrorString(e);
    return false;
}

struct DeviceParticles {
    float* cdf = nullptr;
    float* u = nullptr;
    float* x = nullptr;
    float* y = nullptr;
    ~DeviceParticles() {
        cudaFree(cdf);
        cudaFree(u);
        cudaFree(x);
        cudaFree(y);
    }
    bool upload(const Particles& p, std::string& error) {
        const size_t bytes = p.n * sizeof(float);
        float** dst[] = {&cdf, &u, &x, &y};
        const std::vector<float>* src[] = {&p.cdf, &p.u, &p.x, &p.y};
        for (int k = 0; k < 4; ++k) {
            if (!ok(cudaMalloc(dst[k], bytes), "cudaMalloc", error) ||
                !ok(cudaMemcpy(*dst[k], src[k]->data(), bytes, cudaMemcpyHostToDevice),
                    "cudaMemcpy", error)) {
                return false;
            }
        }
        return true;
    }
};

void resample(const Particles& p, const DeviceParticles& d, float* xo, float* yo,
              cudaStream_t stream) {
    const int blocks = (p.n + kBlock - 1) / kBlock;
    memplace::launch<memplace_kernel_find_index>(blocks, kBlock, 0, stream, p.n, d.cdf, d.u, d.x,
        d.y, xo, yo);
}

} // namespace

bool resampleGpu(const Particles& p, int reps, std::vector<float>& xo, std::vector<float>& yo,
                 Timing& timing, std::string& error) {
    DeviceParticles d;
    if (!d.upload(p, error)) {
        return false;
    }
    const size_t bytes = p.n * sizeof(float);
    float* dxo = nullptr;
    float* dyo = nullptr;
    bool good = ok(cudaMalloc(&dxo, bytes), "cudaMalloc", error) &&
                ok(cudaMalloc(&dyo, bytes), "cudaMalloc", error) &&
                ok(cudaMemset(dxo, 0xff, bytes), "cudaMemset", error) &&
                ok(cudaMemset(dyo, 0xff, bytes), "cudaMemset", error);
    for (int r = 0; good && r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        resample(p, d, dxo, dyo, nullptr);
        good = ok(cudaGetLastError(), "find_index launch", error) &&
               ok(cudaDeviceSynchronize(), "find_index", error);
        timing.launchMs.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
    }
    xo.assign(p.n, 0.0f);
    yo.assign(p.n, 0.0f);
    good = good &&
           ok(cudaMemcpy(xo.data(), dxo, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy", error) &&
           ok(cudaMemcpy(yo.data(), dyo, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy", error);
    cudaFree(dxo);
    cudaFree(dyo);
    return good;
}

bool resampleGpuStreams(const Particles& p, int reps, int streams,
                        std::vector<std::vector<float>>& xos, std::vector<std::vector<float>>& yos,
                        std::string& error) {
    DeviceParticles d;
    if (!d.upload(p, error)) {
        return false;
    }
    const size_t bytes = p.n * sizeof(float);
    std::vector<cudaStream_t> s(streams, nullptr);
    std::vector<float*> dxo(streams, nullptr);
    std::vector<float*> dyo(streams, nullptr);
    bool good = true;
    for (int k = 0; good && k < streams; ++k) {
        good = ok(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking), "cudaStreamCreate",
                  error) &&
               ok(cudaMalloc(&dxo[k], bytes), "cudaMalloc", error) &&
               ok(cudaMalloc(&dyo[k], bytes), "cudaMalloc", error) &&
               ok(cudaMemsetAsync(dxo[k], 0xff, bytes, s[k]), "cudaMemset", error) &&
               ok(cudaMemsetAsync(dyo[k], 0xff, bytes, s[k]), "cudaMemset", error);
    }
    for (int r = 0; good && r < reps; ++r) {
        for (int k = 0; good && k < streams; ++k) {
            resample(p, d, dxo[k], dyo[k], s[k]);
            good = ok(cudaGetLastError(), "find_index launch", error);
        }
    }
    xos.assign(streams, std::vector<float>(p.n, 0.0f));
    yos.assign(streams, std::vector<float>(p.n, 0.0f));
    for (int k = 0; k < streams; ++k) {
        good = good && ok(cudaStreamSynchronize(s[k]), "find_index", error) &&
               ok(cudaMemcpy(xos[k].data(), dxo[k], bytes, cudaMemcpyDeviceToHost), "cudaMemcpy",
                  error) &&
               ok(cudaMemcpy(yos[k].data(), dyo[k], bytes, cudaMemcpyDeviceToHost), "cudaMemcpy",
                  error);
        cudaFree(dxo[k]);
        cudaFree(dyo[k]);
        if (s[k] != nullptr) {
            cudaStreamDestroy(s[k]);
        }
    }
    return good;
}

} // namespace demo

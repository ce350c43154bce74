// Elements reached through a pointer derived from a kernel parameter and then dereferenced,
// as nearest-neighbour and particle codes write them: `Pos* p = locs + id;` read as `p->lat`,
// `float* d = out + id;` written as `*d = ...`, a structure element updated through a local
// pointer (`q->x += q->vx`), and a parameter rebased at the top of the kernel then read as
// `*src`. Each becomes an access of the accessor's view at the pointer's offset
// (`memplace::offset`, `p[memplace::at<S>(0)].lat`). Checks against the CPU, prints a checksum.
// memplace: rewritten by `memplace rewrite` from derived_pointers.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
#include "memplace/memplace.cuh"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                \
    do {                                                                                \
        cudaError_t err_ = (call);                                                      \
        if (err_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

struct Pos {
    float lat;
    float lng;
};

struct Body {
    float x, y;
    float vx, vy;
};

template <class MP_locs, class MP_out>
__global__ void distances(MP_locs locs, MP_out out, int n, float lat, float lng) {
    memplace::stage(locs, out);
    [&]() {
    const int id = blockDim.x * (gridDim.x * blockIdx.y + blockIdx.x) + threadIdx.x;
    auto p = memplace::offset(locs, id);
    if (id < n) {
        auto d = memplace::offset(out, id);
        d[memplace::at<0>(0)] = sqrtf((lat - p[memplace::at<1>(0)].lat) * (lat - p[memplace::at<2>(0)].lat) + (lng - (p[memplace::at<3>(0)]).lng) * (lng - (p[memplace::at<4>(0)]).lng));
    }
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'distances' (docs/rewrite-contract.md)
struct memplace_kernel_distances {
    static constexpr const char* name = "distances";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"locs", 0, sizeof(Pos), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 1, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<Pos, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "distances";
    static constexpr const char* jitTypes[2] = {"const Pos", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

struct Pos {
    float lat;
    float lng;
};

template <class MP_locs, class MP_out>
__global__ void distances(MP_locs locs, MP_out out, int n, float lat, float lng) {
    memplace::stage(locs, out);
    [&]() {
    const int id = blockDim.x * (gridDim.x * blockIdx.y + blockIdx.x) + threadIdx.x;
    auto p = memplace::offset(locs, id);
    if (id < n) {
        auto d = memplace::offset(out, id);
        d[memplace::at<0>(0)] = sqrtf((lat - p[memplace::at<1>(0)].lat) * (lat - p[memplace::at<2>(0)].lat) + (lng - (p[memplace::at<3>(0)]).lng) * (lng - (p[memplace::at<4>(0)]).lng));
    }
    }();
    memplace::unstage(out);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::distances<Acc...>; }
    template <class MP_locs, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_locs locs, MP_out out, int n, float lat, float lng) {
        auto mp_kernel = kernel<MP_locs, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, locs, out, n, lat, lng);
    }
};

template <class MP_bodies>
__global__ void advance(MP_bodies bodies, int n, float dt) {
    memplace::stage(bodies);
    [&]() {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        auto q = memplace::offset(bodies, i);
        (&q[memplace::at<5>(0)])->x += memplace::value(q[memplace::at<6>(0)]).vx * dt;
        (&q[memplace::at<7>(0)])->y += memplace::value(q[memplace::at<8>(0)]).vy * dt;
        (&q[memplace::at<9>(0)])->vy -= 1.0f;
    }
    }();
    memplace::unstage(bodies);
}

// memplace: what the runtime needs to know about kernel 'advance' (docs/rewrite-contract.md)
struct memplace_kernel_advance {
    static constexpr const char* name = "advance";
    static constexpr int numArrays = 1;
    static constexpr memplace::ArrayDesc arrays[1] = {
        {"bodies", 0, sizeof(Body), memplace::Mode::ReadWrite, memplace::kPlaces_rw_noshared, 1},
    };
    using types = memplace::Types<Body>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "advance";
    static constexpr const char* jitTypes[1] = {"Body"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

struct Body {
    float x, y;
    float vx, vy;
};

template <class MP_bodies>
__global__ void advance(MP_bodies bodies, int n, float dt) {
    memplace::stage(bodies);
    [&]() {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        auto q = memplace::offset(bodies, i);
        (&q[memplace::at<5>(0)])->x += memplace::value(q[memplace::at<6>(0)]).vx * dt;
        (&q[memplace::at<7>(0)])->y += memplace::value(q[memplace::at<8>(0)]).vy * dt;
        (&q[memplace::at<9>(0)])->vy -= 1.0f;
    }
    }();
    memplace::unstage(bodies);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::advance<Acc...>; }
    template <class MP_bodies>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_bodies bodies, int n, float dt) {
        auto mp_kernel = kernel<MP_bodies>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, bodies, n, dt);
    }
};

// Each block handles one row of `width` values starting at `first + row * pitch`.
template <class MP_src, class MP_diffs>
__global__ void rowDiffs(MP_src src, MP_diffs diffs, int first, int pitch, int width) {
    memplace::stage(src, diffs);
    [&]() {
    const auto mp_src = memplace::offset(src, first + blockIdx.x * pitch);
    const int c = threadIdx.x;
    if (c + 1 < width) {
        diffs[memplace::at<10>(blockIdx.x * width + c)] = mp_src[memplace::at<11>(c + 1)] - mp_src[memplace::at<12>(c)];
    } else if (c + 1 == width) {
        diffs[memplace::at<13>(blockIdx.x * width + c)] = mp_src[memplace::at<14>(0)];
    }
    }();
    memplace::unstage(diffs);
}

// memplace: what the runtime needs to know about kernel 'rowDiffs' (docs/rewrite-contract.md)
struct memplace_kernel_rowDiffs {
    static constexpr const char* name = "rowDiffs";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"src", 0, sizeof(int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"diffs", 1, sizeof(int), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const int, int>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "rowDiffs";
    static constexpr const char* jitTypes[2] = {"const int", "int"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_src, class MP_diffs>
__global__ void rowDiffs(MP_src src, MP_diffs diffs, int first, int pitch, int width) {
    memplace::stage(src, diffs);
    [&]() {
    const auto mp_src = memplace::offset(src, first + blockIdx.x * pitch);
    const int c = threadIdx.x;
    if (c + 1 < width) {
        diffs[memplace::at<10>(blockIdx.x * width + c)] = mp_src[memplace::at<11>(c + 1)] - mp_src[memplace::at<12>(c)];
    } else if (c + 1 == width) {
        diffs[memplace::at<13>(blockIdx.x * width + c)] = mp_src[memplace::at<14>(0)];
    }
    }();
    memplace::unstage(diffs);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::rowDiffs<Acc...>; }
    template <class MP_src, class MP_diffs>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_src src, MP_diffs diffs, int first, int pitch, int width) {
        auto mp_kernel = kernel<MP_src, MP_diffs>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, src, diffs, first,
            pitch, width);
    }
};

static unsigned long long fnv1a(const void* data, size_t bytes, unsigned long long h) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

int main() {
    const int n = 700, rows = 12, width = 40, pitch = 45, first = 3;
    std::vector<Pos> hl(n);
    std::vector<Body> hb(n);
    for (int i = 0; i < n; ++i) {
        hl[i] = {static_cast<float>((i * 37) % 180) - 90.0f, static_cast<float>((i * 53) % 360)};
        hb[i] = {i * 0.5f, i * 0.25f, (i % 7) * 0.125f, 2.0f};
    }
    std::vector<int> hs(first + rows * pitch);
    for (size_t i = 0; i < hs.size(); ++i) {
        hs[i] = static_cast<int>((i * i * 7 + 3) % 1009);
    }
    Pos* dL;
    Body* dB;
    float* dOut;
    int *dS, *dDiffs;
    CUDA_CHECK(cudaMalloc(&dL, n * sizeof(Pos)));
    CUDA_CHECK(cudaMalloc(&dB, n * sizeof(Body)));
    CUDA_CHECK(cudaMalloc(&dOut, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dS, hs.size() * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dDiffs, rows * width * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dL, hl.data(), n * sizeof(Pos), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, hb.data(), n * sizeof(Body), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dS, hs.data(), hs.size() * sizeof(int), cudaMemcpyHostToDevice));
    memplace::launch<memplace_kernel_distances>((n + 127) / 128, 128, 0, 0, dL, dOut, n, 12.5f,
        100.0f);
    for (int step = 0; step < 3; ++step) {
        memplace::launch<memplace_kernel_advance>((n + 63) / 64, 64, 0, 0, dB, n, 0.5f);
    }
    memplace::launch<memplace_kernel_rowDiffs>(rows, 64, 0, 0, dS, dDiffs, first, pitch, width);
    CUDA_CHECK(cudaGetLastError());
    std::vector<float> go(n);
    std::vector<Body> gb(n);
    std::vector<int> gd(rows * width);
    CUDA_CHECK(cudaMemcpy(go.data(), dOut, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gb.data(), dB, n * sizeof(Body), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gd.data(), dDiffs, rows * width * sizeof(int), cudaMemcpyDeviceToHost));
    auto near = [](float got, float want) {
        return std::fabs(got - want) <= 1e-4f * (1.0f + std::fabs(want));
    };
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        const float dl = 12.5f - hl[i].lat, dg = 100.0f - hl[i].lng;
        bad += !near(go[i], std::sqrt(dl * dl + dg * dg));
        Body b = hb[i];
        for (int step = 0; step < 3; ++step) {
            b.x += b.vx * 0.5f;
            b.y += b.vy * 0.5f;
            b.vy -= 1.0f;
        }
        bad += !near(gb[i].x, b.x) + !near(gb[i].y, b.y) + (gb[i].vy != b.vy);
    }
    for (int r = 0; r < rows; ++r) {
        const int* row = hs.data() + first + r * pitch;
        for (int c = 0; c < width; ++c) {
            bad += gd[r * width + c] != (c + 1 < width ? row[c + 1] - row[c] : row[0]);
        }
    }
    unsigned long long h = 1469598103934665603ull;
    h = fnv1a(go.data(), go.size() * sizeof(float), h);
    h = fnv1a(gb.data(), gb.size() * sizeof(Body), h);
    h = fnv1a(gd.data(), gd.size() * sizeof(int), h);
    printf("derived_pointers: %s, outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", h);
    CUDA_CHECK(cudaFree(dL));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dOut));
    CUDA_CHECK(cudaFree(dS));
    CUDA_CHECK(cudaFree(dDiffs));
    return bad == 0 ? 0 : 1;
}

// 2-D indexing: row-major matrices addressed as row * width + col from a 2-D grid
// (element-wise add, naive transpose, 5-point stencil).
// memplace: rewritten by `memplace rewrite` from matrix_2d.cu: kernels are templates over
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

static unsigned int g_seed = 2024u;
static float frand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return static_cast<float>(g_seed >> 8) * (1.0f / 16777216.0f);
}

template <class MP_a, class MP_b, class MP_c>
__global__ void matrix_add(int width, int height, MP_a a, MP_b b, MP_c c) {
    memplace::stage(a, b, c);
    [&]() {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < height && col < width) {
        c[memplace::at<0>(row * width + col)] = a[memplace::at<1>(row * width + col)] + b[memplace::at<2>(row * width + col)];
    }
    }();
    memplace::unstage(c);
}

// memplace: what the runtime needs to know about kernel 'matrix_add' (docs/rewrite-contract.md)
struct memplace_kernel_matrix_add {
    static constexpr const char* name = "matrix_add";
    static constexpr int numArrays = 3;
    static constexpr memplace::ArrayDesc arrays[3] = {
        {"a", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_2d, 2, 0},
        {"b", 3, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_2d, 2, 0},
        {"c", 4, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::ReadOnly,
            memplace::Place::Global>,
        memplace::Places<memplace::Place::Texture, memplace::Place::Texture,
            memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "matrix_add";
    static constexpr const char* jitTypes[3] = {"const float", "const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_a, class MP_b, class MP_c>
__global__ void matrix_add(int width, int height, MP_a a, MP_b b, MP_c c) {
    memplace::stage(a, b, c);
    [&]() {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < height && col < width) {
        c[memplace::at<0>(row * width + col)] = a[memplace::at<1>(row * width + col)] + b[memplace::at<2>(row * width + col)];
    }
    }();
    memplace::unstage(c);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::matrix_add<Acc...>; }
    template <class MP_a, class MP_b, class MP_c>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            int width, int height, MP_a a, MP_b b, MP_c c) {
        auto mp_kernel = kernel<MP_a, MP_b, MP_c>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, width, height, a, b, c);
    }
};

template <class MP_in, class MP_out>
__global__ void transpose_naive(int width, int height, MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        out[memplace::at<3>(x * height + y)] = in[memplace::at<4>(y * width + x)];
    }
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'transpose_naive' (docs/rewrite-contract.md)
struct memplace_kernel_transpose_naive {
    static constexpr const char* name = "transpose_naive";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"in", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_2d, 2, 0},
        {"out", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>,
        memplace::Places<memplace::Place::Texture, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "transpose_naive";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_in, class MP_out>
__global__ void transpose_naive(int width, int height, MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        out[memplace::at<3>(x * height + y)] = in[memplace::at<4>(y * width + x)];
    }
    }();
    memplace::unstage(out);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::transpose_naive<Acc...>; }
    template <class MP_in, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            int width, int height, MP_in in, MP_out out) {
        auto mp_kernel = kernel<MP_in, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, width, height, in, out);
    }
};

template <class MP_in, class MP_out>
__global__ void stencil5(int width, int height, MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 1 && x < width - 1 && y >= 1 && y < height - 1) {
        out[memplace::at<5>(y * width + x)] = 0.5f * in[memplace::at<6>(y * width + x)] +
                             0.125f * (in[memplace::at<7>((y - 1) * width + x)] + in[memplace::at<8>((y + 1) * width + x)] +
                                       in[memplace::at<9>(y * width + x - 1)] + in[memplace::at<10>(y * width + x + 1)]);
    } else if (x < width && y < height) {
        out[memplace::at<11>(y * width + x)] = in[memplace::at<12>(y * width + x)];
    }
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'stencil5' (docs/rewrite-contract.md)
struct memplace_kernel_stencil5 {
    static constexpr const char* name = "stencil5";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"in", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_2d, 2, 0},
        {"out", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>,
        memplace::Places<memplace::Place::Texture, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "stencil5";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_in, class MP_out>
__global__ void stencil5(int width, int height, MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 1 && x < width - 1 && y >= 1 && y < height - 1) {
        out[memplace::at<5>(y * width + x)] = 0.5f * in[memplace::at<6>(y * width + x)] +
                             0.125f * (in[memplace::at<7>((y - 1) * width + x)] + in[memplace::at<8>((y + 1) * width + x)] +
                                       in[memplace::at<9>(y * width + x - 1)] + in[memplace::at<10>(y * width + x + 1)]);
    } else if (x < width && y < height) {
        out[memplace::at<11>(y * width + x)] = in[memplace::at<12>(y * width + x)];
    }
    }();
    memplace::unstage(out);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::stencil5<Acc...>; }
    template <class MP_in, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            int width, int height, MP_in in, MP_out out) {
        auto mp_kernel = kernel<MP_in, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, width, height, in, out);
    }
};

// FNV-1a over the bytes of the outputs: equal hashes mean bitwise-equal results.
static unsigned long long fnv1a(const void* data, size_t bytes,
                                unsigned long long h = 1469598103934665603ull) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

int main() {
    const int width = 512;
    const int height = 384;
    const size_t count = static_cast<size_t>(width) * height;
    std::vector<float> ha(count), hb(count);
    for (size_t i = 0; i < count; ++i) {
        ha[i] = frand();
        hb[i] = frand();
    }
    float *da, *db, *dc, *dt, *ds;
    CUDA_CHECK(cudaMalloc(&da, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&db, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dc, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dt, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&ds, count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(da, ha.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db, hb.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dc, 0xFF, count * sizeof(float))); // poison the outputs
    CUDA_CHECK(cudaMemset(dt, 0xFF, count * sizeof(float)));
    CUDA_CHECK(cudaMemset(ds, 0xFF, count * sizeof(float)));

    dim3 block(16, 16);
    dim3 grid((width + 15) / 16, (height + 15) / 16);
    memplace::launch<memplace_kernel_matrix_add>(grid, block, 0, 0, width, height, da, db, dc);
    memplace::launch<memplace_kernel_transpose_naive>(grid, block, 0, 0, width, height, dc, dt);
    memplace::launch<memplace_kernel_stencil5>(grid, block, 0, 0, width, height, dc, ds);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> t(count), s(count);
    CUDA_CHECK(cudaMemcpy(t.data(), dt, count * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(s.data(), ds, count * sizeof(float), cudaMemcpyDeviceToHost));

    std::vector<float> gc(count);
    CUDA_CHECK(cudaMemcpy(gc.data(), dc, count * sizeof(float), cudaMemcpyDeviceToHost));
    unsigned long long hash = fnv1a(gc.data(), count * sizeof(float));
    hash = fnv1a(t.data(), count * sizeof(float), hash);
    hash = fnv1a(s.data(), count * sizeof(float), hash);

    std::vector<float> c(count);
    for (size_t i = 0; i < count; ++i) {
        c[i] = ha[i] + hb[i];
    }
    int bad = 0;
    double checksum = 0.0;
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            float expect_t = c[y * width + x];
            float got_t = t[x * height + y];
            float expect_s = c[y * width + x];
            if (x >= 1 && x < width - 1 && y >= 1 && y < height - 1) {
                expect_s = 0.5f * c[y * width + x] +
                           0.125f * (c[(y - 1) * width + x] + c[(y + 1) * width + x] +
                                     c[y * width + x - 1] + c[y * width + x + 1]);
            }
            if (std::fabs(got_t - expect_t) > 1e-5f || std::fabs(s[y * width + x] - expect_s) > 1e-4f) {
                ++bad;
            }
            checksum += got_t + s[y * width + x];
        }
    }
    printf("matrix_2d: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", checksum,
           hash);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dt);
    cudaFree(ds);
    return bad == 0 ? 0 : 1;
}

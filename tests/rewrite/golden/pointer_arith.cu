// Pointer arithmetic into arrays, as real kernels write it: `*(p + i)`, `*(p + row * w + col)`,
// `*(p - i)` next to plain `p[i]`; a local row pointer `const float* row = m + r * cols`; an
// element's address kept in a local (`&a[i]`); a parameter rebased at the top of the kernel
// (`src += baseY * pitch + baseX`).
// memplace: rewritten by `memplace rewrite` from pointer_arith.cu: kernels are templates over
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

static unsigned int g_seed = 4242u;
static float frand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return static_cast<float>(g_seed >> 8) * (1.0f / 16777216.0f);
}

// *(p + row * w + col) on both sides, *(p + i) and p[i] on the same array.
template <class MP_in, class MP_bias, class MP_out>
__global__ void scale_2d(int width, int height, MP_in in, MP_bias bias, MP_out out) {
    memplace::stage(in, bias, out);
    [&]() {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < height && col < width) {
        out[memplace::at<0>(row * width, col)] = 2.0f * in[memplace::at<1>(row * width, col)] + bias[memplace::at<2>(col)] - bias[memplace::at<3>(row)];
    }
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'scale_2d' (docs/rewrite-contract.md)
struct memplace_kernel_scale_2d {
    static constexpr const char* name = "scale_2d";
    static constexpr int numArrays = 3;
    static constexpr memplace::ArrayDesc arrays[3] = {
        {"in", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_2d, 2, 0},
        {"bias", 3, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 4, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::ReadOnly,
            memplace::Place::Global>,
        memplace::Places<memplace::Place::Texture, memplace::Place::ReadOnly,
            memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "scale_2d";
    static constexpr const char* jitTypes[3] = {"const float", "const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_in, class MP_bias, class MP_out>
__global__ void scale_2d(int width, int height, MP_in in, MP_bias bias, MP_out out) {
    memplace::stage(in, bias, out);
    [&]() {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < height && col < width) {
        out[memplace::at<0>(row * width, col)] = 2.0f * in[memplace::at<1>(row * width, col)] + bias[memplace::at<2>(col)] - bias[memplace::at<3>(row)];
    }
    }();
    memplace::unstage(out);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::scale_2d<Acc...>; }
    template <class MP_in, class MP_bias, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            int width, int height, MP_in in, MP_bias bias, MP_out out) {
        auto mp_kernel = kernel<MP_in, MP_bias, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, width, height, in, bias,
            out);
    }
};

// *(p + n - 1 - i): a subtracted term, and an unsigned one.
template <class MP_in, class MP_out>
__global__ void reverse_copy(int n, unsigned shift, MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[memplace::at<4>(i)] = in[memplace::at<5>(n, memplace::minus(1), memplace::minus(i))] + in[memplace::at<6>(shift, memplace::minus(shift), i)];
    }
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'reverse_copy' (docs/rewrite-contract.md)
struct memplace_kernel_reverse_copy {
    static constexpr const char* name = "reverse_copy";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"in", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "reverse_copy";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_in, class MP_out>
__global__ void reverse_copy(int n, unsigned shift, MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[memplace::at<4>(i)] = in[memplace::at<5>(n, memplace::minus(1), memplace::minus(i))] + in[memplace::at<6>(shift, memplace::minus(shift), i)];
    }
    }();
    memplace::unstage(out);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::reverse_copy<Acc...>; }
    template <class MP_in, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            unsigned int shift, MP_in in, MP_out out) {
        auto mp_kernel = kernel<MP_in, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, shift, in, out);
    }
};

// A local row pointer: `const float* row = m + r * cols; ... row[k]`.
template <class MP_m, class MP_v, class MP_out>
__global__ void row_dot(int rows, int cols, MP_m m, MP_v v, MP_out out) {
    memplace::stage(m, v, out);
    [&]() {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        auto row = memplace::offset(m, r * cols);
        const int dst = r;
        r = -1; // the pointer was computed above: `row` still points at row `dst`
        float s = 0.0f;
        for (int k = 0; k < cols; ++k) {
            s += row[memplace::at<7>(k)] * v[memplace::at<8>(k)];
        }
        out[memplace::at<9>(dst)] = s;
    }
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'row_dot' (docs/rewrite-contract.md)
struct memplace_kernel_row_dot {
    static constexpr const char* name = "row_dot";
    static constexpr int numArrays = 3;
    static constexpr memplace::ArrayDesc arrays[3] = {
        {"m", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"v", 3, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 4, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::ReadOnly,
            memplace::Place::Global>,
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Constant,
            memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "row_dot";
    static constexpr const char* jitTypes[3] = {"const float", "const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_m, class MP_v, class MP_out>
__global__ void row_dot(int rows, int cols, MP_m m, MP_v v, MP_out out) {
    memplace::stage(m, v, out);
    [&]() {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        auto row = memplace::offset(m, r * cols);
        const int dst = r;
        r = -1; // the pointer was computed above: `row` still points at row `dst`
        float s = 0.0f;
        for (int k = 0; k < cols; ++k) {
            s += row[memplace::at<7>(k)] * v[memplace::at<8>(k)];
        }
        out[memplace::at<9>(dst)] = s;
    }
    }();
    memplace::unstage(out);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::row_dot<Acc...>; }
    template <class MP_m, class MP_v, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            int rows, int cols, MP_m m, MP_v v, MP_out out) {
        auto mp_kernel = kernel<MP_m, MP_v, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, rows, cols, m, v, out);
    }
};

// A local pointer moved along the row (`p += 1`): not followed, `m` stays in global memory.
template <class MP_out>
__global__ void row_walk(int rows, int cols, const float* m, MP_out out) {
    memplace::stage(out);
    [&]() {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* p = m + r * cols;
        float s = 0.0f;
        for (int k = 0; k < cols; ++k) {
            s += p[0];
            p += 1;
        }
        out[memplace::at<10>(r)] = s;
    }
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'row_walk' (docs/rewrite-contract.md)
struct memplace_kernel_row_walk {
    static constexpr const char* name = "row_walk";
    static constexpr int numArrays = 1;
    static constexpr memplace::ArrayDesc arrays[1] = {
        {"out", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<float>;
    // It reads through a pointer whose target is unknown: no written array leaves where the
    // program keeps it (but for global and l2persist).
    static constexpr const char* unknownReads =
        "the parameter 'm', left a raw pointer";
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "row_walk";
    static constexpr const char* jitTypes[1] = {"float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_out>
__global__ void row_walk(int rows, int cols, const float* m, MP_out out) {
    memplace::stage(out);
    [&]() {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* p = m + r * cols;
        float s = 0.0f;
        for (int k = 0; k < cols; ++k) {
            s += p[0];
            p += 1;
        }
        out[memplace::at<10>(r)] = s;
    }
    }();
    memplace::unstage(out);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::row_walk<Acc...>; }
    template <class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            int rows, int cols, const float *m, MP_out out) {
        auto mp_kernel = kernel<MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, rows, cols, m, out);
    }
};

// An element's address kept in a local: `const float* q = &a[base]; ... q[k]`.
template <class MP_a, class MP_out>
__global__ void window_sum(int n, int window, MP_a a, MP_out out) {
    memplace::stage(a, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + window <= n) {
        auto q = memplace::offset(a, i);
        float s = 0.0f;
        for (int k = 0; k < window; ++k) {
            s += q[memplace::at<11>(k)];
        }
        out[memplace::at<12>(i)] = s;
    }
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'window_sum' (docs/rewrite-contract.md)
struct memplace_kernel_window_sum {
    static constexpr const char* name = "window_sum";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"a", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "window_sum";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_a, class MP_out>
__global__ void window_sum(int n, int window, MP_a a, MP_out out) {
    memplace::stage(a, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + window <= n) {
        auto q = memplace::offset(a, i);
        float s = 0.0f;
        for (int k = 0; k < window; ++k) {
            s += q[memplace::at<11>(k)];
        }
        out[memplace::at<12>(i)] = s;
    }
    }();
    memplace::unstage(out);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::window_sum<Acc...>; }
    template <class MP_a, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            int window, MP_a a, MP_out out) {
        auto mp_kernel = kernel<MP_a, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, window, a, out);
    }
};

// A parameter rebased before any use, as in the CUDA samples' convolution kernels.
template <class MP_src, class MP_dst>
__global__ void rebased_copy(int width, int height, int pitch, MP_src src, MP_dst dst) {
    memplace::stage(src, dst);
    [&]() {
    const int baseX = blockIdx.x * blockDim.x + threadIdx.x;
    const int baseY = blockIdx.y * blockDim.y + threadIdx.y;
    const auto mp_src = memplace::offset(src, baseY * pitch + baseX);
    const auto mp_dst = memplace::offset(dst, baseY * width + baseX);
    if (baseX < width && baseY < height) {
        mp_dst[memplace::at<13>(0)] = mp_src[memplace::at<14>(0)] + 0.5f * mp_src[memplace::at<15>(pitch * 0 + 1)];
    }
    }();
    memplace::unstage(dst);
}

// memplace: what the runtime needs to know about kernel 'rebased_copy' (docs/rewrite-contract.md)
struct memplace_kernel_rebased_copy {
    static constexpr const char* name = "rebased_copy";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"src", 3, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_2d, 2, 2},
        {"dst", 4, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
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
    static constexpr const char* jitKernel = "rebased_copy";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_src, class MP_dst>
__global__ void rebased_copy(int width, int height, int pitch, MP_src src, MP_dst dst) {
    memplace::stage(src, dst);
    [&]() {
    const int baseX = blockIdx.x * blockDim.x + threadIdx.x;
    const int baseY = blockIdx.y * blockDim.y + threadIdx.y;
    const auto mp_src = memplace::offset(src, baseY * pitch + baseX);
    const auto mp_dst = memplace::offset(dst, baseY * width + baseX);
    if (baseX < width && baseY < height) {
        mp_dst[memplace::at<13>(0)] = mp_src[memplace::at<14>(0)] + 0.5f * mp_src[memplace::at<15>(pitch * 0 + 1)];
    }
    }();
    memplace::unstage(dst);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::rebased_copy<Acc...>; }
    template <class MP_src, class MP_dst>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            int width, int height, int pitch, MP_src src, MP_dst dst) {
        auto mp_kernel = kernel<MP_src, MP_dst>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, width, height, pitch,
            src, dst);
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

static std::vector<float> download(const float* d, size_t count) {
    std::vector<float> h(count);
    CUDA_CHECK(cudaMemcpy(h.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost));
    return h;
}

int main() {
    const int width = 200;
    const int height = 96;
    const int pitch = width + 1; // the source of rebased_copy has one extra column
    const size_t count = static_cast<size_t>(width) * height;
    const size_t srcCount = static_cast<size_t>(pitch) * height;
    const int window = 7;
    std::vector<float> hin(srcCount), hbias(width > height ? width : height), hv(width);
    for (float& x : hin) {
        x = frand();
    }
    for (float& x : hbias) {
        x = frand();
    }
    for (float& x : hv) {
        x = frand();
    }
    float *din, *dbias, *dv, *dscaled, *drev, *ddot, *dwalk, *dwin, *dcopy;
    CUDA_CHECK(cudaMalloc(&din, srcCount * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dbias, hbias.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dv, width * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dscaled, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&drev, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&ddot, count * sizeof(float))); // only the first `height` are written
    CUDA_CHECK(cudaMalloc(&dwalk, count * sizeof(float))); // only the first `height` too
    CUDA_CHECK(cudaMalloc(&dwin, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dcopy, count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(din, hin.data(), srcCount * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dbias, hbias.data(), hbias.size() * sizeof(float),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dv, hv.data(), width * sizeof(float), cudaMemcpyHostToDevice));
    for (float* d : {dscaled, drev, ddot, dwalk, dwin, dcopy}) { // poison the outputs
        CUDA_CHECK(cudaMemset(d, 0xFF, count * sizeof(float)));
    }

    dim3 block(16, 8);
    dim3 grid((width + 15) / 16, (height + 7) / 8);
    const int n = static_cast<int>(count);
    memplace::launch<memplace_kernel_scale_2d>(grid, block, 0, 0, width, height, din, dbias,
        dscaled);
    memplace::launch<memplace_kernel_reverse_copy>((n + 127) / 128, 128, 0, 0, n, 5u, din, drev);
    memplace::launch<memplace_kernel_row_dot>((height + 63) / 64, 64, 0, 0, height, width, din, dv,
        ddot);
    memplace::launch<memplace_kernel_row_walk>((height + 63) / 64, 64, 0, 0, height, width, din,
        dwalk);
    memplace::launch<memplace_kernel_window_sum>((n + 127) / 128, 128, 0, 0, n, window, din, dwin);
    memplace::launch<memplace_kernel_rebased_copy>(grid, block, 0, 0, width, height, pitch, din,
        dcopy);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> scaled = download(dscaled, count);
    std::vector<float> rev = download(drev, count);
    std::vector<float> dot = download(ddot, height);
    std::vector<float> walk = download(dwalk, height);
    std::vector<float> win = download(dwin, count);
    std::vector<float> copy = download(dcopy, count);
    unsigned long long hash = fnv1a(scaled.data(), count * sizeof(float));
    hash = fnv1a(rev.data(), count * sizeof(float), hash);
    hash = fnv1a(dot.data(), height * sizeof(float), hash);
    hash = fnv1a(walk.data(), height * sizeof(float), hash);
    hash = fnv1a(win.data(), (count - window + 1) * sizeof(float), hash);
    hash = fnv1a(copy.data(), count * sizeof(float), hash);

    int bad = 0;
    double checksum = 0.0;
    auto check = [&](float got, float expect, float tol) {
        if (std::fabs(got - expect) > tol) {
            ++bad;
        }
        checksum += got;
    };
    for (int r = 0; r < height; ++r) {
        for (int c = 0; c < width; ++c) {
            const size_t i = static_cast<size_t>(r) * width + c;
            check(scaled[i], 2.0f * hin[i] + hbias[c] - hbias[r], 1e-5f);
            check(copy[i], hin[static_cast<size_t>(r) * pitch + c] +
                               0.5f * hin[static_cast<size_t>(r) * pitch + c + 1],
                  1e-5f);
        }
        float s = 0.0f;
        for (int k = 0; k < width; ++k) {
            s += hin[static_cast<size_t>(r) * width + k] * hv[k];
        }
        check(dot[r], s, 1e-3f);
        float w = 0.0f;
        for (int k = 0; k < width; ++k) {
            w += hin[static_cast<size_t>(r) * width + k];
        }
        check(walk[r], w, 1e-3f);
    }
    for (int i = 0; i < n; ++i) {
        check(rev[i], hin[n - 1 - i] + hin[i], 1e-5f);
        if (i + window <= n) {
            float s = 0.0f;
            for (int k = 0; k < window; ++k) {
                s += hin[i + k];
            }
            check(win[i], s, 1e-4f);
        }
    }
    printf("pointer_arith: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL",
           checksum, hash);
    for (float* d : {din, dbias, dv, dscaled, drev, ddot, dwalk, dwin, dcopy}) {
        cudaFree(d);
    }
    return bad == 0 ? 0 : 1;
}

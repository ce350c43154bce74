// Arrays handed down through member functions, as wavelet and stencil libraries write them: a
// kernel template calls a static member of a class template, which calls a member function
// template of an object in shared memory twice (`transform<true>` near the edge,
// `transform<false>` inside), which reads through a loader object's member function and writes
// through a writer's. Each member function becomes a member template over the accessor types
// (the two instantiations of `transform` share one rewritten text); a free helper template
// called with two instantiations is rewritten the same way. Integer arithmetic: checks against
// the CPU, prints a checksum of the outputs.
// memplace: rewritten by `memplace rewrite` from member_helpers.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
#include "memplace/memplace.cuh"
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

namespace wave {

/// Walks down one column of an image, mirrored at the bottom edge when CHECKED.
template <typename T, bool CHECKED>
class ColumnLoader {
public:
    __device__ void init(int column, int width, int height) {
        next = column;
        stride = width;
        end = column + width * height;
    }
    template <class MP_image>
    __device__ T loadFrom(MP_image image) {
        const T v = image[memplace::at<0>(next)];
        next += stride;
        if (CHECKED && next >= end) {
            next -= 2 * stride;
            stride = -stride;
        }
        return v;
    }

private:
    int next, stride, end;
};

/// Writes one column, every other row, skipping rows past the end when CHECKED.
template <typename T, bool CHECKED>
class ColumnWriter {
public:
    __device__ void init(int column, int width, int rows) {
        next = column;
        step = 2 * width;
        end = column + width * rows;
    }
    template <class MP_out>
    __device__ void writeInto(MP_out out, const T& value) {
        if (!CHECKED || next < end) {
            out[memplace::at<1>(next)] = value;
        }
        next += step;
    }

private:
    int next, step, end;
};

template <int WIDTH>
class Lifting {
public:
    template <bool CHECK, class MP_in, class MP_out>
    __device__ void transform(MP_in in, MP_out out, int width, int height) {
        ColumnLoader<int, CHECK> loader;
        ColumnWriter<int, CHECK> writer;
        const int column = blockIdx.x * WIDTH + threadIdx.x;
        loader.init(column, width, height);
        writer.init(column, width, height);
        for (int y = 0; y < height; y += 2) {
            const int even = loader.loadFrom(in);
            const int odd = loader.loadFrom(in);
            rows[threadIdx.x] = even - odd;
            writer.writeInto(out, rows[threadIdx.x] + (even >> 1));
        }
    }
    template <class MP_in, class MP_out>
    __device__ static void run(MP_in in, MP_out out, int width, int height) {
        __shared__ Lifting<WIDTH> lifting;
        if ((blockIdx.x + 1) * WIDTH >= width) {
            lifting.transform<true>(in, out, width, height);
        } else {
            lifting.transform<false>(in, out, width, height);
        }
    }

private:
    int rows[WIDTH];
};

template <bool SQUARE, class MP_values>
__device__ int weigh(MP_values values, int i) {
    return SQUARE ? values[memplace::at<2>(i)] * values[memplace::at<3>(i)] : values[memplace::at<4>(i)];
}

} // namespace wave

template <int WIDTH, class MP_in, class MP_out>
__global__ void liftColumns(MP_in in, MP_out out, int width, int height) {
    memplace::stage(in, out);
    [&]() {
    if (blockIdx.x * WIDTH + threadIdx.x < width) {
        wave::Lifting<WIDTH>::run(in, out, width, height);
    }
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'liftColumns' (docs/rewrite-contract.md)
template <int WIDTH>
struct memplace_kernel_liftColumns {
    static constexpr const char* name = "liftColumns";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"in", 0, sizeof(int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 1, sizeof(int), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const int, int>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Not compiled just in time: a kernel template (the runtime cannot spell its template arguments
    // in an NVRTC name expression). Placements not compiled in run through the dynamic accessor.
    static constexpr const char* jitSource = nullptr;
    template <class... Acc>
    static auto kernel() { return &::liftColumns<WIDTH, Acc...>; }
    template <class MP_in, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_in in, MP_out out, int width, int height) {
        auto mp_kernel = kernel<MP_in, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, in, out, width, height);
    }
};

template <class MP_values, class MP_sums>
__global__ void weights(MP_values values, MP_sums sums, int n) {
    memplace::stage(values, sums);
    [&]() {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        sums[memplace::at<5>(i)] = wave::weigh<true>(values, i) + wave::weigh<false>(values, i);
    }
    }();
    memplace::unstage(sums);
}

// memplace: what the runtime needs to know about kernel 'weights' (docs/rewrite-contract.md)
struct memplace_kernel_weights {
    static constexpr const char* name = "weights";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"values", 0, sizeof(int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"sums", 1, sizeof(int), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const int, int>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "weights";
    static constexpr const char* jitTypes[2] = {"const int", "int"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

namespace wave {
template <bool SQUARE, class MP_values>
__device__ int weigh(MP_values values, int i) {
    return SQUARE ? values[memplace::at<2>(i)] * values[memplace::at<3>(i)] : values[memplace::at<4>(i)];
}

}
template <class MP_values, class MP_sums>
__global__ void weights(MP_values values, MP_sums sums, int n) {
    memplace::stage(values, sums);
    [&]() {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        sums[memplace::at<5>(i)] = wave::weigh<true>(values, i) + wave::weigh<false>(values, i);
    }
    }();
    memplace::unstage(sums);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::weights<Acc...>; }
    template <class MP_values, class MP_sums>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_values values, MP_sums sums, int n) {
        auto mp_kernel = kernel<MP_values, MP_sums>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, values, sums, n);
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
    const int width = 100, height = 24, n = width * height;
    std::vector<int> hi(n);
    for (int i = 0; i < n; ++i) {
        hi[i] = (i * 41 + 7) % 97 - 48;
    }
    int *dIn, *dOut, *dSums;
    CUDA_CHECK(cudaMalloc(&dIn, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dOut, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dSums, n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dIn, hi.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dOut, 0, n * sizeof(int)));
    memplace::launch<memplace_kernel_liftColumns<32>>((width + 31) / 32, 32, 0, 0, dIn, dOut, width,
        height);
    memplace::launch<memplace_kernel_weights>((n + 127) / 128, 128, 0, 0, dIn, dSums, n);
    CUDA_CHECK(cudaGetLastError());
    std::vector<int> go(n), gs(n);
    CUDA_CHECK(cudaMemcpy(go.data(), dOut, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gs.data(), dSums, n * sizeof(int), cudaMemcpyDeviceToHost));
    std::vector<int> ref(n, 0);
    for (int x = 0; x < width; ++x) {
        for (int y = 0; y < height; y += 2) {
            const int even = hi[y * width + x], odd = hi[(y + 1) * width + x];
            ref[y * width + x] = even - odd + (even >> 1); // rows y written every other row
        }
    }
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        bad += go[i] != ref[i];
        bad += gs[i] != hi[i] * hi[i] + hi[i];
    }
    unsigned long long h = 1469598103934665603ull;
    h = fnv1a(go.data(), go.size() * sizeof(int), h);
    h = fnv1a(gs.data(), gs.size() * sizeof(int), h);
    printf("member_helpers: %s, outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", h);
    CUDA_CHECK(cudaFree(dIn));
    CUDA_CHECK(cudaFree(dOut));
    CUDA_CHECK(cudaFree(dSums));
    return bad == 0 ? 0 : 1;
}

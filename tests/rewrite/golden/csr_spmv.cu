// CSR sparse matrix-vector products: a thread per row (scalar) and a warp per row (vector)
// with a shared-memory reduction. x is gathered through the column indices.
// memplace: rewritten by `memplace rewrite` from csr_spmv.cu: kernels are templates over
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

#define WARP 32
#define BLOCK 256

static unsigned int g_seed = 99u;
static unsigned int urand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}
static float frand() { return static_cast<float>(urand()) * (1.0f / 16777216.0f); }

template <class MP_rowptr, class MP_col, class MP_val, class MP_x, class MP_y>
__global__ void spmv_csr_scalar(int rows, MP_rowptr rowptr, MP_col col, MP_val val,
                                MP_x x, MP_y y) {
    memplace::stage(rowptr, col, val, x, y);
    [&]() {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float sum = 0.0f;
        for (int j = rowptr[memplace::at<0>(row)]; j < rowptr[memplace::at<1>(row + 1)]; ++j) {
            sum += val[memplace::at<2>(j)] * x[memplace::at<3>(col[memplace::at<4>(j)])];
        }
        y[memplace::at<5>(row)] = sum;
    }
    }();
    memplace::unstage(y);
}

// memplace: what the runtime needs to know about kernel 'spmv_csr_scalar' (docs/rewrite-contract.md)
struct memplace_kernel_spmv_csr_scalar {
    static constexpr const char* name = "spmv_csr_scalar";
    static constexpr int numArrays = 5;
    static constexpr memplace::ArrayDesc arrays[5] = {
        {"rowptr", 1, sizeof(int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"col", 2, sizeof(int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"val", 3, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"x", 4, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"y", 5, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const int, const int, const float, const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::ReadOnly,
            memplace::Place::ReadOnly, memplace::Place::ReadOnly, memplace::Place::Global>,
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Texture,
            memplace::Place::Texture, memplace::Place::Texture, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "spmv_csr_scalar";
    static constexpr const char* jitTypes[5] = {"const int", "const int", "const float",
        "const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_rowptr, class MP_col, class MP_val, class MP_x, class MP_y>
__global__ void spmv_csr_scalar(int rows, MP_rowptr rowptr, MP_col col, MP_val val,
                                MP_x x, MP_y y) {
    memplace::stage(rowptr, col, val, x, y);
    [&]() {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float sum = 0.0f;
        for (int j = rowptr[memplace::at<0>(row)]; j < rowptr[memplace::at<1>(row + 1)]; ++j) {
            sum += val[memplace::at<2>(j)] * x[memplace::at<3>(col[memplace::at<4>(j)])];
        }
        y[memplace::at<5>(row)] = sum;
    }
    }();
    memplace::unstage(y);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::spmv_csr_scalar<Acc...>; }
    template <class MP_rowptr, class MP_col, class MP_val, class MP_x, class MP_y>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            int rows, MP_rowptr rowptr, MP_col col, MP_val val, MP_x x, MP_y y) {
        auto mp_kernel = kernel<MP_rowptr, MP_col, MP_val, MP_x, MP_y>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, rows, rowptr, col, val,
            x, y);
    }
};

template <class MP_rowptr, class MP_col, class MP_val, class MP_x, class MP_y>
__global__ void spmv_csr_vector(int rows, MP_rowptr rowptr,
                                MP_col col, MP_val val,
                                MP_x x, MP_y y) {
    memplace::stage(rowptr, col, val, x, y);
    [&]() {
    __shared__ float partial[BLOCK];
    int lane = threadIdx.x & (WARP - 1);
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / WARP;
    float sum = 0.0f;
    if (warp < rows) {
        int start = rowptr[memplace::at<6>(warp)];
        int end = rowptr[memplace::at<7>(warp + 1)];
        for (int j = start + lane; j < end; j += WARP) {
            sum += val[memplace::at<8>(j)] * x[memplace::at<9>(col[memplace::at<10>(j)])];
        }
    }
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int offset = WARP / 2; offset > 0; offset >>= 1) {
        if (lane < offset) {
            partial[threadIdx.x] += partial[threadIdx.x + offset];
        }
        __syncthreads();
    }
    if (lane == 0 && warp < rows) {
        y[memplace::at<14>(warp)] = partial[threadIdx.x];
    }
    }();
    memplace::unstage(y);
}

// memplace: what the runtime needs to know about kernel 'spmv_csr_vector' (docs/rewrite-contract.md)
struct memplace_kernel_spmv_csr_vector {
    static constexpr const char* name = "spmv_csr_vector";
    static constexpr int numArrays = 5;
    static constexpr memplace::ArrayDesc arrays[5] = {
        {"rowptr", 1, sizeof(int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1, -1, memplace::Place::ReadOnly},
        {"col", 2, sizeof(int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1, -1, memplace::Place::ReadOnly},
        {"val", 3, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1, -1, memplace::Place::ReadOnly},
        {"x", 4, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1, -1, memplace::Place::ReadOnly},
        {"y", 5, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const int, const int, const float, const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::Global, memplace::Place::Global, memplace::Place::Global,
            memplace::Place::Global, memplace::Place::Global>,
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Texture,
            memplace::Place::Texture, memplace::Place::Texture, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "spmv_csr_vector";
    static constexpr const char* jitTypes[5] = {"const int", "const int", "const float",
        "const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

#define WARP 32
#define BLOCK 256

template <class MP_rowptr, class MP_col, class MP_val, class MP_x, class MP_y>
__global__ void spmv_csr_vector(int rows, MP_rowptr rowptr,
                                MP_col col, MP_val val,
                                MP_x x, MP_y y) {
    memplace::stage(rowptr, col, val, x, y);
    [&]() {
    __shared__ float partial[BLOCK];
    int lane = threadIdx.x & (WARP - 1);
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / WARP;
    float sum = 0.0f;
    if (warp < rows) {
        int start = rowptr[memplace::at<6>(warp)];
        int end = rowptr[memplace::at<7>(warp + 1)];
        for (int j = start + lane; j < end; j += WARP) {
            sum += val[memplace::at<8>(j)] * x[memplace::at<9>(col[memplace::at<10>(j)])];
        }
    }
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int offset = WARP / 2; offset > 0; offset >>= 1) {
        if (lane < offset) {
            partial[threadIdx.x] += partial[threadIdx.x + offset];
        }
        __syncthreads();
    }
    if (lane == 0 && warp < rows) {
        y[memplace::at<14>(warp)] = partial[threadIdx.x];
    }
    }();
    memplace::unstage(y);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::spmv_csr_vector<Acc...>; }
    template <class MP_rowptr, class MP_col, class MP_val, class MP_x, class MP_y>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            int rows, MP_rowptr rowptr, MP_col col, MP_val val, MP_x x, MP_y y) {
        auto mp_kernel = kernel<MP_rowptr, MP_col, MP_val, MP_x, MP_y>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, rows, rowptr, col, val,
            x, y);
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
    const int rows = 4096;
    const int cols = 4096;
    std::vector<int> rowptr(rows + 1, 0);
    std::vector<int> col;
    std::vector<float> val;
    for (int r = 0; r < rows; ++r) {
        int nnz = 1 + static_cast<int>(urand() % 16);
        for (int k = 0; k < nnz; ++k) {
            col.push_back(static_cast<int>(urand() % cols));
            val.push_back(frand() - 0.5f);
        }
        rowptr[r + 1] = static_cast<int>(col.size());
    }
    const int nnz = rowptr[rows];
    std::vector<float> x(cols);
    for (int i = 0; i < cols; ++i) {
        x[i] = frand();
    }

    int *drowptr, *dcol;
    float *dval, *dx, *dy1, *dy2;
    CUDA_CHECK(cudaMalloc(&drowptr, (rows + 1) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dcol, nnz * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dval, nnz * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dx, cols * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy1, rows * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy2, rows * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(drowptr, rowptr.data(), (rows + 1) * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dcol, col.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dval, val.data(), nnz * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), cols * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dy1, 0xFF, rows * sizeof(float))); // poison the outputs
    CUDA_CHECK(cudaMemset(dy2, 0xFF, rows * sizeof(float)));

    memplace::launch<memplace_kernel_spmv_csr_scalar>((rows + 127) / 128, 128, 0, 0, rows, drowptr,
        dcol, dval, dx, dy1);
    memplace::launch<memplace_kernel_spmv_csr_vector>((rows * WARP + BLOCK - 1) / BLOCK, BLOCK, 0,
        0, rows, drowptr, dcol, dval, dx, dy2);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> y1(rows), y2(rows);
    CUDA_CHECK(cudaMemcpy(y1.data(), dy1, rows * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(y2.data(), dy2, rows * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    double checksum = 0.0;
    for (int r = 0; r < rows; ++r) {
        double ref = 0.0;
        for (int j = rowptr[r]; j < rowptr[r + 1]; ++j) {
            ref += static_cast<double>(val[j]) * x[col[j]];
        }
        if (std::fabs(y1[r] - ref) > 1e-4 || std::fabs(y2[r] - ref) > 1e-4) {
            ++bad;
        }
        checksum += y1[r] + y2[r];
    }
    unsigned long long hash = fnv1a(y1.data(), rows * sizeof(float));
    hash = fnv1a(y2.data(), rows * sizeof(float), hash);
    printf("csr_spmv: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", checksum,
           hash);
    cudaFree(drowptr);
    cudaFree(dcol);
    cudaFree(dval);
    cudaFree(dx);
    cudaFree(dy1);
    cudaFree(dy2);
    return bad == 0 ? 0 : 1;
}

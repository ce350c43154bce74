// Sparse matrix-vector product, CSR, one thread per row: y = A x. The vector x is gathered
// through the column indices, so where x should live depends on the matrix's structure.
// memplace: rewritten by `memplace rewrite` from spmv.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
// The file declares 4 bytes of __constant__ data of its own: the constant pool
// gets the rest of the 64 KB.
#define MEMPLACE_CONSTANT_POOL_BYTES (65536 - (4 + 15) / 16 * 16)
#include "memplace/memplace.cuh"
#include "demo.h"

#include <chrono>
#include <cuda_runtime.h>

template <class MP_rowptr, class MP_col, class MP_val, class MP_x, class MP_y>
__global__ void spmv_csr(int rows, MP_rowptr rowptr, MP_col col, MP_val val,
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

// memplace: what the runtime needs to know about kernel 'spmv_csr' (docs/rewrite-contract.md)
struct memplace_kernel_spmv_csr {
    static constexpr const char* name = "spmv_csr";
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
    static constexpr const char* jitKernel = "spmv_csr";
    static constexpr const char* jitTypes[5] = {"const int", "const int", "const float",
        "const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_rowptr, class MP_col, class MP_val, class MP_x, class MP_y>
__global__ void spmv_csr(int rows, MP_rowptr rowptr, MP_col col, MP_val val,
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
    static auto kernel() { return &::spmv_csr<Acc...>; }
    template <class MP_rowptr, class MP_col, class MP_val, class MP_x, class MP_y>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            int rows, MP_rowptr rowptr, MP_col col, MP_val val, MP_x x, MP_y y) {
        auto mp_kernel = kernel<MP_rowptr, MP_col, MP_val, MP_x, MP_y>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, rows, rowptr, col, val,
            x, y);
    }
};

namespace demo {

namespace {

constexpr int kBlock = 256;

bool ok(cudaError_t e, const char* what, std::string& error) {
    if (e == cudaSuccess) {
        return true;
    }
    error = std::string(what) + ": " + cudaGetErrorString(e);
    return false;
}

/// The matrix and x on the device.
struct DeviceCsr {
    int* rowptr = nullptr;
    int* col = nullptr;
    float* val = nullptr;
    float* x = nullptr;
    ~DeviceCsr() {
        cudaFree(rowptr);
        cudaFree(col);
        cudaFree(val);
        cudaFree(x);
    }
    bool upload(const Csr& a, const std::vector<float>& hx, std::string& error) {
        const size_t nnz = a.col.size();
        return ok(cudaMalloc(&rowptr, a.rowptr.size() * sizeof(int)), "cudaMalloc", error) &&
               ok(cudaMalloc(&col, nnz * sizeof(int)), "cudaMalloc", error) &&
               ok(cudaMalloc(&val, nnz * sizeof(float)), "cudaMalloc", error) &&
               ok(cudaMalloc(&x, hx.size() * sizeof(float)), "cudaMalloc", error) &&
               ok(cudaMemcpy(rowptr, a.rowptr.data(), a.rowptr.size() * sizeof(int),
                             cudaMemcpyHostToDevice),
                  "cudaMemcpy", error) &&
               ok(cudaMemcpy(col, a.col.data(), nnz * sizeof(int), cudaMemcpyHostToDevice),
                  "cudaMemcpy", error) &&
               ok(cudaMemcpy(val, a.val.data(), nnz * sizeof(float), cudaMemcpyHostToDevice),
                  "cudaMemcpy", error) &&
               ok(cudaMemcpy(x, hx.data(), hx.size() * sizeof(float), cudaMemcpyHostToDevice),
                  "cudaMemcpy", error);
    }
};

void spmv(const Csr& a, const DeviceCsr& d, float* y, cudaStream_t stream) {
    const int blocks = (a.rows + kBlock - 1) / kBlock;
    memplace::launch<memplace_kernel_spmv_csr>(blocks, kBlock, 0, stream, a.rows, d.rowptr, d.col,
        d.val, d.x, y);
}

} // namespace

bool spmvGpu(const Csr& a, const std::vector<float>& x, int reps, std::vector<float>& y,
             Timing& timing, std::string& error) {
    DeviceCsr d;
    if (!d.upload(a, x, error)) {
        return false;
    }
    float* dy = nullptr;
    if (!ok(cudaMalloc(&dy, a.rows * sizeof(float)), "cudaMalloc", error)) {
        return false;
    }
    bool good = ok(cudaMemset(dy, 0xff, a.rows * sizeof(float)), "cudaMemset", error);
    for (int r = 0; good && r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        spmv(a, d, dy, nullptr);
        good = ok(cudaGetLastError(), "spmv_csr launch", error) &&
               ok(cudaDeviceSynchronize(), "spmv_csr", error);
        timing.launchMs.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
    }
    y.assign(a.rows, 0.0f);
    good = good && ok(cudaMemcpy(y.data(), dy, a.rows * sizeof(float), cudaMemcpyDeviceToHost),
                      "cudaMemcpy", error);
    cudaFree(dy);
    return good;
}

bool spmvGpuStreams(const Csr& a, const std::vector<float>& x, int reps, int streams,
                    std::vector<std::vector<float>>& ys, std::string& error) {
    DeviceCsr d;
    if (!d.upload(a, x, error)) {
        return false;
    }
    std::vector<cudaStream_t> s(streams, nullptr);
    std::vector<float*> dy(streams, nullptr);
    bool good = true;
    for (int k = 0; good && k < streams; ++k) {
        good = ok(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking), "cudaStreamCreate",
                  error) &&
               ok(cudaMalloc(&dy[k], a.rows * sizeof(float)), "cudaMalloc", error) &&
               ok(cudaMemsetAsync(dy[k], 0xff, a.rows * sizeof(float), s[k]), "cudaMemset", error);
    }
    for (int r = 0; good && r < reps; ++r) {
        for (int k = 0; good && k < streams; ++k) {
            spmv(a, d, dy[k], s[k]);
            good = ok(cudaGetLastError(), "spmv_csr launch", error);
        }
    }
    ys.assign(streams, std::vector<float>(a.rows, 0.0f));
    for (int k = 0; k < streams; ++k) {
        good = good && ok(cudaStreamSynchronize(s[k]), "spmv_csr", error) &&
               ok(cudaMemcpy(ys[k].data(), dy[k], a.rows * sizeof(float), cudaMemcpyDeviceToHost),
                  "cudaMemcpy", error);
        cudaFree(dy[k]);
        if (s[k] != nullptr) {
            cudaStreamDestroy(s[k]);
        }
    }
    return good;
}

} // namespace demo

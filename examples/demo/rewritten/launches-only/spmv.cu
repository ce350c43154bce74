// Sparse matrix-vector product, CSR, one thread per row: y = A x. The vector x is gathered
// through the column indices, so where x should live depends on the matrix's structure.
// memplace: launches rewritten by `memplace rewrite --launches-only` from spmv.cu:
// launches are written MEMPLACE_LAUNCH and dynamic shared memory MEMPLACE_DYNAMIC_SHARED,
// so that the program also builds under the CPU emulation layer (docs/rewriting.md).
#ifndef MEMPLACE_LAUNCH
#define MEMPLACE_LAUNCH(kernel, grid, block, sharedBytes, stream, ...) \
    kernel<<<grid, block, sharedBytes, stream>>>(__VA_ARGS__)
#endif
#ifndef MEMPLACE_DYNAMIC_SHARED
#define MEMPLACE_DYNAMIC_SHARED(T, name) extern __shared__ __align__(16) T name[]
#endif
#include "demo.h"

#include <chrono>
#include <cuda_runtime.h>

__global__ void spmv_csr(int rows, const int* rowptr, const int* col, const float* val,
                         const float* x, float* y) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float sum = 0.0f;
        for (int j = rowptr[row]; j < rowptr[row + 1]; ++j) {
            sum += val[j] * x[col[j]];
        }
        y[row] = sum;
    }
}

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
    MEMPLACE_LAUNCH(spmv_csr, blocks, kBlock, 0, stream, a.rows, d.rowptr, d.col, d.val, d.x, y);
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

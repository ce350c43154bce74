// Sparse matrix-vector product y = A x, A in CSR (SHOC level 1 "spmv", the vector kernel):
// a group of lanesPerRow threads (a power of two, at most a warp, chosen from the mean row
// length as CUSP does) shares a row, strides over its nonzeros and sums with warp shuffles.
// Arrays (PORPLE's A0..A4): rowPtr, colIdx, val (read, streamed), x (read, gathered through
// colIdx), y (written).
// Original placement: all four read-only arrays `const __restrict__` (SHOC binds x to a
// texture); y written.
#include "common/bench.h"

__global__ void spmv_csr_vector(const int* __restrict__ rowPtr, const int* __restrict__ colIdx,
                                const float* __restrict__ val, const float* __restrict__ x,
                                float* y, int nRows, int lanesPerRow) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int row = (int)(t / lanesPerRow);
    int lane = (int)(t & (lanesPerRow - 1));
    bool valid = row < nRows; // every lane stays for the shuffles
    float sum = 0.0f;
    if (valid) {
        int end = rowPtr[row + 1];
        for (int k = rowPtr[row] + lane; k < end; k += lanesPerRow)
            sum += val[k] * x[colIdx[k]];
    }
    for (int off = lanesPerRow / 2; off > 0; off >>= 1)
        sum += __shfl_down_sync(0xffffffffu, sum, off, lanesPerRow);
    if (valid && lane == 0)
        y[row] = sum;
}

namespace {

struct Csr {
    int rows = 0, cols = 0;
    std::vector<int> rowPtr, colIdx;
    std::vector<float> val;
};

// Rows are produced one at a time by `fill(row, cols&)`; columns are sorted per row.
template <class Fill>
Csr build(int rows, int cols, bench::Rng& vrng, Fill fill, bool laplace = false) {
    Csr a;
    a.rows = rows;
    a.cols = cols;
    a.rowPtr.reserve((size_t)rows + 1);
    a.rowPtr.push_back(0);
    std::vector<int> rc;
    for (int r = 0; r < rows; ++r) {
        rc.clear();
        fill(r, rc);
        std::sort(rc.begin(), rc.end());
        for (int c : rc) {
            a.colIdx.push_back(c);
            a.val.push_back(laplace ? (c == r ? 4.0f : -1.0f) : vrng.uniformf(-1.0f, 1.0f));
        }
        if (a.colIdx.size() > 0x7FFFFFFFull)
            bench::die("too many nonzeros for int offsets");
        a.rowPtr.push_back(static_cast<int>(a.colIdx.size()));
    }
    return a;
}

Csr generate(const std::string& input, long long size, uint64_t seed) {
    bench::Rng rng(seed, 1), vrng(seed, 2);
    const int n = static_cast<int>(size);
    if (input == "small" || input == "random")
        return build(n, n, vrng, [&](int, std::vector<int>& c) {
            for (int k = 0; k < 16; ++k)
                c.push_back(static_cast<int>(rng.below(n)));
        });
    if (input == "banded")
        return build(n, n, vrng, [&](int r, std::vector<int>& c) {
            c.push_back(r);
            while (c.size() < 9) { // 8 more distinct columns within 32 of the diagonal
                int off = static_cast<int>(rng.below(65)) - 32;
                if (off != 0 && std::find(c.begin(), c.end(), r + off) == c.end())
                    c.push_back(r + off);
            }
            c.erase(std::remove_if(c.begin(), c.end(), [&](int x) { return x < 0 || x >= n; }),
                    c.end());
        });
    if (input == "powerlaw")
        return build(n, n, vrng, [&](int, std::vector<int>& c) {
            // Pareto row lengths (minimum 2, tail index 1.1, at most 50000: mean about 14);
            // columns drawn with a power-law popularity, so a few columns of x are hot.
            double u = 1.0 - rng.uniform();
            long long d = static_cast<long long>(2.0 / std::pow(u, 1.0 / 1.1));
            d = std::min<long long>(std::min<long long>(d, 50000), n);
            for (long long k = 0; k < d; ++k)
                c.push_back(static_cast<int>(std::pow(rng.uniform(), 2.5) * n));
        });
    if (input == "blockdiag")
        return build(n, n, vrng, [&](int r, std::vector<int>& c) {
            int b0 = r / 64 * 64, bs = std::min(64, n - b0);
            while ((int)c.size() < std::min(16, bs)) {
                int col = b0 + static_cast<int>(rng.below(bs));
                if (std::find(c.begin(), c.end(), col) == c.end())
                    c.push_back(col);
            }
        });
    if (input == "laplace2d") {
        const int g = std::max(2, static_cast<int>(std::sqrt(static_cast<double>(size))));
        return build(
            g * g, g * g, vrng,
            [&](int r, std::vector<int>& c) {
                int i = r / g, j = r % g;
                c.push_back(r);
                if (i > 0)
                    c.push_back(r - g);
                if (i < g - 1)
                    c.push_back(r + g);
                if (j > 0)
                    c.push_back(r - 1);
                if (j < g - 1)
                    c.push_back(r + 1);
            },
            true);
    }
    if (input == "sparse_empty")
        return build(n, n, vrng, [&](int, std::vector<int>& c) {
            if (rng.uniform() < 0.4)
                return; // an empty row
            int d = 1;
            while (d < 8 && rng.uniform() < 0.5)
                ++d;
            for (int k = 0; k < d; ++k)
                c.push_back(static_cast<int>(rng.below(n)));
        });
    bench::die("spmv: no generator for %s", input.c_str());
}

} // namespace

int main(int argc, char** argv) {
    const std::vector<bench::InputSpec> inputs = {
        {"small", 12000, "12,000 x 12,000, 16 random columns a row (x fits constant memory)"},
        {"random", 4 << 20, "4M x 4M, 16 uniformly random columns a row (x: 16 MB)"},
        {"banded", 8 << 20, "8M x 8M, 9 nonzeros a row within 32 of the diagonal"},
        {"powerlaw", 2 << 20, "2M x 2M, Pareto row lengths (2..50000), hot columns"},
        {"blockdiag", 4 << 20, "4M x 4M, 16 nonzeros a row inside 64 x 64 diagonal blocks"},
        {"laplace2d", 16 << 20, "5-point Laplacian of a 4096 x 4096 grid (16M rows)"},
        {"sparse_empty", 16 << 20, "16M x 16M, 40% empty rows, 1-8 random columns otherwise"},
    };
    bench::Options opt = bench::parse(argc, argv, "spmv", inputs);
    const Csr a = generate(opt.input, opt.size, opt.seed);
    const long long nnz = a.rowPtr.back();
    std::vector<float> hx(a.cols);
    bench::Rng xrng(opt.seed, 3);
    for (float& v : hx)
        v = xrng.uniformf(-1.0f, 1.0f);

    const double mean = static_cast<double>(nnz) / a.rows;
    int lanesPerRow = 2;
    while (lanesPerRow < 32 && lanesPerRow < mean)
        lanesPerRow *= 2;

    int *drowPtr = nullptr, *dcolIdx = nullptr;
    float *dval = nullptr, *dx = nullptr, *dy = nullptr;
    BENCH_CK(cudaMalloc(&drowPtr, a.rowPtr.size() * sizeof(int)));
    BENCH_CK(cudaMalloc(&dcolIdx, std::max<size_t>(1, a.colIdx.size()) * sizeof(int)));
    BENCH_CK(cudaMalloc(&dval, std::max<size_t>(1, a.val.size()) * sizeof(float)));
    BENCH_CK(cudaMalloc(&dx, a.cols * sizeof(float)));
    BENCH_CK(cudaMalloc(&dy, a.rows * sizeof(float)));
    BENCH_CK(cudaMemcpy(drowPtr, a.rowPtr.data(), a.rowPtr.size() * sizeof(int),
                        cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dcolIdx, a.colIdx.data(), a.colIdx.size() * sizeof(int),
                        cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dval, a.val.data(), a.val.size() * sizeof(float), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dx, hx.data(), a.cols * sizeof(float), cudaMemcpyHostToDevice));

    const int block = 256;
    const long long threads = (long long)a.rows * lanesPerRow;
    const unsigned grid = static_cast<unsigned>((threads + block - 1) / block);
    bench::Timer timer(opt);
    for (int run = 0; run < timer.runs(); ++run) {
        bench::poison(dy, a.rows);
        timer.start();
        spmv_csr_vector<<<grid, block>>>(drowPtr, dcolIdx, dval, dx, dy, a.rows, lanesPerRow);
        timer.lap("spmv_csr_vector");
        timer.stop();
    }

    std::vector<float> hy(a.rows);
    BENCH_CK(cudaMemcpy(hy.data(), dy, a.rows * sizeof(float), cudaMemcpyDeviceToHost));

    bench::Check check(opt.check);
    int maxRow = 0, emptyRows = 0;
    for (int r = 0; r < a.rows; ++r) {
        maxRow = std::max(maxRow, a.rowPtr[r + 1] - a.rowPtr[r]);
        emptyRows += a.rowPtr[r + 1] == a.rowPtr[r];
    }
    if (opt.check) {
        // Each lane sums ceil(len / lanes) products, then log2(lanes) shuffle levels:
        // |error| <= m * u * sum|a x| with m = ceil(len/lanes) + log2(lanes) + 2.
        check.setTolerance("(ceil(len/lanes) + log2(lanes) + 2) * 2^-24 * sum|a_ij x_j|");
        int logLanes = 0;
        while ((1 << logLanes) < lanesPerRow)
            ++logLanes;
        for (int r = 0; r < a.rows; ++r) {
            double ref = 0, mag = 0;
            for (int k = a.rowPtr[r]; k < a.rowPtr[r + 1]; ++k) {
                double p = static_cast<double>(a.val[k]) * hx[a.colIdx[k]];
                ref += p;
                mag += std::fabs(p);
            }
            int len = a.rowPtr[r + 1] - a.rowPtr[r];
            double m = (len + lanesPerRow - 1) / lanesPerRow + logLanes + 2;
            check.close("y", r, hy[r], ref, m * 0x1.0p-24 * mag);
        }
    }
    bench::Report report(opt, timer);
    report.output("y", hy);
    report.bytes(static_cast<double>(nnz) * 8 + (a.rows + 1.0) * 4 + a.cols * 4.0 + a.rows * 4.0);
    report.param("rows", a.rows);
    report.param("cols", a.cols);
    report.param("nnz", static_cast<double>(nnz));
    report.param("max_row", maxRow);
    report.param("empty_rows", emptyRows);
    report.param("lanes_per_row", lanesPerRow);
    int rc = report.finish(check);
    BENCH_CK(cudaFree(drowPtr));
    BENCH_CK(cudaFree(dcolIdx));
    BENCH_CK(cudaFree(dval));
    BENCH_CK(cudaFree(dx));
    BENCH_CK(cudaFree(dy));
    return rc;
}

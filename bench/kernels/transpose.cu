// Matrix transpose (CUDA SDK transpose, "no bank conflicts" version): a 32x33 shared tile,
// 32x8 threads each moving four elements in and four out, so that both the read of `in` and the
// write of `out` are coalesced. in is rows x cols, out is cols x rows, row-major float.
// Original placement: in `const __restrict__`; out written; the tile in shared memory.
#include "common/bench.h"

constexpr int kTileDim = 32;
constexpr int kBlockRows = 8;

__global__ void transpose(const float* __restrict__ in, float* out, int rows, int cols) {
    __shared__ float tile[kTileDim][kTileDim + 1];
    int x = blockIdx.x * kTileDim + threadIdx.x; // column of in
    int y = blockIdx.y * kTileDim + threadIdx.y; // row of in
    for (int j = 0; j < kTileDim; j += kBlockRows)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * kTileDim + threadIdx.x; // column of out
    y = blockIdx.x * kTileDim + threadIdx.y; // row of out
    for (int j = 0; j < kTileDim; j += kBlockRows)
        if (x < rows && y + j < cols)
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main(int argc, char** argv) {
    const std::vector<bench::InputSpec> inputs = {
        {"small", 1024, "1024 x 1024 (8 MB in and out)"},
        {"large", 8192, "8192 x 8192 (512 MB in and out)"},
        {"tall", 32768, "32768 x 2048 (rows x rows/16; 512 MB in and out)"},
        {"odd", 6007, "6007 x 5003: partial tiles on two edges"},
    };
    bench::Options opt = bench::parse(argc, argv, "transpose", inputs);
    const int rows = static_cast<int>(opt.size);
    int cols = rows;
    if (opt.input == "tall")
        cols = std::max(1, rows / 16);
    else if (opt.input == "odd")
        cols = std::max(1, static_cast<int>(static_cast<long long>(rows) * 5003 / 6007));
    const size_t n = (size_t)rows * cols;

    std::vector<float> hin(n);
    bench::Rng rng(opt.seed);
    for (float& v : hin)
        v = rng.uniformf(-1.0f, 1.0f);

    float *din = nullptr, *dout = nullptr;
    BENCH_CK(cudaMalloc(&din, n * sizeof(float)));
    BENCH_CK(cudaMalloc(&dout, n * sizeof(float)));
    BENCH_CK(cudaMemcpy(din, hin.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(kTileDim, kBlockRows);
    dim3 grid((cols + kTileDim - 1) / kTileDim, (rows + kTileDim - 1) / kTileDim);
    bench::Timer timer(opt);
    for (int run = 0; run < timer.runs(); ++run) {
        bench::poison(dout, n);
        timer.start();
        transpose<<<grid, block>>>(din, dout, rows, cols);
        timer.lap("transpose");
        timer.stop();
    }

    std::vector<float> hout(n);
    BENCH_CK(cudaMemcpy(hout.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));

    bench::Check check(opt.check);
    if (opt.check) {
        for (size_t r = 0; r < (size_t)rows; ++r)
            for (size_t c = 0; c < (size_t)cols; ++c)
                check.equal("out", c * rows + r, hout[c * rows + r], hin[r * cols + c]);
    }
    bench::Report report(opt, timer);
    report.output("out", hout);
    report.bytes(2.0 * n * sizeof(float));
    report.param("rows", rows);
    report.param("cols", cols);
    int rc = report.finish(check);
    BENCH_CK(cudaFree(din));
    BENCH_CK(cudaFree(dout));
    return rc;
}

// Dense matrix multiply C = A * B (CUDA SDK matrixMul): 32x32 shared-memory tiles, one output
// element per thread. A is M x K, B is K x N, C is M x N, all row-major float.
// Original placement: A and B `const __restrict__` (each element is staged once per tile by
// the block into shared memory, the textbook way); C written.
#include "common/bench.h"

constexpr int kTile = 32;

__global__ void matmul(const float* __restrict__ A, const float* __restrict__ B, float* C, int M,
                       int N, int K) {
    __shared__ float As[kTile][kTile];
    __shared__ float Bs[kTile][kTile];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * kTile + ty;
    int col = blockIdx.x * kTile + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += kTile) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < kTile; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N)
        C[(size_t)row * N + col] = acc;
}

int main(int argc, char** argv) {
    const std::vector<bench::InputSpec> inputs = {
        {"small", 512, "512^3: all three matrices fit in L2"},
        {"medium", 2048, "2048^3 (48 MB of matrices)"},
        {"large", 4096, "4096^3 (192 MB of matrices)"},
        {"rect", 16384, "M=16384, K=M/32, N=M/8: a tall A streamed against a narrow B"},
        {"odd", 3001, "3001 x 1999 x 2503: partial tiles on every edge"},
    };
    bench::Options opt = bench::parse(argc, argv, "mm", inputs);
    int M = static_cast<int>(opt.size), N = M, K = M;
    if (opt.input == "rect") {
        K = std::max(1, M / 32);
        N = std::max(1, M / 8);
    } else if (opt.input == "odd") {
        K = std::max(1, M * 2503 / 3001);
        N = std::max(1, M * 1999 / 3001);
    }
    const size_t nA = (size_t)M * K, nB = (size_t)K * N, nC = (size_t)M * N;

    std::vector<float> hA(nA), hB(nB);
    bench::Rng rngA(opt.seed, 1), rngB(opt.seed, 2);
    for (float& v : hA)
        v = rngA.uniformf(-1.0f, 1.0f);
    for (float& v : hB)
        v = rngB.uniformf(-1.0f, 1.0f);

    float *dA = nullptr, *dB = nullptr, *dC = nullptr;
    BENCH_CK(cudaMalloc(&dA, nA * sizeof(float)));
    BENCH_CK(cudaMalloc(&dB, nB * sizeof(float)));
    BENCH_CK(cudaMalloc(&dC, nC * sizeof(float)));
    BENCH_CK(cudaMemcpy(dA, hA.data(), nA * sizeof(float), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dB, hB.data(), nB * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(kTile, kTile);
    dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
    bench::Timer timer(opt);
    for (int run = 0; run < timer.runs(); ++run) {
        bench::poison(dC, nC);
        timer.start();
        matmul<<<grid, block>>>(dA, dB, dC, M, N, K);
        timer.lap("matmul");
        timer.stop();
    }

    std::vector<float> hC(nC);
    BENCH_CK(cudaMemcpy(hC.data(), dC, nC * sizeof(float), cudaMemcpyDeviceToHost));

    bench::Check check(opt.check);
    if (opt.check) {
        // Recursive summation of K products: |error| <= (K + 2) u sum|a b|, u = 2^-24.
        check.setTolerance("(K+2) * 2^-24 * sum_k |A_ik B_kj| (sampled elements)");
        for (size_t idx : bench::sampleIndices(nC, 1 << 16, opt.seed)) {
            size_t i = idx / N, j = idx % N;
            double ref = 0, mag = 0;
            for (int k = 0; k < K; ++k) {
                double p = static_cast<double>(hA[i * K + k]) * hB[(size_t)k * N + j];
                ref += p;
                mag += std::fabs(p);
            }
            check.close("C", idx, hC[idx], ref, (K + 2) * 0x1.0p-24 * mag);
        }
    }
    bench::Report report(opt, timer);
    report.output("C", hC);
    report.bytes(static_cast<double>(nA + nB + nC) * sizeof(float));
    report.param("M", M);
    report.param("N", N);
    report.param("K", K);
    report.param("flop", 2.0 * M * N * K);
    int rc = report.finish(check);
    BENCH_CK(cudaFree(dA));
    BENCH_CK(cudaFree(dB));
    BENCH_CK(cudaFree(dC));
    return rc;
}

// STREAM triad (SHOC level 1 "triad"): a[i] = b[i] + s * c[i].
// Original placement: b and c are read once each, coalesced: `const __restrict__` (read-only
// path), as a performance-aware author writes it; a is written.
#include "common/bench.h"

__global__ void triad(const float* __restrict__ b, const float* __restrict__ c, float* a, float s,
                      int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = b[i] + s * c[i];
}

int main(int argc, char** argv) {
    const std::vector<bench::InputSpec> inputs = {
        {"small", 1 << 20, "1M floats per array (12 MB): fits in L2"},
        {"medium", 4 << 20, "4M floats per array (48 MB): about the H100's L2"},
        {"large", 64 << 20, "64M floats per array (768 MB): streams from HBM"},
    };
    bench::Options opt = bench::parse(argc, argv, "triad", inputs);
    const int n = static_cast<int>(opt.size);
    const float s = 1.75f;

    std::vector<float> hb(n), hc(n);
    bench::Rng rng(opt.seed);
    for (int i = 0; i < n; ++i) {
        hb[i] = rng.uniformf(-1.0f, 1.0f);
        hc[i] = rng.uniformf(-1.0f, 1.0f);
    }

    float *db = nullptr, *dc = nullptr, *da = nullptr;
    BENCH_CK(cudaMalloc(&db, n * sizeof(float)));
    BENCH_CK(cudaMalloc(&dc, n * sizeof(float)));
    BENCH_CK(cudaMalloc(&da, n * sizeof(float)));
    BENCH_CK(cudaMemcpy(db, hb.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dc, hc.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    const int block = 256;
    const int grid = (n + block - 1) / block;
    bench::Timer timer(opt);
    for (int run = 0; run < timer.runs(); ++run) {
        bench::poison(da, n);
        timer.start();
        triad<<<grid, block>>>(db, dc, da, s, n);
        timer.lap("triad");
        timer.stop();
    }

    std::vector<float> ha(n);
    BENCH_CK(cudaMemcpy(ha.data(), da, n * sizeof(float), cudaMemcpyDeviceToHost));

    bench::Check check(opt.check);
    if (opt.check) {
        check.setTolerance("abs 1e-6 (one rounding of b + s*c with |b|,|c| < 1)");
        for (int i = 0; i < n; ++i)
            check.close("a", i, ha[i], static_cast<double>(hb[i]) + s * static_cast<double>(hc[i]),
                        1e-6);
    }
    bench::Report report(opt, timer);
    report.output("a", ha);
    report.bytes(3.0 * n * sizeof(float));
    report.param("n", n);
    int rc = report.finish(check);
    BENCH_CK(cudaFree(da));
    BENCH_CK(cudaFree(db));
    BENCH_CK(cudaFree(dc));
    return rc;
}

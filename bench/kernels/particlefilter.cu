// Particle filter resampling (Rodinia particlefilter, find_index): each particle i draws
// u[i] = u1 + i/N, finds the first CDF entry >= u[i] and copies that particle's position.
// Rodinia searches linearly; this searches the CDF by bisection (same answer, O(log N)), so that
// inputs of millions of particles stay practical.
// Arrays (PORPLE's B0..B5): CDF, u, arrayX, arrayY (read), xj, yj (written).
// Original placement: the four read-only arrays `const __restrict__`; xj, yj written.
#include "common/bench.h"

__global__ void find_index(const float* __restrict__ CDF, const float* __restrict__ u,
                           const float* __restrict__ arrayX, const float* __restrict__ arrayY,
                           float* xj, float* yj, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float ui = u[i];
    int lo = 0, hi = n - 1; // first index with CDF >= ui; n - 1 when there is none
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (CDF[mid] >= ui)
            hi = mid;
        else
            lo = mid + 1;
    }
    xj[i] = arrayX[lo];
    yj[i] = arrayY[lo];
}

int main(int argc, char** argv) {
    const std::vector<bench::InputSpec> inputs = {
        {"p1k", 1000, "1,000 particles (the CDF fits constant memory)"},
        {"p10k", 10000, "10,000 particles (the CDF fits constant memory)"},
        {"p100k", 100000, "100,000 particles"},
        {"p1m", 1000000, "1M particles"},
        {"p4m", 4000000, "4M particles"},
        {"p16m", 16000000, "16M particles (384 MB of arrays)"},
        {"p1m-peaked", 1000000,
         "1M particles, weight on a few hundred: most particles copy the same few"},
        {"p16m-flat", 16000000, "16M particles, equal weights: particle i copies about particle i"},
    };
    bench::Options opt = bench::parse(argc, argv, "particlefilter", inputs);
    const int n = static_cast<int>(opt.size);

    // Particles scattered around the true position; weights are the likelihood of an observation
    // near it (a Gaussian of width sigma); the CDF is their normalised running sum.
    double sigma = 2.0;
    if (opt.input == "p1m-peaked")
        sigma = 0.05;
    const bool flat = opt.input == "p16m-flat";
    bench::Rng rng(opt.seed);
    std::vector<float> hx(n), hy(n), hcdf(n), hu(n);
    std::vector<double> w(n);
    const double ox = 0.3, oy = -0.2;
    double total = 0;
    for (int i = 0; i < n; ++i) {
        hx[i] = static_cast<float>(5.0 * rng.normal());
        hy[i] = static_cast<float>(5.0 * rng.normal());
        double dx = hx[i] - ox, dy = hy[i] - oy;
        w[i] = flat ? 1.0 : std::exp(-(dx * dx + dy * dy) / (2 * sigma * sigma)) + 1e-300;
        total += w[i];
    }
    double run = 0;
    for (int i = 0; i < n; ++i) {
        run += w[i] / total;
        hcdf[i] = static_cast<float>(run);
    }
    const double u1 = rng.uniform() / n;
    for (int i = 0; i < n; ++i)
        hu[i] = static_cast<float>(u1 + static_cast<double>(i) / n);

    float *dcdf = nullptr, *du = nullptr, *dx = nullptr, *dy = nullptr, *dxj = nullptr,
          *dyj = nullptr;
    BENCH_CK(cudaMalloc(&dcdf, n * sizeof(float)));
    BENCH_CK(cudaMalloc(&du, n * sizeof(float)));
    BENCH_CK(cudaMalloc(&dx, n * sizeof(float)));
    BENCH_CK(cudaMalloc(&dy, n * sizeof(float)));
    BENCH_CK(cudaMalloc(&dxj, n * sizeof(float)));
    BENCH_CK(cudaMalloc(&dyj, n * sizeof(float)));
    BENCH_CK(cudaMemcpy(dcdf, hcdf.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(du, hu.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dx, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dy, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    const int block = 256;
    const int grid = (n + block - 1) / block;
    bench::Timer timer(opt);
    for (int r = 0; r < timer.runs(); ++r) {
        bench::poison(dxj, n);
        bench::poison(dyj, n);
        timer.start();
        find_index<<<grid, block>>>(dcdf, du, dx, dy, dxj, dyj, n);
        timer.lap("find_index");
        timer.stop();
    }

    std::vector<float> hxj(n), hyj(n);
    BENCH_CK(cudaMemcpy(hxj.data(), dxj, n * sizeof(float), cudaMemcpyDeviceToHost));
    BENCH_CK(cudaMemcpy(hyj.data(), dyj, n * sizeof(float), cudaMemcpyDeviceToHost));

    bench::Check check(opt.check);
    size_t distinct = 0;
    {
        std::vector<unsigned char> seen(n, 0);
        for (int i = 0; i < n; ++i) {
            size_t idx = std::lower_bound(hcdf.begin(), hcdf.end(), hu[i]) - hcdf.begin();
            if (idx >= (size_t)n)
                idx = n - 1;
            distinct += seen[idx] == 0;
            seen[idx] = 1;
            if (opt.check) {
                check.equal("xj", i, hxj[i], hx[idx]);
                check.equal("yj", i, hyj[i], hy[idx]);
            }
        }
    }
    bench::Report report(opt, timer);
    report.output("xj", hxj);
    report.output("yj", hyj);
    report.bytes(6.0 * n * sizeof(float));
    report.param("particles", n);
    report.param("distinct_sources", static_cast<double>(distinct));
    int rc = report.finish(check);
    for (float* p : {dcdf, du, dx, dy, dxj, dyj})
        BENCH_CK(cudaFree(p));
    return rc;
}

// Batched complex FFT (SHOC level 1 "fft" computes batches of small FFTs): radix-2 Stockham
// autosort, one kernel launch per stage (log2 n launches), each thread one butterfly, ping-pong
// between two work buffers; output in natural order, forward transform (e^{-2 pi i jk/n}).
// Arrays: x (stage input: the signal for the first stage, a work buffer after), y (stage
// output), twiddle (n/2 roots of unity, read by every stage; lanes of a warp read different
// entries in early stages and the same few in late ones).
// Original placement: x and twiddle `const __restrict__`; y written.
#include "common/bench.h"

__global__ void fft_radix2_stage(const float2* __restrict__ x, float2* y,
                                 const float2* __restrict__ twiddle, int n, int logn, int p,
                                 long long butterflies) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= butterflies)
        return;
    int half = n >> 1;
    long long base = (t >> (logn - 1)) << logn; // first element of this batch
    int i = (int)(t & (half - 1));              // butterfly index within the batch
    int k = i & (p - 1);                        // position within the current sub-transform
    float2 u0 = x[base + i];
    float2 u1 = x[base + i + half];
    float2 w = twiddle[(long long)k * (n / (2 * p))]; // e^{-2 pi i k / (2p)}
    float2 v = make_float2(u1.x * w.x - u1.y * w.y, u1.x * w.y + u1.y * w.x);
    int j = (i << 1) - k;
    y[base + j] = make_float2(u0.x + v.x, u0.y + v.y);
    y[base + j + p] = make_float2(u0.x - v.x, u0.y - v.y);
}

// In-place iterative radix-2 FFT in double precision (the CPU reference); w holds the n/2
// roots e^{-2 pi i j / n}.
static void referenceFft(std::vector<double>& re, std::vector<double>& im,
                         const std::vector<double>& wr, const std::vector<double>& wi) {
    const size_t n = re.size();
    for (size_t i = 1, j = 0; i < n; ++i) {
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) {
            std::swap(re[i], re[j]);
            std::swap(im[i], im[j]);
        }
    }
    for (size_t len = 2; len <= n; len <<= 1) {
        const size_t half = len / 2, step = n / len;
        for (size_t s = 0; s < n; s += len)
            for (size_t k = 0; k < half; ++k) {
                double c = wr[k * step], d = wi[k * step];
                double xr = re[s + k + half], xi = im[s + k + half];
                double vr = xr * c - xi * d, vi = xr * d + xi * c;
                re[s + k + half] = re[s + k] - vr;
                im[s + k + half] = im[s + k] - vi;
                re[s + k] += vr;
                im[s + k] += vi;
            }
    }
}

int main(int argc, char** argv) {
    const std::vector<bench::InputSpec> inputs = {
        {"small", 1024, "1024 transforms of 1024 points (8 MB)"},
        {"large", 65536, "65536 transforms of 1024 points (512 MB per buffer)"},
        {"long", 64, "64 transforms of 2^20 points (512 MB; a 4 MB twiddle table)"},
        {"short", 1 << 20, "1M transforms of 64 points (512 MB; a 256-byte twiddle table)"},
    };
    bench::Options opt = bench::parse(argc, argv, "fft", inputs);
    int logn = 10;
    if (opt.input == "long")
        logn = 20;
    else if (opt.input == "short")
        logn = 6;
    const int n = 1 << logn;
    const long long batch = opt.size;
    const size_t total = (size_t)batch * n;

    std::vector<float2> hin(total), htw(n / 2);
    bench::Rng rng(opt.seed);
    for (float2& v : hin)
        v = make_float2(rng.uniformf(-1.0f, 1.0f), rng.uniformf(-1.0f, 1.0f));
    for (int j = 0; j < n / 2; ++j)
        htw[j] = make_float2(static_cast<float>(std::cos(-2.0 * bench::kPi * j / n)),
                             static_cast<float>(std::sin(-2.0 * bench::kPi * j / n)));

    float2 *din = nullptr, *dwork0 = nullptr, *dwork1 = nullptr, *dtw = nullptr;
    BENCH_CK(cudaMalloc(&din, total * sizeof(float2)));
    BENCH_CK(cudaMalloc(&dwork0, total * sizeof(float2)));
    BENCH_CK(cudaMalloc(&dwork1, total * sizeof(float2)));
    BENCH_CK(cudaMalloc(&dtw, (n / 2) * sizeof(float2)));
    BENCH_CK(cudaMemcpy(din, hin.data(), total * sizeof(float2), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dtw, htw.data(), (n / 2) * sizeof(float2), cudaMemcpyHostToDevice));

    const long long butterflies = (long long)batch * (n / 2);
    const int block = 256;
    const unsigned grid = static_cast<unsigned>((butterflies + block - 1) / block);
    float2* result = nullptr;
    bench::Timer timer(opt);
    for (int run = 0; run < timer.runs(); ++run) {
        bench::poison(dwork0, total);
        bench::poison(dwork1, total);
        timer.start();
        const float2* src = din;
        for (int s = 0; s < logn; ++s) {
            float2* dst = (s % 2 == 0) ? dwork0 : dwork1;
            fft_radix2_stage<<<grid, block>>>(src, dst, dtw, n, logn, 1 << s, butterflies);
            timer.lap("fft_radix2_stage");
            src = dst;
            result = dst;
        }
        timer.stop();
    }

    std::vector<float2> hout(total);
    BENCH_CK(cudaMemcpy(hout.data(), result, total * sizeof(float2), cudaMemcpyDeviceToHost));
    std::vector<float> out(2 * total);
    for (size_t i = 0; i < total; ++i) {
        out[2 * i] = hout[i].x;
        out[2 * i + 1] = hout[i].y;
    }

    bench::Check check(opt.check);
    if (opt.check) {
        // Inputs in [-1,1]: outputs are about sqrt(n) in size, float error about
        // log2(n) * 2^-24 * sqrt(n) each; the tolerance is 64 times that.
        const double tol = 64.0 * logn * 0x1.0p-24 * std::sqrt(static_cast<double>(n)) * 4;
        check.setTolerance("256 * log2(n) * 2^-24 * sqrt(n) per component (sampled transforms)");
        std::vector<double> wr(n / 2), wi(n / 2);
        for (int j = 0; j < n / 2; ++j) {
            wr[j] = std::cos(-2.0 * bench::kPi * j / n);
            wi[j] = std::sin(-2.0 * bench::kPi * j / n);
        }
        // At most 64 transforms and about 2^24 points.
        const size_t checks = std::max<size_t>(4, std::min<size_t>(64, (1u << 24) / n));
        for (size_t b : bench::sampleIndices(batch, checks, opt.seed)) {
            std::vector<double> re(n), im(n);
            for (int j = 0; j < n; ++j) {
                re[j] = hin[b * n + j].x;
                im[j] = hin[b * n + j].y;
            }
            referenceFft(re, im, wr, wi);
            for (int j = 0; j < n; ++j) {
                check.close("out.re", b * n + j, hout[b * n + j].x, re[j], tol);
                check.close("out.im", b * n + j, hout[b * n + j].y, im[j], tol);
            }
        }
    }
    bench::Report report(opt, timer);
    report.output("out", out);
    report.bytes(static_cast<double>(logn) * 2 * total * sizeof(float2));
    report.param("n", n);
    report.param("batch", static_cast<double>(batch));
    report.param("stages", logn);
    int rc = report.finish(check);
    for (float2* p : {din, dwork0, dwork1, dtw})
        BENCH_CK(cudaFree(p));
    return rc;
}

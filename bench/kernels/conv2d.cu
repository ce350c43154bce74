// 2-D convolution of a single-channel float image with a (2R+1) x (2R+1) filter, clamp-to-edge
// borders (CUDA SDK convolution samples, direct non-separable form): one output pixel per
// thread, 32x8 threads per block.
// Original placement: the filter in constant memory (every lane of a warp reads the same tap at
// the same time: a broadcast), as the SDK samples do; the image `const __restrict__`; out written.
#include "common/bench.h"

constexpr int kMaxRadius = 8;
constexpr int kMaxTaps = (2 * kMaxRadius + 1) * (2 * kMaxRadius + 1);

__constant__ float c_filter[kMaxTaps];

__global__ void conv2d(const float* __restrict__ in, float* out, int width, int height,
                       int radius) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height)
        return;
    int fw = 2 * radius + 1;
    float sum = 0.0f;
    for (int dy = -radius; dy <= radius; ++dy) {
        int yy = min(max(y + dy, 0), height - 1);
        for (int dx = -radius; dx <= radius; ++dx) {
            int xx = min(max(x + dx, 0), width - 1);
            sum += c_filter[(dy + radius) * fw + (dx + radius)] * in[(size_t)yy * width + xx];
        }
    }
    out[(size_t)y * width + x] = sum;
}

int main(int argc, char** argv) {
    const std::vector<bench::InputSpec> inputs = {
        {"small", 512, "512 x 512 image, 5x5 filter"},
        {"large", 8192, "8192 x 8192 image (256 MB in, 256 MB out), 5x5 filter"},
        {"wide", 4096, "4096 x 4096 image, 17x17 filter (289 taps)"},
        {"hd", 3840, "3840 x 2160 image, 7x7 filter: partial blocks on the bottom edge"},
    };
    bench::Options opt = bench::parse(argc, argv, "conv2d", inputs);
    const int width = static_cast<int>(opt.size);
    int height = width, radius = 2;
    if (opt.input == "wide")
        radius = 8;
    if (opt.input == "hd") {
        height = std::max(1, width * 9 / 16);
        radius = 3;
    }
    const int fw = 2 * radius + 1, taps = fw * fw;
    const size_t n = (size_t)width * height;

    // A normalised Gaussian with random perturbations: no symmetry for the kernel to exploit.
    bench::Rng rngF(opt.seed, 1), rngI(opt.seed, 2);
    std::vector<float> hfilter(taps);
    double total = 0;
    for (int i = 0; i < taps; ++i) {
        double dy = i / fw - radius, dx = i % fw - radius;
        double w =
            std::exp(-(dx * dx + dy * dy) / (0.5 * fw * fw / 4.0)) * (0.75 + 0.5 * rngF.uniform());
        hfilter[i] = static_cast<float>(w);
        total += w;
    }
    for (float& w : hfilter)
        w = static_cast<float>(w / total);
    std::vector<float> hin(n);
    for (float& v : hin)
        v = rngI.uniformf(0.0f, 1.0f);

    float *din = nullptr, *dout = nullptr;
    BENCH_CK(cudaMalloc(&din, n * sizeof(float)));
    BENCH_CK(cudaMalloc(&dout, n * sizeof(float)));
    BENCH_CK(cudaMemcpy(din, hin.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpyToSymbol(c_filter, hfilter.data(), taps * sizeof(float)));

    dim3 block(32, 8);
    dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
    bench::Timer timer(opt);
    for (int run = 0; run < timer.runs(); ++run) {
        bench::poison(dout, n);
        timer.start();
        conv2d<<<grid, block>>>(din, dout, width, height, radius);
        timer.lap("conv2d");
        timer.stop();
    }

    std::vector<float> hout(n);
    BENCH_CK(cudaMemcpy(hout.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));

    bench::Check check(opt.check);
    if (opt.check) {
        check.setTolerance("(taps+2) * 2^-24 * sum |w x| (sampled pixels)");
        for (size_t idx : bench::sampleIndices(n, 1 << 18, opt.seed)) {
            int x = static_cast<int>(idx % width), y = static_cast<int>(idx / width);
            double ref = 0, mag = 0;
            for (int dy = -radius; dy <= radius; ++dy) {
                int yy = std::min(std::max(y + dy, 0), height - 1);
                for (int dx = -radius; dx <= radius; ++dx) {
                    int xx = std::min(std::max(x + dx, 0), width - 1);
                    double p = static_cast<double>(hfilter[(dy + radius) * fw + dx + radius]) *
                               hin[(size_t)yy * width + xx];
                    ref += p;
                    mag += std::fabs(p);
                }
            }
            check.close("out", idx, hout[idx], ref, (taps + 2) * 0x1.0p-24 * mag);
        }
    }
    bench::Report report(opt, timer);
    report.output("out", hout);
    report.bytes(2.0 * n * sizeof(float));
    report.param("width", width);
    report.param("height", height);
    report.param("radius", radius);
    int rc = report.finish(check);
    BENCH_CK(cudaFree(din));
    BENCH_CK(cudaFree(dout));
    return rc;
}

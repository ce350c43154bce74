// Sum reduction (SHOC level 1 "reduction"): a fixed grid of 1024 blocks of 256 threads; each
// thread sums a grid-stride slice of the input, each block reduces its threads' sums in shared
// memory and writes one partial sum; a second kernel of one block reduces the partial sums.
// The grid does not depend on the GPU, so the order of the additions, and the result, is fixed.
// Arrays: in (read), partial (written by the first kernel, read by the second), out (1 value).
// Original placement: in and (in the second kernel) partial `const __restrict__`; the tree in
// shared memory.
#include "common/bench.h"

constexpr int kBlock = 256;
constexpr int kPartials = 1024;

__global__ void reduce_partial(const float* __restrict__ in, float* partial, long long n) {
    __shared__ float sdata[kBlock];
    int tid = threadIdx.x;
    float sum = 0.0f;
    for (long long i = (long long)blockIdx.x * blockDim.x + tid; i < n;
         i += (long long)gridDim.x * blockDim.x)
        sum += in[i];
    sdata[tid] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        partial[blockIdx.x] = sdata[0];
}

__global__ void reduce_final(const float* __restrict__ partial, float* out, int nPartial) {
    __shared__ float sdata[kBlock];
    int tid = threadIdx.x;
    float sum = 0.0f;
    for (int i = tid; i < nPartial; i += blockDim.x)
        sum += partial[i];
    sdata[tid] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[0] = sdata[0];
}

int main(int argc, char** argv) {
    const std::vector<bench::InputSpec> inputs = {
        {"small", 1 << 20, "1M floats (4 MB)"},
        {"large", 128 << 20, "128M floats (512 MB)"},
        {"odd", 33554467, "33,554,467 floats (a prime: a ragged last slice)"},
    };
    bench::Options opt = bench::parse(argc, argv, "reduction", inputs);
    const long long n = opt.size;

    std::vector<float> hin(n);
    bench::Rng rng(opt.seed);
    for (float& v : hin)
        v = rng.uniformf(0.0f, 1.0f);

    float *din = nullptr, *dpartial = nullptr, *dout = nullptr;
    BENCH_CK(cudaMalloc(&din, n * sizeof(float)));
    BENCH_CK(cudaMalloc(&dpartial, kPartials * sizeof(float)));
    BENCH_CK(cudaMalloc(&dout, sizeof(float)));
    BENCH_CK(cudaMemcpy(din, hin.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    bench::Timer timer(opt);
    for (int run = 0; run < timer.runs(); ++run) {
        bench::poison(dpartial, kPartials);
        bench::poison(dout, 1);
        timer.start();
        reduce_partial<<<kPartials, kBlock>>>(din, dpartial, n);
        timer.lap("reduce_partial");
        reduce_final<<<1, kBlock>>>(dpartial, dout, kPartials);
        timer.lap("reduce_final");
        timer.stop();
    }

    std::vector<float> hout(1);
    BENCH_CK(cudaMemcpy(hout.data(), dout, sizeof(float), cudaMemcpyDeviceToHost));

    bench::Check check(opt.check);
    if (opt.check) {
        // Each thread adds ceil(n / 262144) values, then two trees of 8 levels and a final
        // per-thread sum of 4: recursive-summation bound m * u * sum|x|.
        const double m = std::ceil(static_cast<double>(n) / (kPartials * kBlock)) + 8 + 4 + 8 + 2;
        check.setTolerance("m * 2^-24 * sum|x|, m = n/262144 + 22");
        double ref = 0, mag = 0;
        for (float v : hin) {
            ref += v;
            mag += std::fabs(v);
        }
        check.close("out", 0, hout[0], ref, m * 0x1.0p-24 * mag);
    }
    bench::Report report(opt, timer);
    report.output("out", hout);
    report.bytes(static_cast<double>(n) * sizeof(float));
    report.param("n", static_cast<double>(n));
    int rc = report.finish(check);
    BENCH_CK(cudaFree(din));
    BENCH_CK(cudaFree(dpartial));
    BENCH_CK(cudaFree(dout));
    return rc;
}

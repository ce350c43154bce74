// The example of docs/rewrite-contract.md §1, character for character where the contract spells
// it out: compiled (not run) by compile_kernels.sh so that the contract and the runtime cannot
// drift apart.
#include <cuda_runtime.h>
#include "memplace/memplace.cuh"          // device accessors and the launch API

template <class MP_x, class MP_y>
__global__ void saxpy(int n, float a, MP_x x, MP_y y) {
    memplace::stage(x, y);
    [&]() {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        y[memplace::at<2>(i)] = a * x[memplace::at<0>(i)] + y[memplace::at<1>(i)];
    }();
    memplace::unstage(y);
}
struct memplace_kernel_saxpy {
    static constexpr const char* name = "saxpy";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"x", 2, sizeof(float), memplace::Mode::Read,  memplace::kPlaces_ro_1d, 1},
        {"y", 3, sizeof(float), memplace::Mode::ReadWrite, memplace::kPlaces_rw, 1},
    };
    template <class... Acc>
    static auto kernel() { return &saxpy<Acc...>; }
    template <class... Acc>
    static void launch(dim3 g, dim3 b, size_t shmem, cudaStream_t s, int n, float a, Acc... acc) {
        auto k = kernel<Acc...>();
        MEMPLACE_LAUNCH(k, g, b, shmem, s, n, a, acc...);
    }
};
#include <cstdio>
#include <vector>

int main() {
    // The contract's "..." : inputs, then its launch line, then a check and the launch report.
    int n = 1 << 20;
    float *dx = nullptr, *dy = nullptr;
    std::vector<float> hx(n, 1.5f), hy(n, 2.0f);
    if (cudaMalloc(&dx, n * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&dy, n * sizeof(float)) != cudaSuccess) {
        std::printf("no device memory\n");
        return 77;
    }
    cudaMemcpy(dx, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dy, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    memplace::launch<memplace_kernel_saxpy>((n + 255) / 256, 256, 0, 0, n, 2.0f, dx, dy);
    if (cudaDeviceSynchronize() != cudaSuccess) {
        return 1;
    }
    cudaMemcpy(hy.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost);
    int wrong = 0;
    for (float v : hy) {
        wrong += v != 5.0f;
    }
    const memplace::LaunchReport rep = memplace::lastReport();
    std::printf("%s\nwrong elements: %d\n", rep.toJson().c_str(), wrong);
    return wrong == 0 && rep.errors.empty() && !rep.anyFallback() ? 0 : 1;
}

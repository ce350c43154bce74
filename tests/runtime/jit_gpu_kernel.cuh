// The kernel of tests/runtime/jit_gpu_test.cu, as the rewriter writes one: compiled by nvcc
// there (included), and handed to NVRTC as text (jit_gpu.sh wraps this file in a raw string).
// A __constant__ table of the program's own: the JIT module has a copy, filled before launches.
__constant__ float k_scale[4];

template <class MP_x, class MP_t, class MP_c, class MP_y>
__global__ void jit_mix(int n, float s, MP_x x, int w, MP_t t, MP_c c, MP_y y) {
    memplace::stage(x, t, c, y);
    [&]() {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n)
            return;
        int row = (i / w) % w;
        int col = i % w;
        float v = s * x[memplace::at<0>(i)] + t[memplace::at<1>(row * w + col)];
        v += static_cast<float>(c[memplace::at<2>(i % 64)]);
        y[memplace::at<3>(i)] = v * k_scale[i & 3];
        y[memplace::at<4>(i)] += 1.0f;
    }();
    memplace::unstage(y);
}

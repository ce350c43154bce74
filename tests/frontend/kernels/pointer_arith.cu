// Pointer arithmetic into arrays, as real kernels write it: `*(p + i)`, `*(p + row * w + col)`,
// `*(p - i)` next to plain `p[i]`; a local row pointer `const float* row = m + r * cols`; an
// element's address kept in a local (`&a[i]`); a parameter rebased at the top of the kernel
// (`src += baseY * pitch + baseX`).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                \
    do {                                                                                \
        cudaError_t err_ = (call);                                                      \
        if (err_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static unsigned int g_seed = 4242u;
static float frand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return static_cast<float>(g_seed >> 8) * (1.0f / 16777216.0f);
}

// *(p + row * w + col) on both sides, *(p + i) and p[i] on the same array.
__global__ void scale_2d(int width, int height, const float* in, const float* bias, float* out) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < height && col < width) {
        *(out + row * width + col) = 2.0f * *(in + row * width + col) + *(bias + col) - bias[row];
    }
}

// *(p + n - 1 - i): a subtracted term, and an unsigned one.
__global__ void reverse_copy(int n, unsigned shift, const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        *(out + i) = *(in + n - 1 - i) + *((in + shift) - shift + i);
    }
}

// A local row pointer: `const float* row = m + r * cols; ... row[k]`.
__global__ void row_dot(int rows, int cols, const float* m, const float* v, float* out) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* row = m + r * cols;
        const int dst = r;
        r = -1; // the pointer was computed above: `row` still points at row `dst`
        float s = 0.0f;
        for (int k = 0; k < cols; ++k) {
            s += row[k] * v[k];
        }
        out[dst] = s;
    }
}

// A local pointer moved along the row (`p += 1`): not followed, `m` stays in global memory.
__global__ void row_walk(int rows, int cols, const float* m, float* out) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* p = m + r * cols;
        float s = 0.0f;
        for (int k = 0; k < cols; ++k) {
            s += p[0];
            p += 1;
        }
        out[r] = s;
    }
}

// An element's address kept in a local: `const float* q = &a[base]; ... q[k]`.
__global__ void window_sum(int n, int window, const float* a, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + window <= n) {
        const float* q = &a[i];
        float s = 0.0f;
        for (int k = 0; k < window; ++k) {
            s += q[k];
        }
        out[i] = s;
    }
}

// A parameter rebased before any use, as in the CUDA samples' convolution kernels.
__global__ void rebased_copy(int width, int height, int pitch, const float* src, float* dst) {
    const int baseX = blockIdx.x * blockDim.x + threadIdx.x;
    const int baseY = blockIdx.y * blockDim.y + threadIdx.y;
    src += baseY * pitch + baseX;
    dst += baseY * width + baseX;
    if (baseX < width && baseY < height) {
        dst[0] = src[0] + 0.5f * src[pitch * 0 + 1];
    }
}

// FNV-1a over the bytes of the outputs: equal hashes mean bitwise-equal results.
static unsigned long long fnv1a(const void* data, size_t bytes,
                                unsigned long long h = 1469598103934665603ull) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

static std::vector<float> download(const float* d, size_t count) {
    std::vector<float> h(count);
    CUDA_CHECK(cudaMemcpy(h.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost));
    return h;
}

int main() {
    const int width = 200;
    const int height = 96;
    const int pitch = width + 1; // the source of rebased_copy has one extra column
    const size_t count = static_cast<size_t>(width) * height;
    const size_t srcCount = static_cast<size_t>(pitch) * height;
    const int window = 7;
    std::vector<float> hin(srcCount), hbias(width > height ? width : height), hv(width);
    for (float& x : hin) {
        x = frand();
    }
    for (float& x : hbias) {
        x = frand();
    }
    for (float& x : hv) {
        x = frand();
    }
    float *din, *dbias, *dv, *dscaled, *drev, *ddot, *dwalk, *dwin, *dcopy;
    CUDA_CHECK(cudaMalloc(&din, srcCount * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dbias, hbias.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dv, width * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dscaled, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&drev, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&ddot, count * sizeof(float))); // only the first `height` are written
    CUDA_CHECK(cudaMalloc(&dwalk, count * sizeof(float))); // only the first `height` too
    CUDA_CHECK(cudaMalloc(&dwin, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dcopy, count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(din, hin.data(), srcCount * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dbias, hbias.data(), hbias.size() * sizeof(float),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dv, hv.data(), width * sizeof(float), cudaMemcpyHostToDevice));
    for (float* d : {dscaled, drev, ddot, dwalk, dwin, dcopy}) { // poison the outputs
        CUDA_CHECK(cudaMemset(d, 0xFF, count * sizeof(float)));
    }

    dim3 block(16, 8);
    dim3 grid((width + 15) / 16, (height + 7) / 8);
    const int n = static_cast<int>(count);
    scale_2d<<<grid, block>>>(width, height, din, dbias, dscaled);
    reverse_copy<<<(n + 127) / 128, 128>>>(n, 5u, din, drev);
    row_dot<<<(height + 63) / 64, 64>>>(height, width, din, dv, ddot);
    row_walk<<<(height + 63) / 64, 64>>>(height, width, din, dwalk);
    window_sum<<<(n + 127) / 128, 128>>>(n, window, din, dwin);
    rebased_copy<<<grid, block>>>(width, height, pitch, din, dcopy);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> scaled = download(dscaled, count);
    std::vector<float> rev = download(drev, count);
    std::vector<float> dot = download(ddot, height);
    std::vector<float> walk = download(dwalk, height);
    std::vector<float> win = download(dwin, count);
    std::vector<float> copy = download(dcopy, count);
    unsigned long long hash = fnv1a(scaled.data(), count * sizeof(float));
    hash = fnv1a(rev.data(), count * sizeof(float), hash);
    hash = fnv1a(dot.data(), height * sizeof(float), hash);
    hash = fnv1a(walk.data(), height * sizeof(float), hash);
    hash = fnv1a(win.data(), (count - window + 1) * sizeof(float), hash);
    hash = fnv1a(copy.data(), count * sizeof(float), hash);

    int bad = 0;
    double checksum = 0.0;
    auto check = [&](float got, float expect, float tol) {
        if (std::fabs(got - expect) > tol) {
            ++bad;
        }
        checksum += got;
    };
    for (int r = 0; r < height; ++r) {
        for (int c = 0; c < width; ++c) {
            const size_t i = static_cast<size_t>(r) * width + c;
            check(scaled[i], 2.0f * hin[i] + hbias[c] - hbias[r], 1e-5f);
            check(copy[i], hin[static_cast<size_t>(r) * pitch + c] +
                               0.5f * hin[static_cast<size_t>(r) * pitch + c + 1],
                  1e-5f);
        }
        float s = 0.0f;
        for (int k = 0; k < width; ++k) {
            s += hin[static_cast<size_t>(r) * width + k] * hv[k];
        }
        check(dot[r], s, 1e-3f);
        float w = 0.0f;
        for (int k = 0; k < width; ++k) {
            w += hin[static_cast<size_t>(r) * width + k];
        }
        check(walk[r], w, 1e-3f);
    }
    for (int i = 0; i < n; ++i) {
        check(rev[i], hin[n - 1 - i] + hin[i], 1e-5f);
        if (i + window <= n) {
            float s = 0.0f;
            for (int k = 0; k < window; ++k) {
                s += hin[i + k];
            }
            check(win[i], s, 1e-4f);
        }
    }
    printf("pointer_arith: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL",
           checksum, hash);
    for (float* d : {din, dbias, dv, dscaled, drev, ddot, dwalk, dwin, dcopy}) {
        cudaFree(d);
    }
    return bad == 0 ? 0 : 1;
}

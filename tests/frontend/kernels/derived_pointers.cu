// Elements reached through a pointer derived from a kernel parameter and then dereferenced,
// as nearest-neighbour and particle codes write them: `Pos* p = locs + id;` read as `p->lat`,
// `float* d = out + id;` written as `*d = ...`, a structure element updated through a local
// pointer (`q->x += q->vx`), and a parameter rebased at the top of the kernel then read as
// `*src`. Each becomes an access of the accessor's view at the pointer's offset
// (`memplace::offset`, `p[memplace::at<S>(0)].lat`). Checks against the CPU, prints a checksum.
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

struct Pos {
    float lat;
    float lng;
};

struct Body {
    float x, y;
    float vx, vy;
};

__global__ void distances(Pos* locs, float* out, int n, float lat, float lng) {
    const int id = blockDim.x * (gridDim.x * blockIdx.y + blockIdx.x) + threadIdx.x;
    Pos* p = locs + id;
    if (id < n) {
        float* d = out + id;
        *d = sqrtf((lat - p->lat) * (lat - p->lat) + (lng - (*p).lng) * (lng - (*p).lng));
    }
}

__global__ void advance(Body* bodies, int n, float dt) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Body* q = bodies + i;
        q->x += q->vx * dt;
        q->y += q->vy * dt;
        q->vy -= 1.0f;
    }
}

// Each block handles one row of `width` values starting at `first + row * pitch`.
__global__ void rowDiffs(const int* src, int* diffs, int first, int pitch, int width) {
    src += first + blockIdx.x * pitch;
    const int c = threadIdx.x;
    if (c + 1 < width) {
        diffs[blockIdx.x * width + c] = src[c + 1] - src[c];
    } else if (c + 1 == width) {
        diffs[blockIdx.x * width + c] = *src;
    }
}

static unsigned long long fnv1a(const void* data, size_t bytes, unsigned long long h) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

int main() {
    const int n = 700, rows = 12, width = 40, pitch = 45, first = 3;
    std::vector<Pos> hl(n);
    std::vector<Body> hb(n);
    for (int i = 0; i < n; ++i) {
        hl[i] = {static_cast<float>((i * 37) % 180) - 90.0f, static_cast<float>((i * 53) % 360)};
        hb[i] = {i * 0.5f, i * 0.25f, (i % 7) * 0.125f, 2.0f};
    }
    std::vector<int> hs(first + rows * pitch);
    for (size_t i = 0; i < hs.size(); ++i) {
        hs[i] = static_cast<int>((i * i * 7 + 3) % 1009);
    }
    Pos* dL;
    Body* dB;
    float* dOut;
    int *dS, *dDiffs;
    CUDA_CHECK(cudaMalloc(&dL, n * sizeof(Pos)));
    CUDA_CHECK(cudaMalloc(&dB, n * sizeof(Body)));
    CUDA_CHECK(cudaMalloc(&dOut, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dS, hs.size() * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dDiffs, rows * width * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dL, hl.data(), n * sizeof(Pos), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, hb.data(), n * sizeof(Body), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dS, hs.data(), hs.size() * sizeof(int), cudaMemcpyHostToDevice));
    distances<<<(n + 127) / 128, 128>>>(dL, dOut, n, 12.5f, 100.0f);
    for (int step = 0; step < 3; ++step) {
        advance<<<(n + 63) / 64, 64>>>(dB, n, 0.5f);
    }
    rowDiffs<<<rows, 64>>>(dS, dDiffs, first, pitch, width);
    CUDA_CHECK(cudaGetLastError());
    std::vector<float> go(n);
    std::vector<Body> gb(n);
    std::vector<int> gd(rows * width);
    CUDA_CHECK(cudaMemcpy(go.data(), dOut, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gb.data(), dB, n * sizeof(Body), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gd.data(), dDiffs, rows * width * sizeof(int), cudaMemcpyDeviceToHost));
    auto near = [](float got, float want) {
        return std::fabs(got - want) <= 1e-4f * (1.0f + std::fabs(want));
    };
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        const float dl = 12.5f - hl[i].lat, dg = 100.0f - hl[i].lng;
        bad += !near(go[i], std::sqrt(dl * dl + dg * dg));
        Body b = hb[i];
        for (int step = 0; step < 3; ++step) {
            b.x += b.vx * 0.5f;
            b.y += b.vy * 0.5f;
            b.vy -= 1.0f;
        }
        bad += !near(gb[i].x, b.x) + !near(gb[i].y, b.y) + (gb[i].vy != b.vy);
    }
    for (int r = 0; r < rows; ++r) {
        const int* row = hs.data() + first + r * pitch;
        for (int c = 0; c < width; ++c) {
            bad += gd[r * width + c] != (c + 1 < width ? row[c + 1] - row[c] : row[0]);
        }
    }
    unsigned long long h = 1469598103934665603ull;
    h = fnv1a(go.data(), go.size() * sizeof(float), h);
    h = fnv1a(gb.data(), gb.size() * sizeof(Body), h);
    h = fnv1a(gd.data(), gd.size() * sizeof(int), h);
    printf("derived_pointers: %s, outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", h);
    CUDA_CHECK(cudaFree(dL));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dOut));
    CUDA_CHECK(cudaFree(dS));
    CUDA_CHECK(cudaFree(dDiffs));
    return bad == 0 ? 0 : 1;
}

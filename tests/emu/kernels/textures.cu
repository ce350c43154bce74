// Texture objects as programs use them: a gather through tex1Dfetch on linear memory (the
// vector of a sparse matrix-vector product) and a 3x3 blur through tex2D on pitched memory
// with clamped borders.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "check.h"

__global__ void spmv(const int* rowPtr, const int* cols, const float* vals, cudaTextureObject_t x, float* y, int rows) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float acc = 0.0f;
    for (int k = rowPtr[r]; k < rowPtr[r + 1]; ++k) acc += vals[k] * tex1Dfetch<float>(x, cols[k]);
    y[r] = acc;
}

__global__ void blur(cudaTextureObject_t img, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float s = 0.0f;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) s += tex2D<float>(img, x + dx + 0.5f, y + dy + 0.5f);
    out[y * w + x] = s / 9.0f;
}

int main() {
    // A banded sparse matrix.
    const int rows = 300;
    std::vector<int> rowPtr{0}, cols;
    std::vector<float> vals;
    for (int r = 0; r < rows; ++r) {
        for (int c = std::max(0, r - 2); c <= std::min(rows - 1, r + 3); ++c) {
            cols.push_back(c);
            vals.push_back(static_cast<float>((r + c) % 5) - 2.0f);
        }
        rowPtr.push_back(static_cast<int>(cols.size()));
    }
    std::vector<float> xh(rows);
    for (int i = 0; i < rows; ++i) xh[i] = static_cast<float>(i % 17) * 0.25f;
    int *dRow, *dCol;
    float *dVal, *dX, *dY;
    CUDA_OK(cudaMalloc(&dRow, rowPtr.size() * sizeof(int)));
    CUDA_OK(cudaMalloc(&dCol, cols.size() * sizeof(int)));
    CUDA_OK(cudaMalloc(&dVal, vals.size() * sizeof(float)));
    CUDA_OK(cudaMalloc(&dX, rows * sizeof(float)));
    CUDA_OK(cudaMalloc(&dY, rows * sizeof(float)));
    CUDA_OK(cudaMemcpy(dRow, rowPtr.data(), rowPtr.size() * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dCol, cols.data(), cols.size() * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dVal, vals.data(), vals.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dX, xh.data(), rows * sizeof(float), cudaMemcpyHostToDevice));
    cudaResourceDesc res{};
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = dX;
    res.res.linear.desc = cudaCreateChannelDesc<float>();
    res.res.linear.sizeInBytes = rows * sizeof(float);
    cudaTextureDesc td{};
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t xTex;
    CUDA_OK(cudaCreateTextureObject(&xTex, &res, &td, nullptr));
    MEMPLACE_LAUNCH(spmv, (rows + 127) / 128, 128, 0, 0, dRow, dCol, dVal, xTex, dY, rows);
    CUDA_OK(cudaGetLastError());
    std::vector<float> y(rows);
    CUDA_OK(cudaMemcpy(y.data(), dY, rows * sizeof(float), cudaMemcpyDeviceToHost));
    for (int r = 0; r < rows; ++r) {
        float acc = 0.0f;
        for (int k = rowPtr[r]; k < rowPtr[r + 1]; ++k) acc += vals[k] * xh[cols[k]];
        CHECK(y[r] == acc);
    }
    CUDA_OK(cudaDestroyTextureObject(xTex));

    const int w = 37, h = 23;
    float* img;
    size_t pitch;
    CUDA_OK(cudaMallocPitch(&img, &pitch, w * sizeof(float), h));
    std::vector<float> ih(w * h);
    for (int i = 0; i < w * h; ++i) ih[i] = static_cast<float>((i * 31) % 97);
    CUDA_OK(cudaMemcpy2D(img, pitch, ih.data(), w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice));
    cudaResourceDesc r2{};
    r2.resType = cudaResourceTypePitch2D;
    r2.res.pitch2D.devPtr = img;
    r2.res.pitch2D.desc = cudaCreateChannelDesc<float>();
    r2.res.pitch2D.width = w;
    r2.res.pitch2D.height = h;
    r2.res.pitch2D.pitchInBytes = pitch;
    cudaTextureDesc t2{};
    t2.addressMode[0] = t2.addressMode[1] = cudaAddressModeClamp;
    t2.filterMode = cudaFilterModePoint;
    cudaTextureObject_t imgTex;
    CUDA_OK(cudaCreateTextureObject(&imgTex, &r2, &t2, nullptr));
    float* out;
    CUDA_OK(cudaMallocManaged(&out, w * h * sizeof(float)));
    MEMPLACE_LAUNCH(blur, dim3((w + 15) / 16, (h + 15) / 16), dim3(16, 16), 0, 0, imgTex, out, w, h);
    CUDA_OK(cudaDeviceSynchronize());
    for (int y0 = 0; y0 < h; ++y0)
        for (int x0 = 0; x0 < w; ++x0) {
            float s = 0.0f;
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx)
                    s += ih[std::clamp(y0 + dy, 0, h - 1) * w + std::clamp(x0 + dx, 0, w - 1)];
            CHECK(out[y0 * w + x0] == s / 9.0f);
        }
    CUDA_OK(cudaDestroyTextureObject(imgTex));
    return finish("textures");
}

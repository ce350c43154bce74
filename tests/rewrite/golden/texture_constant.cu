// Texture objects and __constant__ memory already in use: a 3x3 blur reading the image through
// a texture object and its weights from __constant__ memory, and a lookup table in a
// __device__ array filled by one kernel and read by another.
// memplace: rewritten by `memplace rewrite` from texture_constant.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
// The file declares 36 bytes of __constant__ data of its own: the constant pool
// gets the rest of the 64 KB.
#define MEMPLACE_CONSTANT_POOL_BYTES (65536 - (36 + 15) / 16 * 16)
#include "memplace/memplace.cuh"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

__constant__ float c_weights[9];
__device__ float d_lut[256];

static unsigned int g_seed = 1234567u;
static unsigned int urand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}

template <class MP_out>
__global__ void blur3x3(cudaTextureObject_t img, int width, int height, MP_out out) {
    memplace::stage(out);
    [&]() {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    float acc = 0.0f;
    for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
            int xx = min(max(x + dx, 0), width - 1);
            int yy = min(max(y + dy, 0), height - 1);
            acc += c_weights[(dy + 1) * 3 + (dx + 1)] * tex1Dfetch<float>(img, yy * width + xx);
        }
    }
    out[memplace::at<2>(y * width + x)] = acc;
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'blur3x3' (docs/rewrite-contract.md)
struct memplace_kernel_blur3x3 {
    static constexpr const char* name = "blur3x3";
    static constexpr int numArrays = 1;
    static constexpr memplace::ArrayDesc arrays[1] = {
        {"out", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<float>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "blur3x3";
    static constexpr const char* jitTypes[1] = {"float"};
    // The __constant__ variables it reads: the JIT module's copies are filled from these.
    static constexpr const char* jitConstants[1] = {"c_weights"};
    static const void* jitConstant(int k) {
        const void* const a[] = {&::c_weights};
        return a[k];
    }
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

__constant__ float c_weights[9];

template <class MP_out>
__global__ void blur3x3(cudaTextureObject_t img, int width, int height, MP_out out) {
    memplace::stage(out);
    [&]() {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    float acc = 0.0f;
    for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
            int xx = min(max(x + dx, 0), width - 1);
            int yy = min(max(y + dy, 0), height - 1);
            acc += c_weights[(dy + 1) * 3 + (dx + 1)] * tex1Dfetch<float>(img, yy * width + xx);
        }
    }
    out[memplace::at<2>(y * width + x)] = acc;
    }();
    memplace::unstage(out);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::blur3x3<Acc...>; }
    template <class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            cudaTextureObject_t img, int width, int height, MP_out out) {
        auto mp_kernel = kernel<MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, img, width, height,
            out);
    }
};

__global__ void build_lut(float scale) {
    int i = threadIdx.x;
    d_lut[i] = scale * i * i;
}

template <class MP_in, class MP_out>
__global__ void apply_lut(int n, MP_in in, MP_out out) {
    memplace::stage(in, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[memplace::at<4>(i)] = d_lut[in[memplace::at<6>(i)]];
    }
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'apply_lut' (docs/rewrite-contract.md)
struct memplace_kernel_apply_lut {
    static constexpr const char* name = "apply_lut";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"in", 1, sizeof(unsigned char), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 2, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const unsigned char, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // The __device__ variables it accesses by name: an array that may share memory with one
    // of them stays where the program keeps it when either is written.
    static constexpr memplace::GlobalDesc globals[1] = {{"d_lut", memplace::Mode::Read}};
    static cudaError_t globalRange(int k, void** address, size_t* bytes) {
        switch (k) {
        case 0:
            return memplace::symbolRange(::d_lut, address, bytes);
        }
        return cudaErrorInvalidSymbol;
    }
    // Not compiled just in time: it uses the __device__ variable 'd_lut' (a just-in-time module
    // would have a copy of its own, and the kernel may write it). Placements not compiled in run
    // through the dynamic accessor.
    static constexpr const char* jitSource = nullptr;
    template <class... Acc>
    static auto kernel() { return &::apply_lut<Acc...>; }
    template <class MP_in, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_in in, MP_out out) {
        auto mp_kernel = kernel<MP_in, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, in, out);
    }
};

// FNV-1a over the bytes of the outputs: equal hashes mean bitwise-equal results.
static unsigned long long fnv1a(const void* data, size_t bytes,
                                unsigned long long h = 1469598103934665603ull) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

int main() {
    const int width = 320;
    const int height = 200;
    const int count = width * height;
    std::vector<float> img(count);
    std::vector<unsigned char> bytes(count);
    for (int i = 0; i < count; ++i) {
        bytes[i] = static_cast<unsigned char>(urand() & 0xff);
        img[i] = bytes[i] * (1.0f / 255.0f);
    }
    const float weights[9] = {1 / 16.0f, 2 / 16.0f, 1 / 16.0f, 2 / 16.0f, 4 / 16.0f,
                              2 / 16.0f, 1 / 16.0f, 2 / 16.0f, 1 / 16.0f};
    CUDA_CHECK(cudaMemcpyToSymbol(c_weights, weights, sizeof(weights)));

    float *dimg, *dblur, *dmapped;
    unsigned char* dbytes;
    CUDA_CHECK(cudaMalloc(&dimg, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dblur, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dmapped, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dbytes, count));
    CUDA_CHECK(cudaMemcpy(dimg, img.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dbytes, bytes.data(), count, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dblur, 0xFF, count * sizeof(float))); // poison the outputs
    CUDA_CHECK(cudaMemset(dmapped, 0xFF, count * sizeof(float)));

    cudaResourceDesc res;
    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = dimg;
    res.res.linear.desc = cudaCreateChannelDesc<float>();
    res.res.linear.sizeInBytes = count * sizeof(float);
    cudaTextureDesc tex;
    memset(&tex, 0, sizeof(tex));
    tex.readMode = cudaReadModeElementType;
    cudaTextureObject_t texObj = 0;
    CUDA_CHECK(cudaCreateTextureObject(&texObj, &res, &tex, nullptr));

    dim3 block(32, 8);
    dim3 grid((width + 31) / 32, (height + 7) / 8);
    memplace::launch<memplace_kernel_blur3x3>(grid, block, 0, 0, texObj, width, height, dblur);
    MEMPLACE_LAUNCH(build_lut, 1, 256, 0, 0, 1.0f / 65025.0f);
    memplace::launch<memplace_kernel_apply_lut>((count + 255) / 256, 256, 0, 0, count, dbytes,
        dmapped);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> blur(count), mapped(count);
    CUDA_CHECK(cudaMemcpy(blur.data(), dblur, count * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(mapped.data(), dmapped, count * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    double checksum = 0.0;
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            double acc = 0.0;
            for (int dy = -1; dy <= 1; ++dy) {
                for (int dx = -1; dx <= 1; ++dx) {
                    int xx = x + dx < 0 ? 0 : (x + dx > width - 1 ? width - 1 : x + dx);
                    int yy = y + dy < 0 ? 0 : (y + dy > height - 1 ? height - 1 : y + dy);
                    acc += weights[(dy + 1) * 3 + (dx + 1)] * img[yy * width + xx];
                }
            }
            int i = y * width + x;
            float lut = (1.0f / 65025.0f) * bytes[i] * bytes[i];
            bad += std::fabs(blur[i] - acc) > 1e-5;
            bad += std::fabs(mapped[i] - lut) > 1e-6f;
            checksum += blur[i] + mapped[i];
        }
    }
    float lut[256];
    CUDA_CHECK(cudaMemcpyFromSymbol(lut, d_lut, sizeof(lut)));
    unsigned long long hash = fnv1a(blur.data(), count * sizeof(float));
    hash = fnv1a(mapped.data(), count * sizeof(float), hash);
    hash = fnv1a(lut, sizeof(lut), hash);
    printf("texture_constant: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL",
           checksum, hash);
    cudaDestroyTextureObject(texObj);
    cudaFree(dimg);
    cudaFree(dblur);
    cudaFree(dmapped);
    cudaFree(dbytes);
    return bad == 0 ? 0 : 1;
}

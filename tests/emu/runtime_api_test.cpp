// The runtime API on the emulator: memory and its checks, symbols, textures, properties from
// the spec, launch configuration errors, streams, events, dynamic shared memory.
#include "emu/select_spec.h"
#include "emu_fixture.h"

#include <cmath>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>
#include <thread>

namespace {

__constant__ float c_coeff[4];
__device__ int d_counter;
__device__ float d_table[100];

__global__ void useConstant(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = c_coeff[0] + c_coeff[1] * in[i] + c_coeff[2] * in[i] * in[i];
    atomicAdd(&d_counter, 1);
}

TEST_F(Emu, ConstantAndDeviceSymbols) {
    const float coeff[4] = {1.0f, 2.0f, 3.0f, 0.0f};
    ASSERT_EQ(cudaMemcpyToSymbol(c_coeff, coeff, sizeof(coeff)), cudaSuccess);
    int zero = 0;
    ASSERT_EQ(cudaMemcpyToSymbolAsync(d_counter, &zero, sizeof(int), 0, cudaMemcpyHostToDevice, 0),
              cudaSuccess);
    float* in = managed<float>(100);
    float* out = managed<float>(100);
    for (int i = 0; i < 100; ++i)
        in[i] = static_cast<float>(i);
    MEMPLACE_LAUNCH(useConstant, 4, 32, 0, 0, in, out, 100);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (int i = 0; i < 100; ++i)
        EXPECT_EQ(out[i], 1.0f + 2.0f * i + 3.0f * i * i);
    int count = 0;
    ASSERT_EQ(cudaMemcpyFromSymbol(&count, d_counter, sizeof(int)), cudaSuccess);
    EXPECT_EQ(count, 128);
    // Bounds: the symbol is 16 bytes.
    EXPECT_EQ(cudaMemcpyToSymbol(c_coeff, coeff, 8, 12), cudaErrorInvalidValue);
    EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
    EXPECT_EQ(cudaMemcpyToSymbol(c_coeff, coeff, 4, 0, cudaMemcpyDeviceToHost),
              cudaErrorInvalidMemcpyDirection);
    // Its address is device memory with a range.
    void* addr = nullptr;
    ASSERT_EQ(cudaGetSymbolAddress(&addr, d_table), cudaSuccess);
    CUdeviceptr base = 0;
    size_t size = 0;
    ASSERT_EQ(cuMemGetAddressRange(&base, &size,
                                   reinterpret_cast<CUdeviceptr>(static_cast<char*>(addr) + 40)),
              CUDA_SUCCESS);
    EXPECT_EQ(base, reinterpret_cast<CUdeviceptr>(addr));
    EXPECT_EQ(size, sizeof(d_table));
    size_t symSize = 0;
    ASSERT_EQ(cudaGetSymbolSize(&symSize, d_table), cudaSuccess);
    EXPECT_EQ(symSize, 400u);
}

TEST_F(Emu, MemoryCopiesAreCheckedAgainstAllocations) {
    float* d = nullptr;
    ASSERT_EQ(cudaMalloc(&d, 100 * sizeof(float)), cudaSuccess);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(d) % 256, 0u);
    std::vector<float> h(100, 1.5f), back(100, 0.0f);
    EXPECT_EQ(cudaMemcpy(d, h.data(), 100 * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(back.data(), d, 100 * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(back, h);
    // Past the end of the allocation, and a host pointer as device memory: invalid.
    EXPECT_EQ(cudaMemcpy(d + 50, h.data(), 51 * sizeof(float), cudaMemcpyHostToDevice),
              cudaErrorInvalidValue);
    EXPECT_EQ(cudaMemcpy(back.data(), h.data(), 4, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    EXPECT_EQ(cudaMemcpy(back.data(), h.data(), 4, cudaMemcpyDefault), cudaSuccess);
    EXPECT_EQ(cudaMemset(d, 0, 100 * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemset(d, 0, 101 * sizeof(float)), cudaErrorInvalidValue);
    CUdeviceptr base = 0;
    size_t size = 0;
    ASSERT_EQ(cuMemGetAddressRange(&base, &size, reinterpret_cast<CUdeviceptr>(d + 99)),
              CUDA_SUCCESS);
    EXPECT_EQ(base, reinterpret_cast<CUdeviceptr>(d));
    EXPECT_EQ(size, 400u);
    EXPECT_EQ(cuMemGetAddressRange(&base, &size, reinterpret_cast<CUdeviceptr>(h.data())),
              CUDA_ERROR_NOT_FOUND);
    cudaPointerAttributes attr{};
    ASSERT_EQ(cudaPointerGetAttributes(&attr, d), cudaSuccess);
    EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
    EXPECT_EQ(cudaFree(d), cudaSuccess);
    EXPECT_EQ(cudaFree(d), cudaErrorInvalidDevicePointer);
    EXPECT_EQ(cudaFree(h.data()), cudaErrorInvalidDevicePointer);
    cudaGetLastError();
}

TEST_F(Emu, PitchedMemoryAndTwoDimensionalCopies) {
    float* d = nullptr;
    size_t pitch = 0;
    ASSERT_EQ(cudaMallocPitch(&d, &pitch, 10 * sizeof(float), 5), cudaSuccess);
    EXPECT_EQ(pitch % 512, 0u);
    std::vector<float> h(50), back(50, 0.0f);
    for (int i = 0; i < 50; ++i)
        h[i] = static_cast<float>(i);
    ASSERT_EQ(cudaMemcpy2D(d, pitch, h.data(), 10 * sizeof(float), 10 * sizeof(float), 5,
                           cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_EQ(cudaMemset2D(d, pitch, 0, 2 * sizeof(float), 1), cudaSuccess);
    ASSERT_EQ(cudaMemcpy2D(back.data(), 10 * sizeof(float), d, pitch, 10 * sizeof(float), 5,
                           cudaMemcpyDeviceToHost),
              cudaSuccess);
    h[0] = h[1] = 0.0f;
    EXPECT_EQ(back, h);
    cudaFree(d);
}

TEST_F(Emu, PropertiesComeFromTheSpec) {
    cudaDeviceProp p{};
    ASSERT_EQ(cudaGetDeviceProperties(&p, 0), cudaSuccess);
    EXPECT_EQ(p.multiProcessorCount, 132);
    EXPECT_EQ(p.major, 9);
    EXPECT_EQ(p.minor, 0);
    EXPECT_EQ(p.warpSize, 32);
    EXPECT_EQ(p.sharedMemPerBlockOptin, 227u * 1024u);
    EXPECT_EQ(p.l2CacheSize, 50 * 1024 * 1024);
    EXPECT_EQ(p.totalConstMem, 65536u);
    EXPECT_NE(std::string(p.name).find("H100"), std::string::npos);
    int v = 0;
    ASSERT_EQ(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0), cudaSuccess);
    EXPECT_EQ(v, 227 * 1024);
    ASSERT_EQ(cudaDeviceGetAttribute(&v, cudaDevAttrMaxPersistingL2CacheSize, 0), cudaSuccess);
    EXPECT_GT(v, 0);
    int count = 0;
    ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
    EXPECT_EQ(count, 1);
    EXPECT_EQ(cudaSetDevice(1), cudaErrorInvalidDevice);
    cudaGetLastError();
    testing::internal::CaptureStderr();
    EXPECT_EQ(cudaDeviceGetAttribute(&v, cudaDevAttrGPUDirectRDMASupported, 0),
              cudaErrorNotSupported);
    EXPECT_NE(testing::internal::GetCapturedStderr().find("cudaDevAttrGPUDirectRDMASupported"),
              std::string::npos);
    cudaGetLastError();

    // Another spec: a V100 has no persisting L2 and fewer SMs.
    auto v100 = memplace::spec::loadSpec("v100");
    ASSERT_TRUE(v100.ok()) << v100.message();
    const memplace::spec::Spec h100 = memplace::emu::currentSpec();
    memplace::emu::useSpec(*v100);
    ASSERT_EQ(cudaGetDeviceProperties(&p, 0), cudaSuccess);
    EXPECT_EQ(p.major, 7);
    EXPECT_EQ(p.persistingL2CacheMaxSize, 0);
    EXPECT_EQ(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 1 << 20),
              cudaErrorUnsupportedLimit);
    cudaGetLastError();
    memplace::emu::useSpec(h100);
}

__global__ void nothing(int*) {}

TEST_F(Emu, LaunchConfigurationErrorsAreCudas) {
    int* out = managed<int>(1);
    testing::internal::CaptureStderr();
    MEMPLACE_LAUNCH(nothing, 1, 2048, 0, 0, out);
    EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
    MEMPLACE_LAUNCH(nothing, 1, dim3(1, 1, 65), 0, 0, out);
    EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
    MEMPLACE_LAUNCH(nothing, dim3(1, 70000), 1, 0, 0, out);
    EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
    MEMPLACE_LAUNCH(nothing, 1, 32, 64 * 1024, 0, out); // above 48 KB without opting in
    EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("2048 threads"), std::string::npos) << err;
    // Errors at launch are not sticky.
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(cudaFuncSetAttribute(nothing, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024),
              cudaSuccess);
    MEMPLACE_LAUNCH(nothing, 1, 32, 64 * 1024, 0, out);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    EXPECT_EQ(
        cudaFuncSetAttribute(nothing, cudaFuncAttributeMaxDynamicSharedMemorySize, 228 * 1024),
        cudaErrorInvalidValue);
    cudaFuncAttributes fa{};
    testing::internal::CaptureStderr();
    ASSERT_EQ(cudaFuncGetAttributes(&fa, nothing), cudaSuccess);
    testing::internal::GetCapturedStderr();
    EXPECT_EQ(fa.maxDynamicSharedSizeBytes, 64 * 1024);
    cudaGetLastError();
}

MEMPLACE_DYNAMIC_SHARED(float, g_fileScopeShared);

__global__ void dynamicShared(const float* in, float* out, int n) {
    MEMPLACE_DYNAMIC_SHARED(float, buf);
    int t = threadIdx.x;
    for (int i = t; i < n; i += blockDim.x)
        buf[i] = in[blockIdx.x * n + i];
    __syncthreads();
    float s = 0.0f;
    for (int i = 0; i < n; ++i)
        s += buf[i] * static_cast<float>(t + 1);
    out[blockIdx.x * blockDim.x + t] = s;
    __syncthreads();
    if (t == 0)
        g_fileScopeShared[0] = -1.0f; // the same memory
    __syncthreads();
    if (t == 1)
        out[blockIdx.x * blockDim.x + t] = buf[0];
}

TEST_F(Emu, DynamicSharedMemoryAtFunctionAndFileScope) {
    const int n = 20000; // 80 KB: needs the opt-in
    float* in = managed<float>(3 * n);
    float* out = managed<float>(3 * 64);
    for (int i = 0; i < 3 * n; ++i)
        in[i] = static_cast<float>(i % 7);
    ASSERT_EQ(
        cudaFuncSetAttribute(dynamicShared, cudaFuncAttributeMaxDynamicSharedMemorySize, n * 4),
        cudaSuccess);
    MEMPLACE_LAUNCH(dynamicShared, 3, 64, n * sizeof(float), 0, in, out, n);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (int b = 0; b < 3; ++b) {
        float sum = 0.0f;
        for (int i = 0; i < n; ++i)
            sum += static_cast<float>((b * n + i) % 7);
        EXPECT_EQ(out[b * 64 + 0], sum * 1.0f);
        EXPECT_EQ(out[b * 64 + 1], -1.0f);
        EXPECT_EQ(out[b * 64 + 5], sum * 6.0f);
    }
}

__global__ void fetch1D(cudaTextureObject_t tex, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n + 2)
        out[i] = tex1Dfetch<float>(tex, i - 1); // one before and one past the ends
}

__global__ void fetch2D(cudaTextureObject_t clamp, cudaTextureObject_t border, int4* out) {
    int x = static_cast<int>(threadIdx.x) - 1, y = static_cast<int>(threadIdx.y) - 1;
    int4 a = tex2D<int4>(clamp, x + 0.5f, y + 0.5f);
    int4 b = tex2D<int4>(border, x + 0.5f, y + 0.5f);
    int idx = threadIdx.y * blockDim.x + threadIdx.x;
    out[idx * 2] = a;
    out[idx * 2 + 1] = b;
}

__global__ void fetchWrongType(cudaTextureObject_t tex, int* out) {
    out[0] = tex1Dfetch<int>(tex, 0);
}

TEST_F(Emu, TextureObjects) {
    const int n = 100;
    float* data = nullptr;
    ASSERT_EQ(cudaMalloc(&data, n * sizeof(float)), cudaSuccess);
    std::vector<float> h(n);
    for (int i = 0; i < n; ++i)
        h[i] = static_cast<float>(i) * 0.5f;
    cudaMemcpy(data, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaResourceDesc res{};
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = data;
    res.res.linear.desc = cudaCreateChannelDesc<float>();
    res.res.linear.sizeInBytes = n * sizeof(float);
    cudaTextureDesc td{};
    td.readMode = cudaReadModeElementType;
    td.filterMode = cudaFilterModePoint;
    cudaTextureObject_t tex = 0;
    ASSERT_EQ(cudaCreateTextureObject(&tex, &res, &td, nullptr), cudaSuccess);
    float* out = managed<float>(n + 2, -7.0f);
    MEMPLACE_LAUNCH(fetch1D, 1, 128, 0, 0, tex, out, n);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(out[0], 0.0f);     // index -1
    EXPECT_EQ(out[n + 1], 0.0f); // index n
    for (int i = 0; i < n; ++i)
        EXPECT_EQ(out[i + 1], h[i]);

    // The element type must match the texture's format.
    int* iout = managed<int>(1);
    testing::internal::CaptureStderr();
    MEMPLACE_LAUNCH(fetchWrongType, 1, 1, 0, 0, tex, iout);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidTexture);
    EXPECT_NE(err.find("does not match the texture"), std::string::npos) << err;
    memplace::emu::resetStickyError();
    EXPECT_EQ(cudaDestroyTextureObject(tex), cudaSuccess);
    testing::internal::CaptureStderr();
    MEMPLACE_LAUNCH(fetch1D, 1, 1, 0, 0, tex, out, 0);
    err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("destroyed texture"), std::string::npos) << err;
    memplace::emu::resetStickyError();

    // A misaligned linear resource is refused (devPtr must be aligned to textureAlignment).
    res.res.linear.devPtr = data + 1;
    res.res.linear.sizeInBytes = 4;
    EXPECT_EQ(cudaCreateTextureObject(&tex, &res, &td, nullptr), cudaErrorInvalidValue);
    cudaGetLastError();

    // 2-D: a 3x2 int4 image with clamp and border addressing.
    int4* img = nullptr;
    size_t pitch = 0;
    ASSERT_EQ(cudaMallocPitch(&img, &pitch, 3 * sizeof(int4), 2), cudaSuccess);
    for (int y = 0; y < 2; ++y) {
        for (int x = 0; x < 3; ++x) {
            int4 v{x, y, x * 10 + y, 7};
            cudaMemcpy(reinterpret_cast<char*>(img) + y * pitch + x * sizeof(int4), &v, sizeof v,
                       cudaMemcpyHostToDevice);
        }
    }
    cudaResourceDesc r2{};
    r2.resType = cudaResourceTypePitch2D;
    r2.res.pitch2D.devPtr = img;
    r2.res.pitch2D.desc = cudaCreateChannelDesc<int4>();
    r2.res.pitch2D.width = 3;
    r2.res.pitch2D.height = 2;
    r2.res.pitch2D.pitchInBytes = pitch;
    cudaTextureDesc clampDesc{};
    clampDesc.addressMode[0] = clampDesc.addressMode[1] = cudaAddressModeClamp;
    cudaTextureDesc borderDesc{};
    borderDesc.addressMode[0] = borderDesc.addressMode[1] = cudaAddressModeBorder;
    cudaTextureObject_t tc = 0, tb = 0;
    ASSERT_EQ(cudaCreateTextureObject(&tc, &r2, &clampDesc, nullptr), cudaSuccess);
    ASSERT_EQ(cudaCreateTextureObject(&tb, &r2, &borderDesc, nullptr), cudaSuccess);
    int4* out2 = managed<int4>(5 * 4 * 2);
    MEMPLACE_LAUNCH(fetch2D, 1, dim3(5, 4), 0, 0, tc, tb, out2);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (int ty = 0; ty < 4; ++ty) {
        for (int tx = 0; tx < 5; ++tx) {
            int x = tx - 1, y = ty - 1;
            int cx = std::clamp(x, 0, 2), cy = std::clamp(y, 0, 1);
            const int4& a = out2[(ty * 5 + tx) * 2];
            const int4& b = out2[(ty * 5 + tx) * 2 + 1];
            EXPECT_EQ(a.z, cx * 10 + cy);
            bool inside = x >= 0 && x < 3 && y >= 0 && y < 2;
            EXPECT_EQ(b.z, inside ? x * 10 + y : 0);
            EXPECT_EQ(b.w, inside ? 7 : 0);
        }
    }
    cudaDestroyTextureObject(tc);
    cudaDestroyTextureObject(tb);
    cudaFree(img);
    cudaFree(data);

    // CUDA arrays are not emulated: a loud error, not a silent texture.
    cudaResourceDesc arr{};
    arr.resType = cudaResourceTypeArray;
    testing::internal::CaptureStderr();
    EXPECT_EQ(cudaCreateTextureObject(&tex, &arr, &td, nullptr), cudaErrorNotSupported);
    EXPECT_NE(testing::internal::GetCapturedStderr().find("CUDA arrays are not supported"),
              std::string::npos);
    cudaGetLastError();
}

__global__ void linearFiltered(cudaTextureObject_t t, float* out) {
    out[threadIdx.x] = tex2D<float>(t, 0.5f + threadIdx.x * 0.25f, 0.5f);
}

TEST_F(Emu, LinearFilteringUsesEightBitWeights) {
    float* img = nullptr;
    size_t pitch = 0;
    ASSERT_EQ(cudaMallocPitch(&img, &pitch, 4 * sizeof(float), 1), cudaSuccess);
    float row[4] = {0.0f, 1.0f, 3.0f, 7.0f};
    cudaMemcpy(img, row, sizeof row, cudaMemcpyHostToDevice);
    cudaResourceDesc r{};
    r.resType = cudaResourceTypePitch2D;
    r.res.pitch2D.devPtr = img;
    r.res.pitch2D.desc = cudaCreateChannelDesc<float>();
    r.res.pitch2D.width = 4;
    r.res.pitch2D.height = 1;
    r.res.pitch2D.pitchInBytes = pitch;
    cudaTextureDesc td{};
    td.filterMode = cudaFilterModeLinear;
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    cudaTextureObject_t t = 0;
    ASSERT_EQ(cudaCreateTextureObject(&t, &r, &td, nullptr), cudaSuccess);
    float* out = managed<float>(13);
    MEMPLACE_LAUNCH(linearFiltered, 1, 13, 0, 0, t, out);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(out[0], 0.0f);
    EXPECT_EQ(out[2], 0.5f); // halfway between texel 0 and 1
    EXPECT_EQ(out[4], 1.0f);
    EXPECT_EQ(out[5], 1.5f);  // a quarter of the way from 1 to 3
    EXPECT_EQ(out[12], 7.0f); // clamped
    cudaDestroyTextureObject(t);
    cudaFree(img);
}

TEST_F(Emu, StreamsEventsAndTheAccessPolicyWindow) {
    cudaStream_t s = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    float* d = nullptr;
    ASSERT_EQ(cudaMalloc(&d, 1 << 20), cudaSuccess);
    cudaStreamAttrValue attr{};
    attr.accessPolicyWindow.base_ptr = d;
    attr.accessPolicyWindow.num_bytes = 1 << 20;
    attr.accessPolicyWindow.hitRatio = 0.6f;
    attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    ASSERT_EQ(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 4 << 20), cudaSuccess);
    ASSERT_EQ(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &attr), cudaSuccess);
    cudaStreamAttrValue got{};
    ASSERT_EQ(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &got), cudaSuccess);
    EXPECT_EQ(got.accessPolicyWindow.base_ptr, static_cast<void*>(d));
    EXPECT_EQ(got.accessPolicyWindow.hitRatio, 0.6f);
    attr.accessPolicyWindow.hitRatio = 1.5f;
    EXPECT_EQ(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &attr),
              cudaErrorInvalidValue);
    EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
    size_t limit = 0;
    ASSERT_EQ(cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize), cudaSuccess);
    EXPECT_EQ(limit, 4u << 20);
    EXPECT_EQ(cudaCtxResetPersistingL2Cache(), cudaSuccess);

    cudaEvent_t a, b;
    ASSERT_EQ(cudaEventCreate(&a), cudaSuccess);
    ASSERT_EQ(cudaEventCreate(&b), cudaSuccess);
    float ms = 0;
    EXPECT_EQ(cudaEventElapsedTime(&ms, a, b), cudaErrorNotReady);
    EXPECT_EQ(cudaGetLastError(), cudaErrorNotReady);
    ASSERT_EQ(cudaEventRecord(a, s), cudaSuccess);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_EQ(cudaEventRecord(b, s), cudaSuccess);
    ASSERT_EQ(cudaEventSynchronize(b), cudaSuccess);
    ASSERT_EQ(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
    EXPECT_GE(ms, 4.0f);
    int* out = managed<int>(1);
    MEMPLACE_LAUNCH(nothing, 1, 1, 0, s, out);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(s), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(s), cudaErrorInvalidResourceHandle);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    cudaFree(d);
    cudaGetLastError();
}

__global__ void withArgs(int a, double b, float* out) {
    out[threadIdx.x] = static_cast<float>(a + b);
}

TEST_F(Emu, CudaLaunchKernelWithTheKernelItself) {
    float* out = managed<float>(4);
    int a = 2;
    double b = 0.5;
    void* args[] = {&a, &b, &out};
    ASSERT_EQ(cudaLaunchKernel(withArgs, dim3(1), dim3(4), args, 0, nullptr), cudaSuccess);
    EXPECT_EQ(out[3], 2.5f);
}

__global__ void mathKernel(float* f, int* i) {
    f[0] = __fdividef(1.0f, 4.0f);
    f[1] = rsqrtf(4.0f);
    f[2] = __fmaf_rn(2.0f, 3.0f, 1.0f);
    f[3] = __saturatef(1.5f);
    f[4] = __fadd_rd(1.0f, 1e-8f);
    f[5] = __fadd_ru(1.0f, 1e-8f);
    f[6] = __int_as_float(0x3f800000);
    f[7] = min(2.0f, 3.0f) + max(1, 5);
    i[0] = __popc(0xf0f0u);
    i[1] = __clz(1);
    i[2] = __ffs(8);
    i[3] = static_cast<int>(__brev(1u) >> 31);
    i[4] = __float2int_rn(2.5f);
    i[5] = __float2int_rn(3.5f);
    i[6] = __float2int_rz(-2.7f);
    i[7] = __float2int_rn(1e20f);
    i[8] = static_cast<int>(__umulhi(0x80000000u, 4u));
    i[9] = __byte_perm(0x33221100, 0x77665544, 0x0123) == 0x00112233 ? 1 : 0;
    i[10] = min(-1, 2u) == 2u ? 1 : 0; // CUDA's mixed overload is unsigned
}

TEST_F(Emu, MathIntrinsics) {
    float* f = managed<float>(8);
    int* i = managed<int>(11);
    MEMPLACE_LAUNCH(mathKernel, 1, 1, 0, 0, f, i);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(f[0], 0.25f);
    EXPECT_EQ(f[1], 0.5f);
    EXPECT_EQ(f[2], 7.0f);
    EXPECT_EQ(f[3], 1.0f);
    EXPECT_EQ(f[4], 1.0f);
    EXPECT_EQ(f[5], std::nextafter(1.0f, 2.0f));
    EXPECT_EQ(f[6], 1.0f);
    EXPECT_EQ(f[7], 7.0f);
    EXPECT_EQ(i[0], 8);
    EXPECT_EQ(i[1], 31);
    EXPECT_EQ(i[2], 4);
    EXPECT_EQ(i[3], 1);
    EXPECT_EQ(i[4], 2);
    EXPECT_EQ(i[5], 4);
    EXPECT_EQ(i[6], -2);
    EXPECT_EQ(i[7], 2147483647);
    EXPECT_EQ(i[8], 2);
    EXPECT_EQ(i[9], 1);
    EXPECT_EQ(i[10], 1);
}

} // namespace

namespace {

TEST_F(Emu, DriverEntryPointsAndConstVoidFunctionForms) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
    ASSERT_EQ(
        cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fn, 12000, cudaEnableDefault, &q),
        cudaSuccess);
    ASSERT_EQ(q, cudaDriverEntryPointSuccess);
    float* d = nullptr;
    ASSERT_EQ(cudaMalloc(&d, 1000), cudaSuccess);
    auto range = reinterpret_cast<CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr)>(fn);
    CUdeviceptr base = 0;
    size_t size = 0;
    ASSERT_EQ(range(&base, &size, reinterpret_cast<CUdeviceptr>(d + 3)), CUDA_SUCCESS);
    EXPECT_EQ(size, 1000u);
    testing::internal::CaptureStderr();
    ASSERT_EQ(cudaGetDriverEntryPoint("cuLaunchKernel", &fn, cudaEnableDefault, &q), cudaSuccess);
    EXPECT_NE(testing::internal::GetCapturedStderr().find("cuLaunchKernel is not emulated"),
              std::string::npos);
    EXPECT_EQ(q, cudaDriverEntryPointSymbolNotFound);
    EXPECT_EQ(fn, nullptr);
    size_t width = 0;
    cudaChannelFormatDesc f = cudaCreateChannelDesc<float4>();
    ASSERT_EQ(cudaDeviceGetTexture1DLinearMaxWidth(&width, &f, 0), cudaSuccess);
    EXPECT_EQ(width, size_t{1} << 27);
    const void* key = reinterpret_cast<const void*>(&nothing);
    ASSERT_EQ(cudaFuncSetAttribute(key, cudaFuncAttributeMaxDynamicSharedMemorySize, 100000),
              cudaSuccess);
    cudaFuncAttributes fa{};
    testing::internal::CaptureStderr();
    ASSERT_EQ(cudaFuncGetAttributes(&fa, nothing), cudaSuccess);
    testing::internal::GetCapturedStderr();
    EXPECT_EQ(fa.maxDynamicSharedSizeBytes, 100000);
    cudaFree(d);
}

} // namespace

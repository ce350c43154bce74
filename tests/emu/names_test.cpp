// The enumerations' name tables (enums.h, one X-macro list each) and the device attribute table
// (runtime_attributes.cpp): names and numbers as in CUDA 13, every attribute answered or
// reported as not supported.
#include "emu_fixture.h"

#include <climits>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>
#include <string>

namespace {

using memplace::emu::detail::deviceAttrName;
using memplace::emu::detail::errorName;

TEST(EmuNames, ErrorNamesMatchTheirNumbers) {
    EXPECT_STREQ(errorName(0), "cudaSuccess");
    EXPECT_STREQ(errorName(1), "cudaErrorInvalidValue");
    EXPECT_STREQ(errorName(719), "cudaErrorLaunchFailure");
    EXPECT_STREQ(errorName(915), "cudaErrorInvalidResourceConfiguration");
    EXPECT_STREQ(errorName(999), "cudaErrorUnknown");
    EXPECT_EQ(static_cast<int>(cudaErrorLaunchFailure), 719);
    EXPECT_EQ(static_cast<int>(cudaErrorUnknown), 999);
    // Numbers that are no enumerator have no name.
    for (int gap : {-1, 10, 11, 14, 15, 998, 1000})
        EXPECT_EQ(errorName(gap), nullptr) << gap;
    int named = 0;
    for (int e = 0; e <= 1000; ++e)
        named += errorName(e) != nullptr;
    EXPECT_EQ(named, 133); // CUDA 13's cudaError
}

TEST(EmuNames, DeviceAttributeNamesMatchTheirNumbers) {
    EXPECT_STREQ(deviceAttrName(1), "cudaDevAttrMaxThreadsPerBlock");
    EXPECT_STREQ(deviceAttrName(97), "cudaDevAttrMaxSharedMemoryPerBlockOptin");
    EXPECT_STREQ(deviceAttrName(147), "cudaDevAttrOnlyPartialHostNativeAtomicSupported");
    EXPECT_EQ(static_cast<int>(cudaDevAttrClusterLaunch), 120);
    for (int gap : {0, 44, 102, 146, 148})
        EXPECT_EQ(deviceAttrName(gap), nullptr) << gap;
    int named = 0;
    for (int a = 0; a <= 200; ++a)
        named += deviceAttrName(a) != nullptr;
    EXPECT_EQ(named, 137); // CUDA 13's cudaDeviceAttr
}

TEST(EmuNames, RuntimeErrorNamesAndStrings) {
    EXPECT_STREQ(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue");
    EXPECT_STREQ(cudaGetErrorName(static_cast<cudaError_t>(10)), "cudaErrorUnknown");
    EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument");
    // Errors without a string of their own are described by their name.
    EXPECT_STREQ(cudaGetErrorString(cudaErrorTimeout), "cudaErrorTimeout");
    EXPECT_STREQ(cudaGetErrorString(static_cast<cudaError_t>(10)), "unrecognized error code");
}

TEST(EmuNames, DriverResultNames) {
    const char* s = nullptr;
    ASSERT_EQ(cuGetErrorName(CUDA_ERROR_NOT_FOUND, &s), CUDA_SUCCESS);
    EXPECT_STREQ(s, "CUDA_ERROR_NOT_FOUND");
    ASSERT_EQ(cuGetErrorName(CUDA_SUCCESS, &s), CUDA_SUCCESS);
    EXPECT_STREQ(s, "CUDA_SUCCESS");
    EXPECT_EQ(cuGetErrorName(static_cast<CUresult>(7), &s), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(s, nullptr);
    ASSERT_EQ(cuGetErrorString(CUDA_ERROR_NO_DEVICE, &s), CUDA_SUCCESS);
    EXPECT_STREQ(s, "no CUDA-capable device is detected");
    // Results without a string of their own are described by their name.
    ASSERT_EQ(cuGetErrorString(CUDA_ERROR_INVALID_DEVICE, &s), CUDA_SUCCESS);
    EXPECT_STREQ(s, "CUDA_ERROR_INVALID_DEVICE");
    EXPECT_EQ(static_cast<int>(CUDA_ERROR_UNKNOWN), 999);
}

TEST_F(Emu, EveryDeviceAttributeIsAnsweredOrNotSupported) {
    cudaDeviceProp p{};
    ASSERT_EQ(cudaGetDeviceProperties(&p, 0), cudaSuccess);
    int supported = 0;
    testing::internal::CaptureStderr();
    for (int a = 0; a <= 200; ++a) {
        if (deviceAttrName(a) == nullptr)
            continue;
        int v = -12345;
        const cudaError_t e = cudaDeviceGetAttribute(&v, static_cast<cudaDeviceAttr>(a), 0);
        EXPECT_TRUE(e == cudaSuccess || e == cudaErrorNotSupported) << deviceAttrName(a);
        if (e == cudaSuccess) {
            ++supported;
            EXPECT_NE(v, -12345) << deviceAttrName(a);
        }
    }
    const std::string reports = testing::internal::GetCapturedStderr();
    cudaGetLastError();
    EXPECT_EQ(supported, 62);
    EXPECT_NE(reports.find("cudaDeviceGetAttribute: cudaDevAttrMaxTexture3DWidth is not supported"),
              std::string::npos);

    int v = 0;
    ASSERT_EQ(cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerBlock, 0), cudaSuccess);
    EXPECT_EQ(v, p.maxThreadsPerBlock);
    ASSERT_EQ(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
    EXPECT_EQ(v, p.multiProcessorCount);
    ASSERT_EQ(cudaDeviceGetAttribute(&v, cudaDevAttrMaxPitch, 0), cudaSuccess);
    EXPECT_EQ(v, INT_MAX); // sizes are clamped to an int
    ASSERT_EQ(cudaDeviceGetAttribute(&v, cudaDevAttrMaxTexture1DLinearWidth, 0), cudaSuccess);
    EXPECT_EQ(v, 1 << 27);
    ASSERT_EQ(cudaDeviceGetAttribute(&v, cudaDevAttrCooperativeLaunch, 0), cudaSuccess);
    EXPECT_EQ(v, 0);
    EXPECT_EQ(cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerBlock, 1), cudaErrorInvalidDevice);
    EXPECT_EQ(cudaDeviceGetAttribute(nullptr, cudaDevAttrMaxThreadsPerBlock, 0),
              cudaErrorInvalidValue);
    cudaGetLastError();
}

} // namespace

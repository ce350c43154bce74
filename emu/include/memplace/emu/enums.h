// CUDA 13's cudaError and cudaDeviceAttr enumerations, names and numbers. Each is one X-macro
// list (name, value) from which both the enum and its name table are generated, so a name
// cannot drift from its number.
#pragma once

#define MEMPLACE_EMU_CUDA_ERRORS(X)                                                                \
    X(cudaSuccess, 0)                                                                              \
    X(cudaErrorInvalidValue, 1)                                                                    \
    X(cudaErrorMemoryAllocation, 2)                                                                \
    X(cudaErrorInitializationError, 3)                                                             \
    X(cudaErrorCudartUnloading, 4)                                                                 \
    X(cudaErrorProfilerDisabled, 5)                                                                \
    X(cudaErrorProfilerNotInitialized, 6)                                                          \
    X(cudaErrorProfilerAlreadyStarted, 7)                                                          \
    X(cudaErrorProfilerAlreadyStopped, 8)                                                          \
    X(cudaErrorInvalidConfiguration, 9)                                                            \
    X(cudaErrorInvalidPitchValue, 12)                                                              \
    X(cudaErrorInvalidSymbol, 13)                                                                  \
    X(cudaErrorInvalidHostPointer, 16)                                                             \
    X(cudaErrorInvalidDevicePointer, 17)                                                           \
    X(cudaErrorInvalidTexture, 18)                                                                 \
    X(cudaErrorInvalidTextureBinding, 19)                                                          \
    X(cudaErrorInvalidChannelDescriptor, 20)                                                       \
    X(cudaErrorInvalidMemcpyDirection, 21)                                                         \
    X(cudaErrorAddressOfConstant, 22)                                                              \
    X(cudaErrorTextureFetchFailed, 23)                                                             \
    X(cudaErrorTextureNotBound, 24)                                                                \
    X(cudaErrorSynchronizationError, 25)                                                           \
    X(cudaErrorInvalidFilterSetting, 26)                                                           \
    X(cudaErrorInvalidNormSetting, 27)                                                             \
    X(cudaErrorMixedDeviceExecution, 28)                                                           \
    X(cudaErrorNotYetImplemented, 31)                                                              \
    X(cudaErrorMemoryValueTooLarge, 32)                                                            \
    X(cudaErrorStubLibrary, 34)                                                                    \
    X(cudaErrorInsufficientDriver, 35)                                                             \
    X(cudaErrorCallRequiresNewerDriver, 36)                                                        \
    X(cudaErrorInvalidSurface, 37)                                                                 \
    X(cudaErrorDuplicateVariableName, 43)                                                          \
    X(cudaErrorDuplicateTextureName, 44)                                                           \
    X(cudaErrorDuplicateSurfaceName, 45)                                                           \
    X(cudaErrorDevicesUnavailable, 46)                                                             \
    X(cudaErrorIncompatibleDriverContext, 49)                                                      \
    X(cudaErrorMissingConfiguration, 52)                                                           \
    X(cudaErrorPriorLaunchFailure, 53)                                                             \
    X(cudaErrorLaunchMaxDepthExceeded, 65)                                                         \
    X(cudaErrorLaunchFileScopedTex, 66)                                                            \
    X(cudaErrorLaunchFileScopedSurf, 67)                                                           \
    X(cudaErrorSyncDepthExceeded, 68)                                                              \
    X(cudaErrorLaunchPendingCountExceeded, 69)                                                     \
    X(cudaErrorInvalidDeviceFunction, 98)                                                          \
    X(cudaErrorNoDevice, 100)                                                                      \
    X(cudaErrorInvalidDevice, 101)                                                                 \
    X(cudaErrorDeviceNotLicensed, 102)                                                             \
    X(cudaErrorSoftwareValidityNotEstablished, 103)                                                \
    X(cudaErrorStartupFailure, 127)                                                                \
    X(cudaErrorInvalidKernelImage, 200)                                                            \
    X(cudaErrorDeviceUninitialized, 201)                                                           \
    X(cudaErrorMapBufferObjectFailed, 205)                                                         \
    X(cudaErrorUnmapBufferObjectFailed, 206)                                                       \
    X(cudaErrorArrayIsMapped, 207)                                                                 \
    X(cudaErrorAlreadyMapped, 208)                                                                 \
    X(cudaErrorNoKernelImageForDevice, 209)                                                        \
    X(cudaErrorAlreadyAcquired, 210)                                                               \
    X(cudaErrorNotMapped, 211)                                                                     \
    X(cudaErrorNotMappedAsArray, 212)                                                              \
    X(cudaErrorNotMappedAsPointer, 213)                                                            \
    X(cudaErrorECCUncorrectable, 214)                                                              \
    X(cudaErrorUnsupportedLimit, 215)                                                              \
    X(cudaErrorDeviceAlreadyInUse, 216)                                                            \
    X(cudaErrorPeerAccessUnsupported, 217)                                                         \
    X(cudaErrorInvalidPtx, 218)                                                                    \
    X(cudaErrorInvalidGraphicsContext, 219)                                                        \
    X(cudaErrorNvlinkUncorrectable, 220)                                                           \
    X(cudaErrorJitCompilerNotFound, 221)                                                           \
    X(cudaErrorUnsupportedPtxVersion, 222)                                                         \
    X(cudaErrorJitCompilationDisabled, 223)                                                        \
    X(cudaErrorUnsupportedExecAffinity, 224)                                                       \
    X(cudaErrorUnsupportedDevSideSync, 225)                                                        \
    X(cudaErrorContained, 226)                                                                     \
    X(cudaErrorInvalidSource, 300)                                                                 \
    X(cudaErrorFileNotFound, 301)                                                                  \
    X(cudaErrorSharedObjectSymbolNotFound, 302)                                                    \
    X(cudaErrorSharedObjectInitFailed, 303)                                                        \
    X(cudaErrorOperatingSystem, 304)                                                               \
    X(cudaErrorInvalidResourceHandle, 400)                                                         \
    X(cudaErrorIllegalState, 401)                                                                  \
    X(cudaErrorLossyQuery, 402)                                                                    \
    X(cudaErrorSymbolNotFound, 500)                                                                \
    X(cudaErrorNotReady, 600)                                                                      \
    X(cudaErrorIllegalAddress, 700)                                                                \
    X(cudaErrorLaunchOutOfResources, 701)                                                          \
    X(cudaErrorLaunchTimeout, 702)                                                                 \
    X(cudaErrorLaunchIncompatibleTexturing, 703)                                                   \
    X(cudaErrorPeerAccessAlreadyEnabled, 704)                                                      \
    X(cudaErrorPeerAccessNotEnabled, 705)                                                          \
    X(cudaErrorSetOnActiveProcess, 708)                                                            \
    X(cudaErrorContextIsDestroyed, 709)                                                            \
    X(cudaErrorAssert, 710)                                                                        \
    X(cudaErrorTooManyPeers, 711)                                                                  \
    X(cudaErrorHostMemoryAlreadyRegistered, 712)                                                   \
    X(cudaErrorHostMemoryNotRegistered, 713)                                                       \
    X(cudaErrorHardwareStackError, 714)                                                            \
    X(cudaErrorIllegalInstruction, 715)                                                            \
    X(cudaErrorMisalignedAddress, 716)                                                             \
    X(cudaErrorInvalidAddressSpace, 717)                                                           \
    X(cudaErrorInvalidPc, 718)                                                                     \
    X(cudaErrorLaunchFailure, 719)                                                                 \
    X(cudaErrorCooperativeLaunchTooLarge, 720)                                                     \
    X(cudaErrorTensorMemoryLeak, 721)                                                              \
    X(cudaErrorNotPermitted, 800)                                                                  \
    X(cudaErrorNotSupported, 801)                                                                  \
    X(cudaErrorSystemNotReady, 802)                                                                \
    X(cudaErrorSystemDriverMismatch, 803)                                                          \
    X(cudaErrorCompatNotSupportedOnDevice, 804)                                                    \
    X(cudaErrorMpsConnectionFailed, 805)                                                           \
    X(cudaErrorMpsRpcFailure, 806)                                                                 \
    X(cudaErrorMpsServerNotReady, 807)                                                             \
    X(cudaErrorMpsMaxClientsReached, 808)                                                          \
    X(cudaErrorMpsMaxConnectionsReached, 809)                                                      \
    X(cudaErrorMpsClientTerminated, 810)                                                           \
    X(cudaErrorCdpNotSupported, 811)                                                               \
    X(cudaErrorCdpVersionMismatch, 812)                                                            \
    X(cudaErrorStreamCaptureUnsupported, 900)                                                      \
    X(cudaErrorStreamCaptureInvalidated, 901)                                                      \
    X(cudaErrorStreamCaptureMerge, 902)                                                            \
    X(cudaErrorStreamCaptureUnmatched, 903)                                                        \
    X(cudaErrorStreamCaptureUnjoined, 904)                                                         \
    X(cudaErrorStreamCaptureIsolation, 905)                                                        \
    X(cudaErrorStreamCaptureImplicit, 906)                                                         \
    X(cudaErrorCapturedEvent, 907)                                                                 \
    X(cudaErrorStreamCaptureWrongThread, 908)                                                      \
    X(cudaErrorTimeout, 909)                                                                       \
    X(cudaErrorGraphExecUpdateFailure, 910)                                                        \
    X(cudaErrorExternalDevice, 911)                                                                \
    X(cudaErrorInvalidClusterSize, 912)                                                            \
    X(cudaErrorFunctionNotLoaded, 913)                                                             \
    X(cudaErrorInvalidResourceType, 914)                                                           \
    X(cudaErrorInvalidResourceConfiguration, 915)                                                  \
    X(cudaErrorUnknown, 999)

#define MEMPLACE_EMU_CUDA_DEVICE_ATTRS(X)                                                          \
    X(cudaDevAttrMaxThreadsPerBlock, 1)                                                            \
    X(cudaDevAttrMaxBlockDimX, 2)                                                                  \
    X(cudaDevAttrMaxBlockDimY, 3)                                                                  \
    X(cudaDevAttrMaxBlockDimZ, 4)                                                                  \
    X(cudaDevAttrMaxGridDimX, 5)                                                                   \
    X(cudaDevAttrMaxGridDimY, 6)                                                                   \
    X(cudaDevAttrMaxGridDimZ, 7)                                                                   \
    X(cudaDevAttrMaxSharedMemoryPerBlock, 8)                                                       \
    X(cudaDevAttrTotalConstantMemory, 9)                                                           \
    X(cudaDevAttrWarpSize, 10)                                                                     \
    X(cudaDevAttrMaxPitch, 11)                                                                     \
    X(cudaDevAttrMaxRegistersPerBlock, 12)                                                         \
    X(cudaDevAttrClockRate, 13)                                                                    \
    X(cudaDevAttrTextureAlignment, 14)                                                             \
    X(cudaDevAttrGpuOverlap, 15)                                                                   \
    X(cudaDevAttrMultiProcessorCount, 16)                                                          \
    X(cudaDevAttrKernelExecTimeout, 17)                                                            \
    X(cudaDevAttrIntegrated, 18)                                                                   \
    X(cudaDevAttrCanMapHostMemory, 19)                                                             \
    X(cudaDevAttrComputeMode, 20)                                                                  \
    X(cudaDevAttrMaxTexture1DWidth, 21)                                                            \
    X(cudaDevAttrMaxTexture2DWidth, 22)                                                            \
    X(cudaDevAttrMaxTexture2DHeight, 23)                                                           \
    X(cudaDevAttrMaxTexture3DWidth, 24)                                                            \
    X(cudaDevAttrMaxTexture3DHeight, 25)                                                           \
    X(cudaDevAttrMaxTexture3DDepth, 26)                                                            \
    X(cudaDevAttrMaxTexture2DLayeredWidth, 27)                                                     \
    X(cudaDevAttrMaxTexture2DLayeredHeight, 28)                                                    \
    X(cudaDevAttrMaxTexture2DLayeredLayers, 29)                                                    \
    X(cudaDevAttrSurfaceAlignment, 30)                                                             \
    X(cudaDevAttrConcurrentKernels, 31)                                                            \
    X(cudaDevAttrEccEnabled, 32)                                                                   \
    X(cudaDevAttrPciBusId, 33)                                                                     \
    X(cudaDevAttrPciDeviceId, 34)                                                                  \
    X(cudaDevAttrTccDriver, 35)                                                                    \
    X(cudaDevAttrMemoryClockRate, 36)                                                              \
    X(cudaDevAttrGlobalMemoryBusWidth, 37)                                                         \
    X(cudaDevAttrL2CacheSize, 38)                                                                  \
    X(cudaDevAttrMaxThreadsPerMultiProcessor, 39)                                                  \
    X(cudaDevAttrAsyncEngineCount, 40)                                                             \
    X(cudaDevAttrUnifiedAddressing, 41)                                                            \
    X(cudaDevAttrMaxTexture1DLayeredWidth, 42)                                                     \
    X(cudaDevAttrMaxTexture1DLayeredLayers, 43)                                                    \
    X(cudaDevAttrMaxTexture2DGatherWidth, 45)                                                      \
    X(cudaDevAttrMaxTexture2DGatherHeight, 46)                                                     \
    X(cudaDevAttrMaxTexture3DWidthAlt, 47)                                                         \
    X(cudaDevAttrMaxTexture3DHeightAlt, 48)                                                        \
    X(cudaDevAttrMaxTexture3DDepthAlt, 49)                                                         \
    X(cudaDevAttrPciDomainId, 50)                                                                  \
    X(cudaDevAttrTexturePitchAlignment, 51)                                                        \
    X(cudaDevAttrMaxTextureCubemapWidth, 52)                                                       \
    X(cudaDevAttrMaxTextureCubemapLayeredWidth, 53)                                                \
    X(cudaDevAttrMaxTextureCubemapLayeredLayers, 54)                                               \
    X(cudaDevAttrMaxSurface1DWidth, 55)                                                            \
    X(cudaDevAttrMaxSurface2DWidth, 56)                                                            \
    X(cudaDevAttrMaxSurface2DHeight, 57)                                                           \
    X(cudaDevAttrMaxSurface3DWidth, 58)                                                            \
    X(cudaDevAttrMaxSurface3DHeight, 59)                                                           \
    X(cudaDevAttrMaxSurface3DDepth, 60)                                                            \
    X(cudaDevAttrMaxSurface1DLayeredWidth, 61)                                                     \
    X(cudaDevAttrMaxSurface1DLayeredLayers, 62)                                                    \
    X(cudaDevAttrMaxSurface2DLayeredWidth, 63)                                                     \
    X(cudaDevAttrMaxSurface2DLayeredHeight, 64)                                                    \
    X(cudaDevAttrMaxSurface2DLayeredLayers, 65)                                                    \
    X(cudaDevAttrMaxSurfaceCubemapWidth, 66)                                                       \
    X(cudaDevAttrMaxSurfaceCubemapLayeredWidth, 67)                                                \
    X(cudaDevAttrMaxSurfaceCubemapLayeredLayers, 68)                                               \
    X(cudaDevAttrMaxTexture1DLinearWidth, 69)                                                      \
    X(cudaDevAttrMaxTexture2DLinearWidth, 70)                                                      \
    X(cudaDevAttrMaxTexture2DLinearHeight, 71)                                                     \
    X(cudaDevAttrMaxTexture2DLinearPitch, 72)                                                      \
    X(cudaDevAttrMaxTexture2DMipmappedWidth, 73)                                                   \
    X(cudaDevAttrMaxTexture2DMipmappedHeight, 74)                                                  \
    X(cudaDevAttrComputeCapabilityMajor, 75)                                                       \
    X(cudaDevAttrComputeCapabilityMinor, 76)                                                       \
    X(cudaDevAttrMaxTexture1DMipmappedWidth, 77)                                                   \
    X(cudaDevAttrStreamPrioritiesSupported, 78)                                                    \
    X(cudaDevAttrGlobalL1CacheSupported, 79)                                                       \
    X(cudaDevAttrLocalL1CacheSupported, 80)                                                        \
    X(cudaDevAttrMaxSharedMemoryPerMultiprocessor, 81)                                             \
    X(cudaDevAttrMaxRegistersPerMultiprocessor, 82)                                                \
    X(cudaDevAttrManagedMemory, 83)                                                                \
    X(cudaDevAttrIsMultiGpuBoard, 84)                                                              \
    X(cudaDevAttrMultiGpuBoardGroupID, 85)                                                         \
    X(cudaDevAttrHostNativeAtomicSupported, 86)                                                    \
    X(cudaDevAttrSingleToDoublePrecisionPerfRatio, 87)                                             \
    X(cudaDevAttrPageableMemoryAccess, 88)                                                         \
    X(cudaDevAttrConcurrentManagedAccess, 89)                                                      \
    X(cudaDevAttrComputePreemptionSupported, 90)                                                   \
    X(cudaDevAttrCanUseHostPointerForRegisteredMem, 91)                                            \
    X(cudaDevAttrReserved92, 92)                                                                   \
    X(cudaDevAttrReserved93, 93)                                                                   \
    X(cudaDevAttrReserved94, 94)                                                                   \
    X(cudaDevAttrCooperativeLaunch, 95)                                                            \
    X(cudaDevAttrReserved96, 96)                                                                   \
    X(cudaDevAttrMaxSharedMemoryPerBlockOptin, 97)                                                 \
    X(cudaDevAttrCanFlushRemoteWrites, 98)                                                         \
    X(cudaDevAttrHostRegisterSupported, 99)                                                        \
    X(cudaDevAttrPageableMemoryAccessUsesHostPageTables, 100)                                      \
    X(cudaDevAttrDirectManagedMemAccessFromHost, 101)                                              \
    X(cudaDevAttrMaxBlocksPerMultiprocessor, 106)                                                  \
    X(cudaDevAttrMaxPersistingL2CacheSize, 108)                                                    \
    X(cudaDevAttrMaxAccessPolicyWindowSize, 109)                                                   \
    X(cudaDevAttrReservedSharedMemoryPerBlock, 111)                                                \
    X(cudaDevAttrSparseCudaArraySupported, 112)                                                    \
    X(cudaDevAttrHostRegisterReadOnlySupported, 113)                                               \
    X(cudaDevAttrTimelineSemaphoreInteropSupported, 114)                                           \
    X(cudaDevAttrMemoryPoolsSupported, 115)                                                        \
    X(cudaDevAttrGPUDirectRDMASupported, 116)                                                      \
    X(cudaDevAttrGPUDirectRDMAFlushWritesOptions, 117)                                             \
    X(cudaDevAttrGPUDirectRDMAWritesOrdering, 118)                                                 \
    X(cudaDevAttrMemoryPoolSupportedHandleTypes, 119)                                              \
    X(cudaDevAttrClusterLaunch, 120)                                                               \
    X(cudaDevAttrDeferredMappingCudaArraySupported, 121)                                           \
    X(cudaDevAttrReserved122, 122)                                                                 \
    X(cudaDevAttrReserved123, 123)                                                                 \
    X(cudaDevAttrReserved124, 124)                                                                 \
    X(cudaDevAttrIpcEventSupport, 125)                                                             \
    X(cudaDevAttrMemSyncDomainCount, 126)                                                          \
    X(cudaDevAttrReserved127, 127)                                                                 \
    X(cudaDevAttrReserved128, 128)                                                                 \
    X(cudaDevAttrReserved129, 129)                                                                 \
    X(cudaDevAttrNumaConfig, 130)                                                                  \
    X(cudaDevAttrNumaId, 131)                                                                      \
    X(cudaDevAttrReserved132, 132)                                                                 \
    X(cudaDevAttrMpsEnabled, 133)                                                                  \
    X(cudaDevAttrHostNumaId, 134)                                                                  \
    X(cudaDevAttrD3D12CigSupported, 135)                                                           \
    X(cudaDevAttrVulkanCigSupported, 138)                                                          \
    X(cudaDevAttrGpuPciDeviceId, 139)                                                              \
    X(cudaDevAttrGpuPciSubsystemId, 140)                                                           \
    X(cudaDevAttrReserved141, 141)                                                                 \
    X(cudaDevAttrHostNumaMemoryPoolsSupported, 142)                                                \
    X(cudaDevAttrHostNumaMultinodeIpcSupported, 143)                                               \
    X(cudaDevAttrHostMemoryPoolsSupported, 144)                                                    \
    X(cudaDevAttrReserved145, 145)                                                                 \
    X(cudaDevAttrOnlyPartialHostNativeAtomicSupported, 147)

#define MEMPLACE_EMU_ENUMERATOR(name, value) name = value,
enum cudaError { MEMPLACE_EMU_CUDA_ERRORS(MEMPLACE_EMU_ENUMERATOR) };
typedef enum cudaError cudaError_t;

enum cudaDeviceAttr { MEMPLACE_EMU_CUDA_DEVICE_ATTRS(MEMPLACE_EMU_ENUMERATOR) };
#undef MEMPLACE_EMU_ENUMERATOR

namespace memplace::emu::detail {
#define MEMPLACE_EMU_NAME_CASE(name, value)                                                        \
    case value:                                                                                    \
        return #name;
/// The enumerator's name, or nullptr for a number that is none of them.
inline const char* errorName(int e) {
    switch (e) {
        MEMPLACE_EMU_CUDA_ERRORS(MEMPLACE_EMU_NAME_CASE)
    default:
        return nullptr;
    }
}
inline const char* deviceAttrName(int a) {
    switch (a) {
        MEMPLACE_EMU_CUDA_DEVICE_ATTRS(MEMPLACE_EMU_NAME_CASE)
    default:
        return nullptr;
    }
}
#undef MEMPLACE_EMU_NAME_CASE
} // namespace memplace::emu::detail

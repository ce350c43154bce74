// Generated from the names and numbers of CUDA 13's cudaError and cudaDeviceAttr enumerations.
#pragma once

enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorCudartUnloading = 4,
    cudaErrorProfilerDisabled = 5,
    cudaErrorProfilerNotInitialized = 6,
    cudaErrorProfilerAlreadyStarted = 7,
    cudaErrorProfilerAlreadyStopped = 8,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidPitchValue = 12,
    cudaErrorInvalidSymbol = 13,
    cudaErrorInvalidHostPointer = 16,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidTexture = 18,
    cudaErrorInvalidTextureBinding = 19,
    cudaErrorInvalidChannelDescriptor = 20,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorAddressOfConstant = 22,
    cudaErrorTextureFetchFailed = 23,
    cudaErrorTextureNotBound = 24,
    cudaErrorSynchronizationError = 25,
    cudaErrorInvalidFilterSetting = 26,
    cudaErrorInvalidNormSetting = 27,
    cudaErrorMixedDeviceExecution = 28,
    cudaErrorNotYetImplemented = 31,
    cudaErrorMemoryValueTooLarge = 32,
    cudaErrorStubLibrary = 34,
    cudaErrorInsufficientDriver = 35,
    cudaErrorCallRequiresNewerDriver = 36,
    cudaErrorInvalidSurface = 37,
    cudaErrorDuplicateVariableName = 43,
    cudaErrorDuplicateTextureName = 44,
    cudaErrorDuplicateSurfaceName = 45,
    cudaErrorDevicesUnavailable = 46,
    cudaErrorIncompatibleDriverContext = 49,
    cudaErrorMissingConfiguration = 52,
    cudaErrorPriorLaunchFailure = 53,
    cudaErrorLaunchMaxDepthExceeded = 65,
    cudaErrorLaunchFileScopedTex = 66,
    cudaErrorLaunchFileScopedSurf = 67,
    cudaErrorSyncDepthExceeded = 68,
    cudaErrorLaunchPendingCountExceeded = 69,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorDeviceNotLicensed = 102,
    cudaErrorSoftwareValidityNotEstablished = 103,
    cudaErrorStartupFailure = 127,
    cudaErrorInvalidKernelImage = 200,
    cudaErrorDeviceUninitialized = 201,
    cudaErrorMapBufferObjectFailed = 205,
    cudaErrorUnmapBufferObjectFailed = 206,
    cudaErrorArrayIsMapped = 207,
    cudaErrorAlreadyMapped = 208,
    cudaErrorNoKernelImageForDevice = 209,
    cudaErrorAlreadyAcquired = 210,
    cudaErrorNotMapped = 211,
    cudaErrorNotMappedAsArray = 212,
    cudaErrorNotMappedAsPointer = 213,
    cudaErrorECCUncorrectable = 214,
    cudaErrorUnsupportedLimit = 215,
    cudaErrorDeviceAlreadyInUse = 216,
    cudaErrorPeerAccessUnsupported = 217,
    cudaErrorInvalidPtx = 218,
    cudaErrorInvalidGraphicsContext = 219,
    cudaErrorNvlinkUncorrectable = 220,
    cudaErrorJitCompilerNotFound = 221,
    cudaErrorUnsupportedPtxVersion = 222,
    cudaErrorJitCompilationDisabled = 223,
    cudaErrorUnsupportedExecAffinity = 224,
    cudaErrorUnsupportedDevSideSync = 225,
    cudaErrorContained = 226,
    cudaErrorInvalidSource = 300,
    cudaErrorFileNotFound = 301,
    cudaErrorSharedObjectSymbolNotFound = 302,
    cudaErrorSharedObjectInitFailed = 303,
    cudaErrorOperatingSystem = 304,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorIllegalState = 401,
    cudaErrorLossyQuery = 402,
    cudaErrorSymbolNotFound = 500,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchOutOfResources = 701,
    cudaErrorLaunchTimeout = 702,
    cudaErrorLaunchIncompatibleTexturing = 703,
    cudaErrorPeerAccessAlreadyEnabled = 704,
    cudaErrorPeerAccessNotEnabled = 705,
    cudaErrorSetOnActiveProcess = 708,
    cudaErrorContextIsDestroyed = 709,
    cudaErrorAssert = 710,
    cudaErrorTooManyPeers = 711,
    cudaErrorHostMemoryAlreadyRegistered = 712,
    cudaErrorHostMemoryNotRegistered = 713,
    cudaErrorHardwareStackError = 714,
    cudaErrorIllegalInstruction = 715,
    cudaErrorMisalignedAddress = 716,
    cudaErrorInvalidAddressSpace = 717,
    cudaErrorInvalidPc = 718,
    cudaErrorLaunchFailure = 719,
    cudaErrorCooperativeLaunchTooLarge = 720,
    cudaErrorTensorMemoryLeak = 721,
    cudaErrorNotPermitted = 800,
    cudaErrorNotSupported = 801,
    cudaErrorSystemNotReady = 802,
    cudaErrorSystemDriverMismatch = 803,
    cudaErrorCompatNotSupportedOnDevice = 804,
    cudaErrorMpsConnectionFailed = 805,
    cudaErrorMpsRpcFailure = 806,
    cudaErrorMpsServerNotReady = 807,
    cudaErrorMpsMaxClientsReached = 808,
    cudaErrorMpsMaxConnectionsReached = 809,
    cudaErrorMpsClientTerminated = 810,
    cudaErrorCdpNotSupported = 811,
    cudaErrorCdpVersionMismatch = 812,
    cudaErrorStreamCaptureUnsupported = 900,
    cudaErrorStreamCaptureInvalidated = 901,
    cudaErrorStreamCaptureMerge = 902,
    cudaErrorStreamCaptureUnmatched = 903,
    cudaErrorStreamCaptureUnjoined = 904,
    cudaErrorStreamCaptureIsolation = 905,
    cudaErrorStreamCaptureImplicit = 906,
    cudaErrorCapturedEvent = 907,
    cudaErrorStreamCaptureWrongThread = 908,
    cudaErrorTimeout = 909,
    cudaErrorGraphExecUpdateFailure = 910,
    cudaErrorExternalDevice = 911,
    cudaErrorInvalidClusterSize = 912,
    cudaErrorFunctionNotLoaded = 913,
    cudaErrorInvalidResourceType = 914,
    cudaErrorInvalidResourceConfiguration = 915,
    cudaErrorUnknown = 999,
};
typedef enum cudaError cudaError_t;

enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock = 1,
    cudaDevAttrMaxBlockDimX = 2,
    cudaDevAttrMaxBlockDimY = 3,
    cudaDevAttrMaxBlockDimZ = 4,
    cudaDevAttrMaxGridDimX = 5,
    cudaDevAttrMaxGridDimY = 6,
    cudaDevAttrMaxGridDimZ = 7,
    cudaDevAttrMaxSharedMemoryPerBlock = 8,
    cudaDevAttrTotalConstantMemory = 9,
    cudaDevAttrWarpSize = 10,
    cudaDevAttrMaxPitch = 11,
    cudaDevAttrMaxRegistersPerBlock = 12,
    cudaDevAttrClockRate = 13,
    cudaDevAttrTextureAlignment = 14,
    cudaDevAttrGpuOverlap = 15,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrKernelExecTimeout = 17,
    cudaDevAttrIntegrated = 18,
    cudaDevAttrCanMapHostMemory = 19,
    cudaDevAttrComputeMode = 20,
    cudaDevAttrMaxTexture1DWidth = 21,
    cudaDevAttrMaxTexture2DWidth = 22,
    cudaDevAttrMaxTexture2DHeight = 23,
    cudaDevAttrMaxTexture3DWidth = 24,
    cudaDevAttrMaxTexture3DHeight = 25,
    cudaDevAttrMaxTexture3DDepth = 26,
    cudaDevAttrMaxTexture2DLayeredWidth = 27,
    cudaDevAttrMaxTexture2DLayeredHeight = 28,
    cudaDevAttrMaxTexture2DLayeredLayers = 29,
    cudaDevAttrSurfaceAlignment = 30,
    cudaDevAttrConcurrentKernels = 31,
    cudaDevAttrEccEnabled = 32,
    cudaDevAttrPciBusId = 33,
    cudaDevAttrPciDeviceId = 34,
    cudaDevAttrTccDriver = 35,
    cudaDevAttrMemoryClockRate = 36,
    cudaDevAttrGlobalMemoryBusWidth = 37,
    cudaDevAttrL2CacheSize = 38,
    cudaDevAttrMaxThreadsPerMultiProcessor = 39,
    cudaDevAttrAsyncEngineCount = 40,
    cudaDevAttrUnifiedAddressing = 41,
    cudaDevAttrMaxTexture1DLayeredWidth = 42,
    cudaDevAttrMaxTexture1DLayeredLayers = 43,
    cudaDevAttrMaxTexture2DGatherWidth = 45,
    cudaDevAttrMaxTexture2DGatherHeight = 46,
    cudaDevAttrMaxTexture3DWidthAlt = 47,
    cudaDevAttrMaxTexture3DHeightAlt = 48,
    cudaDevAttrMaxTexture3DDepthAlt = 49,
    cudaDevAttrPciDomainId = 50,
    cudaDevAttrTexturePitchAlignment = 51,
    cudaDevAttrMaxTextureCubemapWidth = 52,
    cudaDevAttrMaxTextureCubemapLayeredWidth = 53,
    cudaDevAttrMaxTextureCubemapLayeredLayers = 54,
    cudaDevAttrMaxSurface1DWidth = 55,
    cudaDevAttrMaxSurface2DWidth = 56,
    cudaDevAttrMaxSurface2DHeight = 57,
    cudaDevAttrMaxSurface3DWidth = 58,
    cudaDevAttrMaxSurface3DHeight = 59,
    cudaDevAttrMaxSurface3DDepth = 60,
    cudaDevAttrMaxSurface1DLayeredWidth = 61,
    cudaDevAttrMaxSurface1DLayeredLayers = 62,
    cudaDevAttrMaxSurface2DLayeredWidth = 63,
    cudaDevAttrMaxSurface2DLayeredHeight = 64,
    cudaDevAttrMaxSurface2DLayeredLayers = 65,
    cudaDevAttrMaxSurfaceCubemapWidth = 66,
    cudaDevAttrMaxSurfaceCubemapLayeredWidth = 67,
    cudaDevAttrMaxSurfaceCubemapLayeredLayers = 68,
    cudaDevAttrMaxTexture1DLinearWidth = 69,
    cudaDevAttrMaxTexture2DLinearWidth = 70,
    cudaDevAttrMaxTexture2DLinearHeight = 71,
    cudaDevAttrMaxTexture2DLinearPitch = 72,
    cudaDevAttrMaxTexture2DMipmappedWidth = 73,
    cudaDevAttrMaxTexture2DMipmappedHeight = 74,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
    cudaDevAttrMaxTexture1DMipmappedWidth = 77,
    cudaDevAttrStreamPrioritiesSupported = 78,
    cudaDevAttrGlobalL1CacheSupported = 79,
    cudaDevAttrLocalL1CacheSupported = 80,
    cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
    cudaDevAttrMaxRegistersPerMultiprocessor = 82,
    cudaDevAttrManagedMemory = 83,
    cudaDevAttrIsMultiGpuBoard = 84,
    cudaDevAttrMultiGpuBoardGroupID = 85,
    cudaDevAttrHostNativeAtomicSupported = 86,
    cudaDevAttrSingleToDoublePrecisionPerfRatio = 87,
    cudaDevAttrPageableMemoryAccess = 88,
    cudaDevAttrConcurrentManagedAccess = 89,
    cudaDevAttrComputePreemptionSupported = 90,
    cudaDevAttrCanUseHostPointerForRegisteredMem = 91,
    cudaDevAttrReserved92 = 92,
    cudaDevAttrReserved93 = 93,
    cudaDevAttrReserved94 = 94,
    cudaDevAttrCooperativeLaunch = 95,
    cudaDevAttrReserved96 = 96,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
    cudaDevAttrCanFlushRemoteWrites = 98,
    cudaDevAttrHostRegisterSupported = 99,
    cudaDevAttrPageableMemoryAccessUsesHostPageTables = 100,
    cudaDevAttrDirectManagedMemAccessFromHost = 101,
    cudaDevAttrMaxBlocksPerMultiprocessor = 106,
    cudaDevAttrMaxPersistingL2CacheSize = 108,
    cudaDevAttrMaxAccessPolicyWindowSize = 109,
    cudaDevAttrReservedSharedMemoryPerBlock = 111,
    cudaDevAttrSparseCudaArraySupported = 112,
    cudaDevAttrHostRegisterReadOnlySupported = 113,
    cudaDevAttrTimelineSemaphoreInteropSupported = 114,
    cudaDevAttrMemoryPoolsSupported = 115,
    cudaDevAttrGPUDirectRDMASupported = 116,
    cudaDevAttrGPUDirectRDMAFlushWritesOptions = 117,
    cudaDevAttrGPUDirectRDMAWritesOrdering = 118,
    cudaDevAttrMemoryPoolSupportedHandleTypes = 119,
    cudaDevAttrClusterLaunch = 120,
    cudaDevAttrDeferredMappingCudaArraySupported = 121,
    cudaDevAttrReserved122 = 122,
    cudaDevAttrReserved123 = 123,
    cudaDevAttrReserved124 = 124,
    cudaDevAttrIpcEventSupport = 125,
    cudaDevAttrMemSyncDomainCount = 126,
    cudaDevAttrReserved127 = 127,
    cudaDevAttrReserved128 = 128,
    cudaDevAttrReserved129 = 129,
    cudaDevAttrNumaConfig = 130,
    cudaDevAttrNumaId = 131,
    cudaDevAttrReserved132 = 132,
    cudaDevAttrMpsEnabled = 133,
    cudaDevAttrHostNumaId = 134,
    cudaDevAttrD3D12CigSupported = 135,
    cudaDevAttrVulkanCigSupported = 138,
    cudaDevAttrGpuPciDeviceId = 139,
    cudaDevAttrGpuPciSubsystemId = 140,
    cudaDevAttrReserved141 = 141,
    cudaDevAttrHostNumaMemoryPoolsSupported = 142,
    cudaDevAttrHostNumaMultinodeIpcSupported = 143,
    cudaDevAttrHostMemoryPoolsSupported = 144,
    cudaDevAttrReserved145 = 145,
    cudaDevAttrOnlyPartialHostNativeAtomicSupported = 147,
};

namespace memplace::emu::detail {
/// The enumerator's name, or nullptr for a number that is none of them.
inline const char* errorName(int e) {
    switch (e) {
    case 0:
        return "cudaSuccess";
    case 1:
        return "cudaErrorInvalidValue";
    case 2:
        return "cudaErrorMemoryAllocation";
    case 3:
        return "cudaErrorInitializationError";
    case 4:
        return "cudaErrorCudartUnloading";
    case 5:
        return "cudaErrorProfilerDisabled";
    case 6:
        return "cudaErrorProfilerNotInitialized";
    case 7:
        return "cudaErrorProfilerAlreadyStarted";
    case 8:
        return "cudaErrorProfilerAlreadyStopped";
    case 9:
        return "cudaErrorInvalidConfiguration";
    case 12:
        return "cudaErrorInvalidPitchValue";
    case 13:
        return "cudaErrorInvalidSymbol";
    case 16:
        return "cudaErrorInvalidHostPointer";
    case 17:
        return "cudaErrorInvalidDevicePointer";
    case 18:
        return "cudaErrorInvalidTexture";
    case 19:
        return "cudaErrorInvalidTextureBinding";
    case 20:
        return "cudaErrorInvalidChannelDescriptor";
    case 21:
        return "cudaErrorInvalidMemcpyDirection";
    case 22:
        return "cudaErrorAddressOfConstant";
    case 23:
        return "cudaErrorTextureFetchFailed";
    case 24:
        return "cudaErrorTextureNotBound";
    case 25:
        return "cudaErrorSynchronizationError";
    case 26:
        return "cudaErrorInvalidFilterSetting";
    case 27:
        return "cudaErrorInvalidNormSetting";
    case 28:
        return "cudaErrorMixedDeviceExecution";
    case 31:
        return "cudaErrorNotYetImplemented";
    case 32:
        return "cudaErrorMemoryValueTooLarge";
    case 34:
        return "cudaErrorStubLibrary";
    case 35:
        return "cudaErrorInsufficientDriver";
    case 36:
        return "cudaErrorCallRequiresNewerDriver";
    case 37:
        return "cudaErrorInvalidSurface";
    case 43:
        return "cudaErrorDuplicateVariableName";
    case 44:
        return "cudaErrorDuplicateTextureName";
    case 45:
        return "cudaErrorDuplicateSurfaceName";
    case 46:
        return "cudaErrorDevicesUnavailable";
    case 49:
        return "cudaErrorIncompatibleDriverContext";
    case 52:
        return "cudaErrorMissingConfiguration";
    case 53:
        return "cudaErrorPriorLaunchFailure";
    case 65:
        return "cudaErrorLaunchMaxDepthExceeded";
    case 66:
        return "cudaErrorLaunchFileScopedTex";
    case 67:
        return "cudaErrorLaunchFileScopedSurf";
    case 68:
        return "cudaErrorSyncDepthExceeded";
    case 69:
        return "cudaErrorLaunchPendingCountExceeded";
    case 98:
        return "cudaErrorInvalidDeviceFunction";
    case 100:
        return "cudaErrorNoDevice";
    case 101:
        return "cudaErrorInvalidDevice";
    case 102:
        return "cudaErrorDeviceNotLicensed";
    case 103:
        return "cudaErrorSoftwareValidityNotEstablished";
    case 127:
        return "cudaErrorStartupFailure";
    case 200:
        return "cudaErrorInvalidKernelImage";
    case 201:
        return "cudaErrorDeviceUninitialized";
    case 205:
        return "cudaErrorMapBufferObjectFailed";
    case 206:
        return "cudaErrorUnmapBufferObjectFailed";
    case 207:
        return "cudaErrorArrayIsMapped";
    case 208:
        return "cudaErrorAlreadyMapped";
    case 209:
        return "cudaErrorNoKernelImageForDevice";
    case 210:
        return "cudaErrorAlreadyAcquired";
    case 211:
        return "cudaErrorNotMapped";
    case 212:
        return "cudaErrorNotMappedAsArray";
    case 213:
        return "cudaErrorNotMappedAsPointer";
    case 214:
        return "cudaErrorECCUncorrectable";
    case 215:
        return "cudaErrorUnsupportedLimit";
    case 216:
        return "cudaErrorDeviceAlreadyInUse";
    case 217:
        return "cudaErrorPeerAccessUnsupported";
    case 218:
        return "cudaErrorInvalidPtx";
    case 219:
        return "cudaErrorInvalidGraphicsContext";
    case 220:
        return "cudaErrorNvlinkUncorrectable";
    case 221:
        return "cudaErrorJitCompilerNotFound";
    case 222:
        return "cudaErrorUnsupportedPtxVersion";
    case 223:
        return "cudaErrorJitCompilationDisabled";
    case 224:
        return "cudaErrorUnsupportedExecAffinity";
    case 225:
        return "cudaErrorUnsupportedDevSideSync";
    case 226:
        return "cudaErrorContained";
    case 300:
        return "cudaErrorInvalidSource";
    case 301:
        return "cudaErrorFileNotFound";
    case 302:
        return "cudaErrorSharedObjectSymbolNotFound";
    case 303:
        return "cudaErrorSharedObjectInitFailed";
    case 304:
        return "cudaErrorOperatingSystem";
    case 400:
        return "cudaErrorInvalidResourceHandle";
    case 401:
        return "cudaErrorIllegalState";
    case 402:
        return "cudaErrorLossyQuery";
    case 500:
        return "cudaErrorSymbolNotFound";
    case 600:
        return "cudaErrorNotReady";
    case 700:
        return "cudaErrorIllegalAddress";
    case 701:
        return "cudaErrorLaunchOutOfResources";
    case 702:
        return "cudaErrorLaunchTimeout";
    case 703:
        return "cudaErrorLaunchIncompatibleTexturing";
    case 704:
        return "cudaErrorPeerAccessAlreadyEnabled";
    case 705:
        return "cudaErrorPeerAccessNotEnabled";
    case 708:
        return "cudaErrorSetOnActiveProcess";
    case 709:
        return "cudaErrorContextIsDestroyed";
    case 710:
        return "cudaErrorAssert";
    case 711:
        return "cudaErrorTooManyPeers";
    case 712:
        return "cudaErrorHostMemoryAlreadyRegistered";
    case 713:
        return "cudaErrorHostMemoryNotRegistered";
    case 714:
        return "cudaErrorHardwareStackError";
    case 715:
        return "cudaErrorIllegalInstruction";
    case 716:
        return "cudaErrorMisalignedAddress";
    case 717:
        return "cudaErrorInvalidAddressSpace";
    case 718:
        return "cudaErrorInvalidPc";
    case 719:
        return "cudaErrorLaunchFailure";
    case 720:
        return "cudaErrorCooperativeLaunchTooLarge";
    case 721:
        return "cudaErrorTensorMemoryLeak";
    case 800:
        return "cudaErrorNotPermitted";
    case 801:
        return "cudaErrorNotSupported";
    case 802:
        return "cudaErrorSystemNotReady";
    case 803:
        return "cudaErrorSystemDriverMismatch";
    case 804:
        return "cudaErrorCompatNotSupportedOnDevice";
    case 805:
        return "cudaErrorMpsConnectionFailed";
    case 806:
        return "cudaErrorMpsRpcFailure";
    case 807:
        return "cudaErrorMpsServerNotReady";
    case 808:
        return "cudaErrorMpsMaxClientsReached";
    case 809:
        return "cudaErrorMpsMaxConnectionsReached";
    case 810:
        return "cudaErrorMpsClientTerminated";
    case 811:
        return "cudaErrorCdpNotSupported";
    case 812:
        return "cudaErrorCdpVersionMismatch";
    case 900:
        return "cudaErrorStreamCaptureUnsupported";
    case 901:
        return "cudaErrorStreamCaptureInvalidated";
    case 902:
        return "cudaErrorStreamCaptureMerge";
    case 903:
        return "cudaErrorStreamCaptureUnmatched";
    case 904:
        return "cudaErrorStreamCaptureUnjoined";
    case 905:
        return "cudaErrorStreamCaptureIsolation";
    case 906:
        return "cudaErrorStreamCaptureImplicit";
    case 907:
        return "cudaErrorCapturedEvent";
    case 908:
        return "cudaErrorStreamCaptureWrongThread";
    case 909:
        return "cudaErrorTimeout";
    case 910:
        return "cudaErrorGraphExecUpdateFailure";
    case 911:
        return "cudaErrorExternalDevice";
    case 912:
        return "cudaErrorInvalidClusterSize";
    case 913:
        return "cudaErrorFunctionNotLoaded";
    case 914:
        return "cudaErrorInvalidResourceType";
    case 915:
        return "cudaErrorInvalidResourceConfiguration";
    case 999:
        return "cudaErrorUnknown";
    default:
        return nullptr;
    }
}
inline const char* deviceAttrName(int a) {
    switch (a) {
    case 1:
        return "cudaDevAttrMaxThreadsPerBlock";
    case 2:
        return "cudaDevAttrMaxBlockDimX";
    case 3:
        return "cudaDevAttrMaxBlockDimY";
    case 4:
        return "cudaDevAttrMaxBlockDimZ";
    case 5:
        return "cudaDevAttrMaxGridDimX";
    case 6:
        return "cudaDevAttrMaxGridDimY";
    case 7:
        return "cudaDevAttrMaxGridDimZ";
    case 8:
        return "cudaDevAttrMaxSharedMemoryPerBlock";
    case 9:
        return "cudaDevAttrTotalConstantMemory";
    case 10:
        return "cudaDevAttrWarpSize";
    case 11:
        return "cudaDevAttrMaxPitch";
    case 12:
        return "cudaDevAttrMaxRegistersPerBlock";
    case 13:
        return "cudaDevAttrClockRate";
    case 14:
        return "cudaDevAttrTextureAlignment";
    case 15:
        return "cudaDevAttrGpuOverlap";
    case 16:
        return "cudaDevAttrMultiProcessorCount";
    case 17:
        return "cudaDevAttrKernelExecTimeout";
    case 18:
        return "cudaDevAttrIntegrated";
    case 19:
        return "cudaDevAttrCanMapHostMemory";
    case 20:
        return "cudaDevAttrComputeMode";
    case 21:
        return "cudaDevAttrMaxTexture1DWidth";
    case 22:
        return "cudaDevAttrMaxTexture2DWidth";
    case 23:
        return "cudaDevAttrMaxTexture2DHeight";
    case 24:
        return "cudaDevAttrMaxTexture3DWidth";
    case 25:
        return "cudaDevAttrMaxTexture3DHeight";
    case 26:
        return "cudaDevAttrMaxTexture3DDepth";
    case 27:
        return "cudaDevAttrMaxTexture2DLayeredWidth";
    case 28:
        return "cudaDevAttrMaxTexture2DLayeredHeight";
    case 29:
        return "cudaDevAttrMaxTexture2DLayeredLayers";
    case 30:
        return "cudaDevAttrSurfaceAlignment";
    case 31:
        return "cudaDevAttrConcurrentKernels";
    case 32:
        return "cudaDevAttrEccEnabled";
    case 33:
        return "cudaDevAttrPciBusId";
    case 34:
        return "cudaDevAttrPciDeviceId";
    case 35:
        return "cudaDevAttrTccDriver";
    case 36:
        return "cudaDevAttrMemoryClockRate";
    case 37:
        return "cudaDevAttrGlobalMemoryBusWidth";
    case 38:
        return "cudaDevAttrL2CacheSize";
    case 39:
        return "cudaDevAttrMaxThreadsPerMultiProcessor";
    case 40:
        return "cudaDevAttrAsyncEngineCount";
    case 41:
        return "cudaDevAttrUnifiedAddressing";
    case 42:
        return "cudaDevAttrMaxTexture1DLayeredWidth";
    case 43:
        return "cudaDevAttrMaxTexture1DLayeredLayers";
    case 45:
        return "cudaDevAttrMaxTexture2DGatherWidth";
    case 46:
        return "cudaDevAttrMaxTexture2DGatherHeight";
    case 47:
        return "cudaDevAttrMaxTexture3DWidthAlt";
    case 48:
        return "cudaDevAttrMaxTexture3DHeightAlt";
    case 49:
        return "cudaDevAttrMaxTexture3DDepthAlt";
    case 50:
        return "cudaDevAttrPciDomainId";
    case 51:
        return "cudaDevAttrTexturePitchAlignment";
    case 52:
        return "cudaDevAttrMaxTextureCubemapWidth";
    case 53:
        return "cudaDevAttrMaxTextureCubemapLayeredWidth";
    case 54:
        return "cudaDevAttrMaxTextureCubemapLayeredLayers";
    case 55:
        return "cudaDevAttrMaxSurface1DWidth";
    case 56:
        return "cudaDevAttrMaxSurface2DWidth";
    case 57:
        return "cudaDevAttrMaxSurface2DHeight";
    case 58:
        return "cudaDevAttrMaxSurface3DWidth";
    case 59:
        return "cudaDevAttrMaxSurface3DHeight";
    case 60:
        return "cudaDevAttrMaxSurface3DDepth";
    case 61:
        return "cudaDevAttrMaxSurface1DLayeredWidth";
    case 62:
        return "cudaDevAttrMaxSurface1DLayeredLayers";
    case 63:
        return "cudaDevAttrMaxSurface2DLayeredWidth";
    case 64:
        return "cudaDevAttrMaxSurface2DLayeredHeight";
    case 65:
        return "cudaDevAttrMaxSurface2DLayeredLayers";
    case 66:
        return "cudaDevAttrMaxSurfaceCubemapWidth";
    case 67:
        return "cudaDevAttrMaxSurfaceCubemapLayeredWidth";
    case 68:
        return "cudaDevAttrMaxSurfaceCubemapLayeredLayers";
    case 69:
        return "cudaDevAttrMaxTexture1DLinearWidth";
    case 70:
        return "cudaDevAttrMaxTexture2DLinearWidth";
    case 71:
        return "cudaDevAttrMaxTexture2DLinearHeight";
    case 72:
        return "cudaDevAttrMaxTexture2DLinearPitch";
    case 73:
        return "cudaDevAttrMaxTexture2DMipmappedWidth";
    case 74:
        return "cudaDevAttrMaxTexture2DMipmappedHeight";
    case 75:
        return "cudaDevAttrComputeCapabilityMajor";
    case 76:
        return "cudaDevAttrComputeCapabilityMinor";
    case 77:
        return "cudaDevAttrMaxTexture1DMipmappedWidth";
    case 78:
        return "cudaDevAttrStreamPrioritiesSupported";
    case 79:
        return "cudaDevAttrGlobalL1CacheSupported";
    case 80:
        return "cudaDevAttrLocalL1CacheSupported";
    case 81:
        return "cudaDevAttrMaxSharedMemoryPerMultiprocessor";
    case 82:
        return "cudaDevAttrMaxRegistersPerMultiprocessor";
    case 83:
        return "cudaDevAttrManagedMemory";
    case 84:
        return "cudaDevAttrIsMultiGpuBoard";
    case 85:
        return "cudaDevAttrMultiGpuBoardGroupID";
    case 86:
        return "cudaDevAttrHostNativeAtomicSupported";
    case 87:
        return "cudaDevAttrSingleToDoublePrecisionPerfRatio";
    case 88:
        return "cudaDevAttrPageableMemoryAccess";
    case 89:
        return "cudaDevAttrConcurrentManagedAccess";
    case 90:
        return "cudaDevAttrComputePreemptionSupported";
    case 91:
        return "cudaDevAttrCanUseHostPointerForRegisteredMem";
    case 92:
        return "cudaDevAttrReserved92";
    case 93:
        return "cudaDevAttrReserved93";
    case 94:
        return "cudaDevAttrReserved94";
    case 95:
        return "cudaDevAttrCooperativeLaunch";
    case 96:
        return "cudaDevAttrReserved96";
    case 97:
        return "cudaDevAttrMaxSharedMemoryPerBlockOptin";
    case 98:
        return "cudaDevAttrCanFlushRemoteWrites";
    case 99:
        return "cudaDevAttrHostRegisterSupported";
    case 100:
        return "cudaDevAttrPageableMemoryAccessUsesHostPageTables";
    case 101:
        return "cudaDevAttrDirectManagedMemAccessFromHost";
    case 106:
        return "cudaDevAttrMaxBlocksPerMultiprocessor";
    case 108:
        return "cudaDevAttrMaxPersistingL2CacheSize";
    case 109:
        return "cudaDevAttrMaxAccessPolicyWindowSize";
    case 111:
        return "cudaDevAttrReservedSharedMemoryPerBlock";
    case 112:
        return "cudaDevAttrSparseCudaArraySupported";
    case 113:
        return "cudaDevAttrHostRegisterReadOnlySupported";
    case 114:
        return "cudaDevAttrTimelineSemaphoreInteropSupported";
    case 115:
        return "cudaDevAttrMemoryPoolsSupported";
    case 116:
        return "cudaDevAttrGPUDirectRDMASupported";
    case 117:
        return "cudaDevAttrGPUDirectRDMAFlushWritesOptions";
    case 118:
        return "cudaDevAttrGPUDirectRDMAWritesOrdering";
    case 119:
        return "cudaDevAttrMemoryPoolSupportedHandleTypes";
    case 120:
        return "cudaDevAttrClusterLaunch";
    case 121:
        return "cudaDevAttrDeferredMappingCudaArraySupported";
    case 122:
        return "cudaDevAttrReserved122";
    case 123:
        return "cudaDevAttrReserved123";
    case 124:
        return "cudaDevAttrReserved124";
    case 125:
        return "cudaDevAttrIpcEventSupport";
    case 126:
        return "cudaDevAttrMemSyncDomainCount";
    case 127:
        return "cudaDevAttrReserved127";
    case 128:
        return "cudaDevAttrReserved128";
    case 129:
        return "cudaDevAttrReserved129";
    case 130:
        return "cudaDevAttrNumaConfig";
    case 131:
        return "cudaDevAttrNumaId";
    case 132:
        return "cudaDevAttrReserved132";
    case 133:
        return "cudaDevAttrMpsEnabled";
    case 134:
        return "cudaDevAttrHostNumaId";
    case 135:
        return "cudaDevAttrD3D12CigSupported";
    case 138:
        return "cudaDevAttrVulkanCigSupported";
    case 139:
        return "cudaDevAttrGpuPciDeviceId";
    case 140:
        return "cudaDevAttrGpuPciSubsystemId";
    case 141:
        return "cudaDevAttrReserved141";
    case 142:
        return "cudaDevAttrHostNumaMemoryPoolsSupported";
    case 143:
        return "cudaDevAttrHostNumaMultinodeIpcSupported";
    case 144:
        return "cudaDevAttrHostMemoryPoolsSupported";
    case 145:
        return "cudaDevAttrReserved145";
    case 147:
        return "cudaDevAttrOnlyPartialHostNativeAtomicSupported";
    default:
        return nullptr;
    }
}
} // namespace memplace::emu::detail

// Kernels in a `.cu` file that the main program includes (`#include "included/saxpy_kernel.cu"`),
// the way many programs split kernels from host code, with a host wrapper that launches one of
// them. Not a program of its own.
#pragma once

#include "included_common.h"

template <class MP_x, class MP_y>
__global__ void saxpyIncluded(int n, float a, MP_x x, MP_y y) {
    memplace::stage(x, y);
    [&]() {
    int i = includedGlobalIndex();
    if (i < n) {
        y[memplace::at<0>(i)] = a * x[memplace::at<1>(i)] + y[memplace::at<2>(i)];
    }
    }();
    memplace::unstage(y);
}

// memplace: what the runtime needs to know about kernel 'saxpyIncluded' (docs/rewrite-contract.md)
struct memplace_kernel_saxpyIncluded {
    static constexpr const char* name = "saxpyIncluded";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"x", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"y", 3, sizeof(float), memplace::Mode::ReadWrite, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "saxpyIncluded";
    static constexpr const char* jitTypes[2] = {"const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

__device__ __forceinline__ int includedGlobalIndex() {
    return blockIdx.x * blockDim.x + threadIdx.x;
}

template <class MP_x, class MP_y>
__global__ void saxpyIncluded(int n, float a, MP_x x, MP_y y) {
    memplace::stage(x, y);
    [&]() {
    int i = includedGlobalIndex();
    if (i < n) {
        y[memplace::at<0>(i)] = a * x[memplace::at<1>(i)] + y[memplace::at<2>(i)];
    }
    }();
    memplace::unstage(y);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::saxpyIncluded<Acc...>; }
    template <class MP_x, class MP_y>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            float a, MP_x x, MP_y y) {
        auto mp_kernel = kernel<MP_x, MP_y>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, a, x, y);
    }
};

template <class MP_idx, class MP_src, class MP_dst>
__global__ void gatherIncluded(int n, MP_idx idx, MP_src src, MP_dst dst) {
    memplace::stage(idx, src, dst);
    [&]() {
    int i = includedGlobalIndex();
    if (i < n) {
        dst[memplace::at<3>(i)] = src[memplace::at<4>(idx[memplace::at<5>(i)])];
    }
    }();
    memplace::unstage(dst);
}

// memplace: what the runtime needs to know about kernel 'gatherIncluded' (docs/rewrite-contract.md)
struct memplace_kernel_gatherIncluded {
    static constexpr const char* name = "gatherIncluded";
    static constexpr int numArrays = 3;
    static constexpr memplace::ArrayDesc arrays[3] = {
        {"idx", 1, sizeof(int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"src", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"dst", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const int, const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::ReadOnly,
            memplace::Place::Global>,
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Texture,
            memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "gatherIncluded";
    static constexpr const char* jitTypes[3] = {"const int", "const float", "float"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

__device__ __forceinline__ int includedGlobalIndex() {
    return blockIdx.x * blockDim.x + threadIdx.x;
}

template <class MP_idx, class MP_src, class MP_dst>
__global__ void gatherIncluded(int n, MP_idx idx, MP_src src, MP_dst dst) {
    memplace::stage(idx, src, dst);
    [&]() {
    int i = includedGlobalIndex();
    if (i < n) {
        dst[memplace::at<3>(i)] = src[memplace::at<4>(idx[memplace::at<5>(i)])];
    }
    }();
    memplace::unstage(dst);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::gatherIncluded<Acc...>; }
    template <class MP_idx, class MP_src, class MP_dst>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_idx idx, MP_src src, MP_dst dst) {
        auto mp_kernel = kernel<MP_idx, MP_src, MP_dst>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, idx, src, dst);
    }
};

// A host wrapper in the included file: its launch is rewritten in the copy.
static void launchGather(int n, const int* idx, const float* src, float* dst) {
    memplace::launch<memplace_kernel_gatherIncluded>((n + INCLUDED_BLOCK - 1) / INCLUDED_BLOCK,
        INCLUDED_BLOCK, 0, 0, n, idx, src, dst);
}

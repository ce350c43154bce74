// A kernel template in a `.cuh` header of the program, included by the main file.
#pragma once

template <int Radius, class MP_in, class MP_weights, class MP_out>
__global__ void stencilIncluded(int n, MP_in in, MP_weights weights, MP_out out) {
    memplace::stage(in, weights, out);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float sum = 0.0f;
    for (int k = -Radius; k <= Radius; ++k) {
        int j = min(max(i + k, 0), n - 1);
        sum += weights[memplace::at<6>(k + Radius)] * in[memplace::at<7>(j)];
    }
    out[memplace::at<8>(i)] = sum;
    }();
    memplace::unstage(out);
}

// memplace: what the runtime needs to know about kernel 'stencilIncluded' (docs/rewrite-contract.md)
template <int Radius>
struct memplace_kernel_stencilIncluded {
    static constexpr const char* name = "stencilIncluded";
    static constexpr int numArrays = 3;
    static constexpr memplace::ArrayDesc arrays[3] = {
        {"in", 1, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"weights", 2, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 3, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, const float, float>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::ReadOnly,
            memplace::Place::Global>,
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Constant,
            memplace::Place::Global>>;
    // Not compiled just in time: a kernel template (the runtime cannot spell its template arguments
    // in an NVRTC name expression). Placements not compiled in run through the dynamic accessor.
    static constexpr const char* jitSource = nullptr;
    template <class... Acc>
    static auto kernel() { return &::stencilIncluded<Radius, Acc...>; }
    template <class MP_in, class MP_weights, class MP_out>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_in in, MP_weights weights, MP_out out) {
        auto mp_kernel = kernel<MP_in, MP_weights, MP_out>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, in, weights, out);
    }
};

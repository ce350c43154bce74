// Kernels written in an `extern "C" { ... }` block, as C-callable CUDA libraries are: a search
// over an array of nodes (structure elements, an index read from another array), a kernel
// declared in the block before its definition, a __device__ helper in the block, launches from
// host functions with C linkage. A template cannot have C linkage: the rewriter writes these
// kernels, their helper and their descriptors `extern "C++"`. One kernel is declared
// `extern "C"` on its own line and stays as written, with a warning.
// Integer arithmetic only: checks against the CPU, prints a checksum of the outputs.
// memplace: rewritten by `memplace rewrite` from extern_c_kernels.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
#include "memplace/memplace.cuh"
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

#define FANOUT 4

struct Node {
    int keys[FANOUT];
    int child[FANOUT];
};

#ifdef __cplusplus
extern "C" {
#endif

struct memplace_kernel_countAbove;
extern "C++" { // memplace: a template cannot have C linkage
template <class MP_values, class MP_counts>
__global__ void countAbove(MP_values values, MP_counts counts, int n, int threshold);
}

extern "C++" { // memplace: a template cannot have C linkage
template <class MP_bounds>
__device__ int clampIndex(MP_bounds bounds, int i) {
    return i < bounds[memplace::at<0>(0)] ? bounds[memplace::at<1>(0)] : (i > bounds[memplace::at<2>(1)] ? bounds[memplace::at<3>(1)] : i);
}
}

// Each block descends the tree for its query: one thread per key of a node.
extern "C++" { // memplace: a template cannot have C linkage
template <class MP_nodes, class MP_queries, class MP_found>
__global__ void descend(MP_nodes nodes, MP_queries queries, MP_found found, int levels) {
    memplace::stage(nodes, queries, found);
    [&]() {
    const int lane = threadIdx.x;
    const int q = blockIdx.x;
    __shared__ int next;
    if (lane == 0) {
        next = 0;
    }
    __syncthreads();
    for (int level = 0; level < levels; ++level) {
        const int at = next;
        __syncthreads();
        const int key = nodes[memplace::at<4>(at)].keys[lane];
        const int upper = lane + 1 < FANOUT ? nodes[memplace::at<5>(at)].keys[lane + 1] : 0x7fffffff;
        if (key <= queries[memplace::at<6>(q)] && queries[memplace::at<7>(q)] < upper) {
            next = nodes[memplace::at<8>(at)].child[lane];
        }
        __syncthreads();
    }
    if (lane == 0) {
        found[memplace::at<9>(q)] = next;
    }
    }();
    memplace::unstage(found);
}

// memplace: what the runtime needs to know about kernel 'descend' (docs/rewrite-contract.md)
struct memplace_kernel_descend {
    static constexpr const char* name = "descend";
    static constexpr int numArrays = 3;
    static constexpr memplace::ArrayDesc arrays[3] = {
        {"nodes", 0, sizeof(Node), memplace::Mode::Read, memplace::kPlaces_ro_notex, 1},
        {"queries", 1, sizeof(int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"found", 2, sizeof(int), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const Node, const int, int>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::ReadOnly,
            memplace::Place::Global>,
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Constant,
            memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "descend";
    static constexpr const char* jitTypes[3] = {"const Node", "const int", "int"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

#define FANOUT 4

struct Node {
    int keys[FANOUT];
    int child[FANOUT];
};

extern "C" {
extern "C++" { // memplace: a template cannot have C linkage
template <class MP_nodes, class MP_queries, class MP_found>
__global__ void descend(MP_nodes nodes, MP_queries queries, MP_found found, int levels) {
    memplace::stage(nodes, queries, found);
    [&]() {
    const int lane = threadIdx.x;
    const int q = blockIdx.x;
    __shared__ int next;
    if (lane == 0) {
        next = 0;
    }
    __syncthreads();
    for (int level = 0; level < levels; ++level) {
        const int at = next;
        __syncthreads();
        const int key = nodes[memplace::at<4>(at)].keys[lane];
        const int upper = lane + 1 < FANOUT ? nodes[memplace::at<5>(at)].keys[lane + 1] : 0x7fffffff;
        if (key <= queries[memplace::at<6>(q)] && queries[memplace::at<7>(q)] < upper) {
            next = nodes[memplace::at<8>(at)].child[lane];
        }
        __syncthreads();
    }
    if (lane == 0) {
        found[memplace::at<9>(q)] = next;
    }
    }();
    memplace::unstage(found);
}
}

}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::descend<Acc...>; }
    template <class MP_nodes, class MP_queries, class MP_found>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_nodes nodes, MP_queries queries, MP_found found, int levels) {
        auto mp_kernel = kernel<MP_nodes, MP_queries, MP_found>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, nodes, queries, found,
            levels);
    }
};
}

extern "C++" { // memplace: a template cannot have C linkage
template <class MP_bounds, class MP_src, class MP_dst>
__global__ void gather(MP_bounds bounds, MP_src src, MP_dst dst, int n) {
    memplace::stage(bounds, src, dst);
    [&]() {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        dst[memplace::at<10>(i)] = src[memplace::at<11>(clampIndex(bounds, i * 3 - 5))];
    }
    }();
    memplace::unstage(dst);
}

// memplace: what the runtime needs to know about kernel 'gather' (docs/rewrite-contract.md)
struct memplace_kernel_gather {
    static constexpr const char* name = "gather";
    static constexpr int numArrays = 3;
    static constexpr memplace::ArrayDesc arrays[3] = {
        {"bounds", 0, sizeof(int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"src", 1, sizeof(int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"dst", 2, sizeof(int), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const int, const int, int>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::ReadOnly,
            memplace::Place::Global>,
        memplace::Places<memplace::Place::Constant, memplace::Place::Texture,
            memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "gather";
    static constexpr const char* jitTypes[3] = {"const int", "const int", "int"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

extern "C" {
extern "C++" { // memplace: a template cannot have C linkage
template <class MP_bounds>
__device__ int clampIndex(MP_bounds bounds, int i) {
    return i < bounds[memplace::at<0>(0)] ? bounds[memplace::at<1>(0)] : (i > bounds[memplace::at<2>(1)] ? bounds[memplace::at<3>(1)] : i);
}
}

extern "C++" { // memplace: a template cannot have C linkage
template <class MP_bounds, class MP_src, class MP_dst>
__global__ void gather(MP_bounds bounds, MP_src src, MP_dst dst, int n) {
    memplace::stage(bounds, src, dst);
    [&]() {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        dst[memplace::at<10>(i)] = src[memplace::at<11>(clampIndex(bounds, i * 3 - 5))];
    }
    }();
    memplace::unstage(dst);
}
}

}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::gather<Acc...>; }
    template <class MP_bounds, class MP_src, class MP_dst>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_bounds bounds, MP_src src, MP_dst dst, int n) {
        auto mp_kernel = kernel<MP_bounds, MP_src, MP_dst>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, bounds, src, dst, n);
    }
};
}

void runDescend(const Node* dNodes, const int* dQueries, int* dFound, int queries, int levels) {
    memplace::launch<memplace_kernel_descend>(queries, FANOUT, 0, 0, dNodes, dQueries, dFound,
        levels);
}

void runCounts(const int* dValues, int* dCounts, int n) {
    memplace::launch<memplace_kernel_countAbove>((n + 63) / 64, 64, 0, 0, dValues, dCounts, n, 100);
}

extern "C++" { // memplace: a template cannot have C linkage
template <class MP_values, class MP_counts>
__global__ void countAbove(MP_values values, MP_counts counts, int n, int threshold) {
    memplace::stage(values, counts);
    [&]() {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&counts[memplace::at<12>(values[memplace::at<13>(i)] % 8)], values[memplace::at<14>(i)] > threshold ? 1 : 0);
    }
    }();
    memplace::unstage(counts);
}

// memplace: what the runtime needs to know about kernel 'countAbove' (docs/rewrite-contract.md)
struct memplace_kernel_countAbove {
    static constexpr const char* name = "countAbove";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"values", 0, sizeof(int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"counts", 1, sizeof(int), memplace::Mode::ReadWrite, memplace::kPlaces_rw_noshared, 1},
    };
    using types = memplace::Types<const int, int>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "countAbove";
    static constexpr const char* jitTypes[2] = {"const int", "int"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

extern "C" {
struct memplace_kernel_countAbove;
extern "C++" { // memplace: a template cannot have C linkage
template <class MP_values, class MP_counts>
__global__ void countAbove(MP_values values, MP_counts counts, int n, int threshold);
}

extern "C++" { // memplace: a template cannot have C linkage
template <class MP_values, class MP_counts>
__global__ void countAbove(MP_values values, MP_counts counts, int n, int threshold) {
    memplace::stage(values, counts);
    [&]() {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&counts[memplace::at<12>(values[memplace::at<13>(i)] % 8)], values[memplace::at<14>(i)] > threshold ? 1 : 0);
    }
    }();
    memplace::unstage(counts);
}
}

}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::countAbove<Acc...>; }
    template <class MP_values, class MP_counts>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            MP_values values, MP_counts counts, int n, int threshold) {
        auto mp_kernel = kernel<MP_values, MP_counts>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, values, counts, n,
            threshold);
    }
};
}

#ifdef __cplusplus
}
#endif

// C linkage written on the declaration itself: left as written.
extern "C" __global__ void negate(int* values, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        values[i] = -values[i];
    }
}

static unsigned long long fnv1a(const void* data, size_t bytes, unsigned long long h) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

// A complete tree (heap layout: node k's children are FANOUT * k + 1 + c) whose FANOUT^levels
// leaves hold the keys 0, 10, 20, ...; the leaves are the last FANOUT^levels nodes.
static std::vector<Node> buildTree(int levels, int* leaves) {
    int count = 0, width = 1;
    for (int l = 0; l <= levels; ++l, width *= FANOUT) {
        count += width;
    }
    std::vector<Node> nodes(count);
    *leaves = width / FANOUT;
    int first = 0, span = *leaves * 10;
    width = 1;
    for (int l = 0; l <= levels; ++l, first += width, width *= FANOUT, span /= FANOUT) {
        for (int k = 0; k < width; ++k) {
            for (int c = 0; c < FANOUT; ++c) {
                nodes[first + k].keys[c] = k * span + c * (span / FANOUT);
                nodes[first + k].child[c] = l < levels ? FANOUT * (first + k) + 1 + c : -1;
            }
        }
    }
    return nodes;
}

int main() {
    const int levels = 3, queries = 50, n = 300;
    int leaves = 0;
    std::vector<Node> tree = buildTree(levels, &leaves);
    std::vector<int> hq(queries), hv(n), hb = {7, 250};
    for (int q = 0; q < queries; ++q) {
        hq[q] = (q * 37) % (leaves * 10);
    }
    for (int i = 0; i < n; ++i) {
        hv[i] = (i * 53 + 11) % 211;
    }
    Node* dNodes;
    int *dQueries, *dFound, *dValues, *dCounts, *dBounds, *dGathered, *dNeg;
    CUDA_CHECK(cudaMalloc(&dNodes, tree.size() * sizeof(Node)));
    CUDA_CHECK(cudaMalloc(&dQueries, queries * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dFound, queries * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dValues, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dCounts, 8 * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dBounds, 2 * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dGathered, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dNeg, n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dNodes, tree.data(), tree.size() * sizeof(Node), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dQueries, hq.data(), queries * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dValues, hv.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dNeg, hv.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dBounds, hb.data(), 2 * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dCounts, 0, 8 * sizeof(int)));
    runDescend(dNodes, dQueries, dFound, queries, levels);
    runCounts(dValues, dCounts, n);
    memplace::launch<memplace_kernel_gather>((n + 127) / 128, 128, 0, 0, dBounds, dValues,
        dGathered, n);
    MEMPLACE_LAUNCH(negate, (n + 127) / 128, 128, 0, 0, dNeg, n);
    CUDA_CHECK(cudaGetLastError());
    std::vector<int> gf(queries), gc(8), gg(n), gn(n);
    CUDA_CHECK(cudaMemcpy(gf.data(), dFound, queries * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gc.data(), dCounts, 8 * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gg.data(), dGathered, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gn.data(), dNeg, n * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    const int firstLeaf = static_cast<int>(tree.size()) - leaves;
    for (int q = 0; q < queries; ++q) {
        bad += gf[q] != firstLeaf + hq[q] / 10; // leaf k holds the keys [10 k, 10 k + 10)
    }
    std::vector<int> rc(8, 0);
    for (int i = 0; i < n; ++i) {
        rc[hv[i] % 8] += hv[i] > 100 ? 1 : 0;
        const int j = i * 3 - 5 < hb[0] ? hb[0] : (i * 3 - 5 > hb[1] ? hb[1] : i * 3 - 5);
        bad += gg[i] != hv[j];
        bad += gn[i] != -hv[i];
    }
    for (int b = 0; b < 8; ++b) {
        bad += gc[b] != rc[b];
    }
    unsigned long long h = 1469598103934665603ull;
    h = fnv1a(gf.data(), gf.size() * sizeof(int), h);
    h = fnv1a(gc.data(), gc.size() * sizeof(int), h);
    h = fnv1a(gg.data(), gg.size() * sizeof(int), h);
    h = fnv1a(gn.data(), gn.size() * sizeof(int), h);
    printf("extern_c_kernels: %s, outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", h);
    CUDA_CHECK(cudaFree(dNodes));
    CUDA_CHECK(cudaFree(dQueries));
    CUDA_CHECK(cudaFree(dFound));
    CUDA_CHECK(cudaFree(dValues));
    CUDA_CHECK(cudaFree(dCounts));
    CUDA_CHECK(cudaFree(dBounds));
    CUDA_CHECK(cudaFree(dGathered));
    CUDA_CHECK(cudaFree(dNeg));
    return bad == 0 ? 0 : 1;
}

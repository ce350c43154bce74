// Kernels written in an `extern "C" { ... }` block, as C-callable CUDA libraries are: a search
// over an array of nodes (structure elements, an index read from another array), a kernel
// declared in the block before its definition, a __device__ helper in the block, launches from
// host functions with C linkage. A template cannot have C linkage: the rewriter writes these
// kernels, their helper and their descriptors `extern "C++"`. One kernel is declared
// `extern "C"` on its own line and stays as written, with a warning.
// Integer arithmetic only: checks against the CPU, prints a checksum of the outputs.
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

__global__ void countAbove(const int* values, int* counts, int n, int threshold);

__device__ int clampIndex(const int* bounds, int i) {
    return i < bounds[0] ? bounds[0] : (i > bounds[1] ? bounds[1] : i);
}

// Each block descends the tree for its query: one thread per key of a node.
__global__ void descend(const Node* nodes, const int* queries, int* found, int levels) {
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
        const int key = nodes[at].keys[lane];
        const int upper = lane + 1 < FANOUT ? nodes[at].keys[lane + 1] : 0x7fffffff;
        if (key <= queries[q] && queries[q] < upper) {
            next = nodes[at].child[lane];
        }
        __syncthreads();
    }
    if (lane == 0) {
        found[q] = next;
    }
}

__global__ void gather(const int* bounds, const int* src, int* dst, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        dst[i] = src[clampIndex(bounds, i * 3 - 5)];
    }
}

void runDescend(const Node* dNodes, const int* dQueries, int* dFound, int queries, int levels) {
    descend<<<queries, FANOUT>>>(dNodes, dQueries, dFound, levels);
}

void runCounts(const int* dValues, int* dCounts, int n) {
    countAbove<<<(n + 63) / 64, 64>>>(dValues, dCounts, n, 100);
}

__global__ void countAbove(const int* values, int* counts, int n, int threshold) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&counts[values[i] % 8], values[i] > threshold ? 1 : 0);
    }
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
    gather<<<(n + 127) / 128, 128>>>(dBounds, dValues, dGathered, n);
    negate<<<(n + 127) / 128, 128>>>(dNeg, n);
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

// Graph frontiers: level-synchronous breadth-first search over a CSR graph. Each thread of the
// frontier expands one vertex; atomicCAS claims unvisited neighbours and atomicAdd reserves
// their slots in the next frontier. Levels are deterministic; the frontier order is not.
// memplace: rewritten by `memplace rewrite` from bfs_frontier.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
#include "memplace/memplace.cuh"
#include <cstdio>
#include <cstdlib>
#include <queue>
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

static unsigned int g_seed = 4242u;
static unsigned int urand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}

template <class MP_levels>
__global__ void init_levels(int n, MP_levels levels, int source) {
    memplace::stage(levels);
    [&]() {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) {
        levels[memplace::at<0>(v)] = v == source ? 0 : -1;
    }
    }();
    memplace::unstage(levels);
}

// memplace: what the runtime needs to know about kernel 'init_levels' (docs/rewrite-contract.md)
struct memplace_kernel_init_levels {
    static constexpr const char* name = "init_levels";
    static constexpr int numArrays = 1;
    static constexpr memplace::ArrayDesc arrays[1] = {
        {"levels", 1, sizeof(int), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<int>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "init_levels";
    static constexpr const char* jitTypes[1] = {"int"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_levels>
__global__ void init_levels(int n, MP_levels levels, int source) {
    memplace::stage(levels);
    [&]() {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) {
        levels[memplace::at<0>(v)] = v == source ? 0 : -1;
    }
    }();
    memplace::unstage(levels);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::init_levels<Acc...>; }
    template <class MP_levels>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_levels levels, int source) {
        auto mp_kernel = kernel<MP_levels>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, levels, source);
    }
};

template <class MP_frontier, class MP_rowptr, class MP_adj, class MP_levels, class MP_next_frontier,
          class MP_next_size>
__global__ void bfs_expand(int frontier_size, MP_frontier frontier,
                           MP_rowptr rowptr, MP_adj adj,
                           MP_levels levels, int level, MP_next_frontier next_frontier, MP_next_size next_size) {
    memplace::stage(frontier, rowptr, adj, levels, next_frontier, next_size);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= frontier_size) {
        return;
    }
    int v = frontier[memplace::at<1>(i)];
    for (int e = rowptr[memplace::at<2>(v)]; e < rowptr[memplace::at<3>(v + 1)]; ++e) {
        int u = adj[memplace::at<4>(e)];
        if (atomicCAS(&levels[memplace::at<5>(u)], -1, level + 1) == -1) {
            int slot = atomicAdd(&next_size[memplace::at<6>(0)], 1);
            next_frontier[memplace::at<7>(slot)] = u;
        }
    }
    }();
    memplace::unstage(levels, next_frontier, next_size);
}

// memplace: what the runtime needs to know about kernel 'bfs_expand' (docs/rewrite-contract.md)
struct memplace_kernel_bfs_expand {
    static constexpr const char* name = "bfs_expand";
    static constexpr int numArrays = 6;
    static constexpr memplace::ArrayDesc arrays[6] = {
        {"frontier", 1, sizeof(int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1, -1, memplace::Place::ReadOnly},
        {"rowptr", 2, sizeof(int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1, -1, memplace::Place::ReadOnly},
        {"adj", 3, sizeof(int), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1, -1, memplace::Place::ReadOnly},
        {"levels", 4, sizeof(int), memplace::Mode::ReadWrite, memplace::kPlaces_rw_noshared, 1},
        {"next_frontier", 6, sizeof(int), memplace::Mode::Write, memplace::kPlaces_rw, 1},
        {"next_size", 7, sizeof(int), memplace::Mode::ReadWrite, memplace::kPlaces_rw_noshared, 1},
    };
    using types = memplace::Types<const int, const int, const int, int, int, int>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::Global, memplace::Place::Global, memplace::Place::Global,
            memplace::Place::Global, memplace::Place::Global, memplace::Place::Global>,
        memplace::Places<memplace::Place::ReadOnly, memplace::Place::Texture,
            memplace::Place::Texture, memplace::Place::Global, memplace::Place::Global,
            memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "bfs_expand";
    static constexpr const char* jitTypes[6] = {"const int", "const int", "const int", "int", "int",
        "int"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_frontier, class MP_rowptr, class MP_adj, class MP_levels, class MP_next_frontier,
          class MP_next_size>
__global__ void bfs_expand(int frontier_size, MP_frontier frontier,
                           MP_rowptr rowptr, MP_adj adj,
                           MP_levels levels, int level, MP_next_frontier next_frontier, MP_next_size next_size) {
    memplace::stage(frontier, rowptr, adj, levels, next_frontier, next_size);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= frontier_size) {
        return;
    }
    int v = frontier[memplace::at<1>(i)];
    for (int e = rowptr[memplace::at<2>(v)]; e < rowptr[memplace::at<3>(v + 1)]; ++e) {
        int u = adj[memplace::at<4>(e)];
        if (atomicCAS(&levels[memplace::at<5>(u)], -1, level + 1) == -1) {
            int slot = atomicAdd(&next_size[memplace::at<6>(0)], 1);
            next_frontier[memplace::at<7>(slot)] = u;
        }
    }
    }();
    memplace::unstage(levels, next_frontier, next_size);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::bfs_expand<Acc...>; }
    template <class MP_frontier, class MP_rowptr, class MP_adj, class MP_levels,
              class MP_next_frontier, class MP_next_size>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream,
            int frontier_size, MP_frontier frontier, MP_rowptr rowptr, MP_adj adj, MP_levels levels,
            int level, MP_next_frontier next_frontier, MP_next_size next_size) {
        auto mp_kernel = kernel<MP_frontier, MP_rowptr, MP_adj, MP_levels, MP_next_frontier,
            MP_next_size>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, frontier_size, frontier,
            rowptr, adj, levels, level, next_frontier, next_size);
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
    const int n = 8192;
    std::vector<int> rowptr(n + 1, 0);
    std::vector<int> adj;
    for (int v = 0; v < n; ++v) {
        adj.push_back((v + 1) % n); // a ring keeps every vertex reachable
        int extra = static_cast<int>(urand() % 6);
        for (int k = 0; k < extra; ++k) {
            adj.push_back(static_cast<int>(urand() % n));
        }
        rowptr[v + 1] = static_cast<int>(adj.size());
    }
    const int edges = rowptr[n];

    int *drowptr, *dadj, *dlevels, *dsize;
    int* dfrontier[2];
    CUDA_CHECK(cudaMalloc(&drowptr, (n + 1) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dadj, edges * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dlevels, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dsize, sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dfrontier[0], n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dfrontier[1], n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(drowptr, rowptr.data(), (n + 1) * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dadj, adj.data(), edges * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dlevels, 0xFF, n * sizeof(int))); // poison the outputs
    CUDA_CHECK(cudaMemset(dfrontier[0], 0xFF, n * sizeof(int)));
    CUDA_CHECK(cudaMemset(dfrontier[1], 0xFF, n * sizeof(int)));

    const int source = 0;
    memplace::launch<memplace_kernel_init_levels>((n + 255) / 256, 256, 0, 0, n, dlevels, source);
    CUDA_CHECK(cudaMemcpy(dfrontier[0], &source, sizeof(int), cudaMemcpyHostToDevice));
    int frontier_size = 1;
    int level = 0;
    int cur = 0;
    while (frontier_size > 0) {
        CUDA_CHECK(cudaMemset(dsize, 0, sizeof(int)));
        memplace::launch<memplace_kernel_bfs_expand>((frontier_size + 127) / 128, 128, 0, 0,
            frontier_size, dfrontier[cur], drowptr, dadj, dlevels, level, dfrontier[1 - cur], dsize);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemcpy(&frontier_size, dsize, sizeof(int), cudaMemcpyDeviceToHost));
        cur = 1 - cur;
        ++level;
    }

    std::vector<int> levels(n);
    CUDA_CHECK(cudaMemcpy(levels.data(), dlevels, n * sizeof(int), cudaMemcpyDeviceToHost));
    std::vector<int> ref(n, -1);
    std::queue<int> q;
    ref[source] = 0;
    q.push(source);
    while (!q.empty()) {
        int v = q.front();
        q.pop();
        for (int e = rowptr[v]; e < rowptr[v + 1]; ++e) {
            if (ref[adj[e]] < 0) {
                ref[adj[e]] = ref[v] + 1;
                q.push(adj[e]);
            }
        }
    }
    int bad = 0;
    long long checksum = 0;
    for (int v = 0; v < n; ++v) {
        bad += levels[v] != ref[v];
        checksum += levels[v];
    }
    // The levels are deterministic; the order of a frontier is not (atomicAdd slots), so the
    // frontiers are left out of the hash.
    unsigned long long hash = fnv1a(levels.data(), n * sizeof(int));
    hash = fnv1a(&level, sizeof(level), hash);
    printf("bfs_frontier: %s levels %d checksum %lld outputs %016llx\n",
           bad == 0 ? "PASS" : "FAIL", level, checksum, hash);
    cudaFree(drowptr);
    cudaFree(dadj);
    cudaFree(dlevels);
    cudaFree(dsize);
    cudaFree(dfrontier[0]);
    cudaFree(dfrontier[1]);
    return bad == 0 ? 0 : 1;
}

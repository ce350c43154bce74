// Graph frontiers: level-synchronous breadth-first search over a CSR graph. Each thread of the
// frontier expands one vertex; atomicCAS claims unvisited neighbours and atomicAdd reserves
// their slots in the next frontier. Levels are deterministic; the frontier order is not.
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

__global__ void init_levels(int n, int* levels, int source) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) {
        levels[v] = v == source ? 0 : -1;
    }
}

__global__ void bfs_expand(int frontier_size, const int* __restrict__ frontier,
                           const int* __restrict__ rowptr, const int* __restrict__ adj,
                           int* levels, int level, int* next_frontier, int* next_size) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= frontier_size) {
        return;
    }
    int v = frontier[i];
    for (int e = rowptr[v]; e < rowptr[v + 1]; ++e) {
        int u = adj[e];
        if (atomicCAS(&levels[u], -1, level + 1) == -1) {
            int slot = atomicAdd(next_size, 1);
            next_frontier[slot] = u;
        }
    }
}

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
    init_levels<<<(n + 255) / 256, 256>>>(n, dlevels, source);
    CUDA_CHECK(cudaMemcpy(dfrontier[0], &source, sizeof(int), cudaMemcpyHostToDevice));
    int frontier_size = 1;
    int level = 0;
    int cur = 0;
    while (frontier_size > 0) {
        CUDA_CHECK(cudaMemset(dsize, 0, sizeof(int)));
        bfs_expand<<<(frontier_size + 127) / 128, 128>>>(frontier_size, dfrontier[cur], drowptr,
                                                          dadj, dlevels, level,
                                                          dfrontier[1 - cur], dsize);
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

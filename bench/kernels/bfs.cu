// Breadth-first search, one frontier-expansion level (Rodinia bfs, Kernel and Kernel2): one
// thread per node; a node in the frontier (mask) marks its unvisited neighbours in updatingMask
// and sets their cost; the second kernel turns updatingMask into the next frontier and marks it
// visited. The level is the one with the largest frontier of a BFS from node 0 (from the
// largest hub for R-MAT), computed on the host; the state before it is restored before every run.
// Arrays: rowPtr, adj (CSR graph, read), visited (read by the first kernel, written by the
// second), mask, updatingMask, cost (read and written), over (one flag, written).
// Several threads may write one cost or updatingMask entry, always with the same value, as in
// Rodinia (the race PORPLE's paper discusses).
// Original placement: rowPtr, adj and, in the first kernel, visited `const __restrict__`; the
// read-write arrays plain global.
#include "common/bench.h"

__global__ void bfs_expand(const int* __restrict__ rowPtr, const int* __restrict__ adj,
                           unsigned char* mask, unsigned char* updatingMask,
                           const unsigned char* __restrict__ visited, int* cost, int nNodes) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < nNodes && mask[tid]) {
        mask[tid] = 0;
        int next = cost[tid] + 1;
        int end = rowPtr[tid + 1];
        for (int e = rowPtr[tid]; e < end; ++e) {
            int id = adj[e];
            if (!visited[id]) {
                cost[id] = next;
                updatingMask[id] = 1;
            }
        }
    }
}

__global__ void bfs_update(unsigned char* mask, unsigned char* updatingMask, unsigned char* visited,
                           int* over, int nNodes) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < nNodes && updatingMask[tid]) {
        mask[tid] = 1;
        visited[tid] = 1;
        over[0] = 1;
        updatingMask[tid] = 0;
    }
}

namespace {

struct Graph {
    int n = 0;
    int source = 0; // where the BFS starts
    std::vector<int> rowPtr, adj;
};

// CSR from an undirected edge list (both directions stored).
Graph fromEdges(int n, const std::vector<std::pair<int, int>>& edges) {
    Graph g;
    g.n = n;
    g.rowPtr.assign((size_t)n + 1, 0);
    for (auto [u, v] : edges) {
        ++g.rowPtr[u + 1];
        ++g.rowPtr[v + 1];
    }
    for (int i = 0; i < n; ++i)
        g.rowPtr[i + 1] += g.rowPtr[i];
    g.adj.resize(g.rowPtr[n]);
    std::vector<int> fill(g.rowPtr.begin(), g.rowPtr.end() - 1);
    for (auto [u, v] : edges) {
        g.adj[fill[u]++] = v;
        g.adj[fill[v]++] = u;
    }
    return g;
}

Graph generate(const std::string& input, long long size, uint64_t seed) {
    bench::Rng rng(seed, 1);
    std::vector<std::pair<int, int>> edges;
    if (input == "small" || input == "random") {
        // Uniform random graph, mean degree 16 (8 for small).
        const int n = static_cast<int>(size);
        const long long m = (long long)n * (input == "small" ? 4 : 8);
        edges.reserve(m);
        for (long long e = 0; e < m; ++e)
            edges.emplace_back(static_cast<int>(rng.below(n)), static_cast<int>(rng.below(n)));
        return fromEdges(n, edges);
    }
    if (input == "rmat") {
        // R-MAT (a, b, c, d) = (0.57, 0.19, 0.19, 0.05), 8 undirected edges a node: power-law
        // degrees; node numbers scrambled so that hubs are spread out.
        int scale = 1;
        while ((1ll << scale) < size)
            ++scale;
        const int n = 1 << scale;
        const long long m = 8ll * n;
        edges.reserve(m);
        for (long long e = 0; e < m; ++e) {
            int u = 0, v = 0;
            for (int l = 0; l < scale; ++l) {
                double r = rng.uniform();
                int bu = r >= 0.57 + 0.19 ? 1 : 0;
                int bv = (r >= 0.57 && r < 0.76) || r >= 0.95 ? 1 : 0;
                u = (u << 1) | bu;
                v = (v << 1) | bv;
            }
            edges.emplace_back(u, v);
        }
        bench::Rng prng(seed, 2);
        std::vector<int> perm = bench::permutation(n, prng);
        for (auto& [u, v] : edges)
            u = perm[u], v = perm[v];
        Graph g = fromEdges(n, edges);
        for (int i = 1; i < n; ++i) // start at the hub: many nodes have no edge at all
            if (g.rowPtr[i + 1] - g.rowPtr[i] > g.rowPtr[g.source + 1] - g.rowPtr[g.source])
                g.source = i;
        return g;
    }
    if (input == "grid2d") {
        // A 4-neighbour grid (road-network-like): long diameter, thin frontiers.
        const int g = std::max(2, static_cast<int>(std::sqrt(static_cast<double>(size))));
        edges.reserve(2ll * g * g);
        for (int i = 0; i < g; ++i)
            for (int j = 0; j < g; ++j) {
                if (j + 1 < g)
                    edges.emplace_back(i * g + j, i * g + j + 1);
                if (i + 1 < g)
                    edges.emplace_back(i * g + j, (i + 1) * g + j);
            }
        return fromEdges(g * g, edges);
    }
    bench::die("bfs: no generator for %s", input.c_str());
}

} // namespace

int main(int argc, char** argv) {
    const std::vector<bench::InputSpec> inputs = {
        {"small", 65536, "64K-node uniform random graph, mean degree 8"},
        {"random", 4 << 20, "4M-node uniform random graph, mean degree 16 (256 MB of edges)"},
        {"rmat", 4 << 20, "R-MAT graph of 2^22 nodes, mean degree 16: power-law degrees"},
        {"grid2d", 16 << 20, "4096 x 4096 grid graph: a frontier of a few thousand nodes"},
    };
    bench::Options opt = bench::parse(argc, argv, "bfs", inputs);
    const Graph g = generate(opt.input, opt.size, opt.seed);
    const int n = g.n;

    // Host BFS from the source: levels, then the state before the level with the largest frontier.
    std::vector<int> level(n, -1);
    std::vector<long long> frontierSize;
    {
        std::vector<int> frontier = {g.source}, next;
        level[g.source] = 0;
        while (!frontier.empty()) {
            frontierSize.push_back(static_cast<long long>(frontier.size()));
            next.clear();
            for (int u : frontier)
                for (int e = g.rowPtr[u]; e < g.rowPtr[u + 1]; ++e)
                    if (level[g.adj[e]] < 0) {
                        level[g.adj[e]] = level[u] + 1;
                        next.push_back(g.adj[e]);
                    }
            frontier.swap(next);
        }
    }
    const int L = static_cast<int>(std::max_element(frontierSize.begin(), frontierSize.end()) -
                                   frontierSize.begin());
    std::vector<unsigned char> hmask(n), hupd(n, 0), hvisited(n);
    std::vector<int> hcost(n);
    for (int i = 0; i < n; ++i) {
        bool seen = level[i] >= 0 && level[i] <= L;
        hmask[i] = level[i] == L;
        hvisited[i] = seen;
        hcost[i] = seen ? level[i] : -1;
    }
    std::vector<int> hover = {0};

    int *drowPtr = nullptr, *dadj = nullptr, *dcost = nullptr, *dover = nullptr;
    unsigned char *dmask = nullptr, *dupd = nullptr, *dvisited = nullptr;
    int* dcost0 = nullptr;
    unsigned char *dmask0 = nullptr, *dvisited0 = nullptr;
    BENCH_CK(cudaMalloc(&drowPtr, ((size_t)n + 1) * sizeof(int)));
    BENCH_CK(cudaMalloc(&dadj, std::max<size_t>(1, g.adj.size()) * sizeof(int)));
    BENCH_CK(cudaMalloc(&dmask, n));
    BENCH_CK(cudaMalloc(&dupd, n));
    BENCH_CK(cudaMalloc(&dvisited, n));
    BENCH_CK(cudaMalloc(&dcost, n * sizeof(int)));
    BENCH_CK(cudaMalloc(&dover, sizeof(int)));
    // Pristine copies of the state the kernels change, restored before each run.
    BENCH_CK(cudaMalloc(&dmask0, n));
    BENCH_CK(cudaMalloc(&dvisited0, n));
    BENCH_CK(cudaMalloc(&dcost0, n * sizeof(int)));
    BENCH_CK(cudaMemcpy(drowPtr, g.rowPtr.data(), ((size_t)n + 1) * sizeof(int),
                        cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dadj, g.adj.data(), g.adj.size() * sizeof(int), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dmask0, hmask.data(), n, cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dvisited0, hvisited.data(), n, cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dcost0, hcost.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    const int block = 256;
    const int grid = (n + block - 1) / block;
    bench::Timer timer(opt);
    for (int run = 0; run < timer.runs(); ++run) {
        BENCH_CK(cudaMemcpy(dmask, dmask0, n, cudaMemcpyDeviceToDevice));
        BENCH_CK(cudaMemcpy(dvisited, dvisited0, n, cudaMemcpyDeviceToDevice));
        BENCH_CK(cudaMemcpy(dcost, dcost0, n * sizeof(int), cudaMemcpyDeviceToDevice));
        BENCH_CK(cudaMemset(dupd, 0, n));
        BENCH_CK(cudaMemset(dover, 0, sizeof(int)));
        timer.start();
        bfs_expand<<<grid, block>>>(drowPtr, dadj, dmask, dupd, dvisited, dcost, n);
        timer.lap("bfs_expand");
        bfs_update<<<grid, block>>>(dmask, dupd, dvisited, dover, n);
        timer.lap("bfs_update");
        timer.stop();
    }

    std::vector<unsigned char> omask(n), oupd(n), ovisited(n);
    std::vector<int> ocost(n), oover(1);
    BENCH_CK(cudaMemcpy(omask.data(), dmask, n, cudaMemcpyDeviceToHost));
    BENCH_CK(cudaMemcpy(oupd.data(), dupd, n, cudaMemcpyDeviceToHost));
    BENCH_CK(cudaMemcpy(ovisited.data(), dvisited, n, cudaMemcpyDeviceToHost));
    BENCH_CK(cudaMemcpy(ocost.data(), dcost, n * sizeof(int), cudaMemcpyDeviceToHost));
    BENCH_CK(cudaMemcpy(oover.data(), dover, sizeof(int), cudaMemcpyDeviceToHost));

    bench::Check check(opt.check);
    if (opt.check) {
        // After the level: the next frontier is level L+1, visited is level <= L+1.
        bool any = false;
        for (int i = 0; i < n; ++i) {
            bool seen = level[i] >= 0 && level[i] <= L + 1;
            any = any || level[i] == L + 1;
            check.equal<int>("mask", i, omask[i], level[i] == L + 1);
            check.equal<int>("visited", i, ovisited[i], seen);
            check.equal<int>("updatingMask", i, oupd[i], 0);
            check.equal("cost", i, ocost[i], seen ? level[i] : -1);
        }
        check.equal("over", 0, oover[0], any ? 1 : 0);
    }
    bench::Report report(opt, timer);
    report.output("cost", ocost);
    report.output("mask", omask);
    report.output("visited", ovisited);
    report.output("over", oover);
    report.bytes(static_cast<double>(g.adj.size()) * 4 + n * 11.0);
    report.param("nodes", n);
    report.param("edges", static_cast<double>(g.adj.size()));
    report.param("source", g.source);
    report.param("level", L);
    report.param("frontier", static_cast<double>(frontierSize[L]));
    report.param("levels", static_cast<double>(frontierSize.size()));
    int rc = report.finish(check);
    for (void* p : {(void*)drowPtr, (void*)dadj, (void*)dmask, (void*)dupd, (void*)dvisited,
                    (void*)dcost, (void*)dover, (void*)dmask0, (void*)dvisited0, (void*)dcost0})
        BENCH_CK(cudaFree(p));
    return rc;
}

// Warp primitives in real uses: an inclusive scan with __shfl_up_sync, a block scan over warp
// totals, stream compaction with __ballot_sync and __popc, and duplicate counting with
// __match_any_sync.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "check.h"

__global__ void blockScan(const int* in, int* out, int n) {
    __shared__ int warpTotals[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int v = i < n ? in[i] : 0;
    for (int d = 1; d < 32; d <<= 1) {
        int up = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += up;
    }
    if (lane == 31) warpTotals[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int t = lane < (int)(blockDim.x / 32) ? warpTotals[lane] : 0;
        for (int d = 1; d < 32; d <<= 1) {
            int up = __shfl_up_sync(0xffffffffu, t, d);
            if (lane >= d) t += up;
        }
        warpTotals[lane] = t;
    }
    __syncthreads();
    if (warp > 0) v += warpTotals[warp - 1];
    if (i < n) out[i] = v;
}

__global__ void compact(const int* in, int n, int* out, int* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int keep = i < n && in[i] % 3 == 0;
    unsigned ballot = __ballot_sync(0xffffffffu, keep);
    int lane = threadIdx.x & 31;
    int before = __popc(ballot & ((1u << lane) - 1));
    int base = 0;
    if (lane == 0 && ballot != 0) base = atomicAdd(count, __popc(ballot));
    base = __shfl_sync(0xffffffffu, base, 0);
    if (keep) out[base + before] = in[i];
}

__global__ void duplicates(const int* keys, int* firsts, int* groupSizes) {
    int k = keys[threadIdx.x];
    unsigned peers = __match_any_sync(0xffffffffu, k);
    int leader = __ffs(peers) - 1;
    if ((int)(threadIdx.x & 31) == leader) {
        firsts[threadIdx.x] = 1;
        groupSizes[threadIdx.x] = __popc(peers);
    }
}

int main() {
    const int n = 1000, threads = 256, blocks = (n + threads - 1) / threads;
    int *in, *out, *compacted, *count;
    CUDA_OK(cudaMallocManaged(&in, n * sizeof(int)));
    CUDA_OK(cudaMallocManaged(&out, n * sizeof(int)));
    CUDA_OK(cudaMallocManaged(&compacted, n * sizeof(int)));
    CUDA_OK(cudaMallocManaged(&count, sizeof(int)));
    for (int i = 0; i < n; ++i) in[i] = (i * 17) % 23;
    *count = 0;
    MEMPLACE_LAUNCH(blockScan, blocks, threads, 0, 0, in, out, n);
    MEMPLACE_LAUNCH(compact, blocks, threads, 0, 0, in, n, compacted, count);
    CUDA_OK(cudaDeviceSynchronize());
    for (int b = 0; b < blocks; ++b) {
        int acc = 0;
        for (int i = b * threads; i < std::min(n, (b + 1) * threads); ++i) {
            acc += in[i];
            CHECK(out[i] == acc);
        }
    }
    // Compaction keeps every multiple of 3; the order within the output follows warp order.
    std::vector<int> expect, got(compacted, compacted + *count);
    for (int i = 0; i < n; ++i)
        if (in[i] % 3 == 0) expect.push_back(in[i]);
    CHECK(*count == static_cast<int>(expect.size()));
    std::sort(expect.begin(), expect.end());
    std::sort(got.begin(), got.end());
    CHECK(got == expect);

    int *keys, *firsts, *sizes;
    CUDA_OK(cudaMallocManaged(&keys, 32 * sizeof(int)));
    CUDA_OK(cudaMallocManaged(&firsts, 32 * sizeof(int)));
    CUDA_OK(cudaMallocManaged(&sizes, 32 * sizeof(int)));
    for (int i = 0; i < 32; ++i) {
        keys[i] = (i * i) % 7;
        firsts[i] = 0;
        sizes[i] = 0;
    }
    MEMPLACE_LAUNCH(duplicates, 1, 32, 0, 0, keys, firsts, sizes);
    CUDA_OK(cudaDeviceSynchronize());
    int total = 0, groups = 0;
    for (int i = 0; i < 32; ++i) {
        bool first = true;
        for (int j = 0; j < i; ++j) first = first && keys[j] != keys[i];
        CHECK(firsts[i] == (first ? 1 : 0));
        if (first) {
            int c = 0;
            for (int j = 0; j < 32; ++j) c += keys[j] == keys[i];
            CHECK(sizes[i] == c);
            ++groups;
        }
        total += sizes[i];
    }
    CHECK(total == 32);
    CHECK(groups == 4); // squares mod 7: 0, 1, 2, 4
    return finish("warp_primitives");
}

// k-means assignment step (Rodinia kmeans, kmeansPoint): each thread takes one point and finds
// the nearest of the current centroids by squared Euclidean distance.
// Arrays: features (npoints x nfeatures, stored feature-major, features[f * npoints + p], as
// Rodinia transposes it so that a warp reads consecutive points), the centroids
// (nclusters x nfeatures), membership (out).
// Original placement: centroids in constant memory (Rodinia's c_clusters: every lane reads the
// same centroid value at the same time), features `const __restrict__` (Rodinia used a texture).
#include "common/bench.h"

#include <cfloat>

constexpr int kMaxCentroidValues = 8192; // 32 KB of constant memory

__constant__ float c_clusters[kMaxCentroidValues];

__global__ void kmeans_assign(const float* __restrict__ features, int* membership, int npoints,
                              int nclusters, int nfeatures) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= npoints)
        return;
    int best = 0;
    float bestDist = FLT_MAX;
    for (int c = 0; c < nclusters; ++c) {
        float dist = 0.0f;
        for (int f = 0; f < nfeatures; ++f) {
            float d = features[(size_t)f * npoints + p] - c_clusters[c * nfeatures + f];
            dist += d * d;
        }
        if (dist < bestDist) {
            bestDist = dist;
            best = c;
        }
    }
    membership[p] = best;
}

int main(int argc, char** argv) {
    const std::vector<bench::InputSpec> inputs = {
        {"small", 65536, "64K points, 16 features, 8 clusters"},
        {"large", 4 << 20, "4M points, 32 features (512 MB), 16 clusters"},
        {"many", 1 << 20, "1M points, 16 features, 256 clusters (16 KB of centroids)"},
        {"wide", 2 << 20, "2M points, 64 features (512 MB), 32 clusters"},
    };
    bench::Options opt = bench::parse(argc, argv, "kmeans", inputs);
    const int npoints = static_cast<int>(opt.size);
    int nfeatures = 16, nclusters = 8;
    if (opt.input == "large")
        nfeatures = 32, nclusters = 16;
    else if (opt.input == "many")
        nclusters = 256;
    else if (opt.input == "wide")
        nfeatures = 64, nclusters = 32;
    if (nfeatures * nclusters > kMaxCentroidValues)
        bench::die("too many centroid values");

    // Points in Gaussian blobs around true centres; the centroids passed to the kernel are the
    // true centres moved a little, as in the middle of a k-means run.
    bench::Rng rngC(opt.seed, 1), rngP(opt.seed, 2);
    std::vector<float> centres((size_t)nclusters * nfeatures), hclusters(centres.size());
    for (size_t i = 0; i < centres.size(); ++i) {
        centres[i] = rngC.uniformf(-10.0f, 10.0f);
        hclusters[i] = centres[i] + static_cast<float>(0.5 * rngC.normal());
    }
    std::vector<int> truth(npoints);
    for (int& c : truth)
        c = static_cast<int>(rngP.below(nclusters));
    std::vector<float> hfeat((size_t)npoints * nfeatures);
    for (int f = 0; f < nfeatures; ++f)
        for (int p = 0; p < npoints; ++p)
            hfeat[(size_t)f * npoints + p] =
                centres[(size_t)truth[p] * nfeatures + f] + static_cast<float>(3.0 * rngP.normal());

    float* dfeat = nullptr;
    int* dmember = nullptr;
    BENCH_CK(cudaMalloc(&dfeat, hfeat.size() * sizeof(float)));
    BENCH_CK(cudaMalloc(&dmember, npoints * sizeof(int)));
    BENCH_CK(cudaMemcpy(dfeat, hfeat.data(), hfeat.size() * sizeof(float), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpyToSymbol(c_clusters, hclusters.data(), hclusters.size() * sizeof(float)));

    const int block = 256;
    const int grid = (npoints + block - 1) / block;
    bench::Timer timer(opt);
    for (int run = 0; run < timer.runs(); ++run) {
        bench::poison(dmember, npoints);
        timer.start();
        kmeans_assign<<<grid, block>>>(dfeat, dmember, npoints, nclusters, nfeatures);
        timer.lap("kmeans_assign");
        timer.stop();
    }

    std::vector<int> hmember(npoints);
    BENCH_CK(cudaMemcpy(hmember.data(), dmember, npoints * sizeof(int), cudaMemcpyDeviceToHost));

    bench::Check check(opt.check);
    if (opt.check) {
        // Float distances may order near-ties differently from exact ones: accept any centroid
        // whose exact distance is within a relative 1e-5 of the nearest.
        check.setTolerance(
            "chosen centroid within 1e-5 (relative) of the nearest (sampled points)");
        for (size_t p : bench::sampleIndices(npoints, 1 << 18, opt.seed)) {
            int got = hmember[p];
            double best = 1e300, gotDist = -1;
            for (int c = 0; c < nclusters; ++c) {
                double dist = 0;
                for (int f = 0; f < nfeatures; ++f) {
                    double d = static_cast<double>(hfeat[(size_t)f * npoints + p]) -
                               hclusters[(size_t)c * nfeatures + f];
                    dist += d * d;
                }
                best = std::min(best, dist);
                if (c == got)
                    gotDist = dist;
            }
            check.expect(got >= 0 && got < nclusters && gotDist <= best * (1 + 1e-5) + 1e-6,
                         "membership", p, got, best);
        }
    }
    bench::Report report(opt, timer);
    report.output("membership", hmember);
    report.bytes(static_cast<double>(hfeat.size()) * sizeof(float) + npoints * sizeof(int));
    report.param("npoints", npoints);
    report.param("nfeatures", nfeatures);
    report.param("nclusters", nclusters);
    int rc = report.finish(check);
    BENCH_CK(cudaFree(dfeat));
    BENCH_CK(cudaFree(dmember));
    return rc;
}

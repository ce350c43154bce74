// Molecular dynamics, Lennard-Jones forces with neighbour lists (SHOC level 1 "md",
// compute_lj_force): one thread per atom walks its maxNeighbors neighbours, stored column-major
// (neighList[j * nAtom + i], so a warp reads one row of the list at a time), gathers their
// positions and sums the force of those inside the cut-off.
// Arrays: position (float4, gathered through the list), neighList (int, streamed), force
// (float4, written).
// Original placement: position and neighList `const __restrict__` (SHOC binds position to a
// texture); force written.
#include "common/bench.h"

#include <array>

__global__ void md_lj_force(const float4* __restrict__ position, const int* __restrict__ neighList,
                            float4* force, int nAtom, int maxNeighbors, float cutsq, float lj1,
                            float lj2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nAtom)
        return;
    float4 ipos = position[i];
    float fx = 0.0f, fy = 0.0f, fz = 0.0f;
    for (int j = 0; j < maxNeighbors; ++j) {
        int jidx = neighList[(size_t)j * nAtom + i];
        float4 jpos = position[jidx];
        float delx = ipos.x - jpos.x;
        float dely = ipos.y - jpos.y;
        float delz = ipos.z - jpos.z;
        float r2inv = delx * delx + dely * dely + delz * delz;
        if (r2inv < cutsq) {
            r2inv = 1.0f / r2inv;
            float r6inv = r2inv * r2inv * r2inv;
            float f = r2inv * r6inv * (lj1 * r6inv - lj2);
            fx += delx * f;
            fy += dely * f;
            fz += delz * f;
        }
    }
    force[i] = make_float4(fx, fy, fz, 0.0f);
}

int main(int argc, char** argv) {
    const std::vector<bench::InputSpec> inputs = {
        {"small", 16000, "25^3 atoms on a jittered lattice, 64 neighbours each, spatial order"},
        {"large", 2000000, "126^3 atoms (2M; a 512 MB neighbour list), spatial order"},
        {"shuffled", 2000000, "126^3 atoms numbered at random: position gathers lose locality"},
    };
    bench::Options opt = bench::parse(argc, argv, "md", inputs);
    const int side =
        std::max(2, static_cast<int>(std::lround(std::cbrt(static_cast<double>(opt.size)))));
    const int nAtom = side * side * side;
    const int maxNeighbors = 64;
    const float cutsq = 4.0f, lj1 = 1.5f, lj2 = 2.0f;

    // Atoms sit on a unit lattice, each moved by up to 0.1 per axis. The neighbour list of an
    // atom is the 64 nearest lattice offsets (periodic indices; across the boundary the raw
    // distance is beyond the cut-off). With the jitter, every atom within the cut-off of 2 is in
    // the list (shells |o|^2 <= 5 hold 56 offsets).
    std::vector<int> offsets; // packed dx,dy,dz
    {
        std::vector<std::array<int, 4>> all;
        for (int dz = -3; dz <= 3; ++dz)
            for (int dy = -3; dy <= 3; ++dy)
                for (int dx = -3; dx <= 3; ++dx)
                    if (dx || dy || dz)
                        all.push_back({dx * dx + dy * dy + dz * dz, dz, dy, dx});
        std::sort(all.begin(), all.end());
        for (int k = 0; k < maxNeighbors; ++k) {
            offsets.push_back(all[k][3]);
            offsets.push_back(all[k][2]);
            offsets.push_back(all[k][1]);
        }
    }
    bench::Rng rng(opt.seed);
    std::vector<int> perm; // lattice site -> atom id
    if (opt.input == "shuffled") {
        bench::Rng prng(opt.seed, 7);
        perm = bench::permutation(nAtom, prng);
    } else {
        perm.resize(nAtom);
        for (int i = 0; i < nAtom; ++i)
            perm[i] = i;
    }
    std::vector<float4> hpos(nAtom);
    for (int s = 0; s < nAtom; ++s) {
        int x = s % side, y = (s / side) % side, z = s / (side * side);
        hpos[perm[s]] = make_float4(x + rng.uniformf(-0.1f, 0.1f), y + rng.uniformf(-0.1f, 0.1f),
                                    z + rng.uniformf(-0.1f, 0.1f), 0.0f);
    }
    std::vector<int> hneigh((size_t)nAtom * maxNeighbors);
    for (int s = 0; s < nAtom; ++s) {
        int x = s % side, y = (s / side) % side, z = s / (side * side);
        for (int j = 0; j < maxNeighbors; ++j) {
            int nx = (x + offsets[3 * j] + side) % side,
                ny = (y + offsets[3 * j + 1] + side) % side,
                nz = (z + offsets[3 * j + 2] + side) % side;
            hneigh[(size_t)j * nAtom + perm[s]] = perm[(nz * side + ny) * side + nx];
        }
    }

    float4 *dpos = nullptr, *dforce = nullptr;
    int* dneigh = nullptr;
    BENCH_CK(cudaMalloc(&dpos, nAtom * sizeof(float4)));
    BENCH_CK(cudaMalloc(&dneigh, hneigh.size() * sizeof(int)));
    BENCH_CK(cudaMalloc(&dforce, nAtom * sizeof(float4)));
    BENCH_CK(cudaMemcpy(dpos, hpos.data(), nAtom * sizeof(float4), cudaMemcpyHostToDevice));
    BENCH_CK(
        cudaMemcpy(dneigh, hneigh.data(), hneigh.size() * sizeof(int), cudaMemcpyHostToDevice));

    const int block = 256;
    const int grid = (nAtom + block - 1) / block;
    bench::Timer timer(opt);
    for (int run = 0; run < timer.runs(); ++run) {
        bench::poison(dforce, nAtom);
        timer.start();
        md_lj_force<<<grid, block>>>(dpos, dneigh, dforce, nAtom, maxNeighbors, cutsq, lj1, lj2);
        timer.lap("md_lj_force");
        timer.stop();
    }

    std::vector<float4> hforce(nAtom);
    BENCH_CK(cudaMemcpy(hforce.data(), dforce, nAtom * sizeof(float4), cudaMemcpyDeviceToHost));
    std::vector<float> out(4 * (size_t)nAtom);
    for (int i = 0; i < nAtom; ++i) {
        out[4 * i] = hforce[i].x;
        out[4 * i + 1] = hforce[i].y;
        out[4 * i + 2] = hforce[i].z;
        out[4 * i + 3] = hforce[i].w;
    }

    bench::Check check(opt.check);
    if (opt.check) {
        // Double-precision reference. A pair whose distance is within 1e-5 of the cut-off may
        // fall on either side in float: its force is added to the tolerance.
        check.setTolerance(
            "128 * 2^-24 * sum|terms| + |terms of pairs at the cut-off| (sampled atoms)");
        for (size_t i : bench::sampleIndices(nAtom, 1 << 18, opt.seed)) {
            double f[3] = {0, 0, 0}, mag[3] = {0, 0, 0}, edge[3] = {0, 0, 0};
            for (int j = 0; j < maxNeighbors; ++j) {
                const float4& q = hpos[hneigh[(size_t)j * nAtom + i]];
                double d[3] = {static_cast<double>(hpos[i].x) - q.x,
                               static_cast<double>(hpos[i].y) - q.y,
                               static_cast<double>(hpos[i].z) - q.z};
                double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                if (r2 >= cutsq + 1e-5)
                    continue;
                double r2inv = 1.0 / r2, r6inv = r2inv * r2inv * r2inv;
                double s = r2inv * r6inv * (lj1 * r6inv - lj2);
                bool borderline = r2 > cutsq - 1e-5;
                for (int a = 0; a < 3; ++a) {
                    if (borderline) {
                        edge[a] += std::fabs(d[a] * s);
                    } else {
                        f[a] += d[a] * s;
                        mag[a] += std::fabs(d[a] * s);
                    }
                }
            }
            const float got[3] = {hforce[i].x, hforce[i].y, hforce[i].z};
            for (int a = 0; a < 3; ++a)
                check.close("force", 4 * i + a, got[a], f[a],
                            128 * 0x1.0p-24 * mag[a] + edge[a] + 1e-30);
            check.equal("force.w", 4 * i + 3, hforce[i].w, 0.0f);
        }
    }
    bench::Report report(opt, timer);
    report.output("force", out);
    report.bytes(static_cast<double>(hneigh.size()) * sizeof(int) + 2.0 * nAtom * sizeof(float4));
    report.param("atoms", nAtom);
    report.param("neighbors", maxNeighbors);
    int rc = report.finish(check);
    BENCH_CK(cudaFree(dpos));
    BENCH_CK(cudaFree(dneigh));
    BENCH_CK(cudaFree(dforce));
    return rc;
}

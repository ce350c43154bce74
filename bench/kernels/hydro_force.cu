// Hydrodynamics force kernel with 16 arrays and a constant table (LULESH
// CalcFBHourglassForceForElems, PORPLE's "glassForce"): one thread per hexahedral element
// builds its hourglass modes from the element's node coordinates and volume derivatives,
// gathers the velocities of its 8 nodes through the node list, and writes the 8 nodal
// hourglass forces of the element (x, y, z). Double precision, as LULESH.
// Per-element arrays hold 8 values an element, node-major for coalescing as LULESH's CUDA port
// stores them: x8n[k * numElem + e].
// Arrays: determ, elemMass, ss (1 per element); x8n, y8n, z8n, dvdx, dvdy, dvdz, nodelist
// (8 per element); xd, yd, zd (per node, gathered through nodelist) -- all read; fx_elem,
// fy_elem, fz_elem (8 per element, written); c_gamma (4 x 8 hourglass base vectors, constant).
// Original placement: every read-only array `const __restrict__`; the hourglass base vectors in
// constant memory (all lanes read the same entry); the element's temporaries in registers.
#include "common/bench.h"

__constant__ double c_gamma[4][8];

__global__ void
hydro_fb_hourglass_force(const double* __restrict__ determ, const double* __restrict__ x8n,
                         const double* __restrict__ y8n, const double* __restrict__ z8n,
                         const double* __restrict__ dvdx, const double* __restrict__ dvdy,
                         const double* __restrict__ dvdz, const int* __restrict__ nodelist,
                         const double* __restrict__ ss, const double* __restrict__ elemMass,
                         const double* __restrict__ xd, const double* __restrict__ yd,
                         const double* __restrict__ zd, double* fx_elem, double* fy_elem,
                         double* fz_elem, double hourg, int numElem) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= numElem)
        return;
    double volinv = 1.0 / determ[e];
    double hourgam[8][4];
#pragma unroll
    for (int i1 = 0; i1 < 4; ++i1) {
        double hourmodx = 0.0, hourmody = 0.0, hourmodz = 0.0;
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            hourmodx += x8n[k * numElem + e] * c_gamma[i1][k];
            hourmody += y8n[k * numElem + e] * c_gamma[i1][k];
            hourmodz += z8n[k * numElem + e] * c_gamma[i1][k];
        }
#pragma unroll
        for (int k = 0; k < 8; ++k)
            hourgam[k][i1] = c_gamma[i1][k] - volinv * (dvdx[k * numElem + e] * hourmodx +
                                                        dvdy[k * numElem + e] * hourmody +
                                                        dvdz[k * numElem + e] * hourmodz);
    }
    double ss1 = ss[e];
    double mass1 = elemMass[e];
    double volume13 = cbrt(determ[e]);
    double coefficient = -hourg * 0.01 * ss1 * mass1 / volume13;

    double xd1[8], yd1[8], zd1[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) {
        int node = nodelist[k * numElem + e];
        xd1[k] = xd[node];
        yd1[k] = yd[node];
        zd1[k] = zd[node];
    }
    double hxx[4], hyy[4], hzz[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        hxx[i] = 0.0;
        hyy[i] = 0.0;
        hzz[i] = 0.0;
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            hxx[i] += hourgam[k][i] * xd1[k];
            hyy[i] += hourgam[k][i] * yd1[k];
            hzz[i] += hourgam[k][i] * zd1[k];
        }
    }
#pragma unroll
    for (int k = 0; k < 8; ++k) {
        fx_elem[k * numElem + e] = coefficient * (hourgam[k][0] * hxx[0] + hourgam[k][1] * hxx[1] +
                                                  hourgam[k][2] * hxx[2] + hourgam[k][3] * hxx[3]);
        fy_elem[k * numElem + e] = coefficient * (hourgam[k][0] * hyy[0] + hourgam[k][1] * hyy[1] +
                                                  hourgam[k][2] * hyy[2] + hourgam[k][3] * hyy[3]);
        fz_elem[k * numElem + e] = coefficient * (hourgam[k][0] * hzz[0] + hourgam[k][1] * hzz[1] +
                                                  hourgam[k][2] * hzz[2] + hourgam[k][3] * hzz[3]);
    }
}

int main(int argc, char** argv) {
    const std::vector<bench::InputSpec> inputs = {
        {"small", 32, "a 32^3-element cube (LULESH -s 32)"},
        {"large", 128, "a 128^3-element cube: 2.1M elements, 1.5 GB of arrays"},
        {"shuffled", 128, "the 128^3 cube with elements and nodes numbered at random"},
    };
    bench::Options opt = bench::parse(argc, argv, "hydro_force", inputs);
    const int edge = static_cast<int>(opt.size);
    const int numElem = edge * edge * edge;
    const int nodeEdge = edge + 1;
    const int numNode = nodeEdge * nodeEdge * nodeEdge;
    const double hourg = 0.1; // LULESH's hgcoef
    const double h = 1.125 / edge;

    std::vector<int> elemPerm, nodePerm;
    if (opt.input == "shuffled") {
        bench::Rng p1(opt.seed, 10), p2(opt.seed, 11);
        elemPerm = bench::permutation(numElem, p1);
        nodePerm = bench::permutation(numNode, p2);
    } else {
        elemPerm.resize(numElem);
        nodePerm.resize(numNode);
        for (int i = 0; i < numElem; ++i)
            elemPerm[i] = i;
        for (int i = 0; i < numNode; ++i)
            nodePerm[i] = i;
    }

    // The mesh: a cube of edge^3 hexahedra on a slightly perturbed lattice of spacing h.
    bench::Rng rng(opt.seed, 1);
    std::vector<double> nx(numNode), ny(numNode), nz(numNode), hxd(numNode), hyd(numNode),
        hzd(numNode);
    for (int s = 0; s < numNode; ++s) {
        int i = s % nodeEdge, j = (s / nodeEdge) % nodeEdge, k = s / (nodeEdge * nodeEdge);
        int id = nodePerm[s];
        nx[id] = h * (i + 0.1 * rng.uniformf(-1, 1));
        ny[id] = h * (j + 0.1 * rng.uniformf(-1, 1));
        nz[id] = h * (k + 0.1 * rng.uniformf(-1, 1));
        hxd[id] = rng.uniformf(-1, 1);
        hyd[id] = rng.uniformf(-1, 1);
        hzd[id] = rng.uniformf(-1, 1);
    }
    const size_t n8 = (size_t)8 * numElem;
    std::vector<int> hnodelist(n8);
    std::vector<double> hx8n(n8), hy8n(n8), hz8n(n8), hdvdx(n8), hdvdy(n8), hdvdz(n8);
    std::vector<double> hdeterm(numElem), hss(numElem), hmass(numElem);
    static const int corner[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                     {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
    for (int s = 0; s < numElem; ++s) {
        int i = s % edge, j = (s / edge) % edge, k = s / (edge * edge);
        int e = elemPerm[s];
        for (int c = 0; c < 8; ++c) {
            int node = nodePerm[((k + corner[c][2]) * nodeEdge + (j + corner[c][1])) * nodeEdge +
                                i + corner[c][0]];
            size_t at = (size_t)c * numElem + e;
            hnodelist[at] = node;
            hx8n[at] = nx[node];
            hy8n[at] = ny[node];
            hz8n[at] = nz[node];
            // Volume derivatives: about h^2 in size, sign by corner.
            hdvdx[at] = h * h * (corner[c][0] ? 0.25 : -0.25) * (1 + 0.1 * rng.uniformf(-1, 1));
            hdvdy[at] = h * h * (corner[c][1] ? 0.25 : -0.25) * (1 + 0.1 * rng.uniformf(-1, 1));
            hdvdz[at] = h * h * (corner[c][2] ? 0.25 : -0.25) * (1 + 0.1 * rng.uniformf(-1, 1));
        }
        hdeterm[e] = h * h * h * (1 + 0.05 * rng.uniformf(-1, 1));
        hss[e] = 1.0 + 0.1 * rng.uniformf(-1, 1);
        hmass[e] = hdeterm[e] * (1.0 + 0.05 * rng.uniformf(-1, 1));
    }
    const double gamma[4][8] = {{1., 1., -1., -1., -1., -1., 1., 1.},
                                {1., -1., -1., 1., -1., 1., 1., -1.},
                                {1., -1., 1., -1., 1., -1., 1., -1.},
                                {-1., 1., -1., 1., 1., -1., 1., -1.}};

    double *ddeterm = nullptr, *dx8n = nullptr, *dy8n = nullptr, *dz8n = nullptr, *ddvdx = nullptr,
           *ddvdy = nullptr, *ddvdz = nullptr, *dss = nullptr, *dmass = nullptr, *dxd = nullptr,
           *dyd = nullptr, *dzd = nullptr, *dfx = nullptr, *dfy = nullptr, *dfz = nullptr;
    int* dnodelist = nullptr;
    BENCH_CK(cudaMalloc(&ddeterm, numElem * sizeof(double)));
    BENCH_CK(cudaMalloc(&dx8n, n8 * sizeof(double)));
    BENCH_CK(cudaMalloc(&dy8n, n8 * sizeof(double)));
    BENCH_CK(cudaMalloc(&dz8n, n8 * sizeof(double)));
    BENCH_CK(cudaMalloc(&ddvdx, n8 * sizeof(double)));
    BENCH_CK(cudaMalloc(&ddvdy, n8 * sizeof(double)));
    BENCH_CK(cudaMalloc(&ddvdz, n8 * sizeof(double)));
    BENCH_CK(cudaMalloc(&dnodelist, n8 * sizeof(int)));
    BENCH_CK(cudaMalloc(&dss, numElem * sizeof(double)));
    BENCH_CK(cudaMalloc(&dmass, numElem * sizeof(double)));
    BENCH_CK(cudaMalloc(&dxd, numNode * sizeof(double)));
    BENCH_CK(cudaMalloc(&dyd, numNode * sizeof(double)));
    BENCH_CK(cudaMalloc(&dzd, numNode * sizeof(double)));
    BENCH_CK(cudaMalloc(&dfx, n8 * sizeof(double)));
    BENCH_CK(cudaMalloc(&dfy, n8 * sizeof(double)));
    BENCH_CK(cudaMalloc(&dfz, n8 * sizeof(double)));
    BENCH_CK(cudaMemcpy(ddeterm, hdeterm.data(), numElem * sizeof(double), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dx8n, hx8n.data(), n8 * sizeof(double), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dy8n, hy8n.data(), n8 * sizeof(double), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dz8n, hz8n.data(), n8 * sizeof(double), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(ddvdx, hdvdx.data(), n8 * sizeof(double), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(ddvdy, hdvdy.data(), n8 * sizeof(double), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(ddvdz, hdvdz.data(), n8 * sizeof(double), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dnodelist, hnodelist.data(), n8 * sizeof(int), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dss, hss.data(), numElem * sizeof(double), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dmass, hmass.data(), numElem * sizeof(double), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dxd, hxd.data(), numNode * sizeof(double), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dyd, hyd.data(), numNode * sizeof(double), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dzd, hzd.data(), numNode * sizeof(double), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpyToSymbol(c_gamma, gamma, sizeof gamma));

    const int block = 128;
    const int grid = (numElem + block - 1) / block;
    bench::Timer timer(opt);
    for (int run = 0; run < timer.runs(); ++run) {
        bench::poison(dfx, n8);
        bench::poison(dfy, n8);
        bench::poison(dfz, n8);
        timer.start();
        hydro_fb_hourglass_force<<<grid, block>>>(ddeterm, dx8n, dy8n, dz8n, ddvdx, ddvdy, ddvdz,
                                                  dnodelist, dss, dmass, dxd, dyd, dzd, dfx, dfy,
                                                  dfz, hourg, numElem);
        timer.lap("hydro_fb_hourglass_force");
        timer.stop();
    }

    std::vector<double> hfx(n8), hfy(n8), hfz(n8);
    BENCH_CK(cudaMemcpy(hfx.data(), dfx, n8 * sizeof(double), cudaMemcpyDeviceToHost));
    BENCH_CK(cudaMemcpy(hfy.data(), dfy, n8 * sizeof(double), cudaMemcpyDeviceToHost));
    BENCH_CK(cudaMemcpy(hfz.data(), dfz, n8 * sizeof(double), cudaMemcpyDeviceToHost));

    bench::Check check(opt.check);
    if (opt.check) {
        // The same formula in double on the CPU, with a magnitude alongside every sum:
        // tolerance 2^-40 (about 1e-12) times the magnitude of the terms.
        check.setTolerance("2^-40 * magnitude of the terms (sampled elements)");
        for (size_t es : bench::sampleIndices(numElem, 1 << 17, opt.seed)) {
            const size_t e = es;
            auto at = [&](int k) { return (size_t)k * numElem + e; };
            double volinv = 1.0 / hdeterm[e];
            double hg[8][4], hgAbs[8][4];
            for (int i1 = 0; i1 < 4; ++i1) {
                double m[3] = {0, 0, 0}, ma[3] = {0, 0, 0};
                for (int k = 0; k < 8; ++k) {
                    m[0] += hx8n[at(k)] * gamma[i1][k];
                    m[1] += hy8n[at(k)] * gamma[i1][k];
                    m[2] += hz8n[at(k)] * gamma[i1][k];
                    ma[0] += std::fabs(hx8n[at(k)]);
                    ma[1] += std::fabs(hy8n[at(k)]);
                    ma[2] += std::fabs(hz8n[at(k)]);
                }
                for (int k = 0; k < 8; ++k) {
                    hg[k][i1] = gamma[i1][k] - volinv * (hdvdx[at(k)] * m[0] + hdvdy[at(k)] * m[1] +
                                                         hdvdz[at(k)] * m[2]);
                    hgAbs[k][i1] = 1 + std::fabs(volinv) * (std::fabs(hdvdx[at(k)]) * ma[0] +
                                                            std::fabs(hdvdy[at(k)]) * ma[1] +
                                                            std::fabs(hdvdz[at(k)]) * ma[2]);
                }
            }
            double coef = -hourg * 0.01 * hss[e] * hmass[e] / std::cbrt(hdeterm[e]);
            const std::vector<double>* vel[3] = {&hxd, &hyd, &hzd};
            const std::vector<double>* got[3] = {&hfx, &hfy, &hfz};
            const char* names[3] = {"fx_elem", "fy_elem", "fz_elem"};
            for (int a = 0; a < 3; ++a) {
                double hh[4], hhAbs[4];
                for (int i = 0; i < 4; ++i) {
                    hh[i] = 0;
                    hhAbs[i] = 0;
                    for (int k = 0; k < 8; ++k) {
                        double v = (*vel[a])[hnodelist[at(k)]];
                        hh[i] += hg[k][i] * v;
                        hhAbs[i] += hgAbs[k][i] * std::fabs(v);
                    }
                }
                for (int k = 0; k < 8; ++k) {
                    double ref = 0, mag = 0;
                    for (int i = 0; i < 4; ++i) {
                        ref += hg[k][i] * hh[i];
                        mag += hgAbs[k][i] * hhAbs[i];
                    }
                    ref *= coef;
                    mag *= std::fabs(coef);
                    check.close(names[a], at(k), (*got[a])[at(k)], ref, 0x1.0p-40 * mag + 1e-300);
                }
            }
        }
    }
    bench::Report report(opt, timer);
    report.output("fx_elem", hfx);
    report.output("fy_elem", hfy);
    report.output("fz_elem", hfz);
    report.bytes(static_cast<double>(n8) * (6 * 8 + 4 + 3 * 8) + numElem * 3.0 * 8 +
                 numNode * 3.0 * 8);
    report.param("elements", numElem);
    report.param("nodes", numNode);
    int rc = report.finish(check);
    for (double* p :
         {ddeterm, dx8n, dy8n, dz8n, ddvdx, ddvdy, ddvdz, dss, dmass, dxd, dyd, dzd, dfx, dfy, dfz})
        BENCH_CK(cudaFree(p));
    BENCH_CK(cudaFree(dnodelist));
    return rc;
}

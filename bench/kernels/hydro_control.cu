// Hydrodynamics control kernel with 20 arrays (LULESH CalcMonotonicQRegionForElems, the
// monotonic limiter that controls the artificial viscosity): one thread per element of a
// region list computes, in each of the three logical directions, a slope limiter from the
// velocity gradients of the element and of its two neighbours (through six neighbour-index
// arrays and the boundary-condition mask), then the linear and quadratic viscosity terms.
// Double precision, as LULESH.
// Arrays: regElemlist, elemBC, lxim, lxip, letam, letap, lzetam, lzetap (int); delv_xi,
// delv_eta, delv_zeta (gathered for the neighbours too), delx_xi, delx_eta, delx_zeta, vdov,
// elemMass, volo, vnew (double) -- all read; qq, ql (double, written, at the element's index).
// Original placement: every read-only array `const __restrict__`; qq, ql written.
#include "common/bench.h"

// LULESH's boundary-condition bits.
constexpr int XI_M = 0x00007, XI_M_SYMM = 0x00001, XI_M_FREE = 0x00002, XI_M_COMM = 0x00004;
constexpr int XI_P = 0x00038, XI_P_SYMM = 0x00008, XI_P_FREE = 0x00010, XI_P_COMM = 0x00020;
constexpr int ETA_M = 0x001c0, ETA_M_SYMM = 0x00040, ETA_M_FREE = 0x00080, ETA_M_COMM = 0x00100;
constexpr int ETA_P = 0x00e00, ETA_P_SYMM = 0x00200, ETA_P_FREE = 0x00400, ETA_P_COMM = 0x00800;
constexpr int ZETA_M = 0x07000, ZETA_M_SYMM = 0x01000, ZETA_M_FREE = 0x02000, ZETA_M_COMM = 0x04000;
constexpr int ZETA_P = 0x38000, ZETA_P_SYMM = 0x08000, ZETA_P_FREE = 0x10000, ZETA_P_COMM = 0x20000;

// The limiter of one direction from the scaled gradients on both sides.
__device__ inline double limiter(double delvm, double delvp, double norm, double limiterMult,
                                 double maxSlope) {
    delvm *= norm;
    delvp *= norm;
    double phi = 0.5 * (delvm + delvp);
    delvm *= limiterMult;
    delvp *= limiterMult;
    if (delvm < phi)
        phi = delvm;
    if (delvp < phi)
        phi = delvp;
    if (phi < 0.0)
        phi = 0.0;
    if (phi > maxSlope)
        phi = maxSlope;
    return phi;
}

__global__ void
hydro_monotonic_q(const int* __restrict__ regElemlist, const int* __restrict__ elemBC,
                  const int* __restrict__ lxim, const int* __restrict__ lxip,
                  const int* __restrict__ letam, const int* __restrict__ letap,
                  const int* __restrict__ lzetam, const int* __restrict__ lzetap,
                  const double* __restrict__ delv_xi, const double* __restrict__ delv_eta,
                  const double* __restrict__ delv_zeta, const double* __restrict__ delx_xi,
                  const double* __restrict__ delx_eta, const double* __restrict__ delx_zeta,
                  const double* __restrict__ vdov, const double* __restrict__ elemMass,
                  const double* __restrict__ volo, const double* __restrict__ vnew, double* qq,
                  double* ql, double monoqLimiterMult, double monoqMaxSlope, double qlcMonoq,
                  double qqcMonoq, double ptiny, int regElemSize) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= regElemSize)
        return;
    int ielem = regElemlist[i];
    int bcMask = elemBC[ielem];
    double delvm = 0.0, delvp = 0.0;

    // phixi
    double norm = 1.0 / (delv_xi[ielem] + ptiny);
    switch (bcMask & XI_M) {
    case XI_M_COMM:
    case 0:
        delvm = delv_xi[lxim[ielem]];
        break;
    case XI_M_SYMM:
        delvm = delv_xi[ielem];
        break;
    case XI_M_FREE:
        delvm = 0.0;
        break;
    default:
        delvm = 0.0;
        break;
    }
    switch (bcMask & XI_P) {
    case XI_P_COMM:
    case 0:
        delvp = delv_xi[lxip[ielem]];
        break;
    case XI_P_SYMM:
        delvp = delv_xi[ielem];
        break;
    case XI_P_FREE:
        delvp = 0.0;
        break;
    default:
        delvp = 0.0;
        break;
    }
    double phixi = limiter(delvm, delvp, norm, monoqLimiterMult, monoqMaxSlope);

    // phieta
    norm = 1.0 / (delv_eta[ielem] + ptiny);
    switch (bcMask & ETA_M) {
    case ETA_M_COMM:
    case 0:
        delvm = delv_eta[letam[ielem]];
        break;
    case ETA_M_SYMM:
        delvm = delv_eta[ielem];
        break;
    case ETA_M_FREE:
        delvm = 0.0;
        break;
    default:
        delvm = 0.0;
        break;
    }
    switch (bcMask & ETA_P) {
    case ETA_P_COMM:
    case 0:
        delvp = delv_eta[letap[ielem]];
        break;
    case ETA_P_SYMM:
        delvp = delv_eta[ielem];
        break;
    case ETA_P_FREE:
        delvp = 0.0;
        break;
    default:
        delvp = 0.0;
        break;
    }
    double phieta = limiter(delvm, delvp, norm, monoqLimiterMult, monoqMaxSlope);

    // phizeta
    norm = 1.0 / (delv_zeta[ielem] + ptiny);
    switch (bcMask & ZETA_M) {
    case ZETA_M_COMM:
    case 0:
        delvm = delv_zeta[lzetam[ielem]];
        break;
    case ZETA_M_SYMM:
        delvm = delv_zeta[ielem];
        break;
    case ZETA_M_FREE:
        delvm = 0.0;
        break;
    default:
        delvm = 0.0;
        break;
    }
    switch (bcMask & ZETA_P) {
    case ZETA_P_COMM:
    case 0:
        delvp = delv_zeta[lzetap[ielem]];
        break;
    case ZETA_P_SYMM:
        delvp = delv_zeta[ielem];
        break;
    case ZETA_P_FREE:
        delvp = 0.0;
        break;
    default:
        delvp = 0.0;
        break;
    }
    double phizeta = limiter(delvm, delvp, norm, monoqLimiterMult, monoqMaxSlope);

    // Remove length scale
    double qlin, qquad;
    if (vdov[ielem] > 0.0) {
        qlin = 0.0;
        qquad = 0.0;
    } else {
        double delvxxi = delv_xi[ielem] * delx_xi[ielem];
        double delvxeta = delv_eta[ielem] * delx_eta[ielem];
        double delvxzeta = delv_zeta[ielem] * delx_zeta[ielem];
        if (delvxxi > 0.0)
            delvxxi = 0.0;
        if (delvxeta > 0.0)
            delvxeta = 0.0;
        if (delvxzeta > 0.0)
            delvxzeta = 0.0;
        double rho = elemMass[ielem] / (volo[ielem] * vnew[ielem]);
        qlin = -qlcMonoq * rho *
               (delvxxi * (1.0 - phixi) + delvxeta * (1.0 - phieta) + delvxzeta * (1.0 - phizeta));
        qquad = qqcMonoq * rho *
                (delvxxi * delvxxi * (1.0 - phixi * phixi) +
                 delvxeta * delvxeta * (1.0 - phieta * phieta) +
                 delvxzeta * delvxzeta * (1.0 - phizeta * phizeta));
    }
    qq[ielem] = qquad;
    ql[ielem] = qlin;
}

int main(int argc, char** argv) {
    const std::vector<bench::InputSpec> inputs = {
        {"small", 32, "a 32^3-element cube, one region holding every element"},
        {"large", 160, "a 160^3-element cube (4.1M elements, 590 MB of arrays), one region"},
        {"region", 160, "the 160^3 cube cut into 11 random regions; the kernel runs one (1/11)"},
        {"shuffled", 160, "the 160^3 cube with elements numbered at random: neighbours scattered"},
    };
    bench::Options opt = bench::parse(argc, argv, "hydro_control", inputs);
    const int edge = static_cast<int>(opt.size);
    const int numElem = edge * edge * edge;
    const double monoqLimiterMult = 2.0, monoqMaxSlope = 1.0, qlcMonoq = 0.5, qqcMonoq = 2.0 / 3.0,
                 ptiny = 1e-36;

    std::vector<int> perm;
    if (opt.input == "shuffled") {
        bench::Rng p(opt.seed, 10);
        perm = bench::permutation(numElem, p);
    } else {
        perm.resize(numElem);
        for (int i = 0; i < numElem; ++i)
            perm[i] = i;
    }
    // Connectivity as LULESH builds it: symmetry planes at the three faces through the origin,
    // free surfaces on the opposite faces; a boundary element is its own neighbour there.
    std::vector<int> hbc(numElem), hl[6];
    for (auto& v : hl)
        v.resize(numElem);
    for (int s = 0; s < numElem; ++s) {
        int i = s % edge, j = (s / edge) % edge, k = s / (edge * edge);
        int e = perm[s], bc = 0;
        auto id = [&](int ii, int jj, int kk) { return perm[(kk * edge + jj) * edge + ii]; };
        hl[0][e] = i > 0 ? id(i - 1, j, k) : e;
        hl[1][e] = i < edge - 1 ? id(i + 1, j, k) : e;
        hl[2][e] = j > 0 ? id(i, j - 1, k) : e;
        hl[3][e] = j < edge - 1 ? id(i, j + 1, k) : e;
        hl[4][e] = k > 0 ? id(i, j, k - 1) : e;
        hl[5][e] = k < edge - 1 ? id(i, j, k + 1) : e;
        if (i == 0)
            bc |= XI_M_SYMM;
        if (i == edge - 1)
            bc |= XI_P_FREE;
        if (j == 0)
            bc |= ETA_M_SYMM;
        if (j == edge - 1)
            bc |= ETA_P_FREE;
        if (k == 0)
            bc |= ZETA_M_SYMM;
        if (k == edge - 1)
            bc |= ZETA_P_FREE;
        hbc[e] = bc;
    }
    // Region list: every element, or (region) the elements of one of 11 random regions, in
    // ascending order as LULESH lists them.
    std::vector<int> hreg;
    if (opt.input == "region") {
        bench::Rng r(opt.seed, 12);
        for (int e = 0; e < numElem; ++e)
            if (r.below(11) == 0)
                hreg.push_back(e);
    } else {
        hreg.resize(numElem);
        for (int e = 0; e < numElem; ++e)
            hreg[e] = e;
    }
    const int regElemSize = static_cast<int>(hreg.size());

    // Fields: gradients of both signs (compression and expansion), half the elements
    // compressing (vdov <= 0, where the viscosity is computed).
    bench::Rng rng(opt.seed, 1);
    std::vector<double> hdv[3], hdx[3], hvdov(numElem), hmass(numElem), hvolo(numElem),
        hvnew(numElem);
    for (int a = 0; a < 3; ++a) {
        hdv[a].resize(numElem);
        hdx[a].resize(numElem);
    }
    for (int e = 0; e < numElem; ++e) {
        for (int a = 0; a < 3; ++a) {
            hdv[a][e] = rng.uniformf(-1, 1);
            hdx[a][e] = (1.0 + 0.1 * rng.uniformf(-1, 1)) / edge;
        }
        hvdov[e] = rng.uniformf(-1, 1);
        hvolo[e] = (1.0 + 0.05 * rng.uniformf(-1, 1)) / numElem;
        hmass[e] = hvolo[e] * (1.0 + 0.05 * rng.uniformf(-1, 1));
        hvnew[e] = 1.0 + 0.1 * rng.uniformf(-1, 1);
    }

    int *dreg = nullptr, *dbc = nullptr,
        *dl[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
    double *ddv[3] = {nullptr, nullptr, nullptr}, *ddx[3] = {nullptr, nullptr, nullptr};
    double *dvdov = nullptr, *dmass = nullptr, *dvolo = nullptr, *dvnew = nullptr, *dqq = nullptr,
           *dql = nullptr;
    const size_t ib = numElem * sizeof(int), db = numElem * sizeof(double);
    BENCH_CK(cudaMalloc(&dreg, std::max<size_t>(1, hreg.size()) * sizeof(int)));
    BENCH_CK(cudaMalloc(&dbc, ib));
    for (int a = 0; a < 6; ++a)
        BENCH_CK(cudaMalloc(&dl[a], ib));
    for (int a = 0; a < 3; ++a) {
        BENCH_CK(cudaMalloc(&ddv[a], db));
        BENCH_CK(cudaMalloc(&ddx[a], db));
    }
    BENCH_CK(cudaMalloc(&dvdov, db));
    BENCH_CK(cudaMalloc(&dmass, db));
    BENCH_CK(cudaMalloc(&dvolo, db));
    BENCH_CK(cudaMalloc(&dvnew, db));
    BENCH_CK(cudaMalloc(&dqq, db));
    BENCH_CK(cudaMalloc(&dql, db));
    BENCH_CK(cudaMemcpy(dreg, hreg.data(), hreg.size() * sizeof(int), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dbc, hbc.data(), ib, cudaMemcpyHostToDevice));
    for (int a = 0; a < 6; ++a)
        BENCH_CK(cudaMemcpy(dl[a], hl[a].data(), ib, cudaMemcpyHostToDevice));
    for (int a = 0; a < 3; ++a) {
        BENCH_CK(cudaMemcpy(ddv[a], hdv[a].data(), db, cudaMemcpyHostToDevice));
        BENCH_CK(cudaMemcpy(ddx[a], hdx[a].data(), db, cudaMemcpyHostToDevice));
    }
    BENCH_CK(cudaMemcpy(dvdov, hvdov.data(), db, cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dmass, hmass.data(), db, cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dvolo, hvolo.data(), db, cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dvnew, hvnew.data(), db, cudaMemcpyHostToDevice));

    const int block = 128;
    const int grid = std::max(1, (regElemSize + block - 1) / block);
    bench::Timer timer(opt);
    for (int run = 0; run < timer.runs(); ++run) {
        bench::poison(dqq, numElem);
        bench::poison(dql, numElem);
        timer.start();
        hydro_monotonic_q<<<grid, block>>>(dreg, dbc, dl[0], dl[1], dl[2], dl[3], dl[4], dl[5],
                                           ddv[0], ddv[1], ddv[2], ddx[0], ddx[1], ddx[2], dvdov,
                                           dmass, dvolo, dvnew, dqq, dql, monoqLimiterMult,
                                           monoqMaxSlope, qlcMonoq, qqcMonoq, ptiny, regElemSize);
        timer.lap("hydro_monotonic_q");
        timer.stop();
    }

    std::vector<double> hqq(numElem), hql(numElem);
    BENCH_CK(cudaMemcpy(hqq.data(), dqq, db, cudaMemcpyDeviceToHost));
    BENCH_CK(cudaMemcpy(hql.data(), dql, db, cudaMemcpyDeviceToHost));
    // Elements outside the region keep the poison; report the region's values only.
    std::vector<double> outQq(regElemSize), outQl(regElemSize);
    for (int i = 0; i < regElemSize; ++i) {
        outQq[i] = hqq[hreg[i]];
        outQl[i] = hql[hreg[i]];
    }

    bench::Check check(opt.check);
    if (opt.check) {
        check.setTolerance("2^-44 * magnitude of the terms (every region element)");
        auto lim = [&](double m, double p, double norm) {
            m *= norm;
            p *= norm;
            double phi = 0.5 * (m + p);
            m *= monoqLimiterMult;
            p *= monoqLimiterMult;
            phi = std::min(phi, m);
            phi = std::min(phi, p);
            return std::min(std::max(phi, 0.0), monoqMaxSlope);
        };
        const int maskM[3] = {XI_M, ETA_M, ZETA_M}, symmM[3] = {XI_M_SYMM, ETA_M_SYMM, ZETA_M_SYMM},
                  freeM[3] = {XI_M_FREE, ETA_M_FREE, ZETA_M_FREE};
        const int maskP[3] = {XI_P, ETA_P, ZETA_P}, symmP[3] = {XI_P_SYMM, ETA_P_SYMM, ZETA_P_SYMM},
                  freeP[3] = {XI_P_FREE, ETA_P_FREE, ZETA_P_FREE};
        for (int i = 0; i < regElemSize; ++i) {
            int e = hreg[i];
            double phi[3], lin = 0, quad = 0, linMag = 0, quadMag = 0;
            for (int a = 0; a < 3; ++a) {
                int bm = hbc[e] & maskM[a], bp = hbc[e] & maskP[a];
                double m = bm == symmM[a] ? hdv[a][e] : bm == freeM[a] ? 0.0 : hdv[a][hl[2 * a][e]];
                double p = bp == symmP[a]   ? hdv[a][e]
                           : bp == freeP[a] ? 0.0
                                            : hdv[a][hl[2 * a + 1][e]];
                phi[a] = lim(m, p, 1.0 / (hdv[a][e] + ptiny));
            }
            if (hvdov[e] <= 0.0) {
                double rho = hmass[e] / (hvolo[e] * hvnew[e]);
                for (int a = 0; a < 3; ++a) {
                    double d = std::min(hdv[a][e] * hdx[a][e], 0.0);
                    lin += d * (1.0 - phi[a]);
                    linMag += std::fabs(d) * (1.0 + std::fabs(phi[a]));
                    quad += d * d * (1.0 - phi[a] * phi[a]);
                    quadMag += d * d * (1.0 + phi[a] * phi[a]);
                }
                lin *= -qlcMonoq * rho;
                linMag *= qlcMonoq * rho;
                quad *= qqcMonoq * rho;
                quadMag *= qqcMonoq * rho;
            }
            check.close("qq", e, hqq[e], quad, 0x1.0p-44 * quadMag + 1e-300);
            check.close("ql", e, hql[e], lin, 0x1.0p-44 * linMag + 1e-300);
        }
    }
    bench::Report report(opt, timer);
    report.output("qq", outQq);
    report.output("ql", outQl);
    report.bytes(static_cast<double>(regElemSize) * (8 * 4 + 12 * 8));
    report.param("elements", numElem);
    report.param("region_elements", regElemSize);
    int rc = report.finish(check);
    BENCH_CK(cudaFree(dreg));
    BENCH_CK(cudaFree(dbc));
    for (int a = 0; a < 6; ++a)
        BENCH_CK(cudaFree(dl[a]));
    for (int a = 0; a < 3; ++a) {
        BENCH_CK(cudaFree(ddv[a]));
        BENCH_CK(cudaFree(ddx[a]));
    }
    for (double* p : {dvdov, dmass, dvolo, dvnew, dqq, dql})
        BENCH_CK(cudaFree(p));
    return rc;
}

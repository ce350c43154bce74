// Unstructured-mesh flux computation (Rodinia cfd, euler3d compute_flux): one thread per cell
// reads its own conserved variables, then for each of its 4 faces the neighbour's (through the
// neighbour index; -1 a wall, -2 the far field) and accumulates the face fluxes with artificial
// viscosity. Structure-of-arrays layout as in Rodinia: variables[i + v * nelr] and so on.
// Arrays: elementsSurroundingElements (int, 4 per cell), normals (12 per cell), variables
// (5 per cell, read for the cell and gathered for its neighbours), fluxes (5 per cell,
// written); in constant memory the far-field state ff_variable (5) and its flux contributions
// ff_flux_contribution (12), as in Rodinia.
// Original placement: the per-cell arrays `const __restrict__`, the far-field values in
// constant memory (every lane reads the same value); fluxes written.
#include "common/bench.h"

constexpr float kGamma = 1.4f;
constexpr int kNdim = 3;
constexpr int kNnb = 4;
constexpr int kVarDensity = 0;
constexpr int kVarMomentum = 1;
constexpr int kVarDensityEnergy = kVarMomentum + kNdim;
constexpr int kNvar = kVarDensityEnergy + 1;

__constant__ float ff_variable[kNvar];
// Flux contributions of the far-field state: momentum x, y, z and density energy, 3 each.
__constant__ float ff_flux_contribution[4 * 3];

struct Vec3 {
    float x, y, z;
};

__device__ inline float pressureOf(float density, float densityEnergy, float speedSqd) {
    return (kGamma - 1.0f) * (densityEnergy - 0.5f * density * speedSqd);
}

__device__ inline float speedOfSound(float density, float pressure) {
    return sqrtf(kGamma * pressure / density);
}

// Flux contributions of one state: fcx/fcy/fcz the momentum rows, fce the density energy.
__device__ inline void fluxContribution(Vec3 momentum, float densityEnergy, float pressure,
                                        Vec3 velocity, Vec3& fcx, Vec3& fcy, Vec3& fcz, Vec3& fce) {
    fcx.x = velocity.x * momentum.x + pressure;
    fcx.y = velocity.x * momentum.y;
    fcx.z = velocity.x * momentum.z;
    fcy.x = fcx.y;
    fcy.y = velocity.y * momentum.y + pressure;
    fcy.z = velocity.y * momentum.z;
    fcz.x = fcx.z;
    fcz.y = fcy.z;
    fcz.z = velocity.z * momentum.z + pressure;
    float dep = densityEnergy + pressure;
    fce.x = velocity.x * dep;
    fce.y = velocity.y * dep;
    fce.z = velocity.z * dep;
}

__global__ void compute_flux(const int* __restrict__ elementsSurroundingElements,
                             const float* __restrict__ normals, const float* __restrict__ variables,
                             float* fluxes, int nelr) {
    const float smoothingCoefficient = 0.2f;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nelr)
        return;

    float densityI = variables[i + kVarDensity * nelr];
    Vec3 momentumI = {variables[i + (kVarMomentum + 0) * nelr],
                      variables[i + (kVarMomentum + 1) * nelr],
                      variables[i + (kVarMomentum + 2) * nelr]};
    float densityEnergyI = variables[i + kVarDensityEnergy * nelr];
    Vec3 velocityI = {momentumI.x / densityI, momentumI.y / densityI, momentumI.z / densityI};
    float speedSqdI =
        velocityI.x * velocityI.x + velocityI.y * velocityI.y + velocityI.z * velocityI.z;
    float speedI = sqrtf(speedSqdI);
    float pressureI = pressureOf(densityI, densityEnergyI, speedSqdI);
    float speedOfSoundI = speedOfSound(densityI, pressureI);
    Vec3 fcxI, fcyI, fczI, fceI;
    fluxContribution(momentumI, densityEnergyI, pressureI, velocityI, fcxI, fcyI, fczI, fceI);

    float fluxDensity = 0.0f, fluxDensityEnergy = 0.0f;
    Vec3 fluxMomentum = {0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int j = 0; j < kNnb; ++j) {
        int nb = elementsSurroundingElements[i + j * nelr];
        Vec3 normal = {normals[i + (j + 0 * kNnb) * nelr], normals[i + (j + 1 * kNnb) * nelr],
                       normals[i + (j + 2 * kNnb) * nelr]};
        float normalLen = sqrtf(normal.x * normal.x + normal.y * normal.y + normal.z * normal.z);
        if (nb >= 0) { // an interior face
            float densityNb = variables[nb + kVarDensity * nelr];
            Vec3 momentumNb = {variables[nb + (kVarMomentum + 0) * nelr],
                               variables[nb + (kVarMomentum + 1) * nelr],
                               variables[nb + (kVarMomentum + 2) * nelr]};
            float densityEnergyNb = variables[nb + kVarDensityEnergy * nelr];
            Vec3 velocityNb = {momentumNb.x / densityNb, momentumNb.y / densityNb,
                               momentumNb.z / densityNb};
            float speedSqdNb = velocityNb.x * velocityNb.x + velocityNb.y * velocityNb.y +
                               velocityNb.z * velocityNb.z;
            float pressureNb = pressureOf(densityNb, densityEnergyNb, speedSqdNb);
            float speedOfSoundNb = speedOfSound(densityNb, pressureNb);
            Vec3 fcxNb, fcyNb, fczNb, fceNb;
            fluxContribution(momentumNb, densityEnergyNb, pressureNb, velocityNb, fcxNb, fcyNb,
                             fczNb, fceNb);
            // artificial viscosity
            float factor = -normalLen * smoothingCoefficient * 0.5f *
                           (speedI + sqrtf(speedSqdNb) + speedOfSoundI + speedOfSoundNb);
            fluxDensity += factor * (densityI - densityNb);
            fluxDensityEnergy += factor * (densityEnergyI - densityEnergyNb);
            fluxMomentum.x += factor * (momentumI.x - momentumNb.x);
            fluxMomentum.y += factor * (momentumI.y - momentumNb.y);
            fluxMomentum.z += factor * (momentumI.z - momentumNb.z);
            // accumulate cell-centred fluxes
            factor = 0.5f * normal.x;
            fluxDensity += factor * (momentumNb.x + momentumI.x);
            fluxDensityEnergy += factor * (fceNb.x + fceI.x);
            fluxMomentum.x += factor * (fcxNb.x + fcxI.x);
            fluxMomentum.y += factor * (fcyNb.x + fcyI.x);
            fluxMomentum.z += factor * (fczNb.x + fczI.x);
            factor = 0.5f * normal.y;
            fluxDensity += factor * (momentumNb.y + momentumI.y);
            fluxDensityEnergy += factor * (fceNb.y + fceI.y);
            fluxMomentum.x += factor * (fcxNb.y + fcxI.y);
            fluxMomentum.y += factor * (fcyNb.y + fcyI.y);
            fluxMomentum.z += factor * (fczNb.y + fczI.y);
            factor = 0.5f * normal.z;
            fluxDensity += factor * (momentumNb.z + momentumI.z);
            fluxDensityEnergy += factor * (fceNb.z + fceI.z);
            fluxMomentum.x += factor * (fcxNb.z + fcxI.z);
            fluxMomentum.y += factor * (fcyNb.z + fcyI.z);
            fluxMomentum.z += factor * (fczNb.z + fczI.z);
        } else if (nb == -1) { // a wing boundary
            fluxMomentum.x += normal.x * pressureI;
            fluxMomentum.y += normal.y * pressureI;
            fluxMomentum.z += normal.z * pressureI;
        } else if (nb == -2) { // a far-field boundary
            float factor = 0.5f * normal.x;
            fluxDensity += factor * (ff_variable[kVarMomentum + 0] + momentumI.x);
            fluxDensityEnergy += factor * (ff_flux_contribution[9 + 0] + fceI.x);
            fluxMomentum.x += factor * (ff_flux_contribution[0 + 0] + fcxI.x);
            fluxMomentum.y += factor * (ff_flux_contribution[3 + 0] + fcyI.x);
            fluxMomentum.z += factor * (ff_flux_contribution[6 + 0] + fczI.x);
            factor = 0.5f * normal.y;
            fluxDensity += factor * (ff_variable[kVarMomentum + 1] + momentumI.y);
            fluxDensityEnergy += factor * (ff_flux_contribution[9 + 1] + fceI.y);
            fluxMomentum.x += factor * (ff_flux_contribution[0 + 1] + fcxI.y);
            fluxMomentum.y += factor * (ff_flux_contribution[3 + 1] + fcyI.y);
            fluxMomentum.z += factor * (ff_flux_contribution[6 + 1] + fczI.y);
            factor = 0.5f * normal.z;
            fluxDensity += factor * (ff_variable[kVarMomentum + 2] + momentumI.z);
            fluxDensityEnergy += factor * (ff_flux_contribution[9 + 2] + fceI.z);
            fluxMomentum.x += factor * (ff_flux_contribution[0 + 2] + fcxI.z);
            fluxMomentum.y += factor * (ff_flux_contribution[3 + 2] + fcyI.z);
            fluxMomentum.z += factor * (ff_flux_contribution[6 + 2] + fczI.z);
        }
    }
    fluxes[i + kVarDensity * nelr] = fluxDensity;
    fluxes[i + (kVarMomentum + 0) * nelr] = fluxMomentum.x;
    fluxes[i + (kVarMomentum + 1) * nelr] = fluxMomentum.y;
    fluxes[i + (kVarMomentum + 2) * nelr] = fluxMomentum.z;
    fluxes[i + kVarDensityEnergy * nelr] = fluxDensityEnergy;
}

namespace {

// Double-precision reference of one cell's fluxes; mag receives, per output, the sum of the
// magnitudes of the terms (for the tolerance).
struct State {
    double rho, m[3], e, p, v[3], c, speed, fc[4][3]; // fc: momentum x, y, z, density energy
};

State stateOf(double rho, const double m[3], double e) {
    State s{};
    s.rho = rho;
    s.e = e;
    double sq = 0;
    for (int a = 0; a < 3; ++a) {
        s.m[a] = m[a];
        s.v[a] = m[a] / rho;
        sq += s.v[a] * s.v[a];
    }
    s.speed = std::sqrt(sq);
    s.p = (kGamma - 1.0) * (e - 0.5 * rho * sq);
    s.c = std::sqrt(kGamma * s.p / rho);
    for (int r = 0; r < 3; ++r)
        for (int a = 0; a < 3; ++a)
            s.fc[r][a] = s.v[r] * s.m[a] + (r == a ? s.p : 0.0);
    for (int a = 0; a < 3; ++a)
        s.fc[3][a] = s.v[a] * (e + s.p);
    return s;
}

} // namespace

int main(int argc, char** argv) {
    const std::vector<bench::InputSpec> inputs = {
        {"small", 97046, "97K cells (Rodinia's fvcorr.domn.097K size) on a grid-ordered mesh"},
        {"grid", 4 << 20, "4M cells, neighbours numbered near each other (a grid-ordered mesh)"},
        {"shuffled", 4 << 20, "the grid mesh with cells numbered at random"},
        {"random", 4 << 20, "4M cells with random neighbours: no locality at all"},
    };
    bench::Options opt = bench::parse(argc, argv, "cfd", inputs);
    const int nelr = static_cast<int>(opt.size);
    const int nx = std::max(1, static_cast<int>(std::sqrt(static_cast<double>(nelr))));

    // Connectivity: cells of an nx-wide grid (the last row may be short), faces left, right,
    // down, up; the left and right edges are far field (-2), the bottom and top edges walls (-1).
    bench::Rng rng(opt.seed, 1);
    std::vector<int> hnb((size_t)kNnb * nelr);
    std::vector<int> perm;
    if (opt.input == "shuffled") {
        bench::Rng prng(opt.seed, 2);
        perm = bench::permutation(nelr, prng);
    } else {
        perm.resize(nelr);
        for (int i = 0; i < nelr; ++i)
            perm[i] = i;
    }
    for (int c = 0; c < nelr; ++c) {
        int x = c % nx, y = c / nx;
        int nbs[kNnb] = {x > 0 ? c - 1 : -2, (x < nx - 1 && c + 1 < nelr) ? c + 1 : -2,
                         y > 0 ? c - nx : -1, c + nx < nelr ? c + nx : -1};
        for (int j = 0; j < kNnb; ++j) {
            int nb = nbs[j];
            if (opt.input == "random" && nb >= 0)
                nb = static_cast<int>(rng.below(nelr));
            hnb[perm[c] + (size_t)j * nelr] = nb >= 0 ? perm[nb] : nb;
        }
    }
    // Face normals (area-weighted, roughly outward) and a smooth-ish flow state.
    const double base[kNnb][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}};
    std::vector<float> hnormals((size_t)kNnb * kNdim * nelr), hvar((size_t)kNvar * nelr);
    bench::Rng nrng(opt.seed, 3), vrng(opt.seed, 4);
    for (int c = 0; c < nelr; ++c) {
        for (int j = 0; j < kNnb; ++j)
            for (int a = 0; a < kNdim; ++a)
                hnormals[c + (size_t)(j + a * kNnb) * nelr] =
                    static_cast<float>(0.01 * (base[j][a] + 0.2 * nrng.uniformf(-1, 1)));
        double rho = 1.0 + 0.1 * vrng.uniformf(-1, 1);
        double v[3] = {0.5 + 0.1 * vrng.uniformf(-1, 1), 0.1 * vrng.uniformf(-1, 1),
                       0.1 * vrng.uniformf(-1, 1)};
        double p = 1.0 + 0.1 * vrng.uniformf(-1, 1);
        hvar[c + (size_t)kVarDensity * nelr] = static_cast<float>(rho);
        for (int a = 0; a < 3; ++a)
            hvar[c + (size_t)(kVarMomentum + a) * nelr] = static_cast<float>(rho * v[a]);
        hvar[c + (size_t)kVarDensityEnergy * nelr] = static_cast<float>(
            p / (kGamma - 1.0) + 0.5 * rho * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
    }
    // Far field: density 1, velocity (0.5, 0, 0), pressure 1.
    float hff[kNvar];
    float hffc[12];
    {
        double m[3] = {0.5, 0, 0};
        double e = 1.0 / (kGamma - 1.0) + 0.5 * 0.25;
        State s = stateOf(1.0, m, e);
        hff[kVarDensity] = 1.0f;
        for (int a = 0; a < 3; ++a)
            hff[kVarMomentum + a] = static_cast<float>(m[a]);
        hff[kVarDensityEnergy] = static_cast<float>(e);
        for (int r = 0; r < 4; ++r)
            for (int a = 0; a < 3; ++a)
                hffc[r * 3 + a] = static_cast<float>(s.fc[r][a]);
    }

    int* dnb = nullptr;
    float *dnormals = nullptr, *dvar = nullptr, *dflux = nullptr;
    BENCH_CK(cudaMalloc(&dnb, hnb.size() * sizeof(int)));
    BENCH_CK(cudaMalloc(&dnormals, hnormals.size() * sizeof(float)));
    BENCH_CK(cudaMalloc(&dvar, hvar.size() * sizeof(float)));
    BENCH_CK(cudaMalloc(&dflux, hvar.size() * sizeof(float)));
    BENCH_CK(cudaMemcpy(dnb, hnb.data(), hnb.size() * sizeof(int), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dnormals, hnormals.data(), hnormals.size() * sizeof(float),
                        cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpy(dvar, hvar.data(), hvar.size() * sizeof(float), cudaMemcpyHostToDevice));
    BENCH_CK(cudaMemcpyToSymbol(ff_variable, hff, sizeof hff));
    BENCH_CK(cudaMemcpyToSymbol(ff_flux_contribution, hffc, sizeof hffc));

    const int block = 192; // Rodinia's BLOCK_SIZE_3
    const int grid = (nelr + block - 1) / block;
    bench::Timer timer(opt);
    for (int run = 0; run < timer.runs(); ++run) {
        bench::poison(dflux, hvar.size());
        timer.start();
        compute_flux<<<grid, block>>>(dnb, dnormals, dvar, dflux, nelr);
        timer.lap("compute_flux");
        timer.stop();
    }

    std::vector<float> hflux(hvar.size());
    BENCH_CK(cudaMemcpy(hflux.data(), dflux, hflux.size() * sizeof(float), cudaMemcpyDeviceToHost));

    bench::Check check(opt.check);
    if (opt.check) {
        // Double reference from the same float inputs; about 60 float operations feed each
        // output, so the tolerance is 256 u times the sum of the terms' magnitudes.
        check.setTolerance("256 * 2^-24 * sum|terms| (sampled cells)");
        auto load = [&](int c) {
            double m[3];
            for (int a = 0; a < 3; ++a)
                m[a] = hvar[c + (size_t)(kVarMomentum + a) * nelr];
            return stateOf(hvar[c + (size_t)kVarDensity * nelr], m,
                           hvar[c + (size_t)kVarDensityEnergy * nelr]);
        };
        for (size_t ci : bench::sampleIndices(nelr, 1 << 18, opt.seed)) {
            const int c = static_cast<int>(ci);
            State si = load(c);
            double flux[kNvar] = {0, 0, 0, 0, 0}, mag[kNvar] = {0, 0, 0, 0, 0};
            auto add = [&](int v, double term) {
                flux[v] += term;
                mag[v] += std::fabs(term);
            };
            for (int j = 0; j < kNnb; ++j) {
                int nb = hnb[c + (size_t)j * nelr];
                double nrm[3];
                for (int a = 0; a < 3; ++a)
                    nrm[a] = hnormals[c + (size_t)(j + a * kNnb) * nelr];
                double len = std::sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
                if (nb >= 0) {
                    State sn = load(nb);
                    double f = -len * 0.2 * 0.5 * (si.speed + sn.speed + si.c + sn.c);
                    add(kVarDensity, f * (si.rho - sn.rho));
                    add(kVarDensityEnergy, f * (si.e - sn.e));
                    for (int a = 0; a < 3; ++a)
                        add(kVarMomentum + a, f * (si.m[a] - sn.m[a]));
                    for (int d = 0; d < 3; ++d) {
                        double h = 0.5 * nrm[d];
                        add(kVarDensity, h * (sn.m[d] + si.m[d]));
                        add(kVarDensityEnergy, h * (sn.fc[3][d] + si.fc[3][d]));
                        for (int a = 0; a < 3; ++a)
                            add(kVarMomentum + a, h * (sn.fc[a][d] + si.fc[a][d]));
                    }
                } else if (nb == -1) {
                    for (int a = 0; a < 3; ++a)
                        add(kVarMomentum + a, nrm[a] * si.p);
                } else if (nb == -2) {
                    for (int d = 0; d < 3; ++d) {
                        double h = 0.5 * nrm[d];
                        add(kVarDensity, h * (hff[kVarMomentum + d] + si.m[d]));
                        add(kVarDensityEnergy, h * (hffc[9 + d] + si.fc[3][d]));
                        for (int a = 0; a < 3; ++a)
                            add(kVarMomentum + a, h * (hffc[a * 3 + d] + si.fc[a][d]));
                    }
                }
            }
            for (int v = 0; v < kNvar; ++v)
                check.close("fluxes", c + (size_t)v * nelr, hflux[c + (size_t)v * nelr], flux[v],
                            256 * 0x1.0p-24 * mag[v] + 1e-30);
        }
    }
    bench::Report report(opt, timer);
    report.output("fluxes", hflux);
    report.bytes(static_cast<double>(nelr) * (4 * 4 + 12 * 4 + 5 * 4 + 5 * 4));
    report.param("cells", nelr);
    int rc = report.finish(check);
    BENCH_CK(cudaFree(dnb));
    BENCH_CK(cudaFree(dnormals));
    BENCH_CK(cudaFree(dvar));
    BENCH_CK(cudaFree(dflux));
    return rc;
}

// The bundled example (make demo, docs/usage.md): a CUDA program as a user writes it, with two
// kernels in their own .cu files and a host driver (main.cpp) that makes the inputs, checks the
// results against a CPU reference and times the launches. Nothing in it knows about memplace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace demo {

/// A sparse matrix in compressed sparse row form.
struct Csr {
    int rows = 0;
    int cols = 0;
    std::vector<int> rowptr; ///< rows + 1 entries
    std::vector<int> col;    ///< nnz entries
    std::vector<float> val;  ///< nnz entries
};

/// Particles of a particle filter after weighting: the normalised cumulative weights, the
/// particles' positions, and one uniform draw per particle (systematic resampling).
struct Particles {
    int n = 0;
    std::vector<float> cdf; ///< non-decreasing, cdf[n - 1] == 1
    std::vector<float> u;   ///< in [0, 1)
    std::vector<float> x;
    std::vector<float> y;
};

/// Host wall time of each launch, in milliseconds (the launch and a synchronisation).
struct Timing {
    std::vector<double> launchMs;
};

/// y = A x, `reps` times on one stream, each launch timed and synchronised. false and `error`
/// when a CUDA call fails.
bool spmvGpu(const Csr& a, const std::vector<float>& x, int reps, std::vector<float>& y,
             Timing& timing, std::string& error);

/// The same product `reps` times on each of `streams` streams of the calling thread (one output
/// buffer per stream), launches queued round-robin without synchronising in between; `ys` gets
/// every stream's result.
bool spmvGpuStreams(const Csr& a, const std::vector<float>& x, int reps, int streams,
                    std::vector<std::vector<float>>& ys, std::string& error);

/// Resampling: for each particle i, the first j with cdf[j] >= u[i] (linear search), and
/// (xo[i], yo[i]) = (x[j], y[j]).
bool resampleGpu(const Particles& p, int reps, std::vector<float>& xo, std::vector<float>& yo,
                 Timing& timing, std::string& error);
bool resampleGpuStreams(const Particles& p, int reps, int streams,
                        std::vector<std::vector<float>>& xos, std::vector<std::vector<float>>& yos,
                        std::string& error);

} // namespace demo

// Synthetic traces: the recognisable kernels of examples/traces/ (regenerate them with
// `memplace trace synth NAME -o FILE`), random kernels for the search tests, and large traces
// for the benchmarks. Everything is deterministic for a given seed.
#pragma once

#include "common/expected.h"
#include "trace/trace.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace memplace::trace::synth {

/// Launch geometry and which blocks are traced.
struct Launch {
    Dim3 grid{1056, 1, 1};
    Dim3 block{256, 1, 1};
    std::vector<uint32_t> traced; ///< empty: every block
    std::optional<uint32_t> registers;
    std::optional<uint64_t> shared;

    /// The blocks the hardware puts on SMs [first, first + count) of a `sms`-SM GPU: the
    /// sampling a tracer should use so that L1 streams can be rebuilt exactly.
    static std::vector<uint32_t> wholeSms(uint64_t blocks, uint32_t sms, uint32_t count,
                                          uint32_t first = 0);
};

/// One warp of one block while a generator runs; lanes beyond the block's threads are
/// inactive.
class Warp {
public:
    uint32_t block() const { return block_; }
    uint32_t warp() const { return warp_; }
    uint32_t threadsPerBlock() const { return threads_; }
    /// Linear thread id within the block of a lane, and in the grid.
    uint32_t threadInBlock(uint32_t lane) const { return warp_ * 32 + lane; }
    uint64_t globalThread(uint32_t lane) const {
        return uint64_t{block_} * threads_ + threadInBlock(lane);
    }
    bool exists(uint32_t lane) const { return threadInBlock(lane) < threads_; }

    /// One warp access: `offset(lane)` gives the lane's element offset, or nullopt for an
    /// inactive lane. Nothing is recorded when no lane is active.
    void access(uint32_t site, uint16_t array, AccessKind kind,
                const std::function<std::optional<int64_t>(uint32_t lane)>& offset);
    void read(uint32_t site, uint16_t array,
              const std::function<std::optional<int64_t>(uint32_t lane)>& offset) {
        access(site, array, AccessKind::Read, offset);
    }
    void write(uint32_t site, uint16_t array,
               const std::function<std::optional<int64_t>(uint32_t lane)>& offset) {
        access(site, array, AccessKind::Write, offset);
    }

private:
    friend class KernelBuilder;
    TraceBuilder* builder_ = nullptr;
    uint32_t block_ = 0;
    uint32_t warp_ = 0;
    uint32_t threads_ = 0;
};

/// Runs a per-warp generator over every traced block and warp.
class KernelBuilder {
public:
    KernelBuilder(std::string kernel, Launch launch);
    uint16_t array(ArrayInfo a);
    void run(const std::function<void(Warp&)>& body);
    Expected<Trace> finish() &&;

private:
    TraceHeader header_;
    std::optional<TraceBuilder> builder_;
};

/// A small deterministic generator (splitmix64).
class Rng {
public:
    explicit Rng(uint64_t seed) : state_(seed) {}
    uint64_t next();
    uint64_t below(uint64_t n) { return n == 0 ? 0 : next() % n; }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
    uint64_t state_;
};

/// The recognisable kernels (docs/trace-format.md, examples/traces/README.md).
struct ExampleOptions {
    uint32_t sms = 132; ///< to choose whole-SM sampling
    uint32_t tracedSms = 1;
    uint64_t seed = 1;
};
/// y[i] = poly(x[i]) with 8 coefficients read warp-uniformly: coef belongs in constant memory.
Expected<Trace> polyCoefficients(const ExampleOptions& o = {});
/// out[i] = sum of 8 lookups of a 4 KB table at hashed positions: scattered reads of a table
/// every block reuses; it belongs in shared memory.
Expected<Trace> tableLookup(const ExampleOptions& o = {});
/// y[i] = a * x[i] + y[i]: streams stay in global memory.
Expected<Trace> saxpy(const ExampleOptions& o = {});
/// Scalar CSR sparse matrix-vector product: rowptr, colidx, vals streamed per row, x gathered.
Expected<Trace> csrSpmv(const ExampleOptions& o = {});
/// A 5-point Jacobi step on a 2-D grid with 32x8 blocks.
Expected<Trace> stencil2d(const ExampleOptions& o = {});
/// Twelve arrays of the patterns above in one kernel (search at scale).
Expected<Trace> manyArrays(const ExampleOptions& o = {});

/// The names `memplace trace synth` takes and their generators.
struct ExampleKernel {
    const char* name;
    const char* description;
    Expected<Trace> (*make)(const ExampleOptions&);
};
const std::vector<ExampleKernel>& exampleKernels();

/// A random kernel for search tests: `arrays` arrays, each with a random pattern (stream,
/// warp-uniform table, scattered table, strided, gather, 2-D neighbourhood), size and mode,
/// on a small fully traced grid.
/// `feasible`: the places every array allows (the default leaves registers out).
Expected<Trace> randomKernel(uint64_t seed, uint32_t arrays, uint32_t blocks = 8,
                             uint32_t threads = 128, PlaceSet feasible = kDefaultFeasible);

/// A large trace for throughput benchmarks: about `lanes` lane accesses from a mix of a
/// coalesced stream, a scattered table, a warp-uniform table and a strided array.
Expected<Trace> benchmarkTrace(uint64_t lanes, uint64_t seed = 1);
/// A large trace of random gathers (32 distinct lines per warp request) over a 64 MB array,
/// with a coalesced index stream: where reuse-distance analysis is most expensive.
Expected<Trace> gatherTrace(uint64_t lanes, uint64_t seed = 1);

} // namespace memplace::trace::synth

// The bundled example's driver: makes the inputs, runs each kernel on inputs of different
// structure, checks every result against a CPU reference, then runs the kernels again from
// several host threads, each on several streams at once, and checks that those outputs are
// bitwise the single-stream ones. Exits 1 on any mismatch or CUDA error.
//
//   memplace_demo [--size small|gpu] [--reps N] [--threads T] [--streams S]
//                 [--concurrent-reps N] [--only spmv|resample]
//
// --size gpu (or MEMPLACE_DEMO_SIZE=gpu) takes GPU-sized inputs; small ones (the default) keep
// a run under the CPU emulation layer short. One line per run, `demo KERNEL INPUT key=value...`,
// for people and for examples/demo/report_table.py.
#include "demo.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using demo::Csr;
using demo::Particles;

/// splitmix64: the same numbers with every compiler and library.
struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed) {}
    uint64_t next() {
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; } ///< [0, 1)
    int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
};

Csr banded(int n, int halfWidth, uint64_t seed) {
    Rng g(seed);
    Csr a;
    a.rows = a.cols = n;
    a.rowptr.push_back(0);
    for (int r = 0; r < n; ++r) {
        for (int c = std::max(0, r - halfWidth); c <= std::min(n - 1, r + halfWidth); ++c) {
            a.col.push_back(c);
            a.val.push_back(static_cast<float>(g.uniform() - 0.5));
        }
        a.rowptr.push_back(static_cast<int>(a.col.size()));
    }
    return a;
}

Csr uniformRandom(int n, int perRow, uint64_t seed) {
    Rng g(seed);
    Csr a;
    a.rows = a.cols = n;
    a.rowptr.push_back(0);
    for (int r = 0; r < n; ++r) {
        for (int k = 0; k < perRow; ++k) {
            a.col.push_back(g.below(n));
            a.val.push_back(static_cast<float>(g.uniform() - 0.5));
        }
        a.rowptr.push_back(static_cast<int>(a.col.size()));
    }
    return a;
}

/// Row lengths from a Pareto law (a few very long rows), columns concentrated on the first
/// ones (a few hot entries of x), as in web and social graphs.
Csr powerLaw(int n, int maxRow, uint64_t seed) {
    Rng g(seed);
    Csr a;
    a.rows = a.cols = n;
    a.rowptr.push_back(0);
    for (int r = 0; r < n; ++r) {
        const double u = 1.0 - g.uniform(); // (0, 1]
        const int len = std::min(maxRow, static_cast<int>(std::pow(u, -1.0 / 1.2)));
        for (int k = 0; k < len; ++k) {
            const double v = g.uniform();
            a.col.push_back(std::min(n - 1, static_cast<int>(n * v * v * v)));
            a.val.push_back(static_cast<float>(g.uniform() - 0.5));
        }
        a.rowptr.push_back(static_cast<int>(a.col.size()));
    }
    return a;
}

Particles particles(int n, uint64_t seed) {
    Rng g(seed);
    Particles p;
    p.n = n;
    std::vector<double> w(n);
    double sum = 0;
    for (int i = 0; i < n; ++i) {
        p.x.push_back(static_cast<float>(g.uniform() * 100.0));
        p.y.push_back(static_cast<float>(g.uniform() * 100.0));
        const double d = (g.uniform() - 0.5) * 6.0; // likelihood of a noisy observation
        w[i] = std::exp(-d * d);
        sum += w[i];
    }
    double acc = 0;
    for (int i = 0; i < n; ++i) {
        acc += w[i] / sum;
        p.cdf.push_back(static_cast<float>(acc));
    }
    p.cdf[n - 1] = 1.0f;
    const double u0 = g.uniform() / n; // systematic resampling
    for (int i = 0; i < n; ++i) {
        p.u.push_back(static_cast<float>(u0 + static_cast<double>(i) / n));
    }
    return p;
}

/// Count of rows whose result is off the double-precision product by more than float rounding
/// allows (the GPU may fuse multiply-adds; the order of the sum is the kernel's).
int spmvMismatches(const Csr& a, const std::vector<float>& x, const std::vector<float>& y) {
    int bad = 0;
    for (int r = 0; r < a.rows; ++r) {
        double ref = 0;
        double mag = 0;
        for (int j = a.rowptr[r]; j < a.rowptr[r + 1]; ++j) {
            ref += static_cast<double>(a.val[j]) * x[a.col[j]];
            mag += std::fabs(static_cast<double>(a.val[j]) * x[a.col[j]]);
        }
        if (!(std::fabs(y[r] - ref) <= 1e-5 * mag + 1e-30)) {
            ++bad;
        }
    }
    return bad;
}

/// Count of particles whose resampled position is not the reference's (exact: a search; the
/// kernel's linear search and lower_bound agree on a non-decreasing CDF).
int resampleMismatches(const Particles& p, const std::vector<float>& xo,
                       const std::vector<float>& yo) {
    int bad = 0;
    for (int i = 0; i < p.n; ++i) {
        const int j =
            static_cast<int>(std::lower_bound(p.cdf.begin(), p.cdf.end(), p.u[i]) - p.cdf.begin());
        if (std::memcmp(&xo[i], &p.x[j], sizeof(float)) != 0 ||
            std::memcmp(&yo[i], &p.y[j], sizeof(float)) != 0) {
            ++bad;
        }
    }
    return bad;
}

uint64_t fnv1a(const std::vector<float>& v, uint64_t h = 1469598103934665603ull) {
    const auto* p = reinterpret_cast<const unsigned char*>(v.data());
    for (size_t i = 0; i < v.size() * sizeof(float); ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

double median(std::vector<double> v) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    return v.size() % 2 == 1 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

struct Config {
    bool gpuSize = false;
    int reps = 0; // 0: by size
    int threads = 2;
    int streams = 2;
    int concurrentReps = 2;
    std::string only;
};

/// One input of one kernel: what it is, how to run it once and several times at once.
struct Case {
    std::string kernel;
    std::string input;
    std::string shape; // sizes for the line
    int grid = 0;
    std::function<bool(int reps, demo::Timing&, uint64_t& hash, int& bad, std::string& err)> run;
    std::function<bool(int reps, int streams, std::vector<uint64_t>& hashes, std::string& err)>
        runStreams;
    uint64_t hash = 0;
};

void usage() {
    std::fprintf(stderr, "usage: memplace_demo [--size small|gpu] [--reps N] [--threads T] "
                         "[--streams S] [--concurrent-reps N] [--only spmv|resample]\n");
}

} // namespace

int main(int argc, char** argv) {
    Config cfg;
    if (const char* s = std::getenv("MEMPLACE_DEMO_SIZE")) {
        cfg.gpuSize = std::strcmp(s, "gpu") == 0;
    }
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) {
                usage();
                std::exit(2);
            }
            return argv[++i];
        };
        auto count = [&](int lo) {
            const char* v = value();
            char* end = nullptr;
            const long n = std::strtol(v, &end, 10);
            if (*end != '\0' || n < lo || n > 1000000) {
                std::fprintf(stderr, "memplace_demo: %s wants a count >= %d, not '%s'\n", a.c_str(),
                             lo, v);
                std::exit(2);
            }
            return static_cast<int>(n);
        };
        if (a == "--size") {
            const std::string v = value();
            if (v != "small" && v != "gpu") {
                usage();
                return 2;
            }
            cfg.gpuSize = v == "gpu";
        } else if (a == "--reps") {
            cfg.reps = count(1);
        } else if (a == "--threads") {
            cfg.threads = count(0);
        } else if (a == "--streams") {
            cfg.streams = count(1);
        } else if (a == "--concurrent-reps") {
            cfg.concurrentReps = count(1);
        } else if (a == "--only") {
            cfg.only = value();
        } else {
            usage();
            return 2;
        }
    }
    const bool gpu = cfg.gpuSize;
    const int reps = cfg.reps > 0 ? cfg.reps : (gpu ? 20 : 3);
    const int n = gpu ? 1 << 21 : 4096; // matrix rows and columns
    // Particles (a linear search: the work grows with the square): the CDF of the small count
    // fits constant memory (64 KB), the large one's does not.
    const int pSmall = gpu ? 8192 : 1024;
    const int pLarge = gpu ? 1 << 17 : 16640;

    std::vector<Case> cases;
    auto addSpmv = [&](const std::string& input, Csr a, uint64_t seed) {
        auto pa = std::make_shared<Csr>(std::move(a));
        auto px = std::make_shared<std::vector<float>>();
        Rng g(seed);
        for (int i = 0; i < pa->cols; ++i) {
            px->push_back(static_cast<float>(g.uniform()));
        }
        Case c;
        c.kernel = "spmv_csr";
        c.input = input;
        c.shape = "rows=" + std::to_string(pa->rows) + " nnz=" + std::to_string(pa->col.size());
        c.grid = (pa->rows + 255) / 256;
        c.run = [pa, px](int r, demo::Timing& t, uint64_t& h, int& bad, std::string& err) {
            std::vector<float> y;
            if (!demo::spmvGpu(*pa, *px, r, y, t, err)) {
                return false;
            }
            h = fnv1a(y);
            bad = spmvMismatches(*pa, *px, y);
            return true;
        };
        c.runStreams = [pa, px](int r, int s, std::vector<uint64_t>& hs, std::string& err) {
            std::vector<std::vector<float>> ys;
            if (!demo::spmvGpuStreams(*pa, *px, r, s, ys, err)) {
                return false;
            }
            for (const auto& y : ys) {
                hs.push_back(fnv1a(y));
            }
            return true;
        };
        cases.push_back(std::move(c));
    };
    auto addResample = [&](const std::string& input, int count, uint64_t seed) {
        auto pp = std::make_shared<Particles>(particles(count, seed));
        Case c;
        c.kernel = "find_index";
        c.input = input;
        c.shape = "particles=" + std::to_string(count);
        c.grid = (count + 127) / 128;
        c.run = [pp](int r, demo::Timing& t, uint64_t& h, int& bad, std::string& err) {
            std::vector<float> xo;
            std::vector<float> yo;
            if (!demo::resampleGpu(*pp, r, xo, yo, t, err)) {
                return false;
            }
            h = fnv1a(yo, fnv1a(xo));
            bad = resampleMismatches(*pp, xo, yo);
            return true;
        };
        c.runStreams = [pp](int r, int s, std::vector<uint64_t>& hs, std::string& err) {
            std::vector<std::vector<float>> xos;
            std::vector<std::vector<float>> yos;
            if (!demo::resampleGpuStreams(*pp, r, s, xos, yos, err)) {
                return false;
            }
            for (size_t k = 0; k < xos.size(); ++k) {
                hs.push_back(fnv1a(yos[k], fnv1a(xos[k])));
            }
            return true;
        };
        cases.push_back(std::move(c));
    };
    if (cfg.only.empty() || cfg.only == "spmv") {
        addSpmv("banded", banded(n, 4, 11), 1);
        addSpmv("random", uniformRandom(n, 8, 12), 2);
        addSpmv("power-law", powerLaw(n, gpu ? 4096 : 512, 13), 3);
    }
    if (cfg.only.empty() || cfg.only == "resample") {
        addResample("small", pSmall, 21);
        addResample("large", pLarge, 22);
    }
    if (cases.empty()) {
        std::fprintf(stderr, "memplace_demo: --only takes spmv or resample\n");
        return 2;
    }

    int failures = 0;
    for (Case& c : cases) {
        demo::Timing t;
        int bad = 0;
        std::string err;
        if (!c.run(reps, t, c.hash, bad, err)) {
            std::printf("demo %s %s FAIL %s\n", c.kernel.c_str(), c.input.c_str(), err.c_str());
            ++failures;
            continue;
        }
        failures += bad != 0 ? 1 : 0;
        // Steady state: the later half of the launches.
        std::vector<double> later(t.launchMs.begin() + static_cast<long>(t.launchMs.size() / 2),
                                  t.launchMs.end());
        double total = 0;
        std::string all;
        for (double ms : t.launchMs) {
            total += ms;
            char buf[32];
            std::snprintf(buf, sizeof buf, "%s%.4f", all.empty() ? "" : ",", ms);
            all += buf;
        }
        std::printf("demo %s %s %s grid=%d reps=%d first_ms=%.4f later_ms=%.4f total_ms=%.4f "
                    "check=%s hash=%016llx launch_ms=%s\n",
                    c.kernel.c_str(), c.input.c_str(), c.shape.c_str(), c.grid, reps,
                    t.launchMs.empty() ? 0.0 : t.launchMs.front(), median(later), total,
                    bad == 0 ? "PASS" : "FAIL", static_cast<unsigned long long>(c.hash),
                    all.c_str());
        if (bad != 0) {
            std::printf("demo %s %s: %d outputs differ from the CPU reference\n", c.kernel.c_str(),
                        c.input.c_str(), bad);
        }
        std::fflush(stdout);
    }

    if (cfg.threads > 0) {
        // Every thread runs every case, starting at a different one, each on `streams` streams
        // at once; every output must be bitwise the single-stream run's.
        std::vector<int> mismatches(cfg.threads, 0);
        std::vector<std::string> errors(cfg.threads);
        std::vector<std::thread> threads;
        for (int t = 0; t < cfg.threads; ++t) {
            threads.emplace_back([&, t] {
                for (size_t k = 0; k < cases.size(); ++k) {
                    const Case& c = cases[(k + static_cast<size_t>(t)) % cases.size()];
                    std::vector<uint64_t> hs;
                    std::string err;
                    if (!c.runStreams(cfg.concurrentReps, cfg.streams, hs, err)) {
                        errors[t] = c.kernel + " " + c.input + ": " + err;
                        ++mismatches[t];
                        return;
                    }
                    for (uint64_t h : hs) {
                        mismatches[t] += h != c.hash ? 1 : 0;
                    }
                }
            });
        }
        for (std::thread& th : threads) {
            th.join();
        }
        int bad = 0;
        for (int t = 0; t < cfg.threads; ++t) {
            bad += mismatches[t];
            if (!errors[t].empty()) {
                std::printf("demo concurrent thread %d: %s\n", t, errors[t].c_str());
            }
        }
        std::printf("demo concurrent threads=%d streams=%d launches=%zu check=%s%s\n", cfg.threads,
                    cfg.streams,
                    cases.size() *
                        static_cast<size_t>(cfg.threads * cfg.streams * cfg.concurrentReps),
                    bad == 0 ? "PASS" : "FAIL",
                    bad == 0 ? " (every output bitwise the single-stream one)" : "");
        failures += bad != 0 ? 1 : 0;
    }
    std::printf("demo: %s\n", failures == 0 ? "PASS" : "FAIL");
    return failures == 0 ? 0 : 1;
}

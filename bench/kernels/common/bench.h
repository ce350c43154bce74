// Host-side harness shared by the benchmark programs in bench/kernels/.
//
// Everything here is host code: no kernels, no device arrays. A program includes this header,
// declares its kernels and does its own cudaMalloc/cudaMemcpy and <<<...>>> launches in main,
// so that the frontend and rewriter see every placeable array and every launch in the .cu file.
//
// Command line (every program):
//   --input NAME     one of the program's inputs (--list-inputs prints them)
//   --size N         override the input's main size (each program says what N counts)
//   --seed S         generator seed (default 1); same seed, same input, same output
//   --check          compare the output with the CPU reference; exit 1 on mismatch
//   --repeat N       timed runs (default 10), after --warmup W untimed runs (default 2)
//   --dump PATH      write the raw output bytes (outputs concatenated, as listed in the line)
//   --list-inputs    print one line per input: name, default size, description
// Output: exactly one JSON line on stdout (see README.md); diagnostics go to stderr.
// Exit codes: 0 ok, 1 the check found a mismatch, 2 bad usage or a CUDA error.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <map>
#include <string>
#include <utility>
#include <vector>

#define BENCH_CK(call)                                                                             \
    do {                                                                                           \
        cudaError_t benchErr_ = (call);                                                            \
        if (benchErr_ != cudaSuccess) {                                                            \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,              \
                         cudaGetErrorString(benchErr_));                                           \
            std::exit(2);                                                                          \
        }                                                                                          \
    } while (0)

namespace bench {

constexpr double kPi = 3.14159265358979323846;

[[noreturn]] inline void die(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fputc('\n', stderr);
    std::exit(2);
}

// ---------------------------------------------------------------------------------------------
// Inputs and options

struct InputSpec {
    const char* name;
    long long size; // default main size (what it counts is the program's to say)
    const char* description;
};

struct Options {
    std::string kernel;
    std::string input;
    long long size = 0;
    uint64_t seed = 1;
    bool check = false;
    int repeat = 10;
    int warmup = 2;
    std::string dump;
};

inline long long parseCount(const char* s, const char* what) {
    char* end = nullptr;
    double v = std::strtod(s, &end);
    if (end == s)
        die("bad %s: %s", what, s);
    // Accept 1e6, 4M, 16k, 2G for convenience.
    if (*end == 'k' || *end == 'K')
        v *= 1e3, ++end;
    else if (*end == 'm' || *end == 'M')
        v *= 1e6, ++end;
    else if (*end == 'g' || *end == 'G')
        v *= 1e9, ++end;
    if (*end != '\0' || v < 0)
        die("bad %s: %s", what, s);
    return static_cast<long long>(v);
}

inline Options parse(int argc, char** argv, const char* kernel,
                     const std::vector<InputSpec>& inputs) {
    Options o;
    o.kernel = kernel;
    o.input = inputs.front().name;
    bool sizeGiven = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc)
                die("%s needs a value", a.c_str());
            return argv[++i];
        };
        if (a == "--input") {
            o.input = value();
        } else if (a == "--size") {
            o.size = parseCount(value(), "--size");
            sizeGiven = true;
        } else if (a == "--seed") {
            o.seed = static_cast<uint64_t>(parseCount(value(), "--seed"));
        } else if (a == "--check") {
            o.check = true;
        } else if (a == "--repeat") {
            o.repeat = static_cast<int>(parseCount(value(), "--repeat"));
        } else if (a == "--warmup") {
            o.warmup = static_cast<int>(parseCount(value(), "--warmup"));
        } else if (a == "--dump") {
            o.dump = value();
        } else if (a == "--list-inputs") {
            for (const InputSpec& in : inputs)
                std::printf("%s\t%lld\t%s\n", in.name, in.size, in.description);
            std::exit(0);
        } else if (a == "--help" || a == "-h") {
            std::printf("usage: %s [--input NAME] [--size N] [--seed S] [--check] [--repeat N]\n"
                        "          [--warmup N] [--dump PATH] [--list-inputs]\ninputs:\n",
                        argv[0]);
            for (const InputSpec& in : inputs)
                std::printf("  %-14s %12lld  %s\n", in.name, in.size, in.description);
            std::exit(0);
        } else {
            die("unknown option %s (try --help)", a.c_str());
        }
    }
    if (o.repeat < 1)
        die("--repeat must be at least 1");
    const InputSpec* found = nullptr;
    for (const InputSpec& in : inputs)
        if (o.input == in.name)
            found = &in;
    if (found == nullptr) {
        std::string names;
        for (const InputSpec& in : inputs)
            names += std::string(names.empty() ? "" : ", ") + in.name;
        die("%s: unknown input '%s' (inputs: %s)", kernel, o.input.c_str(), names.c_str());
    }
    if (!sizeGiven)
        o.size = found->size;
    if (o.size < 1)
        die("--size must be positive");
    return o;
}

// ---------------------------------------------------------------------------------------------
// Deterministic random numbers: splitmix64. One stream per (seed, purpose) so that inputs do not
// depend on the order in which a program draws them.

class Rng {
public:
    explicit Rng(uint64_t seed, uint64_t stream = 0)
        : state_(seed * 0x9E3779B97F4A7C15ull + stream * 0xD1B54A32D192ED03ull +
                 0x2545F4914F6CDD1Dull) {
        next();
    }
    uint64_t next() {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    uint32_t u32() { return static_cast<uint32_t>(next() >> 32); }
    // Uniform in [0, 1).
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    float uniformf(float lo, float hi) { return lo + (hi - lo) * static_cast<float>(uniform()); }
    // Uniform integer in [0, n).
    uint64_t below(uint64_t n) {
        return n == 0 ? 0 : static_cast<uint64_t>(uniform() * static_cast<double>(n)) % n;
    }
    // Standard normal (Box-Muller; the second value of each pair is kept for the next call).
    double normal() {
        if (haveSpare_) {
            haveSpare_ = false;
            return spare_;
        }
        double u1 = uniform(), u2 = uniform();
        if (u1 < 1e-300)
            u1 = 1e-300;
        double r = std::sqrt(-2.0 * std::log(u1));
        spare_ = r * std::sin(2 * kPi * u2);
        haveSpare_ = true;
        return r * std::cos(2 * kPi * u2);
    }

private:
    uint64_t state_;
    double spare_ = 0;
    bool haveSpare_ = false;
};

// A random permutation of 0..n-1 (Fisher-Yates).
inline std::vector<int> permutation(size_t n, Rng& rng) {
    std::vector<int> p(n);
    for (size_t i = 0; i < n; ++i)
        p[i] = static_cast<int>(i);
    for (size_t i = n; i > 1; --i)
        std::swap(p[i - 1], p[rng.below(i)]);
    return p;
}

// Indices of the elements a CPU check compares: all of them when n <= limit, else the first
// and last min(1024, limit/4) and the rest of `limit` drawn at random, sorted. Used where the
// reference is too slow to compute for every element of a large input; the JSON line reports how
// many were checked.
inline std::vector<size_t> sampleIndices(size_t n, size_t limit, uint64_t seed) {
    std::vector<size_t> idx;
    if (n <= limit) {
        idx.resize(n);
        for (size_t i = 0; i < n; ++i)
            idx[i] = i;
        return idx;
    }
    Rng rng(seed, 0xC4EC);
    const size_t edge = std::min<size_t>(1024, limit / 4);
    for (size_t i = 0; i < edge; ++i) {
        idx.push_back(i);
        idx.push_back(n - 1 - i);
    }
    while (idx.size() < limit)
        idx.push_back(rng.below(n));
    std::sort(idx.begin(), idx.end());
    idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
    return idx;
}

// ---------------------------------------------------------------------------------------------
// Timing with CUDA events. Usage:
//   bench::Timer timer(opt);
//   for (int run = 0; run < timer.runs(); ++run) {
//       ... reset inputs, poison outputs (untimed) ...
//       timer.start();
//       kernelA<<<g, b>>>(...);
//       timer.lap("kernelA");
//       kernelB<<<g, b>>>(...);
//       timer.lap("kernelB");
//       timer.stop();
//   }
// The first opt.warmup runs are not recorded. Laps with the same name add up within a run.

class Timer {
public:
    explicit Timer(const Options& o) : warmup_(o.warmup), repeat_(o.repeat) {}
    ~Timer() {
        for (cudaEvent_t e : events_)
            cudaEventDestroy(e);
    }
    Timer(const Timer&) = delete;
    Timer& operator=(const Timer&) = delete;

    int runs() const { return warmup_ + repeat_; }

    void start() {
        used_ = 0;
        names_.clear();
        BENCH_CK(cudaEventRecord(event()));
    }
    void lap(const char* name) {
        BENCH_CK(cudaGetLastError()); // launch errors
        names_.push_back(name);
        BENCH_CK(cudaEventRecord(event()));
    }
    void stop() {
        if (names_.empty())
            die("Timer: stop() without a lap()");
        BENCH_CK(cudaEventSynchronize(events_[used_ - 1]));
        BENCH_CK(cudaGetLastError()); // errors while the kernels ran
        ++run_;
        if (run_ <= warmup_)
            return;
        std::map<std::string, float> laps;
        for (size_t i = 0; i < names_.size(); ++i) {
            float ms = 0;
            BENCH_CK(cudaEventElapsedTime(&ms, events_[i], events_[i + 1]));
            laps[names_[i]] += ms;
            if (std::find(order_.begin(), order_.end(), names_[i]) == order_.end())
                order_.push_back(names_[i]);
        }
        float total = 0;
        BENCH_CK(cudaEventElapsedTime(&total, events_[0], events_[used_ - 1]));
        totals_.push_back(total);
        for (auto& [name, ms] : laps)
            perKernel_[name].push_back(ms);
    }

    static double median(std::vector<float> v) {
        if (v.empty())
            return 0;
        std::sort(v.begin(), v.end());
        size_t n = v.size();
        return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    }
    double medianMs() const { return median(totals_); }
    double minMs() const {
        return totals_.empty() ? 0 : *std::min_element(totals_.begin(), totals_.end());
    }
    double maxMs() const {
        return totals_.empty() ? 0 : *std::max_element(totals_.begin(), totals_.end());
    }
    const std::vector<std::string>& kernelNames() const { return order_; }
    double kernelMedianMs(const std::string& name) const { return median(perKernel_.at(name)); }

private:
    cudaEvent_t event() {
        if (used_ == events_.size()) {
            cudaEvent_t e = nullptr;
            BENCH_CK(cudaEventCreate(&e));
            events_.push_back(e);
        }
        return events_[used_++];
    }

    int warmup_, repeat_;
    int run_ = 0;
    size_t used_ = 0;
    std::vector<cudaEvent_t> events_;
    std::vector<std::string> names_;
    std::vector<std::string> order_;
    std::vector<float> totals_;
    std::map<std::string, std::vector<float>> perKernel_;
};

// Fill a device array with 0xFF bytes: NaN for float/double, -1 for signed and all-ones for
// unsigned integers, so that an element the kernel failed to write cannot pass the check.
template <class T>
void poison(T* device, size_t count) {
    BENCH_CK(cudaMemset(device, 0xFF, count * sizeof(T)));
}

// ---------------------------------------------------------------------------------------------
// Outputs: checksum, dump, check

template <class T>
struct TypeName;
template <>
struct TypeName<float> {
    static constexpr const char* value = "f32";
};
template <>
struct TypeName<double> {
    static constexpr const char* value = "f64";
};
template <>
struct TypeName<int> {
    static constexpr const char* value = "i32";
};
template <>
struct TypeName<unsigned> {
    static constexpr const char* value = "u32";
};
template <>
struct TypeName<unsigned char> {
    static constexpr const char* value = "u8";
};

struct OutputInfo {
    std::string name, type;
    size_t count, bytes;
    const void* data;
};

class Check {
public:
    explicit Check(bool enabled) : enabled_(enabled) {}
    bool enabled() const { return enabled_; }

    // got == ref exactly (integers).
    template <class T>
    void equal(const char* what, size_t i, T got, T ref) {
        ++checked_;
        if (got != ref)
            fail(what, i, static_cast<double>(got), static_cast<double>(ref), 0);
    }
    // |got - ref| <= tol; NaN never passes.
    void close(const char* what, size_t i, double got, double ref, double tol) {
        ++checked_;
        double err = std::fabs(got - ref);
        if (!(err <= tol)) { // written so that NaN fails
            fail(what, i, got, ref, tol);
            return;
        }
        double rel = err / (tol > 0 ? tol : 1);
        if (rel > worst_)
            worst_ = rel;
    }
    // A condition the check cannot phrase as got-vs-ref (e.g. "a nearest centroid").
    void expect(bool ok, const char* what, size_t i, double got, double ref) {
        ++checked_;
        if (!ok)
            fail(what, i, got, ref, 0);
    }
    void setTolerance(const std::string& t) { tolerance_ = t; }

    long long checked() const { return checked_; }
    long long mismatches() const { return mismatches_; }
    double worstErrorOverTolerance() const { return worst_; }
    const std::string& tolerance() const { return tolerance_; }
    bool passed() const { return mismatches_ == 0 && checked_ > 0; }

private:
    void fail(const char* what, size_t i, double got, double ref, double tol) {
        if (++mismatches_ <= 10)
            std::fprintf(stderr, "mismatch: %s[%zu] = %.9g, expected %.9g (tolerance %.3g)\n", what,
                         i, got, ref, tol);
    }

    bool enabled_;
    long long checked_ = 0, mismatches_ = 0;
    double worst_ = 0;
    std::string tolerance_ = "exact";
};

class Report {
public:
    Report(const Options& o, const Timer& t) : opt_(o), timer_(t) {}

    // Register an output (host copy, already read back). Checksums and dumps cover the
    // outputs in the order they were added.
    template <class T>
    void output(const char* name, const std::vector<T>& host) {
        outputs_.push_back(
            {name, TypeName<T>::value, host.size(), host.size() * sizeof(T), host.data()});
        const auto* b = reinterpret_cast<const unsigned char*>(host.data());
        for (size_t i = 0; i < host.size() * sizeof(T); ++i)
            fnv_ = (fnv_ ^ b[i]) * 0x100000001B3ull;
        for (const T& v : host)
            sum_ += static_cast<double>(v);
    }
    // Extra facts about the input (rows, nnz, ...), reported under "params".
    void param(const char* name, double value) { params_.emplace_back(name, value); }
    void bytes(double b) { bytes_ = b; }

    // Print the JSON line, write the dump, and return the exit code.
    int finish(const Check& check) {
        if (!opt_.dump.empty()) {
            FILE* f = std::fopen(opt_.dump.c_str(), "wb");
            if (f == nullptr)
                die("cannot write %s", opt_.dump.c_str());
            for (const OutputInfo& out : outputs_)
                if (std::fwrite(out.data, 1, out.bytes, f) != out.bytes)
                    die("short write to %s", opt_.dump.c_str());
            std::fclose(f);
        }
        cudaDeviceProp prop{};
        int dev = 0;
        BENCH_CK(cudaGetDevice(&dev));
        BENCH_CK(cudaGetDeviceProperties(&prop, dev));

        std::string s = "{";
        s += kv("kernel", opt_.kernel) + "," + kv("input", opt_.input) + ",";
        s += "\"size\":" + std::to_string(opt_.size) + ",\"seed\":" + std::to_string(opt_.seed);
        s += "," + kv("device", prop.name);
        s += ",\"repeat\":" + std::to_string(opt_.repeat) +
             ",\"warmup\":" + std::to_string(opt_.warmup);
        s += ",\"median_ms\":" + num(timer_.medianMs()) + ",\"min_ms\":" + num(timer_.minMs()) +
             ",\"max_ms\":" + num(timer_.maxMs());
        s += ",\"kernels\":{";
        for (size_t i = 0; i < timer_.kernelNames().size(); ++i) {
            const std::string& k = timer_.kernelNames()[i];
            s += (i ? "," : "") + ("\"" + k + "\":") + num(timer_.kernelMedianMs(k));
        }
        s += "}";
        char hex[32];
        std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv_));
        s += "," + kv("checksum", hex) + ",\"sum\":" + num(sum_);
        s += ",\"outputs\":[";
        for (size_t i = 0; i < outputs_.size(); ++i)
            s += std::string(i ? "," : "") + "{" + kv("name", outputs_[i].name) + "," +
                 kv("type", outputs_[i].type) + ",\"count\":" + std::to_string(outputs_[i].count) +
                 "}";
        s += "]";
        if (bytes_ > 0)
            s += ",\"bytes\":" + num(bytes_);
        s += ",\"params\":{";
        for (size_t i = 0; i < params_.size(); ++i)
            s += (i ? "," : "") + ("\"" + params_[i].first + "\":") + num(params_[i].second);
        s += "}";
        const char* verdict = !check.enabled() ? "skipped" : check.passed() ? "pass" : "fail";
        s += "," + kv("check", verdict);
        if (check.enabled()) {
            s += ",\"checked\":" + std::to_string(check.checked()) +
                 ",\"mismatches\":" + std::to_string(check.mismatches()) +
                 ",\"worst_err_over_tol\":" + num(check.worstErrorOverTolerance()) + "," +
                 kv("tolerance", check.tolerance());
        }
        s += "}";
        std::printf("%s\n", s.c_str());
        std::fflush(stdout);
        return check.enabled() && !check.passed() ? 1 : 0;
    }

private:
    static std::string num(double v) {
        if (!std::isfinite(v))
            return "null";
        char b[40];
        std::snprintf(b, sizeof b, "%.9g", v);
        return b;
    }
    static std::string kv(const char* k, const std::string& v) {
        std::string e;
        for (char c : v) {
            if (c == '"' || c == '\\')
                e += '\\';
            if (static_cast<unsigned char>(c) >= 0x20)
                e += c;
        }
        return std::string("\"") + k + "\":\"" + e + "\"";
    }

    const Options& opt_;
    const Timer& timer_;
    std::vector<OutputInfo> outputs_;
    std::vector<std::pair<std::string, double>> params_;
    uint64_t fnv_ = 1469598103934665603ull;
    double sum_ = 0;
    double bytes_ = 0;
};

} // namespace bench

#include "trace/synth.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace memplace::trace::synth {

std::vector<uint32_t> Launch::wholeSms(uint64_t blocks, uint32_t sms, uint32_t count,
                                       uint32_t first) {
    std::vector<uint32_t> out;
    for (uint64_t b = 0; b < blocks; ++b) {
        uint32_t sm = static_cast<uint32_t>(b % sms);
        if (sm >= first && sm < first + count) {
            out.push_back(static_cast<uint32_t>(b));
        }
    }
    return out;
}

void Warp::access(uint32_t site, uint16_t array, AccessKind kind,
                  const std::function<std::optional<int64_t>(uint32_t lane)>& offset) {
    int64_t lanes[32];
    uint32_t mask = 0;
    size_t n = 0;
    for (uint32_t l = 0; l < 32; ++l) {
        if (!exists(l)) {
            continue;
        }
        if (auto o = offset(l)) {
            mask |= 1u << l;
            lanes[n++] = *o;
        }
    }
    if (mask != 0) {
        builder_->add(block_, warp_, site, array, kind, mask, std::span<const int64_t>(lanes, n));
    }
}

KernelBuilder::KernelBuilder(std::string kernel, Launch launch) {
    header_.kernel = std::move(kernel);
    header_.grid = launch.grid;
    header_.block = launch.block;
    header_.tracedBlocks = std::move(launch.traced);
    header_.registersPerThread = launch.registers;
    header_.sharedPerBlock = launch.shared;
}

uint16_t KernelBuilder::array(ArrayInfo a) {
    header_.arrays.push_back(std::move(a));
    return static_cast<uint16_t>(header_.arrays.size() - 1);
}

void KernelBuilder::run(const std::function<void(Warp&)>& body) {
    if (!builder_) {
        builder_.emplace(header_);
    }
    std::vector<uint32_t> blocks = header_.tracedBlocks.ids();
    if (blocks.empty()) {
        for (uint64_t b = 0; b < header_.grid.count(); ++b) {
            blocks.push_back(static_cast<uint32_t>(b));
        }
    }
    Warp w;
    w.builder_ = &*builder_;
    w.threads_ = header_.threadsPerBlock();
    for (uint32_t b : blocks) {
        for (uint32_t k = 0; k < header_.warpsPerBlock(); ++k) {
            w.block_ = b;
            w.warp_ = k;
            body(w);
        }
    }
}

Expected<Trace> KernelBuilder::finish() && {
    if (!builder_) {
        builder_.emplace(header_);
    }
    return std::move(*builder_).finish("synthetic trace");
}

uint64_t Rng::next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

namespace {

uint64_t hash2(uint64_t a, uint64_t b) {
    Rng r(a * 0x9e3779b97f4a7c15ull + b);
    return r.next();
}

ArrayInfo arrayInfo(std::string name, uint64_t length, ArrayMode mode, uint32_t elem = 4) {
    ArrayInfo a;
    a.name = std::move(name);
    a.elementSize = elem;
    a.length = length;
    a.mode = mode;
    return a;
}

Launch sampled(uint32_t blocks, uint32_t threads, const ExampleOptions& o) {
    Launch l;
    l.grid = {blocks, 1, 1};
    l.block = {threads, 1, 1};
    l.traced = Launch::wholeSms(blocks, o.sms, o.tracedSms);
    return l;
}

} // namespace

Expected<Trace> polyCoefficients(const ExampleOptions& o) {
    constexpr uint32_t kBlocks = 1056, kThreads = 256, kCoef = 8;
    const uint64_t n = uint64_t{kBlocks} * kThreads;
    KernelBuilder k("poly_eval", sampled(kBlocks, kThreads, o));
    uint16_t x = k.array(arrayInfo("x", n, ArrayMode::Read));
    uint16_t coef = k.array(arrayInfo("coef", kCoef, ArrayMode::Read));
    uint16_t y = k.array(arrayInfo("y", n, ArrayMode::Write));
    k.run([&](Warp& w) {
        auto i = [&](uint32_t l) { return static_cast<int64_t>(w.globalThread(l)); };
        w.read(0, x, i);
        for (uint32_t c = 0; c < kCoef; ++c) {
            w.read(1, coef, [&](uint32_t) { return static_cast<int64_t>(c); });
        }
        w.write(2, y, i);
    });
    return std::move(k).finish();
}

Expected<Trace> tableLookup(const ExampleOptions& o) {
    constexpr uint32_t kBlocks = 1056, kThreads = 256, kTable = 1024, kLookups = 8;
    const uint64_t n = uint64_t{kBlocks} * kThreads;
    KernelBuilder k("table_lookup", sampled(kBlocks, kThreads, o));
    uint16_t keys = k.array(arrayInfo("keys", n, ArrayMode::Read));
    uint16_t table = k.array(arrayInfo("table", kTable, ArrayMode::Read));
    uint16_t out = k.array(arrayInfo("out", n, ArrayMode::Write));
    const uint64_t seed = o.seed;
    k.run([&](Warp& w) {
        auto i = [&](uint32_t l) { return static_cast<int64_t>(w.globalThread(l)); };
        w.read(0, keys, i);
        for (uint32_t r = 0; r < kLookups; ++r) {
            w.read(1, table, [&](uint32_t l) {
                return static_cast<int64_t>(hash2(w.globalThread(l) ^ seed, r) % kTable);
            });
        }
        w.write(2, out, i);
    });
    return std::move(k).finish();
}

Expected<Trace> saxpy(const ExampleOptions& o) {
    constexpr uint32_t kBlocks = 1056, kThreads = 256;
    const uint64_t n = uint64_t{kBlocks} * kThreads;
    KernelBuilder k("saxpy", sampled(kBlocks, kThreads, o));
    uint16_t x = k.array(arrayInfo("x", n, ArrayMode::Read));
    uint16_t y = k.array(arrayInfo("y", n, ArrayMode::ReadWrite));
    k.run([&](Warp& w) {
        auto i = [&](uint32_t l) { return static_cast<int64_t>(w.globalThread(l)); };
        w.read(0, x, i);
        w.read(1, y, i);
        w.write(2, y, i);
    });
    return std::move(k).finish();
}

Expected<Trace> csrSpmv(const ExampleOptions& o) {
    constexpr uint32_t kBlocks = 2112, kThreads = 128;
    const uint64_t rows = uint64_t{kBlocks} * kThreads;
    const uint64_t cols = rows;
    // Row lengths 2..6, columns clustered around the diagonal with some far ones (a banded
    // matrix with noise), so x has some reuse across neighbouring rows.
    auto rowLength = [&](uint64_t r) { return 2 + hash2(r, o.seed) % 5; };
    std::vector<uint64_t> rowptr(rows + 1, 0);
    for (uint64_t r = 0; r < rows; ++r) {
        rowptr[r + 1] = rowptr[r] + rowLength(r);
    }
    const uint64_t nnz = rowptr[rows];
    auto column = [&](uint64_t r, uint64_t j) -> int64_t {
        uint64_t h = hash2(r * 16 + j, o.seed + 7);
        if (h % 8 == 0) {
            return static_cast<int64_t>(h / 8 % cols); // far off the diagonal
        }
        int64_t c = static_cast<int64_t>(r) + static_cast<int64_t>(h / 8 % 2048) - 1024;
        return std::clamp<int64_t>(c, 0, static_cast<int64_t>(cols) - 1);
    };
    Launch l = sampled(kBlocks, kThreads, o);
    KernelBuilder k("spmv_csr", l);
    uint16_t rp = k.array(arrayInfo("rowptr", rows + 1, ArrayMode::Read));
    uint16_t ci = k.array(arrayInfo("colidx", nnz, ArrayMode::Read));
    uint16_t va = k.array(arrayInfo("vals", nnz, ArrayMode::Read));
    uint16_t xv = k.array(arrayInfo("x", cols, ArrayMode::Read));
    uint16_t yv = k.array(arrayInfo("y", rows, ArrayMode::Write));
    k.run([&](Warp& w) {
        auto row = [&](uint32_t lane) { return w.globalThread(lane); };
        w.read(0, rp, [&](uint32_t lane) { return static_cast<int64_t>(row(lane)); });
        w.read(1, rp, [&](uint32_t lane) { return static_cast<int64_t>(row(lane) + 1); });
        for (uint64_t j = 0; j < 6; ++j) {
            auto in = [&](uint32_t lane) -> std::optional<int64_t> {
                uint64_t r = row(lane);
                if (rowptr[r] + j >= rowptr[r + 1]) {
                    return std::nullopt;
                }
                return static_cast<int64_t>(rowptr[r] + j);
            };
            w.read(2, ci, in);
            w.read(3, va, in);
            w.read(4, xv, [&](uint32_t lane) -> std::optional<int64_t> {
                uint64_t r = row(lane);
                if (rowptr[r] + j >= rowptr[r + 1]) {
                    return std::nullopt;
                }
                return column(r, j);
            });
        }
        w.write(5, yv, [&](uint32_t lane) { return static_cast<int64_t>(row(lane)); });
    });
    return std::move(k).finish();
}

Expected<Trace> stencil2d(const ExampleOptions& o) {
    constexpr uint32_t kW = 2048, kH = 1024, kBx = 32, kBy = 8;
    Launch l;
    l.grid = {kW / kBx, kH / kBy, 1};
    l.block = {kBx, kBy, 1};
    l.traced = Launch::wholeSms(l.grid.count(), o.sms, o.tracedSms);
    KernelBuilder k("jacobi2d", l);
    ArrayInfo in = arrayInfo("in", uint64_t{kW} * kH, ArrayMode::Read);
    in.dims = 2;
    in.rowLength = kW;
    ArrayInfo out = in;
    out.name = "out";
    out.mode = ArrayMode::Write;
    uint16_t ai = k.array(in);
    uint16_t ao = k.array(out);
    k.run([&](Warp& w) {
        const uint32_t bx = w.block() % (kW / kBx);
        const uint32_t by = w.block() / (kW / kBx);
        auto at = [&](uint32_t lane, int dx, int dy) -> std::optional<int64_t> {
            uint32_t t = w.threadInBlock(lane);
            int64_t x = int64_t{bx} * kBx + t % kBx + dx;
            int64_t y = int64_t{by} * kBy + t / kBx + dy;
            if (x < 0 || y < 0 || x >= kW || y >= kH) {
                return std::nullopt;
            }
            return y * kW + x;
        };
        w.read(0, ai, [&](uint32_t l2) { return at(l2, 0, 0); });
        w.read(1, ai, [&](uint32_t l2) { return at(l2, -1, 0); });
        w.read(2, ai, [&](uint32_t l2) { return at(l2, 1, 0); });
        w.read(3, ai, [&](uint32_t l2) { return at(l2, 0, -1); });
        w.read(4, ai, [&](uint32_t l2) { return at(l2, 0, 1); });
        w.write(5, ao, [&](uint32_t l2) { return at(l2, 0, 0); });
    });
    return std::move(k).finish();
}

Expected<Trace> manyArrays(const ExampleOptions& o) {
    constexpr uint32_t kBlocks = 1056, kThreads = 256;
    const uint64_t n = uint64_t{kBlocks} * kThreads;
    KernelBuilder k("many_arrays", sampled(kBlocks, kThreads, o));
    uint16_t in0 = k.array(arrayInfo("in0", n, ArrayMode::Read));
    uint16_t in1 = k.array(arrayInfo("in1", n, ArrayMode::Read));
    uint16_t in2 = k.array(arrayInfo("in2", 2 * n, ArrayMode::Read));
    uint16_t wts = k.array(arrayInfo("weights", 16, ArrayMode::Read));
    uint16_t bias = k.array(arrayInfo("bias", 4, ArrayMode::Read));
    uint16_t lut = k.array(arrayInfo("lut", 512, ArrayMode::Read));
    uint16_t lut2 = k.array(arrayInfo("lut2", 2048, ArrayMode::Read));
    uint16_t idx = k.array(arrayInfo("idx", n, ArrayMode::Read));
    uint16_t gat = k.array(arrayInfo("gather", 1u << 20, ArrayMode::Read));
    uint16_t acc = k.array(arrayInfo("acc", n, ArrayMode::ReadWrite));
    uint16_t out0 = k.array(arrayInfo("out0", n, ArrayMode::Write));
    uint16_t out1 = k.array(arrayInfo("out1", n, ArrayMode::Write));
    const uint64_t seed = o.seed;
    k.run([&](Warp& w) {
        auto i = [&](uint32_t l) { return static_cast<int64_t>(w.globalThread(l)); };
        w.read(0, in0, i);
        w.read(1, in1, i);
        w.read(2, in2, [&](uint32_t l) { return 2 * i(l); }); // stride 2
        w.read(3, idx, i);
        for (uint32_t c = 0; c < 4; ++c) {
            w.read(4, wts, [&](uint32_t) { return static_cast<int64_t>(c * 4); });
        }
        w.read(5, bias, [&](uint32_t) { return int64_t{1}; });
        for (uint32_t r = 0; r < 4; ++r) {
            w.read(6, lut, [&](uint32_t l) {
                return static_cast<int64_t>(hash2(w.globalThread(l) ^ seed, r) % 512);
            });
        }
        w.read(7, lut2, [&](uint32_t l) {
            return static_cast<int64_t>(hash2(w.globalThread(l), seed + 3) % 2048);
        });
        w.read(8, gat, [&](uint32_t l) {
            return static_cast<int64_t>(hash2(w.globalThread(l), seed + 5) % (1u << 20));
        });
        w.read(9, acc, i);
        w.write(10, acc, i);
        w.write(11, out0, i);
        w.write(12, out1, i);
    });
    return std::move(k).finish();
}

const std::vector<ExampleKernel>& exampleKernels() {
    static const std::vector<ExampleKernel> kKernels = {
        {"poly_eval", "warp-uniform reads of an 8-entry coefficient table in a streaming kernel",
         polyCoefficients},
        {"table_lookup", "scattered reads of a 4 KB table that every block reuses", tableLookup},
        {"saxpy", "streaming: y = a*x + y", saxpy},
        {"spmv_csr", "scalar CSR sparse matrix-vector product (x gathered)", csrSpmv},
        {"jacobi2d", "5-point stencil on a 2048x1024 grid, 32x8 blocks", stencil2d},
        {"many_arrays", "twelve arrays of mixed patterns", manyArrays},
    };
    return kKernels;
}

Expected<Trace> randomKernel(uint64_t seed, uint32_t arrays, uint32_t blocks, uint32_t threads,
                             PlaceSet feasible) {
    Rng rng(seed);
    Launch l;
    l.grid = {blocks, 1, 1};
    l.block = {threads, 1, 1};
    KernelBuilder k(fmt::format("random_{}", seed), l);
    const uint64_t n = uint64_t{blocks} * threads;
    enum Pattern { Stream, Uniform, Table, Strided, Gather, Written, kPatterns };
    struct Spec {
        Pattern pattern;
        uint16_t id;
        uint64_t length;
        uint32_t repeats;
        uint32_t stride;
        bool readsToo;
    };
    std::vector<Spec> specs;
    for (uint32_t a = 0; a < arrays; ++a) {
        auto p = static_cast<Pattern>(rng.below(kPatterns));
        Spec s{p, 0, n, 1 + static_cast<uint32_t>(rng.below(4)), 1, false};
        ArrayMode mode = ArrayMode::Read;
        switch (p) {
        case Stream:
            s.length = n;
            break;
        case Uniform:
            s.length = 4 + rng.below(60);
            break;
        case Table:
            s.length = 64u << rng.below(8); // 256 B .. 32 KB
            break;
        case Strided:
            s.stride = 2 + static_cast<uint32_t>(rng.below(15));
            s.length = n * s.stride;
            break;
        case Gather:
            s.length = 1024u << rng.below(10);
            break;
        case Written:
            s.length = n;
            mode = rng.below(2) == 0 ? ArrayMode::Write : ArrayMode::ReadWrite;
            s.readsToo = mode == ArrayMode::ReadWrite;
            s.repeats = 1;
            break;
        default:
            break;
        }
        ArrayInfo info = arrayInfo(fmt::format("a{}", a), s.length, mode);
        info.feasible = feasible;
        s.id = k.array(info);
        specs.push_back(s);
    }
    k.run([&](Warp& w) {
        for (uint32_t si = 0; si < specs.size(); ++si) {
            const Spec& s = specs[si];
            for (uint32_t r = 0; r < s.repeats; ++r) {
                auto g = [&](uint32_t lane) { return w.globalThread(lane); };
                switch (s.pattern) {
                case Stream:
                    w.read(si, s.id, [&](uint32_t lane) { return static_cast<int64_t>(g(lane)); });
                    break;
                case Uniform:
                    w.read(si, s.id, [&](uint32_t) {
                        return static_cast<int64_t>((r * 7 + w.warp()) % s.length);
                    });
                    break;
                case Table:
                case Gather:
                    w.read(si, s.id, [&](uint32_t lane) {
                        return static_cast<int64_t>(hash2(g(lane) + 977 * r, seed) % s.length);
                    });
                    break;
                case Strided:
                    w.read(si, s.id,
                           [&](uint32_t lane) { return static_cast<int64_t>(g(lane) * s.stride); });
                    break;
                case Written:
                    if (s.readsToo) {
                        w.read(si, s.id,
                               [&](uint32_t lane) { return static_cast<int64_t>(g(lane)); });
                    }
                    w.write(si, s.id, [&](uint32_t lane) { return static_cast<int64_t>(g(lane)); });
                    break;
                default:
                    break;
                }
            }
        }
    });
    return std::move(k).finish();
}

Expected<Trace> benchmarkTrace(uint64_t lanes, uint64_t seed) {
    // Per warp and step: 4 records of 32 lanes (stream, table, uniform, strided).
    const uint64_t perWarpStep = 4 * 32;
    const uint32_t threads = 256;
    const uint32_t steps = 16;
    uint64_t warps = std::max<uint64_t>(1, lanes / (perWarpStep * steps));
    uint64_t blocks = std::max<uint64_t>(1, (warps + 7) / 8);
    Launch l;
    l.grid = {static_cast<uint32_t>(blocks), 1, 1};
    l.block = {threads, 1, 1};
    KernelBuilder k("bench", l);
    const uint64_t n = blocks * threads;
    uint16_t stream = k.array(arrayInfo("stream", n * steps, ArrayMode::Read));
    uint16_t table = k.array(arrayInfo("table", 16384, ArrayMode::Read));
    uint16_t uni = k.array(arrayInfo("uniform", 256, ArrayMode::Read));
    uint16_t strided = k.array(arrayInfo("strided", n * 8, ArrayMode::ReadWrite));
    k.run([&](Warp& w) {
        for (uint32_t s = 0; s < steps; ++s) {
            auto g = [&](uint32_t lane) { return w.globalThread(lane); };
            w.read(0, stream, [&](uint32_t lane) { return static_cast<int64_t>(s * n + g(lane)); });
            w.read(1, table, [&](uint32_t lane) {
                return static_cast<int64_t>(hash2(g(lane) * 31 + s, seed) % 16384);
            });
            w.read(2, uni, [&](uint32_t) { return static_cast<int64_t>(s); });
            w.access(
                3, strided, s % 4 == 3 ? AccessKind::Write : AccessKind::Read,
                [&](uint32_t lane) { return static_cast<int64_t>((g(lane) * 8 + s) % (n * 8)); });
        }
    });
    return std::move(k).finish();
}

Expected<Trace> gatherTrace(uint64_t lanes, uint64_t seed) {
    const uint32_t threads = 256;
    const uint32_t steps = 16;
    uint64_t warps = std::max<uint64_t>(1, lanes / (2 * 32 * steps));
    uint64_t blocks = std::max<uint64_t>(1, (warps + 7) / 8);
    Launch l;
    l.grid = {static_cast<uint32_t>(blocks), 1, 1};
    l.block = {threads, 1, 1};
    KernelBuilder k("gather", l);
    const uint64_t n = blocks * threads;
    const uint64_t table = uint64_t{1} << 24;
    uint16_t idx = k.array(arrayInfo("idx", n * steps, ArrayMode::Read));
    uint16_t data = k.array(arrayInfo("data", table, ArrayMode::Read));
    k.run([&](Warp& w) {
        for (uint32_t s = 0; s < steps; ++s) {
            w.read(0, idx, [&](uint32_t lane) {
                return static_cast<int64_t>(s * n + w.globalThread(lane));
            });
            w.read(1, data, [&](uint32_t lane) {
                return static_cast<int64_t>(hash2(w.globalThread(lane) * 131 + s, seed) % table);
            });
        }
    });
    return std::move(k).finish();
}

} // namespace memplace::trace::synth

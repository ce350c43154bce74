// Linked into a rewritten corpus program (both under the CPU emulation layer and with nvcc for a
// GPU), this installs a PlacementPolicy that traces every launch made through memplace::launch in
// full (every block) and appends each trace to $MEMPLACE_TRACE_DUMP in a canonical text form, so
// that the emulator's traces can be compared with a GPU's (tests/trace/compare_traces.py).
//
// Canonical form, one launch after another in launch order (host code is sequential):
//
//   memplace-canonical-trace 1
//   launch 1 kernel saxpy grid 4 1 1 block 256 1 1 produced 96 overflow 0
//   array 0 x elem=4
//   r 0 0 3 0 0xffffffff 0 1 2 ... 31 # seq 0
//   end
//
// A record line is `kind block warp site array mask offset...`: the kind is r (read), w (write),
// a (atomic: read|write|atomic) or f<flags>; the mask in hex; one element offset per lane of the
// mask, in lane order. Records are sorted by (block, warp, site, array), and records with equal
// keys keep the order the warp produced them in (its program order). `# seq N` is the record's
// position in its warp's own order, for information (compare_traces.py reports it, the
// comparison ignores it). Environment: MEMPLACE_TRACE_DUMP (the file; nothing is installed
// without it), MEMPLACE_TRACE_DUMP_RECORDS (buffer capacity in records, default 2^20),
// MEMPLACE_TRACE_DUMP_BLOCKS (N: the first N blocks and the last block of every launch are
// traced, default 4, so that the recordings stay small; 0: every block).
#include "memplace/host.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace {

class DumpPolicy : public memplace::PlacementPolicy {
public:
    DumpPolicy(std::string path, std::size_t capacity, uint32_t blocks)
        : path_(std::move(path)), cap_(capacity), blocks_(blocks) {
        std::FILE* f = std::fopen(path_.c_str(), "w");
        if (f == nullptr) {
            std::fprintf(stderr, "trace_dump: cannot write %s\n", path_.c_str());
            std::exit(3);
        }
        std::fprintf(f, "memplace-canonical-trace 1\n");
        std::fclose(f);
    }

    memplace::Decision decide(const memplace::LaunchInfo& info) override {
        memplace::Decision d;
        d.kind = memplace::Decision::Kind::Trace;
        d.trace.maxRecords = cap_;
        d.trace.sampleEvery = 1;
        const unsigned long long n = 1ULL * info.grid.x * info.grid.y * info.grid.z;
        if (blocks_ != 0 && n > blocks_ + 1ULL) {
            for (uint32_t b = 0; b < blocks_; ++b) {
                d.trace.blocks.push_back(b);
            }
            d.trace.blocks.push_back(static_cast<uint32_t>(n - 1));
        }
        return d;
    }

    void traced(const memplace::LaunchInfo& info, memplace::TraceResult tr) override {
        ++launches_;
        std::FILE* f = std::fopen(path_.c_str(), "a");
        if (f == nullptr) {
            std::fprintf(stderr, "trace_dump: cannot append to %s\n", path_.c_str());
            std::exit(3);
        }
        std::string sampled = "all";
        if (!tr.sampledBlocks.empty()) {
            sampled.clear();
            for (uint32_t b : tr.sampledBlocks) {
                sampled += (sampled.empty() ? "" : ",") + std::to_string(b);
            }
        }
        std::fprintf(f,
                     "launch %d kernel %s grid %u %u %u block %u %u %u blocks %s produced %llu "
                     "overflow %d\n",
                     launches_, tr.kernel.c_str(), tr.grid.x, tr.grid.y, tr.grid.z, tr.block.x,
                     tr.block.y, tr.block.z, sampled.c_str(),
                     static_cast<unsigned long long>(tr.produced), tr.overflow ? 1 : 0);
        for (std::size_t i = 0; i < info.arrays.size(); ++i) {
            std::fprintf(f, "array %zu %s elem=%zu\n", i, info.arrays[i].name.c_str(),
                         info.arrays[i].elemSize);
        }
        // Each warp's own order: buffer order within the warp.
        std::vector<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, std::size_t, std::size_t>>
            keys; // block, warp, site, array, buffer position, seq
        keys.reserve(tr.records.size());
        {
            std::vector<std::tuple<uint32_t, uint32_t, std::size_t>> byWarp;
            byWarp.reserve(tr.records.size());
            for (std::size_t i = 0; i < tr.records.size(); ++i) {
                byWarp.emplace_back(tr.records[i].block, tr.records[i].warp, i);
            }
            std::sort(byWarp.begin(), byWarp.end());
            std::size_t seq = 0;
            for (std::size_t k = 0; k < byWarp.size(); ++k) {
                if (k > 0 && (std::get<0>(byWarp[k]) != std::get<0>(byWarp[k - 1]) ||
                              std::get<1>(byWarp[k]) != std::get<1>(byWarp[k - 1]))) {
                    seq = 0;
                }
                const memplace::TraceRecord& r = tr.records[std::get<2>(byWarp[k])];
                keys.emplace_back(r.block, r.warp, r.site, r.array, std::get<2>(byWarp[k]), seq++);
            }
        }
        std::sort(keys.begin(), keys.end()); // seq follows buffer position within a warp
        for (const auto& k : keys) {
            const memplace::TraceRecord& r = tr.records[std::get<4>(k)];
            std::string kind;
            switch (r.flags) {
            case memplace::kTraceRead:
                kind = "r";
                break;
            case memplace::kTraceWrite:
                kind = "w";
                break;
            case memplace::kTraceRead | memplace::kTraceWrite | memplace::kTraceAtomic:
                kind = "a";
                break;
            default:
                kind = "f" + std::to_string(r.flags);
            }
            std::string line = kind + " " + std::to_string(r.block) + " " + std::to_string(r.warp) +
                               " " + std::to_string(r.site) + " " + std::to_string(r.array);
            char mask[16];
            std::snprintf(mask, sizeof mask, " 0x%08x", r.activeMask);
            line += mask;
            for (unsigned l = 0; l < 32; ++l) {
                if ((r.activeMask >> l) & 1u) {
                    line += " " + std::to_string(r.offset[l]);
                }
            }
            std::fprintf(f, "%s # seq %zu\n", line.c_str(), std::get<5>(k));
        }
        std::fprintf(f, "end\n");
        std::fclose(f);
    }

private:
    std::string path_;
    std::size_t cap_;
    uint32_t blocks_;
    int launches_ = 0;
};

struct Install {
    Install() {
        const char* path = std::getenv("MEMPLACE_TRACE_DUMP");
        if (path == nullptr || *path == '\0') {
            return;
        }
        std::size_t cap = std::size_t{1} << 20;
        if (const char* c = std::getenv("MEMPLACE_TRACE_DUMP_RECORDS"); c != nullptr && *c) {
            cap = std::strtoull(c, nullptr, 10);
        }
        uint32_t blocks = 4;
        if (const char* c = std::getenv("MEMPLACE_TRACE_DUMP_BLOCKS"); c != nullptr && *c) {
            blocks = static_cast<uint32_t>(std::strtoul(c, nullptr, 10));
        }
        memplace::setPlacementPolicy(std::make_shared<DumpPolicy>(path, cap, blocks));
    }
};
const Install kInstall;

} // namespace

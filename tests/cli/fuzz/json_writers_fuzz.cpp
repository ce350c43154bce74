// libFuzzer target: every JSON writer behind `--json` and the Placer's report, with fuzzed
// bytes in every name and message they print (invalid UTF-8 included): each writes JSON that
// parses again, never a crash or an uncaught exception.
//
// Input layout (docs/fuzzing.md): the bytes split at NUL into strings, used in turn (cycling)
// as file, kernel, array, type, place-reason, hazard and warning texts; the writers are
// kernelinfo::toJson/formatJson, spec::toJson, model::statsJson/placementJson/predictionJson
// (`memplace place --json`), rewrite::toJson and placer::Placer::reportJson. The trace
// commands' --json output is built inside cli/cmd_trace.cpp from the same strings (kernel and
// array names) and is not reachable from here.
#include "common/json.h"
#include "kernelinfo/kernel_info_json.h"
#include "model/analysis.h"
#include "model/model.h"
#include "model/report.h"
#include "rewrite/rewrite.h"
#include "spec/spec.h"
#include "spec/spec_json.h"
#include "trace/trace.h"

// Last: the emulation layer's CUDA headers define blockDim and friends as macros.
#include "placer/placer.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

using namespace memplace;

namespace {

/// The input's strings, handed out in turn.
class Strings {
public:
    Strings(const uint8_t* data, size_t size) {
        std::string_view all(reinterpret_cast<const char*>(data), size);
        size_t pos = 0;
        while (pos <= all.size()) {
            const size_t nul = all.find('\0', pos);
            parts_.emplace_back(all.substr(pos, nul == std::string_view::npos ? nul : nul - pos));
            if (nul == std::string_view::npos) {
                break;
            }
            pos = nul + 1;
        }
    }
    const std::string& next() { return parts_[next_++ % parts_.size()]; }

private:
    std::vector<std::string> parts_;
    size_t next_ = 0;
};

/// What a writer produced must be JSON.
void mustParse(const std::string& text) {
    if (!nlohmann::json::accept(text)) {
        std::abort();
    }
}

void kernelInfoJson(Strings& s) {
    kernelinfo::FileInfo info;
    info.file = s.next();
    kernelinfo::KernelInfo k;
    k.name = s.next();
    k.instantiation = s.next();
    k.templateArgs = {s.next()};
    kernelinfo::ArrayInfo a;
    a.name = s.next();
    a.elementType = s.next();
    a.declaration.file = s.next();
    a.feasible = PlaceSet{Place::Global};
    a.excluded[Place::Shared] = s.next();
    k.arrays.push_back(a);
    kernelinfo::Hazard h;
    h.array = a.name;
    h.message = s.next();
    h.location.file = s.next();
    k.hazards.push_back(h);
    k.untracked = {s.next()};
    info.kernels.push_back(k);
    info.warnings = {s.next()};
    const auto j = kernelinfo::toJson(info);
    mustParse(kernelinfo::formatJson(j));
    mustParse(dumpJson(j));
}

void specJson(Strings& s) {
    auto spec = spec::parseSpec(*spec::builtinSpecText("h100"), "h100");
    if (!spec) {
        std::abort();
    }
    spec->name = s.next();
    spec->processor.name = s.next();
    if (!spec->memories.empty()) {
        spec->memories.front().unit = s.next();
    }
    spec->assumptions.push_back({{}, s.next()});
    mustParse(dumpJson(spec::toJson(*spec)));
}

void modelJson(Strings& s) {
    auto spec = spec::parseSpec(*spec::builtinSpecText("h100"), "h100");
    trace::TraceHeader h;
    h.kernel = s.next();
    h.grid = {1, 1, 1};
    h.block = {32, 1, 1};
    h.arrays.push_back(
        {.name = s.next(), .elementSize = 4, .length = 64, .mode = trace::ArrayMode::Read});
    trace::TraceBuilder b(std::move(h));
    std::vector<int64_t> offsets(32);
    for (int i = 0; i < 32; ++i) {
        offsets[i] = i;
    }
    b.add(0, 0, 0, 0, trace::AccessKind::Read, 0xffffffffu, offsets);
    auto t = std::move(b).finish();
    if (!spec || !t) {
        return; // a name the trace format refuses (whitespace, empty)
    }
    auto stats = model::analyze(*t, *spec);
    if (!stats) {
        return;
    }
    mustParse(dumpJson(model::statsJson(*stats, true)));
    model::Model m(*spec, std::move(*stats));
    mustParse(dumpJson(model::placementJson(m, m.original())));
    mustParse(dumpJson(model::predictionJson(m.predict(m.original()))));
}

void rewriteJson(Strings& s) {
    rewrite::RewriteResult r;
    r.file = s.next();
    rewrite::KernelReport k;
    k.name = s.next();
    k.instantiations = {s.next()};
    k.reason = s.next();
    k.descriptor = s.next();
    rewrite::ArrayReport a;
    a.name = s.next();
    a.elementType = s.next();
    a.reason = s.next();
    a.likely = s.next();
    k.arrays.push_back(a);
    k.jitReason = s.next();
    r.kernels.push_back(k);
    r.helpers = {s.next()};
    r.warnings.warning({s.next(), 1, 1}, s.next());
    mustParse(dumpJson(rewrite::toJson(r, s.next())));
}

void placerReport(Strings& s) {
    placer::Options o;
    o.mode = placer::PlacerMode::Trace;
    o.quiet = true;
    o.verify = false;
    o.spec = "/nonexistent/" + s.next(); // quoted into a warning; never a real file
    placer::Placer p(o);
    LaunchInfo info;
    info.kernel = s.next();
    info.grid = dim3(1, 1, 1);
    info.block = dim3(32, 1, 1);
    ArrayInfo a;
    a.name = s.next();
    a.elemSize = 4;
    a.mode = Mode::Read;
    a.feasible = PlaceSet{Place::Global};
    info.arrays.push_back(a);
    (void)p.decide(info);
    mustParse(p.reportJson());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Strings s(data, size);
    kernelInfoJson(s);
    specJson(s);
    modelJson(s);
    rewriteJson(s);
    placerReport(s);
    return 0;
}

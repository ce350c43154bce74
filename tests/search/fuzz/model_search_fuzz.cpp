// libFuzzer target: the model and every search algorithm on fuzzed traces and specs. Whatever
// the bytes, model::analyze gives statistics or diagnostics, and a Model built from them gives
// every algorithm (with small node, placement and time limits) a result or diagnostics: never a
// crash, a hang, a sanitizer report or a NaN cost.
//
// Input layout (docs/fuzzing.md):
//   byte 0: bits 0-3 choose the spec (a built-in one by index; past the last: the MSL text after
//           the separator below, or h100 when there is none); bit 4 the cache policy, bit 5 the
//           path model, bits 6-7 the boundedness;
//   byte 1: odd: the trace is binary and gets its magic and checksum fixed, so mutations reach
//           the reader's structural checks and the model instead of stopping at the CRC;
//           bits 1-2: line sampling rate 1, 1/2, 1/8 or 1/64;
//   the rest: the trace (binary, text or PORPLE), optionally followed by "\n%%spec\n" and an MSL
//   spec.
#include "model/analysis.h"
#include "model/model.h"
#include "model/report.h"
#include "search/search.h"
#include "spec/spec.h"
#include "trace/trace_io.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

using namespace memplace;

namespace {

constexpr std::string_view kSpecSeparator = "\n%%spec\n";

[[noreturn]] void fail(const char* what, const char* algorithm = "") {
    std::fprintf(stderr, "model_search_fuzz: %s %s\n", what, algorithm);
    std::abort();
}

std::optional<spec::Spec> chooseSpec(uint8_t selector, std::string_view mslText) {
    const auto& names = spec::builtinSpecNames();
    const size_t pick = selector & 0x0fu;
    if (pick < names.size()) {
        auto s = spec::parseSpec(*spec::builtinSpecText(names[pick]), names[pick]);
        return s ? std::optional<spec::Spec>(std::move(*s)) : std::nullopt;
    }
    auto s = mslText.empty() ? spec::parseSpec(*spec::builtinSpecText("h100"), "h100")
                             : spec::parseSpec(mslText, "fuzz.msl");
    return s ? std::optional<spec::Spec>(std::move(*s)) : std::nullopt;
}

std::optional<trace::Trace> readTrace(std::string bytes, bool fixBinary) {
    if (fixBinary && bytes.size() >= 52) {
        bytes.replace(0, trace::kBinaryMagic.size(), trace::kBinaryMagic);
        const uint32_t crc = trace::crc32(std::string_view(bytes).substr(0, bytes.size() - 4));
        for (int k = 0; k < 4; ++k) {
            bytes[bytes.size() - 4 + k] = static_cast<char>((crc >> (8 * k)) & 0xff);
        }
    }
    if (auto t = trace::readBinary(bytes, "fuzz.bin")) {
        return std::move(*t);
    }
    if (auto t = trace::parseText(bytes, "fuzz.trace")) {
        return std::move(*t);
    }
    if (auto t = trace::importPorple(bytes, "fuzz.txt")) {
        return std::move(*t);
    }
    return std::nullopt;
}

/// A cost is a number or +infinity (infeasible); never NaN, never below zero.
void checkCost(double c, const char* what, const char* algorithm = "") {
    if (std::isnan(c) || c < 0) {
        fail(what, algorithm);
    }
}

void checkPrediction(const model::Prediction& p, const char* what) {
    checkCost(p.cycles, what);
    checkCost(p.seconds, what);
    for (const auto& path : p.paths) {
        checkCost(path.cycles, what);
    }
    for (const auto& a : p.arrays) {
        checkCost(a.cycles, what);
    }
    (void)model::predictionJson(p).dump();
}

void searchAll(const model::Model& m) {
    for (auto algorithm : {search::Algorithm::Exhaustive, search::Algorithm::BranchAndBound,
                           search::Algorithm::Greedy, search::Algorithm::Rules}) {
        search::SearchOptions o;
        o.algorithm = algorithm;
        o.exhaustiveLimit = 20'000;
        o.nodeLimit = 20'000;
        o.timeLimitSeconds = 0.05;
        const auto name = std::string(search::algorithmName(algorithm));
        auto r = search::search(m, o);
        if (!r) {
            continue; // e.g. exhaustive refuses a space above its limit
        }
        checkCost(r->best.cycles, "best cycles", name.c_str());
        checkCost(r->best.pathSum, "best path sum", name.c_str());
        for (const auto& c : r->alternatives) {
            checkCost(c.cycles, "alternative cycles", name.c_str());
        }
        if (r->best.placement.size() == m.arrayCount() && std::isfinite(r->best.cycles)) {
            checkPrediction(m.predict(r->best.placement), "prediction of the best");
            (void)model::placementJson(m, r->best.placement).dump();
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) {
        return 0;
    }
    const uint8_t selector = data[0];
    const uint8_t traceFlags = data[1];
    std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
    std::string_view traceBytes = rest;
    std::string_view mslText;
    if (size_t at = rest.find(kSpecSeparator); at != std::string_view::npos) {
        traceBytes = rest.substr(0, at);
        mslText = rest.substr(at + kSpecSeparator.size());
    }

    auto s = chooseSpec(selector, mslText);
    if (!s) {
        return 0;
    }
    auto t = readTrace(std::string(traceBytes), (traceFlags & 1u) != 0);
    if (!t) {
        return 0;
    }
    model::AnalysisOptions ao;
    constexpr double kRates[] = {1.0, 0.5, 0.125, 1.0 / 64};
    ao.lineSampleRate = kRates[(traceFlags >> 1) & 3u];
    auto stats = model::analyze(*t, *s, ao);
    if (!stats) {
        return 0;
    }
    (void)model::statsJson(*stats, true).dump();

    model::ModelOptions mo;
    mo.cache =
        (selector & 0x10u) != 0 ? model::CachePolicy::EqualSplit : model::CachePolicy::Footprint;
    mo.paths = (selector & 0x20u) != 0 ? model::PathModel::Porple : model::PathModel::SharedUnits;
    constexpr model::Boundedness kBounds[] = {model::Boundedness::Auto, model::Boundedness::Memory,
                                              model::Boundedness::Compute,
                                              model::Boundedness::Auto};
    mo.bound = kBounds[(selector >> 6) & 3u];
    model::Model m(*s, std::move(*stats), mo);

    checkCost(m.cycles(m.original()), "cycles of the original");
    checkCost(m.cycles(m.baseline()), "cycles of the baseline");
    checkPrediction(m.predict(m.original()), "prediction of the original");
    searchAll(m);
    return 0;
}

// The Placer's options: its modes' names and Options read from the MEMPLACE_* variables.

#include "common/env.h"
#include "placer_internal.h"

#include <cstdio>
#include <cstdlib>

namespace memplace::placer {

std::string_view modeName(PlacerMode m) {
    switch (m) {
    case PlacerMode::Off:
        return "off";
    case PlacerMode::Trace:
        return "trace";
    default:
        return "auto";
    }
}

std::string decisionCacheDir() {
    const std::optional<std::string> dir = env::readText("MEMPLACE_CACHE");
    if (!dir) {
        return env::userFolder("XDG_CACHE_HOME", ".cache", "memplace/decisions");
    }
    return env::isOffWord(*dir) ? std::string() : *dir;
}

Options Options::fromEnvironment(std::vector<std::string>* warnings) {
    Options o;
    std::vector<std::string> w;
    const env::EnvConfig memplace = env::parseMemplaceEnv(std::getenv("MEMPLACE"));
    // The runtime reports its own parse warnings; here only the mode matters.
    switch (memplace.mode) {
    case env::EnvConfig::Mode::Off:
    case env::EnvConfig::Mode::Force:
        o.mode = PlacerMode::Off;
        break;
    case env::EnvConfig::Mode::Trace:
        o.mode = PlacerMode::Trace;
        break;
    default:
        o.mode = PlacerMode::Auto;
        break;
    }
    o.spec = env::readText("MEMPLACE_SPEC").value_or(o.spec);
    o.specDir = defaultSpecDir();
    o.cacheDir = decisionCacheDir();
    o.reportPath = env::readText("MEMPLACE_REPORT").value_or(o.reportPath);
    o.traceDir = env::readText("MEMPLACE_TRACE_DIR").value_or(o.traceDir);
    o.timeKernels = env::readSwitch("MEMPLACE_TIME", o.timeKernels, w);
#if !defined(MEMPLACE_EMU)
    o.verify = env::readSwitch("MEMPLACE_VERIFY", o.verify, w);
#endif
    o.quiet = env::readSwitch("MEMPLACE_QUIET", o.quiet, w);
    env::readNumber("MEMPLACE_TRACE_SMS", o.sampling.sms, w);
    env::readNumber("MEMPLACE_TRACE_BLOCKS", o.sampling.blocksPerSm, w);
    env::readNumber("MEMPLACE_TRACE_WAVES", o.sampling.waves, w);
    env::readNumber("MEMPLACE_TRACE_RECORDS", o.sampling.maxRecords, w);
    env::readNumber("MEMPLACE_SEARCH_MS", o.searchMs, w);
    env::readNumber("MEMPLACE_TUNE", o.tuneCandidates, w);
    env::readNumber("MEMPLACE_TUNE_EXPLORE", o.tuneExplore, w);
    env::readNumber("MEMPLACE_TIMING_SPIN_US", o.timingSpinUs, w);
    env::readNumber("MEMPLACE_TUNE_MIN_US", o.tuneMinUs, w);
    env::readNumber("MEMPLACE_TRACE_AFTER", o.traceAfter, w);
    env::readNumber("MEMPLACE_TRACES_PER_KERNEL", o.tracesPerKernel, w);
    if (const char* v = env::value("MEMPLACE_SEARCH")) {
        if (auto a = search::parseAlgorithm(v)) {
            o.search = *a;
        } else {
            w.push_back(env::badValue(*env::find("MEMPLACE_SEARCH"), v));
        }
    }
    if (warnings != nullptr) {
        warnings->insert(warnings->end(), w.begin(), w.end());
    } else if (!o.quiet) {
        for (const std::string& s : w) {
            std::fprintf(stderr, "memplace: %s\n", s.c_str());
        }
    }
    return o;
}

} // namespace memplace::placer

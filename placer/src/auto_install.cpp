// Linking the Placer installs it: this object's static initialiser installs a Placer with the
// environment's options (unless MEMPLACE is off or force:...); MEMPLACE=sweep installs the
// evaluation's SweepPolicy around it (placer/sweep.h). Static libraries only contribute
// objects that resolve an undefined symbol, so the library's link interface adds
// `-Wl,--undefined=memplace_placer_autoinstall` (CMake does it for targets linking
// memplace_placer / memplace_placer_emu; by hand, pass that flag or link this object itself).
#include "common/env.h"
#include "placer/placer.h"
#include "placer/sweep.h"

#include <cstdio>
#include <cstdlib>

extern "C" {
/// The symbol the link option names; its value says whether the initialiser installed a Placer.
int memplace_placer_autoinstall = 0; // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
}

namespace {

struct AutoInstall {
    AutoInstall() {
        using namespace memplace::placer;
        std::vector<std::string> warnings;
        const Options o = Options::fromEnvironment(&warnings);
        if (!o.quiet) {
            for (const std::string& w : warnings) {
                std::fprintf(stderr, "memplace placer: %s\n", w.c_str());
            }
        }
        const bool sweep = memplace::env::parseMemplaceEnv(std::getenv("MEMPLACE")).mode ==
                           memplace::env::EnvConfig::Mode::Sweep;
        if (o.mode != PlacerMode::Off && !installed()) {
            if (sweep) {
                // The evaluation's sweep (placer/sweep.h) around the Placer.
                std::vector<std::string> sw;
                const SweepOptions so = SweepOptions::fromEnvironment(&sw);
                if (!o.quiet) {
                    for (const std::string& w : sw) {
                        std::fprintf(stderr, "memplace sweep: %s\n", w.c_str());
                    }
                }
                installSweep(o, so);
            } else {
                install(o);
            }
            memplace_placer_autoinstall = 1;
        }
    }
};

const AutoInstall kAutoInstall;

} // namespace

// libFuzzer target: any bytes given to the MSL parser give a Spec or diagnostics, never a
// crash, a hang or a sanitizer report. Printing what parses must parse again.
#include "spec/spec.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto spec = memplace::spec::parseSpec(text, "fuzz.msl");
    if (spec) {
        auto again = memplace::spec::parseSpec(memplace::spec::printSpec(*spec), "printed.msl");
        if (!again || !memplace::spec::equivalent(*spec, *again)) {
            std::abort(); // the printer and the parser disagree
        }
    } else {
        (void)spec.message();
    }
    return 0;
}

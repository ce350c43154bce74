// libFuzzer target: any bytes given to the trace readers (binary, text, PORPLE) give a trace or
// diagnostics, never a crash, a hang or a sanitizer report. Inputs whose first byte is odd get
// their checksum fixed first, so mutations reach the binary reader's structural checks instead
// of stopping at the CRC. What reads must write and read back the same.
#include "trace/trace_io.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

using namespace memplace::trace;

namespace {
void roundTrip(const Trace& t) {
    auto again = readBinary(writeBinary(t), "again");
    if (!again || again->records().size() != t.records().size() ||
        again->laneCount() != t.laneCount() || !(again->header() == t.header())) {
        std::abort();
    }
    auto text = parseText(writeText(t), "again.trace");
    if (!text || text->records().size() != t.records().size()) {
        std::abort();
    }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string bytes(reinterpret_cast<const char*>(data), size);
    if (size > 0 && (data[0] & 1u) != 0 && size >= 52) {
        // Drop the selector byte's meaning: rebuild the magic and the checksum.
        bytes.replace(0, kBinaryMagic.size(), kBinaryMagic);
        uint32_t crc = crc32(std::string_view(bytes).substr(0, bytes.size() - 4));
        for (int k = 0; k < 4; ++k) {
            bytes[bytes.size() - 4 + k] = static_cast<char>((crc >> (8 * k)) & 0xff);
        }
    }
    if (auto t = readBinary(bytes, "fuzz.bin")) {
        roundTrip(*t);
    }
    if (auto t = parseText(bytes, "fuzz.trace")) {
        roundTrip(*t);
    }
    if (auto t = importPorple(bytes, "fuzz.txt")) {
        roundTrip(*t);
    }
    return 0;
}

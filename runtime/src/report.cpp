// Launch reports: what each launch requested, placed and why not (LaunchReport), as JSON, the
// calling thread's last one, and the fallbacks said once on stderr.
#include "runtime/src/runtime_internal.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace memplace {

namespace detail {

std::string jsonEscape(const std::string& s) {
    std::string o;
    for (char c : s) {
        switch (c) {
        case '"':
            o += "\\\"";
            break;
        case '\\':
            o += "\\\\";
            break;
        case '\n':
            o += "\\n";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                o += buf;
            } else {
                o += c;
            }
        }
    }
    return o;
}

void warnFallbacks(Runtime& r, const KernelView& kv, const LaunchReport& rep) {
    for (const ArrayReport& ar : rep.arrays) {
        if (!ar.fallback.empty()) {
            warnOnce(r, std::string(kv.name) + ": array " + ar.name + " requested " +
                            std::string(placeName(ar.requested)) +
                            ", placed global: " + ar.fallback);
        }
    }
}

} // namespace detail

// ---- public API: reports ----------------------------------------------------------------------

LaunchReport lastReport() {
    return detail::tlsLastReport;
}

bool LaunchReport::anyFallback() const {
    return std::any_of(arrays.begin(), arrays.end(),
                       [](const ArrayReport& a) { return !a.fallback.empty(); });
}

// NOLINTBEGIN(modernize-raw-string-literal)
std::string LaunchReport::toJson() const {
    using detail::jsonEscape;
    std::ostringstream o;
    o << "{\"kernel\":\"" << jsonEscape(kernel) << "\",\"grid\":[" << grid.x << ',' << grid.y << ','
      << grid.z << "],\"block\":[" << block.x << ',' << block.y << ',' << block.z
      << "],\"sharedBytesOriginal\":" << sharedBytesOriginal
      << ",\"sharedBytesTotal\":" << sharedBytesTotal << ",\"dispatch\":\"" << dispatch
      << "\",\"instantiation\":" << instantiation << ",\"hostMicros\":" << hostMicros
      << ",\"status\":\"" << cudaGetErrorName(status) << "\",\"launchId\":" << launchId
      << ",\"timed\":" << (timed ? "true" : "false") << ",\"jit\":\"" << jit
      << "\",\"jitDetail\":\"" << jsonEscape(jitDetail) << "\",\"jitCompileMs\":" << jitCompileMs
      << ",\"jitBackground\":" << (jitBackground ? "true" : "false")
      << ",\"jitLoadMs\":" << jitLoadMs << ",\"notShadowed\":\"" << jsonEscape(notShadowed)
      << "\",\"arrays\":[";
    for (std::size_t j = 0; j < arrays.size(); ++j) {
        const ArrayReport& a = arrays[j];
        o << (j ? "," : "") << "{\"name\":\"" << jsonEscape(a.name) << "\",\"requested\":\""
          << placeName(a.requested) << "\",\"placed\":\"" << placeName(a.placed)
          << "\",\"source\":\"" << a.source << "\",\"fallback\":\"" << jsonEscape(a.fallback)
          << "\",\"extentBytes\":" << a.extentBytes
          << ",\"extentKnown\":" << (a.extentKnown ? "true" : "false")
          << ",\"bytesMoved\":" << a.bytesMoved << '}';
    }
    o << "],\"errors\":[";
    for (std::size_t i = 0; i < errors.size(); ++i) {
        o << (i ? "," : "") << '"' << jsonEscape(errors[i]) << '"';
    }
    o << "]}";
    return o.str();
}
// NOLINTEND(modernize-raw-string-literal)

} // namespace memplace

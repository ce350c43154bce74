#include "trace/trace_io.h"

#include <fmt/format.h>

namespace memplace::trace {

std::string_view traceFormatName(TraceFormat f) {
    switch (f) {
    case TraceFormat::Binary:
        return "binary";
    case TraceFormat::Text:
        return "text";
    case TraceFormat::Porple:
        return "porple";
    }
    return "binary";
}

std::optional<TraceFormat> parseTraceFormat(std::string_view name) {
    for (TraceFormat f : {TraceFormat::Binary, TraceFormat::Text, TraceFormat::Porple}) {
        if (traceFormatName(f) == name) {
            return f;
        }
    }
    return std::nullopt;
}

std::optional<TraceFormat> detectTraceFormat(std::string_view bytes) {
    if (bytes.substr(0, kBinaryMagic.size()) == kBinaryMagic) {
        return TraceFormat::Binary;
    }
    // Skip blank and comment lines before the first word.
    size_t i = 0;
    while (i < bytes.size()) {
        while (i < bytes.size() &&
               (bytes[i] == ' ' || bytes[i] == '\t' || bytes[i] == '\r' || bytes[i] == '\n')) {
            ++i;
        }
        if (i < bytes.size() && bytes[i] == '#') {
            while (i < bytes.size() && bytes[i] != '\n') {
                ++i;
            }
            continue;
        }
        break;
    }
    std::string_view rest = bytes.substr(std::min(i, bytes.size()));
    if (rest.substr(0, 14) == "memplace-trace") {
        return TraceFormat::Text;
    }
    for (std::string_view w : {"dimension", "sizeof", "block_X", "block_Y", "array_size"}) {
        if (rest.substr(0, w.size()) == w) {
            return TraceFormat::Porple;
        }
    }
    return std::nullopt;
}

Expected<Trace> loadTrace(const std::filesystem::path& path, std::optional<TraceFormat> format) {
    auto bytes = readFile(path);
    if (!bytes) {
        return std::move(bytes).takeFailure();
    }
    std::string name = path.string();
    if (!format) {
        format = detectTraceFormat(*bytes);
    }
    if (!format) {
        return fail(SourceLocation{name, 0, 0},
                    "not a trace: expected the binary magic, 'memplace-trace 1', or PORPLE's "
                    "'dimension'/'sizeof'/'array_size' header");
    }
    switch (*format) {
    case TraceFormat::Binary:
        return readBinary(*bytes, name);
    case TraceFormat::Text:
        return parseText(*bytes, name);
    case TraceFormat::Porple:
        return importPorple(*bytes, name);
    }
    return fail("unknown trace format");
}

Expected<bool> saveTrace(const Trace& t, const std::filesystem::path& path, TraceFormat format,
                         Overwrite overwrite) {
    switch (format) {
    case TraceFormat::Binary:
        return writeFileAtomic(path, writeBinary(t), overwrite);
    case TraceFormat::Text:
        return writeFileAtomic(path, writeText(t), overwrite);
    case TraceFormat::Porple:
        break;
    }
    return fail("traces are written in the binary or the text form, not PORPLE's");
}

} // namespace memplace::trace

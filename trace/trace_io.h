// The three forms of a trace on disk (docs/trace-format.md):
//  - binary: versioned, compact (varints, delta-coded lane offsets), checksummed; what tracers
//    write and the Placer reads;
//  - text: line-oriented and readable, for tests and examples (examples/traces/*.trace);
//  - PORPLE: the whitespace format of PORPLE's public cost model (import only).
// Every reader rejects truncated or corrupted input with a message that says where and what,
// and never crashes (the binary reader is fuzzed: tests/trace/fuzz).
#pragma once

#include "common/expected.h"
#include "common/file_io.h"
#include "trace/trace.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace memplace::trace {

/// The binary form's first eight bytes.
inline constexpr std::string_view kBinaryMagic{"MPTRACE\x1a", 8};
inline constexpr uint16_t kBinaryVersionMajor = 1;
inline constexpr uint16_t kBinaryVersionMinor = 0;
/// The text form's first line.
inline constexpr std::string_view kTextMagic = "memplace-trace 1";

std::string writeBinary(const Trace& t);
Expected<Trace> readBinary(std::string_view bytes, std::string_view name);

std::string writeText(const Trace& t);
Expected<Trace> parseText(std::string_view text, std::string_view name);

struct PorpleImportOptions {
    std::string kernel = "porple";
    /// Threads per block. PORPLE's traces carry thread ids only; 0 means: the smallest multiple
    /// of 32 above the largest thread id, at most 1024 (more threads make more blocks).
    uint32_t threadsPerBlock = 0;
};
/// PORPLE's format: header lines `dimension`, `sizeof`, `block_X`, `block_Y`, `array_size`
/// (one column per array), then one lane access per line: `array rw expression loop thread
/// index` (rw 0 = read, 1 = write). Lanes with the same array, rw, expression, loop and warp
/// (thread / 32) form one warp access; warps keep the order of their first line.
Expected<Trace> importPorple(std::string_view text, std::string_view name,
                             const PorpleImportOptions& options = {});

enum class TraceFormat { Binary, Text, Porple };
std::string_view traceFormatName(TraceFormat f); ///< "binary", "text", "porple"
std::optional<TraceFormat> parseTraceFormat(std::string_view name);
/// From the first bytes: the binary magic, the text magic, or PORPLE's `dimension` line.
std::optional<TraceFormat> detectTraceFormat(std::string_view bytes);

/// Reads a file in the given form, or the detected one.
Expected<Trace> loadTrace(const std::filesystem::path& path,
                          std::optional<TraceFormat> format = std::nullopt);
/// Writes a file atomically in the binary or text form.
Expected<bool> saveTrace(const Trace& t, const std::filesystem::path& path, TraceFormat format,
                         Overwrite overwrite = Overwrite::No);

/// CRC-32 (IEEE 802.3, reflected, as zlib's crc32) of `bytes`.
uint32_t crc32(std::string_view bytes, uint32_t crc = 0);

} // namespace memplace::trace

// Reading and writing files with errors as values. A write replaces a regular file atomically
// (temporary file and rename) and never replaces an existing file unless asked to; it never
// renames over what is not a regular file: a device or FIFO is written through, a symbolic link
// is followed to the file it names, anything else is refused with a message.
#pragma once

#include "common/expected.h"

#include <filesystem>
#include <string>
#include <string_view>

namespace memplace {

Expected<std::string> readFile(const std::filesystem::path& path);

enum class Overwrite { No, Yes };

/// Writes `content` to `path`, so a reader never sees half a regular file:
///  - a regular file (or none yet): through a temporary file in the same folder and a rename
///    (opened and truncated instead when the folder is not writable); with Overwrite::No an
///    existing file is an error;
///  - a symbolic link: the file it names (made when missing), by these same rules; the link
///    stays a link; a link into /proc (/dev/stdout redirected to a file) is appended to;
///  - a character device or FIFO (/dev/stdout, /dev/null, a pipe): opened and written through,
///    whatever `overwrite` says, since nothing is replaced; a FIFO nobody reads is an error,
///    not a hang;
///  - a directory, socket or block device, a link loop: an error naming the path.
Expected<bool> writeFileAtomic(const std::filesystem::path& path, std::string_view content,
                               Overwrite overwrite = Overwrite::No);

/// Appends `content` to `path` (created when missing), by the same rules about what the path is:
/// a regular file, device or FIFO is written through; a directory, socket or block device is an
/// error naming the path.
Expected<bool> appendToFile(const std::filesystem::path& path, std::string_view content);

} // namespace memplace

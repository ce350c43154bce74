// Reading and writing files with errors as values. Writes are atomic (temporary file and
// rename) and never replace an existing file unless asked to.
#pragma once

#include "common/expected.h"

#include <filesystem>
#include <string>
#include <string_view>

namespace memplace {

Expected<std::string> readFile(const std::filesystem::path& path);

enum class Overwrite { No, Yes };

/// Writes `content` to `path` through a temporary file in the same folder and a rename, so a
/// reader never sees half a file. With Overwrite::No an existing file is an error.
Expected<bool> writeFileAtomic(const std::filesystem::path& path, std::string_view content,
                               Overwrite overwrite = Overwrite::No);

} // namespace memplace

#include "common/file_io.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

namespace memplace {

namespace fs = std::filesystem;

Expected<std::string> readFile(const fs::path& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        return fail(fmt::format("{}: is a directory, not a file", path.string()));
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return fail(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) {
        return fail(fmt::format("{}: read error", path.string()));
    }
    return ss.str();
}

Expected<bool> writeFileAtomic(const fs::path& path, std::string_view content,
                               Overwrite overwrite) {
    std::error_code ec;
    if (overwrite == Overwrite::No && fs::exists(path, ec)) {
        return fail(fmt::format("{}: already exists (use --force to replace it)", path.string()));
    }
    fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    std::random_device rd;
    fs::path tmp = dir / fmt::format(".{}.tmp{:08x}", path.filename().string(), rd());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) {
            return fail(fmt::format("{}: cannot create: {}", tmp.string(), std::strerror(errno)));
        }
        out.write(content.data(), static_cast<std::streamsize>(content.size()));
        out.flush();
        if (!out) {
            out.close();
            fs::remove(tmp, ec);
            return fail(fmt::format("{}: write error", tmp.string()));
        }
    }
    // A hard link fails when the target exists, so "do not overwrite" holds even against a
    // file created after the check above.
    if (overwrite == Overwrite::No) {
        fs::create_hard_link(tmp, path, ec);
        std::error_code ignored;
        fs::remove(tmp, ignored);
    } else {
        fs::rename(tmp, path, ec);
    }
    if (ec) {
        fs::remove(tmp, ec);
        return fail(fmt::format("{}: cannot rename into place: {}", path.string(), ec.message()));
    }
    return true;
}

} // namespace memplace

#include "common/file_io.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <pthread.h>
#include <random>
#include <signal.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

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

namespace {

/// Why `mode` (not a regular file, device or FIFO) is never written.
std::string notWritable(mode_t mode) {
    if (S_ISDIR(mode)) {
        return "is a directory, not a file";
    }
    if (S_ISSOCK(mode)) {
        return "is a socket, not a file";
    }
    if (S_ISBLK(mode)) {
        return "is a block device, not a file";
    }
    return "is not a regular file, device or FIFO";
}

Expected<bool> writeAll(int fd, std::string_view content, const fs::path& path) {
    while (!content.empty()) {
        const ssize_t n = ::write(fd, content.data(), content.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return fail(fmt::format("{}: write error: {}", path.string(), std::strerror(errno)));
        }
        content.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

/// SIGPIPE blocked in this thread while it lives: a FIFO whose reader went away is an EPIPE
/// error, not the end of the process (a report is written inside the user's program).
class SigpipeBlocked {
public:
    SigpipeBlocked() {
        sigemptyset(&pipe_);
        sigaddset(&pipe_, SIGPIPE);
        sigset_t pending;
        sigpending(&pending);
        pendingBefore_ = sigismember(&pending, SIGPIPE) == 1;
        pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
    }
    ~SigpipeBlocked() {
        sigset_t pending;
        sigpending(&pending);
        if (!pendingBefore_ && sigismember(&pending, SIGPIPE) == 1) {
            const timespec now{};
            sigtimedwait(&pipe_, nullptr, &now); // ours: consumed, never delivered
        }
        pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }
    SigpipeBlocked(const SigpipeBlocked&) = delete;
    SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

private:
    sigset_t pipe_{};
    sigset_t old_{};
    bool pendingBefore_ = false;
};

/// Opens `path` (following links) with `flags` and writes `content` into it. The open does not
/// block: a FIFO that nobody reads is an error rather than a hang.
Expected<bool> writeThrough(const fs::path& path, std::string_view content, int flags) {
    const int fd = ::open(path.c_str(), flags | O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd < 0) {
        if (errno == ENXIO) {
            return fail(fmt::format("{}: a FIFO that nobody reads (or a device that is not "
                                    "there); not written",
                                    path.string()));
        }
        return fail(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
    }
    const int fl = ::fcntl(fd, F_GETFL);
    if (fl >= 0) {
        ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK); // block while a slow reader catches up
    }
    Expected<bool> written = true;
    {
        const SigpipeBlocked noSigpipe;
        written = writeAll(fd, content, path);
    }
    if (::close(fd) != 0 && written) {
        return fail(fmt::format("{}: write error: {}", path.string(), std::strerror(errno)));
    }
    return written;
}

/// True when a link in the chain from `link` points into /proc (/dev/stdout ->
/// /proc/self/fd/1): the file behind it is one the process holds open, which a rename would
/// swap away from under it (and truncating would lose what the program wrote there).
bool linksIntoProc(fs::path link) {
    for (int hops = 0; hops < 40; ++hops) {
        std::error_code ec;
        if (!fs::is_symlink(fs::symlink_status(link, ec)) || ec) {
            return false;
        }
        fs::path target = fs::read_symlink(link, ec);
        if (ec) {
            return false;
        }
        if (target.is_relative()) {
            target = link.parent_path() / target;
        }
        if (target.lexically_normal().string().rfind("/proc/", 0) == 0) {
            return true;
        }
        link = target;
    }
    return false;
}

/// A regular file (or none yet): a temporary file in the same folder, then a rename (or a hard
/// link, which fails when the target exists, so "do not overwrite" holds even against a file
/// created after the check). A folder that is not writable: the existing file is written through.
Expected<bool> replaceRegular(const fs::path& path, std::string_view content, Overwrite overwrite,
                              bool exists) {
    fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    std::random_device rd;
    fs::path tmp = dir / fmt::format(".{}.tmp{:08x}", path.filename().string(), rd());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        const int err = errno;
        if (exists && (err == EACCES || err == EPERM)) {
            return writeThrough(path, content, O_TRUNC);
        }
        return fail(fmt::format("{}: cannot create a file in {}: {}", path.string(), dir.string(),
                                std::strerror(err)));
    }
    auto written = writeAll(fd, content, tmp);
    if (::close(fd) != 0 && written) {
        written = fail(fmt::format("{}: write error: {}", tmp.string(), std::strerror(errno)));
    }
    std::error_code ignored;
    if (!written) {
        fs::remove(tmp, ignored);
        return written;
    }
    std::error_code ec;
    if (overwrite == Overwrite::No) {
        fs::create_hard_link(tmp, path, ec);
        fs::remove(tmp, ignored);
        if (ec == std::errc::file_exists) {
            return fail(
                fmt::format("{}: already exists (use --force to replace it)", path.string()));
        }
    } else {
        fs::rename(tmp, path, ec);
        if (ec) {
            fs::remove(tmp, ignored); // its own error code: `ec` is the one to report
        }
    }
    if (ec) {
        return fail(fmt::format("{}: cannot rename into place: {}", path.string(), ec.message()));
    }
    return true;
}

Expected<bool> writePath(const fs::path& path, std::string_view content, Overwrite overwrite,
                         int hops = 0) {
    struct stat st{};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno != ENOENT) {
            return fail(fmt::format("{}: cannot write: {}", path.string(), std::strerror(errno)));
        }
        return replaceRegular(path, content, overwrite, false);
    }
    if (S_ISLNK(st.st_mode)) {
        struct stat target{};
        if (::stat(path.c_str(), &target) != 0) {
            const int err = errno;
            std::error_code ec;
            fs::path to = fs::read_symlink(path, ec);
            if (err == ENOENT && !ec && hops < 40) {
                // A link to a file not made yet: the file is made where the link points.
                return writePath(to.is_relative() ? path.parent_path() / to : to, content,
                                 overwrite, hops + 1);
            }
            return fail(fmt::format("{}: a symbolic link to {}: {}; not written", path.string(),
                                    to.string(), std::strerror(err)));
        }
        if (S_ISCHR(target.st_mode) || S_ISFIFO(target.st_mode)) {
            return writeThrough(path, content, 0);
        }
        if (!S_ISREG(target.st_mode)) {
            return fail(fmt::format("{}: a symbolic link to what {}; not written", path.string(),
                                    notWritable(target.st_mode)));
        }
        if (linksIntoProc(path)) {
            // The process's own stdout or stderr redirected to a file: appended to, after what
            // the program wrote there, as a shell's >> would.
            return writeThrough(path, content, O_APPEND);
        }
        if (overwrite == Overwrite::No) {
            return fail(
                fmt::format("{}: already exists (use --force to replace it)", path.string()));
        }
        std::error_code ec;
        const fs::path resolved = fs::canonical(path, ec);
        if (ec) {
            return fail(fmt::format("{}: cannot resolve the symbolic link: {}", path.string(),
                                    ec.message()));
        }
        return replaceRegular(resolved, content, overwrite, true);
    }
    if (S_ISREG(st.st_mode)) {
        if (overwrite == Overwrite::No) {
            return fail(
                fmt::format("{}: already exists (use --force to replace it)", path.string()));
        }
        return replaceRegular(path, content, overwrite, true);
    }
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
        return writeThrough(path, content, 0);
    }
    return fail(fmt::format("{}: {}; not written", path.string(), notWritable(st.st_mode)));
}

} // namespace

Expected<bool> writeFileAtomic(const fs::path& path, std::string_view content,
                               Overwrite overwrite) {
    return writePath(path, content, overwrite);
}

Expected<bool> appendToFile(const fs::path& path, std::string_view content) {
    struct stat st{};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode) &&
        !S_ISFIFO(st.st_mode)) {
        return fail(fmt::format("{}: {}; not written", path.string(), notWritable(st.st_mode)));
    }
    return writeThrough(path, content, O_CREAT | O_APPEND);
}

} // namespace memplace

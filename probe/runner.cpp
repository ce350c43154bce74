#include "probe/runner.h"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace memplace::probe {

namespace fs = std::filesystem;

std::optional<std::string> findGpuProgram(const std::string& explicitPath) {
    std::error_code ec;
    auto isFile = [&](const fs::path& p) { return fs::is_regular_file(p, ec); };
    if (!explicitPath.empty()) {
        return isFile(explicitPath) ? std::optional<std::string>(explicitPath) : std::nullopt;
    }
    if (const char* env = std::getenv(kGpuProgramEnv); env != nullptr && *env != '\0') {
        return isFile(env) ? std::optional<std::string>(env) : std::nullopt;
    }
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        fs::path next = self.parent_path() / kGpuProgramName;
        if (isFile(next)) {
            return next.string();
        }
    }
    return std::nullopt;
}

bool hasNvidiaDeviceNode() {
    std::error_code ec;
    return fs::exists("/dev/nvidiactl", ec) || fs::exists("/dev/nvidia0", ec);
}

Expected<ProgramRun> runProgram(const std::string& program, const std::vector<std::string>& args,
                                double timeoutSeconds) {
    int fds[2];
    if (::pipe(fds) != 0) {
        return fail(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
    }
    pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return fail(fmt::format("cannot fork: {}", std::strerror(errno)));
    }
    if (pid == 0) {
        ::dup2(fds[1], STDOUT_FILENO);
        ::close(fds[0]);
        ::close(fds[1]);
        std::vector<char*> argv;
        argv.push_back(const_cast<char*>(program.c_str()));
        for (const auto& a : args) {
            argv.push_back(const_cast<char*>(a.c_str()));
        }
        argv.push_back(nullptr);
        ::execv(program.c_str(), argv.data());
        std::fprintf(stderr, "memplace: cannot run %s: %s\n", program.c_str(),
                     std::strerror(errno));
        ::_exit(127);
    }
    ::close(fds[1]);
    ProgramRun run;
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(static_cast<long>(timeoutSeconds * 1000));
    char buf[65536];
    while (true) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now())
                        .count();
        if (left <= 0) {
            run.timedOut = true;
            ::kill(pid, SIGKILL); // the child we started, by its id
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        int ready = ::poll(&p, 1, static_cast<int>(std::min<long>(left, 1000)));
        if (ready < 0 && errno != EINTR) {
            break;
        }
        if (ready <= 0) {
            continue;
        }
        ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        run.out.append(buf, static_cast<size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return run;
}

} // namespace memplace::probe

// Runs the memplace binary as a user would and captures what it prints.
#pragma once

#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace memplace::testing {

struct CommandResult {
    int exitCode = -1;
    std::string out; ///< stdout
    std::string err; ///< stderr
};

inline CommandResult runMemplace(const std::string& args, const std::string& workDir = ".") {
    static int counter = 0;
    std::string errFile = fmt::format("/tmp/memplace_cli_test_{}_{}.err", ::getpid(), counter++);
    std::string cmd =
        fmt::format("cd '{}' && '{}' {} 2>'{}'", workDir, MEMPLACE_BIN, args, errFile);
    CommandResult r;
    FILE* pipe = ::popen(cmd.c_str(), "r");
    if (pipe == nullptr) {
        return r;
    }
    std::array<char, 4096> buf{};
    size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) {
        r.out.append(buf.data(), n);
    }
    int status = ::pclose(pipe);
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (FILE* f = std::fopen(errFile.c_str(), "r")) {
        while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
            r.err.append(buf.data(), n);
        }
        std::fclose(f);
    }
    std::remove(errFile.c_str());
    return r;
}

} // namespace memplace::testing

#include "frontend/source_prep.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace memplace::frontend {

namespace {

/// A cursor over C++ source that steps over comments and literals.
class Scanner {
public:
    explicit Scanner(std::string_view s) : s_(s) {}

    /// Advances past a comment or literal starting at `i`, if one does; returns the index
    /// after it, or `i` unchanged.
    size_t skipNonCode(size_t i) const {
        if (i + 1 < s_.size() && s_[i] == '/' && s_[i + 1] == '/') {
            while (i < s_.size() && s_[i] != '\n') {
                ++i;
            }
            return i;
        }
        if (i + 1 < s_.size() && s_[i] == '/' && s_[i + 1] == '*') {
            size_t end = s_.find("*/", i + 2);
            return end == std::string_view::npos ? s_.size() : end + 2;
        }
        if (s_[i] == 'R' && i + 1 < s_.size() && s_[i + 1] == '"' &&
            (i == 0 || !isIdent(s_[i - 1]))) {
            size_t open = s_.find('(', i + 2);
            if (open != std::string_view::npos) {
                std::string close = ")" + std::string(s_.substr(i + 2, open - i - 2)) + "\"";
                size_t end = s_.find(close, open + 1);
                return end == std::string_view::npos ? s_.size() : end + close.size();
            }
        }
        if (s_[i] == '"' ||
            (s_[i] == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(s_[i - 1]))))) {
            // A quote after a hex digit is a C++14 digit separator (1'000'000), not a literal.
            char q = s_[i];
            ++i;
            while (i < s_.size() && s_[i] != q && s_[i] != '\n') {
                i += s_[i] == '\\' ? 2 : 1;
            }
            return std::min(i + 1, s_.size());
        }
        return i;
    }

    static bool isIdent(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

private:
    std::string_view s_;
};

bool isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/// If three `c` separated only by whitespace start at `i`, the index of the third; else npos.
size_t tripleAt(std::string_view s, size_t i, char c) {
    size_t count = 0;
    size_t j = i;
    while (j < s.size()) {
        if (s[j] == c) {
            if (++count == 3) {
                return j;
            }
            ++j;
        } else if (isSpace(s[j]) && count > 0) {
            ++j;
        } else {
            break;
        }
    }
    return std::string_view::npos;
}

/// Moves the three brackets of [from, to] to the front, the whitespace after them.
void compact(std::string& out, size_t from, size_t to, char c) {
    std::string ws;
    for (size_t k = from; k <= to; ++k) {
        if (out[k] != c) {
            ws += out[k];
        }
    }
    std::string repl = std::string(3, c) + ws;
    out.replace(from, repl.size(), repl);
}

} // namespace

std::string normalizeLaunchChevrons(std::string_view source, int* count) {
    std::string out(source);
    Scanner scan(source);
    int n = 0;
    size_t i = 0;
    while (i < source.size()) {
        size_t skipped = scan.skipNonCode(i);
        if (skipped != i) {
            i = skipped;
            continue;
        }
        if (source[i] != '<' || (i > 0 && source[i - 1] == '<')) {
            ++i;
            continue;
        }
        size_t openEnd = tripleAt(source, i, '<');
        bool spaced = openEnd != std::string_view::npos && openEnd - i > 2;
        if (!spaced || (openEnd + 1 < source.size() &&
                        (source[openEnd + 1] == '<' || source[openEnd + 1] == '='))) {
            ++i;
            continue;
        }
        // Find the closing triple at depth 0.
        int depth = 0;
        size_t j = openEnd + 1;
        size_t closeBegin = std::string_view::npos;
        size_t closeEnd = std::string_view::npos;
        while (j < source.size()) {
            size_t sk = scan.skipNonCode(j);
            if (sk != j) {
                j = sk;
                continue;
            }
            char c = source[j];
            if (c == '(' || c == '[' || c == '{') {
                ++depth;
            } else if (c == ')' || c == ']' || c == '}') {
                if (--depth < 0) {
                    break;
                }
            } else if (c == ';' && depth == 0) {
                break;
            } else if (c == '>' && depth == 0) {
                size_t e = tripleAt(source, j, '>');
                if (e != std::string_view::npos) {
                    closeBegin = j;
                    closeEnd = e;
                    break;
                }
            }
            ++j;
        }
        if (closeBegin == std::string_view::npos) {
            i = openEnd + 1;
            continue;
        }
        compact(out, i, openEnd, '<');
        if (closeEnd - closeBegin > 2) {
            compact(out, closeBegin, closeEnd, '>');
        }
        ++n;
        i = closeEnd + 1;
    }
    if (count != nullptr) {
        *count = n;
    }
    return out;
}

std::string_view shimTextureFetchContent() {
    return "// memplace analysis shim: CUDA 13 removed texture references and this header with\n"
           "// them; clang-19's CUDA wrapper still includes it. Texture objects need nothing\n"
           "// from it.\n";
}

Expected<std::string> findCudaInstallation(const std::vector<std::string>& extraArgs) {
    namespace fs = std::filesystem;
    auto valid = [](const fs::path& dir) {
        std::error_code ec;
        return fs::exists(dir / "include" / "cuda_runtime.h", ec);
    };
    std::vector<std::string> looked;
    for (size_t i = 0; i < extraArgs.size(); ++i) {
        std::string_view a = extraArgs[i];
        std::string dir;
        if (a.starts_with("--cuda-path=")) {
            dir = std::string(a.substr(12));
        } else if (a == "--cuda-path" && i + 1 < extraArgs.size()) {
            dir = extraArgs[i + 1];
        } else {
            continue;
        }
        if (valid(dir)) {
            return dir;
        }
        return fail(fmt::format("no CUDA installation at '{}' (given by --cuda-path): it has no "
                                "include/cuda_runtime.h",
                                dir));
    }
    for (const char* var : {"CUDA_PATH", "CUDA_HOME"}) {
        if (const char* v = std::getenv(var); v != nullptr && *v != '\0') {
            if (valid(v)) {
                return std::string(v);
            }
            looked.push_back(fmt::format("${}={}", var, v));
        }
    }
    if (valid("/usr/local/cuda")) {
        return std::string("/usr/local/cuda");
    }
    looked.emplace_back("/usr/local/cuda");
    if (const char* path = std::getenv("PATH"); path != nullptr) {
        std::stringstream ss(path);
        std::string dir;
        while (std::getline(ss, dir, ':')) {
            std::error_code ec;
            fs::path nvcc = fs::path(dir) / "nvcc";
            if (!dir.empty() && fs::exists(nvcc, ec)) {
                fs::path root = fs::weakly_canonical(nvcc, ec).parent_path().parent_path();
                if (valid(root)) {
                    return root.string();
                }
                looked.push_back(root.string() + " (from nvcc on $PATH)");
            }
        }
    }
    std::string where;
    for (const auto& l : looked) {
        where += (where.empty() ? "" : ", ") + l;
    }
    return fail(fmt::format("no CUDA installation found (looked in {}); install the CUDA "
                            "toolkit, set CUDA_PATH, or pass `-- --cuda-path=DIR`",
                            where.empty() ? "nothing" : where));
}

std::vector<std::string> compileFlags(const CompileFlagsInput& in) {
    bool userArch = false;
    bool userPath = false;
    for (const auto& a : in.extraArgs) {
        userArch = userArch || a.starts_with("--cuda-gpu-arch") || a.starts_with("--offload-arch");
        userPath = userPath || a.starts_with("--cuda-path");
    }
    std::vector<std::string> args = {"-x", "cuda", "--cuda-device-only"};
    if (!userPath) {
        args.push_back("--cuda-path=" + in.cudaPath);
    }
    if (!userArch) {
        args.push_back("--cuda-gpu-arch=" + in.gpuArch);
    }
    args.insert(args.end(), {"-nocudalib", "-isystem", std::string(kShimDir)});
    // CUDA 13 keeps libcu++, CUB and Thrust (CCCL) in include/cccl, which nvcc adds by itself
    // (cooperative_groups needs <cuda/std/...> from it).
    std::error_code ec;
    std::string cccl = in.cudaPath + "/include/cccl";
    if (!in.cudaPath.empty() && std::filesystem::is_directory(cccl, ec)) {
        args.insert(args.end(), {"-isystem", cccl});
    }
    args.insert(args.end(), {"-Xclang", "-target-sdk-version=12.4", "-w"});
    if (!in.resourceDir.empty()) {
        args.push_back("-resource-dir=" + in.resourceDir);
    }
    args.insert(args.end(), in.extraArgs.begin(), in.extraArgs.end());
    return args;
}

} // namespace memplace::frontend

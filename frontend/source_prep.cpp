#include "frontend/source_prep.h"

#include <fmt/format.h>

#include <algorithm>
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

std::string_view shimHostMinMaxContent() {
    return R"(// memplace analysis shim: the host overloads of max/min that nvcc's host headers declare
// (crt/math_functions.hpp, __host__ __device__) and clang-19's CUDA headers declare for device
// code only. Attributes, not __host__: this is included before the CUDA headers.
#pragma once
#define MEMPLACE_SHIM_MINMAX(R, A, B)                                                              static inline __attribute__((host)) R min(A a, B b) {                                          return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b);     }                                                                                          static inline __attribute__((host)) R max(A a, B b) {                                          return static_cast<R>(a) > static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b);     }
MEMPLACE_SHIM_MINMAX(int, int, int)
MEMPLACE_SHIM_MINMAX(unsigned int, unsigned int, unsigned int)
MEMPLACE_SHIM_MINMAX(unsigned int, int, unsigned int)
MEMPLACE_SHIM_MINMAX(unsigned int, unsigned int, int)
MEMPLACE_SHIM_MINMAX(long int, long int, long int)
MEMPLACE_SHIM_MINMAX(unsigned long int, unsigned long int, unsigned long int)
MEMPLACE_SHIM_MINMAX(unsigned long int, long int, unsigned long int)
MEMPLACE_SHIM_MINMAX(unsigned long int, unsigned long int, long int)
MEMPLACE_SHIM_MINMAX(long long int, long long int, long long int)
MEMPLACE_SHIM_MINMAX(unsigned long long int, unsigned long long int, unsigned long long int)
MEMPLACE_SHIM_MINMAX(unsigned long long int, long long int, unsigned long long int)
MEMPLACE_SHIM_MINMAX(unsigned long long int, unsigned long long int, long long int)
MEMPLACE_SHIM_MINMAX(float, float, float)
MEMPLACE_SHIM_MINMAX(double, double, double)
MEMPLACE_SHIM_MINMAX(double, float, double)
MEMPLACE_SHIM_MINMAX(double, double, float)
#undef MEMPLACE_SHIM_MINMAX
)";
}

std::string_view shimNvccHostHeadersContent() {
    return "// memplace analysis shim: what nvcc's cuda_runtime.h includes for host code\n"
           "// (crt/common_functions.h) and clang-19's CUDA wrapper does not.\n"
           "#pragma once\n"
           "#include <string.h>\n"
           "#include <time.h>\n";
}

std::string_view shimOmpContent() {
    return "// memplace analysis shim: gcc's omp.h, without the `__malloc__ (deallocator)`\n"
           "// attribute arguments that clang-19 rejects (the attribute itself stays).\n"
           "#pragma push_macro(\"__malloc__\")\n"
           "#define __malloc__(...)\n"
           "#include_next <omp.h>\n"
           "#pragma pop_macro(\"__malloc__\")\n";
}

std::string findHostOpenMpIncludeDir(const std::string& root) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::string best;
    int bestVersion = -1;
    // <root>/<target>/<version>/include/omp.h
    for (const auto& target : fs::directory_iterator(root, ec)) {
        std::error_code ec2;
        for (const auto& version : fs::directory_iterator(target.path(), ec2)) {
            const std::string name = version.path().filename().string();
            int v = std::atoi(name.c_str());
            std::error_code ec3;
            if (v > bestVersion && fs::exists(version.path() / "include" / "omp.h", ec3)) {
                bestVersion = v;
                best = (version.path() / "include").string();
            }
        }
    }
    return best;
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

namespace {

/// The first 'quoted' name after `prefix` in `m`, or "".
std::string quotedAfter(std::string_view m, std::string_view prefix) {
    size_t p = m.find(prefix);
    if (p == std::string_view::npos) {
        return {};
    }
    size_t b = m.find('\'', p + prefix.size());
    size_t e = b == std::string_view::npos ? b : m.find('\'', b + 1);
    return e == std::string_view::npos ? std::string() : std::string(m.substr(b + 1, e - b - 1));
}

} // namespace

std::vector<std::string> parseWorkarounds(const std::vector<std::string>& messages) {
    std::vector<std::string> out;
    auto add = [&](std::string note) {
        if (std::find(out.begin(), out.end(), note) == out.end()) {
            out.push_back(std::move(note));
        }
    };
    std::string lastCall; // the function of the last "no matching function for call to"
    for (const std::string& m : messages) {
        if (m.ends_with("file not found")) {
            add(fmt::format("'{}' is not on clang's include path (nvcc's host compiler may find it "
                            "where clang does not look): pass its folder after `--`, e.g. `-- "
                            "-I<dir>`, or `-- -idirafter <dir>` for a system compiler's own header",
                            quotedAfter(m, "")));
        } else if (m.starts_with("no matching function for call to")) {
            lastCall = quotedAfter(m, "call to");
        } else if ((m.find("call to __device__ function from __host__ function") !=
                        std::string::npos ||
                    m.find("__device__ function") != std::string::npos) &&
                   m.find("__host__ function") != std::string::npos) {
            std::string fn = !lastCall.empty() ? lastCall : quotedAfter(m, "function");
            add(fmt::format("host code calls '{}', which is declared for device code only here "
                            "(clang's CUDA headers declare some math functions for device code "
                            "only where nvcc's host headers also declare host versions; memplace "
                            "supplies max and min): if nvcc accepts the call, declare a host "
                            "overload of '{}' in a header and pass it after `--` (`-- -include "
                            "<header>`)",
                            fn, fn));
        } else if (m.starts_with("use of undeclared identifier") ||
                   m.starts_with("unknown type name")) {
            add(fmt::format("'{}' may come from a macro or header that the program's build gives "
                            "nvcc (its Makefile's -D, -I, -include): pass the same flags after "
                            "`--`",
                            quotedAfter(m, "")));
        }
    }
    return out;
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
    args.insert(args.end(), {"-Xclang", "-target-sdk-version=12.4", "-w", "-include",
                             std::string(kShimHostMinMaxPath), "-include",
                             std::string(kShimNvccHostHeadersPath)});
    if (!in.hostOpenMpDir.empty()) {
        args.insert(args.end(), {"-idirafter", in.hostOpenMpDir});
    }
    if (!in.resourceDir.empty()) {
        args.push_back("-resource-dir=" + in.resourceDir);
    }
    args.insert(args.end(), in.extraArgs.begin(), in.extraArgs.end());
    return args;
}

} // namespace memplace::frontend

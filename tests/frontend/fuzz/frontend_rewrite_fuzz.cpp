// libFuzzer target: the frontend and the rewriter on fuzzed CUDA source. Any bytes, written to a
// .cu file, give a rewritten file with its report or clang's diagnostics: never a crash, a
// hang or a sanitizer report (deep nesting included). The input is the whole file, so the seed
// corpus is tests/frontend/kernels/*.cu plus the shapes in corpus/.
//
// Each input costs a clang parse of the CUDA headers (about a tenth of a second to a second), so
// the ctest run covers few inputs; docs/fuzzing.md says how to run it long.
#include "rewrite/rewrite.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

/// A file of this process's own, on a memory file system where there is one.
const std::string& inputPath() {
    static const std::string path = [] {
        std::error_code ec;
        std::filesystem::path dir = std::filesystem::is_directory("/dev/shm", ec)
                                        ? std::filesystem::path("/dev/shm")
                                        : std::filesystem::temp_directory_path();
        dir /= "memplace_frontend_fuzz_" + std::to_string(::getpid());
        std::filesystem::create_directories(dir, ec);
        return (dir / "fuzz.cu").string();
    }();
    return path;
}

void removeInputDir() {
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(inputPath()).parent_path(), ec);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    (void)inputPath();
    std::atexit(removeInputDir);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    {
        std::ofstream out(inputPath(), std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    memplace::rewrite::RewriteOptions o;
    o.file = inputPath();
    auto r = memplace::rewrite::rewriteFile(o);
    if (!r) {
        (void)r.message();
        return 0;
    }
    (void)memplace::rewrite::toJson(*r, "out.cu").dump();
    (void)r->warnings.format();
    return 0;
}

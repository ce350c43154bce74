// Getting a CUDA 13 source in front of clang-19 without touching anything on disk: the
// spaced-chevron normalisation, the compatibility shim, the CUDA installation and the compile
// flags. No clang dependency (tested on its own).
#pragma once

#include "common/expected.h"

#include <string>
#include <string_view>
#include <vector>

namespace memplace::frontend {

/// Rewrites every spaced launch chevron (`k << < g, b >> > (...)`, which nvcc accepts and
/// clang rejects) into `<<<`/`>>>`, keeping the text's length and every byte offset: the three
/// angle brackets move to the front of their run and the whitespace follows them. Comments,
/// string and character literals are left alone; a spaced opening without a matching closing
/// at the same nesting depth (before a `;` or an unmatched closing bracket) is left alone too.
/// `count`, when given, receives the number of launches normalised.
std::string normalizeLaunchChevrons(std::string_view source, int* count = nullptr);

/// The directory of the in-memory compatibility shim (an -isystem path that exists only in the
/// analysis's virtual file system) and its one file: clang-19's CUDA wrapper still includes
/// `texture_fetch_functions.h`, which CUDA 13 removed along with texture references.
inline constexpr std::string_view kShimDir = "/__memplace_shim__";
inline constexpr std::string_view kShimTextureFetchPath =
    "/__memplace_shim__/texture_fetch_functions.h";
std::string_view shimTextureFetchContent();

/// The shim's forced include (`-include`): host overloads of `max`/`min` for the argument types
/// nvcc's host headers (crt/math_functions.hpp, `__host__ __device__`) give host code; clang-19's
/// CUDA headers declare them for device code only, so host code calling `max(a, b)` on floats
/// (which nvcc accepts) would not parse. Host-only declarations overload the device ones (CUDA
/// target overloading) and, as non-templates, win over `std::max` as they do under nvcc.
inline constexpr std::string_view kShimHostMinMaxPath = "/__memplace_shim__/memplace_host_minmax.h";
std::string_view shimHostMinMaxContent();

/// The shim's second forced include: the C headers nvcc's cuda_runtime.h includes for host code
/// (crt/common_functions.h: <string.h>, <time.h>) and clang-19's CUDA wrapper does not, so that
/// host code calling `time()` or `strlen()` without including them parses as under nvcc.
inline constexpr std::string_view kShimNvccHostHeadersPath =
    "/__memplace_shim__/memplace_nvcc_host_headers.h";
std::string_view shimNvccHostHeadersContent();

/// The shim's `omp.h`: gcc's (found through hostOpenMpDir, `#include_next`) with the one GNU
/// attribute form clang-19 rejects in it (`__malloc__ (deallocator)`) removed.
inline constexpr std::string_view kShimOmpPath = "/__memplace_shim__/omp.h";
std::string_view shimOmpContent();

/// The folder with the system compiler's OpenMP header (`omp.h` of gcc, e.g.
/// /usr/lib/gcc/x86_64-linux-gnu/12/include), where nvcc's host compiler finds it; the newest
/// gcc's when several are installed; empty when none has one. `root` is for tests.
std::string findHostOpenMpIncludeDir(const std::string& root = "/usr/lib/gcc");

/// The CUDA installation to parse against: `--cuda-path=DIR` among `extraArgs`, else
/// $CUDA_PATH, $CUDA_HOME, /usr/local/cuda, then the directory above the `nvcc` on $PATH. A
/// directory counts when it has include/cuda_runtime.h. Fails with a message that says where
/// it looked.
Expected<std::string> findCudaInstallation(const std::vector<std::string>& extraArgs);

/// What to try when clang rejects what nvcc may accept: for clang's error and note messages (in
/// order), notes that name the construct and the clang arguments to pass after `--`, one per
/// kind of failure; empty when none applies.
std::vector<std::string> parseWorkarounds(const std::vector<std::string>& messages);

struct CompileFlagsInput {
    std::string cudaPath;               ///< from findCudaInstallation
    std::string resourceDir;            ///< clang's resource directory (builtin headers)
    std::string gpuArch = "sm_90";      ///< unless extraArgs give --cuda-gpu-arch/--offload-arch
    std::vector<std::string> extraArgs; ///< the user's, after `--`; they come last
    /// findHostOpenMpIncludeDir: searched after every other include folder (`-idirafter`), so
    /// that `#include <omp.h>` resolves as under nvcc and nothing else of gcc's shadows clang's.
    std::string hostOpenMpDir;
};

/// The clang driver arguments (without the program name and the file): device-side CUDA
/// (`-x cuda --cuda-device-only`, so kernels are seen as the GPU compiler sees them, with
/// __CUDA_ARCH__ defined), `--cuda-path`, `--cuda-gpu-arch`, `-nocudalib`, the shim on
/// -isystem, CUDA's include/cccl on -isystem when it exists (nvcc adds it; libcu++, CUB,
/// Thrust and cooperative groups need it), `-Xclang -target-sdk-version=12.4` (clang-19 does
/// not map CUDA 13's version and would fall back to the pre-9.2 launch API, which CUDA 13
/// headers no longer declare), `-w`, the host max/min shim (`-include`), gcc's OpenMP folder
/// (`-idirafter`) when there is one, then the user's arguments.
std::vector<std::string> compileFlags(const CompileFlagsInput& in);

} // namespace memplace::frontend

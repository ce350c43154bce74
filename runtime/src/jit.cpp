// Just-in-time instantiation: NVRTC, the cache keys, the driver (see jit.h; the disk cache:
// jit_cache.cpp). Self-contained on purpose: programs compile runtime/src/*.cpp with nvcc alone
// (tests/runtime/build.sh), so this file needs nothing beyond the CUDA runtime headers and the
// C++ library.
#include "runtime/src/jit.h"

#include "common/env.h"
#include "runtime/src/jit_internal.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <dlfcn.h>
#include <mutex>

namespace memplace::detail::jit {

#if defined(MEMPLACE_JIT_HEADERS)
extern const EmbeddedHeader kEmbeddedHeaders[];
extern const int kEmbeddedHeaderCount;
#endif

std::vector<EmbeddedHeader> embeddedHeaders() {
#if defined(MEMPLACE_JIT_HEADERS)
    return {kEmbeddedHeaders, kEmbeddedHeaders + kEmbeddedHeaderCount};
#else
    return {};
#endif
}

namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// ---- NVRTC, loaded at run time ---------------------------------------------------------------
// The few entry points used, declared here so that nothing but libnvrtc itself is needed (the
// types are NVRTC's: an opaque program handle and an int result, 0 for success).

using NvrtcProgram = struct NvrtcProgramImpl*;
using NvrtcResult = int;

struct Nvrtc {
    bool ok = false;
    std::string why;
    std::string version;
    std::vector<int> archs;
    NvrtcResult (*version_)(int*, int*) = nullptr;
    NvrtcResult (*numArchs)(int*) = nullptr;
    NvrtcResult (*getArchs)(int*) = nullptr;
    const char* (*errorString)(NvrtcResult) = nullptr;
    NvrtcResult (*create)(NvrtcProgram*, const char*, const char*, int, const char* const*,
                          const char* const*) = nullptr;
    NvrtcResult (*destroy)(NvrtcProgram*) = nullptr;
    NvrtcResult (*addName)(NvrtcProgram, const char*) = nullptr;
    NvrtcResult (*compile)(NvrtcProgram, int, const char* const*) = nullptr;
    NvrtcResult (*logSize)(NvrtcProgram, std::size_t*) = nullptr;
    NvrtcResult (*log)(NvrtcProgram, char*) = nullptr;
    NvrtcResult (*cubinSize)(NvrtcProgram, std::size_t*) = nullptr;
    NvrtcResult (*cubin)(NvrtcProgram, char*) = nullptr;
    NvrtcResult (*ptxSize)(NvrtcProgram, std::size_t*) = nullptr;
    NvrtcResult (*ptx)(NvrtcProgram, char*) = nullptr;
    NvrtcResult (*lowered)(NvrtcProgram, const char*, const char**) = nullptr;
};

template <class F>
bool bind(void* lib, const char* name, F& fn, std::string& missing) {
    fn = reinterpret_cast<F>(dlsym(lib, name));
    if (fn == nullptr) {
        missing += (missing.empty() ? "" : ", ") + std::string(name);
    }
    return fn != nullptr;
}

const Nvrtc& nvrtc() {
    static const Nvrtc* lib = [] {
        auto* n = new Nvrtc; // never destroyed: compilations may run while the process exits
        const char* given = env::value("MEMPLACE_NVRTC");
        std::vector<std::string> names;
        if (given != nullptr) {
            if (std::strcmp(given, "none") == 0) {
                n->why = "MEMPLACE_NVRTC=none";
                return n;
            }
            names.emplace_back(given);
        } else {
            names = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
        }
        void* h = nullptr;
        std::string tried;
        for (const std::string& name : names) {
            h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
            if (h != nullptr) {
                break;
            }
            tried += (tried.empty() ? "" : ", ") + name;
        }
        if (h == nullptr) {
            n->why = "libnvrtc not found (tried " + tried + ")";
            return n;
        }
        std::string missing;
        bind(h, "nvrtcVersion", n->version_, missing);
        bind(h, "nvrtcGetNumSupportedArchs", n->numArchs, missing);
        bind(h, "nvrtcGetSupportedArchs", n->getArchs, missing);
        bind(h, "nvrtcGetErrorString", n->errorString, missing);
        bind(h, "nvrtcCreateProgram", n->create, missing);
        bind(h, "nvrtcDestroyProgram", n->destroy, missing);
        bind(h, "nvrtcAddNameExpression", n->addName, missing);
        bind(h, "nvrtcCompileProgram", n->compile, missing);
        bind(h, "nvrtcGetProgramLogSize", n->logSize, missing);
        bind(h, "nvrtcGetProgramLog", n->log, missing);
        bind(h, "nvrtcGetCUBINSize", n->cubinSize, missing);
        bind(h, "nvrtcGetCUBIN", n->cubin, missing);
        bind(h, "nvrtcGetPTXSize", n->ptxSize, missing);
        bind(h, "nvrtcGetPTX", n->ptx, missing);
        bind(h, "nvrtcGetLoweredName", n->lowered, missing);
        if (!missing.empty()) {
            n->why = "libnvrtc lacks " + missing;
            return n;
        }
        int major = 0;
        int minor = 0;
        if (n->version_(&major, &minor) != 0) {
            n->why = "nvrtcVersion failed";
            return n;
        }
        n->version = std::to_string(major) + "." + std::to_string(minor);
        int count = 0;
        if (n->numArchs(&count) == 0 && count > 0) {
            n->archs.resize(static_cast<std::size_t>(count));
            if (n->getArchs(n->archs.data()) != 0) {
                n->archs.clear();
            }
        }
        std::sort(n->archs.begin(), n->archs.end());
        n->ok = true;
        return n;
    }();
    return *lib;
}

std::string trimLog(std::string log) {
    while (!log.empty() && (log.back() == '\n' || log.back() == '\0' || log.back() == ' ')) {
        log.pop_back();
    }
    constexpr std::size_t kMax = 4000;
    if (log.size() > kMax) {
        log = log.substr(0, kMax) + "\n... (log truncated)";
    }
    return log;
}

// ---- the driver, through the runtime's entry-point query -----------------------------------

struct Driver {
    bool ok = false;
    std::string why;
    CUresult (*loadData)(CUmodule*, const void*) = nullptr;
    CUresult (*getFunction)(CUfunction*, CUmodule, const char*) = nullptr;
    CUresult (*getGlobal)(CUdeviceptr*, std::size_t*, CUmodule, const char*) = nullptr;
    CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void**, void**) = nullptr;
    CUresult (*setAttribute)(CUfunction, CUfunction_attribute, int) = nullptr;
    CUresult (*getAttribute)(int*, CUfunction_attribute, CUfunction) = nullptr;
    CUresult (*errorString)(CUresult, const char**) = nullptr;
    CUresult (*unloadModule)(CUmodule) = nullptr;
};

template <class F>
void entry(const char* name, F& fn, std::string& missing) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess || p == nullptr) {
        (void)cudaGetLastError();
        missing += (missing.empty() ? "" : ", ") + std::string(name);
        fn = nullptr;
        return;
    }
    fn = reinterpret_cast<F>(p);
}

const Driver& driver() {
    static const Driver* d = [] {
        auto* r = new Driver;
        std::string missing;
        entry("cuModuleLoadData", r->loadData, missing);
        entry("cuModuleGetFunction", r->getFunction, missing);
        entry("cuModuleGetGlobal", r->getGlobal, missing);
        entry("cuLaunchKernel", r->launchKernel, missing);
        entry("cuFuncSetAttribute", r->setAttribute, missing);
        entry("cuFuncGetAttribute", r->getAttribute, missing);
        entry("cuGetErrorString", r->errorString, missing);
        entry("cuModuleUnload", r->unloadModule, missing);
        r->ok = missing.empty();
        if (!r->ok) {
            r->why = "the driver API lacks " + missing;
        }
        return r;
    }();
    return *d;
}

std::string cuMessage(CUresult r) {
    const char* s = nullptr;
    if (driver().errorString != nullptr && driver().errorString(r, &s) == CUDA_SUCCESS &&
        s != nullptr) {
        return s + std::string(" (") + std::to_string(static_cast<int>(r)) + ")";
    }
    return "CUDA driver error " + std::to_string(static_cast<int>(r));
}

const char* const kPoolExpression = "&memplace::tu::constantPool";

} // namespace

bool nvrtcAvailable(std::string* why) {
    const Nvrtc& n = nvrtc();
    if (!n.ok && why != nullptr) {
        *why = n.why;
    }
    return n.ok;
}

std::string nvrtcVersion() {
    return nvrtc().ok ? nvrtc().version : std::string();
}

std::vector<int> nvrtcArchitectures() {
    return nvrtc().archs;
}

std::string accessorName(Place place, int dims, const std::string& elementType) {
    const char* a = nullptr;
    switch (place) {
    case Place::Global:
        a = "GlobalAccessor";
        break;
    case Place::ReadOnly:
        a = "ReadOnlyAccessor";
        break;
    case Place::Texture:
        a = dims == 2 ? "Texture2DAccessor" : "TextureAccessor";
        break;
    case Place::Constant:
        a = "ConstantAccessor";
        break;
    case Place::Shared:
        a = "SharedAccessor";
        break;
    case Place::L2Persist:
        a = "L2PersistAccessor";
        break;
    default:
        return {};
    }
    return std::string("memplace::") + a + "<" + elementType + ">";
}

std::string nameExpression(const std::string& kernel, const std::vector<std::string>& accessors) {
    std::string out = kernel + "<";
    for (std::size_t i = 0; i < accessors.size(); ++i) {
        out += (i == 0 ? "" : ", ") + accessors[i];
    }
    // "> >" never needed in C++11 and later, but an element type ending in '>' reads better.
    return out + (!out.empty() && out.back() == '>' ? " >" : ">");
}

std::vector<std::string> compileOptions(const CompileRequest& request,
                                        const std::vector<int>& architectures, bool* ptx) {
    const int cc = request.ccMajor * 10 + request.ccMinor;
    int arch = 0;
    bool exact = false;
    for (int a : architectures) {
        if (a == cc) {
            arch = a;
            exact = true;
        } else if (a < cc && !exact) {
            arch = std::max(arch, a);
        }
    }
    if (arch == 0) {
        return {};
    }
    if (ptx != nullptr) {
        *ptx = !exact;
    }
    std::vector<std::string> o;
    o.push_back((exact ? "-arch=sm_" : "-arch=compute_") + std::to_string(arch));
    o.emplace_back("-std=c++20");
    o.emplace_back("-default-device");
    o.push_back("-DMEMPLACE_CONSTANT_POOL_BYTES=" + std::to_string(request.poolBytes));
    o.emplace_back("-DMEMPLACE_NO_TRACING");
    for (const std::string& e : request.extra) {
        o.push_back(e);
    }
    return o;
}

std::string cacheKey(const CompileRequest& request, const std::vector<std::string>& options,
                     const std::string& version) {
    // Two 64-bit FNV-1a hashes with different offset bases: a 128-bit content address.
    Fnv a{1469598103934665603ull};
    Fnv b{0x84222325cbf29ce4ull};
    for (Fnv* f : {&a, &b}) {
        f->add(std::string(kEntryMagic));
        f->add(request.source);
        f->add(request.nameExpression);
        for (const std::string& o : options) {
            f->add(o);
        }
        for (const std::string& c : request.constants) {
            f->add("&" + c);
        }
        f->add(std::to_string(request.ccMajor) + "." + std::to_string(request.ccMinor));
        f->add(version);
        for (const EmbeddedHeader& h : embeddedHeaders()) {
            f->add(std::string(h.name));
            f->add(std::string(h.text));
        }
    }
    return hex64(a.h) + hex64(b.h);
}

CompileRequest warmUpRequest(const CompileRequest& like) {
    CompileRequest w;
    w.source = "#include \"memplace/accessors.cuh\"\n"
               "template <int N> __global__ void memplace_nvrtc_warm_up(int* p) {\n"
               "    if (p != nullptr) { p[0] = N; }\n"
               "}\n";
    w.nameExpression = "memplace_nvrtc_warm_up<1>";
    w.ccMajor = like.ccMajor;
    w.ccMinor = like.ccMinor;
    w.poolBytes = like.poolBytes;
    w.extra = like.extra;
    return w;
}

namespace {

/// The compiled image (PTX or CUBIN) into out.image; empty when done, else what failed.
std::string takeImage(const Nvrtc& n, NvrtcProgram prog, bool ptx, Binary& out) {
    std::size_t bytes = 0;
    if (ptx) {
        if (n.ptxSize(prog, &bytes) != 0 || bytes == 0) {
            return "nvrtcGetPTXSize failed";
        }
        out.image.resize(bytes);
        if (n.ptx(prog, out.image.data()) != 0) {
            return "nvrtcGetPTX failed";
        }
    } else {
        if (n.cubinSize(prog, &bytes) != 0 || bytes == 0) {
            return "nvrtcGetCUBINSize failed";
        }
        out.image.resize(bytes);
        if (n.cubin(prog, out.image.data()) != 0) {
            return "nvrtcGetCUBIN failed";
        }
    }
    return {};
}

/// The lowered names of the instantiation, the pool and the constants (and of moreNames into
/// moreLowered); empty when done, else what failed.
std::string takeLoweredNames(const Nvrtc& n, NvrtcProgram prog, const CompileRequest& request,
                             const std::vector<std::string>* moreNames,
                             std::vector<std::string>* moreLowered, Binary& out) {
    const char* kernelName = nullptr;
    const char* poolName = nullptr;
    if (n.lowered(prog, request.nameExpression.c_str(), &kernelName) != 0 ||
        kernelName == nullptr || n.lowered(prog, kPoolExpression, &poolName) != 0 ||
        poolName == nullptr) {
        return "nvrtcGetLoweredName failed for " + request.nameExpression;
    }
    out.kernelName = kernelName;
    out.poolName = poolName;
    for (const std::string& c : request.constants) {
        const char* l = nullptr;
        if (n.lowered(prog, ("&" + c).c_str(), &l) != 0 || l == nullptr) {
            return "nvrtcGetLoweredName failed for &" + c;
        }
        out.constantNames.emplace_back(l);
    }
    if (moreNames != nullptr && moreLowered != nullptr) {
        for (const std::string& m : *moreNames) {
            const char* l = nullptr;
            moreLowered->emplace_back(n.lowered(prog, m.c_str(), &l) == 0 && l != nullptr
                                          ? std::string(l)
                                          : std::string());
        }
    }
    return {};
}

} // namespace

Binary compile(const CompileRequest& request, const std::vector<EmbeddedHeader>* headers,
               const std::vector<std::string>* moreNames, std::vector<std::string>* moreLowered) {
    Binary out;
    const auto t0 = Clock::now();
    const Nvrtc& n = nvrtc();
    if (!n.ok) {
        out.error = n.why;
        return out;
    }
    const std::vector<EmbeddedHeader> own =
        headers == nullptr ? embeddedHeaders() : std::vector<EmbeddedHeader>{};
    const std::vector<EmbeddedHeader>& hs = headers == nullptr ? own : *headers;
    if (hs.empty()) {
        out.error = "the runtime library was built without the embedded device headers";
        return out;
    }
    bool ptx = false;
    const std::vector<std::string> options = compileOptions(request, n.archs, &ptx);
    if (options.empty()) {
        out.error = "NVRTC " + n.version + " compiles for no architecture at or below sm_" +
                    std::to_string(request.ccMajor) + std::to_string(request.ccMinor);
        return out;
    }
    std::vector<const char*> names;
    std::vector<const char*> texts;
    for (const EmbeddedHeader& h : hs) {
        names.push_back(h.name);
        texts.push_back(h.text);
    }
    NvrtcProgram prog = nullptr;
    NvrtcResult r = n.create(&prog, request.source.c_str(), "memplace_jit.cu",
                             static_cast<int>(hs.size()), texts.data(), names.data());
    if (r != 0) {
        out.error = std::string("nvrtcCreateProgram: ") + n.errorString(r);
        return out;
    }
    auto fail = [&](const std::string& what) {
        out.error = what;
        n.destroy(&prog);
        return out;
    };
    if ((r = n.addName(prog, request.nameExpression.c_str())) != 0 ||
        (r = n.addName(prog, kPoolExpression)) != 0) {
        return fail(std::string("nvrtcAddNameExpression: ") + n.errorString(r));
    }
    if (moreNames != nullptr) {
        for (const std::string& m : *moreNames) {
            if ((r = n.addName(prog, m.c_str())) != 0) {
                return fail(std::string("nvrtcAddNameExpression: ") + n.errorString(r));
            }
        }
    }
    for (const std::string& c : request.constants) {
        if ((r = n.addName(prog, ("&" + c).c_str())) != 0) {
            return fail(std::string("nvrtcAddNameExpression: ") + n.errorString(r));
        }
    }
    std::vector<const char*> opts;
    for (const std::string& o : options) {
        opts.push_back(o.c_str());
    }
    r = n.compile(prog, static_cast<int>(opts.size()), opts.data());
    std::size_t logBytes = 0;
    std::string log;
    if (n.logSize(prog, &logBytes) == 0 && logBytes > 1) {
        log.resize(logBytes);
        if (n.log(prog, log.data()) != 0) {
            log.clear();
        }
    }
    if (r != 0) {
        constexpr NvrtcResult kCompilationError = 6; // NVRTC_ERROR_COMPILATION
        out.cacheable = r == kCompilationError;
        out.compileMs = msSince(t0);
        return fail(std::string("NVRTC: ") + n.errorString(r) + "\n" + trimLog(log));
    }
    if (std::string failed = takeImage(n, prog, ptx, out); !failed.empty()) {
        return fail(failed);
    }
    if (std::string failed = takeLoweredNames(n, prog, request, moreNames, moreLowered, out);
        !failed.empty()) {
        return fail(failed);
    }
    out.ptx = ptx;
    n.destroy(&prog);
    out.ok = true;
    out.compileMs = msSince(t0);
    return out;
}

// ---- the driver side -------------------------------------------------------------------------

Loaded load(const Binary& binary) {
    Loaded out;
    const auto t0 = Clock::now();
    const Driver& d = driver();
    if (!d.ok) {
        out.error = d.why;
        return out;
    }
    std::string image = binary.image;
    if (binary.ptx && (image.empty() || image.back() != '\0')) {
        image.push_back('\0'); // PTX is loaded as a NUL-terminated string
    }
    CUmodule module = nullptr;
    CUresult r = d.loadData(&module, image.data());
    if (r == CUDA_ERROR_INVALID_CONTEXT) {
        (void)cudaFree(nullptr); // makes the runtime's primary context current on this thread
        (void)cudaGetLastError();
        r = d.loadData(&module, image.data());
    }
    if (r != CUDA_SUCCESS) {
        out.error = "cuModuleLoadData: " + cuMessage(r);
        return out;
    }
    CUfunction fn = nullptr;
    if ((r = d.getFunction(&fn, module, binary.kernelName.c_str())) != CUDA_SUCCESS) {
        out.error = "cuModuleGetFunction(" + binary.kernelName + "): " + cuMessage(r);
        return out;
    }
    CUdeviceptr pool = 0;
    std::size_t poolBytes = 0;
    if ((r = d.getGlobal(&pool, &poolBytes, module, binary.poolName.c_str())) != CUDA_SUCCESS) {
        out.error = "cuModuleGetGlobal(" + binary.poolName + "): " + cuMessage(r);
        return out;
    }
    for (const std::string& c : binary.constantNames) {
        CUdeviceptr p = 0;
        std::size_t bytes = 0;
        if ((r = d.getGlobal(&p, &bytes, module, c.c_str())) != CUDA_SUCCESS) {
            out.error = "cuModuleGetGlobal(" + c + "): " + cuMessage(r);
            return out;
        }
        out.constants.emplace_back(static_cast<std::uintptr_t>(p), bytes);
    }
    int shared = 0;
    if (d.getAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn) != CUDA_SUCCESS) {
        shared = 0;
    }
    out.module = module;
    out.function = fn;
    out.pool = static_cast<std::uintptr_t>(pool);
    out.poolBytes = poolBytes;
    out.staticShared = static_cast<std::size_t>(std::max(shared, 0));
    out.ok = true;
    out.loadMs = msSince(t0);
    return out;
}

void unload(void* module) {
    const Driver& d = driver();
    if (d.ok && module != nullptr) {
        (void)d.unloadModule(static_cast<CUmodule>(module));
    }
}

bool setMaxDynamicShared(void* function, int bytes, std::string* error) {
    const Driver& d = driver();
    if (!d.ok) {
        if (error != nullptr) {
            *error = d.why;
        }
        return false;
    }
    const CUresult r = d.setAttribute(static_cast<CUfunction>(function),
                                      CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
    if (r != CUDA_SUCCESS && error != nullptr) {
        *error = "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES): " + cuMessage(r);
    }
    return r == CUDA_SUCCESS;
}

cudaError_t launch(void* function, dim3 grid, dim3 block, unsigned sharedBytes, cudaStream_t stream,
                   void** params) {
    const Driver& d = driver();
    if (!d.ok) {
        return cudaErrorNotSupported;
    }
    const CUresult r =
        d.launchKernel(static_cast<CUfunction>(function), grid.x, grid.y, grid.z, block.x, block.y,
                       block.z, sharedBytes, reinterpret_cast<CUstream>(stream), params, nullptr);
    return static_cast<cudaError_t>(r);
}

} // namespace memplace::detail::jit

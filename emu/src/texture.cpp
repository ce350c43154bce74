// Texture objects on the CPU: linear (tex1Dfetch) and pitch2D (tex2D) resources, point and
// linear filtering, wrap / clamp / mirror / border addressing, element and normalized-float
// reads. Handles point at objects that live for the whole process, so a fetch through a
// destroyed or made-up handle is reported, not undefined.
#include "state.h"

#include <cmath>
#include <cstring>
#include <deque>
#include <unordered_set>

namespace memplace::emu::detail {
namespace {

constexpr unsigned kMagic = 0x7e47a9e1u;

struct Texture {
    unsigned magic = kMagic;
    std::atomic<bool> destroyed{false};
    cudaResourceDesc res{};
    cudaTextureDesc tex{};
    cudaChannelFormatDesc format{};
    int channels = 0;
    int channelBytes = 0;
    std::size_t elementBytes = 0;
    const unsigned char* data = nullptr;
    std::size_t elements = 0; // linear
    std::size_t width = 0, height = 0, pitch = 0;
};

std::mutex g_textureMutex;
std::deque<Texture> g_textures; // stable addresses; never shrinks
std::unordered_set<const Texture*> g_known;

bool describeFormat(const cudaChannelFormatDesc& f, int& channels, int& bytes) {
    const int bits[4] = {f.x, f.y, f.z, f.w};
    channels = 0;
    for (int b : bits) {
        if (b == 0)
            break;
        if (b != f.x)
            return false;
        ++channels;
    }
    for (int i = channels; i < 4; ++i) {
        if (bits[i] != 0)
            return false;
    }
    if (channels != 1 && channels != 2 && channels != 4)
        return false;
    if (f.x != 8 && f.x != 16 && f.x != 32)
        return false;
    if (f.f == cudaChannelFormatKindFloat && f.x != 32)
        return false; // no half textures
    if (f.f != cudaChannelFormatKindSigned && f.f != cudaChannelFormatKindUnsigned &&
        f.f != cudaChannelFormatKindFloat) {
        return false;
    }
    bytes = f.x / 8;
    return true;
}

const Texture* lookup(cudaTextureObject_t handle, const char* fn) {
    thread_local const Texture* lastKnown = nullptr;
    const auto* t = reinterpret_cast<const Texture*>(static_cast<std::uintptr_t>(handle));
    if (t == nullptr || t != lastKnown) {
        bool known = false;
        if (t != nullptr) {
            std::lock_guard lock(g_textureMutex);
            known = g_known.count(t) != 0;
        }
        if (!known) {
            deviceFault(cudaErrorInvalidTexture,
                        std::string(fn) +
                            " on a texture object that cudaCreateTextureObject did not return");
        }
        lastKnown = t;
    }
    if (t->destroyed)
        deviceFault(cudaErrorInvalidTexture, std::string(fn) + " on a destroyed texture object");
    return t;
}

/// One channel of a texel as float (normalized for 8/16-bit integers when asked).
float channelAsFloat(const Texture& t, const unsigned char* p, bool normalize) {
    switch (t.format.f) {
    case cudaChannelFormatKindFloat: {
        float v;
        std::memcpy(&v, p, 4);
        return v;
    }
    case cudaChannelFormatKindSigned:
        if (t.channelBytes == 1) {
            auto v = static_cast<signed char>(*p);
            return normalize ? std::max(-1.0f, v / 127.0f) : static_cast<float>(v);
        } else if (t.channelBytes == 2) {
            short v;
            std::memcpy(&v, p, 2);
            return normalize ? std::max(-1.0f, v / 32767.0f) : static_cast<float>(v);
        } else {
            int v;
            std::memcpy(&v, p, 4);
            return static_cast<float>(v);
        }
    default:
        if (t.channelBytes == 1) {
            return normalize ? *p / 255.0f : static_cast<float>(*p);
        } else if (t.channelBytes == 2) {
            unsigned short v;
            std::memcpy(&v, p, 2);
            return normalize ? v / 65535.0f : static_cast<float>(v);
        } else {
            unsigned v;
            std::memcpy(&v, p, 4);
            return static_cast<float>(v);
        }
    }
}

/// Resolves a texel coordinate with the address mode; false: outside (border).
bool address(int& i, long long n, cudaTextureAddressMode mode) {
    if (i >= 0 && i < n)
        return true;
    switch (mode) {
    case cudaAddressModeBorder:
        return false;
    case cudaAddressModeWrap: {
        long long r = i % n;
        i = static_cast<int>(r < 0 ? r + n : r);
        return true;
    }
    case cudaAddressModeMirror: {
        long long period = 2 * n;
        long long r = i % period;
        if (r < 0)
            r += period;
        i = static_cast<int>(r < n ? r : period - 1 - r);
        return true;
    }
    default:
        i = i < 0 ? 0 : static_cast<int>(n - 1);
        return true;
    }
}

/// Texel (i, j) of a 2-D texture into `out` as raw element bytes; border texels from the
/// border color.
void texel2D(const Texture& t, int i, int j, unsigned char* out) {
    cudaTextureAddressMode mx = t.tex.addressMode[0], my = t.tex.addressMode[1];
    if (!t.tex.normalizedCoords) { // wrap and mirror need normalized coordinates
        if (mx == cudaAddressModeWrap || mx == cudaAddressModeMirror)
            mx = cudaAddressModeClamp;
        if (my == cudaAddressModeWrap || my == cudaAddressModeMirror)
            my = cudaAddressModeClamp;
    }
    bool inX = address(i, static_cast<long long>(t.width), mx);
    bool inY = address(j, static_cast<long long>(t.height), my);
    if (inX && inY) {
        std::memcpy(out,
                    t.data + static_cast<std::size_t>(j) * t.pitch +
                        static_cast<std::size_t>(i) * t.elementBytes,
                    t.elementBytes);
        return;
    }
    for (int c = 0; c < t.channels; ++c) { // the border color, in the channel's type
        unsigned char* p = out + c * t.channelBytes;
        float b = t.tex.borderColor[c];
        if (t.format.f == cudaChannelFormatKindFloat) {
            std::memcpy(p, &b, 4);
        } else if (t.channelBytes == 1) {
            *p = static_cast<unsigned char>(static_cast<long long>(b));
        } else if (t.channelBytes == 2) {
            auto v = static_cast<unsigned short>(static_cast<long long>(b));
            std::memcpy(p, &v, 2);
        } else {
            auto v = static_cast<unsigned>(static_cast<long long>(b));
            std::memcpy(p, &v, 4);
        }
    }
}

} // namespace

void textureFetch(cudaTextureObject_t obj, const cudaChannelFormatDesc& want, std::size_t size,
                  int dims, int ix, float x, float y, void* out, const char* fn) {
    const Texture& t = *lookup(obj, fn);
    const bool normalized =
        t.tex.readMode == cudaReadModeNormalizedFloat && t.format.f != cudaChannelFormatKindFloat;
    int wantChannels = 0, wantBytes = 0;
    if (want.f == cudaChannelFormatKindNone || !describeFormat(want, wantChannels, wantBytes)) {
        deviceFault(cudaErrorInvalidTexture,
                    std::string(fn) + "<T>: T is not a texture element type");
    }
    bool typeOk =
        wantChannels == t.channels &&
        (normalized || t.tex.filterMode == cudaFilterModeLinear
             ? want.f == cudaChannelFormatKindFloat && wantBytes == 4
             : wantBytes == t.channelBytes && (want.f == cudaChannelFormatKindFloat) ==
                                                  (t.format.f == cudaChannelFormatKindFloat));
    if (!typeOk || size != static_cast<std::size_t>(wantChannels * wantBytes)) {
        deviceFault(cudaErrorInvalidTexture,
                    std::string(fn) + "<T>: T (" + std::to_string(wantChannels) + " x " +
                        std::to_string(wantBytes * 8) + "-bit) does not match the texture (" +
                        std::to_string(t.channels) + " x " + std::to_string(t.channelBytes * 8) +
                        "-bit" + (normalized ? ", normalized-float reads" : "") +
                        (t.tex.filterMode == cudaFilterModeLinear ? ", linear filtering" : "") +
                        ")");
    }
    if (dims == 1) {
        if (t.res.resType != cudaResourceTypeLinear) {
            deviceFault(cudaErrorInvalidTexture,
                        "tex1Dfetch needs a linear resource (cudaResourceTypeLinear)");
        }
        unsigned char raw[16] = {};
        if (ix >= 0 && static_cast<std::size_t>(ix) < t.elements) {
            std::memcpy(raw, t.data + static_cast<std::size_t>(ix) * t.elementBytes,
                        t.elementBytes);
        } // out of range: zero, whatever the address mode (CUDA ignores it for linear resources)
        if (!normalized) {
            std::memcpy(out, raw, size);
            return;
        }
        float* f = static_cast<float*>(out);
        for (int c = 0; c < t.channels; ++c)
            f[c] = channelAsFloat(t, raw + c * t.channelBytes, true);
        return;
    }
    if (t.res.resType != cudaResourceTypePitch2D) {
        deviceFault(cudaErrorInvalidTexture,
                    "tex2D needs a pitch2D resource (cudaResourceTypePitch2D) under emulation");
    }
    float fx = t.tex.normalizedCoords ? x * static_cast<float>(t.width) : x;
    float fy = t.tex.normalizedCoords ? y * static_cast<float>(t.height) : y;
    if (t.tex.filterMode == cudaFilterModePoint) {
        unsigned char raw[16] = {};
        texel2D(t, static_cast<int>(std::floor(fx)), static_cast<int>(std::floor(fy)), raw);
        if (!normalized) {
            std::memcpy(out, raw, size);
            return;
        }
        float* f = static_cast<float*>(out);
        for (int c = 0; c < t.channels; ++c)
            f[c] = channelAsFloat(t, raw + c * t.channelBytes, true);
        return;
    }
    // Linear filtering: weights in 9-bit fixed point with 8 fractional bits, as the hardware.
    float xb = fx - 0.5f, yb = fy - 0.5f;
    int i = static_cast<int>(std::floor(xb)), j = static_cast<int>(std::floor(yb));
    float a = std::round((xb - std::floor(xb)) * 256.0f) / 256.0f;
    float b = std::round((yb - std::floor(yb)) * 256.0f) / 256.0f;
    float* f = static_cast<float*>(out);
    unsigned char t00[16], t10[16], t01[16], t11[16];
    texel2D(t, i, j, t00);
    texel2D(t, i + 1, j, t10);
    texel2D(t, i, j + 1, t01);
    texel2D(t, i + 1, j + 1, t11);
    for (int c = 0; c < t.channels; ++c) {
        int o = c * t.channelBytes;
        f[c] = (1 - a) * (1 - b) * channelAsFloat(t, t00 + o, normalized) +
               a * (1 - b) * channelAsFloat(t, t10 + o, normalized) +
               (1 - a) * b * channelAsFloat(t, t01 + o, normalized) +
               a * b * channelAsFloat(t, t11 + o, normalized);
    }
}

} // namespace memplace::emu::detail

using namespace memplace::emu::detail;

cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f) {
    return cudaChannelFormatDesc{x, y, z, w, f};
}

namespace memplace::emu::detail {
namespace {

/// The features of a texture request the emulator does not support (reported), or cudaSuccess.
cudaError_t checkTextureSupported(const cudaResourceDesc& resDesc, const cudaTextureDesc& texDesc,
                                  const cudaResourceViewDesc* resViewDesc) {
    if (resViewDesc != nullptr) {
        report("cudaCreateTextureObject: resource views are not supported");
        return fail(cudaErrorNotSupported);
    }
    if (resDesc.resType == cudaResourceTypeArray ||
        resDesc.resType == cudaResourceTypeMipmappedArray) {
        report("cudaCreateTextureObject: CUDA arrays are not supported (use linear or pitch2D "
               "resources)");
        return fail(cudaErrorNotSupported);
    }
    if (resDesc.resType != cudaResourceTypeLinear && resDesc.resType != cudaResourceTypePitch2D) {
        return fail(cudaErrorInvalidValue);
    }
    if (texDesc.sRGB != 0 || texDesc.maxAnisotropy > 1) {
        report("cudaCreateTextureObject: sRGB and anisotropic filtering are not supported");
        return fail(cudaErrorNotSupported);
    }
    return cudaSuccess;
}

/// Points `t` at the resource's memory, checked against the allocations and the device's
/// texture limits. The caller holds device().mutex.
cudaError_t bindResource(Texture& t, const cudaResourceDesc& resDesc, const cudaDeviceProp& prop) {
    const bool linear = resDesc.resType == cudaResourceTypeLinear;
    if (linear) {
        void* p = resDesc.res.linear.devPtr;
        std::size_t bytes = resDesc.res.linear.sizeInBytes;
        if (p == nullptr || reinterpret_cast<std::uintptr_t>(p) % prop.textureAlignment != 0) {
            return fail(cudaErrorInvalidValue); // devPtr must be aligned to textureAlignment
        }
        if (findAllocationLocked(p, bytes) == nullptr)
            return fail(cudaErrorInvalidValue);
        t.elements = bytes / t.elementBytes;
        if (t.elements > (1ULL << 27))
            return fail(cudaErrorInvalidValue);
        t.data = static_cast<const unsigned char*>(p);
    } else {
        const auto& r = resDesc.res.pitch2D;
        if (r.devPtr == nullptr || r.width == 0 || r.height == 0 ||
            r.pitchInBytes % prop.texturePitchAlignment != 0 ||
            r.pitchInBytes < r.width * t.elementBytes ||
            reinterpret_cast<std::uintptr_t>(r.devPtr) % prop.texturePitchAlignment != 0 ||
            r.width > static_cast<std::size_t>(prop.maxTexture2DLinear[0]) ||
            r.height > static_cast<std::size_t>(prop.maxTexture2DLinear[1])) {
            return fail(cudaErrorInvalidValue);
        }
        if (findAllocationLocked(r.devPtr, r.pitchInBytes * (r.height - 1) +
                                               r.width * t.elementBytes) == nullptr) {
            return fail(cudaErrorInvalidValue);
        }
        t.width = r.width;
        t.height = r.height;
        t.pitch = r.pitchInBytes;
        t.data = static_cast<const unsigned char*>(r.devPtr);
    }
    return cudaSuccess;
}

} // namespace
} // namespace memplace::emu::detail

cudaError_t cudaCreateTextureObject(cudaTextureObject_t* texObject, const cudaResourceDesc* resDesc,
                                    const cudaTextureDesc* texDesc,
                                    const cudaResourceViewDesc* resViewDesc) {
    if (texObject == nullptr || resDesc == nullptr || texDesc == nullptr)
        return fail(cudaErrorInvalidValue);
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    if (cudaError_t e = checkTextureSupported(*resDesc, *texDesc, resViewDesc); e != cudaSuccess)
        return e;
    Texture t;
    t.res = *resDesc;
    t.tex = *texDesc;
    const bool linear = resDesc->resType == cudaResourceTypeLinear;
    t.format = linear ? resDesc->res.linear.desc : resDesc->res.pitch2D.desc;
    if (!describeFormat(t.format, t.channels, t.channelBytes))
        return fail(cudaErrorInvalidChannelDescriptor);
    t.elementBytes = static_cast<std::size_t>(t.channels * t.channelBytes);
    const bool integer = t.format.f != cudaChannelFormatKindFloat;
    if (texDesc->filterMode == cudaFilterModeLinear &&
        (linear ||
         (integer && (texDesc->readMode != cudaReadModeNormalizedFloat || t.channelBytes == 4)))) {
        return fail(cudaErrorInvalidFilterSetting);
    }
    if (texDesc->readMode == cudaReadModeNormalizedFloat && integer && t.channelBytes == 4) {
        return fail(cudaErrorInvalidNormSetting);
    }
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    Device& d = device();
    std::lock_guard lock(d.mutex);
    if (cudaError_t e = bindResource(t, *resDesc, prop); e != cudaSuccess)
        return e;
    std::lock_guard tl(g_textureMutex);
    Texture& stored = g_textures.emplace_back();
    stored.res = t.res;
    stored.tex = t.tex;
    stored.format = t.format;
    stored.channels = t.channels;
    stored.channelBytes = t.channelBytes;
    stored.elementBytes = t.elementBytes;
    stored.data = t.data;
    stored.elements = t.elements;
    stored.width = t.width;
    stored.height = t.height;
    stored.pitch = t.pitch;
    g_known.insert(&stored);
    *texObject = static_cast<cudaTextureObject_t>(reinterpret_cast<std::uintptr_t>(&stored));
    return cudaSuccess;
}

namespace {
Texture* liveTexture(cudaTextureObject_t handle) {
    auto* t = reinterpret_cast<Texture*>(static_cast<std::uintptr_t>(handle));
    std::lock_guard lock(g_textureMutex);
    if (g_known.count(t) == 0 || t->destroyed)
        return nullptr;
    return t;
}
} // namespace

cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texObject) {
    if (texObject == 0)
        return cudaSuccess;
    Texture* t = liveTexture(texObject);
    if (t == nullptr)
        return fail(cudaErrorInvalidValue);
    t->destroyed = true;
    return cudaSuccess;
}
cudaError_t cudaGetTextureObjectResourceDesc(cudaResourceDesc* resDesc,
                                             cudaTextureObject_t texObject) {
    Texture* t = liveTexture(texObject);
    if (t == nullptr || resDesc == nullptr)
        return fail(cudaErrorInvalidValue);
    *resDesc = t->res;
    return cudaSuccess;
}
cudaError_t cudaGetTextureObjectTextureDesc(cudaTextureDesc* texDesc,
                                            cudaTextureObject_t texObject) {
    Texture* t = liveTexture(texObject);
    if (t == nullptr || texDesc == nullptr)
        return fail(cudaErrorInvalidValue);
    *texDesc = t->tex;
    return cudaSuccess;
}

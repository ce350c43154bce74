// Texture placement: a texture object over the array, 1-D linear or 2-D pitched (the 2-D one
// over a pitched copy, refreshed at every launch, when the rows are not pitch-aligned). The
// objects are kept per (device, memory, geometry) until releaseResources. The geometry rules:
// layout.h (linearTexture, pitchedTexture).
#include "runtime/src/runtime_internal.h"

#include <algorithm>

namespace memplace::detail {

namespace {

cudaChannelFormatDesc rawFormat(std::size_t elem) {
    switch (elem) {
    case 1:
        return cudaCreateChannelDesc(8, 0, 0, 0, cudaChannelFormatKindUnsigned);
    case 2:
        return cudaCreateChannelDesc(16, 0, 0, 0, cudaChannelFormatKindUnsigned);
    case 4:
        return cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindUnsigned);
    case 8:
        return cudaCreateChannelDesc(32, 32, 0, 0, cudaChannelFormatKindUnsigned);
    default:
        return cudaCreateChannelDesc(32, 32, 32, 32, cudaChannelFormatKindUnsigned);
    }
}

cudaTextureDesc pointTextureDesc() {
    cudaTextureDesc td{};
    td.addressMode[0] = cudaAddressModeClamp;
    td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 0;
    return td;
}

/// Creates (or finds) the 1-D texture of array j.
bool materialiseTexture1D(Runtime& r, DeviceAttrs& a, const ArrayInfo& ai, ArrayHandle& h,
                          LaunchState& st, std::string& why) {
    LaunchReport& rep = st.report;
    auto mit = a.max1D.find(ai.elemSize);
    std::size_t maxTexels = 0;
    if (mit == a.max1D.end()) {
        cudaChannelFormatDesc fmt = rawFormat(ai.elemSize);
        if (!check(cudaDeviceGetTexture1DLinearMaxWidth(&maxTexels, &fmt, st.device),
                   "cudaDeviceGetTexture1DLinearMaxWidth", rep)) {
            why = "cannot query the 1-D linear texture limit";
            return false;
        }
        a.max1D[ai.elemSize] = maxTexels;
    } else {
        maxTexels = mit->second;
    }
    const Linear1D g = linearTexture(reinterpret_cast<std::uintptr_t>(ai.ptr), ai.extentBytes,
                                     ai.elemSize, static_cast<std::size_t>(a.texAlign), maxTexels);
    if (!g.ok) {
        why = g.why;
        return false;
    }
    const TexKey key{st.device, g.base, g.bytes, ai.elemSize, 0, 0, false};
    auto it = r.textures.find(key);
    if (it == r.textures.end()) {
        cudaResourceDesc rd{};
        rd.resType = cudaResourceTypeLinear;
        rd.res.linear.devPtr = reinterpret_cast<void*>(g.base); // NOLINT(performance-no-int-to-ptr)
        rd.res.linear.desc = rawFormat(ai.elemSize);
        rd.res.linear.sizeInBytes = g.bytes;
        const cudaTextureDesc td = pointTextureDesc();
        TexEntry e;
        if (!check(cudaCreateTextureObject(&e.tex, &rd, &td, nullptr),
                   "cudaCreateTextureObject(" + ai.name + ", 1-D)", rep)) {
            why = "cudaCreateTextureObject failed";
            return false;
        }
        it = r.textures.emplace(key, e).first;
    }
    h.tex = it->second.tex;
    h.texOffset = g.offsetElems;
    h.width = FastDiv{};
    return true;
}

/// Refreshes the pitched copy of a 2-D texture on the stream, after its last reader: the
/// program may have changed the array since.
bool refreshPitchedCopy(TexEntry& e, const Pitched2D& g, const ArrayInfo& ai, LaunchState& st,
                        cudaStream_t stream, std::size_t& moved, std::string& why) {
    LaunchReport& rep = st.report;
    if (e.used && !check(cudaStreamWaitEvent(stream, e.lastUse, 0),
                         "cudaStreamWaitEvent(pitched copy)", rep)) {
        why = "cannot order the pitched copy after its last reader";
        return false;
    }
    if (g.fullRows > 0 &&
        !check(cudaMemcpy2DAsync(e.pitched, e.pitch, ai.ptr, g.rowBytes, g.rowBytes, g.fullRows,
                                 cudaMemcpyDeviceToDevice, stream),
               "cudaMemcpy2DAsync(" + ai.name + ")", rep)) {
        why = "the pitched copy failed";
        return false;
    }
    if (g.tailElems > 0 &&
        !check(cudaMemcpyAsync(static_cast<char*>(e.pitched) + g.fullRows * e.pitch,
                               static_cast<const char*>(ai.ptr) + g.fullRows * g.rowBytes,
                               g.tailElems * ai.elemSize, cudaMemcpyDeviceToDevice, stream),
               "cudaMemcpyAsync(" + ai.name + " last row)", rep)) {
        why = "the pitched copy failed";
        return false;
    }
    moved += g.fullRows * g.rowBytes + g.tailElems * ai.elemSize;
    st.copiedTextures.push_back(&e);
    return true;
}

/// Creates (or finds) the 2-D pitched texture of array j, copying it into a pitched buffer when
/// its rows are not pitch-aligned.
bool materialiseTexture2D(Runtime& r, DeviceAttrs& a, const ArrayInfo& ai, ArrayHandle& h,
                          LaunchState& st, cudaStream_t stream, std::size_t& moved,
                          std::string& why) {
    LaunchReport& rep = st.report;
    const Pitched2D g = pitchedTexture(
        reinterpret_cast<std::uintptr_t>(ai.ptr), ai.extentBytes, ai.elemSize, ai.width,
        static_cast<std::size_t>(a.texAlign), static_cast<std::size_t>(a.pitchAlign),
        static_cast<std::size_t>(a.max2DWidth), static_cast<std::size_t>(a.max2DHeight),
        static_cast<std::size_t>(a.max2DPitch));
    if (!g.ok) {
        why = g.why;
        return false;
    }
    const auto base = reinterpret_cast<std::uintptr_t>(ai.ptr);
    const TexKey key{st.device, base, ai.extentBytes, ai.elemSize, g.width, g.height, g.copy};
    auto it = r.textures.find(key);
    if (it == r.textures.end()) {
        TexEntry e;
        void* data = const_cast<void*>(ai.ptr);
        std::size_t pitch = g.rowBytes;
        if (g.copy) {
            if (!check(cudaMallocPitch(&e.pitched, &e.pitch, g.rowBytes, g.height),
                       "cudaMallocPitch(" + ai.name + ")", rep)) {
                why = "cudaMallocPitch failed";
                return false;
            }
            if (e.pitch % static_cast<std::size_t>(std::max(a.pitchAlign, 1)) != 0 ||
                e.pitch > static_cast<std::size_t>(a.max2DPitch)) {
                (void)cudaFree(e.pitched);
                why = "cudaMallocPitch gave a pitch the texture unit does not accept";
                return false;
            }
            if (!check(cudaEventCreateWithFlags(&e.lastUse, cudaEventDisableTiming),
                       "cudaEventCreate", rep)) {
                (void)cudaFree(e.pitched);
                why = "cudaEventCreate failed";
                return false;
            }
            data = e.pitched;
            pitch = e.pitch;
        }
        cudaResourceDesc rd{};
        rd.resType = cudaResourceTypePitch2D;
        rd.res.pitch2D.devPtr = data;
        rd.res.pitch2D.desc = rawFormat(ai.elemSize);
        rd.res.pitch2D.width = g.width;
        rd.res.pitch2D.height = g.height;
        rd.res.pitch2D.pitchInBytes = pitch;
        const cudaTextureDesc td = pointTextureDesc();
        if (!check(cudaCreateTextureObject(&e.tex, &rd, &td, nullptr),
                   "cudaCreateTextureObject(" + ai.name + ", 2-D)", rep)) {
            if (e.pitched != nullptr) {
                (void)cudaFree(e.pitched);
                (void)cudaEventDestroy(e.lastUse);
            }
            why = "cudaCreateTextureObject failed";
            return false;
        }
        it = r.textures.emplace(key, e).first;
    }
    TexEntry& e = it->second;
    // The copy is refreshed on every launch: the program may have changed the array.
    if (e.pitched != nullptr && !refreshPitchedCopy(e, g, ai, st, stream, moved, why)) {
        return false;
    }
    h.tex = e.tex;
    h.texOffset = 0;
    h.width = FastDiv::make(static_cast<uint32_t>(g.width));
    return true;
}

} // namespace

/// Whether a texture can hold the array: a 2-D one (known extent and row length) only within
/// the device's 2-D linear texture limits, else materialiseTexture2D falls back to global (a
/// 4-row table of 4M-element rows, cfd's neighbour list, is 2-D and far wider). A policy that
/// asked for it anyway would waste the launch (the Placer's tuning dropped such candidates).
bool texture2DFits(const DeviceAttrs& a, const ArrayInfo& ai) {
    if (ai.dims != 2 || ai.width <= 0 || !ai.extentKnown) {
        return true;
    }
    return pitchedTexture(
               reinterpret_cast<std::uintptr_t>(ai.ptr), ai.extentBytes, ai.elemSize, ai.width,
               static_cast<std::size_t>(a.texAlign), static_cast<std::size_t>(a.pitchAlign),
               static_cast<std::size_t>(a.max2DWidth), static_cast<std::size_t>(a.max2DHeight),
               static_cast<std::size_t>(a.max2DPitch))
        .ok;
}

void placeTexture(Launch& l, int j) {
    const ArrayInfo& ai = l.info.arrays[j];
    ArrayHandle& h = l.plan.handles[j];
    std::string why;
    bool ok = false;
    if (ai.dims == 2) {
        std::size_t moved = 0;
        l.beginTiming(); // a pitched copy may be queued
        ok = materialiseTexture2D(l.r, *l.attrs, ai, h, l.st, l.la.stream, moved, why);
        l.rep.arrays[j].bytesMoved += moved;
    } else {
        ok = materialiseTexture1D(l.r, *l.attrs, ai, h, l.st, why);
    }
    if (!ok) {
        l.fallback(j, "texture: " + why);
    }
}

void recordTextureReaders(LaunchState& st, const LaunchArgs& la) {
    LaunchReport& rep = st.report;
    for (TexEntry* e : st.copiedTextures) {
        if (check(cudaEventRecord(e->lastUse, la.stream), "cudaEventRecord(pitched copy)", rep)) {
            e->used = true;
        }
    }
}

void releaseTextures(Runtime& r) {
    for (auto& [key, e] : r.textures) {
        (void)cudaDestroyTextureObject(e.tex);
        if (e.pitched != nullptr) {
            (void)cudaFree(e.pitched);
        }
        if (e.lastUse != nullptr) {
            (void)cudaEventDestroy(e.lastUse);
        }
    }
    r.textures.clear();
}

} // namespace memplace::detail

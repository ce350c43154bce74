// Texture fetches from texture objects: tex1Dfetch on linear resources, tex2D on pitch2D
// resources (point or linear filtering, every address mode, element or normalized-float reads).
// CUDA arrays, layered, cubemap and 3-D textures and surfaces are not emulated: tex1D, tex3D,
// surf2Dread and the like are not declared, so code using them does not compile.
#pragma once

#include "memplace/emu/device_functions.h"
#include "memplace/emu/runtime_api.h"

template <class T>
inline T tex1Dfetch(cudaTextureObject_t texObject, int x) {
    T r;
    ::memplace::emu::detail::textureFetch(texObject, cudaCreateChannelDesc<T>(), sizeof(T), 1, x, 0,
                                          0, &r, "tex1Dfetch");
    return r;
}
template <class T>
inline void tex1Dfetch(T* ret, cudaTextureObject_t texObject, int x) {
    *ret = tex1Dfetch<T>(texObject, x);
}
template <class T>
inline T tex2D(cudaTextureObject_t texObject, float x, float y) {
    T r;
    ::memplace::emu::detail::textureFetch(texObject, cudaCreateChannelDesc<T>(), sizeof(T), 2, 0, x,
                                          y, &r, "tex2D");
    return r;
}
template <class T>
inline void tex2D(T* ret, cudaTextureObject_t texObject, float x, float y) {
    *ret = tex2D<T>(texObject, x, y);
}

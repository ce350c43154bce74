// The memory a launch writes (its written arrays to the end of their extents, the globals it
// writes by name) and the comparison of two copies of it: what a sweep snapshots, restores and
// compares, and what a shadow launch copies.
#include "runtime/src/runtime_internal.h"

#include <algorithm>

namespace memplace::detail {

/// The memory a launch writes, as far as it can be known: one buffer per distinct pointer of a
/// written array (to the end of its extent; `restore` when an array over it is read or it is not
/// write-only), then one per `__device__` variable the kernel writes by name. `why` gets the
/// first reason it cannot all be known (an unknown extent, a global whose memory was not found,
/// writes through unknown pointers); the buffers found until then are returned.
std::vector<WrittenBuffer> writtenBuffers(const LaunchInfo& info, std::string& why) {
    const int n = static_cast<int>(info.arrays.size());
    std::vector<WrittenBuffer> bufs;
    for (int j = 0; j < n; ++j) {
        const ArrayInfo& ai = info.arrays[static_cast<std::size_t>(j)];
        if (ai.ptr == nullptr) {
            continue;
        }
        auto it = std::find_if(bufs.begin(), bufs.end(),
                               [&](const WrittenBuffer& b) { return b.ptr == ai.ptr; });
        if (ai.mode == Mode::Read) {
            if (it != bufs.end()) {
                it->restore = true;
            }
            continue;
        }
        if (!ai.extentKnown || ai.extentBytes == 0) {
            why = "the extent of written array " + ai.name + " is unknown";
            break;
        }
        if (it == bufs.end()) {
            WrittenBuffer b;
            b.ptr = const_cast<void*>(ai.ptr);
            bufs.push_back(b);
            it = bufs.end() - 1;
        }
        it->bytes = std::max(it->bytes, ai.extentBytes);
        it->restore = it->restore || ai.mode != Mode::Write;
        it->names += (it->names.empty() ? "" : "/") + ai.name;
    }
    // The __device__ variables the kernel writes by name.
    for (const GlobalRange& g : info.globals) {
        if (!why.empty() || g.mode == Mode::Read) {
            continue;
        }
        if (!g.found || g.bytes == 0) {
            why = "the memory of the global " + g.name + ", which the kernel writes, was not found";
            break;
        }
        WrittenBuffer b;
        b.ptr = const_cast<void*>(g.ptr);
        b.bytes = g.bytes;
        b.restore = true;
        b.global = true;
        b.names = g.name;
        bufs.push_back(b);
    }
    if (why.empty() && !info.unknownWrites.empty()) {
        why = "the kernel writes through a pointer whose target is unknown (" + info.unknownWrites +
              "): its launches cannot be undone";
    }
    // Read arrays that alias a written one (listed before it) are read: restore.
    for (WrittenBuffer& b : bufs) {
        for (int j = 0; j < n; ++j) {
            const ArrayInfo& ai = info.arrays[static_cast<std::size_t>(j)];
            if (ai.ptr == b.ptr && ai.mode == Mode::Read) {
                b.restore = true;
            }
        }
    }
    return bufs;
}

/// Counts the 32-bit words (and tail bytes) where the device buffers a and b, `bytes` each,
/// differ into `diff`: on the device with the translation unit's compare kernel (SweepHooks::
/// compare; `counter`: a device word) when both are there, else on the host. Synchronises the
/// stream. On a CUDA error, `what` says which call failed.
cudaError_t countDifferences(cudaError_t (*compare)(const void*, const void*, std::size_t,
                                                    unsigned long long*, cudaStream_t),
                             unsigned long long* counter, const void* a, const void* b,
                             std::size_t bytes, cudaStream_t s, uint64_t& diff, std::string& what) {
    diff = 0;
    cudaError_t e = cudaSuccess;
    auto step = [&](cudaError_t result, const char* call) {
        if (e == cudaSuccess && result != cudaSuccess) {
            e = result;
            what = call;
        }
        return e == cudaSuccess;
    };
    if (compare != nullptr && counter != nullptr) {
        unsigned long long h = 0;
        (void)(step(cudaMemsetAsync(counter, 0, sizeof h, s), "cudaMemsetAsync(counter)") &&
               step(compare(a, b, bytes, counter, s), "compare") &&
               step(cudaMemcpyAsync(&h, counter, sizeof h, cudaMemcpyDeviceToHost, s),
                    "cudaMemcpyAsync(counter)") &&
               step(cudaStreamSynchronize(s), "cudaStreamSynchronize(compare)"));
        diff = h;
        return e;
    }
    std::vector<unsigned char> x(bytes);
    std::vector<unsigned char> y(bytes);
    if (step(cudaStreamSynchronize(s), "cudaStreamSynchronize(compare)") &&
        step(cudaMemcpy(x.data(), a, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy(compare)") &&
        step(cudaMemcpy(y.data(), b, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy(compare)")) {
        for (std::size_t i = 0; i < bytes; ++i) {
            diff += x[i] != y[i];
        }
    }
    return e;
}

} // namespace memplace::detail

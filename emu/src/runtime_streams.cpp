// Streams and events. Launches run when they are made, so streams are trivially in order:
// synchronisation returns at once (with the sticky error), events hold host times.
#include "state.h"

#include <chrono>
#include <cstring>
#include <mutex>
#include <set>

using namespace memplace::emu::detail;

struct CUstream_st {
    unsigned flags = 0;
    int priority = 0;
    cudaLaunchAttributeValue window{};
    int syncPolicy = cudaSyncPolicyAuto;
};
struct CUevent_st {
    unsigned flags = 0;
    bool recorded = false;
    std::chrono::steady_clock::time_point time;
};

namespace {
std::mutex g_handles;
std::set<const void*> g_streams, g_events;
CUstream_st g_defaultStream;

CUstream_st* streamState(cudaStream_t s) {
    if (s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread)
        return &g_defaultStream;
    std::lock_guard lock(g_handles);
    return g_streams.count(s) != 0 ? s : nullptr;
}
bool validEvent(cudaEvent_t e) {
    std::lock_guard lock(g_handles);
    return e != nullptr && g_events.count(e) != 0;
}
} // namespace

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int priority) {
    if (stream == nullptr)
        return fail(cudaErrorInvalidValue);
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    auto* s = new CUstream_st;
    s->flags = flags;
    s->priority = priority;
    std::lock_guard lock(g_handles);
    g_streams.insert(s);
    *stream = s;
    return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t* s) {
    return cudaStreamCreateWithPriority(s, 0, 0);
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int flags) {
    return cudaStreamCreateWithPriority(s, flags, 0);
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
    std::lock_guard lock(g_handles);
    if (g_streams.erase(s) == 0)
        return fail(cudaErrorInvalidResourceHandle);
    delete s;
    return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
    if (streamState(s) == nullptr)
        return fail(cudaErrorInvalidResourceHandle);
    return fail(stickyError());
}
cudaError_t cudaStreamQuery(cudaStream_t s) {
    if (streamState(s) == nullptr)
        return fail(cudaErrorInvalidResourceHandle);
    return fail(stickyError());
}
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int) {
    if (streamState(s) == nullptr || !validEvent(e))
        return fail(cudaErrorInvalidResourceHandle);
    return cudaSuccess;
}
cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb, void* user,
                                  unsigned int) {
    if (streamState(s) == nullptr || cb == nullptr)
        return fail(cudaErrorInvalidValue);
    cb(s, stickyError(), user);
    return cudaSuccess;
}
cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void* user) {
    if (streamState(s) == nullptr || fn == nullptr)
        return fail(cudaErrorInvalidValue);
    fn(user);
    return cudaSuccess;
}
cudaError_t cudaStreamSetAttribute(cudaStream_t s, cudaStreamAttrID attr,
                                   const cudaStreamAttrValue* value) {
    CUstream_st* st = streamState(s);
    if (st == nullptr)
        return fail(cudaErrorInvalidResourceHandle);
    if (value == nullptr)
        return fail(cudaErrorInvalidValue);
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    if (attr == cudaLaunchAttributeAccessPolicyWindow) {
        const cudaAccessPolicyWindow& w = value->accessPolicyWindow;
        int maxWindow = 0;
        {
            Device& d = device();
            std::lock_guard lock(d.mutex);
            maxWindow = d.prop.accessPolicyMaxWindowSize;
        }
        if (maxWindow == 0)
            return fail(cudaErrorNotSupported);
        if (w.num_bytes > static_cast<std::size_t>(maxWindow) ||
            !(w.hitRatio >= 0.0f && w.hitRatio <= 1.0f) ||
            w.missProp == cudaAccessPropertyPersisting) {
            return fail(cudaErrorInvalidValue);
        }
        st->window.accessPolicyWindow = w;
        return cudaSuccess;
    }
    if (attr == cudaLaunchAttributeSynchronizationPolicy) {
        st->syncPolicy = value->syncPolicy;
        return cudaSuccess;
    }
    if (attr == cudaLaunchAttributePriority) {
        st->priority = value->priority;
        return cudaSuccess;
    }
    report("cudaStreamSetAttribute: attribute " + std::to_string(static_cast<int>(attr)) +
           " is not supported");
    return fail(cudaErrorNotSupported);
}
cudaError_t cudaStreamGetAttribute(cudaStream_t s, cudaStreamAttrID attr,
                                   cudaStreamAttrValue* value) {
    CUstream_st* st = streamState(s);
    if (st == nullptr)
        return fail(cudaErrorInvalidResourceHandle);
    if (value == nullptr)
        return fail(cudaErrorInvalidValue);
    std::memset(value, 0, sizeof(*value));
    switch (attr) {
    case cudaLaunchAttributeAccessPolicyWindow:
        value->accessPolicyWindow = st->window.accessPolicyWindow;
        return cudaSuccess;
    case cudaLaunchAttributeSynchronizationPolicy:
        value->syncPolicy = static_cast<cudaSynchronizationPolicy>(st->syncPolicy);
        return cudaSuccess;
    case cudaLaunchAttributePriority:
        value->priority = st->priority;
        return cudaSuccess;
    default:
        return fail(cudaErrorNotSupported);
    }
}
cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
    if (least != nullptr)
        *least = 0;
    if (greatest != nullptr)
        *greatest = -5;
    return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
    if (event == nullptr)
        return fail(cudaErrorInvalidValue);
    if (cudaError_t e = ensureDevice(); e != cudaSuccess)
        return fail(e);
    auto* ev = new CUevent_st;
    ev->flags = flags;
    std::lock_guard lock(g_handles);
    g_events.insert(ev);
    *event = ev;
    return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t* e) {
    return cudaEventCreateWithFlags(e, 0);
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
    std::lock_guard lock(g_handles);
    if (g_events.erase(e) == 0)
        return fail(cudaErrorInvalidResourceHandle);
    delete e;
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
    if (!validEvent(e) || streamState(s) == nullptr)
        return fail(cudaErrorInvalidResourceHandle);
    e->recorded = true;
    e->time = std::chrono::steady_clock::now();
    return cudaSuccess;
}
cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned int) {
    return cudaEventRecord(e, s);
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
    if (!validEvent(e))
        return fail(cudaErrorInvalidResourceHandle);
    return fail(stickyError());
}
cudaError_t cudaEventQuery(cudaEvent_t e) {
    if (!validEvent(e))
        return fail(cudaErrorInvalidResourceHandle);
    return fail(stickyError());
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    if (ms == nullptr)
        return fail(cudaErrorInvalidValue);
    if (!validEvent(start) || !validEvent(end))
        return fail(cudaErrorInvalidResourceHandle);
    if ((start->flags | end->flags) & cudaEventDisableTiming)
        return fail(cudaErrorInvalidResourceHandle);
    if (!start->recorded || !end->recorded)
        return fail(cudaErrorNotReady);
    *ms = std::chrono::duration<float, std::milli>(end->time - start->time).count();
    return cudaSuccess;
}

cudaError_t cudaProfilerStart(void) {
    return cudaSuccess;
}
cudaError_t cudaProfilerStop(void) {
    return cudaSuccess;
}

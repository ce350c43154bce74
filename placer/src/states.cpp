// The name tables of the Placer's states (placer.h, cache.h): the names the report, the
// decision cache file and the messages use, one table per enum.

#include "placer/cache.h"
#include "placer/placer.h"
#include "state_names.h"

namespace memplace::placer {

namespace {

using detail::nameIn;
using detail::parseIn;
using detail::StateName;

constexpr StateName<RecordStatus> kRecordStatus[] = {
    {RecordStatus::Pending, "pending"},   {RecordStatus::Untraced, "untraced"},
    {RecordStatus::Placed, "placed"},     {RecordStatus::Original, "original"},
    {RecordStatus::Reverted, "reverted"}, {RecordStatus::Observed, "observed"},
    {RecordStatus::Failed, "failed"},
};
constexpr StateName<RecordSource> kRecordSource[] = {
    {RecordSource::None, ""},
    {RecordSource::Trace, "trace"},
    {RecordSource::Cache, "cache"},
};
constexpr StateName<TuneState> kTuneState[] = {
    {TuneState::None, ""},
    {TuneState::Running, "running"},
    {TuneState::Done, "done"},
    {TuneState::Skipped, "skipped"},
};
constexpr StateName<JitState> kJitState[] = {
    {JitState::None, ""},
    {JitState::Pending, "pending"},
    {JitState::Ready, "ready"},
    {JitState::Failed, "failed"},
    {JitState::Unavailable, "unavailable"},
};
constexpr StateName<JitOrigin> kJitOrigin[] = {
    {JitOrigin::None, ""},
    {JitOrigin::Compiled, "compiled"},
    {JitOrigin::Cached, "cached"},
};
/// The runtime's LaunchReport::dispatch names.
constexpr StateName<Dispatch> kDispatch[] = {
    {Dispatch::None, ""},   {Dispatch::Specialized, "specialized"}, {Dispatch::Dynamic, "dynamic"},
    {Dispatch::Jit, "jit"}, {Dispatch::Tracing, "tracing"},
};
/// The decision cache file's "status" values.
constexpr StateName<CachedStatus> kCachedStatus[] = {
    {CachedStatus::Placed, "placed"},     {CachedStatus::Original, "original"},
    {CachedStatus::Untraced, "untraced"}, {CachedStatus::Pending, "pending"},
    {CachedStatus::Failed, "failed"},
};

} // namespace

std::string_view stateName(RecordStatus s) {
    return nameIn(kRecordStatus, s);
}
std::string_view stateName(RecordSource s) {
    return nameIn(kRecordSource, s);
}
std::string_view stateName(TuneState s) {
    return nameIn(kTuneState, s);
}
std::string_view stateName(JitState s) {
    return nameIn(kJitState, s);
}
std::string_view stateName(JitOrigin s) {
    return nameIn(kJitOrigin, s);
}
std::string_view stateName(Dispatch s) {
    return nameIn(kDispatch, s);
}
std::string_view stateName(CachedStatus s) {
    return nameIn(kCachedStatus, s);
}

std::optional<RecordStatus> parseRecordStatus(std::string_view name) {
    return parseIn(kRecordStatus, name);
}
std::optional<RecordSource> parseRecordSource(std::string_view name) {
    return parseIn(kRecordSource, name);
}
std::optional<TuneState> parseTuneState(std::string_view name) {
    return parseIn(kTuneState, name);
}
std::optional<JitState> parseJitState(std::string_view name) {
    return parseIn(kJitState, name);
}
std::optional<JitOrigin> parseJitOrigin(std::string_view name) {
    return parseIn(kJitOrigin, name);
}
std::optional<Dispatch> parseDispatch(std::string_view name) {
    return parseIn(kDispatch, name);
}
std::optional<CachedStatus> parseCachedStatus(std::string_view name) {
    return parseIn(kCachedStatus, name);
}

} // namespace memplace::placer

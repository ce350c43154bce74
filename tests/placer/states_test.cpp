// The name tables of the Placer's states (placer/src/states.cpp): every state has its one name,
// the names are those the reports and the decision cache file always used, and each reads back.
#include "placer/cache.h"
#include "placer/placer.h"

#include <gtest/gtest.h>

#include <optional>
#include <string_view>
#include <vector>

namespace memplace::placer {
namespace {

/// `names` in enumerator order (the enums count from 0): each state's name, and back; the
/// value after the last has no name (every state is in the test).
template <class E>
void expectRoundTrip(const std::vector<std::string_view>& names,
                     std::optional<E> (*parse)(std::string_view)) {
    for (std::size_t i = 0; i < names.size(); ++i) {
        const E state = static_cast<E>(i);
        EXPECT_EQ(stateName(state), names[i]) << i;
        EXPECT_EQ(parse(names[i]), state) << names[i];
    }
    EXPECT_EQ(stateName(static_cast<E>(names.size())), "");
    EXPECT_FALSE(parse("no such state").has_value());
}

TEST(StateNames, RecordStatus) {
    expectRoundTrip<RecordStatus>(
        {"pending", "untraced", "placed", "original", "reverted", "observed", "failed"},
        parseRecordStatus);
    EXPECT_FALSE(parseRecordStatus("").has_value());
}

TEST(StateNames, RecordSource) {
    expectRoundTrip<RecordSource>({"", "trace", "cache"}, parseRecordSource);
}

TEST(StateNames, TuneState) {
    expectRoundTrip<TuneState>({"", "running", "done", "skipped"}, parseTuneState);
}

TEST(StateNames, JitState) {
    expectRoundTrip<JitState>({"", "pending", "ready", "failed", "unavailable"}, parseJitState);
}

TEST(StateNames, JitOrigin) {
    expectRoundTrip<JitOrigin>({"", "compiled", "cached"}, parseJitOrigin);
    EXPECT_FALSE(parseJitOrigin("loaded").has_value()); // a runtime name that is no origin
}

TEST(StateNames, Dispatch) {
    expectRoundTrip<Dispatch>({"", "specialized", "dynamic", "jit", "tracing"}, parseDispatch);
}

TEST(StateNames, CachedStatus) {
    expectRoundTrip<CachedStatus>({"placed", "original", "untraced", "pending", "failed"},
                                  parseCachedStatus);
    EXPECT_FALSE(parseCachedStatus("reverted").has_value()); // never stored
    EXPECT_FALSE(parseCachedStatus("").has_value());
}

TEST(StateNames, PlacerMode) {
    EXPECT_EQ(modeName(PlacerMode::Off), "off");
    EXPECT_EQ(modeName(PlacerMode::Auto), "auto");
    EXPECT_EQ(modeName(PlacerMode::Trace), "trace");
}

} // namespace
} // namespace memplace::placer

// The "did you mean" of unknown names in MSL (msl_values.cpp).
#include "spec/msl_check_internal.h"

#include <gtest/gtest.h>

namespace memplace::spec::msl {
namespace {

TEST(MslSuggestion, CloseNameIsSuggested) {
    EXPECT_EQ(suggestion("sm", {"sms", "clock"}), "; did you mean 'sms'?");
    EXPECT_EQ(suggestion("warpsize", {"sms", "warpSize"}), "; did you mean 'warpSize'?");
}

TEST(MslSuggestion, FarOrLongNamesGetNone) {
    EXPECT_EQ(suggestion("latency", {"sms", "clock"}), "");
    EXPECT_EQ(suggestion(std::string(65, 's'), {std::string(64, 's')}), "");
    EXPECT_EQ(suggestion("sms", {}), "");
}

} // namespace
} // namespace memplace::spec::msl

#include "common/json.h"

#include <gtest/gtest.h>

namespace memplace {
namespace {

TEST(Json, InvalidUtf8IsReplacedNotThrown) {
    nlohmann::json j;
    j["file"] = "caf\xe9.trace"; // Latin-1
    j["list"] = {"ok", std::string("\xff\xfe")};
    std::string text;
    ASSERT_NO_THROW(text = dumpJson(j, 2));
    EXPECT_NE(text.find("caf\xef\xbf\xbd.trace"), std::string::npos) << text; // U+FFFD
    EXPECT_NO_THROW((void)nlohmann::json::parse(text)); // what comes out is valid JSON
    nlohmann::ordered_json o;
    o["k\xe9y"] = 1;
    EXPECT_NO_THROW(text = dumpJson(o));
    EXPECT_EQ(text, "{\"k\xef\xbf\xbdy\":1}");
}

} // namespace
} // namespace memplace

#include "runtime/src/env.h"

#include <gtest/gtest.h>

namespace memplace::detail {
namespace {

TEST(RuntimeEnv, UnsetEmptyAutoAndTrace) {
    EXPECT_EQ(parseMemplaceEnv(nullptr).mode, EnvConfig::Mode::Default);
    EXPECT_EQ(parseMemplaceEnv("").mode, EnvConfig::Mode::Default);
    const EnvConfig a = parseMemplaceEnv(" auto ");
    EXPECT_EQ(a.mode, EnvConfig::Mode::Auto);
    EXPECT_TRUE(a.warnings.empty());
    const EnvConfig t = parseMemplaceEnv("trace");
    EXPECT_EQ(t.mode, EnvConfig::Mode::Trace);
    EXPECT_TRUE(t.warnings.empty());
}

TEST(RuntimeEnv, Off) {
    EXPECT_EQ(parseMemplaceEnv("off").mode, EnvConfig::Mode::Off);
}

TEST(RuntimeEnv, ForceEntries) {
    const EnvConfig c = parseMemplaceEnv("force:x=texture, saxpy.y=shared,,table=constant");
    ASSERT_EQ(c.mode, EnvConfig::Mode::Force);
    ASSERT_EQ(c.force.size(), 3u);
    EXPECT_EQ(c.force[0].kernel, "");
    EXPECT_EQ(c.force[0].array, "x");
    EXPECT_EQ(c.force[0].place, Place::Texture);
    EXPECT_EQ(c.force[1].kernel, "saxpy");
    EXPECT_EQ(c.force[1].array, "y");
    EXPECT_EQ(c.force[1].place, Place::Shared);
    EXPECT_EQ(c.force[2].place, Place::Constant);
    EXPECT_TRUE(c.warnings.empty());
}

TEST(RuntimeEnv, BadEntriesAreWarnedAndSkipped) {
    const EnvConfig c = parseMemplaceEnv("force:x=nowhere,y,=global,z=registers,w=l2persist");
    ASSERT_EQ(c.force.size(), 1u);
    EXPECT_EQ(c.force[0].array, "w");
    EXPECT_EQ(c.force[0].place, Place::L2Persist);
    EXPECT_EQ(c.warnings.size(), 4u);
    EXPECT_NE(c.warnings[0].find("unknown place 'nowhere'"), std::string::npos);
}

TEST(RuntimeEnv, UnknownModeWarns) {
    const EnvConfig u = parseMemplaceEnv("sometimes");
    EXPECT_EQ(u.mode, EnvConfig::Mode::Default);
    EXPECT_EQ(u.warnings.size(), 1u);
}

TEST(RuntimeEnv, Switch) {
    std::vector<std::string> w;
    EXPECT_FALSE(parseSwitchEnv("MEMPLACE_TIME", nullptr, w));
    EXPECT_FALSE(parseSwitchEnv("MEMPLACE_TIME", "", w));
    EXPECT_FALSE(parseSwitchEnv("MEMPLACE_TIME", "0", w));
    EXPECT_TRUE(parseSwitchEnv("MEMPLACE_TIME", " 1", w));
    EXPECT_TRUE(parseSwitchEnv("MEMPLACE_TIME", "on", w));
    EXPECT_TRUE(w.empty());
    EXPECT_FALSE(parseSwitchEnv("MEMPLACE_TIME", "maybe", w));
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("MEMPLACE_TIME='maybe'"), std::string::npos);
}

TEST(RuntimeEnv, KernelQualifiedEntryWins) {
    const EnvConfig c = parseMemplaceEnv("force:x=texture,saxpy.x=readonly,*.y=global");
    EXPECT_EQ(forcedPlace(c.force, "saxpy", "x"), Place::ReadOnly);
    EXPECT_EQ(forcedPlace(c.force, "other", "x"), Place::Texture);
    EXPECT_EQ(forcedPlace(c.force, "other", "y"), Place::Global);
    EXPECT_FALSE(forcedPlace(c.force, "saxpy", "z").has_value());
}

TEST(RuntimeEnv, Dispatch) {
    std::vector<std::string> w;
    EXPECT_FALSE(parseDispatchEnv(nullptr, w));
    EXPECT_FALSE(parseDispatchEnv("auto", w));
    EXPECT_TRUE(parseDispatchEnv("dynamic", w));
    EXPECT_TRUE(w.empty());
    EXPECT_FALSE(parseDispatchEnv("fast", w));
    EXPECT_EQ(w.size(), 1u);
}

TEST(RuntimeEnv, L2Limit) {
    std::vector<std::string> w;
    EXPECT_EQ(parseL2LimitEnv(nullptr, w), L2LimitPolicy::Window);
    EXPECT_EQ(parseL2LimitEnv("window", w), L2LimitPolicy::Window);
    EXPECT_EQ(parseL2LimitEnv("max", w), L2LimitPolicy::Max);
    EXPECT_EQ(parseL2LimitEnv(" keep ", w), L2LimitPolicy::Keep);
    EXPECT_TRUE(w.empty());
    EXPECT_EQ(parseL2LimitEnv("all", w), L2LimitPolicy::Window);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("MEMPLACE_L2_LIMIT"), std::string::npos);
}

TEST(RuntimeEnv, L2LimitWindowWithACap) {
    std::vector<std::string> w;
    std::size_t cap = 1;
    EXPECT_EQ(parseL2LimitEnv("window", w, &cap), L2LimitPolicy::Window);
    EXPECT_EQ(cap, 0u);
    EXPECT_EQ(parseL2LimitEnv("window:12MB", w, &cap), L2LimitPolicy::Window);
    EXPECT_EQ(cap, 12u << 20);
    EXPECT_EQ(parseL2LimitEnv(" window: 512KB ", w, &cap), L2LimitPolicy::Window);
    EXPECT_EQ(cap, 512u << 10);
    EXPECT_EQ(parseL2LimitEnv("window:4096", w, &cap), L2LimitPolicy::Window);
    EXPECT_EQ(cap, 4096u);
    EXPECT_TRUE(w.empty());
    for (const char* bad : {"window:", "window:0", "window:12GB", "window:-1", "window:1.5MB"}) {
        w.clear();
        cap = 7;
        EXPECT_EQ(parseL2LimitEnv(bad, w, &cap), L2LimitPolicy::Window) << bad;
        EXPECT_EQ(cap, 0u) << bad;
        ASSERT_EQ(w.size(), 1u) << bad;
        EXPECT_NE(w[0].find("not a size"), std::string::npos) << bad;
    }
}

} // namespace
} // namespace memplace::detail

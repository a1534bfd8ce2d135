// The qos table (service classes, docs/admin.md): the defaults, a site's own table, and each bad
// value refused in one line naming the setting.
#include <gtest/gtest.h>

#include "daemon/setup/config.h"

namespace pinpoint::daemon {
namespace {

TEST(ConfigQosTest, DefaultsAreNormalAndScavenger) {
  auto c = ParseConfig("{}");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->default_qos, "normal");
  const ServiceClass* normal = FindServiceClass(c->qos, "normal");
  const ServiceClass* scavenger = FindServiceClass(c->qos, "scavenger");
  ASSERT_NE(normal, nullptr);
  ASSERT_NE(scavenger, nullptr);
  EXPECT_EQ(normal->mps_client_priority, 0);
  EXPECT_EQ(normal->preempts, std::vector<std::string>{"scavenger"});
  EXPECT_EQ(scavenger->mps_client_priority, 1);
  EXPECT_LT(scavenger->priority, 0);
  EXPECT_EQ(scavenger->preempt_mode, PreemptMode::kRequeue);
}

TEST(ConfigQosTest, ASiteTableReplacesTheDefaults) {
  auto c = ParseConfig(R"({"qos": {"std": {}, "low": {"priority": -50, "preempt_mode": "cancel",
      "grace_s": 120, "mps_client_priority": 1}, "high": {"priority": 500, "preempts": ["low"],
      "users": ["alice", "@gpu"]}}, "default_qos": "std"})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->qos.size(), 3u);
  EXPECT_EQ(FindServiceClass(c->qos, "normal"), nullptr);
  const ServiceClass* low = FindServiceClass(c->qos, "low");
  ASSERT_NE(low, nullptr);
  EXPECT_EQ(low->priority, -50);
  EXPECT_EQ(low->preempt_mode, PreemptMode::kCancel);
  EXPECT_EQ(low->grace_s, 120);
  EXPECT_EQ(low->mps_client_priority, 1);
  EXPECT_EQ(FindServiceClass(c->qos, "high")->users, (std::vector<std::string>{"alice", "@gpu"}));
  EXPECT_EQ(c->default_qos, "std");
}

TEST(ConfigQosTest, EachBadValueIsOneLineNamingIt) {
  struct Case {
    const char* text;
    const char* key;
  } cases[] = {
      {R"({"qos": {}})", "qos"},
      {R"({"qos": {"a b": {}}})", "qos"},
      {R"({"qos": {"normal": 3}})", "qos.normal"},
      {R"({"qos": {"normal": {"priority": 2000000}}})", "qos.normal.priority"},
      {R"({"qos": {"normal": {"preempt_mode": "pause"}}})", "qos.normal.preempt_mode"},
      {R"({"qos": {"normal": {"grace_s": -1}}})", "qos.normal.grace_s"},
      {R"({"qos": {"normal": {"mps_client_priority": 2}}})", "qos.normal.mps_client_priority"},
      {R"({"qos": {"normal": {"preempts": ["gold"]}}})", "qos.normal.preempts"},
      {R"({"qos": {"normal": {"preempts": ["normal"]}}})", "qos.normal.preempts"},
      {R"({"qos": {"normal": {"users": [""]}}})", "qos.normal.users"},
      {R"({"qos": {"normal": {"colour": 1}}})", "qos.normal.colour"},
      {R"({"qos": {"std": {}}})", "default_qos"},
      {R"({"default_qos": "gold"})", "default_qos"},
  };
  for (const Case& c : cases) {
    auto config = ParseConfig(c.text);
    ASSERT_FALSE(config.ok()) << c.text;
    const std::string& m = config.status().message();
    EXPECT_EQ(m.rfind("config: \"" + std::string(c.key) + "\"", 0), 0u) << c.text << ": " << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace pinpoint::daemon

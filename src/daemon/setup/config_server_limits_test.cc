// The socket server's bounds in pinpointd's configuration (docs/admin.md, docs/security.md).
#include <gtest/gtest.h>

#include "daemon/setup/config.h"

namespace pinpoint::daemon {
namespace {

TEST(ConfigServerLimitsTest, DefaultsParseAndPrint) {
  auto c = ParseConfig("{}");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->max_connections, 1024);
  EXPECT_EQ(c->max_connections_per_uid, 64);
  EXPECT_EQ(c->idle_timeout_ms, 60000);
  EXPECT_EQ(c->max_reply_backlog_bytes, 4u << 20);
  // What --print-default-config prints is a configuration that gives the same values.
  std::string printed = DefaultConfigJson();
  for (const char* key :
       {"max_connections", "max_connections_per_uid", "idle_timeout_ms", "max_reply_backlog"})
    EXPECT_NE(printed.find(key), std::string::npos) << key;
  auto reparsed = ParseConfig(printed);
  ASSERT_TRUE(reparsed.ok()) << reparsed.status().ToString();
  EXPECT_EQ(reparsed->max_reply_backlog_bytes, 4u << 20);
}

TEST(ConfigServerLimitsTest, SettingsAndBadValues) {
  auto c =
      ParseConfig(R"({"max_connections": 4096, "max_connections_per_uid": 8, "idle_timeout_ms": 0,
                           "max_reply_backlog": "16M"})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->max_connections, 4096);
  EXPECT_EQ(c->max_connections_per_uid, 8);
  EXPECT_EQ(c->idle_timeout_ms, 0);
  EXPECT_EQ(c->max_reply_backlog_bytes, 16u << 20);
  for (const char* bad : {R"({"max_connections": 10})", R"({"max_connections_per_uid": 0})",
                          R"({"idle_timeout_ms": -1})", R"({"max_reply_backlog": "1K"})",
                          R"({"max_reply_backlog": "lots"})", R"({"max_connections": "many"})"}) {
    auto r = ParseConfig(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("config: \""), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace pinpoint::daemon

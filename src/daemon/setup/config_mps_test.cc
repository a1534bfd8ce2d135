// The MPS settings of pinpointd's configuration (docs/admin.md, docs/mps.md): their names are
// read into enums and printed back from them.
#include <gtest/gtest.h>

#include "daemon/setup/config.h"

namespace pinpoint::daemon {
namespace {

TEST(ConfigMpsTest, Defaults) {
  auto c = ParseConfig("{}");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->mps, MpsMode::kAuto);
  EXPECT_EQ(c->mps_fault_policy, MpsFaultPolicy::kRequeue);
  std::string printed = DefaultConfigJson();
  EXPECT_NE(printed.find(R"("mps": "auto")"), std::string::npos) << printed;
  EXPECT_NE(printed.find(R"("mps_fault_policy": "requeue")"), std::string::npos) << printed;
}

TEST(ConfigMpsTest, EveryNameParses) {
  struct Case {
    const char* json;
    MpsMode mode;
    MpsFaultPolicy policy;
  };
  const Case cases[] = {
      {R"({"mps": "auto", "mps_fault_policy": "requeue"})", MpsMode::kAuto,
       MpsFaultPolicy::kRequeue},
      {R"({"mps": "daemons", "mps_fault_policy": "fail"})", MpsMode::kDaemons,
       MpsFaultPolicy::kFail},
      {R"({"mps": "env-only"})", MpsMode::kEnvOnly, MpsFaultPolicy::kRequeue},
  };
  for (const auto& c : cases) {
    auto config = ParseConfig(c.json);
    ASSERT_TRUE(config.ok()) << c.json << ": " << config.status().ToString();
    EXPECT_EQ(config->mps, c.mode) << c.json;
    EXPECT_EQ(config->mps_fault_policy, c.policy) << c.json;
  }
}

TEST(ConfigMpsTest, UnknownNamesAreRefusedWithTheChoices) {
  auto mode = ParseConfig(R"({"mps": "on"})");
  ASSERT_FALSE(mode.ok());
  EXPECT_EQ(mode.status().message(),
            "config: \"mps\" must be auto, daemons or env-only (got 'on')");
  auto policy = ParseConfig(R"({"mps_fault_policy": "Requeue"})");
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.status().message(), "config: \"mps_fault_policy\" must be requeue or fail");
  EXPECT_FALSE(ParseConfig(R"({"mps": 1})").ok());
  EXPECT_FALSE(ParseConfig(R"({"mps_fault_policy": ""})").ok());
}

}  // namespace
}  // namespace pinpoint::daemon

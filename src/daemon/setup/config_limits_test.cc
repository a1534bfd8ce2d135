// The configuration's time limits and user limits (docs/admin.md): what they read as, and one
// line naming the setting for each bad value.
#include <gtest/gtest.h>

#include "daemon/setup/config.h"

namespace pinpoint::daemon {
namespace {

TEST(ConfigLimitsTest, NoneByDefaultAndThePrintedDefaultsReadTheSame) {
  auto printed = ParseConfig(DefaultConfigJson());
  ASSERT_TRUE(printed.ok()) << printed.status().message();
  EXPECT_EQ(printed->default_time_limit_s, 0);
  EXPECT_EQ(printed->max_time_limit_s, 0);
  EXPECT_EQ(printed->default_user_limit, sched::UserLimit{});
  EXPECT_TRUE(printed->user_limits.empty());
  EXPECT_NE(DefaultConfigJson().find("\"user_limits\": {}"), std::string::npos);
}

TEST(ConfigLimitsTest, TimeLimitsInSubmitsForms) {
  auto c = ParseConfig(R"({"default_time_limit": "2h", "max_time_limit": "1-00:00:00"})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->default_time_limit_s, 7200);
  EXPECT_EQ(c->max_time_limit_s, 86400);
  EXPECT_EQ(ParseConfig(R"({"max_time_limit": "0"})")->max_time_limit_s, 0);
}

TEST(ConfigLimitsTest, UserEntriesTakeWhatTheyLeaveOutFromTheDefault) {
  auto c = ParseConfig(R"({"user_limits": {
      "default": {"running_jobs": 8, "gpu_mem": "80GiB"},
      "alice": {"running_jobs": 2},
      "bob": {"gpu_mem": "unlimited"},
      "carol": {}}})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->default_user_limit, (sched::UserLimit{8, 80ull << 30}));
  EXPECT_EQ(c->user_limits.at("alice"), (sched::UserLimit{2, 80ull << 30}));
  EXPECT_EQ(c->user_limits.at("bob"), (sched::UserLimit{8, std::nullopt}));
  EXPECT_EQ(c->user_limits.at("carol"), c->default_user_limit);
  EXPECT_EQ(c->user_limits.count("default"), 0u);
  auto without_default = ParseConfig(R"({"user_limits": {"alice": {"running_jobs": 1}}})");
  ASSERT_TRUE(without_default.ok());
  EXPECT_EQ(without_default->default_user_limit, sched::UserLimit{});
  EXPECT_EQ(without_default->user_limits.at("alice"), (sched::UserLimit{1, std::nullopt}));
}

TEST(ConfigLimitsTest, StoredBytesPerUserDefaultToOneGibAndZeroTurnsThemOff) {
  auto printed = ParseConfig(DefaultConfigJson());
  ASSERT_TRUE(printed.ok()) << printed.status().message();
  EXPECT_EQ(printed->max_user_stored_bytes, uint64_t{1} << 30);
  EXPECT_EQ(ParseConfig(R"({"max_user_stored_bytes": "0"})")->max_user_stored_bytes, 0u);
  EXPECT_EQ(ParseConfig(R"({"max_user_stored_bytes": "20G"})")->max_user_stored_bytes,
            uint64_t{20} << 30);
  auto small = ParseConfig(R"({"max_user_stored_bytes": "64K"})");
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.status().message(),
            "config: \"max_user_stored_bytes\" must be 0 (no bound) or between 1M and 1T");
}

TEST(ConfigLimitsTest, OutputPerUserDefaultsToSixteenGibAndZeroTurnsItOff) {
  auto printed = ParseConfig(DefaultConfigJson());
  ASSERT_TRUE(printed.ok()) << printed.status().message();
  EXPECT_EQ(printed->max_user_output_bytes, uint64_t{16} << 30);
  EXPECT_NE(DefaultConfigJson().find("\"max_user_output_bytes\": \"16GiB\""), std::string::npos);
  EXPECT_EQ(ParseConfig(R"({"max_user_output_bytes": "0"})")->max_user_output_bytes, 0u);
  EXPECT_EQ(ParseConfig(R"({"max_user_output_bytes": "256M"})")->max_user_output_bytes,
            uint64_t{256} << 20);
  for (const char* bad :
       {R"({"max_user_output_bytes": "64K"})", R"({"max_user_output_bytes": "2T"})"}) {
    auto c = ParseConfig(bad);
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_EQ(c.status().message(),
              "config: \"max_user_output_bytes\" must be 0 (no bound) or between 1M and 1T");
  }
}

TEST(ConfigLimitsTest, KeepEmptyGpusIsAutoByDefaultOrACount) {
  auto printed = ParseConfig(DefaultConfigJson());
  ASSERT_TRUE(printed.ok()) << printed.status().message();
  EXPECT_EQ(printed->keep_empty_gpus, Config::kKeepEmptyAuto);
  EXPECT_NE(DefaultConfigJson().find("\"keep_empty_gpus\": \"auto\""), std::string::npos);
  EXPECT_EQ(ParseConfig(R"({"keep_empty_gpus": 2})")->keep_empty_gpus, 2);
  EXPECT_EQ(ParseConfig(R"({"keep_empty_gpus": 0})")->keep_empty_gpus, 0);
  EXPECT_EQ(ParseConfig(R"({"keep_empty_gpus": "some"})").status().message(),
            "config: \"keep_empty_gpus\" must be \"auto\" or an integer 0..1024");
  EXPECT_FALSE(ParseConfig(R"({"keep_empty_gpus": -1})").ok());
}

TEST(ConfigLimitsTest, SystemCpusAreACpuListNoneByDefault) {
  auto printed = ParseConfig(DefaultConfigJson());
  ASSERT_TRUE(printed.ok()) << printed.status().message();
  EXPECT_TRUE(printed->system_cpus.empty());
  auto c = ParseConfig(R"({"system_cpus": "0,2-3"})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->system_cpus, (std::vector<int>{0, 2, 3}));
  for (const char* bad :
       {R"({"system_cpus": "0-x"})", R"({"system_cpus": "3-1"})", R"({"system_cpus": 0})"}) {
    auto refused = ParseConfig(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.status().message().find("system_cpus"), std::string::npos)
        << refused.status().message();
  }
}

TEST(ConfigLimitsTest, EachBadValueIsOneLineNamingIt) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {R"({"default_time_limit": 60})",
       "config: \"default_time_limit\" must be a time limit like \"2h\" or \"1-00:00:00\" (\"0\": "
       "none)"},
      {R"({"max_time_limit": "5x"})", "config: \"max_time_limit\" invalid time limit '5x'"},
      {R"({"default_time_limit": "2h", "max_time_limit": "1h"})",
       "config: \"default_time_limit\" is above max_time_limit (1:00:00)"},
      {R"({"user_limits": []})", "config: \"user_limits\" must be an object"},
      {R"({"user_limits": {"alice": 2}})", "config: \"user_limits.alice\" must be an object"},
      {R"({"user_limits": {"default": {"gpu_mem": 1000}}})",
       "config: \"user_limits.default.gpu_mem\" must be a size with a unit"},
      {R"({"user_limits": {"default": {"gpu_mem": "80"}}})",
       "config: \"user_limits.default.gpu_mem\" invalid size '80': give a unit"},
      {R"({"user_limits": {"alice": {"gpu_mem": "0G"}}})",
       "config: \"user_limits.alice.gpu_mem\" must be more than 0"},
      {R"({"user_limits": {"alice": {"running_jobs": 0}}})",
       "config: \"user_limits.alice.running_jobs\" must be an integer 1..1000000 or \"unlimited\""},
      {R"({"user_limits": {"alice": {"running_jobs": "8"}}})",
       "config: \"user_limits.alice.running_jobs\" must be an integer"},
      {R"({"user_limits": {"alice": {"jobs": 8}}})",
       "config: \"user_limits.alice.jobs\" is not a known limit (running_jobs, gpu_mem)"},
      {R"({"user_limits": {"a b": {}}})",
       "config: \"user_limits\" has 'a b', which is not a user name"},
      {R"({"user_limits": {"": {}}})", "config: \"user_limits\" has '', which is not a user name"},
  };
  for (const auto& c : cases) {
    auto config = ParseConfig(c.text);
    ASSERT_FALSE(config.ok()) << c.text;
    EXPECT_EQ(config.status().message().rfind(c.message, 0), 0u)
        << c.text << ": " << config.status().message();
    EXPECT_EQ(config.status().message().find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace pinpoint::daemon

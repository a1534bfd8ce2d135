// The configuration's settings read through JsonReader: each error is one line naming the
// setting as before (config: "key" why), and an integer too large for int64 is out of range
// rather than wrapped into it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "daemon/setup/config.h"

namespace pinpoint::daemon {
namespace {

TEST(ConfigReaderTest, EachBadSettingIsOneLineNamingIt) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {R"({"state_dir": ""})", "config: \"state_dir\" must be a non-empty string"},
      {R"({"socket_path": null})", "config: \"socket_path\" must be a non-empty string"},
      {R"({"backend": 7})", "config: \"backend\" must be a non-empty string"},
      {R"({"mps_client_limit": "4"})", "config: \"mps_client_limit\" must be an integer"},
      {R"({"mps_client_limit": 4.5})", "config: \"mps_client_limit\" must be an integer"},
      {R"({"mps_client_limit": 0})", "config: \"mps_client_limit\" must be between 1 and 128"},
      {R"({"slice_placement": "fill"})",
       "config: \"slice_placement\" must be one of spread, pack, auto (got 'fill')"},
      // mig-dynamic is a GPU's mode (gpu_modes), never every device's.
      {R"({"default_mode": "mig-dynamic"})",
       "config: \"default_mode\" must be one of exclusive, timeslice, mps (got 'mig-dynamic')"},
      {R"({"max_user_priority": 18446744073709551615})",
       "config: \"max_user_priority\" must be between -1000000 and 1000000"},
  };
  for (const auto& c : cases) {
    auto config = ParseConfig(c.text);
    ASSERT_FALSE(config.ok()) << c.text;
    EXPECT_EQ(config.status().message(), c.message) << c.text;
  }
  auto good = ParseConfig(R"({"mps_client_limit": 4, "state_dir": "/var/lib/pp"})");
  ASSERT_TRUE(good.ok()) << good.status().message();
  EXPECT_EQ(good->mps_client_limit, 4);
  EXPECT_EQ(good->state_dir, "/var/lib/pp");
  auto dynamic = ParseConfig(R"({"gpu_modes": {"0": "mig-dynamic", "1": "exclusive"}})");
  ASSERT_TRUE(dynamic.ok()) << dynamic.status().message();
  EXPECT_TRUE(dynamic->gpu_modes.at("0").mig_dynamic) << "how the GPU is partitioned";
  EXPECT_EQ(dynamic->gpu_modes.at("0").Name(), "mig-dynamic");
  EXPECT_EQ(dynamic->gpu_modes.at("1"), GpuMode::Shared(SharingMode::kExclusive))
      << "how it is shared";
  EXPECT_EQ(dynamic->gpu_modes.at("1").Name(), "exclusive");
}

// The table of settings and their readers cannot drift apart: a setting the table names but no
// reader reads would be taken and ignored; given a value no setting takes, each is refused by
// name. (A reader of a key the table lacks is refused before it reads: the tests above.)
TEST(ConfigReaderTest, EveryKnownSettingIsReadAndChecked) {
  EXPECT_GE(ConfigSettings().size(), 50u);
  for (std::string_view key : ConfigSettings()) {
    std::string text = "{\"" + std::string(key) + "\": [[]]}";
    Result<Config> config = ParseConfig(text);
    ASSERT_FALSE(config.ok()) << key << " took [[]] and was not read";
    EXPECT_EQ(config.status().message().rfind("config: \"" + std::string(key) + "\"", 0), 0u)
        << config.status().message();
    EXPECT_EQ(config.status().message().find('\n'), std::string::npos);
  }
}

// The printed default (pinpointd --print-default-config) names every setting, and only those,
// but the three whose default is a value worked out at start, which docs/admin.md says are not
// printed: a setting added to the readers but not to the printed default, or printed but not
// read, fails.
TEST(ConfigReaderTest, ThePrintedDefaultNamesEverySettingOnce) {
  nlohmann::json printed = nlohmann::json::parse(DefaultConfigJson());
  std::set<std::string> keys, known;
  for (auto it = printed.begin(); it != printed.end(); ++it) keys.insert(it.key());
  for (std::string_view key : ConfigSettings()) known.insert(std::string(key));
  for (const char* unprinted : {"shim_path", "mps_dir", "mps_prestart_user"}) {
    EXPECT_EQ(known.erase(unprinted), 1u) << unprinted;
    EXPECT_FALSE(keys.count(unprinted)) << unprinted;
  }
  EXPECT_EQ(keys, known);
  EXPECT_EQ(known.size() + 3, ConfigSettings().size()) << "a setting named twice in the table";
  EXPECT_TRUE(ParseConfig(DefaultConfigJson()).ok());
}

}  // namespace
}  // namespace pinpoint::daemon

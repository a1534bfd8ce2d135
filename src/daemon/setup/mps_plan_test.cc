#include "daemon/setup/mps_plan.h"

#include <gtest/gtest.h>

namespace pinpoint::daemon {
namespace {

struct PlanCase {
  const char* name;
  std::string mps;        // config "mps"
  bool allow_unenforced;  // config "allow_unenforced_slices"
  std::string backend_kind;
  std::string control_unusable;
  // Expected: an error message, or the plan.
  std::string error;
  bool daemons;
  bool refuse_slices;
  std::string why_not;
};

constexpr char kNotInPath[] = "nvidia-cuda-mps-control is not in PATH";

TEST(PlanMpsTest, Table) {
  const PlanCase cases[] = {
      // A GPU node where MPS runs.
      {"auto_nvml_usable", "auto", false, "nvml", "", "", true, false, ""},
      {"daemons_nvml_usable", "daemons", false, "nvml", "", "", true, false, ""},
      {"allow_changes_nothing_where_mps_runs", "auto", true, "nvml", "", "", true, false, ""},
      // A GPU node where it cannot: refuse slices, unless the configuration opts out.
      {"auto_nvml_unusable_refuses_slices", "auto", false, "nvml", kNotInPath, "", false, true,
       kNotInPath},
      {"auto_nvml_unusable_allowed", "auto", true, "nvml", kNotInPath, "", false, false,
       kNotInPath},
      {"daemons_nvml_unusable_is_an_error", "daemons", false, "nvml", kNotInPath,
       "mps: daemons, but nvidia-cuda-mps-control is not in PATH", false, false, ""},
      {"daemons_nvml_unusable_allowed_still_an_error", "daemons", true, "nvml", kNotInPath,
       "mps: daemons, but nvidia-cuda-mps-control is not in PATH", false, false, ""},
      // mps: env-only is the admin's choice: slices run unenforced on purpose.
      {"env_only_nvml", "env-only", false, "nvml", "", "", false, false,
       "mps: env-only in the config"},
      {"env_only_nvml_unusable", "env-only", false, "nvml", kNotInPath, "", false, false,
       "mps: env-only in the config"},
      // A simulated node: no GPU to enforce anything on; slices run.
      {"auto_simulated", "auto", false, "simulated:h100x2", "", "", false, false,
       "no NVIDIA GPU (simulated:h100x2)"},
      {"auto_simulated_unusable", "auto", false, "simulated:h100x2", kNotInPath, "", false, false,
       "no NVIDIA GPU (simulated:h100x2)"},
      {"env_only_simulated", "env-only", false, "simulated:h100x2", "", "", false, false,
       "mps: env-only in the config"},
      {"daemons_simulated_is_an_error", "daemons", false, "simulated:h100x2", "",
       "mps: daemons, but no NVIDIA GPU (simulated:h100x2)", false, false, ""},
  };
  for (const PlanCase& c : cases) {
    SCOPED_TRACE(c.name);
    Config config;
    config.mps = c.mps == "auto"      ? MpsMode::kAuto
                 : c.mps == "daemons" ? MpsMode::kDaemons
                                      : MpsMode::kEnvOnly;
    config.allow_unenforced_slices = c.allow_unenforced;
    auto source = c.backend_kind == "nvml" ? gpu::GpuBackend::Source::kNvml
                                           : gpu::GpuBackend::Source::kSimulated;
    Result<MpsPlan> plan = PlanMps(config, {source, c.backend_kind, c.control_unusable});
    if (!c.error.empty()) {
      ASSERT_FALSE(plan.ok());
      EXPECT_EQ(plan.status().code(), Code::kFailedPrecondition);
      EXPECT_EQ(plan.status().message(), c.error);
      continue;
    }
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_EQ(plan->daemons, c.daemons);
    EXPECT_EQ(plan->refuse_slices, c.refuse_slices);
    EXPECT_EQ(plan->why_not, c.why_not);
  }
}

TEST(PlanMpsTest, ARefusalTakesMpsClientsAwayAndSaysWhy) {
  Config config;
  config.mps_client_limit = 48;
  MpsPlan plan{.daemons = false, .refuse_slices = true, .why_not = kNotInPath};
  sharing::PlacementRules rules = MpsRulesOf(config, plan);
  EXPECT_EQ(rules.max_jobs, 0);
  EXPECT_TRUE(rules.one_user);
  EXPECT_EQ(
      rules.no_slices_reason,
      "MPS cannot be started on this node (nvidia-cuda-mps-control is not in PATH), so a "
      "slice's limits would not be enforced; ask for whole GPUs (--gpus N without --gpu-mem)");
}

TEST(PlanMpsTest, OtherwiseTheConfiguredClientLimit) {
  Config config;
  config.mps_client_limit = 7;
  for (const MpsPlan& plan :
       {MpsPlan{.daemons = true, .refuse_slices = false, .why_not = ""},
        MpsPlan{.daemons = false, .refuse_slices = false, .why_not = "mps: env-only"}}) {
    sharing::PlacementRules rules = MpsRulesOf(config, plan);
    EXPECT_EQ(rules.max_jobs, 7);
    EXPECT_EQ(rules.no_slices_reason, "");
  }
}

TEST(PlanMpsTest, AllowUnenforcedSlicesInTheConfig) {
  auto defaults = ParseConfig("{}");
  ASSERT_TRUE(defaults.ok());
  EXPECT_FALSE(defaults->allow_unenforced_slices);
  auto printed = ParseConfig(DefaultConfigJson());
  ASSERT_TRUE(printed.ok()) << printed.status().ToString();
  EXPECT_NE(DefaultConfigJson().find("\"allow_unenforced_slices\": false"), std::string::npos);
  auto on = ParseConfig(R"({"allow_unenforced_slices": true})");
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_TRUE(on->allow_unenforced_slices);
  auto bad = ParseConfig(R"({"allow_unenforced_slices": "yes"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "config: \"allow_unenforced_slices\" must be true or false");
}

}  // namespace
}  // namespace pinpoint::daemon

#include "bench/driver/options.h"

#include <gtest/gtest.h>

namespace pinpoint::bench {
namespace {

TEST(ParseIntListTest, SortsAndDropsDuplicates) {
  auto n = ParseIntList("16,1,4,4,2");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, (std::vector<int>{1, 2, 4, 16}));
}

TEST(ParseIntListTest, RefusesWhatIsNotAListOfPositiveNumbers) {
  for (const char* bad : {"", "0", "-1", "1,,2", "1,x", "2.5", "1,20000"}) {
    EXPECT_FALSE(ParseIntList(bad).ok()) << bad;
  }
}

TEST(ParseModesTest, KnownNamesInTheGivenOrder) {
  auto m = ParseModes("mps,bare-mps,exclusive,mps");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(*m, (std::vector<Mode>{Mode::kMps, Mode::kBareMps, Mode::kExclusive}));
  auto bad = ParseModes("mps,shared");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'shared'"), std::string::npos);
}

TEST(ModeNameTest, RoundTripsAndSaysWhichGoThroughPinpoint) {
  for (Mode m : AllModes()) EXPECT_EQ(ModeFromName(ModeName(m)), m);
  EXPECT_TRUE(ThroughPinpoint(Mode::kExclusive));
  EXPECT_TRUE(ThroughPinpoint(Mode::kTimeslice));
  EXPECT_TRUE(ThroughPinpoint(Mode::kMps));
  EXPECT_FALSE(ThroughPinpoint(Mode::kBareMps));
  EXPECT_FALSE(ThroughPinpoint(Mode::kBare));
}

TEST(ParseBenchArgsTest, DefaultsAndWorkloadArgumentsAfterDashDash) {
  std::string help;
  auto o = ParseBenchArgs(
      {"--workload", "busy", "--n", "1,16", "--reps", "2", "--", "--iters", "5"}, &help);
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_TRUE(help.empty());
  EXPECT_EQ(o->workload, "busy");
  EXPECT_EQ(o->n, (std::vector<int>{1, 16}));
  EXPECT_EQ(o->reps, 2);
  EXPECT_EQ(o->workload_args, (std::vector<std::string>{"--iters", "5"}));
  EXPECT_EQ(o->modes, AllModes());
  EXPECT_EQ(o->out_dir, "pinpoint-bench-busy");
  EXPECT_TRUE(o->warmup);
  EXPECT_TRUE(o->cgroups);
}

TEST(ParseBenchArgsTest, OptionsOfEveryKind) {
  std::string help;
  auto o = ParseBenchArgs({"-w",          "cmd",
                           "--modes",     "mps,bare-mps",
                           "--n-for",     "exclusive=1,4",
                           "--gpu-mem",   "1.5G",
                           "--gpu-share", "25%",
                           "--no-warmup", "--no-cgroups",
                           "--budget-s",  "120",
                           "--gpu",       "1",
                           "--",          "sh",
                           "-c",          "true"},
                          &help);
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->modes, (std::vector<Mode>{Mode::kMps, Mode::kBareMps}));
  EXPECT_EQ(o->n_for.at(Mode::kExclusive), (std::vector<int>{1, 4}));
  EXPECT_EQ(o->gpu_mem_bytes, 1536ull << 20);
  EXPECT_EQ(o->gpu_share_pct, 25);
  EXPECT_FALSE(o->warmup);
  EXPECT_FALSE(o->cgroups);
  EXPECT_EQ(o->budget_s, 120);
  EXPECT_EQ(o->gpus, (std::vector<int>{1}));
  EXPECT_EQ(o->workload_args, (std::vector<std::string>{"sh", "-c", "true"}));
}

TEST(ParseBenchArgsTest, ErrorsAreOneLineForAPerson) {
  std::string help;
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{{{"--workload", "nbody"}, "unknown workload 'nbody'"},
                                         {{"--workload", "cmd"}, "needs the command after --"},
                                         {{"--n", "0"}, "--n:"},
                                         {{"--n-for", "fast=1"}, "--n-for"},
                                         {{"--modes", "mig"}, "unknown mode 'mig'"},
                                         {{"--gpu-mem", "4X"}, "--gpu-mem"},
                                         {{"--gpu-share", "120"}, "--gpu-share"},
                                         {{"--gpu", "-1"}, "--gpu: '-1'"},
                                         {{"--gpu", "0,x"}, "--gpu: '0,x'"},
                                         {{"--gpu", "0,,1"}, "--gpu:"},
                                         {{"--gpu", "1,0,1"}, "GPU 1 is named twice"},
                                         {{"--gpu", "64"}, "--gpu:"},
                                         {{"--reps", "0"}, "reps"},
                                         {{"--daemon-set", "poll_interval_ms"}, "KEY=VALUE"},
                                         {{"--frobnicate"}, "frobnicate"}}) {
    auto o = ParseBenchArgs(c.args, &help);
    ASSERT_FALSE(o.ok()) << c.says;
    EXPECT_NE(o.status().message().find(c.says), std::string::npos) << o.status().message();
    EXPECT_EQ(o.status().message().find('\n'), std::string::npos) << o.status().message();
  }
}

TEST(ParseBenchArgsTest, SeveralGpusAreAListInOrder) {
  std::string help;
  auto o = ParseBenchArgs({"--gpu", "3,0"}, &help);
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->gpus, (std::vector<int>{0, 3}));
  o = ParseBenchArgs({}, &help);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->gpus, (std::vector<int>{0})) << "GPU 0 unless told";
}

TEST(ParseBenchArgsTest, HelpNamesPinpointBench) {
  std::string help;
  auto o = ParseBenchArgs({"--help"}, &help);
  ASSERT_TRUE(o.ok());
  EXPECT_NE(help.find("pinpoint bench"), std::string::npos);
  EXPECT_NE(help.find("--workload"), std::string::npos);
}

TEST(NValuesForTest, OverridesAndBareAtOneOnly) {
  BenchOptions o;
  o.n = {1, 4, 16};
  o.n_for[Mode::kExclusive] = {1, 4};
  EXPECT_EQ(NValuesFor(o, Mode::kMps), (std::vector<int>{1, 4, 16}));
  EXPECT_EQ(NValuesFor(o, Mode::kExclusive), (std::vector<int>{1, 4}));
  EXPECT_EQ(NValuesFor(o, Mode::kBare), (std::vector<int>{1}));
  o.n_for[Mode::kBare] = {1, 2};
  EXPECT_EQ(NValuesFor(o, Mode::kBare), (std::vector<int>{1, 2}));
}

}  // namespace
}  // namespace pinpoint::bench

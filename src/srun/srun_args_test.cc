#include "srun/srun_args.h"

#include <gtest/gtest.h>

namespace pinpoint::srun {
namespace {

TEST(ParseStepArgs, ReadsTheFlagsAStepHonoursInEverySpelling) {
  auto a = ParseStepArgs({"-n", "4", "--cpus-per-task=2", "--gpus-per-task", "1", "-l", "-N1",
                          "python", "-n", "train.py"});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->ntasks, 4);
  EXPECT_EQ(a->cpus_per_task, 2);
  EXPECT_EQ(a->gpus_per_task, 1);
  EXPECT_TRUE(a->label);
  EXPECT_EQ(a->command, (std::vector<std::string>{"python", "-n", "train.py"}))
      << "the command's own words are its own";
  EXPECT_TRUE(a->warnings.empty());
  auto b =
      ParseStepArgs({"-n4", "--ntasks-per-node=4", "--gres=gpu:v100:2", "-c", "8", "hostname"});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->ntasks, 4);
  EXPECT_EQ(b->gpus, 2);
  EXPECT_EQ(b->cpus_per_task, 8);
  auto c = ParseStepArgs({"--gpus=a100:3", "--", "-weird-program"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->gpus, 3);
  EXPECT_EQ(c->command, (std::vector<std::string>{"-weird-program"}));
}

TEST(ParseStepArgs, HarmlessFlagsAreAcceptedSilentlyAndOthersWithOneLine) {
  auto a = ParseStepArgs({"--mpi=pmix", "--export=ALL", "-u", "--unbuffered", "--cpu-bind=none",
                          "-p", "gpu", "--kill-on-bad-exit=1", "-K", "--exclusive", "-J", "x",
                          "--time=10", "--mem=0", "hostname"});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(a->warnings.empty());
  EXPECT_EQ(a->command, (std::vector<std::string>{"hostname"}));
  auto b = ParseStepArgs({"--export=NONE", "-o", "out.txt", "true"});
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->warnings.size(), 2u);
  EXPECT_EQ(b->warnings[0], "srun: --export NONE is not honoured by pinpoint's srun; ignored");
}

TEST(ParseStepArgs, RefusesMoreThanOneNodeUnknownFlagsAndBadCountsInOneLine) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"-N", "2", "hostname"}, "-N 2: a pinpoint job has one node"},
      {{"--nodes=2-4", "hostname"}, "--nodes 2-4: a pinpoint job has one node"},
      {{"--frobnicate", "x"}, "srun: unknown option '--frobnicate'"},
      {{"-n", "zero", "x"}, "-n: 'zero' is not a task count"},
      {{"-n", "0", "x"}, "-n: '0' is not a task count"},
      {{"--gres=nvme:100", "x"}, "knows only gpu:N"},
      {{"-n", "2"}, "srun: no command to run"},
      {{"-n"}, "srun: -n needs a value"},
  };
  for (const auto& c : cases) {
    auto a = ParseStepArgs(c.args);
    ASSERT_FALSE(a.ok()) << c.message;
    EXPECT_NE(a.status().message().find(c.message), std::string::npos) << a.status().message();
    EXPECT_EQ(a.status().message().find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace pinpoint::srun

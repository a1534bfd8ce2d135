#include "srun/step.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/test_dir.h"

namespace pinpoint::srun {
namespace {

using Env = std::map<std::string, std::string>;

Env JobEnv() {
  return {{"PINPOINT_JOB_ID", "7"},
          {"SLURM_NTASKS", "4"},
          {"SLURM_CPUS_ON_NODE", "8"},
          {"SLURM_JOB_NODELIST", "node1"},
          {"CUDA_VISIBLE_DEVICES", "GPU-a,GPU-b,GPU-c,GPU-d"},
          {"SLURM_JOB_GPUS", "0,1,2,3"},
          {"PATH", "/usr/bin:/bin"}};
}

std::string Value(const std::vector<std::string>& env, const std::string& name) {
  for (const auto& e : env)
    if (e.rfind(name + "=", 0) == 0) return e.substr(name.size() + 1);
  return "<unset>";
}

StepArgs Args(std::vector<std::string> words) {
  auto a = ParseStepArgs(words);
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  return a.ok() ? *a : StepArgs{};
}

TEST(PlanStep, TasksComeFromTheJobAndEachKnowsItsIndex) {
  auto plan = PlanStep(Args({"python", "train.py"}), JobEnv(), 42);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->size(), 4u) << "SLURM_NTASKS of the job";
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(Value((*plan)[i], "SLURM_PROCID"), std::to_string(i));
    EXPECT_EQ(Value((*plan)[i], "SLURM_LOCALID"), std::to_string(i));
    EXPECT_EQ(Value((*plan)[i], "SLURM_STEP_ID"), "42");
    EXPECT_EQ(Value((*plan)[i], "SLURM_NTASKS"), "4");
    EXPECT_EQ(Value((*plan)[i], "SLURM_STEP_NODELIST"), "node1");
    EXPECT_EQ(Value((*plan)[i], "CUDA_VISIBLE_DEVICES"), "GPU-a,GPU-b,GPU-c,GPU-d")
        << "without --gpus-per-task every task sees the step's GPUs";
  }
  auto one = PlanStep(Args({"-n", "1", "hostname"}), JobEnv(), 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->size(), 1u);
}

TEST(PlanStep, GpusPerTaskSplitsTheJobsOwnList) {
  auto plan = PlanStep(Args({"-n", "2", "--gpus-per-task=2", "x"}), JobEnv(), 1);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->size(), 2u);
  EXPECT_EQ(Value((*plan)[0], "CUDA_VISIBLE_DEVICES"), "GPU-a,GPU-b");
  EXPECT_EQ(Value((*plan)[1], "CUDA_VISIBLE_DEVICES"), "GPU-c,GPU-d");
  EXPECT_EQ(Value((*plan)[1], "SLURM_STEP_GPUS"), "2,3");
  Env env = JobEnv();
  env["SLURM_GPUS_PER_TASK"] = "1";  // the job's --gpus-per-task is srun's default
  auto inherited = PlanStep(Args({"x"}), env, 1);
  ASSERT_TRUE(inherited.ok());
  EXPECT_EQ(Value((*inherited)[3], "CUDA_VISIBLE_DEVICES"), "GPU-d");
  auto step = PlanStep(Args({"--gres=gpu:2", "-n", "1", "x"}), JobEnv(), 1);
  ASSERT_TRUE(step.ok());
  EXPECT_EQ(Value((*step)[0], "CUDA_VISIBLE_DEVICES"), "GPU-a,GPU-b");
}

TEST(PlanStep, RefusesWhatTheJobDoesNotHave) {
  struct Case {
    std::vector<std::string> args;
    Env env;
    std::string message;
  } cases[] = {
      {{"x"}, {}, "not inside a pinpoint job"},
      {{"-n", "9", "x"}, JobEnv(), "9 tasks x 1 CPUs need 9 CPUs; the job has 8"},
      {{"-n", "4", "-c", "4", "x"}, JobEnv(), "need 16 CPUs; the job has 8"},
      {{"--gpus=5", "x"}, JobEnv(), "the step asks for 5 GPUs; the job has 4"},
      {{"-n", "3", "--gpus-per-task=2", "x"}, JobEnv(), "need 6 GPUs; the step has 4"},
  };
  for (const auto& c : cases) {
    auto plan = PlanStep(Args(c.args), c.env, 1);
    ASSERT_FALSE(plan.ok()) << c.message;
    EXPECT_NE(plan.status().message().find(c.message), std::string::npos)
        << plan.status().message();
  }
}

// A step of 3 tasks, each writing its index and GPUs; the step's exit code is the worst task's.
TEST(RunStep, RunsEveryTaskAndReturnsTheWorstExitCode) {
  TestDir dir;
  auto args = Args({"-n", "3", "--gpus-per-task=1", "sh", "-c",
                    "echo $SLURM_PROCID $CUDA_VISIBLE_DEVICES > " + dir.path() +
                        "/task$SLURM_PROCID; exit $SLURM_PROCID"});
  auto plan = PlanStep(args, JobEnv(), 1);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::ostringstream err;
  EXPECT_EQ(RunStep(args, *plan, err), 2) << err.str();
  for (int i = 0; i < 3; ++i) {
    std::string want = std::to_string(i) + " GPU-" + std::string(1, static_cast<char>('a' + i));
    std::ifstream in(dir.path() + "/task" + std::to_string(i));
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), want + "\n");
  }
}

TEST(RunStep, AKilledTaskCountsAs128PlusItsSignal) {
  auto args = Args({"-n", "2", "sh", "-c", "[ $SLURM_PROCID = 1 ] && kill -9 $$; exit 0"});
  auto plan = PlanStep(args, JobEnv(), 1);
  ASSERT_TRUE(plan.ok());
  std::ostringstream err;
  EXPECT_EQ(RunStep(args, *plan, err), 137);
}

TEST(RunStep, AProgramThatCannotStartIsOneLineAndExitOne) {
  auto args = Args({"/nonexistent/program"});
  auto plan = PlanStep(args, JobEnv(), 1);
  ASSERT_TRUE(plan.ok());
  std::ostringstream err;
  int code = RunStep(args, *plan, err);
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.str().find("srun: task 0: "), std::string::npos) << err.str();
}

}  // namespace
}  // namespace pinpoint::srun

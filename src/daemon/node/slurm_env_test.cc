#include "daemon/node/slurm_env.h"

#include <gtest/gtest.h>

namespace pinpoint::daemon {
namespace {

using Env = std::map<std::string, std::string>;

JobRecord Job() {
  JobRecord job;
  job.id = 42;
  job.uid = 1000;
  job.gid = 100;
  job.user = "ada";
  job.start_ms = 1'700'000'000'500;
  job.request.argv = {"/home/ada/run/train.sh", "--fast"};
  job.request.cwd = "/home/ada/run/out";
  job.request.submit_dir = "/home/ada/run";
  job.request.submit_host = "login1";
  job.request.cpus = 8;
  job.request.ntasks = 4;
  job.request.gpus = 4;
  job.request.gpus_per_task = 1;
  job.request.mem_bytes = 16ull << 30;
  job.request.time_limit_s = 600;
  return job;
}

TEST(SlurmEnvironment, AJobSeesWhatASlurmJobSees) {
  Env env{{"PATH", "/usr/bin:/bin"}};
  SetSlurmEnvironment(Job(), {"node7", "/usr/libexec/pinpoint/slurm"}, {0, 1, 2, 3}, env);
  Env want{
      {"SLURM_JOB_ID", "42"},
      {"SLURM_JOBID", "42"},
      {"SLURM_JOB_NAME", "train.sh"},
      {"SLURM_JOB_USER", "ada"},
      {"SLURM_JOB_UID", "1000"},
      {"SLURM_JOB_GID", "100"},
      {"SLURM_SUBMIT_DIR", "/home/ada/run"},
      {"SLURM_SUBMIT_HOST", "login1"},
      {"SLURMD_NODENAME", "node7"},
      {"SLURM_NODELIST", "node7"},
      {"SLURM_JOB_NODELIST", "node7"},
      {"SLURM_NNODES", "1"},
      {"SLURM_JOB_NUM_NODES", "1"},
      {"SLURM_NODEID", "0"},
      {"SLURM_PROCID", "0"},
      {"SLURM_LOCALID", "0"},
      {"SLURM_NTASKS", "4"},
      {"SLURM_NPROCS", "4"},
      {"SLURM_NTASKS_PER_NODE", "4"},
      {"SLURM_TASKS_PER_NODE", "4"},
      {"SLURM_CPUS_PER_TASK", "2"},
      {"SLURM_CPUS_ON_NODE", "8"},
      {"SLURM_JOB_CPUS_PER_NODE", "8"},
      {"SLURM_MEM_PER_NODE", "16384"},
      {"SLURM_GPUS_ON_NODE", "4"},
      {"SLURM_JOB_GPUS", "0,1,2,3"},
      {"SLURM_STEP_GPUS", "0,1,2,3"},
      {"GPU_DEVICE_ORDINAL", "0,1,2,3"},
      {"SLURM_GPUS_PER_TASK", "1"},
      {"SLURM_JOB_START_TIME", "1700000000"},
      {"SLURM_JOB_END_TIME", "1700000600"},
      {"SLURM_TOPOLOGY_ADDR", "node7"},
      {"PINPOINT_SLURM_ENV", "1"},
      {"PINPOINT_SRUN_DIR", "/usr/libexec/pinpoint/slurm"},
      {"PATH", "/usr/libexec/pinpoint/slurm:/usr/bin:/bin"},
  };
  EXPECT_EQ(env, want);
}

TEST(SlurmEnvironment, AnArrayTaskSeesItsIndexAndTheArraysShape) {
  JobRecord job = Job();
  job.array.array_id = 40;
  job.array.index = 8;
  job.array.count = 4;
  job.array.min_index = 0;
  job.array.max_index = 12;
  job.request.name = "sweep";
  Env env;
  SetSlurmEnvironment(job, {"node7", ""}, {}, env);
  EXPECT_EQ(env["SLURM_ARRAY_JOB_ID"], "40");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_ID"], "8");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_COUNT"], "4");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_MIN"], "0");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_MAX"], "12");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_STEP"], "4");
  EXPECT_EQ(env["SLURM_JOB_NAME"], "sweep");
  EXPECT_EQ(env.count("PATH"), 0u) << "no srun installed: the PATH is left alone";
  EXPECT_EQ(env.count("SLURM_GPUS_ON_NODE"), 0u) << "no GPU";
}

TEST(SlurmEnvironment, ArrayStepIsTheEvenSpacingElseOne) {
  EXPECT_EQ(ArrayStep(1, 5, 5), 1);
  EXPECT_EQ(ArrayStep(10, 1, 10), 1);
  EXPECT_EQ(ArrayStep(4, 0, 12), 4);
  EXPECT_EQ(ArrayStep(3, 1, 6), 1) << "1,3,6 or the like: not even";
}

// Attack on the values: a job submitted from inside another pinpoint job (or from a shell that
// set them) carries that job's SLURM_* names; none of them may describe this job.
TEST(SlurmEnvironment, InheritedValuesOfAnotherPinpointJobAreReplaced) {
  Env env{{"PINPOINT_SLURM_ENV", "1"},      {"SLURM_JOB_ID", "7"},
          {"SLURM_ARRAY_TASK_ID", "3"},     {"SLURM_STEP_ID", "9"},
          {"SLURMD_NODENAME", "elsewhere"}, {"GPU_DEVICE_ORDINAL", "5"},
          {"PATH", "/pp/slurm:/bin"}};
  JobRecord job = Job();
  job.request.gpus = 0;
  job.request.gpus_per_task = 0;
  SetSlurmEnvironment(job, {"node7", "/pp/slurm"}, {}, env);
  EXPECT_EQ(env["SLURM_JOB_ID"], "42");
  EXPECT_EQ(env.count("SLURM_ARRAY_TASK_ID"), 0u) << "not an array task";
  EXPECT_EQ(env.count("SLURM_STEP_ID"), 0u);
  EXPECT_EQ(env.count("GPU_DEVICE_ORDINAL"), 0u);
  EXPECT_EQ(env["SLURMD_NODENAME"], "node7");
  EXPECT_EQ(env["PATH"], "/pp/slurm:/pp/slurm:/bin") << "first, whatever came before";
}

// Under a real Slurm (`pinpoint slurm run` inside a Slurm job) Slurm's own variables describe the
// job and its srun is the one to use: nothing is changed.
TEST(SlurmEnvironment, ARealSlurmsVariablesStayAndNoSrunIsAdded) {
  Env env{{"SLURM_JOB_ID", "900"}, {"SLURM_NTASKS", "2"}, {"PATH", "/usr/bin:/bin"}};
  Env before = env;
  EXPECT_TRUE(UnderRealSlurm(env));
  SetSlurmEnvironment(Job(), {"node7", "/pp/slurm"}, {0}, env);
  EXPECT_EQ(env, before);
  EXPECT_FALSE(UnderRealSlurm({{"SLURM_JOB_ID", "9"}, {"PINPOINT_SLURM_ENV", "1"}}));
  EXPECT_FALSE(UnderRealSlurm({}));
}

}  // namespace
}  // namespace pinpoint::daemon

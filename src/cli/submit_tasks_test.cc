#include "cli/submit_tasks.h"

#include <gtest/gtest.h>

namespace pinpoint::cli {
namespace {

TEST(ApplyTasksTest, CpusPerTaskAndGpusPerTaskCountPerTaskAsInSlurm) {
  JobRequest r;
  r.cpus = 2;  // -c 2
  ASSERT_TRUE(ApplyTasks({.ntasks = 4, .gpus_per_task = "1"}, false, r).ok());
  EXPECT_EQ(r.ntasks, 4);
  EXPECT_EQ(r.cpus, 8);
  EXPECT_EQ(r.gpus, 4);
  EXPECT_EQ(r.gpus_per_task, 1);
  JobRequest plain;
  ASSERT_TRUE(ApplyTasks({}, false, plain).ok());
  EXPECT_EQ(plain.ntasks, 1);
  EXPECT_EQ(plain.cpus, 1);
  JobRequest per_node;
  per_node.gpus = 4;  // --gres=gpu:4
  ASSERT_TRUE(
      ApplyTasks({.ntasks_per_node = 4, .nodes = "1", .gpus_per_task = "1"}, true, per_node).ok());
  EXPECT_EQ(per_node.ntasks, 4);
  EXPECT_EQ(per_node.gpus, 4);
}

TEST(ApplyTasksTest, MoreThanOneNodeAndDisagreementsAreOneLine) {
  struct Case {
    SubmitTaskArgs args;
    int gpus;  // -1: not given
    const char* message;
  } cases[] = {
      {{.nodes = "2"}, -1, "-N/--nodes 2: a pinpoint job runs on one node"},
      {{.nodes = "2-4"}, -1, "-N/--nodes 2-4: a pinpoint job runs on one node"},
      {{.nodes = "x"}, -1, "-N/--nodes: 'x' is not a node count"},
      {{.ntasks = 2, .ntasks_per_node = 4}, -1, "--ntasks 2 and --ntasks-per-node 4 differ"},
      {{.ntasks = 2, .gpus_per_task = "1"}, 4, "--gpus 4 is not --gpus-per-task 1 x 2 tasks"},
      {{.ntasks = 65536, .gpus_per_task = "1"}, -1, "is more than 1024 GPUs"},
  };
  for (const auto& c : cases) {
    JobRequest r;
    if (c.gpus >= 0) r.gpus = c.gpus;
    Status s = ApplyTasks(c.args, c.gpus >= 0, r);
    ASSERT_FALSE(s.ok()) << c.message;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.message();
  }
  JobRequest r;
  r.cpus = 4;
  EXPECT_NE(ApplyTasks({.ntasks = 65536}, false, r).message().find("more than 65536 CPUs"),
            std::string::npos);
}

// Slurm's --gpus-per-task=TYPE:N: the type names a model (the node's check: Admission), the count
// counts; a type that disagrees with --gpus's, or no count, is one line.
TEST(ApplyTasksTest, AGpuTypePerTaskIsKept) {
  JobRequest r;
  ASSERT_TRUE(ApplyTasks({.ntasks = 2, .gpus_per_task = "a100:1"}, false, r).ok());
  EXPECT_EQ(r.gpus, 2);
  EXPECT_EQ(r.gpu_type, "a100");
  JobRequest other;
  other.gpu_type = "v100";
  EXPECT_NE(ApplyTasks({.ntasks = 2, .gpus_per_task = "a100:1"}, false, other)
                .message()
                .find("names GPU type 'a100' and --gpus 'v100'"),
            std::string::npos);
  JobRequest bad;
  for (const char* text : {"a100", "0", "x:0", "2000"})
    EXPECT_NE(ApplyTasks({.gpus_per_task = text}, false, bad).message().find("is not a GPU count"),
              std::string::npos)
        << text;
}

}  // namespace
}  // namespace pinpoint::cli

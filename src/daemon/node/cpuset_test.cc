// A starting job's own CPUs (NodeOptions::Launch::cpu_topology, config cpu_binding "cpuset"):
// chosen when it starts, stored with it, given to its launch and environment, held until it ends,
// and the quota again when too few are free.
#include <gtest/gtest.h>

#include "daemon/service/service_fixture.h"

namespace pinpoint::daemon {
namespace {

class CpusetTest : public ServiceFixture {
 protected:
  void SetUp() override { Restart(Options()); }
  // Two NUMA nodes of two CPUs: 0-1 and 2-3.
  NodeOptions Options() {
    NodeOptions o;
    o.inventory = TwoGpus();
    o.launch.cpu_topology.cpus = {0, 1, 2, 3};
    o.launch.cpu_topology.node_of = {{0, 0}, {1, 0}, {2, 1}, {3, 1}};
    return o;
  }
  JobId Submit(int cpus, std::map<std::string, std::string> env = {}) {
    JobRequest r = GpuSlice();
    r.gpus = 0;
    r.gpu_mem_bytes = 0;
    r.cpus = cpus;
    r.env = std::move(env);
    auto job = node_->Submit(caller_, r);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->id : 0;
  }
  std::vector<int> CpusOf(JobId id) { return node_->Get(id)->cpuset; }
};

TEST_F(CpusetTest, EachJobGetsFreeCpusOfItsOwnOrElseTheQuota) {
  JobId one = Submit(1);
  JobId two = Submit(2);
  JobId too_many = Submit(2);  // one CPU is left
  node_->Step();
  EXPECT_EQ(CpusOf(one), std::vector<int>{0});
  EXPECT_EQ(CpusOf(two), (std::vector<int>{2, 3})) << "on one node, the one with room for both";
  EXPECT_EQ(node_->Get(too_many)->state, JobState::kRunning)
      << "the scheduler counts CPUs, not which";
  EXPECT_EQ(CpusOf(too_many), std::vector<int>{}) << "too few free: it shares under its quota";

  ASSERT_EQ(launcher_.launches().size(), 3u);
  EXPECT_EQ(launcher_.launches()[0].cpus, std::vector<int>{0});
  EXPECT_EQ(launcher_.launches()[2].cpus, std::vector<int>{});
  auto env = LaunchEnv(launcher_, 1);
  EXPECT_EQ(env["PINPOINT_CPUS"], "2-3");
  EXPECT_EQ(env["OMP_NUM_THREADS"], "2");
  auto shared = LaunchEnv(launcher_, 2);
  EXPECT_EQ(shared.count("PINPOINT_CPUS"), 0u);
  EXPECT_EQ(shared["OMP_NUM_THREADS"], "2");
}

// config system_cpus: CPU 0 is the system's. The topology is the others; a job that shares runs
// on them too, never on the system's (a user's `yes` beside pinpointd's loop).
TEST_F(CpusetTest, NoJobRunsOnTheSystemsCpusOneThatSharesIncluded) {
  NodeOptions o = Options();
  o.launch.cpu_topology = WithoutCpus(o.launch.cpu_topology, {0});
  o.launch.shared_cpus = {1, 2, 3};
  Restart(o);
  JobId one = Submit(1);
  JobId two = Submit(2);
  JobId shares = Submit(1);  // CPUs 1-3 are taken
  node_->Step();
  EXPECT_EQ(CpusOf(one), std::vector<int>{1});
  EXPECT_EQ(CpusOf(two), (std::vector<int>{2, 3}));
  EXPECT_EQ(CpusOf(shares), std::vector<int>{}) << "none of its own";
  ASSERT_EQ(launcher_.launches().size(), 3u);
  EXPECT_EQ(launcher_.launches()[0].cpus, std::vector<int>{1});
  EXPECT_EQ(launcher_.launches()[2].cpus, (std::vector<int>{1, 2, 3}))
      << "it shares every CPU but the system's";
}

TEST_F(CpusetTest, HeldCpusSurviveARestartAndComeBackWhenTheJobEnds) {
  JobId first = Submit(1);
  node_->Step();
  ASSERT_EQ(CpusOf(first), std::vector<int>{0});
  Restart(Options());  // adopted with its CPUs
  JobId second = Submit(1, {{"OMP_NUM_THREADS", "8"}, {"PINPOINT_CPUS", "0-3"}});
  node_->Step();
  EXPECT_EQ(CpusOf(second), std::vector<int>{1}) << "CPU 0 is still the first job's";
  auto env = LaunchEnv(launcher_, launcher_.launches().size() - 1);
  EXPECT_EQ(env["OMP_NUM_THREADS"], "8") << "the job's own choice stays";
  EXPECT_EQ(env["PINPOINT_CPUS"], "1") << "which CPUs it has is the daemon's to say";
  launch::ExitStatus done;
  done.kind = launch::ExitStatus::Kind::kExited;
  done.exit_code = 0;
  launcher_.Finish(first, done);
  node_->Step();
  ASSERT_TRUE(IsFinal(node_->Get(first)->state));
  JobId third = Submit(1);
  node_->Step();
  EXPECT_EQ(CpusOf(third), std::vector<int>{0}) << "given back when its job ended";
}

TEST_F(CpusetTest, AJobsCpusComeFromItsGpusNumaNodeWhenTheBackendKnowsIt) {
  NodeOptions o = Options();
  o.inventory.devices[0].numa_node = 1;  // GPU 0 sits by CPUs 2-3; GPU 1's node is unknown
  Restart(o);
  JobRequest on_gpu0 = GpuSlice();
  on_gpu0.devices = {0};
  on_gpu0.cpus = 1;
  auto near = node_->Submit(caller_, on_gpu0);
  ASSERT_TRUE(near.ok()) << near.status().ToString();
  JobRequest on_gpu1 = on_gpu0;
  on_gpu1.devices = {1};
  auto other = node_->Submit(caller_, on_gpu1);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  node_->Step();
  EXPECT_EQ(CpusOf(near->id), std::vector<int>{2})
      << "its GPU's node, though node 0 fits it best too";
  EXPECT_EQ(CpusOf(other->id), std::vector<int>{3}) << "no node known: the best fit, as before";
}

}  // namespace
}  // namespace pinpoint::daemon

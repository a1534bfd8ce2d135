// A job in a cgroup: its processes are found in its cgroup.procs, which none of them can leave,
// not by reading every process of the node (ProcessLauncher::Members).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "launch/process_launcher_fixture.h"

namespace pinpoint::launch {
namespace {

// Where cgroup v2 is mounted ("" when it is not), from this process's mountinfo.
std::string CgroupV2Mount() {
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    auto dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line);
    std::string id, parent, dev, root, mount;
    fields >> id >> parent >> dev >> root >> mount;
    return mount;
  }
  return "";
}

class CgroupMembersTest : public ProcessLauncherTest {
 protected:
  void SetUp() override {
    std::string mount = CgroupV2Mount();
    if (mount.empty()) GTEST_SKIP() << "no cgroup v2 here";
    group_ = mount + "/pinpoint-members-test-" + std::to_string(::getpid());
    if (::mkdir(group_.c_str(), 0755) != 0) {
      group_.clear();
      GTEST_SKIP() << "cannot make a cgroup here (not root, or not delegated)";
    }
  }
  void TearDown() override {
    if (!group_.empty()) ::rmdir(group_.c_str());  // empty by then: every process was waited for
  }
  std::string group_;
};

// Attack: a job's process that leaves its session and clears its environment (no job key) and
// runs on after the job ended. On a node without cgroups it would escape (docs/security.md item
// 3); in the job's cgroup it is found, killed, and the job ends after it.
TEST_F(CgroupMembersTest, AProcessThatLeftTheSessionAndItsEnvironmentIsFoundInTheCgroup) {
  std::string fifo = MakeFifo();
  LaunchSpec s = Spec(
      60, {"sh", "-c", "env -i setsid sh -c 'echo $$ > " + fifo + "; exec sleep 1000' & exit 0"});
  s.cgroup_dir = group_;
  auto h = launcher_.Launch(s);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  std::ifstream in(fifo);
  int64_t escaped = 0;
  in >> escaped;
  ASSERT_GT(escaped, 0);
  auto held = PidFd::Open(escaped);
  ASSERT_TRUE(held.has_value());
  WaitSupervisor(*h);
  auto stat = ReadProcStat(escaped);
  ASSERT_TRUE(stat.has_value());
  EXPECT_NE(stat->session, h->pid) << "it did leave the job's session";
  EXPECT_EQ(ReadProcFileBounded(escaped, "environ", 4096).find("PINPOINT_JOB_KEY"),
            std::string::npos)
      << "it did clear its environment";
  EXPECT_EQ(launcher_.JobProcesses(*h), std::vector<int64_t>{escaped});
  auto first = launcher_.Poll(*h);
  EXPECT_FALSE(first.has_value()) << "reported ended while its process runs on";
  EXPECT_TRUE(held->WaitExit(kDeadlineMs)) << "the escaped process was not killed";
  auto st = launcher_.Poll(*h);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->kind, ExitStatus::Kind::kExited);
  EXPECT_TRUE(launcher_.JobProcesses(*h).empty());
}

// On a cgroup node the cgroup alone says who is the job's: a process of the same user outside it
// that carries the job's key (copied from the job's environment) is not the job's. The job ends
// when its cgroup is empty, and the other process is left alone, where the node's processes were
// read at each end and it kept the job from ending, then was killed as the job's.
TEST_F(CgroupMembersTest, AJobThatRanInItsCgroupIsOverWhenTheCgroupIsEmpty) {
  std::string fifo = MakeFifo();
  LaunchSpec s = Spec(61, {"sh", "-c", "echo $PINPOINT_JOB_KEY > " + fifo});
  s.cgroup_dir = group_;
  auto h = launcher_.Launch(s);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  std::string key;
  {
    std::ifstream in(fifo);
    in >> key;
  }
  ASSERT_FALSE(key.empty());
  WaitSupervisor(*h);
  SpawnSpec decoy;
  decoy.argv = {"sleep", "1000"};
  decoy.env = std::vector<std::string>{"PATH=/usr/bin:/bin", "PINPOINT_JOB_KEY=" + key};
  decoy.new_session = true;
  auto pid = Spawn(decoy);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  auto st = launcher_.Poll(*h);
  ASSERT_TRUE(st.has_value()) << "a process outside the job's cgroup kept the job from ending";
  EXPECT_EQ(st->kind, ExitStatus::Kind::kExited);
  EXPECT_TRUE(ProcessAlive(*pid)) << "a process outside the job's cgroup was killed as the job's";
  ::kill(*pid, SIGKILL);
  EXPECT_TRUE(WaitChild(*pid, kDeadlineMs).has_value());
}

}  // namespace
}  // namespace pinpoint::launch

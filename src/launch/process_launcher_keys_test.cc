// How an ending job finds its processes by their key on a node without cgroups, when its user
// has many processes with large environments (issue 55): each process's environment is read once
// for every job that ends, not once per job.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/process.h"
#include "common/spawn.h"
#include "launch/process_keys.h"
#include "launch/process_launcher.h"
#include "launch/process_launcher_fixture.h"

namespace pinpoint::launch {
namespace {

// Attack: 16 idle processes of the job's user, each with a 256 KiB environment, while 6 of the
// user's jobs end. Each ending job looked at every process of its user and read its whole
// environment again: the loop's cost grew with jobs x processes x environment, at the user's
// choice. Now each is read once, whichever jobs ask, and the jobs end as before.
TEST_F(ProcessLauncherTest, JobsThatEndReadEachOfTheirUsersProcessesOnce) {
  std::set<int64_t> idle;
  std::map<int64_t, int> reads;
  ProcessKeys keys(
      [&](int64_t pid) {
        if (idle.count(pid)) ++reads[pid];
        return ReadProcFileBounded(pid, "environ", kMaxEnvironBytes);
      },
      [] { return int64_t{0}; });  // no budget spent: this test is about reads, not time
  ProcessLauncher launcher(PINPOINT_BIN_DIR "/pinpoint-shim", std::move(keys));
  std::vector<PidFd> held;
  const std::string big(256 << 10, 'x');
  for (int i = 0; i < 16; ++i) {
    SpawnSpec s;
    s.argv = {"sleep", "1000"};
    s.env = std::vector<std::string>{"PATH=/usr/bin:/bin", "BIG=" + big.substr(0, 120 << 10),
                                     "BIG2=" + big.substr(0, 120 << 10)};
    s.new_session = true;
    auto pid = Spawn(s);
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    idle.insert(*pid);
    auto fd = PidFd::Open(*pid);
    ASSERT_TRUE(fd.has_value());
    held.push_back(std::move(*fd));
  }
  std::vector<JobHandle> jobs;
  for (JobId id = 70; id < 76; ++id) {
    auto h = launcher.Launch(Spec(id, {"true"}));
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    jobs.push_back(*h);
  }
  for (const JobHandle& h : jobs) WaitSupervisor(h);
  int ended = 0;
  for (int pass = 0; pass < 20 && ended < static_cast<int>(jobs.size()); ++pass) {
    launcher.Reap();
    ended = 0;
    for (const JobHandle& h : jobs) {
      auto st = launcher.Poll(h);
      if (st.has_value()) {
        EXPECT_EQ(st->kind, ExitStatus::Kind::kExited);
        ++ended;
      }
    }
  }
  EXPECT_EQ(ended, static_cast<int>(jobs.size()));
  for (int64_t pid : idle) {
    EXPECT_LE(reads[pid], 1) << "process " << pid << " was read " << reads[pid] << " times";
    EXPECT_TRUE(ProcessAlive(pid)) << "an idle process of the user, in no job, was killed";
  }
  for (const PidFd& fd : held) fd.Signal(SIGKILL);
  for (int64_t pid : idle) WaitChild(static_cast<pid_t>(pid), kDeadlineMs);
}

}  // namespace
}  // namespace pinpoint::launch

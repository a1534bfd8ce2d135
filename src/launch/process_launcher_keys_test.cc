// How an ending job finds its processes by their key on a node without cgroups, when its user
// has many processes with large environments (issue 55): each process's environment is read once
// for every job that ends, not once per job.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/process.h"
#include "common/spawn.h"
#include "launch/process_keys.h"
#include "launch/process_launcher.h"
#include "launch/process_launcher_fixture.h"
#include "launch/process_scan.h"

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
  ProcessLauncher launcher(PINPOINT_BIN_DIR "/pinpoint-shim", std::move(keys), Unbudgeted());
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

// Attack: a job that leaves processes behind (setsid) on a node without cgroups, where each look
// at the node's processes cost the loop one read of every process in one pass, however many a
// user made. Now a pass reads its budget's worth (here a few processes: a clock that spends 0.5 ms
// a read) and the next pass, due at once, goes on: the job is over only once a complete look
// finds none of its processes, and every one it left is killed first.
TEST_F(ProcessLauncherTest, AnEndingJobsLookAtTheNodesProcessesSpansPassesWithinABudget) {
  int64_t now_us = 0;
  ProcessLauncher launcher(
      PINPOINT_BIN_DIR "/pinpoint-shim",
      ProcessKeys([](int64_t pid) { return ReadProcFileBounded(pid, "environ", kMaxEnvironBytes); },
                  [] { return int64_t{0}; }),
      ProcessScan([&now_us] { return now_us += 500; }));
  std::string pids_file = dir_ + "/left";
  auto h = launcher.Launch(
      Spec(81, {"sh", "-c",
                "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do setsid sleep 1000 & echo $! >> " +
                    pids_file + "; done"}));
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  WaitSupervisor(*h);
  std::optional<ExitStatus> st;
  int passes = 0, due = 0;
  for (; passes < 100000 && !st; ++passes) {
    launcher.Reap();
    int64_t before = now_us;
    st = launcher.Poll(*h);
    // The budget is checked before each read (and ProcessKeys' is apart): one read over at most.
    // Each read looks at the clock twice (before and after), so the clock moved twice its cost.
    EXPECT_LE((now_us - before) / 2, ProcessScan::kPassBudgetUs + 500);
    if (launcher.MoreDue()) ++due;
  }
  ASSERT_TRUE(st.has_value()) << "the job never ended";
  EXPECT_EQ(st->kind, ExitStatus::Kind::kExited);
  EXPECT_GT(passes, 2);
  EXPECT_GT(due, 0) << "a pass that stopped the look did not ask for the next at once";
  EXPECT_GE(launcher.process_rounds(), 2) << "one look found them, another found none";
  auto left = ReadFile(pids_file);
  ASSERT_TRUE(left.ok());
  std::istringstream in(*left);
  int count = 0;
  for (int64_t pid; in >> pid; ++count) {
    auto stat = ReadProcStat(pid);
    EXPECT_TRUE(!stat || stat->state == 'Z') << "process " << pid << " the job left still runs";
  }
  EXPECT_EQ(count, 12);
}

}  // namespace
}  // namespace pinpoint::launch

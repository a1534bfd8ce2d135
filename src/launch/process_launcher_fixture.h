// ProcessLauncherTest: a real ProcessLauncher over the built pinpoint-shim in a fresh directory,
// with helpers to wait for a job without sleeping; shared by the launcher's test files.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <tuple>

#include "common/file_util.h"
#include "common/process.h"
#include "common/spawn.h"
#include "common/test_dir.h"
#include "launch/process_launcher.h"
#include "launch/shim.h"

namespace pinpoint::launch {

class ProcessLauncherTest : public ::testing::Test {
 protected:
  LaunchSpec Spec(JobId id, std::vector<std::string> argv) {
    LaunchSpec s;
    s.job_id = id;
    s.argv = std::move(argv);
    s.cwd = "/";
    s.env = {"PATH=/usr/bin:/bin", "FOO=bar"};
    s.job_dir = dir_ + "/jobs/" + std::to_string(id);
    return s;
  }

  // Every wait below has this deadline: a job that hangs fails its test, never hangs it.
  static constexpr int kDeadlineMs = 120'000;

  // Blocks until the supervisor (our child) exits and reaps it: no sleeping. One still running at
  // the deadline fails the test and is killed.
  static void WaitSupervisor(const JobHandle& h) {
    ASSERT_TRUE(WaitChild(static_cast<pid_t>(h.pid), kDeadlineMs).has_value())
        << "the supervisor of job " << h.job_id << " did not end in time";
  }

  // The job's end, once its supervisor has ended: a poll that finds a process the job left
  // behind (a child its shell forked as a signal went out to the group) kills it and reports
  // nothing; a later poll, once that process is gone, reports the end. Nullopt past 10 polls.
  std::optional<ExitStatus> PollUntilEnded(const JobHandle& h) {
    std::optional<ExitStatus> st = launcher_.Poll(h);
    for (int poll = 0; poll < 10 && !st.has_value(); ++poll) {
      for (int64_t pid : launcher_.JobProcesses(h)) WaitForExit(pid, kDeadlineMs);
      st = launcher_.Poll(h);
    }
    return st;
  }

  std::string ReadLog(const JobHandle& h, const char* file) {
    auto text = ReadFile(h.job_dir + "/" + file);
    return text.ok() ? *text : "";
  }

  // Opens a FIFO that the job writes to once it is running; returns when it has.
  std::string MakeFifo() {
    std::string path = dir_ + "/ready";
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
    return path;
  }
  static void WaitReady(const std::string& fifo) {
    // Opened without blocking: poll then waits for the job's line (or its closing of the FIFO).
    int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    pollfd p{fd, POLLIN, 0};
    int n = ::poll(&p, 1, kDeadlineMs);
    char line[64];
    if (n > 0) (void)!::read(fd, line, sizeof(line));
    ::close(fd);
    ASSERT_GT(n, 0) << "the job did not say it runs in time";
  }

  // A job whose supervisor is killed once the job runs: its processes live on, orphaned.
  JobHandle OrphanJob(JobId id, const std::string& script) {
    std::string fifo = MakeFifo();
    auto h = launcher_.Launch(Spec(id, {"sh", "-c", "READY='echo up > " + fifo + "'; " + script}));
    EXPECT_TRUE(h.ok());
    WaitReady(fifo);
    EXPECT_GT(ReadJobPid(h->job_dir), 0);
    EXPECT_EQ(::kill(static_cast<pid_t>(h->pid), SIGKILL), 0);
    WaitSupervisor(*h);
    return *h;
  }

  TestDir tmp_;
  const std::string dir_ = tmp_.path();
  // A look at the node's processes that spends no budget (a clock that stands still): a call of
  // these tests reads every process, however loaded the machine, without the daemon's passes; the
  // budget has tests of its own (process_scan_test.cc).
  static ProcessScan Unbudgeted() {
    return ProcessScan([] { return int64_t{0}; });
  }
  ProcessLauncher launcher_{PINPOINT_BIN_DIR "/pinpoint-shim", ProcessKeys(), Unbudgeted()};
};

}  // namespace pinpoint::launch

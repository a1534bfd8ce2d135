// ProcessLauncherTest: a real ProcessLauncher over the built pinpoint-shim in a fresh directory,
// with helpers to wait for a job without sleeping; shared by the launcher's test files.
#pragma once

#include <fcntl.h>
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

#include <gtest/gtest.h>

#include "common/file_util.h"
#include "common/process.h"
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

  // Blocks until the supervisor (our child) exits: no sleeping.
  static void WaitSupervisor(const JobHandle& h) {
    int status = 0;
    ASSERT_EQ(::waitpid(static_cast<pid_t>(h.pid), &status, 0), h.pid);
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
    std::ifstream in(fifo);  // blocks until the job opens it for writing
    std::string line;
    std::getline(in, line);
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
  ProcessLauncher launcher_{PINPOINT_BIN_DIR "/pinpoint-shim"};
};

}  // namespace pinpoint::launch

// `pinpoint submit --wait` as srun: the job id at once on stderr, Ctrl-C (a real SIGINT to the
// CLI process) cancels the job and waits for its end, a second one leaves without waiting.
// Synchronised on the CLI's own lines, never on sleeps.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/spawn.h"
#include "integration/harness.h"

namespace pinpoint::testing {
namespace {

// A `pinpoint` running in the background, its stderr read line by line through a pipe. Every
// wait on it has a deadline: a CLI that hangs fails the test, never hangs it.
class BackgroundCli {
 public:
  static constexpr int kDeadlineMs = 120'000;

  BackgroundCli(const Harness& h, const std::vector<std::string>& args) {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    std::vector<std::string> argv = {BinDir() + "/pinpoint"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto pid = Spawn({.argv = argv,
                      .env = EnvironmentWith("PINPOINT_SOCKET", h.socket()),
                      .out = SpawnStream::File(h.dir() + "/bg.out"),
                      .err = SpawnStream::Fd(fds[1])});
    ::close(fds[1]);
    err_fd_ = fds[0];
    EXPECT_TRUE(pid.ok()) << pid.status().ToString();
    if (pid.ok()) pid_ = *pid;
  }
  ~BackgroundCli() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      WaitChild(pid_, kDeadlineMs);
    }
    ::close(err_fd_);
  }
  // Reads stderr until a line containing `text` (returned whole), or "" at its end or after
  // kDeadlineMs.
  std::string WaitForLine(const std::string& text) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kDeadlineMs);
    std::string line;
    char c;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{err_fd_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
        ADD_FAILURE() << "no line with '" << text << "' in time";
        return "";
      }
      if (::read(err_fd_, &c, 1) != 1) return "";
      if (c != '\n') {
        line += c;
        continue;
      }
      all_ += line + "\n";
      if (line.find(text) != std::string::npos) return line;
      line.clear();
    }
  }
  void Signal(int sig) { ::kill(pid_, sig); }
  // Its exit code; -1 (and a failure) when it has not exited within kDeadlineMs.
  int Exit() {
    std::optional<int> status = WaitChild(pid_, kDeadlineMs);
    pid_ = -1;
    EXPECT_TRUE(status.has_value()) << "pinpoint did not exit in time: killed";
    if (!status) return -1;
    return WIFEXITED(*status) ? WEXITSTATUS(*status) : 128 + WTERMSIG(*status);
  }
  const std::string& err() const { return all_; }

 private:
  pid_t pid_ = -1;
  int err_fd_ = -1;
  std::string all_;
};

int64_t JobIdIn(const std::string& line) {
  auto at = line.find("submitted job ");
  return at == std::string::npos ? 0 : std::atoll(line.c_str() + at + 14);
}

std::string StateOf(const Harness& h, int64_t id) {
  CliResult r = h.Cli({"--json", "show", std::to_string(id)});
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  return j.is_object() ? j["job"]["state"].get<std::string>() : "?";
}

TEST(SubmitWaitTest, CtrlCCancelsTheJobWaitsForItsEndAndExits130) {
  Harness h;
  h.StartDaemon();
  BackgroundCli cli(h, {"submit", "--wait", "--", "sleep", "600"});
  std::string line = cli.WaitForLine("submitted job");
  int64_t id = JobIdIn(line);
  ASSERT_GT(id, 0) << cli.err();
  EXPECT_NE(line.find("waiting"), std::string::npos) << line;
  cli.Signal(SIGINT);
  EXPECT_NE(cli.WaitForLine("cancelling job " + std::to_string(id)), "") << cli.err();
  EXPECT_EQ(cli.Exit(), 130) << cli.err();
  EXPECT_EQ(StateOf(h, id), "cancelled") << "it waited for the end";
}

TEST(SubmitWaitTest, SigtermCancelsToo) {
  Harness h;
  h.StartDaemon();
  BackgroundCli cli(h, {"submit", "--wait", "--", "sleep", "600"});
  int64_t id = JobIdIn(cli.WaitForLine("submitted job"));
  ASSERT_GT(id, 0) << cli.err();
  cli.Signal(SIGTERM);
  EXPECT_EQ(cli.Exit(), 143) << cli.err();
  EXPECT_EQ(StateOf(h, id), "cancelled");
}

TEST(SubmitWaitTest, SecondCtrlCLeavesWithoutWaiting) {
  // A job that ignores SIGTERM: its cancel lasts the grace period (an hour), so only leaving
  // ends the CLI. It says "up" through a FIFO once it ignores SIGTERM, and ends when told to.
  Harness h{"simulated:h100x2", R"("cancel_grace_ms": 3600000)"};
  h.StartDaemon();
  std::string fifo = h.dir() + "/ready";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  BackgroundCli cli(h, {"submit", "--wait", "--", "sh", "-c",
                        "trap '' TERM; echo up > " + fifo + "; read x < " + fifo});
  int64_t id = JobIdIn(cli.WaitForLine("submitted job"));
  ASSERT_GT(id, 0) << cli.err();
  {
    std::ifstream up(fifo);  // blocks until the job has trapped SIGTERM and written
    std::string word;
    up >> word;
    ASSERT_EQ(word, "up");
  }
  cli.Signal(SIGINT);
  ASSERT_NE(cli.WaitForLine("cancelling job"), "") << cli.err();
  cli.Signal(SIGINT);
  EXPECT_NE(cli.WaitForLine("left without waiting"), "") << cli.err();
  EXPECT_EQ(cli.Exit(), 130);
  EXPECT_EQ(StateOf(h, id), "running") << "still being cancelled";
  std::ofstream(fifo) << "bye\n";  // the job ends
  h.Cli({"wait", std::to_string(id)});
  EXPECT_NE(StateOf(h, id), "running");
}

// An array's --wait: Ctrl-C cancels every task (held ones and running ones) and waits for them all.
TEST(SubmitWaitTest, CtrlCCancelsTheWholeArray) {
  Harness h;
  h.StartDaemon();
  BackgroundCli cli(h, {"submit", "--wait", "--array", "1-3%2", "--", "sleep", "600"});
  std::string line = cli.WaitForLine("submitted array 1 (3 tasks: jobs 1 to 3)");
  ASSERT_NE(line, "") << cli.err();
  cli.Signal(SIGINT);
  EXPECT_NE(cli.WaitForLine("interrupted: cancelling array 1 (again to leave without waiting)"), "")
      << cli.err();
  EXPECT_EQ(cli.Exit(), 130) << cli.err();
  for (int64_t id = 1; id <= 3; ++id) EXPECT_EQ(StateOf(h, id), "cancelled") << "job " << id;
}

TEST(SubmitWaitTest, JobExitCodeWithoutSignals) {
  Harness h;
  h.StartDaemon();
  CliResult r = h.Cli({"submit", "--wait", "--", "sh", "-c", "exit 7"});
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_NE(r.err.find("submitted job "), std::string::npos) << r.err;
  EXPECT_NE(r.out.find(" failed (exit code 7)"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace pinpoint::testing

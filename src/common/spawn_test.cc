#include "common/spawn.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iterator>
#include <thread>

#include "common/process.h"
#include "common/test_dir.h"

namespace pinpoint {
namespace {

constexpr int kDeadlineMs = 60'000;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int ExitCode(std::optional<int> status) {
  return status && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
}

TEST(SpawnTest, StreamsGoWhereTheSpecSays) {
  TestDir dir;
  std::ofstream(dir.path() + "/in") << "from stdin\n";
  SpawnSpec s;
  s.argv = {"sh", "-c", "cat; echo to-out; echo to-err >&2; exit 3"};
  s.in = SpawnStream::File(dir.path() + "/in");
  s.out = SpawnStream::File(dir.path() + "/out");
  s.err = SpawnStream::File(dir.path() + "/err");
  auto pid = Spawn(s);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  EXPECT_EQ(ExitCode(WaitChild(*pid, kDeadlineMs)), 3);
  EXPECT_EQ(Read(dir.path() + "/out"), "from stdin\nto-out\n");
  EXPECT_EQ(Read(dir.path() + "/err"), "to-err\n");
}

TEST(SpawnTest, AppendsAndSharesOneFileForBothStreams) {
  TestDir dir;
  std::string log = dir.path() + "/log";
  std::ofstream(log) << "before\n";
  SpawnSpec s;
  s.argv = {"sh", "-c", "echo a; echo b >&2; echo c"};
  s.out = SpawnStream::File(log);
  s.err_to_out = true;
  s.append_output = true;
  auto pid = Spawn(s);
  ASSERT_TRUE(pid.ok());
  EXPECT_EQ(ExitCode(WaitChild(*pid, kDeadlineMs)), 0);
  EXPECT_EQ(Read(log), "before\na\nb\nc\n");
}

TEST(SpawnTest, TheChildHoldsOnlyTheDescriptorsItIsGiven) {
  int passed[2], leaked[2], hold[2];
  ASSERT_EQ(::pipe2(passed, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(leaked, O_NONBLOCK), 0);  // not close-on-exec: a fork would hand it on
  ASSERT_EQ(::pipe2(hold, O_CLOEXEC), 0);
  SpawnSpec s;
  // Writes to its fd 3, then waits on its stdin until the test closes it.
  s.argv = {"sh", "-c", "echo hello >&3; exec 3>&-; cat"};
  s.in = SpawnStream::Fd(hold[0]);
  s.pass_fds = {{passed[1], 3}};
  auto pid = Spawn(s);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  ::close(passed[1]);
  ::close(leaked[1]);
  ::close(hold[0]);
  char buf[16] = {};
  EXPECT_EQ(::read(passed[0], buf, sizeof(buf)), 6);
  EXPECT_STREQ(buf, "hello\n");
  // The child still runs (it waits on `hold`), yet holds no end of `leaked`: end of file, where a
  // writer left in the child would make the read fail with EAGAIN.
  EXPECT_EQ(::read(leaked[0], buf, sizeof(buf)), 0);
  EXPECT_TRUE(ProcessAlive(*pid));
  ::close(hold[1]);
  EXPECT_EQ(ExitCode(WaitChild(*pid, kDeadlineMs)), 0);
  ::close(passed[0]);
  ::close(leaked[0]);
}

TEST(SpawnTest, SearchesThePathOfItsEnvironmentAndSetsIt) {
  TestDir dir;
  std::string tool = dir.path() + "/pp-spawn-tool";
  std::ofstream(tool) << "#!/bin/sh\necho \"tool $PP_SPAWN_VAR\"\n";
  ASSERT_EQ(::chmod(tool.c_str(), 0755), 0);
  SpawnSpec s;
  s.argv = {"pp-spawn-tool"};
  s.env = std::vector<std::string>{"PATH=/nonexistent:" + dir.path(), "PP_SPAWN_VAR=set"};
  s.out = SpawnStream::File(dir.path() + "/out");
  auto pid = Spawn(s);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  EXPECT_EQ(ExitCode(WaitChild(*pid, kDeadlineMs)), 0);
  EXPECT_EQ(Read(dir.path() + "/out"), "tool set\n");
}

TEST(SpawnTest, AProgramThatCannotRunIsAnErrorNamingIt) {
  TestDir dir;
  SpawnSpec s;
  s.argv = {"pp-no-such-program"};
  auto missing = Spawn(s);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_NE(missing.status().message().find("pp-no-such-program"), std::string::npos);
  std::string plain = dir.path() + "/not-executable";
  std::ofstream(plain) << "echo no\n";
  s.argv = {plain};
  auto refused = Spawn(s);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kIo);
  s.argv = {"/bin/true"};
  s.out = SpawnStream::File(dir.path() + "/no-such-dir/out");
  EXPECT_FALSE(Spawn(s).ok()) << "an output that cannot be opened";
  s.out = {};
  s.pass_fds = {{0, 1}};
  EXPECT_EQ(Spawn(s).status().code(), Code::kInvalidArgument);
}

TEST(SpawnTest, NewSessionAndProcessGroup) {
  int hold[2];
  ASSERT_EQ(::pipe2(hold, O_CLOEXEC), 0);
  for (bool session : {false, true}) {
    SpawnSpec s;
    s.argv = {"cat"};
    s.in = SpawnStream::Fd(hold[0]);
    s.new_session = session;
    s.new_process_group = !session;
    auto pid = Spawn(s);
    ASSERT_TRUE(pid.ok());
    auto stat = ReadProcStat(*pid);
    ASSERT_TRUE(stat.has_value());
    EXPECT_EQ(stat->pgrp, *pid);
    EXPECT_EQ(stat->session == *pid, session);
    ::kill(*pid, SIGKILL);
    EXPECT_TRUE(WaitChild(*pid, kDeadlineMs).has_value());
  }
  ::close(hold[0]);
  ::close(hold[1]);
}

TEST(WaitChildTest, PastItsDeadlineTheChildIsKilledAndReaped) {
  int hold[2];
  ASSERT_EQ(::pipe2(hold, O_CLOEXEC), 0);
  SpawnSpec s;
  s.argv = {"cat"};
  s.in = SpawnStream::Fd(hold[0]);
  auto pid = Spawn(s);
  ASSERT_TRUE(pid.ok());
  EXPECT_FALSE(WaitChild(*pid, 0).has_value()) << "still running at its deadline";
  EXPECT_EQ(::waitpid(*pid, nullptr, WNOHANG), -1) << "already reaped";
  EXPECT_EQ(errno, ECHILD);
  ::close(hold[0]);
  ::close(hold[1]);
}

// What the fork-then-allocate children deadlocked on: another thread inside the allocator at the
// moment of the fork. Spawned children run nothing of this process, so each one starts.
TEST(SpawnTest, StartsWhileAnotherThreadAllocates) {
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    while (!stop.load()) {
      std::vector<std::string> v(64, std::string(100, 'x'));
      v.clear();
    }
  });
  int started = 0;
  for (int i = 0; i < 50; ++i) {
    auto pid = Spawn({.argv = {"/bin/true"}});
    if (pid.ok() && ExitCode(WaitChild(*pid, kDeadlineMs)) == 0) ++started;
  }
  stop = true;
  churn.join();
  EXPECT_EQ(started, 50);
}

TEST(EnvironmentWithTest, ReplacesOrAddsOneVariable) {
  ::setenv("PP_SPAWN_ENV_TEST", "old", 1);
  auto env = EnvironmentWith("PP_SPAWN_ENV_TEST", "new");
  ::unsetenv("PP_SPAWN_ENV_TEST");
  EXPECT_EQ(std::count(env.begin(), env.end(), "PP_SPAWN_ENV_TEST=new"), 1);
  EXPECT_EQ(std::count(env.begin(), env.end(), "PP_SPAWN_ENV_TEST=old"), 0);
  auto added = EnvironmentWith("PP_SPAWN_ENV_TEST2", "x");
  EXPECT_EQ(added.back(), "PP_SPAWN_ENV_TEST2=x");
}

}  // namespace
}  // namespace pinpoint

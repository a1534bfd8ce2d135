#include "bench/driver/proc.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <fstream>
#include <sstream>

#include "common/test_dir.h"

namespace pinpoint::bench {
namespace {

TEST(RunCommandTest, CollectsOutputErrorsAndExitCodeAndFeedsStdin) {
  auto r = RunCommand({"sh", "-c", "read x; echo out-$x; echo err >&2; exit 3"}, ChildEnvironment(),
                      10000, "in\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->out, "out-in\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_EQ(r->exit_code, 3);
}

TEST(RunCommandTest, AMissingProgramExitsWith127AndSaysSo) {
  auto r = RunCommand({"/nonexistent/prog"}, ChildEnvironment(), 10000);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 127);
  EXPECT_NE(r->err.find("cannot run /nonexistent/prog"), std::string::npos) << r->err;
}

TEST(RunCommandTest, ReturnsWhenTheCommandExitsEvenIfADaemonItLeftHoldsThePipes) {
  auto r = RunCommand({"sh", "-c", "sleep 30 & echo started"}, ChildEnvironment(), 20000);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->out, "started\n");
}

TEST(RunCommandTest, KillsACommandThatRunsPastItsTimeoutOrIsStopped) {
  auto r = RunCommand({"sleep", "30"}, ChildEnvironment(), 100);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("timed out"), std::string::npos);
  std::atomic<bool> stop{true};
  r = RunCommand({"sleep", "30"}, ChildEnvironment(), 30000, "", &stop);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("interrupted"), std::string::npos);
}

TEST(SpawnTest, RedirectsOutputAndWaitAllReportsEachExit) {
  TestDir dir;
  std::vector<pid_t> pids;
  for (int i = 0; i < 3; ++i) {
    SpawnSpec s;
    s.argv = {"sh", "-c", "echo copy " + std::to_string(i) + "; exit " + std::to_string(i)};
    s.env = ChildEnvironment();
    s.stdout_path = dir.path() + "/out" + std::to_string(i);
    auto pid = Spawn(s);
    ASSERT_TRUE(pid.ok());
    pids.push_back(*pid);
  }
  std::vector<int> codes(3, -1);
  std::vector<double> ends(3, 0);
  ASSERT_TRUE(WaitAll(pids, nullptr, [&](size_t i, int status, double t) {
                codes[i] = WEXITSTATUS(status);
                ends[i] = t;
              }).ok());
  EXPECT_EQ(codes, (std::vector<int>{0, 1, 2}));
  for (int i = 0; i < 3; ++i) {
    EXPECT_GT(ends[i], 1.7e9) << "epoch seconds";
    std::ifstream in(dir.path() + "/out" + std::to_string(i));
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), "copy " + std::to_string(i) + "\n");
  }
}

TEST(SpawnTest, WaitAllReturnsWhenStoppedAndKillAndReapEndsTheRest) {
  SpawnSpec s;
  s.argv = {"sleep", "30"};
  s.env = ChildEnvironment();
  auto pid = Spawn(s);
  ASSERT_TRUE(pid.ok());
  std::atomic<bool> stop{true};
  Status st = WaitAll({*pid}, &stop, [](size_t, int, double) {});
  EXPECT_EQ(st.message(), "interrupted");
  KillAndReap({*pid}, SIGTERM, 5000);
  EXPECT_EQ(::waitpid(*pid, nullptr, WNOHANG), -1) << "already reaped";
}

TEST(ChildEnvironmentTest, DropsMpsVariablesAndAddsExtras) {
  ::setenv("CUDA_MPS_PIPE_DIRECTORY", "/tmp/x", 1);
  ::setenv("PP_BENCH_TEST_VAR", "old", 1);
  std::vector<std::string> env =
      ChildEnvironment({"PP_BENCH_TEST_VAR=new", "CUDA_VISIBLE_DEVICES=GPU-1"});
  ::unsetenv("CUDA_MPS_PIPE_DIRECTORY");
  ::unsetenv("PP_BENCH_TEST_VAR");
  auto has = [&](const std::string& kv) {
    return std::find(env.begin(), env.end(), kv) != env.end();
  };
  EXPECT_TRUE(has("PP_BENCH_TEST_VAR=new"));
  EXPECT_FALSE(has("PP_BENCH_TEST_VAR=old"));
  EXPECT_TRUE(has("CUDA_VISIBLE_DEVICES=GPU-1"));
  for (const std::string& kv : env) EXPECT_NE(kv.rfind("CUDA_MPS_", 0), 0u) << kv;
}

TEST(ShellLineTest, QuotesWhatNeedsIt) {
  EXPECT_EQ(ShellLine({"pp-busy", "--iters", "5"}), "pp-busy --iters 5");
  EXPECT_EQ(ShellLine({"sh", "-c", "echo 'a b'"}), "sh -c 'echo '\\''a b'\\'''");
  EXPECT_EQ(ShellLine({""}), "''");
}

}  // namespace
}  // namespace pinpoint::bench

#include "common/command_runner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "common/fake_command_runner.h"
#include "common/process.h"

namespace pinpoint {
namespace {

using Ending = CommandResult::Ending;

CommandSpec Sh(const std::string& script, int timeout_ms = 10'000) {
  CommandSpec spec;
  spec.argv = {"sh", "-c", script};
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.timeout_ms = timeout_ms;
  return spec;
}

TEST(SubprocessRunnerTest, CollectsOutputErrorsAndExitCodeAndFeedsStdin) {
  CommandSpec spec = Sh("read x; echo out-$x; echo err >&2; exit 3");
  spec.stdin_text = "in\n";
  auto r = SubprocessRunner().Run(spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->ending, Ending::kExited);
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out-in\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_FALSE(r->Succeeded());
}

TEST(SubprocessRunnerTest, NoShellInterpretsTheArguments) {
  CommandSpec spec;
  spec.argv = {"echo", "$HOME; `id` | x"};
  spec.env = {"PATH=/usr/bin:/bin", "HOME=/root"};
  auto r = SubprocessRunner().Run(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "$HOME; `id` | x\n");
  EXPECT_TRUE(r->Succeeded());
}

TEST(SubprocessRunnerTest, ThePathSearchedIsTheCommandsOwn) {
  CommandSpec spec;
  spec.argv = {"sh", "-c", "echo $PATH"};
  spec.env = {"PATH=/nonexistent"};
  auto r = SubprocessRunner().Run(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 127) << "sh is not in /nonexistent";
  EXPECT_NE(r->err.find("cannot run sh"), std::string::npos) << r->err;
}

TEST(SubprocessRunnerTest, AMissingProgramExitsWith127AndSaysSo) {
  CommandSpec spec;
  spec.argv = {"/nonexistent/prog"};
  auto r = SubprocessRunner().Run(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 127);
  EXPECT_NE(r->err.find("cannot run /nonexistent/prog: No such file or directory"),
            std::string::npos)
      << r->err;
}

TEST(SubprocessRunnerTest, MergedStderrGoesToOut) {
  CommandSpec spec = Sh("echo one; echo two >&2");
  spec.merge_stderr = true;
  auto r = SubprocessRunner().Run(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "one\ntwo\n");
  EXPECT_EQ(r->err, "");
}

TEST(SubprocessRunnerTest, OutputIsBoundedAndTheRestDropped) {
  CommandSpec spec = Sh("head -c 1000000 /dev/zero; echo done >&2");
  spec.max_output_bytes = 1000;
  auto r = SubprocessRunner().Run(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->Succeeded()) << "the command is not blocked on a full pipe";
  EXPECT_EQ(r->out.size(), 1000u);
  EXPECT_TRUE(r->out_truncated);
  EXPECT_EQ(r->err, "done\n");
  EXPECT_FALSE(r->err_truncated);
}

TEST(SubprocessRunnerTest, AStdinTheCommandNeverReadsDoesNotBlock) {
  CommandSpec spec = Sh("exec sleep 30", 300);
  spec.stdin_text = std::string(1 << 20, 'x');  // far more than a pipe holds
  auto r = SubprocessRunner().Run(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ending, Ending::kTimedOut);
  spec = Sh("exit 0");
  spec.stdin_text = std::string(1 << 20, 'x');
  r = SubprocessRunner().Run(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->Succeeded()) << "a command that exits without reading its stdin";
}

TEST(SubprocessRunnerTest, ReturnsWhenTheCommandExitsEvenIfAProcessItLeftHoldsThePipes) {
  auto r = SubprocessRunner().Run(Sh("sleep 30 & echo started"));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->Succeeded());
  EXPECT_EQ(r->out, "started\n");
}

TEST(SubprocessRunnerTest, KillsTheProcessGroupOfACommandPastItsTimeout) {
  auto r = SubprocessRunner().Run(Sh("sleep 30 & echo $!; wait", 300));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ending, Ending::kTimedOut);
  EXPECT_EQ(r->exit_code, -1);
  int64_t child = std::stoll(r->out);
  EXPECT_TRUE(WaitForExit(child, 5000)) << "its child was killed with it";
}

TEST(SubprocessRunnerTest, StopInterrupts) {
  std::atomic<bool> stop{true};
  CommandSpec spec = Sh("sleep 30");
  spec.stop = &stop;
  auto r = SubprocessRunner().Run(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ending, Ending::kInterrupted);
}

TEST(SubprocessRunnerTest, ASignalEndsIt) {
  auto r = SubprocessRunner().Run(Sh("kill -TERM $$"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ending, Ending::kSignaled);
  EXPECT_EQ(r->term_signal, SIGTERM);
}

TEST(SubprocessRunnerTest, OnlyTheStandardDescriptorsAreInherited) {
  int leaked = ::fcntl(1, F_DUPFD, 100);  // not close-on-exec
  ASSERT_GE(leaked, 100);
  std::string fd = "/proc/self/fd/" + std::to_string(leaked);
  auto r =
      SubprocessRunner().Run(Sh("if [ -e " + fd + " ]; then echo inherited; else echo closed; fi"));
  ::close(leaked);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "closed\n");
}

TEST(SubprocessRunnerTest, RunsAsTheUserItIsGiven) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  CommandSpec spec = Sh("id -u; id -g; id -G");
  spec.run_as = RunAs{65534, 65533, {65533, 4242}};
  auto r = SubprocessRunner().Run(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "65534\n65533\n65533 4242\n");
}

TEST(SubprocessRunnerTest, EmptyCommandIsRefused) {
  EXPECT_EQ(SubprocessRunner().Run(CommandSpec{}).status().code(), Code::kInvalidArgument);
}

TEST(FakeCommandRunnerTest, RecordsAndAnswersAsScripted) {
  FakeCommandRunner fake;
  fake.SetHandler([](const CommandSpec& spec) -> Result<CommandResult> {
    if (spec.stdin_text == "hang\n") return FakeCommandRunner::TimedOut();
    return FakeCommandRunner::Exited(0, "answer to " + spec.stdin_text);
  });
  CommandSpec spec;
  spec.argv = {"tool"};
  spec.stdin_text = "ask\n";
  EXPECT_EQ(fake.Run(spec)->out, "answer to ask\n");
  spec.stdin_text = "hang\n";
  EXPECT_EQ(fake.Run(spec)->ending, Ending::kTimedOut);
  ASSERT_EQ(fake.runs().size(), 2u);
  EXPECT_EQ(fake.runs()[0].stdin_text, "ask\n");
}

}  // namespace
}  // namespace pinpoint

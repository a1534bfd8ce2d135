// AsyncCommand: a control command the main loop never waits on. Real children (/bin/sh), time
// given as values: no sleeps.
#include "mps/async_command.h"

#include <gtest/gtest.h>
#include <poll.h>

namespace pinpoint::mps {
namespace {

CommandSpec Shell(const std::string& script, int timeout_ms = 3600 * 1000) {
  CommandSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.timeout_ms = timeout_ms;
  spec.max_output_bytes = 1024;
  return spec;
}

// Looks at `c` as the loop does, waiting on its descriptors, until it has ended.
void RunToEnd(AsyncCommand& c, int64_t now_ms) {
  while (!c.Check(now_ms)) {
    std::vector<pollfd> fds;
    for (int fd : c.fds()) fds.push_back({fd, POLLIN, 0});
    ASSERT_FALSE(fds.empty());
    ASSERT_GT(::poll(fds.data(), fds.size(), 120'000), 0) << "the command made no progress in time";
  }
}

TEST(AsyncCommandTest, ItsInputIsWrittenAndItsOutputRead) {
  CommandSpec spec = Shell("read line; echo \"got $line\"; echo err >&2; exit 3");
  spec.stdin_text = "get_server_list\n";
  auto c = AsyncCommand::Start(spec, 0);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  RunToEnd(*c, 0);
  EXPECT_EQ(c->result().ending, CommandResult::Ending::kExited);
  EXPECT_EQ(c->result().exit_code, 3);
  EXPECT_EQ(c->result().out, "got get_server_list\nerr\n");
  EXPECT_FALSE(c->running());
  EXPECT_TRUE(c->fds().empty());
}

// Attack: a command that never answers. Start returns at once; Check never blocks; past the
// deadline it is killed with what it started.
TEST(AsyncCommandTest, ACommandThatNeverAnswersIsKilledAtItsDeadline) {
  auto c = AsyncCommand::Start(Shell("sleep 100000 & echo $!; wait", 1000), 0);
  ASSERT_TRUE(c.ok());
  std::vector<pollfd> fds;
  for (int fd : c->fds()) fds.push_back({fd, POLLIN, 0});
  ::poll(fds.data(), fds.size(), -1);  // its first line
  EXPECT_FALSE(c->Check(999)) << "within its deadline";
  ASSERT_FALSE(c->result().out.empty());
  int64_t grandchild = std::stoll(c->result().out);
  EXPECT_TRUE(c->Check(1000));
  EXPECT_EQ(c->result().ending, CommandResult::Ending::kTimedOut);
  auto r = CommandOutput(c->result(), "ctl", 1000, 1024);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ctl did not answer within 1000 ms"), std::string::npos);
  auto left = PidFd::Open(grandchild);
  EXPECT_TRUE(!left || left->WaitExit(10000)) << "what it started was killed too";
}

TEST(AsyncCommandTest, OutputPastTheBoundIsRefusedAndWhatItPrintsIsEscaped) {
  auto c = AsyncCommand::Start(Shell("head -c 5000 /dev/zero | tr '\\0' x"), 0);
  ASSERT_TRUE(c.ok());
  RunToEnd(*c, 0);
  EXPECT_TRUE(c->result().out_truncated);
  EXPECT_EQ(c->result().out.size(), 1024u);
  EXPECT_NE(CommandOutput(c->result(), "ctl", 1, 1024)
                .status()
                .message()
                .find("printed more than 1024 bytes"),
            std::string::npos);
  auto failed = AsyncCommand::Start(Shell("printf 'no\\033[2J such server'; exit 1"), 0);
  ASSERT_TRUE(failed.ok());
  RunToEnd(*failed, 0);
  auto r = CommandOutput(failed->result(), "ctl", 1, 1024);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ctl failed: no"), std::string::npos) << r.status().message();
  EXPECT_EQ(r.status().message().find('\x1b'), std::string::npos) << "what it printed is escaped";
}

TEST(AsyncCommandTest, AMissingProgramIsNotFound) {
  CommandSpec spec = Shell("");
  spec.argv = {"no-such-mps-control-binary"};
  auto c = AsyncCommand::Start(spec, 0);
  ASSERT_TRUE(c.ok());
  RunToEnd(*c, 0);
  EXPECT_EQ(c->result().exit_code, 127);
  EXPECT_NE(CommandOutput(c->result(), "ctl", 1, 1024).status().message().find("not found"),
            std::string::npos);
}

TEST(AsyncCommandTest, KillEndsItAtOnce) {
  auto c = AsyncCommand::Start(Shell("sleep 100000"), 0);
  ASSERT_TRUE(c.ok());
  c->Kill();
  EXPECT_FALSE(c->running());
  EXPECT_EQ(c->result().ending, CommandResult::Ending::kInterrupted);
}

}  // namespace
}  // namespace pinpoint::mps

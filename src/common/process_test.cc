#include "common/process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace pinpoint {
namespace {

TEST(ProcStatTest, ReadsThisProcess) {
  auto s = ReadProcStat(::getpid());
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->ppid, ::getppid());
  EXPECT_EQ(s->pgrp, ::getpgrp());
  EXPECT_EQ(s->session, ::getsid(0));
  EXPECT_GT(s->start_ticks, 0u);
  EXPECT_TRUE(ProcessAlive(::getpid()));
  EXPECT_FALSE(ReadProcStat(0).has_value());
  EXPECT_FALSE(ProcessAlive(999999999));
}

TEST(WaitForExitTest, SeesAChildExitAndTimesOutOnALiveOne) {
  pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  EXPECT_FALSE(WaitForExit(child, 50)) << "still running";
  ::kill(child, SIGKILL);
  EXPECT_TRUE(WaitForExit(child, 10000));
  EXPECT_FALSE(ProcessAlive(child)) << "a zombie is not alive";
  ::waitpid(child, nullptr, 0);
}

TEST(ProcUidsTest, ReadsThisProcessAndSeesASetUidMix) {
  auto mine = ReadProcUids(::getpid());
  ASSERT_TRUE(mine.has_value());
  EXPECT_TRUE(mine->AllAre(::getuid()));
  EXPECT_FALSE(ReadProcUids(0).has_value());
  ProcUids setuid_root{65534, 0, 0};  // a set-user-id-root program run by user 65534
  EXPECT_FALSE(setuid_root.AllAre(0));
  EXPECT_FALSE(setuid_root.AllAre(65534));
}

TEST(PidFdTest, SignalsExactlyTheProcessItOpenedEvenAfterItsPidIsFree) {
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  pid_t child = ::fork();
  if (child == 0) {
    ::close(go[1]);
    char c;
    ssize_t n = ::read(go[0], &c, 1);  // lives until the parent closes the pipe
    ::_exit(n == 1 ? 0 : 3);
  }
  ::close(go[0]);
  auto held = PidFd::Open(child);
  ASSERT_TRUE(held.has_value());
  EXPECT_TRUE(held->Alive());
  EXPECT_FALSE(held->WaitExit(0));
  ::close(go[1]);  // the child exits (a zombie until reaped)
  EXPECT_TRUE(held->WaitExit(60'000));
  EXPECT_FALSE(held->Alive()) << "a zombie counts as exited";
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(held->Signal(SIGKILL)) << "an exited process is no error";
  EXPECT_FALSE(PidFd::OpenVerified(::getpid(), [](int64_t) { return false; }).has_value());
  EXPECT_TRUE(PidFd::OpenVerified(::getpid(), [](int64_t) { return true; }).has_value());
}

TEST(CStringsTest, NullTerminated) {
  std::vector<std::string> v{"a", "bc"};
  auto c = CStrings(v);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_STREQ(c[1], "bc");
  EXPECT_EQ(c[2], nullptr);
}

}  // namespace
}  // namespace pinpoint

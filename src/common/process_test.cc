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

TEST(CStringsTest, NullTerminated) {
  std::vector<std::string> v{"a", "bc"};
  auto c = CStrings(v);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_STREQ(c[1], "bc");
  EXPECT_EQ(c[2], nullptr);
}

}  // namespace
}  // namespace pinpoint

#include "common/process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "common/spawn.h"

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

// `stat` (a /proc/<pid>/stat line) with its field `n` (1-based, as proc(5) counts) set to `value`.
std::string WithField(const std::string& stat, int n, const std::string& value) {
  size_t close = stat.rfind(')');
  std::istringstream rest(stat.substr(close + 1));
  std::string out = stat.substr(0, close + 1), field;
  for (int at = 3; rest >> field; ++at) out += " " + (at == n ? value : field);
  return out;
}

// `stat` without its fields past `last`.
std::string FieldsUpTo(const std::string& stat, int last) {
  size_t close = stat.rfind(')');
  std::istringstream rest(stat.substr(close + 1));
  std::string out = stat.substr(0, close + 1), field;
  for (int at = 3; at <= last && rest >> field; ++at) out += " " + field;
  return out;
}

// A shell started with environment `env` that has said it runs (so its exec is over) and waits
// on its stdin: ended, and reaped, when this goes.
class WaitingShell {
 public:
  explicit WaitingShell(std::vector<std::string> env) {
    int out[2], in[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(in, O_CLOEXEC) != 0) return;
    SpawnSpec spec;
    spec.argv = {"/bin/sh", "-c", "echo up; read x"};
    spec.env = std::move(env);
    spec.out = SpawnStream::Fd(out[1]);
    spec.in = SpawnStream::Fd(in[0]);
    auto child = Spawn(spec);
    ::close(out[1]);
    ::close(in[0]);
    out_ = out[0];
    in_ = in[1];
    if (!child.ok()) return;
    pollfd p{out_, POLLIN, 0};
    if (::poll(&p, 1, 60'000) == 1) {
      pid_ = *child;  // it said "up"
      return;
    }
    ::kill(*child, SIGKILL);
    (void)WaitChild(*child, 60'000);
  }
  ~WaitingShell() {
    ::close(in_);  // its read ends
    ::close(out_);
    if (pid_ > 0) {
      EXPECT_TRUE(WaitChild(pid_, 60'000).has_value());
    }
  }
  pid_t pid() const { return pid_; }  // 0: it did not start or say it runs

 private:
  pid_t pid_ = 0;
  int out_ = -1, in_ = -1;
};

// Inside an exec a process's environment reads empty, as that of a process started with none
// does; only the first is "between programs" (env_end is 0), so a job's process caught in its
// `exec` is not taken for another's, and a user's process with no environment is not the job's.
TEST(ProcStatTest, BetweenProgramsIsAnExecNotAnEmptyEnvironment) {
  std::ifstream in("/proc/self/stat");
  std::string self;
  ASSERT_TRUE(std::getline(in, self));
  ASSERT_EQ(WithField(self, 1, "x"), self) << "the helper keeps a line it changes nothing of";
  EXPECT_FALSE(StatBetweenPrograms(self));
  std::string in_exec = WithField(self, 51, "0");
  EXPECT_TRUE(StatBetweenPrograms(in_exec));
  EXPECT_TRUE(StatBetweenPrograms(FieldsUpTo(in_exec, 51))) << "a kernel that shows 51 fields";
  EXPECT_FALSE(StatBetweenPrograms(WithField(in_exec, 9, std::to_string(0x00200000))))
      << "a kernel thread has no environment at all";
  EXPECT_FALSE(StatBetweenPrograms(WithField(in_exec, 3, "Z")));
  EXPECT_FALSE(StatBetweenPrograms(WithField(WithField(in_exec, 26, "1"), 27, "1")))
      << "what a reader not let see its memory is shown of any process";
  EXPECT_TRUE(StatBetweenPrograms(WithField(in_exec, 26, "0"))) << "its new memory is still empty";
  EXPECT_FALSE(StatBetweenPrograms(FieldsUpTo(in_exec, 50))) << "no field 51";
  EXPECT_FALSE(StatBetweenPrograms("1 (x) S 0"));
  EXPECT_FALSE(StatBetweenPrograms(""));
  EXPECT_FALSE(ProcessBetweenPrograms(::getpid()));
  EXPECT_FALSE(ProcessBetweenPrograms(0));
  EXPECT_FALSE(ProcessBetweenPrograms(999999999));

  // A shell started with no environment, past its exec (it has said so): empty, not in between.
  WaitingShell shell({});
  ASSERT_GT(shell.pid(), 0) << "the shell did not say it runs";
  EXPECT_EQ(ReadProcFile(shell.pid(), "environ"), "");
  EXPECT_FALSE(ProcessBetweenPrograms(shell.pid()));
}

// A process makes its environment as large as its stack limit lets it (a quarter of it): a
// read of another user's /proc/<pid>/environ or cmdline by pinpointd stops at kMaxEnvironBytes.
TEST(ProcStatTest, AProcessFileIsReadNoFurtherThanTheBound) {
  rlimit stack{};
  ASSERT_EQ(::getrlimit(RLIMIT_STACK, &stack), 0);
  constexpr size_t kVar = 120 * 1024;  // under the kernel's 128 KiB for one string
  constexpr size_t kVars = 12;         // about 1.4 MiB in all
  if (stack.rlim_cur != RLIM_INFINITY && stack.rlim_cur / 4 < (kVars + 2) * kVar)
    GTEST_SKIP() << "the stack limit lets no process have an environment past the bound";
  std::vector<std::string> env;
  for (size_t i = 0; i < kVars; ++i)
    env.push_back("BIG" + std::to_string(i) + "=" + std::string(kVar, 'x'));
  WaitingShell shell(env);
  ASSERT_GT(shell.pid(), 0) << "the shell did not say it runs";
  EXPECT_EQ(ReadProcFile(shell.pid(), "environ").size(), kMaxEnvironBytes);
  EXPECT_EQ(ReadProcFileBounded(shell.pid(), "environ", 10).size(), 10u);
  EXPECT_EQ(ReadProcFile(shell.pid(), "environ").substr(0, 7), "BIG0=xx");
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

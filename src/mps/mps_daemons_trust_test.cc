// MpsDaemons never trusts what the device's user can write (docs/security.md): planted pids and
// FIFOs, servers of other users, a control daemon that does not answer; and its commands run as
// that user.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/process.h"
#include "common/spawn.h"
#include "mps/mps_daemons_fixture.h"

namespace pinpoint::mps {
namespace {

// --- what the device's user can write is never trusted (docs/security.md) -----------------------

// A child that lives until killed, for the tests below to see whether pinpoint signalled it.
// `ruid`/`euid`: ids to run as (root only); `argv0` and `pipe_dir`: what it pretends to be.
// Returns once the process runs /bin/sleep under its new name: until then /proc shows the test's
// name, and the code under test would rightly not take it for an MPS process.
pid_t Bystander(const char* argv0 = "bystander", const std::string& pipe_dir = "", int ruid = -1,
                int euid = -1) {
  int exec_done[2];
  if (::pipe2(exec_done, O_CLOEXEC) != 0) return -1;
  // Made before the fork: the child makes only async-signal-safe calls.
  std::string var = "CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir;
  char* env[] = {var.data(), nullptr};
  char* argv[] = {const_cast<char*>(argv0), const_cast<char*>("100000"), nullptr};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(exec_done[0]);
    if (ruid >= 0 && ::setresuid(ruid, euid, euid) != 0) ::_exit(120);
    ::execve("/bin/sleep", argv, env);
    ::_exit(127);
  }
  ::close(exec_done[1]);
  char byte;
  while (::read(exec_done[0], &byte, 1) < 0 && errno == EINTR) {
  }
  ::close(exec_done[0]);  // end of file: the execve closed the other end, or the child exited
  return pid;
}

bool StillRuns(pid_t pid) { return ::waitpid(pid, nullptr, WNOHANG) == 0; }

void EndBystander(pid_t pid) {
  ::kill(pid, SIGKILL);
  WaitChild(pid, 60'000);
}

TEST_F(MpsDaemonsTest, APidPlantedInThePipeDirectoryIsNeverSignalled) {
  MpsDaemons mps(Options(300), &clock_);
  uint32_t me = ::getuid();
  ASSERT_TRUE(Prepare(mps, Slice(0, me)).ok());
  int64_t control = Info(mps, 0).control_pid;
  pid_t victim = Bystander();
  // The user owns the pipe directory: they point the pid file at a process of their choice and
  // keep their daemon from quitting, so pinpointd has to kill it.
  std::ofstream(Pipe(0, me) + "/nvidia-cuda-mps-control.pid", std::ios::trunc) << victim << "\n";
  std::ofstream(root_ + "/ignore-quit") << "";
  mps.Release(Slice(0, me));
  mps.ResetDevice(0);
  clock_.AdvanceMs(300);  // the quit's deadline: a daemon that does not quit is killed
  mps.Poll(clock_.NowMs());
  EXPECT_TRUE(StillRuns(victim)) << "root signalled a pid read from a user-writable file";
  auto killed = PidFd::Open(control);  // not reaped yet: still its pid
  EXPECT_TRUE(killed && killed->WaitExit(10000))
      << "the daemon pinpointd started is the one it killed";
  EndBystander(victim);
}

TEST_F(MpsDaemonsTest, ADeadDaemonsServersAreKilledOnlyWhenTheyRunAsTheDeviceUser) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to run a process as another user";
  ASSERT_TRUE(Prepare(Slice(0, 0)).ok());
  std::string pipe = Pipe(0, 0);
  // A real orphan of the device user, and a process that only looks like one: started by user
  // 65534 through a set-user-id-root program (real uid 65534, effective uid 0).
  pid_t orphan = Bystander("nvidia-cuda-mps-server", pipe);
  pid_t impostor = Bystander("nvidia-cuda-mps-server", pipe, 65534, 0);
  int64_t control = ControlPid(0);
  ASSERT_EQ(::kill(static_cast<pid_t>(control), SIGKILL), 0);
  ASSERT_TRUE(WaitForExit(control, 60'000));
  auto events = mps_->Poll(clock_.NowMs());
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].kind, sharing::Event::Kind::kServerDied);
  mps_->Release(Slice(0, 0));  // the last client gone: the dead daemon's servers go too
  std::optional<int> ended = WaitChild(orphan, 60'000);
  ASSERT_TRUE(ended.has_value()) << "the orphan was not killed";
  int status = *ended;
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(StillRuns(impostor)) << "root killed a process that was not the device user's";
  EndBystander(impostor);
}

TEST_F(MpsDaemonsTest, ARestartedPinpointdAdoptsTheRunningDaemonInsteadOfStartingAnother) {
  uint32_t me = ::getuid();
  ASSERT_TRUE(Prepare(Slice(0, me)).ok());
  int64_t first = ControlPid(0);
  MpsDaemons restarted(Options(), &clock_);
  ASSERT_TRUE(Prepare(restarted, Slice(0, me)).ok());
  EXPECT_EQ(Info(restarted, 0).control_pid, first);
  std::string cmds = Commands(0, me);
  EXPECT_EQ(cmds.find("start"), cmds.rfind("start")) << cmds;
}

TEST_F(MpsDaemonsTest, AProcessOfAnotherUserIsNeverAdoptedAsTheDaemon) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to run a process as another user";
  ASSERT_TRUE(MakeDirs(Pipe(0, 0), 0700).ok());
  pid_t impostor = Bystander("nvidia-cuda-mps-control", Pipe(0, 0), 65534, 0);
  ASSERT_TRUE(Prepare(Slice(0, 0)).ok());
  EXPECT_NE(ControlPid(0), impostor);
  mps_->Release(Slice(0, 0));
  mps_->ResetDevice(0);
  EXPECT_TRUE(StillRuns(impostor));
  EndBystander(impostor);
}

// --- control commands: never waited on ---------------------------------------------------------

// Attack (issue 22 item 2): a user's MPS server that stops answering (a stopped daemon, a FIFO
// where it writes) while one of their jobs is cancelled. The safe cancel starts and returns; the
// loop looks at it without waiting, and past its deadline it is given up and its command killed.
TEST_F(MpsDaemonsTest, ASafeCancelNeverWaitsForAServerThatDoesNotAnswer) {
  MpsDaemons mps(Options(3600 * 1000),
                 &clock_);  // an hour: a command waited on would hang the test
  uint32_t me = ::getuid();
  ASSERT_TRUE(Prepare(mps, Slice(0, me)).ok());
  std::ofstream(Pipe(0, me) + "/fake_servers") << "4242\n";
  std::ofstream(root_ + "/hang-commands") << "";
  ASSERT_TRUE(mps.StopClients(JobSlice(0, me, 7), [] { return std::vector<int64_t>{556}; }).ok());
  EXPECT_TRUE(mps.Stopping(7));
  EXPECT_FALSE(mps.Stopping(8));
  ASSERT_FALSE(mps.WaitFds().empty()) << "the command is in the loop's poll set";
  mps.Poll(clock_.NowMs());
  EXPECT_TRUE(mps.Stopping(7)) << "still unanswered";
  clock_.AdvanceMs(3600 * 1000);
  mps.Poll(clock_.NowMs());
  EXPECT_FALSE(mps.Stopping(7)) << "given up at its deadline";
  EXPECT_EQ(Commands(0, me).find("get_client_list"), std::string::npos)
      << "nothing asked after no answer";
  ::unlink((root_ + "/hang-commands").c_str());
  mps.QuitAll();
}

TEST_F(MpsDaemonsTest, CommandsRunAsTheDevicesUser) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to run a daemon as another user";
  MpsDaemonsOptions o = Options();
  o.switch_user = true;
  ASSERT_EQ(::chmod(root_.c_str(), 0755), 0);  // the user's daemon reaches its directories
  mps_ = std::make_unique<MpsDaemons>(o, &clock_);
  ASSERT_TRUE(Prepare(Slice(0, 65534)).ok());
  std::ofstream(Pipe(0, 65534) + "/fake_servers") << "4242\n";
  std::ofstream(Pipe(0, 65534) + "/fake_clients") << "1\n";
  ASSERT_TRUE(
      mps_->StopClients(JobSlice(0, 65534, 1), [] { return std::vector<int64_t>{1}; }).ok());
  while (mps_->Stopping(1) && Wait(*mps_)) {
  }
  mps_->Release(Slice(0, 65534));
  mps_->ResetDevice(0);  // `quit`, run by the stand-in as uid 65534, ends the daemon
  ASSERT_TRUE(WaitFor(*mps_, sharing::Event::Kind::kServerQuit));
  EXPECT_EQ(
      Commands(0, 65534),
      "start 65534\nget_server_list \nget_client_list 4242\nterminate_client 4242 1\nquit \n");
  auto uids = ReadFile(Pipe(0, 65534) + "/fake_command_uids");
  ASSERT_TRUE(uids.ok());
  EXPECT_EQ(*uids, "65534\n65534\n65534\n65534\n") << "never as root";
}

}  // namespace
}  // namespace pinpoint::mps

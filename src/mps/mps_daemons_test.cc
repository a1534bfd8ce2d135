// MpsDaemons against a stand-in control binary (tests/fake_mps/nvidia-cuda-mps-control), so the
// real process handling, pid files, commands and log scanning run in CI without a GPU.
#include "mps/mps_daemons.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/file_util.h"
#include "common/process.h"
#include "common/test_dir.h"
#include "mps/mps_daemons_fixture.h"

namespace pinpoint::mps {
namespace {

TEST_F(MpsDaemonsTest, FirstClientStartsOneDaemonPerDeviceWithItsOwnDirectories) {
  uint32_t me = ::getuid();
  auto env = Prepare(Slice(0, me));
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_EQ(env->at("CUDA_MPS_PIPE_DIRECTORY"), Pipe(0, me));
  EXPECT_EQ(env->at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=2048M");
  ASSERT_TRUE(Prepare(Slice(0, me)).ok());
  ASSERT_TRUE(Prepare(Slice(1, me)).ok());
  EXPECT_EQ(*ReadFile(Pipe(0, me) + "/fake_visible_devices"), "GPU-0\n")
      << "the daemon sees only its GPU";
  std::string cmds = Commands(0, me);
  EXPECT_EQ(cmds.find("start"), cmds.rfind("start")) << "one daemon for two clients: " << cmds;
  struct stat st {};
  ASSERT_EQ(::stat(Pipe(0, me).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u) << "private to its user";
  ASSERT_EQ(::stat((root_ + "/dev0").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0755, 0755u) << "the user's clients must reach their pipe directory";
  EXPECT_TRUE(Alive(ControlPid(0)));
  EXPECT_NE(ControlPid(0), ControlPid(1));
}

TEST_F(MpsDaemonsTest, AnotherUserWaitsForTheDeviceToDrainThenGetsAFreshDaemon) {
  uint32_t me = ::getuid();
  uint32_t other = me + 1;
  ASSERT_TRUE(Prepare(Slice(0, me)).ok());
  int64_t first = ControlPid(0);
  auto refused = Prepare(Slice(0, other));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kFailedPrecondition);
  mps_->Release(Slice(0, me));
  auto env = Prepare(Slice(0, other));
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_EQ(env->at("CUDA_MPS_PIPE_DIRECTORY"), Pipe(0, other));
  EXPECT_NE(Commands(0, me).find("quit"), std::string::npos) << "the first user's daemon was quit";
  EXPECT_NE(ControlPid(0), first);
  EXPECT_EQ(Info(*mps_, 0).uid, other);
}

TEST_F(MpsDaemonsTest, IdleDeviceIsHandedToTheNextUser) {
  uint32_t me = ::getuid();
  ASSERT_TRUE(Prepare(Slice(0, me)).ok());
  int64_t first = ControlPid(0);
  mps_->Release(Slice(0, me));
  // Same user again after release: the daemon is reused.
  ASSERT_TRUE(Prepare(Slice(0, me)).ok());
  EXPECT_EQ(ControlPid(0), first);
  mps_->Release(Slice(0, me));
  mps_->ResetDevice(0);
  ASSERT_TRUE(WaitFor(*mps_, sharing::Event::Kind::kServerQuit));
  EXPECT_NE(Commands(0, me).find("quit"), std::string::npos);
  EXPECT_TRUE(mps_->Servers().empty());
}

TEST_F(MpsDaemonsTest, StopClientsAsksTheServerForExactlyTheJobsClients) {
  uint32_t me = ::getuid();
  ASSERT_TRUE(Prepare(Slice(0, me)).ok());
  std::ofstream(Pipe(0, me) + "/fake_servers") << "4242\n";
  std::ofstream(Pipe(0, me) + "/fake_clients") << "555\n556\n";
  ASSERT_TRUE(mps_->StopClients(JobSlice(0, me, 1),
                                [] {
                                  return std::vector<int64_t>{556, 999};
                                })
                  .ok());
  while (mps_->Stopping(1) && Wait(*mps_)) {
  }
  EXPECT_FALSE(mps_->Stopping(1));
  std::string cmds = Commands(0, me);
  EXPECT_NE(cmds.find("get_client_list 4242"), std::string::npos) << cmds;
  EXPECT_NE(cmds.find("terminate_client 4242 556"), std::string::npos) << cmds;
  EXPECT_EQ(cmds.find("terminate_client 4242 555"), std::string::npos)
      << "a neighbour is untouched";
  EXPECT_EQ(cmds.find("999"), std::string::npos);
}

TEST_F(MpsDaemonsTest, CrashedControlDaemonIsNoticedAndRestarted) {
  uint32_t me = ::getuid();
  ASSERT_TRUE(Prepare(Slice(0, me)).ok());
  int64_t first = ControlPid(0);
  ASSERT_EQ(::kill(static_cast<pid_t>(first), SIGKILL), 0);
  ASSERT_TRUE(WaitForExit(first, 60'000));  // until the kernel has ended it
  auto events = mps_->Poll(clock_.NowMs());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, sharing::Event::Kind::kServerDied);
  ASSERT_TRUE(WaitFor(*mps_, sharing::Event::Kind::kServerReady)) << "started again";
  int64_t second = ControlPid(0);
  EXPECT_NE(second, first);
  EXPECT_TRUE(Alive(second));
  EXPECT_EQ(Info(*mps_, 0).restarts, 1);
}

TEST_F(MpsDaemonsTest, FatalFaultLinesInTheServerLogAreReportedOnce) {
  uint32_t me = ::getuid();
  ASSERT_TRUE(Prepare(Slice(0, me)).ok());
  std::string log = root_ + "/dev0/" + std::to_string(me) + "/log/server.log";
  std::ofstream(log, std::ios::app)
      << "[2026-11-22 03:44:56.026 Server   427] Client {PID: 528, Context ID: 0} connected\n";
  EXPECT_TRUE(mps_->Poll(clock_.NowMs()).empty());
  std::ofstream(log, std::ios::app) << "[2026-11-22 03:44:56.307 Server   427] Client {PID: 505, "
                                       "Context: 1} encountered a fatal GPU error.\n";
  auto events = mps_->Poll(clock_.NowMs());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, sharing::Event::Kind::kFault);
  EXPECT_NE(events[0].detail.find("PID: 505"), std::string::npos);
  EXPECT_EQ(events[0].uid, me) << "the claim is that user's";
  EXPECT_TRUE(mps_->Poll(clock_.NowMs()).empty());
  // In the foreground (-f), MPS writes the servers' lines to the control daemon's output.
  std::ofstream(root_ + "/dev0/" + std::to_string(me) + "/log/control-foreground.log",
                std::ios::app)
      << "[2026-11-23 12:14:38.900 Server  2] Client {PID: 77, Context: 1} encountered a fatal GPU "
         "error.\n";
  events = mps_->Poll(clock_.NowMs());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(events[0].detail.find("PID: 77"), std::string::npos);
}

// A restarted daemon truncates its output file: a fault among its first lines is reported even
// when the file has regrown past where the previous daemon's file ended before the first poll.
TEST_F(MpsDaemonsTest, AFaultEarlyInARestartedDaemonsOutputIsReported) {
  uint32_t me = ::getuid();
  std::string dir = root_ + "/dev0/" + std::to_string(me) + "/log";
  ASSERT_TRUE(MakeDirs(dir, 0700).ok());
  std::string log = dir + "/control-foreground.log";
  std::ofstream(log) << std::string(4000, 'x') << "\n";  // the previous daemon's output
  ASSERT_TRUE(Prepare(Slice(0, me)).ok());
  std::ofstream(log, std::ios::app) << "[2026-11-23 16:16:12.000 Server  3] Client {PID: 88, "
                                       "Context: 1} encountered a fatal GPU error.\n"
                                    << std::string(8000, 'y') << "\n";
  auto events = mps_->Poll(clock_.NowMs());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, sharing::Event::Kind::kFault);
  EXPECT_NE(events[0].detail.find("PID: 88"), std::string::npos);
}

TEST_F(MpsDaemonsTest, IdleDaemonQuitsAfterTheConfiguredTime) {
  uint32_t me = ::getuid();
  ASSERT_TRUE(Prepare(Slice(0, me)).ok());
  int64_t pid = ControlPid(0);
  clock_.AdvanceMs(120000);
  EXPECT_TRUE(mps_->Poll(clock_.NowMs()).empty()) << "a daemon with a client never idles out";
  mps_->Release(Slice(0, me));
  clock_.AdvanceMs(59999);
  EXPECT_TRUE(mps_->Poll(clock_.NowMs()).empty());
  clock_.AdvanceMs(1);
  EXPECT_TRUE(mps_->Poll(clock_.NowMs()).empty()) << "asked to quit; gone later";
  ASSERT_TRUE(WaitFor(*mps_, sharing::Event::Kind::kServerQuit));
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_FALSE(Alive(pid));
}

TEST_F(MpsDaemonsTest, StartFailureIsUnavailableWithTheReason) {
  std::ofstream(root_ + "/fail-start") << "";
  auto env = Prepare(Slice(0, ::getuid()));
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.status().code(), Code::kUnavailable);
  EXPECT_NE(env.status().message().find("fake: cannot start"), std::string::npos)
      << env.status().message();
}

TEST(MpsDaemonsLongPathTest, TooLongPipeDirectoryIsRefusedWithTheReason) {
  FakeClock clock;
  MpsDaemonsOptions o;
  o.mps_root = "/tmp/" + std::string(90, 'x');
  o.control_binary = PINPOINT_SOURCE_DIR "/tests/fake_mps/nvidia-cuda-mps-control";
  MpsDaemons mps(o, &clock);
  sharing::Slice s;
  s.device_uuid = "GPU-0";
  auto env = mps.Prepare(s);
  ASSERT_FALSE(env.ok());
  EXPECT_NE(env.status().message().find("too long for a Unix socket"), std::string::npos);
}

// Attack (issue 22 item 2): a control daemon that never gets ready. The start is never waited
// on: the job is told to wait, and once the deadline has passed, why it cannot run.
TEST_F(MpsDaemonsTest, HungControlBinaryIsUnavailableNotAHungDaemon) {
  MpsDaemons mps(Options(3600 * 1000), &clock_);  // an hour: a start waited on would hang the test
  std::ofstream(root_ + "/hang-start") << "";
  auto env = mps.Prepare(Slice(0, ::getuid()));
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.status().code(), Code::kFailedPrecondition) << env.status().ToString();
  EXPECT_NE(env.status().message().find("is starting"), std::string::npos)
      << env.status().message();
  clock_.AdvanceMs(3600 * 1000);
  auto events = mps.Poll(clock_.NowMs());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, sharing::Event::Kind::kServerStartFailed);
  env = mps.Prepare(Slice(0, ::getuid()));
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.status().code(), Code::kUnavailable);
  EXPECT_NE(env.status().message().find("did not answer"), std::string::npos)
      << env.status().message();
}

// A dead daemon's control socket is still in the pipe directory when the next daemon starts.
// Seeing it before the child has removed it would report a daemon ready that is not listening,
// and its first clients would run without MPS (seen on an H100 after restarts).
TEST_F(MpsDaemonsTest, ADeadDaemonsSocketIsNotTakenForTheNewDaemonsReadiness) {
  MpsDaemons mps(Options(300), &clock_);
  ASSERT_TRUE(MakeDirs(Pipe(0, ::getuid()), 0700).ok());
  std::ofstream(Pipe(0, ::getuid()) + "/control") << "";
  std::ofstream(root_ + "/hang-start") << "";  // the new daemon never makes its socket
  for (int i = 0; i < 5; ++i) {
    auto env = mps.Prepare(Slice(0, ::getuid()));
    ASSERT_FALSE(env.ok()) << "try " << i << ": ready on the old daemon's socket";
    // Until the child has removed the old socket (just before its exec), and once more after: a
    // child that got there before the first look leaves nothing to wake a poll without a bound.
    bool stale = true;
    while (stale) {
      stale = std::filesystem::exists(Pipe(0, ::getuid()) + "/control");
      ASSERT_TRUE(Wait(mps, 10));
      ASSERT_FALSE(Info(mps, 0).running) << "try " << i << ": ready on the old daemon's socket";
    }
    clock_.AdvanceMs(300);
    mps.Poll(clock_.NowMs());
    env = mps.Prepare(Slice(0, ::getuid()));
    ASSERT_FALSE(env.ok());
    EXPECT_NE(env.status().message().find("did not answer"), std::string::npos)
        << env.status().message();
    std::ofstream(Pipe(0, ::getuid()) + "/control") << "";
  }
}

// The daemon's pid and log files are in directories its user owns: FIFOs planted there (at the
// pid file, the output, the log) wedged the daemon (a job 'running' for minutes on an H100). The
// directories are made anew before each start, so the daemon starts as if nothing were there.
TEST_F(MpsDaemonsTest, FifosPlantedWhereTheDaemonWritesAreGoneBeforeItStarts) {
  MpsDaemons mps(Options(2000), &clock_);
  std::string base = root_ + "/dev0/" + std::to_string(::getuid());
  for (const char* dir : {"/log", "/pipe"}) ASSERT_TRUE(MakeDirs(base + dir, 0700).ok());
  for (const char* fifo :
       {"/log/control-foreground.log", "/log/control.log", "/pipe/nvidia-cuda-mps-control.pid"})
    ASSERT_EQ(::mkfifo((base + fifo).c_str(), 0600), 0) << fifo;
  ASSERT_EQ(::symlink("/etc", (base + "/pipe/link").c_str()), 0);
  auto env = Prepare(mps, Slice(0, ::getuid()));
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  struct stat st {};
  for (const char* fifo :
       {"/log/control-foreground.log", "/log/control.log", "/pipe/nvidia-cuda-mps-control.pid"})
    EXPECT_FALSE(::lstat((base + fifo).c_str(), &st) == 0 && S_ISFIFO(st.st_mode))
        << fifo << " is still a FIFO";
  EXPECT_NE(::lstat((base + "/pipe/link").c_str(), &st), 0) << "the link was removed, not followed";
  EXPECT_EQ(::access("/etc/passwd", F_OK), 0);
  mps.QuitAll();
}

// Attack: a user stops their control daemon, or wedges it on a FIFO where it writes. A probe the
// main loop never waits on finds it; after the deadline it and its servers are killed, the event
// says so, and the device takes a fresh daemon.
TEST_F(MpsDaemonsTest, AControlDaemonThatStopsAnsweringIsKilledAndTheDeviceFreed) {
  MpsDaemonsOptions o = Options(10000);
  o.probe_interval_ms = 1000;
  o.probe_timeout_ms = 5000;
  MpsDaemons mps(o, &clock_);
  ASSERT_TRUE(Prepare(mps, Slice(0, ::getuid())).ok());
  int64_t control = Info(mps, 0).control_pid;
  ASSERT_GT(control, 0);
  std::ofstream(root_ + "/hang-commands") << "";
  EXPECT_TRUE(mps.Poll(clock_.NowMs()).empty()) << "the probe starts; nothing is waited on";
  clock_.AdvanceMs(4999);
  EXPECT_TRUE(mps.Poll(clock_.NowMs()).empty()) << "within the deadline";
  clock_.AdvanceMs(1);
  auto events = mps.Poll(clock_.NowMs());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, sharing::Event::Kind::kServerUnresponsive);
  EXPECT_EQ(events[0].uid, ::getuid());
  EXPECT_NE(events[0].detail.find("did not answer within 5000 ms"), std::string::npos)
      << events[0].detail;
  EXPECT_EQ(Info(mps, 0).device_index, -1) << "the device has no daemon now";
  auto gone = PidFd::Open(control);
  EXPECT_TRUE(!gone || gone->WaitExit(5000)) << "the control daemon was killed";
  ::unlink((root_ + "/hang-commands").c_str());
  ASSERT_TRUE(Prepare(mps, Slice(0, ::getuid())).ok()) << "the next client gets a fresh daemon";
  EXPECT_NE(Info(mps, 0).control_pid, control);
  mps.QuitAll();
}

// A probe killed at its command deadline (shorter than the probe's) did not answer either.
TEST_F(MpsDaemonsTest, AProbeKilledAtItsCommandDeadlineIsNoAnswer) {
  MpsDaemonsOptions o = Options(1000);
  o.probe_interval_ms = 1000;
  o.probe_timeout_ms = 5000;
  MpsDaemons mps(o, &clock_);
  ASSERT_TRUE(Prepare(mps, Slice(0, ::getuid())).ok());
  std::ofstream(root_ + "/hang-commands") << "";
  EXPECT_TRUE(mps.Poll(clock_.NowMs()).empty()) << "the probe starts";
  clock_.AdvanceMs(1000);
  auto events = mps.Poll(clock_.NowMs());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, sharing::Event::Kind::kServerUnresponsive);
  ::unlink((root_ + "/hang-commands").c_str());
  mps.QuitAll();
}

TEST_F(MpsDaemonsTest, PrestartRunsADaemonWithoutAClient) {
  ASSERT_TRUE(mps_->Prestart(Slice(0, ::getuid())).ok());
  ASSERT_TRUE(WaitFor(*mps_, sharing::Event::Kind::kServerReady));
  EXPECT_EQ(Info(*mps_, 0).clients, 0);
  EXPECT_TRUE(Info(*mps_, 0).running);
  ASSERT_TRUE(Prepare(Slice(0, ::getuid())).ok());
  std::string cmds = Commands(0, ::getuid());
  EXPECT_EQ(cmds.find("start"), cmds.rfind("start")) << "the prestarted daemon is reused";
  mps_->Release(Slice(0, ::getuid()));
  clock_.AdvanceMs(10 * 60000);
  EXPECT_TRUE(mps_->Poll(clock_.NowMs()).empty()) << "a prestarted daemon is kept when idle";
}

TEST(MpsDaemonsStaticTest, UnusableNamesTheMissingBinary) {
  EXPECT_NE(MpsDaemons::Unusable("no-such-mps-control-binary").find("not in PATH"),
            std::string::npos);
  EXPECT_EQ(MpsDaemons::Unusable("/bin/sh"), "");
}

}  // namespace
}  // namespace pinpoint::mps

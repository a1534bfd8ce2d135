#include "launch/process_launcher.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <tuple>

#include "common/file_util.h"
#include "common/process.h"
#include "common/test_dir.h"
#include "launch/process_launcher_fixture.h"
#include "launch/shim.h"

namespace pinpoint::launch {
namespace {

TEST_F(ProcessLauncherTest, RecordsExitCodeAndOutput) {
  auto h = launcher_.Launch(Spec(1, {"sh", "-c", "echo out $FOO; echo err >&2; exit 3"}));
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_GT(h->pid_start_ticks, 0u);
  WaitSupervisor(*h);
  auto st = launcher_.Poll(*h);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->kind, ExitStatus::Kind::kExited);
  EXPECT_EQ(st->exit_code, 3);
  EXPECT_EQ(ReadLog(*h, kStdoutFile), "out bar\n");
  EXPECT_EQ(ReadLog(*h, kStderrFile), "err\n");
}

TEST_F(ProcessLauncherTest, AJobWithCpusRunsOnThemAlone) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(::sched_getaffinity(0, sizeof(mine), &mine), 0);
  int last = -1;  // a CPU this test may use; the job gets it alone
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &mine)) last = cpu;
  ASSERT_GE(last, 0);
  LaunchSpec spec = Spec(9, {"sh", "-c", "grep Cpus_allowed_list /proc/self/status"});
  spec.cpus = {last};
  auto h = launcher_.Launch(spec);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  WaitSupervisor(*h);
  EXPECT_EQ(ReadLog(*h, kStdoutFile), "Cpus_allowed_list:\t" + std::to_string(last) + "\n");
  auto any = launcher_.Launch(Spec(10, {"sh", "-c", "grep Cpus_allowed_list /proc/self/status"}));
  ASSERT_TRUE(any.ok());
  WaitSupervisor(*any);
  EXPECT_EQ(ReadLog(*any, kStdoutFile).find("Cpus_allowed_list:\t" + std::to_string(last) + "\n"),
            CPU_COUNT(&mine) > 1 ? std::string::npos : 0u)
      << "without cpus, the job keeps every CPU it may use";
}

// A site may pin pinpointd to a housekeeping CPU (systemd CPUAffinity=; stall_bench.sh does):
// its jobs do not inherit that. Without cpus of its own a job may use every CPU of the node.
TEST_F(ProcessLauncherTest, AJobDoesNotInheritTheDaemonsCpus) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(::sched_getaffinity(0, sizeof(mine), &mine), 0);
  if (CPU_COUNT(&mine) < 2) GTEST_SKIP() << "one CPU: nothing to tell apart";
  int first = 0;
  while (!CPU_ISSET(first, &mine)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(::sched_setaffinity(0, sizeof(one), &one), 0);  // the daemon, pinned
  auto h = launcher_.Launch(Spec(11, {"sh", "-c", "grep Cpus_allowed_list /proc/self/status"}));
  ASSERT_EQ(::sched_setaffinity(0, sizeof(mine), &mine), 0);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  WaitSupervisor(*h);
  std::string seen = ReadLog(*h, kStdoutFile);
  EXPECT_NE(seen, "Cpus_allowed_list:\t" + std::to_string(first) + "\n")
      << "the daemon's CPU alone";
  EXPECT_EQ(seen.rfind("Cpus_allowed_list:\t", 0), 0u) << seen;
}

TEST_F(ProcessLauncherTest, MissingProgramIsLaunchFailure) {
  auto h = launcher_.Launch(Spec(2, {"/nonexistent/program"}));
  ASSERT_TRUE(h.ok());
  WaitSupervisor(*h);
  auto st = launcher_.Poll(*h);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->kind, ExitStatus::Kind::kLaunchFailed);
  EXPECT_NE(st->error.find("cannot run '/nonexistent/program'"), std::string::npos) << st->error;
  EXPECT_NE(ReadLog(*h, kStderrFile).find("No such file"), std::string::npos);
}

TEST_F(ProcessLauncherTest, BadWorkingDirectoryIsLaunchFailure) {
  LaunchSpec s = Spec(3, {"true"});
  s.cwd = "/nonexistent-dir";
  auto h = launcher_.Launch(s);
  ASSERT_TRUE(h.ok());
  WaitSupervisor(*h);
  auto st = launcher_.Poll(*h);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->kind, ExitStatus::Kind::kLaunchFailed);
  EXPECT_NE(st->error.find("/nonexistent-dir"), std::string::npos);
}

TEST_F(ProcessLauncherTest, RunningJobPollsAsAliveFromAnotherLauncherAndEndsBySignal) {
  std::string fifo = MakeFifo();
  auto h = launcher_.Launch(Spec(4, {"sh", "-c", "echo up > " + fifo + "; exec sleep 1000"}));
  ASSERT_TRUE(h.ok());
  WaitReady(fifo);
  // A restarted daemon has a fresh launcher that did not fork the job.
  ProcessLauncher other(PINPOINT_BIN_DIR "/pinpoint-shim", ProcessKeys(), Unbudgeted());
  EXPECT_FALSE(other.Poll(*h).has_value());
  ASSERT_TRUE(other.Signal(*h, SIGTERM).ok());
  WaitSupervisor(*h);
  auto st = other.Poll(*h);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->kind, ExitStatus::Kind::kSignaled);
  EXPECT_EQ(st->term_signal, SIGTERM);
}

// Starts `script` (which runs "$READY" once it is up), then SIGKILLs its supervisor only.
TEST_F(ProcessLauncherTest, KilledSupervisorLeavesAnOrphanThatSignalStillReaches) {
  // A child that outlives its shell in another process group of the session, as a job's
  // helper processes may.
  JobHandle orphan = OrphanJob(5, "set -m; sleep 1000 & eval \"$READY\"; exec sleep 1000");
  const JobHandle* h = &orphan;
  // The job still runs: it is no end, and a restarted daemon's launcher sees the same.
  ProcessLauncher other(PINPOINT_BIN_DIR "/pinpoint-shim", ProcessKeys(), Unbudgeted());
  for (Launcher* l : {static_cast<Launcher*>(&launcher_), static_cast<Launcher*>(&other)}) {
    auto st = l->Poll(*h);
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->kind, ExitStatus::Kind::kOrphaned);
  }
  auto pids = other.JobProcesses(*h);
  ASSERT_EQ(pids.size(), 2u) << "the job and its background sleep, found without the supervisor";
  ASSERT_TRUE(other.Signal(*h, SIGKILL).ok());
  for (int64_t pid : pids) ASSERT_TRUE(WaitForExit(pid, 60'000)) << "pid " << pid << " survived";
  auto st = other.Poll(*h);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->kind, ExitStatus::Kind::kNoStatus);
  EXPECT_TRUE(other.JobProcesses(*h).empty());
}

TEST_F(ProcessLauncherTest, OrphanSignalSparesProcessesOutsideTheJob) {
  JobHandle orphan = OrphanJob(13, "eval \"$READY\"; exec sleep 1000");
  const JobHandle* h = &orphan;
  int64_t job = ReadJobPid(h->job_dir);
  // The handle of a supervisor whose pid was reused: its session is no longer the job's.
  JobHandle reused = *h;
  reused.pid = ::getpid();
  reused.pid_start_ticks = ProcessStartTicks(::getpid()) + 1;
  // Its session no longer names the job; the job's key still finds the job's own process, and
  // only it: never the process that reused the pid (this test, which lives on to check).
  EXPECT_EQ(launcher_.JobProcesses(reused), std::vector<int64_t>{job});
  ASSERT_TRUE(launcher_.Signal(reused, SIGKILL).ok());
  ASSERT_TRUE(WaitForExit(job, 60'000));
  EXPECT_EQ(launcher_.Poll(*h)->kind, ExitStatus::Kind::kNoStatus);
}

TEST_F(ProcessLauncherTest, NeverLaunchedWithoutLockFile) {
  JobHandle h;
  h.job_id = 6;
  h.job_dir = dir_ + "/jobs/6";
  auto st = launcher_.Poll(h);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->kind, ExitStatus::Kind::kNeverLaunched);
}

// A supervisor that lives (holds the lock) but has not recorded the job's pid yet: the job runs
// nothing, and a signal sent now would only reach the supervisor, which ignores it. Signal says
// so instead of answering ok for a signal nobody got.
TEST_F(ProcessLauncherTest, ASignalBeforeTheJobStartedIsRefusedAsNotYet) {
  JobHandle h;
  h.job_id = 9;
  h.job_dir = dir_ + "/jobs/9";
  ASSERT_EQ(std::system(("mkdir -p " + h.job_dir).c_str()), 0);
  int lock = ::open((h.job_dir + "/" + kLockFile).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(lock, 0);
  ASSERT_EQ(::flock(lock, LOCK_EX), 0);  // the supervisor's
  Status s = launcher_.Signal(h, SIGTERM);
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
  EXPECT_EQ(s.message(), "job 9 has not started yet");
  s = launcher_.SignalLeader(h, SIGUSR1);
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
  ::close(lock);
  EXPECT_TRUE(launcher_.Signal(h, SIGTERM).ok()) << "no supervisor: nothing to reach";
  s = launcher_.SignalLeader(h, SIGUSR1);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition)
      << "no supervisor: its leader's pid may be another's now";
}

TEST_F(ProcessLauncherTest, DoesNotSignalAReusedPid) {
  std::string fifo = MakeFifo();
  auto h = launcher_.Launch(Spec(7, {"sh", "-c", "echo up > " + fifo + "; exec sleep 1000"}));
  ASSERT_TRUE(h.ok());
  WaitReady(fifo);
  JobHandle stale = *h;
  stale.pid_start_ticks += 1;  // as if the pid now belonged to another process
  ASSERT_TRUE(launcher_.Signal(stale, SIGTERM).ok());
  EXPECT_FALSE(launcher_.Poll(*h).has_value()) << "job must still run";
  ASSERT_TRUE(launcher_.Signal(*h, SIGKILL).ok());
  WaitSupervisor(*h);
  EXPECT_TRUE(launcher_.Poll(*h).has_value());
}

TEST_F(ProcessLauncherTest, PassesEnvironmentAndWorkingDirectory) {
  LaunchSpec s = Spec(8, {"sh", "-c", "pwd; echo $FOO"});
  s.cwd = "/tmp";
  auto h = launcher_.Launch(s);
  ASSERT_TRUE(h.ok());
  WaitSupervisor(*h);
  ASSERT_TRUE(launcher_.Poll(*h).has_value());
  EXPECT_EQ(ReadLog(*h, kStdoutFile), "/tmp\nbar\n");
}

TEST(ProcessStartTicksTest, KnownAndUnknownPids) {
  EXPECT_GT(ProcessStartTicks(::getpid()), 0u);
  EXPECT_EQ(ProcessStartTicks(0), 0u);
  EXPECT_EQ(ProcessStartTicks(999999999), 0u);
}

}  // namespace
}  // namespace pinpoint::launch

namespace pinpoint::launch {
namespace {

TEST_F(ProcessLauncherTest, JobProcessesAreTheJobsSessionWithoutTheSupervisor) {
  std::string fifo = MakeFifo();
  auto h = launcher_.Launch(Spec(9, {"sh", "-c", "sleep 1000 & echo up > " + fifo + "; wait"}));
  ASSERT_TRUE(h.ok());
  WaitReady(fifo);
  auto pids = launcher_.JobProcesses(*h);
  EXPECT_EQ(pids.size(), 2u) << "sh and its sleep";
  for (int64_t pid : pids) EXPECT_NE(pid, h->pid);
  ASSERT_TRUE(launcher_.Signal(*h, SIGKILL).ok());
  WaitSupervisor(*h);
  // The killed grandchild (sleep) finishes dying on its own time: wait for that condition.
  for (int i = 0; i < 1'000'000 && !launcher_.JobProcesses(*h).empty(); ++i)
    std::this_thread::yield();
  EXPECT_TRUE(launcher_.JobProcesses(*h).empty());
}

}  // namespace
}  // namespace pinpoint::launch

namespace pinpoint::launch {
namespace {

// submit --signal=B: reaches the command alone. The job's shell traps USR1 and then ends its
// child with SIGTERM and reports how the child ended: by USR1 when the signal went to the whole
// group (USR1, pending first and lower, is taken before TERM), by TERM when it went to the shell
// alone.
TEST_F(ProcessLauncherTest, SignalLeaderReachesTheCommandAloneAndSignalItsWholeGroup) {
  for (bool leader_only : {true, false}) {
    std::string fifo = MakeFifo();
    std::string out = dir_ + "/child-status";
    JobId id = leader_only ? 12 : 13;
    auto h = launcher_.Launch(
        Spec(id, {"sh", "-c",
                  "sleep 1000 & child=$!; trap 'kill -TERM $child; wait $child; echo $? > " + out +
                      "; exit 0' USR1; echo up > " + fifo + "; wait"}));
    ASSERT_TRUE(h.ok());
    WaitReady(fifo);
    Status sent = leader_only ? launcher_.SignalLeader(*h, SIGUSR1) : launcher_.Signal(*h, SIGUSR1);
    ASSERT_TRUE(sent.ok()) << sent.ToString();
    WaitSupervisor(*h);
    auto st = launcher_.Poll(*h);
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->kind, ExitStatus::Kind::kExited);
    auto status = ReadFile(out);
    ASSERT_TRUE(status.ok()) << status.status().ToString();
    EXPECT_EQ(*status, leader_only ? "143\n" : "138\n")
        << (leader_only ? "B: reached the child" : "the group's signal missed the child");
    std::filesystem::remove(fifo);
    std::filesystem::remove(out);
  }
}

TEST_F(ProcessLauncherTest, KillReachesTheJobButNotItsSupervisor) {
  std::string fifo = MakeFifo();
  // A job that ignores SIGTERM, as a cancelled job may.
  auto h = launcher_.Launch(
      Spec(10, {"sh", "-c", "trap '' TERM; echo up > " + fifo + "; sleep 1000 & wait"}));
  ASSERT_TRUE(h.ok());
  WaitReady(fifo);
  ASSERT_TRUE(launcher_.Signal(*h, SIGKILL).ok());
  WaitSupervisor(*h);
  auto st = PollUntilEnded(*h);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->kind, ExitStatus::Kind::kSignaled) << "the supervisor survived to record it";
  EXPECT_EQ(st->term_signal, SIGKILL);
}

}  // namespace
}  // namespace pinpoint::launch

namespace pinpoint::launch {
namespace {

TEST_F(ProcessLauncherTest, LockWithoutJobPidIsNeverLaunched) {
  // As left by a daemon killed after creating the lock but before forking the supervisor.
  std::string job_dir = dir_ + "/jobs/11";
  ASSERT_TRUE(MakeDirs(job_dir).ok());
  std::ofstream(job_dir + "/" + kLockFile) << "";
  JobHandle h;
  h.job_id = 11;
  h.job_dir = job_dir;
  auto st = launcher_.Poll(h);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->kind, ExitStatus::Kind::kNeverLaunched);
}

}  // namespace
}  // namespace pinpoint::launch

namespace pinpoint::launch {
namespace {

TEST_F(ProcessLauncherTest, RelaunchForgetsTheEarlierRun) {
  auto first = launcher_.Launch(Spec(12, {"sh", "-c", "exit 7"}));
  ASSERT_TRUE(first.ok());
  WaitSupervisor(*first);
  ASSERT_EQ(launcher_.Poll(*first)->exit_code, 7);
  std::string fifo = MakeFifo();
  auto second = launcher_.Launch(Spec(12, {"sh", "-c", "echo up > " + fifo + "; exec sleep 1000"}));
  ASSERT_TRUE(second.ok());
  WaitReady(fifo);
  EXPECT_FALSE(launcher_.Poll(*second).has_value()) << "running, not the first run's exit 7";
  ASSERT_TRUE(launcher_.Signal(*second, SIGKILL).ok());
  WaitSupervisor(*second);
  EXPECT_EQ(launcher_.Poll(*second)->term_signal, SIGKILL);
}

}  // namespace
}  // namespace pinpoint::launch

namespace pinpoint::launch {
namespace {

// As an unprivileged user (nobody) would try it: whether `path` opens for reading.
bool NobodyCanOpen(const std::string& path) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    ::_exit(::open(path.c_str(), O_RDONLY) >= 0 ? 0 : 1);
  }
  int status = WaitChild(pid, 120'000).value_or(-1);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 2) << "could not become nobody";
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Attack: a user opens a job's lock read-only and holds a shared flock on it, so that pinpointd
// would see the supervisor as alive for ever and never hand the job's GPUs on.
TEST_F(ProcessLauncherTest, NoUserCanOpenTheJobsLockOrAnyFileTheDaemonDecidesBy) {
  std::string fifo = MakeFifo();
  auto h = launcher_.Launch(Spec(30, {"sh", "-c", "echo up > " + fifo}));
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  WaitReady(fifo);
  WaitSupervisor(*h);
  for (const char* name : {kLockFile, kJobPidFile, kExitFile, kExitSlotFile, kSpecFile}) {
    struct stat st {};
    ASSERT_EQ(::stat((h->job_dir + "/" + name).c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_mode & 077, 0u) << name << " must be pinpointd's alone";
    if (::geteuid() == 0) {
      EXPECT_FALSE(NobodyCanOpen(h->job_dir + "/" + name)) << name;
    }
  }
  EXPECT_EQ(launcher_.Poll(*h)->kind, ExitStatus::Kind::kExited);
}

// A lock an earlier version made 0644 may be held by anyone: it no longer decides. The
// supervisor's pid and start time do.
TEST_F(ProcessLauncherTest, AHeldLockOthersCouldOpenDoesNotKeepAnEndedJobRunning) {
  auto h = launcher_.Launch(Spec(31, {"true"}));
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  WaitSupervisor(*h);
  std::string lock = h->job_dir + "/" + kLockFile;
  ASSERT_EQ(::chmod(lock.c_str(), 0644), 0);
  int held = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_SH | LOCK_NB), 0);  // what the user does
  auto st = launcher_.Poll(*h);
  ASSERT_TRUE(st.has_value()) << "an ended job polled as running: the user's lock decided";
  EXPECT_EQ(st->kind, ExitStatus::Kind::kExited);
  ::close(held);
}

// Attack: pinpointd (and so its supervisor) holds a root-only file open for writing without
// close-on-exec; the job must never get it, nor the shim's lock or pipes.
TEST_F(ProcessLauncherTest, AJobStartsWithItsStandardDescriptorsOnly) {
  std::string secret = dir_ + "/root-only";
  int leaked = ::open(secret.c_str(), O_WRONLY | O_CREAT, 0600);  // no O_CLOEXEC, on purpose
  ASSERT_GE(leaked, 3);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);  // no O_CLOEXEC either
  auto h = launcher_.Launch(Spec(32, {"sh", "-c", "ls /proc/$$/fd; true"}));
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  WaitSupervisor(*h);
  EXPECT_EQ(launcher_.Poll(*h)->kind, ExitStatus::Kind::kExited);
  EXPECT_EQ(ReadLog(*h, kStdoutFile), "0\n1\n2\n") << "the job held more than stdin/out/err";
  ::close(leaked);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

// Out of descriptors (EMFILE) is not a job's end: the job polls as running and is kept.
TEST_F(ProcessLauncherTest, OutOfDescriptorsIsNotAJobsEnd) {
  std::string fifo = MakeFifo();
  auto h = launcher_.Launch(Spec(33, {"sh", "-c", "echo up > " + fifo + "; exec sleep 1000"}));
  ASSERT_TRUE(h.ok());
  WaitReady(fifo);
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  std::vector<int> filler;
  rlimit tight = saved;
  tight.rlim_cur = 64;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &tight), 0);
  for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) filler.push_back(fd);
  ASSERT_EQ(errno, EMFILE);
  std::optional<ExitStatus> polled = launcher_.Poll(*h);
  Status signalled = launcher_.Signal(*h, SIGTERM);
  for (int fd : filler) ::close(fd);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  EXPECT_FALSE(polled.has_value()) << "ended as: " << polled->error;
  EXPECT_EQ(signalled.code(), Code::kUnavailable) << "nothing sent now; the caller sends it again";
  EXPECT_FALSE(launcher_.Poll(*h).has_value()) << "still running once descriptors are back";
  ASSERT_TRUE(launcher_.Signal(*h, SIGKILL).ok());
  WaitSupervisor(*h);
  EXPECT_EQ(launcher_.Poll(*h)->term_signal, SIGKILL);
}

}  // namespace
}  // namespace pinpoint::launch

namespace pinpoint::launch {
namespace {

// Attack (by accident): users who share a primary group read each other's output when it is
// made 0640 for the group. The job's files follow the submitter's umask, as Slurm's do.
TEST_F(ProcessLauncherTest, OutputFollowsTheSubmittersUmask) {
  JobId id = 40;
  for (auto [mask, mode, shown] : {std::tuple{077, 0600, "0077"}, std::tuple{027, 0640, "0027"},
                                   std::tuple{022, 0644, "0022"}}) {
    LaunchSpec s = Spec(id++, {"sh", "-c", "umask; echo x > own-file"});
    s.cwd = dir_;
    s.umask = mask;
    s.stderr_path = dir_ + "/err-" + std::to_string(id);
    if (::geteuid() == 0) {
      s.switch_user = true;
      s.uid = s.gid = 65534;
      s.groups = {65534};
      s.cwd = dir_ + "/cwd-" + std::to_string(id);
      ASSERT_TRUE(MakeDirs(s.cwd, 0777).ok());
      ASSERT_EQ(::chmod(s.cwd.c_str(), 0777), 0);
      ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
      s.stderr_path = s.cwd + "/err";
    }
    auto h = launcher_.Launch(s);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    WaitSupervisor(*h);
    EXPECT_EQ(launcher_.Poll(*h)->kind, ExitStatus::Kind::kExited);
    EXPECT_EQ(ReadLog(*h, kStdoutFile), std::string(shown) + "\n") << "the job runs with the umask";
    for (const std::string& path :
         {h->job_dir + "/" + kStdoutFile, s.stderr_path, s.cwd + "/own-file"}) {
      struct stat st {};
      ASSERT_EQ(::stat(path.c_str(), &st), 0) << path;
      EXPECT_EQ(st.st_mode & 0777, static_cast<mode_t>(mode)) << path << " with umask " << mask;
    }
  }
}

}  // namespace
}  // namespace pinpoint::launch

// How a job's supervisor (pinpoint-shim) ends its job on its own: a process that left the job's
// session is killed before the job's end is reported, a removed job directory or a daemon that
// stays away ends the job, and each leaves a job alone while its reason holds.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <tuple>

#include "common/file_util.h"
#include "common/process.h"
#include "common/test_dir.h"
#include "launch/process_launcher.h"
#include "launch/process_launcher_fixture.h"
#include "launch/shim.h"

namespace pinpoint::launch {
namespace {

// Attack: a job's process that leaves its session (setsid) and runs on with the job's GPUs after
// the job ended, while the next job gets them. The job is not reported ended while it lives; it
// is killed, then the job's end comes. Found here by its uid and its job's key (no cgroup).
TEST_F(ProcessLauncherTest, AProcessThatLeftTheSessionIsKilledBeforeTheJobEnds) {
  std::string fifo = MakeFifo();
  // The escapee says its pid once it has left the session, then the job's shell exits.
  LaunchSpec s =
      Spec(50, {"sh", "-c", "setsid sh -c 'echo $$ > " + fifo + "; exec sleep 1000' & exit 0"});
  auto h = launcher_.Launch(s);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  std::ifstream in(fifo);
  int64_t escaped = 0;
  in >> escaped;
  ASSERT_GT(escaped, 0);
  auto held = PidFd::Open(escaped);
  ASSERT_TRUE(held.has_value());
  WaitSupervisor(*h);
  auto stat = ReadProcStat(escaped);
  ASSERT_TRUE(stat.has_value());
  EXPECT_NE(stat->session, h->pid) << "it did leave the job's session";
  auto first = launcher_.Poll(*h);
  EXPECT_FALSE(first.has_value()) << "reported ended while its process runs on: kind "
                                  << static_cast<int>(first->kind) << " " << first->error;
  // Each poll kills what it finds of the job; one caught inside its `exec sleep` (its environment
  // not laid out yet) is found by a later poll, and the job is not over meanwhile.
  bool killed = held->WaitExit(100);
  for (int poll = 0; poll < 100 && !killed; ++poll) {
    EXPECT_FALSE(launcher_.Poll(*h).has_value()) << "reported ended while its process runs on";
    killed = held->WaitExit(100);
  }
  EXPECT_TRUE(killed) << "the escaped process was not killed";
  auto st = launcher_.Poll(*h);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->kind, ExitStatus::Kind::kExited);
  EXPECT_EQ(st->exit_code, 0);
}

// Attack on a suspend: a process of the job in a session of its own would run on while the job
// is stopped (and could start a new CUDA process on GPUs that went to others). SignalAll stops
// and continues it with the job's group; Signal reaches the group alone.
TEST_F(ProcessLauncherTest, SignalAllStopsAndContinuesAProcessThatLeftTheJobsGroup) {
  std::string fifo = MakeFifo();
  // The escapee says its pid once it has left the session, then becomes `sleep` (a shell that
  // forked its sleep could be caught inside the vfork, its child stopped before its exec: it waits
  // uninterruptibly on that child, in effect stopped, but never in state T).
  auto h = launcher_.Launch(
      Spec(51, {"sh", "-c", "setsid sh -c 'echo $$ > " + fifo + "; exec sleep 1000' & wait"}));
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  pollfd p{fd, POLLIN, 0};
  ASSERT_GT(::poll(&p, 1, kDeadlineMs), 0) << "the escapee did not say its pid in time";
  char line[32] = {};
  (void)!::read(fd, line, sizeof(line) - 1);
  ::close(fd);
  const int64_t escaped = std::atoll(line);
  ASSERT_GT(escaped, 0);
  auto held = PidFd::Open(escaped);
  ASSERT_TRUE(held.has_value());
  ASSERT_NE(ReadProcStat(escaped)->session, ReadJobPid(h->job_dir)) << "it left the session";
  // Its state once the signal has been taken, within the deadline.
  auto reaches = [&](bool stopped) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kDeadlineMs);
    while (std::chrono::steady_clock::now() < until) {
      auto stat = ReadProcStat(escaped);
      if (stat && (stat->state == 'T') == stopped) return true;
      std::this_thread::yield();
    }
    return false;
  };
  // As pinpointd sends them: a stop at each pass (for a minute after a suspend), a continue until
  // the look at the node's processes has found them all (a busy node reads them over passes).
  auto stop_reaches = [&] {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kDeadlineMs);
    while (std::chrono::steady_clock::now() < until) {
      Status s = launcher_.SignalAll(*h, SIGSTOP);
      if (!s.ok() && s.code() != Code::kUnavailable) return false;
      auto stat = ReadProcStat(escaped);
      if (stat && stat->state == 'T') return true;
      launcher_.Reap();  // the next pass
    }
    return false;
  };
  EXPECT_TRUE(stop_reaches()) << "the escapee was not stopped";
  Status cont = launcher_.SignalAll(*h, SIGCONT);
  for (int pass = 0; pass < 100'000 && cont.code() == Code::kUnavailable; ++pass) {
    launcher_.Reap();
    cont = launcher_.SignalAll(*h, SIGCONT);
  }
  ASSERT_TRUE(cont.ok()) << cont.ToString();
  EXPECT_TRUE(reaches(false)) << "the escapee was not continued";
  EXPECT_TRUE(held->Signal(SIGKILL));
  EXPECT_TRUE(held->WaitExit(kDeadlineMs));
  ASSERT_TRUE(launcher_.Signal(*h, SIGKILL).ok());
  WaitSupervisor(*h);
}

// Item 1 of issue 27: a job directory removed while its job runs (a state directory deleted, a
// purge) leaves nobody to collect the job. The shim ends the job's group (SIGKILL after the
// grace, for a job that ignores SIGTERM, and a process the job put in a group of its own) and
// exits, where it used to supervise it forever and then retry writing its status forever.
TEST_F(ProcessLauncherTest, AShimWhoseJobDirectoryIsRemovedEndsItsJobAndExits) {
  std::string fifo = MakeFifo();
  LaunchSpec spec =
      Spec(21, {"sh", "-c", "trap '' TERM; set -m; sleep 1000 & echo up > " + fifo + "; wait"});
  spec.orphan_check_ms = 20;
  spec.orphan_grace_ms = 50;
  auto h = launcher_.Launch(spec);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  WaitReady(fifo);
  int64_t job = ReadJobPid(h->job_dir);
  ASSERT_GT(job, 0);
  std::vector<int64_t> pids = launcher_.JobProcesses(*h);
  ASSERT_EQ(pids.size(), 2u) << "the shell and its sleep, started before it said it was up";
  std::error_code ec;
  std::filesystem::remove_all(h->job_dir, ec);
  ASSERT_FALSE(ec) << ec.message();
  ASSERT_TRUE(WaitForExit(h->pid, 60'000)) << "the shim still supervises a job nobody can collect";
  WaitSupervisor(*h);
  EXPECT_FALSE(ProcessAlive(job)) << "the job outlived its shim";
  for (int64_t pid : pids)
    EXPECT_TRUE(WaitForExit(pid, 60'000)) << "pid " << pid << " of the job survived";
}

// The same check leaves a job whose directory is there alone: it ends as it ends.
TEST_F(ProcessLauncherTest, AShimWithItsJobDirectoryLeavesTheJobRunning) {
  std::string fifo = MakeFifo();
  std::string go = dir_ + "/go";
  LaunchSpec spec =
      Spec(22, {"sh", "-c", "echo up > " + fifo + "; read line < " + go + "; exit 3"});
  spec.orphan_check_ms = 1;
  ASSERT_EQ(::mkfifo(go.c_str(), 0600), 0);
  auto h = launcher_.Launch(spec);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  WaitReady(fifo);
  {
    std::ofstream release(go);  // the shim checks every millisecond meanwhile
    release << "go\n";
  }
  WaitSupervisor(*h);
  auto st = launcher_.Poll(*h);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->kind, ExitStatus::Kind::kExited);
  EXPECT_EQ(st->exit_code, 3);
}

// A shim whose pinpointd is away longer than daemon_away_ms (nobody holds the state directory's
// lock) ends its job, which nothing enforces any more, and records why with how it ended.
TEST_F(ProcessLauncherTest, AShimWhoseDaemonStaysAwayEndsItsJobAndRecordsWhy) {
  std::string fifo = MakeFifo();
  LaunchSpec spec = Spec(23, {"sh", "-c", "echo up > " + fifo + "; exec sleep 1000"});
  spec.daemon_lock = dir_ + "/pinpointd.lock";  // no daemon: the file does not even exist
  spec.daemon_away_ms = 1;
  spec.orphan_check_ms = 20;
  spec.orphan_grace_ms = 50;
  auto h = launcher_.Launch(spec);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  WaitReady(fifo);
  ASSERT_TRUE(WaitForExit(h->pid, 60'000)) << "the shim still supervises a job nothing enforces";
  WaitSupervisor(*h);
  auto st = launcher_.Poll(*h);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->kind, ExitStatus::Kind::kSignaled);
  EXPECT_EQ(st->term_signal, SIGTERM);
  EXPECT_NE(st->error.find("no pinpointd ran for"), std::string::npos) << st->error;
}

// Attack: a job that writes stdout without end filled a 64 MiB state filesystem in 0.5 s, and
// then every other user's submit failed. Past max_output_bytes the shim ends the job, cuts its
// output to the bound with a last line that says so, and records why; a job within it is not
// touched.
TEST_F(ProcessLauncherTest, AJobWhoseOutputPassesItsBoundIsEndedAndItsOutputCut) {
  LaunchSpec spec =
      Spec(24, {"sh", "-c", "echo first; yes 'a line of output' & yes 'an error line' >&2; wait"});
  spec.max_output_bytes = 64 << 10;
  spec.output_check_ms = 5;
  spec.orphan_grace_ms = 50;
  auto h = launcher_.Launch(spec);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  WaitSupervisor(*h);
  auto st = launcher_.Poll(*h);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->kind, ExitStatus::Kind::kSignaled);
  EXPECT_NE(st->error.find("its output in the job directory passed 64KiB (max_output_bytes)"),
            std::string::npos)
      << st->error;
  EXPECT_TRUE(st->output_exceeded) << "it ends output-exceeded";
  std::string out = ReadLog(*h, kStdoutFile), err = ReadLog(*h, kStderrFile);
  EXPECT_LE(out.size() + err.size(), 64u << 10) << "cut to the bound";
  EXPECT_EQ(out.rfind("first\n", 0), 0u) << "written before either stream filled the bound";
  EXPECT_NE(err.find("pinpoint: output cut at 64KiB (max_output_bytes): the job was ended\n"),
            std::string::npos);

  LaunchSpec small = Spec(25, {"sh", "-c", "echo within"});
  small.max_output_bytes = 64 << 10;
  small.output_check_ms = 5;
  auto within = launcher_.Launch(small);
  ASSERT_TRUE(within.ok());
  WaitSupervisor(*within);
  auto ok = launcher_.Poll(*within);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->kind, ExitStatus::Kind::kExited);
  EXPECT_EQ(ok->error, "");
  EXPECT_FALSE(ok->output_exceeded);
  EXPECT_EQ(ReadLog(*within, kStdoutFile), "within\n");
}

// What a file of the job directory occupies on disk (its allocated blocks).
uint64_t OccupiedOf(const JobHandle& h, const char* file) {
  struct stat st {};
  if (::stat((h.job_dir + "/" + file).c_str(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

// Attack: `fallocate --keep-size` on the job's own stdout held 253 MiB of the state disk against
// a 16 MiB max_output_bytes: its size stayed 0, so the job was never ended, and the blocks stayed
// after it. Blocks are what is counted: the job is ended, and the cut frees them.
TEST_F(ProcessLauncherTest, AJobThatPreallocatesItsStdoutPastItsBoundIsEndedAndTheBlocksFreed) {
  LaunchSpec spec = Spec(
      28, {"sh", "-c", "echo first; fallocate --keep-size -l 1M /dev/stdout; exec sleep 1000"});
  spec.max_output_bytes = 64 << 10;
  spec.output_check_ms = 5;
  spec.orphan_grace_ms = 50;
  auto h = launcher_.Launch(spec);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  WaitSupervisor(*h);
  auto st = launcher_.Poll(*h);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->kind, ExitStatus::Kind::kSignaled);
  EXPECT_NE(st->error.find("in the job directory passed 64KiB (max_output_bytes): it took 1MiB"),
            std::string::npos)
      << st->error;
  EXPECT_EQ(ReadLog(*h, kStdoutFile).rfind("first\n", 0), 0u);
  EXPECT_LE(OccupiedOf(*h, kStdoutFile) + OccupiedOf(*h, kStderrFile), 64u << 10)
      << "the preallocated blocks were freed by the cut";
}

// A job within its bound that preallocates past its output's end and exits leaves no block past
// that end: what it leaves takes what it shows.
TEST_F(ProcessLauncherTest, BlocksPreallocatedPastTheOutputsEndGoWhenTheJobEnds) {
  LaunchSpec spec = Spec(29, {"sh", "-c", "echo kept; fallocate --keep-size -l 40K /dev/stdout"});
  spec.max_output_bytes = 64 << 10;
  spec.output_check_ms = 60'000;  // no look while it runs: the end alone frees them
  auto h = launcher_.Launch(spec);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  WaitSupervisor(*h);
  auto st = launcher_.Poll(*h);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->kind, ExitStatus::Kind::kExited);
  EXPECT_EQ(st->error, "");
  EXPECT_EQ(ReadLog(*h, kStdoutFile), "kept\n");
  EXPECT_LT(OccupiedOf(*h, kStdoutFile), 40u << 10) << "the preallocated blocks stayed";
}

// While the lock is held (a pinpointd runs) the same watch leaves the job alone.
TEST_F(ProcessLauncherTest, AShimWhoseDaemonRunsLeavesTheJobRunning) {
  std::string lock_path = dir_ + "/pinpointd.lock";
  UniqueFd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  ASSERT_GE(lock.get(), 0);
  struct flock whole {};
  whole.l_type = F_WRLCK;
  whole.l_whence = SEEK_SET;
  ASSERT_EQ(::fcntl(lock.get(), F_OFD_SETLK, &whole), 0);
  std::string fifo = MakeFifo();
  // The job takes a while of its own (not a synchronisation: a watch that ignored the lock
  // would end it meanwhile, checking every millisecond).
  LaunchSpec spec = Spec(24, {"sh", "-c", "echo up > " + fifo + "; sleep 0.3; exit 3"});
  spec.daemon_lock = lock_path;
  spec.daemon_away_ms = 1;
  spec.orphan_check_ms = 1;
  auto h = launcher_.Launch(spec);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  WaitReady(fifo);
  WaitSupervisor(*h);
  auto st = launcher_.Poll(*h);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->kind, ExitStatus::Kind::kExited);
  EXPECT_EQ(st->exit_code, 3);
  EXPECT_EQ(st->error, "");
}

}  // namespace
}  // namespace pinpoint::launch

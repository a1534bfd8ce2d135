// Kills a writer process part way through its writes and checks that the file is intact and
// that every write the store acknowledged (returned from) survived. Two ways: the parent sends
// SIGKILL at whatever point the writer has reached, and a VFS shim makes the writer kill itself
// at each write, truncate or sync of one Insert + Update in turn.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/spawn.h"
#include "store/faulty_vfs.h"
#include "store/job_store.h"
#include "store/store_test_util.h"

namespace pinpoint::store {
namespace {

using testing::QueryOne;

constexpr int kInsertsBeforeKill = 200;
constexpr int kRounds = 4;
constexpr int kSeqPerRound = 1000000;  // keeps each round's records distinct
constexpr int kMaxCrashPoints = 500;   // a bound on the sweep, far above an Insert + Update

// ---- The writer child and its acks ----

enum Phase : int32_t { kInserted = 0, kUpdated = 1 };

// What the writer tells the parent after a store call returned ok.
struct Ack {
  int64_t id;
  int32_t seq;
  int32_t phase;
};
static_assert(sizeof(Ack) <= PIPE_BUF, "acks must reach the parent whole");

struct WriterPlan {
  int32_t first_seq = 0;
  int32_t jobs = kSeqPerRound;  // each job: Insert, ack, Update, ack
  int crash_at_op = 0;          // > 0: die at this write/truncate/sync of the last job's calls
};

JobRecord SubmittedRecord(int32_t seq) {
  JobRecord r;
  r.request.name = "crash-" + std::to_string(seq);
  r.request.argv = {"echo", std::to_string(seq)};
  r.request.cwd = "/tmp";
  r.request.env = {{"SEQ", std::to_string(seq)}};
  r.request.priority = seq % 11;
  r.uid = static_cast<uint32_t>(seq % 7);
  r.user = "u" + std::to_string(seq % 7);
  r.submit_ms = seq;
  return r;
}

void MarkRunning(JobRecord* r, int32_t seq) {
  r->state = JobState::kRunning;
  r->start_ms = int64_t{seq} + 1;
  r->pid = seq;
  r->allocations = {{seq % 4, "GPU-" + std::to_string(seq), 0, 0, SharingMode::kExclusive}};
}

bool WriteAck(int fd, const Ack& ack) {
  ssize_t n;
  do {
    n = write(fd, &ack, sizeof(ack));
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof(ack));
}

// The child: inserts and updates until done or killed. Exits with a distinct code on failure.
[[noreturn]] void RunWriter(const std::string& path, int ack_fd, const WriterPlan& plan) {
  // Once armed, dies at the ops_left-th write, truncate or sync, before it reaches the file, as
  // a process killed at that instant would.
  int64_t ops_left = 0;
  std::optional<testing::FaultyVfs> vfs;
  if (plan.crash_at_op > 0) {
    vfs.emplace([&ops_left] {
      if (ops_left > 0 && --ops_left == 0) raise(SIGKILL);
      return SQLITE_OK;
    });
  }
  Result<std::unique_ptr<JobStore>> store = JobStore::Open(path);
  if (!store.ok()) _exit(2);
  for (int32_t seq = plan.first_seq; seq < plan.first_seq + plan.jobs; ++seq) {
    if (seq == plan.first_seq + plan.jobs - 1) ops_left = plan.crash_at_op;
    JobRecord record = SubmittedRecord(seq);
    Result<JobId> id = (*store)->Insert(record);
    if (!id.ok()) _exit(3);
    if (!WriteAck(ack_fd, {*id, seq, kInserted})) _exit(4);
    record.id = *id;
    MarkRunning(&record, seq);
    if (!(*store)->Update(record).ok()) _exit(5);
    if (!WriteAck(ack_fd, {*id, seq, kUpdated})) _exit(4);
  }
  _exit(0);
}

// 1: a whole ack, 0: end of stream, -1: error or a torn ack.
int ReadAck(int fd, Ack* ack) {
  size_t got = 0;
  auto* bytes = reinterpret_cast<char*>(ack);
  while (got < sizeof(*ack)) {
    ssize_t n = read(fd, bytes + got, sizeof(*ack) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n == 0 && got == 0 ? 0 : -1;
    got += static_cast<size_t>(n);
  }
  return 1;
}

// The writer is this test binary again, running the one test below: SQLite would run between a
// fork and an exec otherwise. Its plan comes in kWriterVar, its acks go to descriptor kAckFd.
constexpr int kAckFd = 3;
constexpr int kWriterDeadlineMs = 300'000;  // for each ack, and for the writer's end
constexpr char kWriterVar[] = "PP_CRASH_WRITER";

// Run only as the writer (the parent names it in --gtest_filter); skipped without its plan.
TEST(CrashWriterChild, DISABLED_Run) {
  const char* spec = std::getenv(kWriterVar);
  if (spec == nullptr) GTEST_SKIP() << "only the crash tests' writer runs this";
  std::istringstream in(spec);
  std::string path, first_seq, jobs, crash_at_op;
  if (!std::getline(in, path) || !std::getline(in, first_seq) || !std::getline(in, jobs) ||
      !std::getline(in, crash_at_op))
    _exit(6);
  RunWriter(path, kAckFd,
            {static_cast<int32_t>(std::stol(first_seq)), static_cast<int32_t>(std::stol(jobs)),
             std::stoi(crash_at_op)});
}

bool KilledBySigkill(int status) { return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL; }

// ---- The parent ----

class CrashTest : public testing::StoreTest {
 protected:
  // Starts a writer following `plan` and collects every ack it sends into acked_. With
  // kill_after, SIGKILLs it right after the ack of its kInsertsBeforeKill-th insert (the writer
  // is then inside Update) or of that job's update (then inside the next Insert). Sets
  // *wait_status.
  void RunWriterChild(const WriterPlan& plan, std::optional<Phase> kill_after, int* wait_status) {
    int fds[2];
    ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
    std::string spec = db_path() + "\n" + std::to_string(plan.first_seq) + "\n" +
                       std::to_string(plan.jobs) + "\n" + std::to_string(plan.crash_at_op);
    std::vector<std::string> env = EnvironmentWith(kWriterVar, spec);
    for (const char* var :
         {"GTEST_OUTPUT", "GTEST_FILTER", "GTEST_SHARD_INDEX", "GTEST_TOTAL_SHARDS"})
      std::erase_if(
          env, [var](const std::string& kv) { return kv.rfind(std::string(var) + "=", 0) == 0; });
    Result<pid_t> pid =
        Spawn({.argv = {"/proc/self/exe", "--gtest_filter=CrashWriterChild.DISABLED_Run",
                        "--gtest_also_run_disabled_tests"},
               .env = env,
               .pass_fds = {{fds[1], kAckFd}}});
    close(fds[1]);
    if (!pid.ok()) close(fds[0]);
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    int inserts = 0;
    bool killed = false;
    Ack ack{};
    int rc = 0;
    pollfd p{fds[0], POLLIN, 0};
    while (poll(&p, 1, kWriterDeadlineMs) > 0 && (rc = ReadAck(fds[0], &ack)) == 1) {
      Record(ack);
      if (ack.phase == kInserted) ++inserts;
      if (kill_after && ack.phase == *kill_after && inserts == kInsertsBeforeKill && !killed) {
        EXPECT_EQ(kill(*pid, SIGKILL), 0);
        killed = true;
      }
    }
    close(fds[0]);
    std::optional<int> status = WaitChild(*pid, kWriterDeadlineMs);
    ASSERT_TRUE(status.has_value()) << "the writer neither wrote nor ended in time: killed";
    *wait_status = *status;
    ASSERT_EQ(rc, 0) << "torn ack";
    if (kill_after) {
      ASSERT_TRUE(killed) << "writer stopped early, wait status " << *wait_status;
    }
  }

  void Record(const Ack& ack) {
    if (ack.phase == kInserted) {
      EXPECT_GT(ack.id, last_id_) << "ids must increase, across crashes too";
      last_id_ = ack.id;
    }
    acked_[ack.seq] = ack;
  }

  void ExpectEveryAckedWriteSurvived() {
    EXPECT_EQ(QueryOne(db_path(), "PRAGMA integrity_check"), "ok");
    Result<std::unique_ptr<JobStore>> store = JobStore::Open(db_path());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    for (const auto& [seq, ack] : acked_) {
      Result<JobRecord> got = (*store)->Get(ack.id);
      ASSERT_TRUE(got.ok()) << "acknowledged job " << ack.id << ": " << got.status().ToString();
      JobRecord want = SubmittedRecord(seq);
      want.id = ack.id;
      if (ack.phase == kUpdated) MarkRunning(&want, seq);
      // An update that ran but was not acknowledged may or may not have landed.
      if (ack.phase == kInserted && got->state == JobState::kRunning) MarkRunning(&want, seq);
      EXPECT_EQ(*got, want);
    }
    // No half-written job is visible: every stored row decodes and has its one submit event,
    // even one whose insert committed but whose ack never left the writer.
    Result<std::vector<JobRecord>> all = (*store)->List({});
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    EXPECT_GE(all->size(), acked_.size());
    for (const JobRecord& job : *all) {
      EXPECT_EQ(job.request.name, "crash-" + std::to_string(job.submit_ms));
      Result<std::vector<JobEvent>> events = (*store)->Events(job.id);
      ASSERT_TRUE(events.ok());
      ASSERT_EQ(events->size(), 1u) << "job " << job.id;
      EXPECT_EQ((*events)[0].kind, kSubmitEventKind);
    }
  }

  void RemoveDatabase() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_path() + suffix);
    acked_.clear();
    last_id_ = 0;
  }

  std::map<int32_t, Ack> acked_;  // by seq: the last ack of that job
  JobId last_id_ = 0;
};

TEST_F(CrashTest, AcknowledgedWritesSurviveSigkill) {
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    int status = 0;
    WriterPlan plan;
    plan.first_seq = round * kSeqPerRound;
    RunWriterChild(plan, round % 2 == 0 ? kInserted : kUpdated, &status);
    if (HasFatalFailure()) return;
    ASSERT_TRUE(KilledBySigkill(status)) << "wait status " << status;
    ExpectEveryAckedWriteSurvived();
    if (HasFatalFailure()) return;
  }
  EXPECT_GE(acked_.size(), static_cast<size_t>(kRounds * kInsertsBeforeKill));
}

// The writer stores one job, then dies at the n-th write, truncate or sync of the second job's
// Insert + Update, for every n until it gets through both.
TEST_F(CrashTest, EveryWriteOfInsertAndUpdateIsACrashPoint) {
  int crash_points = 0;
  for (int op = 1; op <= kMaxCrashPoints; ++op) {
    SCOPED_TRACE("crash at write/sync " + std::to_string(op));
    RemoveDatabase();
    WriterPlan plan;
    plan.jobs = 2;
    plan.crash_at_op = op;
    int status = 0;
    RunWriterChild(plan, std::nullopt, &status);
    if (HasFatalFailure()) return;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) break;  // no crash point left
    ASSERT_TRUE(KilledBySigkill(status)) << "wait status " << status;
    ++crash_points;
    ExpectEveryAckedWriteSurvived();
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(crash_points, 2);  // the shim saw the writes; a broken shim would crash nowhere
  EXPECT_LT(crash_points, kMaxCrashPoints);
}

}  // namespace
}  // namespace pinpoint::store

#include "launch/shim.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_util.h"
#include "common/test_dir.h"

namespace pinpoint::launch {
namespace {

TEST(RetryUntilOkTest, RetriesAWriterThatFailsWithBoundedDoublingBackoff) {
  int calls = 0;
  std::vector<int64_t> slept;
  int failures = RetryUntilOk(
      [&]() -> Status { return ++calls <= 9 ? IoError("No space left on device") : Status::Ok(); },
      [&](int64_t ms) { slept.push_back(ms); });
  EXPECT_EQ(failures, 9);
  EXPECT_EQ(calls, 10) << "kept trying until the write went through";
  EXPECT_EQ(slept, (std::vector<int64_t>{100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000}));
}

class ExitStatusFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::mkdir(job_dir_.c_str(), 0755), 0);
    auto dir = OpenJobDir(job_dir_);
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
    dir_ = std::move(dir).value();
  }
  static ExitStatus ExitedZero() {
    ExitStatus s;
    s.kind = ExitStatus::Kind::kExited;
    return s;
  }
  TestDir tmp_;
  const std::string job_dir_ = tmp_.path() + "/1";
  UniqueFd dir_;
};

TEST_F(ExitStatusFileTest, SlotHoldsTheStatusWhenExitJsonCannotBeWritten) {
  ASSERT_TRUE(CreateExitSlot(dir_.get()).ok());
  EXPECT_EQ(ReadExitStatus(dir_.get()).status().code(), Code::kNotFound) << "zeros: no status yet";
  ExitStatus long_error;
  long_error.kind = ExitStatus::Kind::kLaunchFailed;
  long_error.error = std::string(3 * kExitSlotBytes, 'x');
  ASSERT_TRUE(WriteExitSlot(dir_.get(), long_error).ok());
  auto read = ReadExitStatus(dir_.get());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->kind, ExitStatus::Kind::kLaunchFailed);
  EXPECT_FALSE(read->error.empty());
  struct stat st {};
  ASSERT_EQ(::stat((job_dir_ + "/" + kExitSlotFile).c_str(), &st), 0);
  EXPECT_EQ(st.st_size, static_cast<off_t>(kExitSlotBytes)) << "written in place, never grown";
  // exit.json, once written, is the truth.
  ASSERT_TRUE(WriteExitStatus(dir_.get(), ExitedZero()).ok());
  EXPECT_EQ(ReadExitStatus(dir_.get())->kind, ExitStatus::Kind::kExited);
}

TEST_F(ExitStatusFileTest, RecordFallsBackToTheSlotAndLeavesNoPartialFile) {
  ASSERT_TRUE(CreateExitSlot(dir_.get()).ok());
  // exit.json cannot be written: a directory sits where its temporary file goes.
  ASSERT_EQ(::mkdir((job_dir_ + "/exit.json.tmp").c_str(), 0755), 0);
  int sleeps = 0;
  RecordExitStatus(dir_.get(), ExitedZero(), /*log_fd=*/-1, [&](int64_t) { ++sleeps; });
  EXPECT_EQ(sleeps, 0) << "the slot took it on the first try";
  auto read = ReadExitStatus(dir_.get());
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->kind, ExitStatus::Kind::kExited);
  EXPECT_EQ(read->exit_code, 0) << "a job that exited 0 is never reported lost";
}

TEST_F(ExitStatusFileTest, ExitStatusReadsAreBounded) {
  std::string big(kExitSlotBytes + 1, ' ');
  ASSERT_TRUE(WriteFileAtomicAt(dir_.get(), kExitFile, big).ok());
  auto read = ReadExitStatus(dir_.get());
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), Code::kIo);
}

TEST_F(ExitStatusFileTest, AJobDirectoryOthersCanWriteIsNotTrusted) {
  ASSERT_EQ(::chmod(job_dir_.c_str(), 0777), 0);
  auto dir = OpenJobDir(job_dir_);
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("not trusted"), std::string::npos);
}

// pinpointd's lock as its jobs' supervisors see it: held only while a process holds an OFD lock
// on it; asking never takes it.
TEST(ProbeDaemonLockTest, HeldOnlyWhileAnOfdLockIsHeld) {
  TestDir tmp;
  std::string path = tmp.path() + "/pinpointd.lock";
  EXPECT_EQ(ProbeDaemonLock(path), DaemonLock::kFree) << "no file: no daemon";
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  ASSERT_GE(fd.get(), 0);
  EXPECT_EQ(ProbeDaemonLock(path), DaemonLock::kFree);
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  ASSERT_EQ(::fcntl(fd.get(), F_OFD_SETLK, &lock), 0);
  EXPECT_EQ(ProbeDaemonLock(path), DaemonLock::kHeld);
  EXPECT_EQ(ProbeDaemonLock(path), DaemonLock::kHeld) << "asking did not take or drop it";
  lock.l_type = F_UNLCK;
  ASSERT_EQ(::fcntl(fd.get(), F_OFD_SETLK, &lock), 0);
  EXPECT_EQ(ProbeDaemonLock(path), DaemonLock::kFree);
}

TEST(ProbeDaemonLockTest, ALinkIsNotFollowedAndIsNotTakenForAnAbsentDaemon) {
  TestDir tmp;
  std::string target = tmp.path() + "/elsewhere";
  std::string path = tmp.path() + "/pinpointd.lock";
  UniqueFd fd(::open(target.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  ASSERT_GE(fd.get(), 0);
  ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);
  EXPECT_EQ(ProbeDaemonLock(path), DaemonLock::kUnknown)
      << "cannot be told: a supervisor never ends its job on a guess";
}

TEST_F(ExitStatusFileTest, WhyTheSupervisorEndedTheJobIsRecordedWithItsSignal) {
  ExitStatus ended;
  ended.kind = ExitStatus::Kind::kSignaled;
  ended.term_signal = 15;
  ended.error = "no pinpointd ran for 900 s";
  ASSERT_TRUE(WriteExitStatus(dir_.get(), ended).ok());
  auto read = ReadExitStatus(dir_.get());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->kind, ExitStatus::Kind::kSignaled);
  EXPECT_EQ(read->term_signal, 15);
  EXPECT_EQ(read->error, ended.error);
}

}  // namespace
}  // namespace pinpoint::launch

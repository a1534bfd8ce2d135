// The store lost, replaced or damaged: under a running daemon (every later write fails with one
// clear error instead of going to a file nobody reads), at start (a damaged file is refused with
// the recovery steps), and across the loss (ids, and so job directories, are never reused).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "store/id_mark.h"
#include "store/job_store.h"
#include "store/store_test_util.h"

namespace pinpoint::store {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::Must;
using ::testing::Not;
using testing::PendingRecord;
using testing::QueryOne;

class DamageTest : public testing::StoreTest {
 protected:
  std::string ReadBytes() const {
    std::ifstream in(db_path(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // What an admin's `rm pinpoint.db*` does: the database and its companions, not the mark.
  void RemoveDatabaseFiles() const {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_path() + suffix);
  }
  // Stores `count` pending jobs and closes the store (which folds the WAL into the file).
  JobId FillAndClose(int count) const {
    std::unique_ptr<JobStore> store = Must(JobStore::Open(db_path()));
    JobId last = 0;
    for (int i = 0; i < count; ++i) {
      JobRecord r = PendingRecord(1000, i);
      r.request.env["PAYLOAD"] = std::string(1500, static_cast<char>('a' + i % 26));
      last = Must(store->Insert(r));
    }
    return last;
  }
};

TEST_F(DamageTest, DeletedFileFailsEveryLaterWriteWithOneClearLine) {
  std::unique_ptr<JobStore> store = Must(JobStore::Open(db_path()));
  JobId id = Must(store->Insert(PendingRecord(1000, 1)));
  ASSERT_TRUE(store->CheckFile().ok());
  ASSERT_EQ(::unlink(db_path().c_str()), 0);

  Result<JobId> insert = store->Insert(PendingRecord(1000, 2));
  EXPECT_EQ(insert.status().code(), Code::kIo);
  EXPECT_THAT(insert.status().message(),
              AllOf(HasSubstr(db_path()), HasSubstr("was deleted"), HasSubstr("restarted"),
                    HasSubstr("docs/store.md"), Not(HasSubstr("\n"))));
  JobRecord job = Must(store->Get(id));  // reads go on from the open file
  job.state = JobState::kCompleted;
  EXPECT_EQ(store->Update(job).message(), insert.status().message());
  EXPECT_EQ(store->AppendEvent({id, 3, "end", ""}).message(), insert.status().message());
  EXPECT_EQ(store->CheckFile().message(), insert.status().message());
  EXPECT_FALSE(std::filesystem::exists(db_path()));
}

TEST_F(DamageTest, ReplacedFileIsDetectedAndNotWrittenThrough) {
  std::unique_ptr<JobStore> store = Must(JobStore::Open(db_path()));
  ASSERT_TRUE(store->Insert(PendingRecord(1000, 1)).ok());
  // Another store put in its place (an admin restoring a backup under a running daemon).
  std::string other = (dir_ / "other.db").string();
  { std::unique_ptr<JobStore> replacement = Must(JobStore::Open(other)); }
  ASSERT_EQ(::rename(other.c_str(), db_path().c_str()), 0);

  std::string jobs_before = QueryOne(db_path(), "SELECT count(*) FROM jobs");
  Status check = store->CheckFile();
  EXPECT_EQ(check.code(), Code::kIo);
  EXPECT_THAT(check.message(), HasSubstr("was replaced by another file"));
  EXPECT_EQ(store->Insert(PendingRecord(1000, 2)).status().message(), check.message());
  EXPECT_EQ(QueryOne(db_path(), "SELECT count(*) FROM jobs"), jobs_before);
}

TEST_F(DamageTest, CorruptedFileIsRefusedAtOpenAndLeftAlone) {
  FillAndClose(40);
  ASSERT_FALSE(std::filesystem::exists(db_path() + "-wal"));
  std::string bytes = ReadBytes();
  constexpr size_t kPage = 4096;
  ASSERT_GT(bytes.size(), 8 * kPage);
  // Pages 3 and 4 (b-tree pages of the jobs table) overwritten, as a bad disk block would.
  for (size_t i = 2 * kPage; i < 4 * kPage; ++i) bytes[i] = static_cast<char>(0x5A ^ (i & 0xff));
  std::ofstream(db_path(), std::ios::binary | std::ios::trunc) << bytes;

  Result<std::unique_ptr<JobStore>> store = JobStore::Open(db_path());
  EXPECT_EQ(store.status().code(), Code::kFailedPrecondition);
  EXPECT_THAT(store.status().message(),
              AllOf(HasSubstr(db_path()), HasSubstr("is damaged"),
                    HasSubstr("Recovering a damaged store"), Not(HasSubstr("\n"))));
  EXPECT_EQ(ReadBytes(), bytes);
}

TEST_F(DamageTest, LostStoreNeverHandsOutAnOldIdAgain) {
  // Past one block of reserved ids, so the mark has been written more than once.
  JobId last = FillAndClose(static_cast<int>(kIdMarkBlock) + 6);
  RemoveDatabaseFiles();

  std::unique_ptr<JobStore> store = Must(JobStore::Open(db_path()));
  EXPECT_TRUE(Must(store->List({})).empty());
  EXPECT_GT(Must(store->Insert(PendingRecord(1000, 1))), last);
}

TEST_F(DamageTest, RestoredOlderBackupContinuesAboveTheNewestId) {
  FillAndClose(3);
  std::string backup = (dir_ / "backup.db").string();
  std::filesystem::copy_file(db_path(), backup);
  JobId last = FillAndClose(2 * static_cast<int>(kIdMarkBlock));
  RemoveDatabaseFiles();
  std::filesystem::rename(backup, db_path());

  std::unique_ptr<JobStore> store = Must(JobStore::Open(db_path()));
  EXPECT_EQ(Must(store->List({})).size(), 3u);
  EXPECT_GT(Must(store->Insert(PendingRecord(1000, 1))), last);
}

TEST_F(DamageTest, JobDirectoriesBoundIdsWhenTheMarkIsGoneToo) {
  FillAndClose(5);
  RemoveDatabaseFiles();
  std::filesystem::remove(IdMarkPath(db_path()));
  std::string jobs = (dir_ / "jobs").string();
  for (const char* name : {"3", "41", "7", "41.tmp", "x99"}) {
    std::filesystem::create_directories(jobs + "/" + name);
  }
  JobId largest = Must(LargestJobDirId(jobs));
  EXPECT_EQ(largest, 41);

  std::unique_ptr<JobStore> store = Must(JobStore::Open(db_path(), {.min_id_exclusive = largest}));
  EXPECT_EQ(Must(store->Insert(PendingRecord(1000, 1))), 42);
}

TEST_F(DamageTest, MarkIsDurableBeforeTheIdIsReturned) {
  std::unique_ptr<JobStore> store = Must(JobStore::Open(db_path()));
  for (int i = 0; i < 3 * kIdMarkBlock; ++i) {
    JobId id = Must(store->Insert(PendingRecord(1000, i)));
    ASSERT_GE(Must(ReadIdMark(IdMarkPath(db_path()))), id);
  }
  struct stat st {};
  ASSERT_EQ(::stat(IdMarkPath(db_path()).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(DamageTest, DamagedMarkIsRefusedWithOneLine) {
  FillAndClose(1);
  for (const std::string& text :
       {std::string("12x\n"), std::string("-5\n"), std::string(""), std::string(100, '9')}) {
    std::ofstream(IdMarkPath(db_path()), std::ios::trunc) << text;
    Result<std::unique_ptr<JobStore>> store = JobStore::Open(db_path());
    EXPECT_EQ(store.status().code(), Code::kFailedPrecondition) << text;
    EXPECT_THAT(store.status().message(),
                AllOf(HasSubstr("pinpoint.last-id is damaged"), Not(HasSubstr("\n"))));
  }
}

TEST_F(DamageTest, MarkPathKeepsOutOfTheDatabasesGlob) {
  EXPECT_EQ(IdMarkPath("/var/lib/pinpoint/pinpoint.db"), "/var/lib/pinpoint/pinpoint.last-id");
  EXPECT_EQ(IdMarkPath("/tmp/store"), "/tmp/store.last-id");
  EXPECT_EQ(Must(LargestJobDirId((dir_ / "no-such-dir").string())), 0);
}

}  // namespace
}  // namespace pinpoint::store

// JobStore::Batch: the writes of one daemon pass in one transaction (one fsync), durable only
// when committed, each write still all or nothing; and Update with its event in one transaction.
// Syncs are counted through the faulty VFS, which sees every fsync SQLite asks for.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/faulty_vfs.h"
#include "store/job_store.h"
#include "store/store_test_util.h"

namespace pinpoint::store {
namespace {

using ::testing::HasSubstr;
using testing::Must;
using testing::PendingRecord;
using testing::QueryOne;

constexpr int kJobs = 10;

class BatchTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    testing::StoreTest::SetUp();
    store_ = Must(JobStore::Open(db_path()));
    for (int i = 0; i < kJobs; ++i) ids_.push_back(Must(store_->Insert(PendingRecord(1, i))));
    syncs_ = 0;
  }
  void TearDown() override {
    store_.reset();
    testing::StoreTest::TearDown();
  }
  // Job `id` as running, with a "start" event.
  Status Start(JobId id) {
    JobRecord r = Must(store_->Get(id));
    r.state = JobState::kRunning;
    r.start_ms = 100;
    return store_->Update(r, JobEvent{id, 100, "start", ""});
  }
  std::string Count(const std::string& sql) { return QueryOne(db_path(), sql); }

  int syncs_ = 0;
  bool full_ = false;
  testing::FaultyVfs vfs_{[this](testing::FaultyVfs::Op op) {
    if (op == testing::FaultyVfs::Op::kSync) ++syncs_;
    return full_ ? SQLITE_FULL : SQLITE_OK;
  }};
  std::unique_ptr<JobStore> store_;
  std::vector<JobId> ids_;
};

TEST_F(BatchTest, UpdateAndItsEventAreOneTransaction) {
  for (JobId id : ids_) ASSERT_TRUE(Start(id).ok());
  EXPECT_EQ(Count("SELECT count(*) FROM job_events WHERE kind = 'start'"), std::to_string(kJobs));
  EXPECT_GE(syncs_, kJobs) << "each update is durable on its own";
  EXPECT_LT(syncs_, 2 * kJobs) << "a record and its event share one commit";
}

TEST_F(BatchTest, ABatchIsOneCommitDurableOnlyWhenCommitted) {
  auto batch = store_->BeginBatch();
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  for (JobId id : ids_) ASSERT_TRUE(Start(id).ok());
  EXPECT_EQ(Must(store_->Get(ids_[0])).state, JobState::kRunning)
      << "the batch reads its own writes";
  EXPECT_EQ(Count("SELECT count(*) FROM jobs WHERE state = 'running'"), "0")
      << "another connection sees nothing before the commit";
  ASSERT_TRUE(batch->Commit().ok());
  EXPECT_EQ(Count("SELECT count(*) FROM jobs WHERE state = 'running'"), std::to_string(kJobs));
  EXPECT_EQ(Count("SELECT count(*) FROM job_events WHERE kind = 'start'"), std::to_string(kJobs));
  EXPECT_LE(syncs_, 2) << "one commit for the whole batch (and at most one WAL header)";
  ASSERT_TRUE(Start(ids_[0]).ok()) << "writes after the batch are their own again";
}

TEST_F(BatchTest, ABatchLeftUncommittedUndoesItsWrites) {
  {
    auto batch = store_->BeginBatch();
    ASSERT_TRUE(batch.ok());
    ASSERT_TRUE(Start(ids_[0]).ok());
    ASSERT_TRUE(store_->AppendEvent({ids_[1], 5, "note", ""}).ok());
  }
  EXPECT_EQ(Must(store_->Get(ids_[0])).state, JobState::kPending);
  EXPECT_EQ(Count("SELECT count(*) FROM job_events WHERE kind != 'submit'"), "0");
  auto again = store_->BeginBatch();
  EXPECT_TRUE(again.ok()) << "the next batch may begin";
}

TEST_F(BatchTest, AFailedWriteInABatchUndoesOnlyItself) {
  auto batch = store_->BeginBatch();
  ASSERT_TRUE(batch.ok());
  ASSERT_TRUE(Start(ids_[0]).ok());
  JobRecord bad = Must(store_->Get(ids_[1]));
  bad.state = JobState::kRunning;
  bad.request.name = "\xff\xfe";
  EXPECT_EQ(store_->Update(bad, JobEvent{ids_[1], 1, "start", ""}).code(), Code::kInvalidArgument);
  JobRecord missing = PendingRecord(1, 1);
  missing.id = 999;
  EXPECT_EQ(store_->Update(missing, JobEvent{ids_[2], 1, "stray", ""}).code(), Code::kNotFound);
  ASSERT_TRUE(Start(ids_[3]).ok());
  ASSERT_TRUE(batch->Commit().ok());
  EXPECT_EQ(Count("SELECT group_concat(id) FROM jobs WHERE state = 'running'"),
            std::to_string(ids_[0]) + "," + std::to_string(ids_[3]));
  EXPECT_EQ(Count("SELECT count(*) FROM job_events WHERE kind = 'stray'"), "0")
      << "the event of a failed update is not stored";
  EXPECT_EQ(Count("SELECT count(*) FROM job_events WHERE kind = 'start'"), "2");
}

TEST_F(BatchTest, ACommitThatFailsStoresNothingOfTheBatch) {
  auto batch = store_->BeginBatch();
  ASSERT_TRUE(batch.ok());
  for (JobId id : ids_) ASSERT_TRUE(Start(id).ok());
  full_ = true;
  Status committed = batch->Commit();
  EXPECT_EQ(committed.code(), Code::kIo) << committed.ToString();
  full_ = false;
  EXPECT_EQ(Count("SELECT count(*) FROM jobs WHERE state = 'running'"), "0");
  EXPECT_EQ(Must(store_->Get(ids_[0])).state, JobState::kPending)
      << "nor does this connection see it";
  ASSERT_TRUE(Start(ids_[0]).ok()) << "the store is usable again";
  EXPECT_EQ(Count("SELECT count(*) FROM jobs WHERE state = 'running'"), "1");
}

TEST_F(BatchTest, OneBatchAtATime) {
  auto first = store_->BeginBatch();
  ASSERT_TRUE(first.ok());
  auto second = store_->BeginBatch();
  EXPECT_EQ(second.status().code(), Code::kFailedPrecondition);
  EXPECT_THAT(second.status().message(), HasSubstr("open already"));
}

}  // namespace
}  // namespace pinpoint::store

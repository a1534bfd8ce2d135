// JobTable (job_table.h): what each user's jobs hold stays exact through every way in and out,
// and an end the store cannot take is kept, reported once and retried, over a real store whose
// disk fills (store::testing::FaultyVfs).
#include "daemon/jobs/job_table.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "common/test_dir.h"
#include "daemon/jobs/lifecycle.h"
#include "daemon/service/service_fixture.h"
#include "store/faulty_vfs.h"

namespace pinpoint::daemon {
namespace {

JobRecord JobOf(uint32_t uid, JobRequest request = GpuSlice()) {
  JobRecord r;
  r.uid = uid;
  r.user = "uid " + std::to_string(uid);
  r.request = std::move(request);
  return r;
}

TEST(JobTableTest, HeldBytesFollowAddReplaceAndErase) {
  JobTable jobs(nullptr, nullptr);
  JobRecord a = JobOf(1000);
  a.id = 1;
  JobRecord b = JobOf(1000);
  b.id = 2;
  b.request.env["DATA"] = std::string(5000, 'x');
  jobs.Add(a);
  jobs.Add(b);
  EXPECT_EQ(jobs.HeldBytesOf(1000), RequestBytes(a.request) + RequestBytes(b.request));
  EXPECT_EQ(jobs.HeldBytesOf(1001), 0u);
  jobs.Add(b);  // the same id again replaces, never counts twice
  EXPECT_EQ(jobs.HeldBytesOf(1000), RequestBytes(a.request) + RequestBytes(b.request));
  jobs.Erase(2);
  jobs.Erase(2);
  jobs.Erase(99);
  EXPECT_EQ(jobs.HeldBytesOf(1000), RequestBytes(a.request));
  EXPECT_EQ(jobs.size(), 1u);
}

// A rest's tasks are read from its text once, when it enters the table, and follow it: the rest
// that replaces it after a take-out stands for its own tasks, an erased one for none.
TEST(JobTableTest, ARestsTasksAreReadOnceAndFollowAddAndErase) {
  JobTable jobs(nullptr, nullptr);
  JobRecord job = JobOf(1000);
  auto spec = ParseArraySpec("1-10000");
  ASSERT_TRUE(spec.ok());
  JobRecord rest = NewArrayRest(job, *spec);
  rest.id = rest.array.array_id = 100;
  jobs.Add(rest);
  ASSERT_NE(jobs.TasksOfRest(100), nullptr);
  EXPECT_EQ(jobs.TasksOf(100), 10000u);
  EXPECT_EQ(jobs.tasks(), 10000u);
  EXPECT_EQ(jobs.RestHolding(100 + 9999), &jobs.at(100));
  EXPECT_EQ(jobs.RestHolding(100 + 10000), nullptr);

  RestTasks::TakenOut split = jobs.TasksOfRest(100)->TakeOut(jobs.at(100), {100, 105});
  ASSERT_TRUE(split.rest.has_value());
  jobs.Erase(100);
  EXPECT_EQ(jobs.TasksOfRest(100), nullptr);
  for (JobRecord& task : split.tasks) jobs.Add(std::move(task));
  jobs.Add(std::move(*split.rest));
  EXPECT_EQ(jobs.TasksOf(101), 9998u);
  EXPECT_EQ(jobs.TasksOf(100), 1u) << "a task of its own";
  EXPECT_EQ(jobs.RestHolding(105), nullptr) << "taken out";
  EXPECT_EQ(jobs.RestHolding(106), &jobs.at(101));
  EXPECT_EQ(jobs.tasks(), 10000u);
  EXPECT_EQ(jobs.HeldBytesOf(1000), RequestBytes(job.request) * 10000);
  jobs.Erase(101);
  EXPECT_EQ(jobs.RestHolding(106), nullptr);
  EXPECT_EQ(jobs.tasks(), 2u);
}

class JobTableStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(store::JobStore::Open(dir_.path() + "/pinpoint.db")).value();
    table_ = std::make_unique<JobTable>(store_.get(), &clock_);
  }
  void TearDown() override {
    table_.reset();
    store_.reset();  // before the VFS the store was opened through
  }
  // A running job stored and in the table.
  JobRecord& Running(uint32_t uid) {
    JobRecord r = JobOf(uid);
    lifecycle::Submitted(r, clock_.NowMs());
    r.id = store_->Insert(r).value();
    r.state = JobState::kRunning;
    return table_->Add(r);
  }
  void End(JobRecord& job) {
    job.state = JobState::kCompleted;
    table_->PersistEnd(job);
  }

  bool full_ = false;
  store::testing::FaultyVfs vfs_{[this] { return full_ ? SQLITE_FULL : SQLITE_OK; }};
  TestDir dir_;
  FakeClock clock_;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<JobTable> table_;
};

TEST_F(JobTableStoreTest, AnEndTheStoreCannotTakeIsReportedOnceAndKeptUntilStored) {
  JobRecord& job = Running(1000);
  JobId id = job.id;
  full_ = true;
  End(job);
  int reports = 0;
  auto count = [&](const JobRecord&) { ++reports; };
  EXPECT_EQ(table_->CollectEnded(count), std::vector<JobId>{id});
  EXPECT_EQ(table_->count(id), 1u) << "answered from memory while the store cannot take it";
  EXPECT_TRUE(table_->CollectEnded(count).empty()) << "reported once";
  table_->RetryUnpersistedEnds();
  EXPECT_EQ(table_->count(id), 1u);
  EXPECT_EQ(store_->Get(id)->state, JobState::kPending) << "the store still has it as it was";
  full_ = false;
  table_->RetryUnpersistedEnds();
  EXPECT_EQ(table_->count(id), 0u) << "stored and already reported: it leaves";
  EXPECT_EQ(store_->Get(id)->state, JobState::kCompleted);
  EXPECT_EQ(reports, 1);
  EXPECT_EQ(table_->HeldBytesOf(1000), 0u);
}

TEST_F(JobTableStoreTest, ABatchOfEndsThatCannotCommitKeepsEveryOne) {
  JobRecord& a = Running(1000);
  JobRecord& b = Running(1001);
  JobId ids[] = {a.id, b.id};
  table_->BeginEnds();
  End(a);
  End(b);
  full_ = true;  // the commit's write fails
  table_->CommitEnds();
  EXPECT_EQ(table_->CollectEnded([](const JobRecord&) {}),
            std::vector<JobId>(std::begin(ids), std::end(ids)));
  EXPECT_EQ(table_->size(), 2u) << "both kept in memory";
  full_ = false;
  table_->RetryUnpersistedEnds();
  EXPECT_EQ(table_->size(), 0u);
  for (JobId id : ids) EXPECT_EQ(store_->Get(id)->state, JobState::kCompleted);
}

TEST_F(JobTableStoreTest, EndsThatAreStoredLeaveWhenReported) {
  JobRecord& job = Running(1000);
  JobId id = job.id;
  End(job);
  EXPECT_EQ(table_->count(id), 1u) << "in the table until a pass reports it";
  EXPECT_EQ(table_->CollectEnded([](const JobRecord&) {}), std::vector<JobId>{id});
  EXPECT_EQ(table_->count(id), 0u);
}

}  // namespace
}  // namespace pinpoint::daemon

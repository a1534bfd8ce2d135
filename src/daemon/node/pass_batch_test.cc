// The store writes of one pass of the node: the starts of a pass cost two commits (the records
// before any launch, the pids after the last), the ends found by a pass one, whatever their
// number; and when a commit fails, nothing is launched or forgotten. Syncs are counted through
// the faulty VFS, which sees every fsync SQLite asks for; a commit is one (plus, at times, one
// for the WAL's header), where one write per commit made several per job.
#include <gtest/gtest.h>

#include "daemon/service/service_fixture.h"
#include "store/faulty_vfs.h"

namespace pinpoint::daemon {
namespace {

using launch::ExitStatus;
using store::testing::FaultyVfs;

constexpr int kJobs = 8;

class PassBatchTest : public ServiceFixture {
 protected:
  void SetUp() override { RestartOn(TwoGpus()); }
  JobId Submit(std::map<std::string, std::string> env = {}) {
    JobRequest r;
    r.env = std::move(env);
    r.argv = {"true"};
    r.cwd = "/";
    r.gpus = 1;
    r.gpu_mem_bytes = 1ull << 30;  // kJobs slices fit the two devices at once
    auto job = node_->Submit(caller_, r);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->id : 0;
  }
  std::vector<JobId> SubmitAll() {
    std::vector<JobId> ids;
    for (int i = 0; i < kJobs; ++i) ids.push_back(Submit());
    return ids;
  }
  JobState Stored(JobId id) { return store_->Get(id).value().state; }
  static ExitStatus Exited() {
    ExitStatus s;
    s.kind = ExitStatus::Kind::kExited;
    return s;
  }

  int syncs_ = 0;
  bool full_ = false;
  FaultyVfs vfs_{[this](FaultyVfs::Op op) {
    if (op == FaultyVfs::Op::kSync) ++syncs_;
    return full_ ? SQLITE_FULL : SQLITE_OK;
  }};
};

TEST_F(PassBatchTest, TheStartsOfOnePassAreTwoCommits) {
  std::vector<JobId> ids = SubmitAll();
  syncs_ = 0;
  node_->Step();
  ASSERT_EQ(launcher_.launches().size(), static_cast<size_t>(kJobs));
  for (JobId id : ids) {
    EXPECT_EQ(Stored(id), JobState::kRunning);
    EXPECT_GT(store_->Get(id)->pid, 0) << "its supervisor's pid is stored too";
  }
  EXPECT_LE(syncs_, 4) << "one commit for the starts, one for the pids (3 per job before)";
}

TEST_F(PassBatchTest, TheEndsOfOnePassAreOneCommit) {
  std::vector<JobId> ids = SubmitAll();
  node_->Step();
  for (JobId id : ids) launcher_.Finish(id, Exited());
  syncs_ = 0;
  std::vector<JobId> ended = node_->Step();
  EXPECT_EQ(ended.size(), static_cast<size_t>(kJobs));
  for (JobId id : ids) EXPECT_EQ(Stored(id), JobState::kCompleted);
  EXPECT_EQ(store_->Events(ids[0])->back().kind, "end");
  EXPECT_LE(syncs_, 2) << "one commit for every end of the pass (2 per job before)";
}

TEST_F(PassBatchTest, StartsThatCannotBeStoredAreNotLaunched) {
  std::vector<JobId> ids = SubmitAll();
  full_ = true;
  node_->Step();
  EXPECT_TRUE(launcher_.launches().empty()) << "a start is durable before its job is forked";
  for (JobId id : ids) EXPECT_EQ(node_->Get(id)->state, JobState::kPending);
  full_ = false;
  node_->Step();
  EXPECT_EQ(launcher_.launches().size(), static_cast<size_t>(kJobs))
      << "tried again by the next pass";
  for (JobId id : ids) EXPECT_EQ(Stored(id), JobState::kRunning);
}

TEST_F(PassBatchTest, EndsThatCannotBeStoredAreAnsweredOnceAndStoredLater) {
  std::vector<JobId> ids = SubmitAll();
  node_->Step();
  for (JobId id : ids) launcher_.Finish(id, Exited());
  full_ = true;
  EXPECT_EQ(node_->Step(), ids) << "waiters hear of every end at once";
  for (JobId id : ids) {
    EXPECT_EQ(node_->Get(id)->state, JobState::kCompleted);
    EXPECT_EQ(Stored(id), JobState::kRunning) << "not stored yet";
  }
  EXPECT_TRUE(node_->Step().empty()) << "an end is reported once";
  full_ = false;
  EXPECT_TRUE(node_->Step().empty());
  for (JobId id : ids) EXPECT_EQ(Stored(id), JobState::kCompleted);
}

// Many large records at once: a pass starts, and ends, jobs of about pass_record_bytes of records
// (at least one), and says more is due; the next passes take the others. Here three jobs of a
// 100 KB environment a pass, against a budget of 250 KB.
TEST_F(PassBatchTest, TheStartsAndEndsOfManyLargeRecordsAreSpreadOverPasses) {
  NodeOptions options;
  options.inventory = TwoGpus();
  options.pass.pass_record_bytes = 250 << 10;
  Restart(options);
  std::vector<JobId> ids;
  for (int i = 0; i < kJobs; ++i) ids.push_back(Submit({{"BIG", std::string(100 << 10, 'x')}}));
  std::vector<size_t> launched;
  for (int pass = 0; pass < kJobs && launched.size() < 3; ++pass) {
    node_->Step();
    launched.push_back(launcher_.launches().size());
    if (launched.back() < static_cast<size_t>(kJobs)) {
      EXPECT_TRUE(node_->MoreDue()) << "pass " << pass;
    }
  }
  EXPECT_EQ(launched, (std::vector<size_t>{3, 6, 8}));
  EXPECT_FALSE(node_->MoreDue());
  for (JobId id : ids) EXPECT_EQ(Stored(id), JobState::kRunning);

  for (JobId id : ids) launcher_.Finish(id, Exited());
  std::vector<size_t> ended;
  for (int pass = 0; pass < kJobs && ended.size() < 3; ++pass) {
    ended.push_back(node_->Step().size());
    if (ended.size() < 3) {
      EXPECT_TRUE(node_->MoreDue()) << "pass " << pass;
    }
  }
  EXPECT_EQ(ended, (std::vector<size_t>{3, 3, 2}));
  EXPECT_FALSE(node_->MoreDue());
  for (JobId id : ids) EXPECT_EQ(Stored(id), JobState::kCompleted);
}

}  // namespace
}  // namespace pinpoint::daemon

// Retention: which jobs go and when (driven by a fake clock, no sleeping), what becomes of their
// directories when their users planted links or trees in them, and that every pass is bounded.
#include "daemon/setup/retention.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "common/test_dir.h"
#include "store/sqlite.h"

namespace pinpoint::daemon {
namespace {

constexpr int64_t kDayMs = 24 * 3600 * 1000;

bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

class RetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(store::JobStore::Open(dir_.path() + "/pinpoint.db")).value();
    jobs_dir_ = dir_.path() + "/jobs";
    ASSERT_EQ(::mkdir(jobs_dir_.c_str(), 0755), 0);
    outside_ = dir_.path() + "/outside";  // stands for a root-owned directory
    ASSERT_EQ(::mkdir(outside_.c_str(), 0755), 0);
    std::ofstream(outside_ + "/precious") << "keep me";
    options_.retention_ms = 30 * kDayMs;
    options_.jobs_dir = jobs_dir_;
  }
  // A job that ended `days_ago` (or is still running with running=true), with a directory.
  JobId AddJob(int64_t days_ago, bool running = false, uint32_t uid = 4242, size_t env_bytes = 0) {
    JobRecord r;
    r.request.argv = {"/bin/true"};
    r.request.cwd = "/";
    if (env_bytes > 0) r.request.env["BIG"] = std::string(env_bytes, 'x');
    r.uid = uid;
    r.user = "uid " + std::to_string(uid);
    r.submit_ms = clock_.NowMs() - days_ago * kDayMs - 1000;
    r.state = running ? JobState::kRunning : JobState::kCompleted;
    if (!running) r.end_ms = clock_.NowMs() - days_ago * kDayMs;
    JobId id = store_->Insert(r).value();
    r.id = id;
    EXPECT_TRUE(store_->Update(r).ok());
    std::string dir = JobDir(id);
    EXPECT_EQ(::mkdir(dir.c_str(), 0755), 0);
    std::ofstream(dir + "/stdout") << "output of " << id;
    return id;
  }
  std::string JobDir(JobId id) const { return jobs_dir_ + "/" + std::to_string(id); }
  bool Stored(JobId id) const { return store_->Get(id).ok(); }

  TestDir dir_;
  FakeClock clock_;
  std::unique_ptr<store::JobStore> store_;
  std::string jobs_dir_, outside_;
  RetentionOptions options_;
};

TEST_F(RetentionTest, PurgesOnlyJobsEndedLongerAgoThanTheRetention) {
  JobId running = AddJob(90, /*running=*/true);
  JobId recent = AddJob(29);
  JobId old_job = AddJob(31);  // the newest id: purging it must not free it
  Retention retention(options_, store_.get(), &clock_);
  auto report = retention.RunIfDue();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->purged, std::vector<JobId>{old_job});
  EXPECT_FALSE(Stored(old_job));
  EXPECT_FALSE(Exists(JobDir(old_job)));
  EXPECT_FALSE(store_->Events(old_job).ok()) << "its history goes with it";
  EXPECT_TRUE(Stored(recent));
  EXPECT_TRUE(Exists(JobDir(recent)));
  EXPECT_TRUE(Stored(running)) << "a job that has not ended is never purged";
  EXPECT_TRUE(Exists(JobDir(running)));
  EXPECT_EQ(retention.purged_total(), 1);

  clock_.AdvanceMs(2 * kDayMs);  // the recent job is now past the retention too
  EXPECT_TRUE(retention.RunIfDue()->purged == std::vector<JobId>{recent});
  JobId next = AddJob(0);
  EXPECT_GT(next, old_job) << "purged ids are never handed out again";
}

// A user who ends large jobs without pause fills the store at the rate they end, whatever the
// retention in days: past max_user_stored_bytes their oldest ended jobs go, no one else's, and
// root's never.
TEST_F(RetentionTest, AUserOverTheStoredBytesLosesTheirOldestEndedJobsOnly) {
  options_.retention_ms = 0;  // keep every job for ever, as far as days go
  options_.user_stored_bytes = 1 << 20;
  JobId bystander = AddJob(400, false, 1001, 100 << 10);
  JobId roots = AddJob(400, false, 0, 600 << 10);
  JobId roots_too = AddJob(400, false, 0, 600 << 10);
  std::vector<JobId> attacker;
  for (int i = 0; i < 20; ++i) attacker.push_back(AddJob(1, false, 6666, 100 << 10));
  JobId running = AddJob(400, /*running=*/true, 6666, 100 << 10);
  ASSERT_GT(store_->EndedBytesOf(6666)->bytes, uint64_t{3} << 19);  // 1.5 MiB

  Retention retention(options_, store_.get(), &clock_);
  auto report = retention.RunIfDue();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_LE(store_->EndedBytesOf(6666)->bytes, options_.user_stored_bytes);
  EXPECT_GE(store_->EndedBytesOf(6666)->bytes, options_.user_stored_bytes - (120 << 10))
      << "no more than the excess goes";
  ASSERT_FALSE(report->purged.empty());
  for (size_t i = 0; i < report->purged.size(); ++i) {
    EXPECT_EQ(report->purged[i], attacker[i]) << "the oldest go first";
    EXPECT_FALSE(Exists(JobDir(attacker[i])));
  }
  EXPECT_TRUE(Stored(attacker.back()));
  EXPECT_TRUE(Stored(running)) << "a job that has not ended is never purged";
  EXPECT_TRUE(Stored(bystander));
  EXPECT_TRUE(Stored(roots) && Stored(roots_too)) << "root's ended jobs are the site's own";
  ASSERT_EQ(report->over_budget.size(), 1u);
  EXPECT_NE(report->over_budget[0].find("uid 6666"), std::string::npos) << report->over_budget[0];

  // More ended jobs: seen at the next look, a second later, not ten minutes.
  for (int i = 0; i < 5; ++i) AddJob(0, false, 6666, 100 << 10);
  EXPECT_TRUE(retention.RunIfDue()->purged.empty()) << "not due yet";
  clock_.AdvanceMs(options_.budget_interval_ms);
  EXPECT_FALSE(retention.RunIfDue()->purged.empty());
  EXPECT_LE(store_->EndedBytesOf(6666)->bytes, options_.user_stored_bytes);
}

TEST_F(RetentionTest, ABudgetPassIsBoundedInJobs) {
  options_.retention_ms = 0;
  options_.user_stored_bytes = 1 << 20;
  options_.batch_jobs = 3;
  for (int i = 0; i < 30; ++i) AddJob(1, false, 6666, 100 << 10);
  Retention retention(options_, store_.get(), &clock_);
  auto report = retention.RunIfDue();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->purged.size(), 3u);
}

// A user over max_user_stored_bytes by a lot is purged a bounded share of bytes a pass, the next
// pass due at once (the loop does not wait for it): never 25 MB of deletes in one loop turn.
TEST_F(RetentionTest, ABudgetPassIsBoundedInBytesAndTheNextIsDueAtOnce) {
  options_.retention_ms = 0;
  options_.user_stored_bytes = 1 << 20;
  options_.batch_bytes = 300 << 10;
  for (int i = 0; i < 30; ++i) AddJob(1, false, 6666, 100 << 10);
  Retention retention(options_, store_.get(), &clock_);
  size_t passes = 0;
  do {
    auto report = retention.RunIfDue();
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_LE(report->purged.size(), 3u) << "about 300 KB of 100 KB jobs a pass";
    EXPECT_FALSE(report->purged.empty()) << "due at once while more is left";
    ++passes;
  } while (retention.MoreDue() && passes < 30);
  EXPECT_FALSE(retention.MoreDue());
  EXPECT_GE(passes, 7u);
  EXPECT_LE(store_->EndedBytesOf(6666)->bytes, options_.user_stored_bytes);
  EXPECT_TRUE(retention.RunIfDue()->purged.empty())
      << "under the bound: the next look is a second away";
}

// A tally over the bound that no ended job bears out (edited by hand): the pass deletes nothing
// and is not due again at once, where the loop would have turned on it without sleeping.
TEST_F(RetentionTest, ABudgetPassThatDeletesNothingIsNotDueAtOnce) {
  options_.retention_ms = 0;
  options_.user_stored_bytes = 1 << 20;
  options_.batch_bytes = 100 << 10;
  AddJob(1, /*running=*/true, 6666, 100 << 10);
  {
    auto db = store::Db::Open(dir_.path() + "/pinpoint.db");
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(
        db->Exec(
              "INSERT INTO user_bytes (uid, ended_jobs, ended_bytes) VALUES (6666, 50, 500000000)")
            .ok());
  }
  Retention retention(options_, store_.get(), &clock_);
  auto report = retention.RunIfDue();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->purged.empty());
  EXPECT_FALSE(retention.MoreDue());
}

TEST_F(RetentionTest, PassesComeEveryIntervalAndOffMeansNever) {
  AddJob(31);
  options_.retention_ms = 0;
  Retention off(options_, store_.get(), &clock_);
  EXPECT_TRUE(off.RunIfDue()->purged.empty());

  options_.retention_ms = 30 * kDayMs;
  Retention retention(options_, store_.get(), &clock_);
  EXPECT_EQ(retention.RunIfDue()->purged.size(), 1u);
  JobId later = AddJob(31);
  EXPECT_TRUE(retention.RunIfDue()->purged.empty()) << "not due before interval_ms";
  clock_.AdvanceMs(options_.interval_ms);
  EXPECT_EQ(retention.RunIfDue()->purged, std::vector<JobId>{later});
}

TEST_F(RetentionTest, LinksInAJobDirectoryAreRemovedNeverFollowed) {
  JobId inside = AddJob(31);
  ASSERT_EQ(::symlink(outside_.c_str(), (JobDir(inside) + "/escape").c_str()), 0);
  ASSERT_EQ(::symlink((outside_ + "/precious").c_str(), (JobDir(inside) + "/file").c_str()), 0);
  JobId swapped = AddJob(31);
  ASSERT_EQ(std::system(("rm -rf " + JobDir(swapped)).c_str()), 0);
  ASSERT_EQ(::symlink(outside_.c_str(), JobDir(swapped).c_str()), 0);
  Retention retention(options_, store_.get(), &clock_);
  auto report = retention.RunIfDue();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->purged.size(), 2u);
  EXPECT_TRUE(report->problems.empty());
  EXPECT_FALSE(Exists(JobDir(inside)));
  EXPECT_FALSE(Exists(JobDir(swapped))) << "the link itself is removed";
  EXPECT_TRUE(Exists(outside_ + "/precious"));
}

TEST_F(RetentionTest, ATooDeepTreeIsLeftBehindAndNamedWithoutBlockingTheBatch) {
  JobId deep = AddJob(31);
  std::string path = JobDir(deep);
  for (int i = 0; i < 10; ++i) path += "/d";
  ASSERT_EQ(std::system(("mkdir -p " + path).c_str()), 0);
  JobId plain = AddJob(31);
  options_.max_depth = 5;
  Retention retention(options_, store_.get(), &clock_);
  auto report = retention.RunIfDue();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->purged.size(), 2u);
  ASSERT_EQ(report->problems.size(), 1u);
  EXPECT_NE(report->problems[0].find("job " + std::to_string(deep)), std::string::npos)
      << report->problems[0];
  EXPECT_TRUE(Exists(JobDir(deep))) << "left for the admin";
  EXPECT_FALSE(Exists(JobDir(plain)));
  EXPECT_FALSE(Stored(deep));
}

TEST_F(RetentionTest, ABacklogIsPurgedInBoundedBatches) {
  for (int i = 0; i < 5; ++i) AddJob(31);
  JobId big = AddJob(40);
  for (int i = 0; i < 30; ++i) std::ofstream(JobDir(big) + "/f" + std::to_string(i)) << i;
  options_.batch_jobs = 2;
  options_.batch_entries = 12;
  Retention retention(options_, store_.get(), &clock_);
  int passes = 0;
  while (store_->Count({}).value() > 0) {
    auto report = retention.RunIfDue();
    ASSERT_TRUE(report.ok());
    EXPECT_LE(report->purged.size(), 2u);
    EXPECT_LE(report->entries_removed, 12);
    if (report->purged.empty()) {
      EXPECT_TRUE(report->more) << "a pass that purged nothing owes more";
    }
    EXPECT_TRUE(retention.RunIfDue()->purged.empty()) << "the next pass waits busy_interval_ms";
    clock_.AdvanceMs(options_.busy_interval_ms);
    ASSERT_LT(++passes, 20);
  }
  EXPECT_FALSE(Exists(JobDir(big)));
  EXPECT_EQ(retention.purged_total(), 6);
}

}  // namespace
}  // namespace pinpoint::daemon

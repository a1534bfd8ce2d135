// A waiting job array is one record, its rest (array_rest.h), in the Node on fakes: tasks become
// records of their own as they start, a pass at a time; a task named alone is taken out only by
// who may control it; a task taken out runs once, across a restart too.
#include <gtest/gtest.h>

#include <set>

#include "daemon/jobs/array_rest.h"
#include "daemon/service/service_fixture.h"

namespace pinpoint::daemon {
namespace {

class ArrayRestNodeTest : public ServiceFixture {
 protected:
  void SetUp() override { Restart(Options()); }
  static NodeOptions Options() {
    NodeOptions o;
    o.inventory = TwoGpus();
    o.inventory.host.cpus = 128;  // room for more than a pass's worth of one-CPU tasks
    return o;
  }
  JobId SubmitArray(const std::string& spec, bool hold = false) {
    auto submitted = node_->SubmitArray(caller_, GpuSlice("/home/alice"),
                                        ParseArraySpec(spec).value(), std::nullopt, hold);
    EXPECT_TRUE(submitted.ok()) << submitted.status().ToString();
    return submitted.ok() ? submitted->first.id : 0;
  }
  std::set<JobId> Launched() const {
    std::set<JobId> ids;
    for (const auto& launch : launcher_.launches()) ids.insert(launch.job_id);
    return ids;
  }
};

TEST_F(ArrayRestNodeTest, TasksBecomeRecordsOfTheirOwnAsTheyStartAPassWorthAtATime) {
  JobId array = SubmitArray("1-100");
  ASSERT_EQ(store_->List({})->size(), 1u) << "one record for 100 tasks";
  node_->Step();
  EXPECT_EQ(launcher_.launches().size(), kArrayTasksPerPass);
  for (JobId id = array; id < array + static_cast<JobId>(kArrayTasksPerPass); ++id)
    EXPECT_EQ(store_->Get(id)->state, JobState::kRunning) << id;
  JobRecord rest = node_->Get(array + 64).value();
  EXPECT_EQ(rest.state, JobState::kPending);
  EXPECT_EQ(store_->FindArrayRest(array + 99)->value().array.pending, "65-100");
  node_->Step();
  size_t started = launcher_.launches().size();
  EXPECT_GT(started, kArrayTasksPerPass)
      << "the next pass, the next tasks: " << node_->Get(array + 99)->detail;
  EXPECT_EQ(Launched().size(), started) << "each task started once";
  EXPECT_EQ(store_->List({})->size(), started + (started < 100 ? 1 : 0));
}

TEST_F(ArrayRestNodeTest, AnotherUsersTaskIsNeverTakenOutOfTheRest) {
  JobId array = SubmitArray("1-5", /*hold=*/true);
  api::Caller other;
  other.uid = other.gid = 5555;
  EXPECT_EQ(node_->ReleaseJobs(other, {array + 2}).front().code(), Code::kPermissionDenied);
  EXPECT_EQ(node_->Cancel(other, {array + 3}).front().code(), Code::kPermissionDenied);
  EXPECT_EQ(node_->HoldJobs(other, {array}).front().code(), Code::kPermissionDenied);
  EXPECT_EQ(store_->List({})->size(), 1u) << "still one record";
  EXPECT_EQ(node_->Get(array + 2)->hold, Hold::kUser);
  EXPECT_EQ(node_->Cancel(caller_, {array + 5}).front().code(), Code::kNotFound)
      << "past the array";
}

TEST_F(ArrayRestNodeTest, ATaskTakenOutRunsOnceAcrossARestart) {
  JobId array = SubmitArray("1-3", /*hold=*/true);
  ASSERT_TRUE(node_->ReleaseJobs(caller_, {array + 1}).front().ok());  // task 2 alone
  EXPECT_EQ(store_->Get(array + 1)->hold, Hold::kNone);
  EXPECT_EQ(store_->Get(array)->array.pending, "1,3") << "the rest, without it";
  Restart(Options());
  node_->Step();
  EXPECT_EQ(Launched(), (std::set<JobId>{array + 1}));
  ASSERT_TRUE(node_->ReleaseJobs(caller_, {array}, 0, /*rests_whole=*/true).front().ok());
  node_->Step();
  EXPECT_EQ(Launched(), (std::set<JobId>{array, array + 1, array + 2}));
  EXPECT_EQ(launcher_.launches().size(), 3u) << "none twice";
  EXPECT_EQ(node_->Get(array + 2)->array.index, 3);
}

}  // namespace
}  // namespace pinpoint::daemon

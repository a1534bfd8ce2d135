// ArrayTasks (array_tasks.h): what a request on an array's id still has to change, as a table.
#include "daemon/arrays/array_tasks.h"

#include <gtest/gtest.h>

#include "common/test_dir.h"
#include "daemon/jobs/array_rest.h"

namespace pinpoint::daemon {
namespace {

class ArrayTasksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(store::JobStore::Open(dir_.path() + "/pinpoint.db")).value();
    jobs_ = std::make_unique<JobTable>(store_.get(), nullptr);
    view_ = std::make_unique<ArrayTasks>(jobs_.get(), store_.get());
  }
  // An array of tasks as `states` says, ids 10.. (held, cancelling and %K from the flags).
  struct Task {
    JobState state = JobState::kPending;
    Hold hold = Hold::kNone;
    bool cancel_requested = false;
    int limit = 0;
  };
  void Array(const std::vector<Task>& tasks) {
    for (size_t i = 0; i < tasks.size(); ++i) {
      JobRecord r;
      r.id = 10 + static_cast<JobId>(i);
      r.state = tasks[i].state;
      r.hold = tasks[i].hold;
      r.cancel_requested = tasks[i].cancel_requested;
      r.array = ArrayRecord{ArrayTask{.array_id = 10,
                                      .index = static_cast<int>(i),
                                      .count = static_cast<int>(tasks.size()),
                                      .limit = tasks[i].limit}};
      jobs_->Add(r);
    }
  }

  TestDir dir_;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<JobTable> jobs_;
  std::unique_ptr<ArrayTasks> view_;
};

TEST_F(ArrayTasksTest, EachChangeListsWhatItStillHasToChange) {
  Array({{},                                         // 10: pending
         {.hold = Hold::kUser},                      // 11: held by its user
         {.hold = Hold::kRoot},                      // 12: held by root
         {.state = JobState::kRunning, .limit = 2},  // 13: running, %2
         {.cancel_requested = true},                 // 14: pending, being cancelled
         {.state = JobState::kCompleted}});          // 15: ended
  JobRecord other;                                   // the next job, of no array
  other.id = 16;
  jobs_->Add(other);
  using C = ArrayTasks::Change;
  struct Row {
    C change;
    bool root;
    JobEdit edit;
    std::vector<JobId> want;
  };
  JobEdit limit2, limit0, time;
  limit2.array_limit = 2;
  limit0.array_limit = 0;
  time.time_limit_s = 60;
  const Row rows[] = {
      {C::kCancel, false, {}, {10, 11, 12, 13}},
      {C::kHold, false, {}, {10}},         // root's hold is not a user's to change
      {C::kHold, true, {}, {10, 11}},      // root holds what users held, as root
      {C::kRelease, false, {}, {11, 12}},  // whether a user may is the node's check
      {C::kPending, false, {}, {10, 11, 12}},
      {C::kUpdate, false, limit2, {10, 11, 12}},  // not 13 (%2 already), nor 14 (ending)
      {C::kUpdate, false, limit0, {13}},          // a %K reaches running tasks
      {C::kUpdate, false, time, {10, 11, 12}},    // the rest only pending ones
  };
  for (const Row& row : rows) {
    EXPECT_EQ(view_->For(10, row.change, row.root, row.edit), row.want)
        << static_cast<int>(row.change) << " root " << row.root;
  }
  EXPECT_EQ(view_->Unfinished(10), (std::vector<JobId>{10, 11, 12, 13, 14}));
  EXPECT_EQ(view_->State(jobs_->at(10)), JobState::kRunning);
  EXPECT_EQ(view_->Unfinished(16), std::nullopt) << "a job of no array";
  EXPECT_EQ(view_->Unfinished(11), std::nullopt) << "a task's own id is no array's";
  EXPECT_EQ(view_->Unfinished(99), std::nullopt) << "no such job";
}

TEST_F(ArrayTasksTest, AnArrayWhoseTasksAllEndedIsKnownAndItsStateComesFromTheStore) {
  // Stored as the daemon stores one: a rest, then each task taken out under its reserved id.
  JobRecord rest = NewArrayRest(JobRecord{}, ParseArraySpec("1-2").value());
  JobId id = store_->InsertArray(rest, 2, std::nullopt).value();
  JobRecord first;
  first.id = id;
  first.state = JobState::kCompleted;
  first.array = ArrayRecord{
      ArrayTask{.array_id = id, .index = 1, .count = 2, .min_index = 1, .max_index = 2}};
  ASSERT_TRUE(store_->Update(first).ok());
  JobRecord second = first;
  second.id = id + 1;
  second.state = JobState::kFailed;
  second.array.index = 2;
  ASSERT_TRUE(store_->InsertAt(second).ok());
  std::vector<JobId> ids = {id, id + 1};
  EXPECT_EQ(view_->Unfinished(ids[0]), std::vector<JobId>{}) << "an array, none left";
  EXPECT_EQ(view_->State(first), JobState::kFailed) << "its first task that did not complete";
}

}  // namespace
}  // namespace pinpoint::daemon

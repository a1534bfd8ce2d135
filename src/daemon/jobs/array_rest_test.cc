// A job array's rest (array_rest.h): one record for the tasks not started, the ids each task
// keeps, taking tasks out; and which stored job is an array's first (a retried submit's check).
#include "daemon/jobs/array_rest.h"

#include <gtest/gtest.h>

#include "daemon/arrays/job_array.h"

namespace pinpoint::daemon {
namespace {

JobRecord RestOf(const char* spec, JobId id) {
  JobRecord job;
  job.request.argv = {"true"};
  job.user = "alice";
  JobRecord rest = NewArrayRest(job, ParseArraySpec(spec).value());
  rest.id = rest.array.array_id = id;
  return rest;
}

TEST(ArrayRestTest, ANewArraysRestStandsForEveryTaskUnderTheFirstTasksId) {
  JobRecord rest = RestOf("2,4,9%3", 12);
  EXPECT_TRUE(IsArrayRest(rest));
  EXPECT_EQ(rest.array, (ArrayRecord{{12, 2, 3, 2, 9, 3, "2,4,9"}, "2,4,9"}));
  EXPECT_EQ(TasksIn(rest), 3u);
  JobRecord plain;
  EXPECT_FALSE(IsArrayRest(plain));
  EXPECT_EQ(TasksIn(plain), 1u);
  EXPECT_TRUE(IsFirstTaskOf(rest, ParseArraySpec("2,4,9%3").value()));
  EXPECT_FALSE(IsFirstTaskOf(rest, ParseArraySpec("2,4,9").value()));
  EXPECT_FALSE(IsFirstTaskOf(rest, ParseArraySpec("2,9%3").value()));  // same ends, another count
}

TEST(ArrayRestTest, EachTaskKeepsTheIdOfItsPlaceAmongTheIndices) {
  JobRecord rest = RestOf("0-12:4", 20);  // 0, 4, 8, 12: ids 20 to 23
  auto tasks = RestTasks::Of(rest);
  ASSERT_TRUE(tasks.has_value());
  EXPECT_EQ(tasks->FirstIds(10), (std::vector<JobId>{20, 21, 22, 23}));
  EXPECT_EQ(tasks->FirstIds(2), (std::vector<JobId>{20, 21}));
  EXPECT_EQ(tasks->PendingIndexOf(22), 8);
  EXPECT_FALSE(tasks->PendingIndexOf(19).has_value());
  EXPECT_FALSE(tasks->PendingIndexOf(24).has_value());
  JobRecord task = tasks->Task(rest, 23);
  EXPECT_EQ(task.id, 23);
  EXPECT_EQ(task.array, (ArrayTask{20, 12, 4, 0, 12, 0}));
  EXPECT_FALSE(IsArrayRest(task));
  EXPECT_EQ(task.request.argv, rest.request.argv);
}

TEST(ArrayRestTest, TakingTheFirstTaskOutMovesTheRestToTheNextOne) {
  JobRecord rest = RestOf("1-5", 30);
  auto tasks = RestTasks::Of(rest);
  ASSERT_TRUE(tasks.has_value());
  RestTasks::TakenOut out = tasks->TakeOut(rest, {30, 33});
  ASSERT_EQ(out.tasks.size(), 2u);
  EXPECT_EQ(out.tasks[0].id, 30);
  EXPECT_EQ(out.tasks[0].array.index, 1);
  EXPECT_EQ(out.tasks[1].id, 33);
  EXPECT_EQ(out.tasks[1].array.index, 4);
  ASSERT_TRUE(out.rest.has_value());
  EXPECT_EQ(out.rest->id, 31);
  EXPECT_EQ(out.rest->array.index, 2);
  EXPECT_EQ(out.rest->array.pending, "2-3,5");
  EXPECT_EQ(out.rest->array.indices, "1-5");
  EXPECT_EQ(TasksIn(*out.rest), 3u);
  // The moved rest still knows every task's id.
  auto left = RestTasks::Of(*out.rest);
  ASSERT_TRUE(left.has_value());
  EXPECT_EQ(left->FirstIds(10), (std::vector<JobId>{31, 32, 34}));
  EXPECT_FALSE(left->PendingIndexOf(33).has_value());
  // The last tasks out: no rest is left.
  EXPECT_FALSE(left->TakeOut(*out.rest, {31, 32, 34}).rest.has_value());
}

TEST(ArrayRestTest, ARestWhoseListsDoNotReadIsNoRest) {
  JobRecord rest = RestOf("1-5", 30);
  rest.array.pending = "1-x";
  EXPECT_FALSE(RestTasks::Of(rest).has_value());
  rest.array.pending = "6";  // not one of the array's
  EXPECT_FALSE(RestTasks::Of(rest).has_value());
  rest.array.pending = "1-2";
  rest.array.indices = "1-4";  // four indices for five tasks
  EXPECT_FALSE(RestTasks::Of(rest).has_value());
}

}  // namespace
}  // namespace pinpoint::daemon

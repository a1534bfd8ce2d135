// The %K limit of job arrays in Schedule, table-driven as placement_test.cc: a task does not start
// while K tasks of its array run, counting those started earlier in the same pass; it waits
// "array-limit", reserves nothing, and leaves room for the jobs behind it.
#include <gtest/gtest.h>

#include "sched/placement.h"
#include "sched/sched_test_util.h"

namespace pinpoint::sched {
namespace {

using namespace ::pinpoint::sched::testing;  // NOLINT(google-build-using-namespace)

Demand Task(Demand d, JobId array_id, int limit) {
  d.array_id = array_id;
  d.array_limit = limit;
  return d;
}

RunningJob RunningTask(RunningJob r, JobId array_id) {
  r.array_id = array_id;
  return r;
}

std::vector<PlanCase> ArrayLimitCases() {
  return {
      {"limit_counts_tasks_started_in_the_pass",
       {Node({Gpu(80)}),
        {},
        {Task(Slice(10, 1, 1), 10, 2), Task(Slice(11, 1, 1), 10, 2), Task(Slice(12, 1, 1), 10, 2)}},
       "10@0 11@0 12:array-limit",
       "-",
       {{12, "array 10 runs 2 tasks, its limit (%2)"}}},
      {"limit_counts_running_tasks",
       {Node({Gpu(80)}),
        {RunningTask(Running(10, 1, {On(0, 1)}), 10)},
        {Task(Slice(11, 1, 1), 10, 1), Task(Slice(12, 1, 1), 10, 1)}},
       "11:array-limit 12:array-limit",
       "-",
       {{11, "array 10 runs 1 task, its limit (%1)"}}},
      {"a_task_of_another_array_is_not_counted",
       {Node({Gpu(80)}),
        {RunningTask(Running(1, 1, {On(0, 1)}), 1)},
        {Task(Slice(10, 1, 1), 10, 1), Task(Slice(11, 1, 1), 10, 1)}},
       "10@0 11:array-limit"},
      {"no_limit_runs_what_fits",
       {Node({Gpu(80)}),
        {RunningTask(Running(10, 1, {On(0, 1)}), 10)},
        {Task(Slice(11, 1, 1), 10, 0), Task(Slice(12, 1, 1), 10, 0)}},
       "11@0 12@0"},
      // The throttled tasks hold no reservation: the whole GPU job behind them gets it.
      {"a_throttled_task_reserves_nothing",
       {Node({Gpu(80)}),
        {RunningTask(Running(10, 1, {WholeOn(0)}), 10)},
        {Task(Whole(11, 1), 10, 1), Whole(20, 1)}},
       "11:array-limit 20:resources",
       "20:0"},
      // A task waiting for its limit does not keep a later job of the same shape from starting.
      {"the_job_behind_a_throttled_task_starts",
       {Node({Gpu(80)}),
        {RunningTask(Running(10, 1, {On(0, 1)}), 10)},
        {Task(Slice(11, 1, 1), 10, 1), Slice(20, 1, 1)}},
       "20@0 11:array-limit"},
      // A task that cannot start for lack of room is not counted as running.
      {"a_task_that_waits_for_room_leaves_the_count",
       {Node({Gpu(80)}), {}, {Task(Whole(10, 2), 10, 1), Task(Slice(11, 1, 1), 10, 1)}},
       "11@0 10:resources",
       "-"},
      // Held first: a held task says held, whatever its array runs.
      {"held_before_the_limit",
       {Node({Gpu(80)}),
        {RunningTask(Running(10, 1, {On(0, 1)}), 10)},
        {Held(Task(Slice(11, 1, 1), 10, 1))}},
       "11:held"},
  };
}

class ArrayLimitTest : public ::testing::TestWithParam<PlanCase> {};

TEST_P(ArrayLimitTest, ProducesPlan) { ExpectPlan(GetParam()); }

INSTANTIATE_TEST_SUITE_P(ArrayLimits, ArrayLimitTest, ::testing::ValuesIn(ArrayLimitCases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace pinpoint::sched

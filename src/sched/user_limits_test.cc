// Table-driven tests of user limits (config user_limits) in Schedule and at submit.
#include "sched/user_limits.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sched/placement.h"
#include "sched/sched_test_util.h"

namespace pinpoint::sched {
namespace {

using ::testing::HasSubstr;
using namespace ::pinpoint::sched::testing;  // NOLINT(google-build-using-namespace)

UserLimit Jobs(int n) { return UserLimit{n, std::nullopt}; }
UserLimit Mem(uint64_t gib) { return UserLimit{std::nullopt, gib * kGiB}; }

Demand OfUser(Demand d, uint32_t uid) {
  d.uid = uid;
  return d;
}

constexpr SharingMode kTimesliceMode = SharingMode::kTimeslice;

Snapshot Limited(Snapshot s, UserLimits limits) {
  s.user_limits = std::move(limits);
  return s;
}

std::vector<PlanCase> UserLimitCases() {
  return {
      {"running_jobs_counts_running_and_started_in_the_pass",
       Limited({Node({Gpu(80, kTimesliceMode)}),
                {Running(100, 1, {On(0, 10)})},
                {Slice(1, 1, 10), Slice(2, 1, 10), Slice(3, 2, 10)}},
               {Jobs(2), {}}),
       "1@0 3@0 2:user-limit",
       "-",
       {{2, "its user runs 2 jobs, the most user_limits allows (running_jobs 2)"}}},
      {"a_user_entry_replaces_the_default",
       Limited({Node({}),
                {},
                {CpuOnly(1, 1), CpuOnly(2, 1), OfUser(CpuOnly(3, 1), 7), OfUser(CpuOnly(4, 1), 7)}},
               {Jobs(1), {{1000, Jobs(5)}}}),
       "1@ 2@ 3@ 4:user-limit"},
      {"gpu_mem_counts_slices_on_each_device",
       Limited({Node({Gpu(80), Gpu(80)}),
                {Running(100, 1, {On(0, 30)})},
                {Slice(1, 1, 20, 0, 2), Slice(2, 1, 10)}},
               {Mem(60), {}}),
       "2@1 1:user-limit",
       "-",
       {{1,
         "its user's jobs hold 30GiB of device memory; 40GiB more would pass the 60GiB user_limits "
         "allows (gpu_mem)"}}},
      {"a_whole_gpu_counts_its_memory",
       Limited({Node({Gpu(80), Gpu(40)}),
                {Running(100, 1000, {WholeOn(1)})},
                {Whole(1, 1), Whole(2, 1, 2000)}},
               {Mem(100), {}}),
       "2@0 1:user-limit"},
      {"a_job_over_its_users_limit_reserves_nothing",
       Limited({Node({Gpu(80, kTimesliceMode)}),
                {Running(100, 1, {On(0, 75)})},
                {Slice(1, 1, 10), Slice(2, 2, 70)}},
               {Mem(80), {}}),
       "1:user-limit 2:resources", "2:0"},
      {"every_running_record_counts",  // the daemon passes leases as running jobs too
       Limited({Node({Gpu(80)}), {Running(100, 1, {On(0, 10)})}, {Slice(1, 1, 10)}}, {Jobs(1), {}}),
       "1:user-limit"},
      {"a_user_limit_does_not_touch_other_users",
       Limited({Node({Gpu(80)}, 64),
                {Running(100, 1, {}, 1)},
                {CpuOnly(1, 1), OfUser(CpuOnly(2, 1), 1)}},
               {{}, {{1, Jobs(1)}}}),
       "1@ 2:user-limit"},
  };
}

class UserLimitPlanTest : public ::testing::TestWithParam<PlanCase> {};

TEST_P(UserLimitPlanTest, ProducesPlan) { ExpectPlan(GetParam()); }

INSTANTIATE_TEST_SUITE_P(UserLimits, UserLimitPlanTest, ::testing::ValuesIn(UserLimitCases()),
                         [](const auto& info) { return info.param.name; });

TEST(UserLimitTest, AJobStartsWhenItsUsersOtherJobsEnd) {
  Snapshot full{Node({Gpu(80)}), {Running(100, 1, {On(0, 10)})}, {Slice(1, 1, 10)}};
  full.user_limits.defaults = Jobs(1);
  EXPECT_EQ(Summary(Schedule(full)), "1:user-limit");
  full.running.clear();
  EXPECT_EQ(Summary(Schedule(full)), "1@0");
}

TEST(UserLimitTest, NoLimitsChangeNothing) {
  Snapshot s{Node({Gpu(80)}), {Running(100, 1, {On(0, 10)})}, {Slice(1, 1, 10), Slice(2, 1, 10)}};
  EXPECT_EQ(Summary(Schedule(s)), "1@0 2@0");
}

TEST(CheckUserLimitTest, ADemandAloneOverTheCapIsRefused) {
  Inventory inv = Node({Gpu(80), Gpu(80), Gpu(40)});
  EXPECT_TRUE(CheckUserLimit(Whole(1, 2), Mem(80), inv).ok())
      << "80 + 40 is not the least: 40 + 40";
  Status over = CheckUserLimit(Whole(1, 3), Mem(80), inv);
  EXPECT_EQ(over.code(), Code::kFailedPrecondition);
  EXPECT_THAT(over.message(),
              HasSubstr("needs 120GiB of device memory in all, more than the 80GiB"));
  EXPECT_FALSE(CheckUserLimit(Slice(1, 1, 50, 0, 2), Mem(80), inv).ok());
  EXPECT_FALSE(CheckUserLimit(PinnedTo(Whole(1, 1), {0}), Mem(60), inv).ok());
  EXPECT_TRUE(CheckUserLimit(PinnedTo(Whole(1, 1), {2}), Mem(60), inv).ok());
  EXPECT_TRUE(CheckUserLimit(Whole(1, 3), Jobs(1), inv).ok()) << "running_jobs alone never refuses";
  Demand huge = Slice(1, 1, 1, 0, 1024);
  huge.gpu_mem_bytes = UINT64_MAX / 2;
  EXPECT_FALSE(CheckUserLimit(huge, Mem(80), inv).ok()) << "saturates, does not wrap";
}

}  // namespace
}  // namespace pinpoint::sched

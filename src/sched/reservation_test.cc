// No starvation: the first job that cannot start holds devices and host resources while they
// drain; later jobs backfill only onto what it does not hold.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "sched/placement.h"
#include "sched/sched_test_util.h"

namespace pinpoint::sched {
namespace {

using ::testing::HasSubstr;
using namespace ::pinpoint::sched::testing;  // NOLINT(google-build-using-namespace)

std::vector<PlanCase> ReservationCases() {
  return {
      {"later_jobs_backfill_only_unreserved_devices",
       {Node({Gpu(80), Gpu(80), Gpu(80)}),
        {Running(100, 1, {On(0, 10)}), Running(101, 1, {On(1, 10)}), Running(102, 1, {On(2, 10)}),
         Running(103, 1, {On(2, 10)})},
        {Whole(10, 2), Slice(11, 1, 10), Slice(12, 1, 70)}},
       "11@2 10:resources 12:reservation",
       "10:0,1",
       {{10, "needs 2 empty GPUs, 0 free; GPU 0, GPU 1 held for it"},
        {12, "devices it could use are held for job 10"}}},
      {"whole_gpu_reserves_cheapest_to_drain",
       {Packed(Node({Gpu(80), Gpu(80), Gpu(80)})),
        {Running(100, 1, {On(0, 10)}), Running(101, 1, {On(0, 10)}), Running(102, 1, {On(0, 10)}),
         Running(103, 1, {On(1, 10)}), Running(104, 1, {On(2, 10)}), Running(105, 1, {On(2, 10)})},
        {Whole(1, 1), Slice(2, 1, 10)}},
       "2@0 1:resources",
       "1:1"},
      {"whole_gpu_reservation_never_takes_mig",
       {Node({Mig(0, 40), Gpu(80)}),
        {Running(100, 1, {On(1, 10)})},
        {Whole(1, 1), Slice(2, 1, 10)}},
       "2@0 1:resources",
       "1:1"},
      {"slice_reserves_device_needing_least_to_drain",
       {Node({Gpu(80), Gpu(80)}),
        {Running(100, 1, {On(0, 20)}), Running(101, 1, {On(0, 20)}), Running(102, 1, {On(0, 20)}),
         Running(103, 1, {On(1, 70)})},
        {Slice(1, 1, 30)}},
       "1:resources",
       "1:0"},
      {"slice_reservation_prefers_own_uid_device",
       {Node({Gpu(80), Gpu(80)}),
        {Running(100, 2, {On(0, 10)}), Running(101, 1, {On(1, 40)}), Running(102, 1, {On(1, 30)})},
        {Slice(1, 1, 20), Slice(2, 2, 10)}},
       "2@0 1:mps-user",
       "1:1"},
      {"mps_user_reservation_stops_same_uid_backfill",
       {Node({Gpu(80)}), {Running(100, 1, {On(0, 10)})}, {Slice(1, 2, 10), Slice(2, 1, 10)}},
       "1:mps-user 2:reservation",
       "1:0",
       {{2, "held for job 1"}}},
      {"host_reservation_holds_cpus",
       {Node({Gpu(80)}, 8), {Running(100, 1, {}, 6)}, {CpuOnly(1, 4), CpuOnly(2, 2)}},
       "1:host-resources 2:reservation",
       "1:",
       {{2, "host CPUs and memory are held for job 1"}}},
      {"gpu_blocked_job_holds_its_cpus",
       {Node({Gpu(80)}, 8),
        {Running(100, 1, {WholeOn(0)}, 1)},
        {WithHost(Whole(1, 1), 4, 0), CpuOnly(2, 4), CpuOnly(3, 3)}},
       "3@ 1:resources 2:reservation",
       "1:0"},
      {"gpu_blocked_job_holds_its_host_memory",
       {Node({Gpu(80)}, 64, 64),
        {Running(100, 1, {WholeOn(0)}, 1, 16)},
        {WithHost(Whole(1, 1), 1, 40), CpuOnly(2, 1, 10), CpuOnly(3, 1, 8)}},
       "3@ 1:resources 2:reservation",
       "1:0"},
      {"only_first_blocked_job_reserves",
       {Packed(Node({Gpu(80), Gpu(80), Gpu(80)})),
        {Running(100, 1, {On(0, 10)}), Running(101, 1, {On(1, 10)}), Running(102, 1, {On(1, 10)}),
         Running(103, 1, {On(2, 10)})},
        {Whole(1, 1), Whole(2, 1), Slice(3, 1, 10), Slice(4, 1, 65)}},
       "3@1 4@2 1:resources 2:resources",
       "1:0"},
      {"never_fitting_job_holds_nothing",
       {Node({Gpu(80)}), {}, {Whole(1, 2), CpuOnly(2, 100), Slice(3, 1, 10), Slice(4, 2, 10)}},
       "3@0 1:resources 2:resources 4:mps-user",
       "4:0",
       {{1, "needs 2 whole GPUs, this node has 1"}, {2, "needs 100 CPUs, host has 64"}}},
      {"higher_priority_job_takes_the_reservation",
       {Node({Gpu(80), Gpu(80), Gpu(80)}),
        {Running(100, 1, {On(0, 10)}), Running(101, 1, {On(1, 10)}), Running(102, 1, {On(1, 10)})},
        {Whole(1, 1), WithPriority(Whole(2, 2), 1)}},
       "2:resources 1:reservation",
       "2:0,2"},
  };
}

class ReservationTest : public ::testing::TestWithParam<PlanCase> {};

TEST_P(ReservationTest, ProducesPlan) { ExpectPlan(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Reservation, ReservationTest, ::testing::ValuesIn(ReservationCases()),
                         [](const auto& info) { return info.param.name; });

TEST(ReservationTest, HoldsTheBlockedJobsHostResources) {
  Demand big = WithHost(Whole(1, 1), 6, 20);
  Plan plan = Schedule({Node({Gpu(80)}, 8, 64), {Running(100, 1, {WholeOn(0)})}, {big}});
  ASSERT_TRUE(plan.reservation.has_value());
  EXPECT_EQ(plan.reservation->cpus, 6);
  EXPECT_EQ(plan.reservation->mem_bytes, 20 * kGiB);
}

// Applies a plan: started jobs join the running set, waiting ones stay pending.
void Apply(const Plan& plan, const std::vector<Demand>& demands, Snapshot* s) {
  for (const Start& start : plan.starts) {
    auto it = std::find_if(demands.begin(), demands.end(),
                           [&](const Demand& d) { return d.id == start.id; });
    s->running.push_back(Running(it->id, it->uid, start.slots, it->cpus));
    std::erase_if(s->pending, [&](const Demand& d) { return d.id == start.id; });
  }
}

bool TouchesDevice(const Start& start, int device) {
  return std::any_of(start.slots.begin(), start.slots.end(),
                     [&](const Slot& slot) { return slot.device_index == device; });
}

// A 2-GPU job at the head of the queue waits behind running slices on GPUs 0 and 1 (which best
// fit would keep filling, being the fullest). One running job on them ends per pass and one new
// small slice arrives per pass. The new slices must go to GPU 2 (or wait once it is full), and
// the big job must start in the very pass after GPUs 0 and 1 have drained.
TEST(NoStarvationTest, BigJobStartsAsSoonAsItsReservedDevicesDrain) {
  Snapshot s{Node({Gpu(80), Gpu(80), Gpu(80)}), {}, {}};
  s.running = {Running(100, 1, {On(0, 30)}), Running(101, 1, {On(1, 30)}),
               Running(102, 1, {On(0, 30)}), Running(103, 1, {On(1, 30)}),
               Running(104, 1, {On(2, 10)}), Running(105, 1, {On(2, 10)}),
               Running(106, 1, {On(2, 10)})};
  std::vector<Demand> demands = {Whole(10, 2, 1)};
  for (JobId id = 11; id <= 20; ++id) {
    demands.push_back(Slice(id, 1, 10));
  }
  s.pending = {demands[0]};
  const std::vector<JobId> finishing = {100, 101, 102, 103};

  for (int pass = 0; pass < 8; ++pass) {
    SCOPED_TRACE("pass " + std::to_string(pass));
    s.pending.push_back(demands[1 + pass]);  // one new small slice per pass
    Plan plan = Schedule(s);
    bool drained = pass >= 4;  // 100..103 have ended after passes 0..3
    bool big_started = std::any_of(plan.starts.begin(), plan.starts.end(),
                                   [](const Start& st) { return st.id == 10; });
    EXPECT_EQ(big_started, pass == 4);
    if (!drained) {
      ASSERT_TRUE(plan.reservation.has_value());
      EXPECT_EQ(plan.reservation->id, 10);
      EXPECT_EQ(plan.reservation->device_indices, (std::vector<int>{0, 1}));
      for (const Start& st : plan.starts) {
        EXPECT_FALSE(TouchesDevice(st, 0) || TouchesDevice(st, 1)) << "job " << st.id;
      }
    }
    Apply(plan, demands, &s);
    if (pass < 4) {
      std::erase_if(s.running, [&](const RunningJob& r) { return r.id == finishing[pass]; });
    }
  }
  // GPU 2 held 30GiB and took five 10GiB slices (passes 0..4); the rest wait behind a full node.
  Plan last = Schedule(s);
  EXPECT_EQ(Summary(last), "16:resources 17:resources 18:resources");
}

TEST(NoStarvationTest, SmallJobsStillBackfillWhileBigJobWaits) {
  Snapshot s{Node({Gpu(80), Gpu(80), Gpu(80), Gpu(80)}),
             {Running(100, 1, {On(0, 10)}), Running(101, 1, {On(1, 10)})},
             {Whole(10, 3), Slice(11, 1, 10), Slice(12, 1, 10), Slice(13, 2, 10)}};
  Plan plan = Schedule(s);
  // The 3-GPU job holds GPUs 2 and 3 (empty) and GPU 0 (cheapest busy one, lowest index).
  EXPECT_EQ(ReservationSummary(plan), "10:0,2,3");
  // Uid 2 could use GPU 2 or 3 but for the reservation.
  EXPECT_EQ(Summary(plan), "11@1 12@1 10:resources 13:reservation");
}

}  // namespace
}  // namespace pinpoint::sched

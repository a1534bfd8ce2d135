// Table-driven tests of Schedule: each case is a snapshot and the plan it must produce, written
// as a Summary() line ("1@0 2:resources"), the reservation, and sentences the details contain.
#include "sched/placement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sched/sched_test_util.h"

namespace pinpoint::sched {
namespace {

using ::testing::HasSubstr;
using namespace ::pinpoint::sched::testing;  // NOLINT(google-build-using-namespace)

constexpr SharingMode kTimeslice = SharingMode::kTimeslice;
constexpr SharingMode kExclusive = SharingMode::kExclusive;

Inventory WithClientLimit(Inventory inv, int limit) {
  SetMpsRules(&inv, limit);
  return inv;
}

// 49 one-GiB slices of one user onto an empty MPS GPU: the 49th is over the client limit.
PlanCase ClientLimitCase() {
  PlanCase c{"mps_client_limit_49th_slice_waits", {Node({Gpu(80)}), {}, {}}, "", "49:0", {}};
  for (JobId id = 1; id <= 49; ++id) {
    c.snapshot.pending.push_back(Slice(id, 1, 1));
  }
  for (JobId id = 1; id <= 48; ++id) {
    c.want += std::to_string(id) + "@0 ";
  }
  c.want += "49:resources";
  return c;
}

std::vector<PlanCase> PlacementCases() {
  return {
      // Held jobs: passed over whatever their priority, reserving nothing.
      {"held_job_is_passed_over",
       {Node({Gpu(80)}), {}, {Held(Whole(1, 1)), Whole(2, 1)}},
       "2@0 1:held",
       "-",
       {{1, "held by its owner: pinpoint release 1"}}},
      {"held_job_first_in_order_reserves_nothing",
       {Node({Gpu(80), Gpu(80)}),
        {Running(100, 1, {On(0, 10)})},
        {[] {
           Demand d = Held(Whole(1, 2), Hold::kRoot);
           d.priority = 10;
           return d;
         }(),
         Slice(2, 1, 10)}},
       "2@1 1:held",
       "-",
       {{1, "held by root: only root can release it"}}},
      // Devices a batch system chose: those or none, whatever best fit would prefer.
      {"pinned_slice_goes_where_pinned",
       {Node({Gpu(80), Gpu(80)}), {Running(100, 1, {On(1, 10)})}, {PinnedTo(Slice(1, 1, 10), {0})}},
       "1@0"},
      {"pinned_slice_waits_for_its_device",
       {Node({Gpu(80), Gpu(80)}), {Running(100, 1, {On(0, 75)})}, {PinnedTo(Slice(1, 1, 10), {0})}},
       "1:resources",
       "1:0"},
      {"pinned_whole_gpus",
       {Node({Gpu(80), Gpu(80), Gpu(80)}), {}, {PinnedTo(Whole(1, 2), {2, 0})}},
       "1@2,0"},
      {"pinned_whole_gpu_waits_for_a_busy_device",
       {Node({Gpu(80), Gpu(80)}),
        {Running(100, 1, {On(1, 10)})},
        {PinnedTo(Whole(1, 1), {1}), Whole(2, 1)}},
       "2@0 1:resources",
       "1:1"},
      {"pinned_to_a_device_the_node_lost_waits",  // stored before a restart with fewer GPUs
       {Node({Gpu(80)}), {}, {PinnedTo(Slice(1, 1, 10), {3}), PinnedTo(Whole(2, 1), {3})}},
       "1:resources 2:resources",
       "-",
       {{1, "needs GPU 3, this node has 1 device"}, {2, "needs GPU 3, this node has 1 device"}}},
      {"pinned_slices_do_not_share_a_cache_with_unpinned",
       {Node({Gpu(80), Gpu(80)}),
        {Running(100, 1, {On(0, 75)})},
        {PinnedTo(Slice(1, 1, 10), {0}), Slice(2, 1, 10)}},
       "2@1 1:resources",
       "1:0"},
      // Spreading (slice_placement auto, the default, and spread).
      {"two_idle_gpus_take_the_first_two_slices_one_each",
       {Node({Gpu(80), Gpu(80)}),
        {},
        {Slice(1, 1, 10), Slice(2, 1, 10), Slice(3, 1, 10), Slice(4, 1, 10)}},
       "1@0 2@1 3@0 4@1"},
      {"spread_goes_to_the_device_with_fewer_jobs",
       {Node({Gpu(80), Gpu(80)}), {Running(100, 1, {On(1, 10)})}, {Slice(1, 1, 10)}},
       "1@0"},
      {"spread_weighs_reserved_share_before_job_count",
       {Node({Gpu(80), Gpu(80)}),
        {Running(100, 1, {On(0, 10, 50)}), Running(101, 1, {On(1, 10, 10)}),
         Running(102, 1, {On(1, 10, 10)})},
        {Slice(1, 1, 10, 10)}},
       "1@1"},
      {"spread_prefers_the_less_busy_of_two_alike",
       {Node({Busy(Gpu(80), 90), Busy(Gpu(80), 10)}),
        {Running(100, 1, {On(0, 10)}), Running(101, 1, {On(1, 10)})},
        {Slice(1, 1, 10)}},
       "1@1"},
      {"auto_keeps_empty_gpus_for_a_waiting_whole_gpu_job",
       {Node({Gpu(80), Gpu(80), Gpu(80)}),
        {Running(100, 1, {On(0, 10)})},
        {Slice(1, 1, 10), Slice(2, 1, 10), Whole(3, 2)}},
       "1@0 2@0 3@1,2"},
      {"spread_takes_them_anyway_when_the_site_asks",
       {Spread(Node({Gpu(80), Gpu(80), Gpu(80)})),
        {Running(100, 1, {On(0, 10)})},
        {Slice(1, 1, 10), Slice(2, 1, 10), Whole(3, 2)}},
       "1@1 2@2 3:resources",
       "3:0,1"},
      {"auto_keeps_the_empty_gpus_the_site_asks_for",
       {KeepEmpty(Node({Gpu(80), Gpu(80), Gpu(80), Gpu(80)}), 1),
        {},
        {Slice(1, 1, 10), Slice(2, 1, 10), Slice(3, 1, 10), Slice(4, 1, 10)}},
       "1@0 2@1 3@2 4@0"},
      {"kept_empty_gpus_still_take_a_slice_nothing_else_fits",
       {KeepEmpty(Node({Gpu(80), Gpu(80)}), 1), {Running(100, 1, {On(0, 75)})}, {Slice(1, 1, 10)}},
       "1@1"},
      {"auto_leaves_a_gpu_for_another_users_mps",
       {Node({Gpu(80), Gpu(80)}), {}, {Slice(1, 1, 10), Slice(2, 1, 10), Slice(3, 2, 10)}},
       "1@0 2@0 3@1"},
      {"timeslice_users_need_no_gpu_of_their_own",
       {Node({Gpu(80, kTimeslice), Gpu(80, kTimeslice), Gpu(80, kTimeslice)}),
        {Running(100, 1, {On(0, 10)})},
        {Slice(1, 1, 10), Slice(2, 2, 10), Slice(3, 3, 10)}},
       "1@1 2@2 3@0"},
      {"two_users_slices_on_two_gpus_at_once",
       {Node({Gpu(80), Gpu(80)}),
        {},
        {Slice(1, 1, 10), Slice(2, 2, 10), Slice(3, 1, 10), Slice(4, 2, 10)}},
       "1@0 2@1 3@0 4@1"},
      {"auto_spreads_when_the_waiting_whole_gpu_job_is_held",
       {Node({Gpu(80), Gpu(80), Gpu(80)}),
        {Running(100, 1, {On(0, 10)})},
        {Slice(1, 1, 10), Slice(2, 1, 10), Held(Whole(3, 2))}},
       "1@1 2@2 3:held"},
      {"spread_multi_gpu_slice_takes_distinct_least_loaded_devices",
       {Node({Gpu(80), Gpu(80), Gpu(80)}), {Running(100, 1, {On(0, 10)})}, {Slice(1, 1, 10, 0, 2)}},
       "1@1,2"},
      // Packing and best fit (slice_placement pack).
      {"slice_packs_onto_partly_used_gpu",
       {Packed(Node({Gpu(80), Gpu(80)})), {Running(100, 1, {On(1, 10)})}, {Slice(1, 1, 10)}},
       "1@1"},
      {"best_fit_leaves_least_free_memory",
       {Packed(Node({Gpu(80), Gpu(80), Gpu(80)})),
        {Running(100, 1, {On(0, 20)}), Running(101, 1, {On(1, 60)})},
        {Slice(1, 1, 10), Slice(2, 1, 30)}},
       "1@1 2@0"},
      {"slices_keep_whole_gpus_free",
       {Packed(Node({Gpu(80), Gpu(80), Gpu(80)})),
        {Running(100, 1, {On(0, 10)})},
        {Slice(1, 1, 10), Slice(2, 1, 10), Whole(3, 2)}},
       "1@0 2@0 3@1,2"},
      {"empty_device_smallest_first",
       {Packed(Node({Gpu(80), Gpu(40), Gpu(48)})), {}, {Slice(1, 1, 10), Slice(2, 2, 45)}},
       "1@1 2@2"},
      {"shareable_empty_device_before_exclusive",
       {Packed(Node({Gpu(80, kExclusive), Gpu(80)})), {}, {Slice(1, 1, 10)}},
       "1@1"},
      {"mig_instance_fitting_most_tightly",
       {Packed(Node({Mig(0, 10), Mig(0, 20), Mig(0, 40), Gpu(80)})),
        {},
        {Slice(1, 1, 15), Slice(2, 2, 5), Slice(3, 3, 50)}},
       "1@1 2@0 3@3"},
      {"partly_used_mig_before_empty_mig",
       {Packed(Node({Mig(0, 20), Mig(0, 20)})), {Running(100, 1, {On(1, 10)})}, {Slice(1, 1, 5)}},
       "1@1"},
      // Memory, share and client sums.
      {"memory_sum_respected",
       {Node({Gpu(80)}), {Running(100, 1, {On(0, 70)})}, {Slice(1, 1, 20)}},
       "1:resources",
       "1:0",
       {{1,
         "needs 20GiB of device memory on one device, none can take it now; GPU 0 held for it"}}},
      {"share_sum_respected",
       {Node({Gpu(80)}),
        {Running(100, 1, {On(0, 10, 70)})},
        {Slice(1, 1, 10, 30), Slice(2, 1, 10, 10)}},
       "1@0 2:resources",
       "2:0",
       {{2, "needs 10GiB of device memory and 10% SM share on one device"}}},
      {"zero_share_reserves_no_share",
       {Node({Gpu(80)}), {Running(100, 1, {On(0, 10, 100)})}, {Slice(1, 1, 10, 0)}},
       "1@0"},
      ClientLimitCase(),
      {"mps_client_limit_counts_running_jobs",
       {WithClientLimit(Node({Gpu(80), Gpu(80)}), 2),
        {Running(100, 1, {On(0, 1)}), Running(101, 1, {On(0, 1)})},
        {Slice(1, 1, 1)}},
       "1@1"},
      // The MPS user rule.
      {"mps_other_uid_goes_to_another_device",
       {Node({Gpu(80), Gpu(80)}), {Running(100, 1, {On(0, 10)})}, {Slice(1, 2, 10)}},
       "1@1"},
      {"mps_other_uid_waits_when_no_other_device",
       {Node({Gpu(80)}), {Running(100, 1001, {On(0, 10)})}, {Slice(1, 2, 10)}},
       "1:mps-user",
       "1:0",
       {{1, "GPU 0 MPS server belongs to uid 1001"}}},
      {"mps_two_uids_placed_in_one_pass_never_share",
       {Node({Gpu(80)}), {}, {Slice(1, 1, 10), Slice(2, 2, 10)}},
       "1@0 2:mps-user",
       "2:0"},
      {"mps_multi_slice_blocked_by_user_on_one_device",
       {Node({Gpu(80), Gpu(80)}), {Running(100, 2, {On(0, 10)})}, {Slice(1, 1, 10, 0, 2)}},
       "1:mps-user",
       "1:0,1"},
      {"timeslice_mixes_uids",
       {Node({Gpu(80, kTimeslice)}), {}, {Slice(1, 1, 10), Slice(2, 2, 10)}},
       "1@0 2@0"},
      {"timeslice_has_no_client_limit",
       {WithClientLimit(Node({Gpu(80, kTimeslice)}), 2),
        {},
        {Slice(1, 1, 1), Slice(2, 1, 1), Slice(3, 2, 1)}},
       "1@0 2@0 3@0"},
      {"timeslice_memory_sum_still_applies",
       {Node({Gpu(80, kTimeslice)}), {Running(100, 1, {On(0, 60)})}, {Slice(1, 2, 30)}},
       "1:resources",
       "1:0"},
      // Exclusive mode.
      {"exclusive_takes_one_slice",
       {Node({Gpu(80, kExclusive)}), {}, {Slice(1, 1, 10), Slice(2, 1, 10)}},
       "1@0 2:resources",
       "2:0"},
      {"exclusive_running_slice_occupies_device",
       {Node({Gpu(80, kExclusive), Gpu(80)}), {Running(100, 1, {On(0, 1)})}, {Whole(1, 1)}},
       "1@1"},
      {"whole_gpu_on_exclusive_device", {Node({Gpu(80, kExclusive)}), {}, {Whole(1, 1)}}, "1@0"},
      // Whole and multi-GPU.
      {"whole_gpu_never_on_mig",
       {Node({Mig(0, 40), Mig(0, 40), Gpu(80)}), {}, {Whole(1, 1)}},
       "1@2"},
      {"whole_gpus_need_empty_distinct_devices",
       {Node({Gpu(80), Gpu(80), Gpu(80), Gpu(80)}), {Running(100, 1, {On(1, 10)})}, {Whole(1, 2)}},
       "1@0,2"},
      {"whole_gpus_wait_for_empty_ones",
       {Node({Gpu(80), Gpu(80)}), {Running(100, 1, {On(0, 10)})}, {Whole(1, 2)}},
       "1:resources",
       "1:0,1",
       {{1, "needs 2 empty GPUs, 1 free"}}},
      {"whole_gpu_makes_device_full",
       {Node({Gpu(80)}), {}, {Whole(1, 1), Slice(2, 1, 1)}},
       "1@0 2:resources",
       "2:0"},
      {"multi_slice_on_distinct_devices",
       {Packed(Node({Gpu(80), Gpu(80), Gpu(80)})),
        {Running(100, 1, {On(0, 10)})},
        {Slice(1, 1, 10, 0, 2)}},
       "1@0,1"},
      // Drained devices.
      {"drained_device_takes_nothing",
       {Node({Drained(Gpu(80)), Gpu(80)}), {Running(100, 1, {On(0, 10)})}, {Slice(1, 1, 10)}},
       "1@1"},
      {"drained_devices_count_as_absent",
       {Node({Drained(Gpu(80)), Gpu(80)}), {}, {Whole(1, 2), Whole(2, 1)}},
       "2@1 1:resources",
       "-",
       {{1, "needs 2 whole GPUs, this node has 1 in service"}}},
      // Host resources.
      {"host_cpus_respected",
       {Node({Gpu(80)}, 8), {Running(100, 1, {}, 6)}, {CpuOnly(1, 4)}},
       "1:host-resources",
       "1:",
       {{1, "needs 4 CPUs, 2 free"}}},
      {"host_memory_respected",
       {Node({}, 64, 32), {Running(100, 1, {}, 1, 24)}, {CpuOnly(1, 1, 16)}},
       "1:host-resources",
       "1:",
       {{1, "needs 16GiB of host memory, 8GiB free"}}},
      {"zero_host_memory_reserves_none",
       {Node({}, 2, 0), {}, {CpuOnly(1, 1, 0), CpuOnly(2, 1, 0)}},
       "1@ 2@"},
      {"cpu_only_job_ignores_full_gpus",
       {Node({Gpu(80)}), {Running(100, 1, {WholeOn(0)})}, {CpuOnly(1, 4)}},
       "1@"},
      {"gpu_job_needs_host_cpus_too",
       {Node({Gpu(80)}, 4), {Running(100, 1, {}, 4)}, {Slice(1, 1, 10)}},
       "1:host-resources",
       "1:0"},
      // Order.
      {"priority_first",
       {Node({Gpu(80)}), {}, {Whole(1, 1), WithPriority(Whole(2, 1), 5), Whole(3, 1)}},
       "2@0 1:resources 3:resources",
       "1:0"},
      {"equal_priority_by_id",
       {Node({Gpu(80)}), {}, {Whole(5, 1), Whole(3, 1)}},
       "3@0 5:resources",
       "5:0"},
  };
}

class PlanTest : public ::testing::TestWithParam<PlanCase> {};

TEST_P(PlanTest, ProducesPlan) { ExpectPlan(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Placement, PlanTest, ::testing::ValuesIn(PlacementCases()),
                         [](const auto& info) { return info.param.name; });

// The slots of a mig-dynamic GPU take a slice before other devices, best fit: a 15 GiB slice goes
// to the 2g.20gb, not the 3g.40gb (nor the whole GPU), whether slices spread or pack.
TEST(PlacementTest, MigSlotsTakeSlicesFirstBestFit) {
  Device three = Mig(0, 40);
  three.partition = partition::Partition::Slot(4, "3g.40gb");
  Device two = Mig(0, 20);
  two.partition = partition::Partition::Slot(0, "2g.20gb");
  for (SlicePlacement placement :
       {SlicePlacement::kSpread, SlicePlacement::kPack, SlicePlacement::kAuto}) {
    Plan plan = Schedule({Placing(Node({Gpu(80), three, two}), placement), {}, {Slice(1, 1, 15)}});
    ASSERT_EQ(plan.starts.size(), 1u);
    EXPECT_EQ(plan.starts[0].slots[0].device_index, 2) << SlicePlacementName(placement);
  }
  Plan big = Schedule({Node({Gpu(80), three, two}), {}, {Slice(1, 1, 30)}});
  ASSERT_EQ(big.starts.size(), 1u);
  EXPECT_EQ(big.starts[0].slots[0].device_index, 1);
}

// --mig: only an instance of the named profile takes the slice, though another has more room.
TEST(PlacementTest, ANamedMigProfileGoesOnlyToItsInstances) {
  Device small = Mig(0, 10);
  small.partition.profile = "1g.10gb";
  Device big = Mig(0, 40);
  big.partition.profile = "3g.40gb";
  Demand d = Slice(1, 1, 5);
  d.mig_profile = "3g.40gb";
  Plan plan = Schedule({Node({small, big, Gpu(80)}), {}, {d}});
  ASSERT_EQ(plan.starts.size(), 1u);
  EXPECT_EQ(plan.starts[0].slots[0].device_index, 1);
  d.mig_profile = "2g.20gb";
  Plan none = Schedule({Node({small, big, Gpu(80)}), {}, {d}});
  EXPECT_TRUE(none.starts.empty());
}

// A vacant MIG slot takes nothing: the slice waits for its instance, or goes to one that exists.
TEST(PlacementTest, AVacantMigSlotTakesNoJob) {
  Device vacant = Mig(0, 40);
  vacant.partition = partition::Partition::Slot(4, "");
  Plan waits = Schedule({Node({vacant}), {}, {Slice(1, 1, 10)}});
  EXPECT_TRUE(waits.starts.empty());
  ASSERT_EQ(waits.waits.size(), 1u);
  EXPECT_EQ(waits.waits[0].reason, Reason::kResources);
  Plan placed = Schedule({Node({vacant, Mig(0, 10)}), {}, {Slice(1, 1, 10)}});
  ASSERT_EQ(placed.starts.size(), 1u);
  EXPECT_EQ(placed.starts[0].slots[0].device_index, 1);
}

TEST(ScheduleTest, WholeGpuSlotHoldsTheDevice) {
  Plan plan = Schedule({Node({Gpu(80)}), {}, {Whole(1, 1)}});
  ASSERT_EQ(plan.starts.size(), 1u);
  ASSERT_EQ(plan.starts[0].slots.size(), 1u);
  EXPECT_EQ(plan.starts[0].slots[0].gpu_mem_bytes, 0u);
  EXPECT_EQ(plan.starts[0].slots[0].gpu_share_pct, 0);
}

TEST(ScheduleTest, SliceSlotCarriesMemoryAndShare) {
  Plan plan = Schedule({Node({Gpu(80), Gpu(80)}), {}, {Slice(1, 1, 12, 30, 2)}});
  ASSERT_EQ(plan.starts.size(), 1u);
  ASSERT_EQ(plan.starts[0].slots.size(), 2u);
  for (const Slot& slot : plan.starts[0].slots) {
    EXPECT_EQ(slot.gpu_mem_bytes, 12 * kGiB);
    EXPECT_EQ(slot.gpu_share_pct, 30);
  }
  EXPECT_NE(plan.starts[0].slots[0].device_index, plan.starts[0].slots[1].device_index);
}

TEST(ScheduleTest, EmptyQueueGivesEmptyPlan) {
  Plan plan = Schedule({Node({Gpu(80)}), {Running(1, 1, {On(0, 10)})}, {}});
  EXPECT_TRUE(plan.starts.empty());
  EXPECT_TRUE(plan.waits.empty());
  EXPECT_FALSE(plan.reservation.has_value());
}

TEST(ScheduleTest, RunningSlotOnUnknownDeviceIsIgnored) {
  Plan plan = Schedule({Node({Gpu(80)}), {Running(100, 1, {On(7, 10)})}, {Whole(1, 1)}});
  EXPECT_EQ(Summary(plan), "1@0");
}

// PlaceOne: one demand placed alone, now. Pending demands are not started, but they count for the
// empty GPUs as in a pass; the last pass's reservation is kept; a demand that does not fit
// reserves nothing.
TEST(PlaceOneTest, PlacesTheDemandAloneByScheduleRules) {
  for (Inventory inv : {Node({Gpu(80), Gpu(80)}), Packed(Node({Gpu(80), Gpu(80)}))}) {
    std::vector<RunningJob> running = {Running(100, 1, {On(0, 10)})};
    auto placed = PlaceOne({inv, running, {}}, Slice(3, 1, 10), std::nullopt);
    Plan alone = Schedule({inv, running, {Slice(3, 1, 10)}});
    ASSERT_TRUE(std::holds_alternative<Start>(placed));
    const Start& start = std::get<Start>(placed);
    EXPECT_EQ(start.id, 3);
    ASSERT_EQ(alone.starts.size(), 1u);
    ASSERT_EQ(start.slots.size(), 1u);
    EXPECT_EQ(start.slots[0].device_index, alone.starts[0].slots[0].device_index)
        << "where Schedule puts it alone";
    EXPECT_EQ(start.slots[0].gpu_mem_bytes, 10 * kGiB);
  }
}

// Attack (issue 55, 7): a lease was placed as if nothing waited, and took the empty GPU a waiting
// whole-GPU job needed. Now the waiting demands keep what a pass keeps; the lease's own record
// among them counts once, and none of them starts.
TEST(PlaceOneTest, TakesNoEmptyGpuThatAWaitingWholeGpuJobNeeds) {
  Inventory inv = Node({Gpu(80), Gpu(80)});
  std::vector<RunningJob> running = {Running(100, 1, {On(0, 10)})};
  for (std::vector<Demand> pending : {std::vector<Demand>{Whole(1, 1, 2)},
                                      std::vector<Demand>{Whole(1, 1, 2), Slice(3, 1, 10)}}) {
    auto placed = PlaceOne({inv, running, pending}, Slice(3, 1, 10), std::nullopt);
    ASSERT_TRUE(std::holds_alternative<Start>(placed));
    EXPECT_EQ(std::get<Start>(placed).slots.at(0).device_index, 0) << "GPU 1 stays for job 1";
  }
  // What cannot start keeps nothing: a held whole-GPU job.
  auto placed = PlaceOne({inv, running, {Held(Whole(1, 1, 2))}}, Slice(3, 1, 10), std::nullopt);
  ASSERT_TRUE(std::holds_alternative<Start>(placed));
  EXPECT_EQ(std::get<Start>(placed).slots.at(0).device_index, 1);
}

// The users' fair shares of the empty GPUs hold for a demand placed alone: a user at their share
// whose GPUs are full does not take the one another user's waiting slice needs (it would keep it
// for as long as it runs). It is not placed, and says why.
TEST(PlaceOneTest, KeepsToItsUsersFairShareOfTheEmptyGpus) {
  Inventory inv = Node({Gpu(80), Gpu(80)});
  std::vector<RunningJob> running = {Running(100, 1, {On(0, 75)})};
  auto refused = PlaceOne({inv, running, {Slice(1, 2, 10)}}, Slice(3, 1, 10), std::nullopt);
  ASSERT_TRUE(std::holds_alternative<Wait>(refused));
  EXPECT_THAT(std::get<Wait>(refused).detail, HasSubstr("kept for other users' waiting slices"));
  auto alone = PlaceOne({inv, running, {}}, Slice(3, 1, 10), std::nullopt);
  ASSERT_TRUE(std::holds_alternative<Start>(alone)) << "no one waits: its user may take it";
  EXPECT_EQ(std::get<Start>(alone).slots.at(0).device_index, 1);
}

TEST(PlaceOneTest, NeverTakesTheReservationItIsGiven) {
  Snapshot snap{Node({Gpu(80), Gpu(80)}), {Running(100, 1, {On(0, 10)})}, {}};
  Reservation held{7, {1}, 0, 0};
  auto placed = PlaceOne(snap, Whole(3, 1), held);
  ASSERT_TRUE(std::holds_alternative<Wait>(placed));
  EXPECT_EQ(std::get<Wait>(placed).reason, Reason::kReservation);
  EXPECT_THAT(std::get<Wait>(placed).detail, HasSubstr("held for job 7"));
  auto slice = PlaceOne(snap, Slice(4, 1, 10), held);
  ASSERT_TRUE(std::holds_alternative<Start>(slice)) << "GPU 0 is not held";
  EXPECT_EQ(std::get<Start>(slice).slots[0].device_index, 0);
}

TEST(PlaceOneTest, ADemandThatDoesNotFitSaysWhyAndReservesNothing) {
  Snapshot snap{Node({Gpu(80)}), {Running(100, 1, {On(0, 75)})}, {}};
  auto placed = PlaceOne(snap, Slice(3, 1, 10), std::nullopt);
  ASSERT_TRUE(std::holds_alternative<Wait>(placed));
  const Wait& wait = std::get<Wait>(placed);
  EXPECT_EQ(wait.reason, Reason::kResources);
  EXPECT_THAT(wait.detail, ::testing::Not(HasSubstr("held for it")));
  auto other_user = PlaceOne({Node({Gpu(80)}), {Running(100, 1, {On(0, 10)})}, {}}, Slice(4, 2, 10),
                             std::nullopt);
  ASSERT_TRUE(std::holds_alternative<Wait>(other_user));
  EXPECT_EQ(std::get<Wait>(other_user).reason, Reason::kMpsUser);
  EXPECT_EQ(std::get<Wait>(other_user).mps_uid, 1u);
  auto held = PlaceOne({Node({Gpu(80)}), {}, {}}, Held(Slice(5, 1, 10)), std::nullopt);
  ASSERT_TRUE(std::holds_alternative<Wait>(held));
  EXPECT_EQ(std::get<Wait>(held).reason, Reason::kHeld);
}

}  // namespace
}  // namespace pinpoint::sched

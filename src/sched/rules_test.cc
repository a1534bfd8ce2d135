// The scheduler places by each device's sharing::PlacementRules, never by its mode: a mode added
// later (a backend with rules of its own) needs no change here. Each case gives a device rules no
// built-in mode has, or a mode rules that contradict its name, and checks the plan follows them.
#include <gtest/gtest.h>

#include "sched/placement.h"
#include "sched/sched_test_util.h"

namespace pinpoint::sched {
namespace {

using testing::Gpu;
using testing::Node;
using testing::On;
using testing::Running;
using testing::Slice;

Device WithRules(Device d, sharing::PlacementRules rules) {
  d.rules = std::move(rules);
  return d;
}

TEST(PlacementRulesTest, ABoundOnJobsWithoutOneUser) {
  // Any users, at most two jobs at once: a mode no built-in one is.
  Snapshot snap;
  snap.inventory = Node({WithRules(Gpu(80, SharingMode::kTimeslice), {.max_jobs = 2})});
  snap.pending = {Slice(1, 1000, 4), Slice(2, 2000, 4), Slice(3, 3000, 4)};
  Plan plan = Schedule(snap);
  ASSERT_EQ(plan.starts.size(), 2u) << "two users share the device: no one-user rule";
  ASSERT_EQ(plan.waits.size(), 1u);
  EXPECT_EQ(plan.waits[0].id, 3);
  EXPECT_EQ(plan.waits[0].reason, Reason::kResources);
}

TEST(PlacementRulesTest, OneUserFollowsTheRuleNotTheMode) {
  Snapshot snap;
  snap.inventory = Node({WithRules(Gpu(80, SharingMode::kTimeslice), {.one_user = true})});
  snap.running = {Running(1, 1000, {On(0, 4)})};
  snap.pending = {Slice(2, 2000, 4)};
  Plan plan = Schedule(snap);
  ASSERT_EQ(plan.waits.size(), 1u);
  EXPECT_EQ(plan.waits[0].reason, Reason::kMpsUser);

  snap.inventory =
      Node({WithRules(Gpu(80, SharingMode::kMps), {})});  // an mps device without the rule
  plan = Schedule(snap);
  ASSERT_EQ(plan.starts.size(), 1u) << "the rule, not the mode's name, keeps other users off";
}

TEST(PlacementRulesTest, WholeDeviceFillsTheDeviceWithOneSlice) {
  Snapshot snap;
  snap.inventory = Node({WithRules(Gpu(80, SharingMode::kMps), {.whole_device = true})});
  snap.pending = {Slice(1, 1000, 4), Slice(2, 1000, 4)};
  Plan plan = Schedule(snap);
  ASSERT_EQ(plan.starts.size(), 1u);
  EXPECT_EQ(plan.starts[0].id, 1);
}

TEST(PlacementRulesTest, NoSlicesIsRefusedAtSubmitWithTheRulesReason) {
  Inventory inv = Node({WithRules(Gpu(80, SharingMode::kTimeslice),
                                  {.max_jobs = 0, .no_slices_reason = "why not"})});
  Status s = CheckFits(Slice(1, 1000, 4), inv);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "needs 4GiB of device memory on one device, and this node takes no slices: why not");
  EXPECT_TRUE(CheckFits(testing::Whole(2, 1), inv).ok()) << "whole-device jobs still run";
}

}  // namespace
}  // namespace pinpoint::sched

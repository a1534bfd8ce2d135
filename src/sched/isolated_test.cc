// Isolated slices (suspect reruns after an MPS fault) run alone on their device.
#include <gtest/gtest.h>

#include "sched/placement.h"

namespace pinpoint::sched {
namespace {

Inventory TwoMpsGpus() {
  Inventory inv;
  for (int i = 0; i < 2; ++i) {
    Device d;
    d.index = i;
    d.uuid = "GPU-" + std::to_string(i);
    d.mem_bytes = 80ull << 30;
    d.mode = SharingMode::kMps;
    inv.devices.push_back(d);
  }
  inv.host.cpus = 64;
  inv.host.mem_bytes = 256ull << 30;
  return inv;
}

Demand IsolatedSlice(JobId id, bool isolated) {
  Demand d;
  d.id = id;
  d.uid = 1000;
  d.gpus = 1;
  d.gpu_mem_bytes = 4ull << 30;
  d.isolated = isolated;
  return d;
}

TEST(IsolatedSliceTest, TakesOnlyAnEmptyDeviceAndKeepsOthersOff) {
  Snapshot snap;
  snap.inventory = TwoMpsGpus();
  snap.running.push_back({1, 1000, 1, 0, {{0, 4ull << 30, 0, false}}});  // GPU 0 partly used
  snap.pending = {IsolatedSlice(2, true), IsolatedSlice(3, false), IsolatedSlice(4, false)};
  Plan plan = Schedule(snap);
  ASSERT_EQ(plan.starts.size(), 3u);
  EXPECT_EQ(plan.starts[0].id, 2);
  EXPECT_EQ(plan.starts[0].slots[0].device_index, 1) << "the isolated slice skips the used GPU";
  EXPECT_TRUE(plan.starts[0].slots[0].isolated);
  for (size_t i = 1; i < plan.starts.size(); ++i)
    EXPECT_EQ(plan.starts[i].slots[0].device_index, 0) << "nothing joins the isolated slice";
}

TEST(IsolatedSliceTest, RunningIsolatedSlotBlocksItsDevice) {
  Snapshot snap;
  snap.inventory = TwoMpsGpus();
  snap.inventory.devices.resize(1);
  snap.running.push_back({1, 1000, 1, 0, {{0, 4ull << 30, 0, true}}});
  snap.pending = {IsolatedSlice(2, false)};
  Plan plan = Schedule(snap);
  EXPECT_TRUE(plan.starts.empty());
  ASSERT_EQ(plan.waits.size(), 1u);
}

TEST(MpsUserWaitTest, NamesTheUidHoldingTheDevice) {
  Snapshot snap;
  snap.inventory = TwoMpsGpus();
  snap.inventory.devices.resize(1);
  snap.running.push_back({1, 1000, 1, 0, {{0, 4ull << 30, 0, false}}});
  Demand other = IsolatedSlice(2, false);
  other.uid = 2000;
  snap.pending = {other};
  Plan plan = Schedule(snap);
  ASSERT_EQ(plan.waits.size(), 1u);
  EXPECT_EQ(plan.waits[0].reason, Reason::kMpsUser);
  ASSERT_TRUE(plan.waits[0].mps_uid.has_value());
  EXPECT_EQ(*plan.waits[0].mps_uid, 1000u);
}

}  // namespace
}  // namespace pinpoint::sched

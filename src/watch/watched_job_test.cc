#include "watch/watched_job.h"

#include <gtest/gtest.h>

namespace pinpoint::watch {
namespace {

constexpr uint64_t kJobGiB = 1ull << 30;

sched::Inventory MigNode() {
  sched::Inventory inv;
  auto add = [&](int gpu, bool mig, int sms, uint64_t mem) {
    sched::Device d;
    d.index = static_cast<int>(inv.devices.size());
    d.gpu_index = gpu;
    if (mig) d.partition.kind = partition::Kind::kMigInstance;
    d.sm_count = sms;
    d.mem_bytes = mem;
    inv.devices.push_back(d);
  };
  add(0, false, 108, 80 * kJobGiB);  // device 0: whole GPU 0
  add(1, true, 42, 40 * kJobGiB);    // devices 1-3: MIG instances of GPU 1 (3g + 2x 2g)
  add(1, true, 28, 20 * kJobGiB);
  add(1, true, 28, 20 * kJobGiB);
  return inv;
}

TEST(WatchedJobTest, SliceHasItsBudgetAndShare) {
  JobRecord job;
  job.id = 7;
  job.pid = 4242;
  job.usage.energy_mj = 99;
  job.allocations.push_back({0, "GPU-0", 6 * kJobGiB, 25, SharingMode::kMps});
  // What its hold applies through a variable (an MPS client's pinned limit): a budget, and the
  // variable is what the watcher reads of its processes.
  job.readback.limits = {AppliedLimit{
      .resource = "gpu_mem", .variable = "SLICE_LIMIT", .strength = LimitStrength::kDriver}};
  WatchedJob w = WatchedJobOf(job, MigNode(), "/pinpoint/job-7");
  EXPECT_EQ(w.env_vars, std::vector<std::string>{"SLICE_LIMIT"});
  EXPECT_EQ(w.id, 7);
  EXPECT_EQ(w.session_id, 4242);
  EXPECT_EQ(w.cgroup_path, "/pinpoint/job-7");
  EXPECT_EQ(w.prior.energy_mj, 99u);
  ASSERT_EQ(w.slots.size(), 1u);
  EXPECT_EQ(w.slots[0].gpu_index, 0);
  EXPECT_EQ(w.slots[0].budget_bytes, 6 * kJobGiB);
  EXPECT_EQ(w.slots[0].share_pct, 25);
  EXPECT_FALSE(w.slots[0].whole);
  EXPECT_DOUBLE_EQ(w.slots[0].device_fraction, 1.0);
}

TEST(WatchedJobTest, WholeGpuAndExclusiveModeHaveNoBudget) {
  JobRecord job;
  job.allocations.push_back({0, "GPU-0", 0, 0, SharingMode::kExclusive});
  EXPECT_TRUE(WatchedJobOf(job, MigNode(), "").slots[0].whole);
  EXPECT_EQ(WatchedJobOf(job, MigNode(), "").slots[0].budget_bytes, 0u);
  // A slice on an exclusive device.
  job.allocations[0] = {0, "GPU-0", 4 * kJobGiB, 0, SharingMode::kExclusive};
  EXPECT_TRUE(WatchedJobOf(job, MigNode(), "").slots[0].whole);
}

TEST(WatchedJobTest, MigInstancesOfOneGpuFormOneSlotWithTheirSmFraction) {
  JobRecord job;
  job.allocations.push_back({1, "MIG-1", 0, 0, SharingMode::kExclusive});
  job.allocations.push_back({2, "MIG-2", 0, 0, SharingMode::kExclusive});
  WatchedJob w = WatchedJobOf(job, MigNode(), "");
  ASSERT_EQ(w.slots.size(), 1u);
  EXPECT_EQ(w.slots[0].gpu_index, 1);
  EXPECT_NEAR(w.slots[0].device_fraction, 70.0 / 98.0, 1e-9);
  EXPECT_TRUE(w.slots[0].whole);
  EXPECT_EQ(PhysicalGpus(MigNode()), (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace pinpoint::watch

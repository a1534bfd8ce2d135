// MPS serves one user per GPU: how slice_placement auto shares the empty GPUs out between users
// (sched/mps_shares.h), and the affinity window that keeps a user who arrives a moment after
// another from finding every GPU taken.
#include <gtest/gtest.h>

#include <set>

#include "sched/placement.h"
#include "sched/sched_test_util.h"

namespace pinpoint::sched {
namespace {

constexpr int64_t kNow = 1'000'000;
constexpr int64_t kWindowMs = 1000;

Inventory Gpus(int n, int64_t window_ms = kWindowMs) {
  std::vector<Device> devices(static_cast<size_t>(n), Gpu(80));
  Inventory inv = Node(devices);
  inv.mps_affinity_ms = window_ms;
  return inv;
}

RunningJob StartedAt(RunningJob job, int64_t start_ms) {
  job.start_ms = start_ms;
  return job;
}

// A user's array of `n` 3 GiB slices, ids from `first`.
std::vector<Demand> Array(JobId first, uint32_t uid, int n) {
  std::vector<Demand> out;
  for (int i = 0; i < n; ++i) out.push_back(Slice(first + i, uid, 3));
  return out;
}

TEST(MpsSharesTest, AUserAloneStartsOnOneGpuThenSpreadsOnceTheWindowCloses) {
  Snapshot snap;
  snap.inventory = Gpus(2);
  snap.now_ms = kNow;
  snap.pending = Array(1, 1000, 4);
  Plan first = Schedule(snap);
  EXPECT_EQ(Summary(first), "1@0 2:resources 3:resources 4:resources");
  ASSERT_TRUE(first.recheck_at_ms.has_value());
  EXPECT_EQ(*first.recheck_at_ms, kNow + kWindowMs);
  EXPECT_NE(Details(first)[2].find("mps_affinity_ms"), std::string::npos) << Details(first)[2];
  EXPECT_FALSE(first.reservation.has_value())
      << "a slice waiting for the window holds nothing back";

  // The window closes with nobody else come: the rest spread over both GPUs.
  snap.running = {StartedAt(Running(1, 1000, {On(0, 3)}), kNow)};
  snap.pending = Array(2, 1000, 3);
  snap.now_ms = kNow + kWindowMs;
  Plan later = Schedule(snap);
  EXPECT_EQ(Summary(later), "2@1 3@0 4@1");
  EXPECT_FALSE(later.recheck_at_ms.has_value());
}

// The measured case of issue 44: user A's array, then user B's a moment later. Before, A's spread
// over both GPUs and B waited for all of A's to end.
TEST(MpsSharesTest, AUserWhoArrivesWithinTheWindowGetsTheOtherGpu) {
  Snapshot snap;
  snap.inventory = Gpus(2);
  snap.now_ms = kNow + 300;
  snap.running = {StartedAt(Running(1, 1000, {On(0, 3)}), kNow)};
  std::vector<Demand> a = Array(2, 1000, 3), b = Array(10, 2000, 4);
  snap.pending = a;
  snap.pending.insert(snap.pending.end(), b.begin(), b.end());
  Plan plan = Schedule(snap);
  // A's wait for nothing now: B below its share packs onto the GPU it took, and A's go to A's.
  EXPECT_EQ(Summary(plan), "2@0 3@0 4@0 10@1 11@1 12@1 13@1");
}

TEST(MpsSharesTest, AUserAtTheirShareDoesNotTakeAnEmptyGpuAnotherUserWaitsFor) {
  // Four GPUs; A runs on two, and more of A's and one of B's wait: B gets an empty GPU, A's
  // next slices go to A's own GPUs, and the last empty GPU stays free for B's next slices.
  Snapshot snap;
  snap.inventory = Gpus(4, 0);
  snap.now_ms = kNow;
  snap.running = {Running(1, 1000, {On(0, 3)}), Running(2, 1000, {On(1, 3)})};
  std::vector<Demand> a = Array(3, 1000, 4), b = Array(20, 2000, 2);
  snap.pending = a;
  snap.pending.insert(snap.pending.end(), b.begin(), b.end());
  Plan plan = Schedule(snap);
  EXPECT_EQ(Summary(plan), "3@0 4@1 5@0 6@1 20@2 21@3");
}

TEST(MpsSharesTest, AnEmptyGpuNobodyElseWaitsForIsTaken) {
  // A holds its share of four GPUs (two users: two each), B runs on one and waits for nothing:
  // the empty GPU goes to A rather than idle.
  Snapshot snap;
  snap.inventory = Gpus(4, 0);
  snap.now_ms = kNow;
  snap.running = {Running(1, 1000, {On(0, 60)}), Running(2, 1000, {On(1, 60)}),
                  Running(3, 2000, {On(2, 3)})};
  snap.pending = {Slice(4, 1000, 60)};
  EXPECT_EQ(Summary(Schedule(snap)), "4@3");
}

TEST(MpsSharesTest, AUserAtTheirShareWaitsWhenOnlyTheKeptGpuWouldTakeIt) {
  // A's two GPUs are full, C runs on a third, the fourth is empty, and B (holding none) waits:
  // A's slice, first in order, does not take the empty GPU (three users: one GPU each while
  // others wait); it waits, saying why, and B's takes it.
  Snapshot snap;
  snap.inventory = Gpus(3, 0);
  snap.now_ms = kNow;
  snap.running = {Running(1, 1000, {On(0, 79)}), Running(2, 1000, {On(1, 79)}),
                  Running(3, 3000, {On(2, 3)})};
  snap.pending = {Slice(4, 1000, 3), Slice(5, 2000, 3)};
  snap.inventory.devices.push_back(snap.inventory.devices[0]);
  snap.inventory.devices[3].index = 3;
  snap.inventory.devices[3].gpu_index = 3;
  snap.inventory.devices[3].uuid = "GPU-3";
  Plan plan = Schedule(snap);
  EXPECT_EQ(Summary(plan), "5@3 4:resources");
  EXPECT_NE(Details(plan)[4].find("kept for other users"), std::string::npos) << Details(plan)[4];
}

// Waiting slices that cannot start (an array at its %K) keep no empty GPU from another user: B's
// array of 10 at %1 runs its one task, so the three empty GPUs all go to A's slices, where B's
// ten waiting tasks would have kept one of them idle.
TEST(MpsSharesTest, SlicesThatCannotStartKeepNoGpuFromOthers) {
  Snapshot snap;
  snap.inventory = Gpus(4, 0);
  snap.now_ms = kNow;
  RunningJob b_task = Running(1, 2000, {On(0, 3)});
  b_task.array_id = 1;
  snap.running = {b_task};
  for (int i = 0; i < 10; ++i) {
    Demand d = Slice(2 + i, 2000, 3);
    d.array_id = 1;
    d.array_limit = 1;
    snap.pending.push_back(d);
  }
  std::vector<Demand> a = Array(20, 1000, 3);
  snap.pending.insert(snap.pending.end(), a.begin(), a.end());
  Plan plan = Schedule(snap);
  std::set<int> a_gpus;
  for (const Start& start : plan.starts) {
    EXPECT_GE(start.id, 20) << "B's tasks wait for their array's limit";
    a_gpus.insert(start.slots.at(0).device_index);
  }
  EXPECT_EQ(a_gpus, (std::set<int>{1, 2, 3}));
}

TEST(MpsSharesTest, ALeaseIsNeverMadeToWaitForTheWindow) {
  Snapshot snap;
  snap.inventory = Gpus(2);
  snap.now_ms = kNow;
  snap.running = {StartedAt(Running(1, 1000, {On(0, 3)}), kNow)};
  auto placed = PlaceOne(snap, Slice(2, 1000, 3), std::nullopt);
  ASSERT_TRUE(std::holds_alternative<Start>(placed));
  EXPECT_EQ(std::get<Start>(placed).slots.at(0).device_index, 0)
      << "it joins its user's GPU: the empty one stays for a user who comes a moment later";
  snap.running = {StartedAt(Running(1, 1000, {On(0, 79)}), kNow)};
  placed = PlaceOne(snap, Slice(2, 1000, 3), std::nullopt);
  ASSERT_TRUE(std::holds_alternative<Start>(placed)) << "its user's GPU is full: an empty one";
  EXPECT_EQ(std::get<Start>(placed).slots.at(0).device_index, 1);
}

TEST(MpsSharesTest, NoWindowWithoutATimeOrOutsideAuto) {
  Snapshot snap;
  snap.inventory = Gpus(2);
  snap.pending = Array(1, 1000, 2);
  EXPECT_EQ(Summary(Schedule(snap)), "1@0 2@1") << "a snapshot without now_ms";
  snap.now_ms = kNow;
  snap.inventory.slice_placement = SlicePlacement::kSpread;
  EXPECT_EQ(Summary(Schedule(snap)), "1@0 2@1") << "spread is spread";
}

}  // namespace
}  // namespace pinpoint::sched

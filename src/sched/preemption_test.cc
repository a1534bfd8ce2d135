// PickVictims: the fewest running jobs, in the order the node offers them, whose leaving lets a
// waiting job start (issue 56 item 3).
#include "sched/preemption.h"

#include <gtest/gtest.h>

#include "sched/sched_test_util.h"

namespace pinpoint::sched {
namespace {

using namespace testing;  // NOLINT: the sched test builders

// Two GPUs, each taken whole by one job: a job needing one whole GPU takes the first candidate
// offered (the youngest, lowest class: the node's order) and nothing else.
TEST(PickVictimsTest, TheFirstOfferedThatMakesRoomAndNoMore) {
  Snapshot s;
  s.inventory = Node({Gpu(80, SharingMode::kExclusive), Gpu(80, SharingMode::kExclusive)});
  s.running = {Running(1, 2000, {WholeOn(0)}), Running(2, 2000, {WholeOn(1)})};
  EXPECT_EQ(PickVictims(s, Whole(10, 1), {2, 1}), (std::vector<JobId>{2}));
  EXPECT_EQ(PickVictims(s, Whole(10, 1), {1, 2}), (std::vector<JobId>{1}));
}

// A job needing two GPUs needs both gone; one needing more than the node has gets none.
TEST(PickVictimsTest, AllItNeedsOrNone) {
  Snapshot s;
  s.inventory = Node({Gpu(80, SharingMode::kExclusive), Gpu(80, SharingMode::kExclusive)});
  s.running = {Running(1, 2000, {WholeOn(0)}), Running(2, 2000, {WholeOn(1)})};
  EXPECT_EQ(PickVictims(s, Whole(10, 2), {2, 1}), (std::vector<JobId>{2, 1}));
  EXPECT_TRUE(PickVictims(s, Whole(10, 3), {2, 1}).empty());
  EXPECT_TRUE(PickVictims(s, Whole(10, 2), {2}).empty()) << "job 1 is not offered";
}

// The fewest: small slices offered first that do not make room on their own are handed back once
// a larger one does.
TEST(PickVictimsTest, TheFewestThatMakeRoom) {
  Snapshot s;
  s.inventory = Node({Gpu(80)});
  s.running = {Running(1, 2000, {On(0, 10)}), Running(2, 2000, {On(0, 10)}),
               Running(3, 2000, {On(0, 60)})};
  // 50 GiB: with 1 and 2 gone there are 20 free, not enough; with 3 gone too, 80. Only 3 is
  // needed (3 gone: 60 free).
  EXPECT_EQ(PickVictims(s, Slice(10, 2000, 50), {1, 2, 3}), (std::vector<JobId>{3}));
}

// A job that starts without anyone leaving is not a preemptor: nothing is picked.
TEST(PickVictimsTest, NothingWhenItStartsAlready) {
  Snapshot s;
  s.inventory = Node({Gpu(80)});
  s.running = {Running(1, 2000, {On(0, 10)})};
  EXPECT_TRUE(PickVictims(s, Slice(10, 2000, 20), {1}).empty());
}

// Another user's MPS server on the only GPU: the slice of uid 1000 starts once the other user's
// slices are gone (MPS serves one user a device).
TEST(PickVictimsTest, AnotherUsersMpsSlicesLeaveTheDeviceToIt) {
  Snapshot s;
  s.inventory = Node({Gpu(80)});
  s.running = {Running(1, 2000, {On(0, 5)}), Running(2, 2000, {On(0, 5)})};
  EXPECT_EQ(PickVictims(s, Slice(10, 1000, 5), {2, 1}), (std::vector<JobId>{2, 1}));
}

// The fair share's reclaim: user 2000 arrived first and holds all four MPS GPUs; user 1000's
// slice waits (share: 4 GPUs / 2 users = 2). The GPU with the fewest jobs goes first, its
// youngest job first; PickVictims then takes what empties it.
RunningJob StartedAt(RunningJob r, int64_t start_ms) {
  r.start_ms = start_ms;
  return r;
}

TEST(ReclaimCandidatesTest, TheFewestJobsGpuOfAUserAboveTheShareYoungestFirst) {
  Snapshot s;
  s.inventory = Node({Gpu(80), Gpu(80), Gpu(80), Gpu(80)});
  s.running = {
      StartedAt(Running(1, 2000, {On(0, 5)}), 100), StartedAt(Running(2, 2000, {On(0, 5)}), 200),
      StartedAt(Running(3, 2000, {On(1, 5)}), 300), StartedAt(Running(4, 2000, {On(2, 5)}), 400),
      StartedAt(Running(5, 2000, {On(2, 5)}), 500), StartedAt(Running(6, 2000, {On(3, 5)}), 150),
      StartedAt(Running(7, 2000, {On(3, 5)}), 160), StartedAt(Running(8, 2000, {On(3, 5)}), 170)};
  Demand waiting = Slice(10, 1000, 5);
  auto all = [](JobId) { return true; };
  std::vector<JobId> order = ReclaimCandidates(s, waiting, all);
  EXPECT_EQ(order, (std::vector<JobId>{3, 5, 4, 2, 1, 8, 7, 6}))
      << "GPU 1 (one job), then GPU 2 (two, the newest younger than GPU 0's), then 0, then 3";
  EXPECT_EQ(PickVictims(s, waiting, order), (std::vector<JobId>{3}));
  // A GPU one of whose jobs may not go (its class's mode is off) is not offered.
  auto not_3 = [](JobId id) { return id != 3; };
  EXPECT_EQ(ReclaimCandidates(s, waiting, not_3), (std::vector<JobId>{5, 4, 2, 1, 8, 7, 6}));
  EXPECT_EQ(PickVictims(s, waiting, ReclaimCandidates(s, waiting, not_3)),
            (std::vector<JobId>{5, 4}));
}

TEST(ReclaimCandidatesTest, NoneForAUserAtTheirShareOrFromAUserAtTheirs) {
  Snapshot s;
  s.inventory = Node({Gpu(80), Gpu(80)});
  auto all = [](JobId) { return true; };
  // 2000 holds one GPU, 1000 the other: each at its share (1).
  s.running = {Running(1, 2000, {On(0, 5)}), Running(2, 1000, {On(1, 5)})};
  EXPECT_TRUE(ReclaimCandidates(s, Slice(10, 1000, 5), all).empty());
  EXPECT_TRUE(ReclaimCandidates(s, Slice(11, 3000, 5), all).empty())
      << "3 users, 2 GPUs: share 1, nobody above it";
  // 2000 holds both: above its share, 1000 holds none.
  s.running = {Running(1, 2000, {On(0, 5)}), Running(2, 2000, {On(1, 5)})};
  EXPECT_EQ(ReclaimCandidates(s, Slice(10, 1000, 5), all).size(), 2u);
  EXPECT_TRUE(ReclaimCandidates(s, Whole(12, 1, 1000), all).empty()) << "slices only";
  EXPECT_TRUE(ReclaimCandidates(s, Slice(13, 1000, 90), all).empty())
      << "would not fit an emptied GPU";
  s.inventory = Node({Gpu(80, SharingMode::kExclusive), Gpu(80, SharingMode::kExclusive)});
  s.running = {Running(1, 2000, {WholeOn(0)}), Running(2, 2000, {WholeOn(1)})};
  EXPECT_TRUE(ReclaimCandidates(s, Slice(10, 1000, 5), all).empty()) << "no MPS GPU";
}

}  // namespace
}  // namespace pinpoint::sched

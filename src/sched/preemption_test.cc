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

}  // namespace
}  // namespace pinpoint::sched

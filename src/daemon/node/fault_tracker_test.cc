#include "daemon/node/fault_tracker.h"

#include <gtest/gtest.h>

namespace pinpoint::daemon {
namespace {

struct Event {
  char kind;  // 'c' claim, 'x' Xid, 'e' evaluate
  int device;
  int64_t time_ms;
};

struct TrackerCase {
  const char* name;
  int drain_after;
  std::vector<Event> events;
  std::vector<int> drained;  // every device drained over the whole run, in order
  int counted_on_0;          // CountedFaults(0) at the end
};

TEST(FaultTrackerTest, Table) {
  const TrackerCase cases[] = {
      {"claims alone never count",
       1,
       {{'c', 0, 0}, {'e', 0, 0}, {'c', 0, 1000}, {'e', 0, 30'000}},
       {},
       0},
      {"an Xid alone never counts", 1, {{'x', 0, 0}, {'e', 0, 30'000}}, {}, 0},
      {"claim then Xid within the window", 1, {{'c', 0, 0}, {'x', 0, 900}, {'e', 0, 1000}}, {0}, 1},
      {"Xid then claim within the window",
       1,
       {{'x', 0, 0}, {'c', 0, 9000}, {'e', 0, 9000}},
       {0},
       1},
      {"Xid after the window",
       1,
       {{'c', 0, 0}, {'e', 0, 10'001}, {'x', 0, 10'002}, {'e', 0, 10'003}},
       {},
       0},
      {"Xid on another device", 1, {{'c', 0, 0}, {'x', 1, 0}, {'e', 0, 20'000}}, {}, 0},
      {"one fault, several log lines and Xids, counts once",
       2,
       {{'c', 0, 0}, {'c', 0, 10}, {'c', 0, 20}, {'x', 0, 5}, {'x', 0, 15}, {'e', 0, 100}},
       {},
       1},
      {"two faults apart drain at 2",
       2,
       {{'c', 0, 0},
        {'x', 0, 0},
        {'e', 0, 0},
        {'c', 0, 60'000},
        {'x', 0, 60'000},
        {'e', 0, 60'000}},
       {0},
       2},
      {"faults more than an hour apart do not add up",
       2,
       {{'c', 0, 0},
        {'x', 0, 0},
        {'e', 0, 0},
        {'c', 0, 3'700'000},
        {'x', 0, 3'700'000},
        {'e', 0, 3'700'000}},
       {},
       1},
      {"a drained device is reported once",
       1,
       {{'c', 0, 0},
        {'x', 0, 0},
        {'e', 0, 0},
        {'c', 0, 60'000},
        {'x', 0, 60'000},
        {'e', 0, 60'000}},
       {0},
       2},
      {"a flood of claims stays bounded and unconfirmed",
       1,
       {{'c', 0, 0}, {'c', 0, 0}, {'c', 0, 0}, {'e', 0, 50'000}},
       {},
       0},
  };
  for (const auto& c : cases) {
    FaultTracker t(c.drain_after);
    std::vector<int> drained;
    for (const auto& e : c.events) {
      if (e.kind == 'c') t.Claim(e.device, e.time_ms);
      if (e.kind == 'x') t.Xid(e.device, e.time_ms);
      if (e.kind == 'e') {
        auto out = t.Evaluate(e.time_ms);
        drained.insert(drained.end(), out.drain.begin(), out.drain.end());
      }
    }
    EXPECT_EQ(drained, c.drained) << c.name;
    EXPECT_EQ(t.CountedFaults(0), c.counted_on_0) << c.name;
  }
}

TEST(FaultTrackerTest, UnconfirmedClaimsAreReportedOnceTheirWindowPasses) {
  FaultTracker t(1);
  t.Claim(3, 0);
  EXPECT_TRUE(t.Evaluate(5000).unconfirmed.empty()) << "its Xid may still come";
  auto out = t.Evaluate(10'001);
  EXPECT_EQ(out.unconfirmed, std::vector<int>{3});
  EXPECT_TRUE(t.Evaluate(20'000).unconfirmed.empty()) << "reported once";
}

TEST(FaultTrackerTest, PendingClaimsAreBounded) {
  FaultTracker t(1);
  for (int i = 0; i < 100000; ++i) t.Claim(0, 0);
  t.Xid(0, 0);
  auto out = t.Evaluate(0);
  EXPECT_EQ(out.counted, std::vector<int>{0});
  EXPECT_EQ(t.CountedFaults(0), 1);
}

}  // namespace
}  // namespace pinpoint::daemon

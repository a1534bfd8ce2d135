#include "sharing/backends.h"

#include <gtest/gtest.h>

#include "sharing/exclusive.h"
#include "sharing/fake_backend.h"
#include "sharing/timeslice.h"

namespace pinpoint::sharing {
namespace {

TEST(BackendsTest, EachModeHasItsOwnBackend) {
  Backends b;
  b.Add(std::make_unique<ExclusiveBackend>());
  b.Add(std::make_unique<TimesliceBackend>());
  EXPECT_EQ(b.For(SharingMode::kExclusive).mode(), SharingMode::kExclusive);
  EXPECT_EQ(b.For(SharingMode::kTimeslice).mode(), SharingMode::kTimeslice);
  EXPECT_TRUE(b.For(SharingMode::kExclusive).Rules().whole_device);
  EXPECT_FALSE(b.For(SharingMode::kTimeslice).Rules().one_user);
  // An exclusive device holds every job alone; a timeslice one holds slices time-sliced.
  EXPECT_EQ(b.For(SharingMode::kExclusive).HoldsAs(4096, 1), SharingMode::kExclusive);
  EXPECT_EQ(b.For(SharingMode::kTimeslice).HoldsAs(4096, 1), SharingMode::kTimeslice);
  EXPECT_EQ(b.For(SharingMode::kTimeslice).HoldsAs(0, 1), SharingMode::kExclusive);
}

TEST(BackendsTest, AModeWithoutABackendTakesNoSlicesAndSaysWhy) {
  Backends b;
  ASSERT_FALSE(b.Has(SharingMode::kMps));
  Backend& mps = b.For(SharingMode::kMps);
  EXPECT_EQ(mps.mode(), SharingMode::kMps);
  EXPECT_FALSE(mps.Rules().takes_slices());
  EXPECT_EQ(mps.Rules().no_slices_reason, "pinpointd runs no mps backend");
  auto slice = mps.Prepare(Slice{.gpu_mem_bytes = 1 << 20});
  ASSERT_FALSE(slice.ok());
  EXPECT_EQ(slice.status().code(), Code::kUnavailable);
  EXPECT_TRUE(mps.Prepare(Slice{.gpu_mem_bytes = 0}).ok()) << "a whole device needs nothing";
}

TEST(BackendsTest, AddingAModeReplacesItsBackend) {
  Backends b;
  b.Add(std::make_unique<TimesliceBackend>());
  b.Add(std::make_unique<FakeBackend>(SharingMode::kTimeslice, PlacementRules{.max_jobs = 3}));
  EXPECT_EQ(b.For(SharingMode::kTimeslice).Rules().max_jobs, 3);
}

TEST(BackendsTest, EventsCarryTheModeOfTheBackendThatSawThem) {
  Backends b;
  auto fake = std::make_unique<FakeBackend>(SharingMode::kMps, PlacementRules{});
  FakeBackend* mps = fake.get();
  b.Add(std::move(fake));
  b.Add(std::make_unique<TimesliceBackend>());
  mps->Inject(Event{
      .mode = SharingMode::kTimeslice, .device_index = 1, .kind = Event::Kind::kFault, .uid = 7});
  std::vector<Event> events = b.Poll(0);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].mode, SharingMode::kMps) << "a backend cannot speak for another mode";
  EXPECT_EQ(events[0].device_index, 1);
  EXPECT_EQ(events[0].uid, 7u);
  EXPECT_TRUE(b.Poll(0).empty());
}

TEST(BackendsTest, AJobIsStoppingWhileAnyBackendStopsIt) {
  Backends b;
  auto fake = std::make_unique<FakeBackend>(SharingMode::kMps, PlacementRules{});
  FakeBackend* mps = fake.get();
  b.Add(std::move(fake));
  b.Add(std::make_unique<ExclusiveBackend>());
  mps->HoldStops(true);
  ASSERT_TRUE(b.For(SharingMode::kMps)
                  .StopClients(Slice{.job_id = 9}, [] { return std::vector<int64_t>{42}; })
                  .ok());
  EXPECT_TRUE(b.Stopping(9));
  EXPECT_FALSE(b.Stopping(10));
  mps->FinishStops();
  EXPECT_FALSE(b.Stopping(9));
  ASSERT_EQ(mps->stopped().size(), 1u);
  EXPECT_EQ(mps->stopped()[0].second, std::vector<int64_t>{42});
}

TEST(BackendsTest, ServersVariablesAndResetsSpanEveryBackend) {
  Backends b;
  auto fake = std::make_unique<FakeBackend>(SharingMode::kMps, PlacementRules{});
  FakeBackend* mps = fake.get();
  b.Add(std::move(fake));
  b.Add(std::make_unique<TimesliceBackend>());
  mps->SetServers({{2, ServerInfo{.device_index = 2, .running = true, .uid = 5}}});
  auto servers = b.Servers();
  ASSERT_EQ(servers.count(2), 1u);
  EXPECT_EQ(servers[2].uid, 5u);
  EXPECT_EQ(b.OwnVariables(), std::vector<std::string>{"FAKE_LIMIT_BYTES"});
  b.ResetDevice(3);
  EXPECT_EQ(mps->resets(), std::vector<int>{3});
}

}  // namespace
}  // namespace pinpoint::sharing

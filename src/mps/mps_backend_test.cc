#include "mps/mps_backend.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "mps/fake_mps.h"

namespace pinpoint::mps {
namespace {

sharing::Slice SliceOn(int device, uint64_t mem_bytes, uint64_t job_id = 1) {
  return sharing::Slice{.device_index = device, .device_uuid = "GPU-" + std::to_string(device), .uid = 1000,
                        .gid = 1000, .gpu_mem_bytes = mem_bytes, .gpu_share_pct = 20, .job_id = job_id};
}

TEST(MpsBackendTest, RulesAreOneUserAndTheClientLimit) {
  FakeMps control;
  MpsBackend b(&control, MpsRules(7));
  EXPECT_EQ(b.mode(), SharingMode::kMps);
  EXPECT_TRUE(b.Rules().one_user);
  EXPECT_FALSE(b.Rules().whole_device);
  EXPECT_EQ(b.Rules().max_jobs, 7);
  MpsBackend none(&control, MpsRules(0, "MPS cannot be started"));
  EXPECT_FALSE(none.Rules().takes_slices());
  EXPECT_EQ(none.Rules().no_slices_reason, "MPS cannot be started");
}

TEST(MpsBackendTest, OnlyASliceOfOneDeviceIsAClient) {
  FakeMps control;
  MpsBackend b(&control, MpsRules());
  EXPECT_EQ(b.HoldsAs(1 << 30, 1), SharingMode::kMps);
  EXPECT_EQ(b.HoldsAs(1 << 30, 2), SharingMode::kTimeslice) << "a process is the client of one server only";
  EXPECT_EQ(b.HoldsAs(0, 1), SharingMode::kExclusive);
}

TEST(MpsBackendTest, PrepareAdoptReleaseReachTheControlDaemons) {
  FakeMps control;
  MpsBackend b(&control, MpsRules());
  auto env = b.Prepare(SliceOn(1, uint64_t{2} << 30));
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_EQ(env->at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=2048M");
  for (const auto& [name, value] : *env) {
    std::vector<std::string> own = b.OwnVariables();
    EXPECT_NE(std::find(own.begin(), own.end(), name), own.end()) << name << " is set but not owned";
  }
  ASSERT_EQ(control.prepared().size(), 1u);
  EXPECT_EQ(control.prepared()[0].device_index, 1);
  EXPECT_EQ(control.prepared()[0].uid, 1000u);
  b.Release(SliceOn(1, uint64_t{2} << 30));
  ASSERT_EQ(control.released().size(), 1u);
  control.Fail(FailedPrecondition("the MPS control daemon of device 1 is starting"));
  auto waiting = b.Prepare(SliceOn(1, 1 << 30));
  ASSERT_FALSE(waiting.ok());
  EXPECT_EQ(waiting.status().code(), Code::kFailedPrecondition);
}

TEST(MpsBackendTest, StoppingAJobTerminatesItsClientsByJobId) {
  FakeMps control;
  MpsBackend b(&control, MpsRules());
  control.HoldTerminations(true);
  int asked = 0;
  ASSERT_TRUE(b.StopClients(SliceOn(0, 1 << 30, 42), [&] {
                 ++asked;
                 return std::vector<int64_t>{100, 101};
               }).ok());
  EXPECT_EQ(asked, 1);
  EXPECT_TRUE(b.Stopping(42));
  EXPECT_FALSE(b.Stopping(43));
  ASSERT_EQ(control.terminated().size(), 1u);
  EXPECT_EQ(control.terminated()[0].second, (std::vector<int64_t>{100, 101}));
  control.FinishTerminations();
  EXPECT_FALSE(b.Stopping(42));
}

TEST(MpsBackendTest, DaemonEventsBecomeSharingEvents) {
  FakeMps control;
  MpsBackend b(&control, MpsRules());
  control.InjectFault(1, 1234);
  control.InjectUnresponsive(0, 55);
  control.InjectDaemonDeath(1);
  std::vector<sharing::Event> events = b.Poll(0);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].kind, sharing::Event::Kind::kFault);
  EXPECT_EQ(events[0].device_index, 1);
  EXPECT_EQ(events[0].uid, 1234u) << "the claim stays the user's";
  EXPECT_EQ(events[1].kind, sharing::Event::Kind::kServerUnresponsive);
  EXPECT_EQ(events[1].uid, 55u);
  EXPECT_EQ(events[2].kind, sharing::Event::Kind::kServerDied);
  for (const auto& e : events) EXPECT_EQ(e.mode, SharingMode::kMps);
}

TEST(MpsBackendTest, ServersAreTheControlDaemons) {
  FakeMps control;
  MpsBackend b(&control, MpsRules());
  MpsDaemonInfo info;
  info.device_index = 1;
  info.running = true;
  info.uid = 1000;
  info.control_pid = 77;
  info.clients = 2;
  control.SetDaemons({info});
  auto servers = b.Servers();
  ASSERT_EQ(servers.size(), 1u);
  EXPECT_EQ(servers.at(1).control_pid, 77);
  EXPECT_EQ(servers.at(1).clients, 2);
  b.ResetDevice(1);
  EXPECT_EQ(control.resets(), std::vector<int>{1});
}

}  // namespace
}  // namespace pinpoint::mps

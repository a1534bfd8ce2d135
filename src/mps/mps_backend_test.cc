#include "mps/mps_backend.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/test_dir.h"
#include "mps/env_only_mps.h"
#include "mps/fake_mps.h"

namespace pinpoint::mps {
namespace {

sharing::Slice SliceOn(int device, uint64_t mem_bytes, uint64_t job_id = 1) {
  return sharing::Slice{.device_index = device,
                        .device_uuid = "GPU-" + std::to_string(device),
                        .uid = 1000,
                        .gid = 1000,
                        .gpu_mem_bytes = mem_bytes,
                        .gpu_share_pct = 20,
                        .job_id = job_id};
}

TEST(MpsBackendTest, RulesAreOneUserAndTheClientLimit) {
  TestDir tmp;
  EnvOnlyMps b(tmp.path(), MpsRules(7));
  EXPECT_EQ(b.mode(), SharingMode::kMps);
  EXPECT_TRUE(b.Rules().one_user);
  EXPECT_FALSE(b.Rules().whole_device);
  EXPECT_EQ(b.Rules().max_jobs, 7);
  EnvOnlyMps none(tmp.path(), MpsRules(0, "MPS cannot be started"));
  EXPECT_FALSE(none.Rules().takes_slices());
  EXPECT_EQ(none.Rules().no_slices_reason, "MPS cannot be started");
}

TEST(MpsBackendTest, OnlyASliceOfOneDeviceIsAClient) {
  TestDir tmp;
  EnvOnlyMps b(tmp.path());
  FakeMps fake;
  for (const sharing::Backend* mode :
       {static_cast<const sharing::Backend*>(&b), static_cast<const sharing::Backend*>(&fake)}) {
    EXPECT_EQ(mode->HoldsAs(1 << 30, 1), SharingMode::kMps);
    EXPECT_EQ(mode->HoldsAs(1 << 30, 2), SharingMode::kTimeslice)
        << "a process is the client of one server only";
    EXPECT_EQ(mode->HoldsAs(0, 1), SharingMode::kExclusive);
  }
}

TEST(MpsBackendTest, EveryVariableItSetsIsItsOwn) {
  TestDir tmp;
  EnvOnlyMps b(tmp.path());
  FakeMps fake;
  for (sharing::Backend* mode :
       {static_cast<sharing::Backend*>(&b), static_cast<sharing::Backend*>(&fake)}) {
    auto env = mode->Prepare(SliceOn(1, uint64_t{2} << 30));
    ASSERT_TRUE(env.ok()) << env.status().ToString();
    EXPECT_EQ(env->at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=2048M");
    std::vector<std::string> own = mode->OwnVariables();
    for (const auto& [name, value] : *env)
      EXPECT_NE(std::find(own.begin(), own.end(), name), own.end())
          << name << " is set but not owned";
  }
}

TEST(MpsBackendTest, FakeMpsRecordsAndReportsAsTheModeDoes) {
  FakeMps fake;
  ASSERT_TRUE(fake.Prepare(SliceOn(1, 1 << 30)).ok());
  fake.Adopt(SliceOn(0, 1 << 30));
  ASSERT_EQ(fake.prepared().size(), 2u) << "an adopted client counts as prepared";
  EXPECT_EQ(fake.prepared()[0].uid, 1000u);
  fake.Fail(FailedPrecondition("the MPS control daemon of device 1 is starting"));
  auto waiting = fake.Prepare(SliceOn(1, 1 << 30));
  ASSERT_FALSE(waiting.ok());
  EXPECT_EQ(waiting.status().code(), Code::kFailedPrecondition);
  fake.InjectFault(1, 1234);
  fake.InjectUnresponsive(0, 55);
  fake.InjectDaemonDeath(1);
  std::vector<sharing::Event> events = fake.Poll(0);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].kind, sharing::Event::Kind::kFault);
  EXPECT_EQ(events[0].device_index, 1);
  EXPECT_EQ(events[0].uid, 1234u) << "the claim stays the user's";
  EXPECT_EQ(events[1].kind, sharing::Event::Kind::kServerUnresponsive);
  EXPECT_EQ(events[1].uid, 55u);
  EXPECT_EQ(events[2].kind, sharing::Event::Kind::kServerDied);
  for (const auto& e : events) EXPECT_EQ(e.mode, SharingMode::kMps);
}

// A slice's service class decides its MPS client priority: set in its environment (0 too, so it
// can be read back), named among the variables a job may not set itself, and applied as a
// gpu_priority limit the enforcement list judges.
TEST(MpsBackendTest, ClientPriorityComesFromTheSlice) {
  sharing::Slice normal = SliceOn(0, 1 << 30);
  sharing::Slice scavenger = normal;
  scavenger.client_priority = 1;
  EXPECT_EQ(ClientEnvironment("/p", "/l", normal).at("CUDA_MPS_CLIENT_PRIORITY"), "0");
  EXPECT_EQ(ClientEnvironment("/p", "/l", scavenger).at("CUDA_MPS_CLIENT_PRIORITY"), "1");
  std::vector<std::string> own = MpsVariables();
  EXPECT_NE(std::find(own.begin(), own.end(), "CUDA_MPS_CLIENT_PRIORITY"), own.end())
      << "a job must not choose its own priority";
  std::vector<AppliedLimit> limits = MpsApplies(scavenger);
  auto it = std::find_if(limits.begin(), limits.end(),
                         [](const AppliedLimit& l) { return l.resource == "gpu_priority"; });
  ASSERT_NE(it, limits.end());
  EXPECT_EQ(it->variable, "CUDA_MPS_CLIENT_PRIORITY");
  EXPECT_EQ(it->expected, "1");
  EXPECT_EQ(it->strength, LimitStrength::kDriver);
}

}  // namespace
}  // namespace pinpoint::mps

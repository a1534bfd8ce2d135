#include "k8s/device/pinpoint_slice_source.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "common/test_dir.h"
#include "integration/harness.h"

namespace pinpoint::k8s {
namespace {

TEST(PinpointSliceSourceTest, DevicesFromTheGpusReply) {
  GpusReply reply;
  DeviceView ok;
  ok.index = 0;
  ok.uuid = "GPU-a";
  ok.name = "NVIDIA H100 80GB HBM3";
  ok.mode = SharingMode::kMps;
  ok.mem_bytes = 1000;
  DeviceView drained = ok;
  drained.index = 1;
  drained.mode = SharingMode::kTimeslice;
  drained.drained = true;
  drained.drain_reason = "3 MPS faults within an hour";
  DeviceView bare_drain = drained;
  bare_drain.index = 2;
  bare_drain.drain_reason.reset();
  DeviceView recovering = ok;
  recovering.index = 3;
  recovering.is_mig = true;
  recovering.gpu_index = 1;
  recovering.mode = SharingMode::kExclusive;
  recovering.recovering = true;
  reply.devices = {ok, drained, bare_drain, recovering};

  SliceInventory inv = InventoryFromGpus(reply);
  ASSERT_EQ(inv.devices.size(), 4u);
  EXPECT_TRUE(inv.devices[0].healthy);
  EXPECT_EQ(inv.devices[0].uuid, "GPU-a");
  EXPECT_EQ(inv.devices[0].mem_bytes, 1000u);
  EXPECT_EQ(inv.devices[0].mode, SharingMode::kMps);
  EXPECT_FALSE(inv.devices[1].healthy);
  EXPECT_EQ(inv.devices[1].unhealthy_reason, "3 MPS faults within an hour");
  EXPECT_EQ(inv.devices[1].mode, SharingMode::kTimeslice);
  EXPECT_EQ(inv.devices[2].unhealthy_reason, "drained");
  EXPECT_FALSE(inv.devices[3].healthy);
  EXPECT_EQ(inv.devices[3].unhealthy_reason, "recovering from an MPS fault");
  EXPECT_TRUE(inv.devices[3].is_mig);
  EXPECT_EQ(inv.devices[3].gpu_index, 1);
}

TEST(PinpointSliceSourceTest, NoPinpointdIsUnavailable) {
  TestDir dir;
  PinpointSliceSource source({dir.path() + "/none.sock", "/var/run/cdi", "", ""});
  auto inv = source.Inventory();
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.status().code(), Code::kUnavailable);
}

TEST(PinpointSliceSourceTest, LeaseIds) {
  EXPECT_EQ(*ParseLeaseId("L42"), 42);
  for (const char* bad :
       {"", "L", "42", "L0", "L042", "L-1", "L4x", "l42", "L99999999999999999999"}) {
    EXPECT_EQ(ParseLeaseId(bad).status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST(PinpointSliceSourceTest, TheOpenLeaseRequestNamesTheDevicesAndIsBounded) {
  LeaseRequest memory{LeaseKind::kMemory,
                      {1},
                      uint64_t{5} << 30,
                      "pinpoint.io/gpu-mem",
                      {"gpu1-mem0", "gpu1-mem1"}};
  OpenLeaseRequest op = OpenLeaseRequestFor(memory, "alice");
  EXPECT_EQ(op.request.gpus, 1);
  EXPECT_EQ(op.request.devices, std::vector<int>{1});
  EXPECT_EQ(op.request.gpu_mem_bytes, uint64_t{5} << 30);
  EXPECT_EQ(op.request.as_user, "alice");
  EXPECT_EQ(op.request.name, "pinpoint.io/gpu-mem gpu1-mem0,gpu1-mem1");

  LeaseRequest whole{LeaseKind::kWholeGpus, {0, 1}, uint64_t{5} << 30, "pinpoint.io/gpu", {}};
  for (int i = 0; i < 100; ++i) whole.device_ids.push_back("gpu" + std::to_string(i));
  op = OpenLeaseRequestFor(whole, "");
  EXPECT_EQ(op.request.gpus, 2);
  EXPECT_EQ(op.request.gpu_mem_bytes, 0u);  // whole devices
  EXPECT_LE(op.request.name.size(), kMaxNameBytes);
  EXPECT_EQ(op.request.name.rfind("pinpoint.io/gpu gpu0,gpu1,", 0), 0u);
}

TEST(PinpointSliceSourceTest, NoPinpointdLeavesNoLease) {
  TestDir dir;
  PinpointSliceSource source({dir.path() + "/none.sock", dir.path() + "/cdi",
                              std::string(PINPOINT_BIN_DIR) + "/pinpoint-cdi-hook", ""});
  auto lease = source.OpenLease(LeaseRequest{LeaseKind::kMemory, {0}, uint64_t{1} << 30, "r", {}});
  ASSERT_FALSE(lease.ok());
  EXPECT_EQ(lease.status().code(), Code::kUnavailable);
  EXPECT_EQ(source.CloseLease("L1").code(), Code::kUnavailable);
  EXPECT_EQ(source.CloseLease("bogus").code(), Code::kInvalidArgument);
}

// A hook that another user could replace would be run as root by the container runtime.
TEST(PinpointSliceSourceTest, AnUnsafeHookOpensNoLease) {
  testing::Harness harness("simulated:h100x2");
  harness.StartDaemon();
  TestDir dir;
  std::string hook = dir.path() + "/hook";
  ASSERT_TRUE(WriteFileAtomic(hook, "#!/bin/sh\n", 0755).ok());
  ASSERT_EQ(::chmod(hook.c_str(), 0777), 0);
  PinpointSliceSource source({harness.socket(), dir.path() + "/cdi", hook, ""});
  auto lease = source.OpenLease(LeaseRequest{LeaseKind::kMemory, {0}, uint64_t{1} << 30, "r", {}});
  ASSERT_FALSE(lease.ok());
  EXPECT_EQ(lease.status().code(), Code::kFailedPrecondition) << lease.status().ToString();
  auto queue = harness.Cli({"queue", "--all"});
  EXPECT_EQ(queue.out.find("lease"), std::string::npos) << queue.out;
}

// Allocate's lease, end to end: pinpointd places it on the named device, the spec names the
// hook and the slice's environment, and closing ends the lease and removes the spec.
TEST(PinpointSliceSourceTest, OpensAndClosesARealLeaseWithItsCdiSpec) {
  testing::Harness harness("simulated:h100x2");
  harness.StartDaemon();
  TestDir dir;
  std::string cdi = dir.path() + "/cdi";
  std::string hook = std::string(PINPOINT_BIN_DIR) + "/pinpoint-cdi-hook";
  PinpointSliceSource source({harness.socket(), cdi, hook, ""});
  auto lease = source.OpenLease(LeaseRequest{
      LeaseKind::kMemory, {1}, uint64_t{5} << 30, "pinpoint.io/gpu-mem", {"gpu1-mem0"}});
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  ASSERT_EQ(lease->cdi_devices.size(), 1u);
  EXPECT_EQ(lease->cdi_devices[0], "pinpoint.io/slice=" + lease->id);
  EXPECT_EQ(lease->env.at("CUDA_VISIBLE_DEVICES").empty(), false);
  auto id = ParseLeaseId(lease->id);
  ASSERT_TRUE(id.ok());
  std::string spec_path = cdi + "/pinpoint.io-slice-" + lease->id + ".json";
  auto spec_text = ReadFile(spec_path);
  ASSERT_TRUE(spec_text.ok()) << spec_path;
  auto spec = nlohmann::json::parse(*spec_text);
  EXPECT_EQ(spec["kind"], "pinpoint.io/slice");
  EXPECT_EQ(spec["devices"][0]["name"], lease->id);
  EXPECT_NE(spec.dump().find(harness.socket()), std::string::npos);

  auto shown = harness.Cli({"show", std::to_string(*id), "--json"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  auto job = nlohmann::json::parse(shown.out)["job"];
  EXPECT_EQ(job["kind"], "lease");
  EXPECT_EQ(job["state"], "running");
  EXPECT_EQ(job["allocations"][0]["device_index"], 1) << shown.out;

  ASSERT_TRUE(source.CloseLease(lease->id).ok());
  EXPECT_FALSE(ReadFile(spec_path).ok());  // the spec is gone with the lease
  shown = harness.Cli({"show", std::to_string(*id), "--json"});
  EXPECT_NE(nlohmann::json::parse(shown.out)["job"]["state"], "running") << shown.out;
}

// A slice that does not fit is pinpointd's refusal, and leaves no spec behind.
TEST(PinpointSliceSourceTest, ASliceThatDoesNotFitIsRefused) {
  testing::Harness harness("simulated:h100x2");
  harness.StartDaemon();
  TestDir dir;
  PinpointSliceSource source({harness.socket(), dir.path() + "/cdi",
                              std::string(PINPOINT_BIN_DIR) + "/pinpoint-cdi-hook", ""});
  auto lease =
      source.OpenLease(LeaseRequest{LeaseKind::kMemory, {0}, uint64_t{4096} << 30, "r", {}});
  ASSERT_FALSE(lease.ok());
  EXPECT_NE(lease.status().code(), Code::kOk);
}

// The real thing: pinpointd on a simulated node, read through the client API.
TEST(PinpointSliceSourceTest, ReadsARealPinpointd) {
  testing::Harness harness("simulated:h100x2", R"("gpu_modes": {"1": "exclusive"})");
  harness.StartDaemon();
  PinpointSliceSource source({harness.socket(), "/var/run/cdi", "", ""});
  auto inv = source.Inventory();
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  ASSERT_EQ(inv->devices.size(), 2u);
  EXPECT_EQ(inv->devices[0].mode, SharingMode::kMps);
  EXPECT_EQ(inv->devices[1].mode, SharingMode::kExclusive);
  for (const SliceDevice& d : inv->devices) {
    EXPECT_TRUE(d.healthy);
    EXPECT_EQ(d.uuid.rfind("GPU-", 0), 0u) << d.uuid;
    EXPECT_GT(d.mem_bytes, uint64_t{70} << 30);
  }
  harness.KillDaemon();
  EXPECT_EQ(source.Inventory().status().code(), Code::kUnavailable);
}

}  // namespace
}  // namespace pinpoint::k8s

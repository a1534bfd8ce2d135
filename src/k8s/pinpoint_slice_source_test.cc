#include "k8s/pinpoint_slice_source.h"

#include <gtest/gtest.h>

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
  ok.mode = "mps";
  ok.mem_bytes = 1000;
  DeviceView drained = ok;
  drained.index = 1;
  drained.mode = "timeslice";
  drained.drained = true;
  drained.drain_reason = "3 MPS faults within an hour";
  DeviceView bare_drain = drained;
  bare_drain.index = 2;
  bare_drain.drain_reason.reset();
  DeviceView recovering = ok;
  recovering.index = 3;
  recovering.is_mig = true;
  recovering.gpu_index = 1;
  recovering.mode = "exclusive";
  recovering.recovering = true;
  reply.devices = {ok, drained, bare_drain, recovering};

  SliceInventory inv = InventoryFromGpus(reply);
  ASSERT_EQ(inv.devices.size(), 4u);
  EXPECT_TRUE(inv.devices[0].healthy);
  EXPECT_EQ(inv.devices[0].uuid, "GPU-a");
  EXPECT_EQ(inv.devices[0].mem_bytes, 1000u);
  EXPECT_EQ(inv.devices[0].mode, "mps");
  EXPECT_FALSE(inv.devices[1].healthy);
  EXPECT_EQ(inv.devices[1].unhealthy_reason, "3 MPS faults within an hour");
  EXPECT_EQ(inv.devices[1].mode, "timeslice");
  EXPECT_EQ(inv.devices[2].unhealthy_reason, "drained");
  EXPECT_FALSE(inv.devices[3].healthy);
  EXPECT_EQ(inv.devices[3].unhealthy_reason, "recovering from an MPS fault");
  EXPECT_TRUE(inv.devices[3].is_mig);
  EXPECT_EQ(inv.devices[3].gpu_index, 1);
}

TEST(PinpointSliceSourceTest, NoPinpointdIsUnavailable) {
  TestDir dir;
  PinpointSliceSource source(dir.path() + "/none.sock");
  auto inv = source.Inventory();
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.status().code(), Code::kUnavailable);
}

TEST(PinpointSliceSourceTest, LeasesAreNotWiredYet) {
  TestDir dir;
  PinpointSliceSource source(dir.path() + "/none.sock");
  auto lease = source.OpenLease(LeaseRequest{});
  ASSERT_FALSE(lease.ok());
  EXPECT_EQ(lease.status().code(), Code::kUnavailable);
  EXPECT_EQ(lease.status().message(), "leases not available in this pinpointd");
  EXPECT_EQ(source.CloseLease("L1").code(), Code::kUnavailable);
}

// The real thing: pinpointd on a simulated node, read through the client API.
TEST(PinpointSliceSourceTest, ReadsARealPinpointd) {
  testing::Harness harness("simulated:h100x2", R"("gpu_modes": {"1": "exclusive"})");
  harness.StartDaemon();
  PinpointSliceSource source(harness.socket());
  auto inv = source.Inventory();
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  ASSERT_EQ(inv->devices.size(), 2u);
  EXPECT_EQ(inv->devices[0].mode, "mps");
  EXPECT_EQ(inv->devices[1].mode, "exclusive");
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

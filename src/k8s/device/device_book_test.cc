#include "k8s/device/device_book.h"

#include <gtest/gtest.h>

#include "k8s/device/fake_slice_source.h"

namespace pinpoint::k8s {
namespace {

constexpr uint64_t kBookGiB = uint64_t{1} << 30;

SliceInventory Mixed() {
  // Device 0 mps 80 GiB, device 1 exclusive, device 2 timeslice 10.5 GiB.
  SliceInventory inv = FakeSliceSource::H100x2();
  inv.devices[1].mode = SharingMode::kExclusive;
  SliceDevice third = inv.devices[0];
  third.index = 2;
  third.mode = SharingMode::kTimeslice;
  third.mem_bytes = 10 * kBookGiB + kBookGiB / 2;
  inv.devices.push_back(third);
  return inv;
}

TEST(DeviceBookTest, WholeGpusForExclusiveDevicesUnitsForSharedOnes) {
  DeviceBook book(kBookGiB);
  book.Update(Mixed());
  const auto& gpus = book.Devices(Resource::kGpu);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].id, "gpu1");
  const auto& units = book.Devices(Resource::kGpuMem);
  ASSERT_EQ(units.size(), 80u + 10u);  // the half GiB left on device 2 is no unit
  EXPECT_EQ(units[0].id, "gpu0-mem0");
  EXPECT_EQ(units[79].id, "gpu0-mem79");
  EXPECT_EQ(units[80].id, "gpu2-mem0");
  EXPECT_EQ(units[89].id, "gpu2-mem9");
  for (const auto& u : units) EXPECT_TRUE(u.healthy) << u.id;
}

TEST(DeviceBookTest, UpdateSaysWhichListsChanged) {
  DeviceBook book(kBookGiB);
  EXPECT_EQ(book.Update(Mixed()), (std::vector<bool>{true, true}));
  EXPECT_EQ(book.Update(Mixed()), (std::vector<bool>{false, false}));
  SliceInventory drained = Mixed();
  drained.devices[0].healthy = false;
  drained.devices[0].unhealthy_reason = "3 MPS faults within an hour";
  EXPECT_EQ(book.Update(drained), (std::vector<bool>{false, true}));
  for (const auto& u : book.Devices(Resource::kGpuMem)) {
    EXPECT_EQ(u.healthy, u.device_index != 0) << u.id;
    if (u.device_index == 0) {
      EXPECT_EQ(u.unhealthy_reason, "3 MPS faults within an hour");
    }
  }
}

TEST(DeviceBookTest, ALostDeviceStaysListedUnhealthy) {
  DeviceBook book(kBookGiB);
  book.Update(Mixed());
  SliceInventory lost = Mixed();
  lost.devices.erase(lost.devices.begin() + 1);
  EXPECT_EQ(book.Update(lost), (std::vector<bool>{true, false}));
  ASSERT_EQ(book.Devices(Resource::kGpu).size(), 1u);
  EXPECT_FALSE(book.Devices(Resource::kGpu)[0].healthy);
  EXPECT_EQ(book.Devices(Resource::kGpu)[0].unhealthy_reason, "pinpointd no longer lists it");
  book.Update(Mixed());  // back
  EXPECT_TRUE(book.Devices(Resource::kGpu)[0].healthy);
}

TEST(DeviceBookTest, UnreachablePinpointdMakesEveryDeviceUnhealthy) {
  DeviceBook book(kBookGiB);
  book.Update(Mixed());
  book.Update(Result<SliceInventory>(Unavailable("pinpointd is not running")));
  for (Resource r : kResources) {
    ASSERT_FALSE(book.Devices(r).empty());
    for (const auto& d : book.Devices(r)) EXPECT_FALSE(d.healthy) << d.id;
  }
}

TEST(DeviceBookTest, UnitsPerDeviceAreCapped) {
  DeviceBook book(uint64_t{16} << 20);  // 16 MiB units of 80 GiB: 5120, capped
  book.Update(FakeSliceSource::H100x2());
  EXPECT_EQ(book.Devices(Resource::kGpuMem).size(), 2u * kMaxUnitsPerDevice);
}

TEST(DeviceBookTest, FindTakesOnlyListedIds) {
  DeviceBook book(kBookGiB);
  book.Update(Mixed());
  EXPECT_TRUE(book.Find(Resource::kGpuMem, "gpu2-mem9"));
  EXPECT_EQ(book.Find(Resource::kGpuMem, "gpu0-mem12")->unit, 12);
  for (const char* bad : {"gpu2-mem10", "gpu1-mem0", "gpu0-mem012", "gpu00-mem1", "gpu0-mem+1",
                          "gpu0-mem1x", "gpu0", "GPU0-mem1", "", "gpu-mem1", "gpu0-mem"}) {
    EXPECT_FALSE(book.Find(Resource::kGpuMem, bad)) << bad;
  }
  EXPECT_TRUE(book.Find(Resource::kGpu, "gpu1"));
  EXPECT_FALSE(book.Find(Resource::kGpu, "gpu0"));  // mps: units only
  EXPECT_FALSE(book.Find(Resource::kGpu, "gpu1-mem0"));
  EXPECT_FALSE(book.Find(Resource::kGpu, std::string(100, '1')));
}

}  // namespace
}  // namespace pinpoint::k8s

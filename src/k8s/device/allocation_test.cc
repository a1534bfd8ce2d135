#include "k8s/device/allocation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "k8s/device/fake_slice_source.h"

namespace pinpoint::k8s {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr uint64_t kGiB = uint64_t{1} << 30;

// Units "gpu<d>-mem<u>" for u in [from, to).
std::vector<std::string> Units(int device, int from, int to) {
  std::vector<std::string> out;
  for (int u = from; u < to; ++u)
    out.push_back("gpu" + std::to_string(device) + "-mem" + std::to_string(u));
  return out;
}
std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class AllocationTest : public ::testing::Test {
 protected:
  AllocationTest() : book_(kGiB) { book_.Update(FakeSliceSource::H100x2()); }
  DeviceBook book_;
};

struct BestFitCase {
  const char* name;
  std::vector<std::string> available;
  std::vector<std::string> must_include;
  int size;
  std::vector<std::string> want;
};

TEST_F(AllocationTest, PreferredUnitsAreTheBestFitOnOneGpu) {
  const BestFitCase cases[] = {
      // GPU 0 has 10 free, GPU 1 has 6: 5 units go to GPU 1, the fuller one.
      {"fullest that fits", Concat(Units(0, 70, 80), Units(1, 74, 80)), {}, 5, Units(1, 74, 79)},
      // 7 do not fit GPU 1's 6: GPU 0.
      {"skips a GPU too full", Concat(Units(0, 70, 80), Units(1, 74, 80)), {}, 7, Units(0, 70, 77)},
      // Equal free: the lower index.
      {"tie to lower index", Concat(Units(0, 0, 4), Units(1, 0, 4)), {}, 3, Units(0, 0, 3)},
      // must_include pins the GPU, even if another fits better.
      {"must include",
       Concat(Units(0, 0, 20), Units(1, 0, 5)),
       {"gpu0-mem9"},
       3,
       {"gpu0-mem0", "gpu0-mem1", "gpu0-mem9"}},
      // Unit order is numeric.
      {"numeric order",
       Units(0, 8, 12),
       {},
       4,
       {"gpu0-mem8", "gpu0-mem9", "gpu0-mem10", "gpu0-mem11"}},
      // IDs the plugin does not list are not handed back.
      {"ignores unknown", Concat({"gpu7-mem0", "bogus"}, Units(1, 0, 2)), {}, 2, Units(1, 0, 2)},
  };
  for (const auto& c : cases) {
    auto got = PreferredAllocation(Resource::kGpuMem, book_, c.available, c.must_include, c.size);
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.status().ToString();
    EXPECT_EQ(*got, c.want) << c.name;
  }
}

TEST_F(AllocationTest, PreferredUnitsSkipUnhealthyGpus) {
  SliceInventory inv = FakeSliceSource::H100x2();
  inv.devices[1].healthy = false;
  book_.Update(inv);
  auto got =
      PreferredAllocation(Resource::kGpuMem, book_, Concat(Units(0, 0, 10), Units(1, 0, 3)), {}, 2);
  ASSERT_TRUE(got.ok());
  EXPECT_THAT(*got, ElementsAre("gpu0-mem0", "gpu0-mem1"));
}

TEST_F(AllocationTest, PreferredUnitsThatFitNoGpuAreRefused) {
  auto got =
      PreferredAllocation(Resource::kGpuMem, book_, Concat(Units(0, 0, 3), Units(1, 0, 4)), {}, 5);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), Code::kFailedPrecondition);
  EXPECT_THAT(got.status().message(),
              HasSubstr("no GPU has 5 free units (the most on one GPU is 4)"));

  auto split = PreferredAllocation(Resource::kGpuMem, book_, Concat(Units(0, 0, 3), Units(1, 0, 4)),
                                   {"gpu0-mem0", "gpu1-mem0"}, 3);
  ASSERT_FALSE(split.ok());
  EXPECT_THAT(split.status().message(), HasSubstr("on 2 GPUs"));
}

TEST_F(AllocationTest, PreferredAllocationChecksItsInput) {
  for (int size : {0, -1, kMaxDeviceIds + 1}) {
    EXPECT_EQ(
        PreferredAllocation(Resource::kGpuMem, book_, Units(0, 0, 3), {}, size).status().code(),
        Code::kInvalidArgument)
        << size;
  }
  EXPECT_EQ(PreferredAllocation(Resource::kGpuMem, book_, Units(0, 0, 3), {"gpu9-mem0"}, 1)
                .status()
                .code(),
            Code::kInvalidArgument);
  EXPECT_EQ(
      PreferredAllocation(Resource::kGpuMem, book_, Units(0, 0, 3), {"gpu0-mem0", "gpu0-mem0"}, 2)
          .status()
          .code(),
      Code::kInvalidArgument);
  EXPECT_EQ(
      PreferredAllocation(Resource::kGpuMem, book_, Units(0, 0, 3), {"gpu0-mem0", "gpu0-mem1"}, 1)
          .status()
          .code(),
      Code::kInvalidArgument);
}

TEST_F(AllocationTest, PreferredWholeGpusAreTheLowest) {
  SliceInventory inv = FakeSliceSource::H100x2();
  for (auto& d : inv.devices) d.mode = SharingMode::kExclusive;
  book_.Update(inv);
  auto got = PreferredAllocation(Resource::kGpu, book_, {"gpu1", "gpu0"}, {}, 1);
  ASSERT_TRUE(got.ok());
  EXPECT_THAT(*got, ElementsAre("gpu0"));
  got = PreferredAllocation(Resource::kGpu, book_, {"gpu1", "gpu0"}, {"gpu1"}, 2);
  ASSERT_TRUE(got.ok());
  EXPECT_THAT(*got, ElementsAre("gpu1", "gpu0"));
  EXPECT_EQ(PreferredAllocation(Resource::kGpu, book_, {"gpu1"}, {}, 2).status().code(),
            Code::kFailedPrecondition);
}

TEST_F(AllocationTest, UnitsOnOneGpuBecomeAMemoryLease) {
  auto plan = PlanLease(Resource::kGpuMem, book_, Units(1, 3, 8));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->kind, LeaseKind::kMemory);
  EXPECT_THAT(plan->device_indices, ElementsAre(1));
  EXPECT_EQ(plan->gpu_mem_bytes, 5 * kGiB);
  EXPECT_EQ(plan->resource, "pinpoint.io/gpu-mem");
  EXPECT_EQ(plan->device_ids, Units(1, 3, 8));
}

TEST_F(AllocationTest, UnitsSpanningGpusAreRefused) {
  auto plan = PlanLease(Resource::kGpuMem, book_, Concat(Units(0, 0, 3), Units(1, 0, 2)));
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(plan.status().message(),
            "pinpoint.io/gpu-mem: the 5 units span GPUs 0 and 1; a slice must be on one GPU (ask "
            "for units that fit on one GPU, and let GetPreferredAllocation choose them)");
}

TEST_F(AllocationTest, PlanLeaseRefusesBadIds) {
  struct Case {
    std::vector<std::string> ids;
    Code code;
    const char* message;
  } cases[] = {
      {{}, Code::kInvalidArgument, "a container asks for 0 devices"},
      {{"gpu0-mem0", "gpu0-mem0"}, Code::kInvalidArgument, "device ID 'gpu0-mem0' repeated"},
      {{"gpu0-mem80"}, Code::kInvalidArgument, "unknown device ID 'gpu0-mem80'"},
      {{"gpu0"}, Code::kInvalidArgument, "unknown device ID 'gpu0'"},
      {{std::string(500, 'x')}, Code::kInvalidArgument, "unknown device ID"},
      // What the kubelet sends is shown escaped: no terminal control, no forged line.
      {{"gpu0\x1b]0;owned\x07\nforged"},
       Code::kInvalidArgument,
       "unknown device ID 'gpu0\\x1b]0;owned\\x07\\nforged'"},
  };
  for (const auto& c : cases) {
    auto plan = PlanLease(Resource::kGpuMem, book_, c.ids);
    ASSERT_FALSE(plan.ok()) << c.message;
    EXPECT_EQ(plan.status().code(), c.code) << c.message;
    EXPECT_THAT(plan.status().message(), HasSubstr(c.message));
    EXPECT_LT(plan.status().message().size(), 200u);  // an ID is cut, not echoed whole
    EXPECT_EQ(plan.status().message().find_first_of("\n\x1b\x07"), std::string::npos);
  }
  std::vector<std::string> too_many(kMaxDeviceIds + 1, "gpu0-mem0");
  EXPECT_EQ(PlanLease(Resource::kGpuMem, book_, too_many).status().code(), Code::kInvalidArgument);
}

TEST_F(AllocationTest, PlanLeaseRefusesUnhealthyDevices) {
  SliceInventory inv = FakeSliceSource::H100x2();
  inv.devices[0].healthy = false;
  inv.devices[0].unhealthy_reason = "recovering from an MPS fault";
  book_.Update(inv);
  auto plan = PlanLease(Resource::kGpuMem, book_, Units(0, 0, 1));
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), Code::kFailedPrecondition);
  EXPECT_THAT(plan.status().message(), HasSubstr("gpu0-mem0 is unhealthy: recovering"));
}

TEST_F(AllocationTest, WholeGpusBecomeAWholeGpuLease) {
  SliceInventory inv = FakeSliceSource::H100x2();
  for (auto& d : inv.devices) d.mode = SharingMode::kExclusive;
  book_.Update(inv);
  auto plan = PlanLease(Resource::kGpu, book_, {"gpu1", "gpu0"});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->kind, LeaseKind::kWholeGpus);
  EXPECT_THAT(plan->device_indices, ElementsAre(0, 1));
}

}  // namespace
}  // namespace pinpoint::k8s

#include <gtest/gtest.h>

#include "sched/placement.h"
#include "sched/sched_test_util.h"

namespace pinpoint::sched {
namespace {

using namespace ::pinpoint::sched::testing;  // NOLINT(google-build-using-namespace)

struct FitsCase {
  const char* name;
  Demand demand;
  Inventory inventory;
  const char* want;  // "" = fits; otherwise the exact kFailedPrecondition message
};

template <size_t N>
void ExpectCases(const FitsCase (&cases)[N]) {
  for (const FitsCase& c : cases) {
    SCOPED_TRACE(c.name);
    Status status = CheckFits(c.demand, c.inventory);
    if (c.want[0] == '\0') {
      EXPECT_TRUE(status.ok()) << status.ToString();
    } else {
      EXPECT_EQ(status.code(), Code::kFailedPrecondition);
      EXPECT_EQ(status.message(), c.want);
    }
  }
}

TEST(CheckFitsTest, Table) {
  const Inventory two_gpus = Node({Gpu(80), Gpu(80)}, 16, 256);
  const Inventory mig_node = Node({Mig(0, 10), Mig(0, 20), Gpu(80)}, 16, 256);
  const FitsCase cases[] = {
      {"cpu_only", CpuOnly(1, 16, 256), two_gpus, ""},
      {"whole_gpus", Whole(1, 2), two_gpus, ""},
      {"too_many_whole_gpus", Whole(1, 3), two_gpus, "needs 3 whole GPUs, this node has 2"},
      {"one_whole_gpu_none", Whole(1, 1), Node({}), "needs 1 whole GPU, this node has 0"},
      {"mig_is_not_whole", Whole(1, 2), mig_node, "needs 2 whole GPUs, this node has 1"},
      {"drained_absent", Whole(1, 2), Node({Gpu(80), Drained(Gpu(80))}),
       "needs 2 whole GPUs, this node has 1 in service"},
      {"slice", Slice(1, 1, 80), two_gpus, ""},
      {"slice_on_mig", Slice(1, 1, 20, 0, 2), mig_node, ""},
      {"slice_too_big", Slice(1, 1, 100), two_gpus,
       "needs 100GiB of device memory on one device, largest has 80GiB"},
      {"slices_too_many", Slice(1, 1, 20, 0, 3), mig_node,
       "needs 20GiB of device memory on each of 3 devices, this node has 2 with that much"},
      {"slice_no_devices", Slice(1, 1, 1), Node({}),
       "needs 1GiB of device memory on one device, this node has no devices"},
      {"slice_share_over_100", Slice(1, 1, 1, 150), two_gpus,
       "needs a 150% SM share, a device has at most 100%"},
      {"too_many_cpus", CpuOnly(1, 64), two_gpus, "needs 64 CPUs, host has 16"},
      {"one_cpu_too_many", CpuOnly(1, 2), Node({}, 1), "needs 2 CPUs, host has 1"},
      {"too_much_host_memory", CpuOnly(1, 1, 1024), two_gpus,
       "needs 1TiB of host memory, host has 256GiB"},
      {"zero_host_memory", CpuOnly(1, 1, 0), Node({}, 1, 0), ""},
      {"pinned_slice", PinnedTo(Slice(1, 1, 20), {1}), mig_node, ""},
      {"pinned_to_missing_device", PinnedTo(Slice(1, 1, 1), {2}), two_gpus,
       "needs GPU 2, this node has 2 devices"},
      {"pinned_slice_too_big", PinnedTo(Slice(1, 1, 30), {0}), mig_node,
       "needs 30GiB of device memory on GPU 0, which has 10GiB"},
      {"pinned_whole_mig", PinnedTo(Whole(1, 1), {0}), mig_node,
       "needs GPU 0 whole, and it is a MIG instance"},
      {"pinned_drained", PinnedTo(Whole(1, 1), {1}), Node({Gpu(80), Drained(Gpu(80))}),
       "needs GPU 1, which is drained"},
      {"negative_gpus", Whole(1, -1), two_gpus,
       "needs a negative number of GPUs or CPUs, which no node has"},
  };
  ExpectCases(cases);
}

// A vacant slot of a mig-dynamic GPU counts for what an instance made there could hold, for a
// one-device slice only (pinpoint makes an instance for one slice), and is never pinned to.
TEST(CheckFitsTest, AVacantMigSlotCountsForOneSliceOfItsSize) {
  Device vacant = Mig(0, 40);
  vacant.partition = partition::Partition::Slot(4, "");
  Inventory inv = Node({vacant, Mig(0, 10)}, 16, 256);
  inv.mig_profiles = {{"1g.10gb", uint64_t{10} << 30}, {"3g.40gb", uint64_t{40} << 30}};
  Device slot = Mig(0, 10);
  slot.partition = partition::Partition::Slot(1, "1g.10gb");
  Inventory filled = Node({vacant, slot}, 16, 256);
  const FitsCase cases[] = {
      {"fits_what_could_be_made", Slice(1, 1, 30), inv, ""},
      {"larger_than_any_instance", Slice(1, 1, 50), inv,
       "needs 50GiB of device memory on one device, largest has 10GiB"},
      {"two_slices", Slice(1, 1, 5, 0, 2), inv,
       "needs 5GiB of device memory on each of 2 devices, this node has 1 with that much"},
      {"whole", Whole(1, 1), inv, "needs 1 whole GPU, this node has 0"},
      {"pinned", PinnedTo(Slice(1, 1, 5), {0}), inv,
       "needs GPU 0, a MIG slot of a mig-dynamic GPU: pinpoint places jobs there itself"},
      {"pinned_to_a_filled_slot", PinnedTo(Slice(1, 1, 5), {1}), filled,
       "needs GPU 1, a MIG slot of a mig-dynamic GPU: pinpoint places jobs there itself"},
  };
  ExpectCases(cases);
}

// --mig: a profile the node has or could make, with no more memory than its instances have.
TEST(CheckFitsTest, ANamedMigProfileMustBeOneTheNodeHasOrCouldMake) {
  Inventory inv = Node({Mig(0, 10), Gpu(80)}, 16, 256);
  inv.mig_profiles = {{"1g.10gb", uint64_t{10} << 30}, {"3g.40gb", uint64_t{40} << 30}};
  Demand d = Slice(1, 1, 30);
  d.mig_profile = "3g.40gb";
  EXPECT_TRUE(CheckFits(d, inv).ok()) << "an instance a mig-dynamic GPU could make";
  d.gpu_mem_bytes = uint64_t{50} << 30;
  EXPECT_EQ(CheckFits(d, inv).message(),
            "needs 50GiB of device memory on a 3g.40gb instance, which has 40GiB");
  d.mig_profile = "7g.80gb";
  EXPECT_EQ(CheckFits(d, inv).message(),
            "needs a MIG instance of profile 7g.80gb, which this node neither has nor can make "
            "(its profiles: 1g.10gb, "
            "3g.40gb)");
  inv.mig_profiles = {};
  EXPECT_EQ(CheckFits(d, inv).message(),
            "needs a MIG instance of profile 7g.80gb, which this node has none of (no MIG)");
}

TEST(CheckFitsTest, IgnoresWhatIsRunning) {
  // CheckFits looks at the empty node: a fully used GPU still counts.
  Inventory inv = Node({Gpu(80)});
  EXPECT_TRUE(CheckFits(Whole(1, 1), inv).ok());
}

TEST(CheckFitsTest, MpsClientLimitZeroLeavesOnlyOtherModes) {
  Inventory inv = Node({Gpu(80), Gpu(40, SharingMode::kTimeslice)});
  SetMpsRules(&inv, 0);
  EXPECT_TRUE(CheckFits(Slice(1, 1, 40), inv).ok());
  EXPECT_EQ(CheckFits(Slice(1, 1, 60), inv).message(),
            "needs 60GiB of device memory on one device, largest has 40GiB");
}

// A node whose MPS cannot be started: its kMps devices take no slices, and every refusal of a
// slice that they could have taken says why; whole GPUs and the other modes are untouched.
Inventory NoMpsSlices(Inventory inv) {
  SetMpsRules(&inv, 0, "MPS cannot be started (x)");
  return inv;
}

TEST(CheckFitsTest, NoMpsSlicesSaysWhy) {
  const Inventory all_mps = NoMpsSlices(Node({Gpu(80), Gpu(80)}));
  const Inventory mixed = NoMpsSlices(Node({Gpu(80), Gpu(40, SharingMode::kTimeslice)}));
  const Inventory exclusive = NoMpsSlices(Node({Gpu(80, SharingMode::kExclusive), Gpu(80)}));
  const FitsCase cases[] = {
      {"whole_gpus_run", Whole(1, 2), all_mps, ""},
      {"cpu_only_runs", CpuOnly(1, 4), all_mps, ""},
      {"slice_refused", Slice(1, 1, 4), all_mps,
       "needs 4GiB of device memory on one device, and this node takes no slices: "
       "MPS cannot be started (x)"},
      {"slices_on_two_refused", Slice(1, 1, 4, 0, 2), all_mps,
       "needs 4GiB of device memory on each of 2 devices, and this node takes no slices: "
       "MPS cannot be started (x)"},
      {"slice_on_timeslice_runs", Slice(1, 1, 40), mixed, ""},
      {"slice_too_big_for_timeslice", Slice(1, 1, 60), mixed,
       "needs 60GiB of device memory on one device, largest has 40GiB; 1 of its devices takes "
       "no slices: MPS cannot be started (x)"},
      {"two_slices_one_timeslice", Slice(1, 1, 4, 0, 2), mixed,
       "needs 4GiB of device memory on each of 2 devices, this node has 1 with that much; 1 of "
       "its devices takes no slices: MPS cannot be started (x)"},
      {"slice_on_exclusive_runs", Slice(1, 1, 4), exclusive, ""},
      {"pinned_slice_refused", PinnedTo(Slice(1, 1, 4), {1}), all_mps,
       "needs a slice of GPU 1, which takes no slices: MPS cannot be started (x)"},
      {"pinned_whole_runs", PinnedTo(Whole(1, 1), {1}), all_mps, ""},
  };
  ExpectCases(cases);
}

TEST(CheckFitsTest, NoMpsSlicesWaitsWithTheReason) {
  // A slice pending from before the restart that made MPS unusable waits with the sentence.
  Snapshot snapshot;
  snapshot.inventory = NoMpsSlices(Node({Gpu(80)}));
  snapshot.pending = {Slice(7, 1, 4), Whole(8, 1)};
  Plan plan = Schedule(snapshot);
  ASSERT_EQ(plan.starts.size(), 1u);
  EXPECT_EQ(plan.starts[0].id, 8);
  ASSERT_EQ(plan.waits.size(), 1u);
  EXPECT_EQ(plan.waits[0].id, 7);
  EXPECT_EQ(plan.waits[0].reason, Reason::kResources);
  EXPECT_EQ(plan.waits[0].detail,
            "needs 4GiB of device memory on one device, and this node takes no slices: "
            "MPS cannot be started (x)");
}

}  // namespace
}  // namespace pinpoint::sched

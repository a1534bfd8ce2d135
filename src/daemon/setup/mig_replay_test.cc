// A simulated node's MIG layout across a restart (ReplayMigChanges, daemon/setup/mig_setup.h): the
// changes the store holds are made again on the fresh preset, so the layout and the change
// history `pinpoint gpus` shows agree.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "common/test_dir.h"
#include "daemon/setup/mig_setup.h"
#include "gpu/simulated_backend.h"

namespace pinpoint::daemon {
namespace {

// GPU 0's instances as (profile, first memory slice).
std::set<std::pair<std::string, int>> Layout(gpu::GpuBackend& backend) {
  std::set<std::pair<std::string, int>> out;
  auto gpus = backend.Inventory();
  EXPECT_TRUE(gpus.ok());
  if (!gpus.ok()) return out;
  for (const gpu::MigInfo& m : gpus->at(0).migs) out.insert({m.profile, m.placement_start});
  return out;
}

store::MigChange Change(const char* action, const char* profile, int start,
                        const char* result = "ok") {
  store::MigChange c;
  c.at_ms = 1;
  c.action = *partition::MigActionFromName(action);
  c.profile = profile;
  c.start = start;
  c.result = result;
  return c;
}

TEST(MigReplayTest, TheStoredChangesAreMadeAgainOnTheFreshPreset) {
  TestDir dir;
  auto store = store::JobStore::Open(dir.path() + "/pinpoint.db");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto before = gpu::SimulatedBackend::FromPreset("a100x8-mig");
  ASSERT_TRUE(before.ok());
  auto preset = Layout(**before);
  ASSERT_TRUE(preset.count({"2g.20gb", 2})) << "the preset this test is written against";
  ASSERT_TRUE(
      (*store)
          ->AppendMigChanges({Change("destroy", "2g.20gb", 2), Change("create", "1g.10gb", 2),
                              Change("create", "1g.10gb", 3),
                              Change("create", "1g.10gb", 6, "GPU 0: memory slices taken"),
                              Change("destroy", "1g.10gb", 5)})
          .ok());

  auto after = gpu::SimulatedBackend::FromPreset("a100x8-mig");
  ASSERT_TRUE(after.ok());
  auto made = ReplayMigChanges(**after, **store);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(*made, 3) << "a failed change is not made; a destroy that finds nothing is skipped";
  auto expected = preset;
  expected.erase({"2g.20gb", 2});
  expected.insert({"1g.10gb", 2});
  expected.insert({"1g.10gb", 3});
  EXPECT_EQ(Layout(**after), expected);
}

TEST(MigReplayTest, NoStoredChangesLeaveThePresetAsItIs) {
  TestDir dir;
  auto store = store::JobStore::Open(dir.path() + "/pinpoint.db");
  ASSERT_TRUE(store.ok());
  auto backend = gpu::SimulatedBackend::FromPreset("a100x8-mig");
  ASSERT_TRUE(backend.ok());
  auto preset = Layout(**backend);
  EXPECT_EQ(*ReplayMigChanges(**backend, **store), 0);
  EXPECT_EQ(Layout(**backend), preset);
}

}  // namespace
}  // namespace pinpoint::daemon

// JobStore's record of MIG layout changes (job_store_mig.cc).
#include <gtest/gtest.h>

#include "store/job_store.h"
#include "store/store_test_util.h"

namespace pinpoint::store {
namespace {

using testing::ExecSql;
using testing::Must;
using testing::QueryOne;
using MigChangeStoreTest = testing::StoreTest;

MigChange Change(int64_t at_ms, const std::string& action, uint32_t id) {
  MigChange c;
  c.at_ms = at_ms;
  c.gpu = 1;
  c.action = *partition::MigActionFromName(action);
  c.profile = "3g.40gb";
  c.start = 4;
  c.instance_id = id;
  c.uuid = "MIG-" + std::to_string(id);
  c.for_job = 17;
  return c;
}

TEST_F(MigChangeStoreTest, ChangesSurviveAReopenInTheirOrder) {
  MigChange failed = Change(300, "create", 0);
  failed.result = "GPU 1: no room for 3g.40gb at memory slice 4";
  {
    std::unique_ptr<JobStore> store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(
        store->AppendMigChanges({Change(100, "create", 2), Change(200, "destroy", 2)}).ok());
    ASSERT_TRUE(store->AppendMigChanges({failed}).ok());
  }
  std::unique_ptr<JobStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  std::vector<MigChange> all = Must(store->RecentMigChanges(10));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0], Change(100, "create", 2));
  EXPECT_EQ(all[1], Change(200, "destroy", 2));
  EXPECT_EQ(all[2], failed);
  std::vector<MigChange> last = Must(store->RecentMigChanges(1));
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0], failed) << "the newest";
}

TEST_F(MigChangeStoreTest, OnlyTheNewestAreKept) {
  std::unique_ptr<JobStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  std::vector<MigChange> many;
  for (int64_t i = 0; i < kMigChangesKept + 5; ++i)
    many.push_back(Change(i, "create", static_cast<uint32_t>(i)));
  ASSERT_TRUE(store->AppendMigChanges(many).ok());
  std::vector<MigChange> kept =
      Must(store->RecentMigChanges(static_cast<int>(kMigChangesKept) + 100));
  ASSERT_EQ(kept.size(), static_cast<size_t>(kMigChangesKept));
  EXPECT_EQ(kept.front().at_ms, 5) << "the five oldest went";
  EXPECT_EQ(kept.back().at_ms, kMigChangesKept + 4);
}

// Each action is stored as its name; a row whose word this version does not know (a newer
// pinpoint's, or a damaged file) is history only: it is not read back as a change to make again.
TEST_F(MigChangeStoreTest, ActionsAreStoredByNameAndAnUnknownOneIsNotReadBack) {
  {
    std::unique_ptr<JobStore> store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(
        store->AppendMigChanges({Change(100, "create", 2), Change(200, "destroy", 2)}).ok());
  }
  EXPECT_EQ(QueryOne(db_path(), "SELECT group_concat(action, ',') FROM mig_changes"),
            "create,destroy");
  ASSERT_TRUE(
      ExecSql(db_path(), "UPDATE mig_changes SET action = 'resize' WHERE at_ms = 100").ok());
  std::unique_ptr<JobStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  std::vector<MigChange> read = Must(store->RecentMigChanges(10));
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0], Change(200, "destroy", 2));
}

}  // namespace
}  // namespace pinpoint::store

// A job array in the store (JobStore::InsertArray): consecutive ids, all or nothing, under the
// id mark.
#include <gtest/gtest.h>

#include "store/job_store.h"
#include "store/store_test_util.h"

namespace pinpoint::store {
namespace {

using testing::Must;
using testing::PendingRecord;
using testing::QueryOne;
using JobStoreTest = testing::StoreTest;

std::vector<JobRecord> ArrayTasks(int count, uint32_t uid = 1000) {
  std::vector<JobRecord> tasks;
  for (int i = 0; i < count; ++i) {
    JobRecord r = PendingRecord(uid, 1);
    r.array = {0, i * 2, count, 0, (count - 1) * 2, 3};
    tasks.push_back(r);
  }
  return tasks;
}

TEST_F(JobStoreTest, AnArrayGetsConsecutiveIdsAndItsFirstIdAsArrayId) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  JobId before = Must(store->Insert(PendingRecord(1000, 1)));
  std::vector<JobId> ids = Must(store->InsertArray(ArrayTasks(300), IdempotencyKey{1000, "arr"}));
  ASSERT_EQ(ids.size(), 300u);
  EXPECT_GT(ids[0], before);
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(ids[i], ids[0] + static_cast<JobId>(i));
    JobRecord task = Must(store->Get(ids[i]));
    EXPECT_EQ(task.array.array_id, ids[0]);
    EXPECT_EQ(task.array.index, static_cast<int>(i) * 2);
    EXPECT_EQ(task.array.count, 300);
    EXPECT_EQ(task.array.limit, 3);
    ASSERT_EQ(Must(store->Events(ids[i])).size(), 1u);
  }
  // A retry finds the array by its first task.
  EXPECT_EQ(Must(store->FindByIdempotencyKey({1000, "arr"}))->id, ids[0]);
  EXPECT_EQ(Must(store->Insert(PendingRecord(1000, 2))), ids.back() + 1);
  EXPECT_EQ(store->InsertArray({}).status().code(), Code::kInvalidArgument);
}

// One transaction: a task that cannot be stored leaves none of the array behind, no event and no
// used key, and the next job is stored as if nothing had been tried.
TEST_F(JobStoreTest, AnArrayIsStoredWholeOrNotAtAll) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  std::vector<JobRecord> tasks = ArrayTasks(200);
  tasks[150].request.env["BAD"] = "\xff\xfe";
  Result<std::vector<JobId>> ids = store->InsertArray(tasks, IdempotencyKey{1000, "arr"});
  EXPECT_EQ(ids.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(QueryOne(db_path(), "SELECT count(*) FROM jobs"), "0");
  EXPECT_EQ(QueryOne(db_path(), "SELECT count(*) FROM job_events"), "0");
  EXPECT_FALSE(Must(store->FindByIdempotencyKey({1000, "arr"})).has_value());
  tasks[150].request.env.clear();
  EXPECT_EQ(Must(store->InsertArray(tasks, IdempotencyKey{1000, "arr"})).size(), 200u);
  EXPECT_EQ(QueryOne(db_path(), "SELECT count(*) FROM jobs"), "200");
}

// Ids of an array are covered by the id mark before the array is known: a store lost after it
// still hands out ids above its last task.
TEST_F(JobStoreTest, TheIdMarkCoversAWholeArray) {
  JobId last = 0;
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    last = Must(store->InsertArray(ArrayTasks(500))).back();
  }
  ASSERT_EQ(std::remove(db_path().c_str()), 0);
  std::remove((db_path() + "-wal").c_str());
  std::remove((db_path() + "-shm").c_str());
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_GT(Must(store->Insert(PendingRecord(1000, 1))), last);
}

}  // namespace
}  // namespace pinpoint::store

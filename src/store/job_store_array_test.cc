// A job array in the store: one record, its rest, under the array's id with the ids of its other
// tasks reserved (JobStore::InsertArray, under the id mark); tasks stored under their reserved
// ids (InsertAt); a task found through its array's stored rest (FindArrayRest).
#include <gtest/gtest.h>

#include "store/job_store.h"
#include "store/store_test_util.h"

namespace pinpoint::store {
namespace {

using testing::Must;
using testing::PendingRecord;
using testing::QueryOne;
using JobStoreTest = testing::StoreTest;

// The rest of an array of `count` tasks with indices 0, 2, 4, ...
JobRecord Rest(int count, uint32_t uid = 1000) {
  JobRecord r = PendingRecord(uid, 1);
  std::string all = count == 1 ? "0" : "0-" + std::to_string((count - 1) * 2) + ":2";
  r.array = {{0, 0, count, 0, (count - 1) * 2, 3, all}, all};
  return r;
}

TEST_F(JobStoreTest, AnArrayIsOneRecordAndTheIdsOfItsTasksAreReserved) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  JobId before = Must(store->Insert(PendingRecord(1000, 1)));
  JobId id = Must(store->InsertArray(Rest(300), 300, IdempotencyKey{1000, "arr"}));
  EXPECT_GT(id, before);
  JobRecord rest = Must(store->Get(id));
  EXPECT_EQ(rest.array.array_id, id);
  EXPECT_EQ(rest.array.pending, "0-598:2");
  EXPECT_EQ(rest.array.count, 300);
  EXPECT_EQ(Must(store->Events(id)).size(), 1u);
  EXPECT_EQ(QueryOne(db_path(), "SELECT count(*) FROM jobs"), "2");
  // A retry finds the array by its rest; the next job's id is past the array's last task.
  EXPECT_EQ(Must(store->FindByIdempotencyKey({1000, "arr"}))->id, id);
  EXPECT_EQ(Must(store->Insert(PendingRecord(1000, 2))), id + 300);
}

TEST_F(JobStoreTest, ATaskIsStoredUnderItsReservedIdOnlyOnce) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  JobId id = Must(store->InsertArray(Rest(10), 10));
  JobRecord task = PendingRecord(1000, 1);
  task.array = {{id, 14, 10, 0, 18, 3}};
  task.id = id + 7;
  ASSERT_TRUE(store->InsertAt(task).ok());
  EXPECT_EQ(Must(store->Get(id + 7)).array.index, 14);
  ASSERT_EQ(Must(store->Events(id + 7)).size(), 1u);
  EXPECT_EQ(store->InsertAt(task).code(), Code::kFailedPrecondition) << "stored already";
  task.id = id + 10;  // past the array: never reserved
  EXPECT_EQ(store->InsertAt(task).code(), Code::kFailedPrecondition);
  EXPECT_EQ(store->Get(id + 10).status().code(), Code::kNotFound);
  EXPECT_EQ(Must(store->Insert(PendingRecord(1000, 2))), id + 10)
      << "a reserved id is not handed out";
}

TEST_F(JobStoreTest, ATaskIsFoundThroughItsArraysStoredRest) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  JobId lone = Must(store->Insert(PendingRecord(1000, 1)));
  JobId id = Must(store->InsertArray(Rest(10), 10));
  // Tasks 0 and 1 taken out: the first under the array's id, the rest moved on to task 2's.
  JobRecord first = Must(store->Get(id));
  first.array.pending.clear();
  first.array.indices.clear();
  ASSERT_TRUE(store->Update(first).ok());
  JobRecord second = first;
  second.id = id + 1;
  second.array.index = 2;
  ASSERT_TRUE(store->InsertAt(second).ok());
  JobRecord rest = Must(store->FindArrayRest(id + 1)).value_or(JobRecord{});
  EXPECT_EQ(rest.id, 0) << "no rest at or below task 1";
  JobRecord moved = Rest(10);
  moved.id = id + 2;
  moved.array.array_id = id;
  moved.array.index = 4;
  moved.array.pending = "4-18:2";
  ASSERT_TRUE(store->InsertAt(moved).ok());
  for (JobId task : {id + 2, id + 5, id + 9})
    EXPECT_EQ(Must(store->FindArrayRest(task))->id, id + 2) << task;
  EXPECT_FALSE(Must(store->FindArrayRest(id + 10)).has_value()) << "past the array";
  EXPECT_FALSE(Must(store->FindArrayRest(lone)).has_value()) << "no array";
  EXPECT_FALSE(Must(store->FindArrayRest(lone - 1)).has_value()) << "nothing below";
}

// One transaction: an array that cannot be stored leaves nothing behind, no event and no used
// key, and the next job is stored as if nothing had been tried.
TEST_F(JobStoreTest, AnArrayIsStoredWholeOrNotAtAll) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  JobRecord rest = Rest(200);
  rest.request.env["BAD"] = "\xff\xfe";
  EXPECT_EQ(store->InsertArray(rest, 200, IdempotencyKey{1000, "arr"}).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(QueryOne(db_path(), "SELECT count(*) FROM jobs"), "0");
  EXPECT_EQ(QueryOne(db_path(), "SELECT count(*) FROM job_events"), "0");
  EXPECT_FALSE(Must(store->FindByIdempotencyKey({1000, "arr"})).has_value());
  EXPECT_EQ(store->InsertArray(Rest(2), 0).status().code(), Code::kInvalidArgument);
  rest.request.env.clear();
  JobId id = Must(store->InsertArray(rest, 200, IdempotencyKey{1000, "arr"}));
  EXPECT_EQ(QueryOne(db_path(), "SELECT count(*) FROM jobs"), "1");
  EXPECT_EQ(Must(store->Insert(PendingRecord(1000, 2))), id + 200);
}

// Ids of an array are covered by the id mark before the array is known: a store lost after it
// still hands out ids above its last task.
TEST_F(JobStoreTest, TheIdMarkCoversAWholeArray) {
  JobId last = 0;
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    last = Must(store->InsertArray(Rest(500), 500)) + 499;
  }
  ASSERT_EQ(std::remove(db_path().c_str()), 0);
  std::remove((db_path() + "-wal").c_str());
  std::remove((db_path() + "-shm").c_str());
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_GT(Must(store->Insert(PendingRecord(1000, 1))), last);
}

TEST_F(JobStoreTest, AnArraysTasksShareItsEnvironmentAndTheLastOneTakesItAway) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  JobRecord rest = Rest(3);
  rest.request.env = {{"BIG", std::string(100000, 'x')}};
  JobId id = Must(store->InsertArray(rest, 3));
  auto task = [&](int k) {
    JobRecord t = rest;
    t.id = id + k;
    t.array = {{id, 2 * k, 3, 0, 4, 3}};
    return t;
  };
  ASSERT_TRUE(store->InsertAt(task(1), /*env_of=*/id).ok());
  ASSERT_TRUE(store->InsertAt(task(2), /*env_of=*/id).ok());
  EXPECT_EQ(QueryOne(db_path(), "SELECT count(*) FROM envs"), "1") << "one copy for three jobs";
  EXPECT_LT(std::stoull(QueryOne(db_path(), "SELECT max(length(record)) FROM jobs")), 1000u);
  EXPECT_EQ(Must(store->Get(id + 2)).request.env, rest.request.env);
  // An update never writes the environment, even one read without it.
  JobRecord ended = Must(store->Get(id + 1, /*with_env=*/false));
  ended.state = JobState::kCompleted;
  ended.end_ms = 9;
  ASSERT_TRUE(store->Update(ended).ok());
  EXPECT_EQ(Must(store->Get(id + 1)).request.env, rest.request.env);
  // Each job counts the environment as its own: what it would take apart.
  EXPECT_GT(Must(store->EndedBytesOf(1000)).bytes, 100000u);
  EXPECT_EQ(Must(store->DeleteEnded({id + 1})), 1);
  EXPECT_EQ(Must(store->EndedBytesOf(1000)).bytes, 0u);
  EXPECT_EQ(QueryOne(db_path(), "SELECT count(*) FROM envs"), "1") << "two jobs still name it";
  for (JobId j : {id, id + 2}) {
    JobRecord done = Must(store->Get(j));
    done.state = JobState::kCancelled;
    ASSERT_TRUE(store->Update(done).ok());
  }
  EXPECT_EQ(Must(store->DeleteEnded({id, id + 2})), 2);
  EXPECT_EQ(QueryOne(db_path(), "SELECT count(*) FROM envs"), "0");
}

TEST_F(JobStoreTest, ATaskSharesOnlyAStoredJobsEnvironment) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  JobId id = Must(store->InsertArray(Rest(3), 3));
  JobRecord t = Rest(3);
  t.id = id + 1;
  t.array = {{id, 2, 3, 0, 4, 3}};
  EXPECT_EQ(store->InsertAt(t, /*env_of=*/id + 2).code(), Code::kFailedPrecondition);
  EXPECT_EQ(store->Get(id + 1).status().code(), Code::kNotFound) << "nothing was stored";
}

TEST_F(JobStoreTest, AJobWhoseEnvironmentIsMissingReadsAsDamaged) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  JobRecord r = PendingRecord(1000, 1);
  r.request.env = {{"A", "1"}};
  JobId id = Must(store->Insert(r));
  ASSERT_TRUE(testing::ExecSql(db_path(), "DELETE FROM envs").ok());
  Result<JobRecord> read = store->Get(id);
  EXPECT_EQ(read.status().code(), Code::kInternal);
  EXPECT_NE(read.status().message().find("environment"), std::string::npos)
      << read.status().message();
  EXPECT_TRUE(Must(store->Get(id, /*with_env=*/false)).request.env.empty())
      << "a listing still reads it";
}

}  // namespace
}  // namespace pinpoint::store

#include "store/job_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include "store/store_test_util.h"

namespace pinpoint::store {
namespace {

using ::testing::ElementsAre;
using testing::ExecSql;
using testing::FullRecord;
using ::testing::HasSubstr;
using testing::Must;
using ::testing::Not;
using testing::PendingRecord;
using testing::QueryOne;

using JobStoreTest = testing::StoreTest;

ListFilter Filter(std::vector<JobState> states, std::optional<uint32_t> uid = std::nullopt,
                  int limit = 0) {
  ListFilter filter;
  filter.states = std::move(states);
  filter.uid = uid;
  filter.limit = limit;
  return filter;
}

std::vector<JobId> Ids(const std::vector<JobRecord>& jobs) {
  std::vector<JobId> ids;
  ids.reserve(jobs.size());
  for (const JobRecord& j : jobs) ids.push_back(j.id);
  return ids;
}

TEST_F(JobStoreTest, NewFileIsAtCurrentVersionInWalMode) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->SchemaVersion(), JobStore::kCurrentVersion);
  EXPECT_EQ(QueryOne(db_path(), "PRAGMA user_version"), std::to_string(JobStore::kCurrentVersion));
  EXPECT_EQ(QueryOne(db_path(), "PRAGMA journal_mode"), "wal");
}

TEST_F(JobStoreTest, NewFileIsPrivate) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  struct stat st {};
  ASSERT_EQ(stat(db_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(JobStoreTest, FullRecordRoundTrips) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  JobRecord record = FullRecord();
  Result<JobId> id = store->Insert(record);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  record.id = *id;

  Result<JobRecord> got = store->Get(*id);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, record);
  EXPECT_EQ(got->exit_code, 137);
  EXPECT_EQ(got->term_signal, 9);
  ASSERT_EQ(got->allocations.size(), 2u);
  EXPECT_EQ(got->allocations[1].uuid, "MIG-bbbb");
  EXPECT_EQ(got->request.env.at("TOKEN"), "s3cr=t");
  EXPECT_EQ(got->request.argv.back(), "");
}

// Without its environment: the same record but request.env, which SQLite drops before the decode
// (what listings and waits read; a record of a large environment costs a fraction).
TEST_F(JobStoreTest, AGetWithoutEnvironmentIsTheRecordLessItsEnvironment) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  JobRecord record = FullRecord();
  record.request.env["BIG"] = std::string(200 << 10, 'x');
  Result<JobId> id = store->Insert(record);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  record.id = *id;
  Result<JobRecord> got = store->Get(*id, /*with_env=*/false);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(got->request.env.empty());
  JobRecord want = record;
  want.request.env.clear();
  EXPECT_EQ(*got, want);
  EXPECT_EQ(store->Get(*id)->request.env.at("BIG").size(), 200u << 10)
      << "stored whole all the same";
  store::ListFilter filter;
  filter.omit_env = true;
  auto listed = store->List(filter);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ(listed->at(0), want);
}

TEST_F(JobStoreTest, UnsetOptionalsStayUnset) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Result<JobId> id = store->Insert(PendingRecord(5, 1));
  ASSERT_TRUE(id.ok());
  Result<JobRecord> got = store->Get(*id);
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->exit_code.has_value());
  EXPECT_FALSE(got->term_signal.has_value());
  EXPECT_TRUE(got->allocations.empty());
}

TEST_F(JobStoreTest, ColumnsAgreeWithRecord) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Result<JobId> id = store->Insert(FullRecord());
  ASSERT_TRUE(id.ok());
  std::string where = " FROM jobs WHERE id = " + std::to_string(*id);
  EXPECT_EQ(
      QueryOne(db_path(), "SELECT uid || ' ' || user || ' ' || state || ' ' || reason" + where),
      "1001 alice failed signaled");
  EXPECT_EQ(QueryOne(db_path(),
                     "SELECT priority || ' ' || submit_ms || ' ' || start_ms || ' ' || "
                     "end_ms" +
                         where),
            "-7 1700000000123 1700000001456 1700000099789");
  EXPECT_EQ(QueryOne(db_path(), "SELECT json_extract(record, '$.id')" + where),
            std::to_string(*id));
}

TEST_F(JobStoreTest, UpdateReplacesRecordAndColumns) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Result<JobId> id = store->Insert(PendingRecord(7, 100));
  ASSERT_TRUE(id.ok());
  JobRecord record = Must(store->Get(*id));
  record.state = JobState::kRunning;
  record.start_ms = 200;
  record.pid = 1234;
  record.allocations = {{1, "GPU-x", 0, 0, SharingMode::kExclusive}};
  ASSERT_TRUE(store->Update(record).ok());

  Result<JobRecord> got = store->Get(*id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, record);
  EXPECT_EQ(QueryOne(db_path(), "SELECT state FROM jobs WHERE id = " + std::to_string(*id)),
            "running");
}

// A job array's outcome from its tasks' id range: the first state that is not the one asked.
TEST_F(JobStoreTest, FirstStateOtherThanScansAnIdRange) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  std::vector<JobId> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(Must(store->Insert(PendingRecord(7, i))));
  for (JobId id : ids) {
    JobRecord r = Must(store->Get(id));
    r.state = id == ids[2] ? JobState::kFailed : JobState::kCompleted;
    ASSERT_TRUE(store->Update(r).ok());
  }
  EXPECT_EQ(Must(store->FirstStateOtherThan(ids[0], ids[2], JobState::kCompleted)), std::nullopt);
  EXPECT_EQ(Must(store->FirstStateOtherThan(ids[0], ids[3] + 1, JobState::kCompleted)),
            JobState::kFailed);
  EXPECT_EQ(Must(store->FirstStateOtherThan(ids[0], ids[3] + 1, JobState::kFailed)),
            JobState::kCompleted);
  EXPECT_EQ(Must(store->FirstStateOtherThan(ids[3] + 1, ids[3] + 10, JobState::kCompleted)),
            std::nullopt)
      << "no job there";
}

TEST_F(JobStoreTest, MissingIdIsNotFound) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Get(42).status().code(), Code::kNotFound);
  JobRecord ghost = PendingRecord(1, 1);
  ghost.id = 42;
  EXPECT_EQ(store->Update(ghost).code(), Code::kNotFound);
  EXPECT_EQ(store->Events(42).status().code(), Code::kNotFound);
  EXPECT_EQ(store->AppendEvent({42, 1, "start", ""}).code(), Code::kNotFound);
}

TEST_F(JobStoreTest, ListFiltersByStateAndUid) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  std::vector<JobId> ids;
  for (int i = 0; i < 6; ++i) {
    JobRecord r = PendingRecord(i % 2 == 0 ? 1000 : 2000, i);
    if (i >= 3) r.state = JobState::kRunning;
    if (i == 5) r.state = JobState::kCompleted;
    Result<JobId> id = store->Insert(r);
    ASSERT_TRUE(id.ok());
    ids.push_back(*id);
  }
  EXPECT_EQ(Ids(Must(store->List({}))), ids);
  EXPECT_THAT(Ids(Must(store->List(Filter({JobState::kPending})))),
              ElementsAre(ids[0], ids[1], ids[2]));
  EXPECT_THAT(Ids(Must(store->List(Filter({JobState::kRunning, JobState::kCompleted})))),
              ElementsAre(ids[3], ids[4], ids[5]));
  EXPECT_THAT(Ids(Must(store->List(Filter({}, 1000)))), ElementsAre(ids[0], ids[2], ids[4]));
  EXPECT_THAT(Ids(Must(store->List(Filter({JobState::kRunning}, 2000)))), ElementsAre(ids[3]));
  EXPECT_TRUE(Must(store->List(Filter({JobState::kCancelled}))).empty());
}

TEST_F(JobStoreTest, ListLimitKeepsNewestOldestFirst) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  std::vector<JobId> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(Must(store->Insert(PendingRecord(i % 2, i))));
  EXPECT_THAT(Ids(Must(store->List(Filter({}, std::nullopt, 2)))), ElementsAre(ids[3], ids[4]));
  EXPECT_THAT(Ids(Must(store->List(Filter({}, 0, 2)))), ElementsAre(ids[2], ids[4]));
  EXPECT_EQ(Ids(Must(store->List(Filter({}, std::nullopt, 99)))), ids);
  EXPECT_EQ(store->List(Filter({}, std::nullopt, -1)).status().code(), Code::kInvalidArgument);
}

TEST_F(JobStoreTest, ListPagesFromTheNewestAndCountsEveryMatch) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  std::vector<JobId> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(Must(store->Insert(PendingRecord(i % 2, i))));
  ListFilter page = Filter({}, std::nullopt, 2);
  page.offset = 2;
  EXPECT_THAT(Ids(Must(store->List(page))), ElementsAre(ids[1], ids[2]));
  page.offset = 4;
  EXPECT_THAT(Ids(Must(store->List(page))), ElementsAre(ids[0]));
  EXPECT_EQ(Must(store->Count(page)), 5);
  EXPECT_EQ(Must(store->Count(Filter({}, 0))), 3);
  EXPECT_EQ(Must(store->Count(Filter({JobState::kCompleted}))), 0);
  page.offset = -1;
  EXPECT_EQ(store->List(page).status().code(), Code::kInvalidArgument);
}

TEST_F(JobStoreTest, IdsIncreaseAcrossReopens) {
  JobId last = 0;
  for (int round = 0; round < 3; ++round) {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    for (int i = 0; i < 3; ++i) {
      Result<JobId> id = store->Insert(PendingRecord(1, i));
      ASSERT_TRUE(id.ok());
      EXPECT_GT(*id, last);
      last = *id;
    }
  }
  auto store = OpenStore();
  EXPECT_EQ(Must(store->List({})).size(), 9u);
}

TEST_F(JobStoreTest, IdsAreNotReusedAfterTheNewestRowGoes) {
  JobId removed = 0;
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Insert(PendingRecord(1, 1)).ok());
    removed = Must(store->Insert(PendingRecord(1, 2)));
  }
  // The store has no delete; an admin's hand edit must still not bring an id back.
  std::string id_text = std::to_string(removed);
  ASSERT_TRUE(ExecSql(db_path(), "DELETE FROM job_events WHERE job_id = " + id_text + ";" +
                                     "DELETE FROM jobs WHERE id = " + id_text)
                  .ok());
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Result<JobId> id = store->Insert(PendingRecord(1, 3));
  ASSERT_TRUE(id.ok());
  EXPECT_GT(*id, removed);
}

// What a user's ended jobs take follows each write: an end adds the record's bytes, a rewrite of
// an ended record changes them, a purge takes them away, and pending or running jobs count none.
TEST_F(JobStoreTest, EndedBytesFollowEndsRewritesAndPurges) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto stored_bytes = [&](JobId id) {
    return std::stoull(
        QueryOne(db_path(),
                 "SELECT length(CAST(record AS BLOB)) FROM jobs WHERE id = " + std::to_string(id)));
  };
  JobRecord a = PendingRecord(1000, 1);
  a.id = Must(store->Insert(a));
  JobRecord b = PendingRecord(1000, 2);
  b.id = Must(store->Insert(b));
  JobId other = Must(store->Insert(PendingRecord(2000, 3)));
  EXPECT_EQ(Must(store->EndedBytesOf(1000)).jobs, 0);

  a.state = JobState::kRunning;
  ASSERT_TRUE(store->Update(a).ok());
  EXPECT_EQ(Must(store->EndedBytesOf(1000)).bytes, 0u);
  a.state = JobState::kFailed;
  a.end_ms = 10;
  ASSERT_TRUE(store->Update(a).ok());
  b.state = JobState::kCancelled;
  b.end_ms = 11;
  ASSERT_TRUE(store->Update(b).ok());
  EndedBytes ended = Must(store->EndedBytesOf(1000));
  EXPECT_EQ(ended.jobs, 2);
  EXPECT_EQ(ended.bytes, stored_bytes(a.id) + stored_bytes(b.id));

  b.detail = std::string(5000, 'r');  // an ended record rewritten larger
  ASSERT_TRUE(store->Update(b).ok());
  EXPECT_EQ(Must(store->EndedBytesOf(1000)).bytes, stored_bytes(a.id) + stored_bytes(b.id));
  EXPECT_EQ(Must(store->OldestEnded(1000, 10)), (std::vector<JobId>{a.id, b.id}));
  EXPECT_EQ(Must(store->OldestEnded(1000, 1)), (std::vector<JobId>{a.id}));
  EXPECT_TRUE(Must(store->OldestEnded(2000, 10)).empty());  // its job is pending

  auto over = Must(store->UsersOver(stored_bytes(a.id), 10));
  ASSERT_EQ(over.size(), 1u);
  EXPECT_EQ(over[0].first, 1000u);
  EXPECT_TRUE(Must(store->UsersOver(ended.bytes + 10000, 10)).empty());

  ASSERT_EQ(Must(store->DeleteEnded({a.id, other})), 1);  // the pending job stays
  ended = Must(store->EndedBytesOf(1000));
  EXPECT_EQ(ended.jobs, 1);
  EXPECT_EQ(ended.bytes, stored_bytes(b.id));
}

TEST_F(JobStoreTest, InsertRecordsSubmitEventThenAppendsInOrder) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  JobRecord r = PendingRecord(1000, 500);
  r.user = "alice";
  JobId id = Must(store->Insert(r));
  ASSERT_TRUE(store->AppendEvent({id, 900, "start", "on GPU 0"}).ok());
  ASSERT_TRUE(store->AppendEvent({id, 800, "end", "exit 0"}).ok());  // clock stepped back
  JobId other = Must(store->Insert(PendingRecord(2, 600)));

  Result<std::vector<JobEvent>> events = store->Events(id);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ((*events)[0].kind, kSubmitEventKind);
  EXPECT_EQ((*events)[0].time_ms, 500);
  EXPECT_EQ((*events)[0].job_id, id);
  EXPECT_THAT((*events)[0].detail, HasSubstr("alice"));
  EXPECT_EQ((*events)[1].kind, "start");
  EXPECT_EQ((*events)[1].detail, "on GPU 0");
  EXPECT_EQ((*events)[2].kind, "end");
  EXPECT_EQ((*events)[2].time_ms, 800);
  EXPECT_EQ(Must(store->Events(other)).size(), 1u);
}

TEST_F(JobStoreTest, NonUtf8IsRejectedAndNothingIsStored) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  JobRecord bad = PendingRecord(1, 1);
  bad.request.env["BAD"] = "\xff\xfe";
  Result<JobId> id = store->Insert(bad);
  EXPECT_EQ(id.status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(Must(store->List({})).empty());
  EXPECT_EQ(QueryOne(db_path(), "SELECT count(*) FROM job_events"), "0");

  JobId good = Must(store->Insert(PendingRecord(1, 2)));
  bad.id = good;
  bad.request.name = "\xff\xfe";  // Update writes every field but the environment (fixed at submit)
  EXPECT_EQ(store->Update(bad).code(), Code::kInvalidArgument);
  EXPECT_TRUE(Must(store->Get(good)).request.env.empty());
  EXPECT_EQ(Must(store->Get(good)).request.name, PendingRecord(1, 2).request.name);
}

// A job's environment is fixed at its submit: an update writes the rest of the record and keeps
// the stored environment, whatever the record given holds (one read without it, say), without
// encoding it again.
TEST_F(JobStoreTest, AnUpdateKeepsTheStoredEnvironment) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  JobRecord record = PendingRecord(1, 1);
  record.request.env = {{"BIG", std::string(100 << 10, 'x')}, {"QUOTE", "a\"b\\c"}};
  JobId id = Must(store->Insert(record));
  std::string bytes_before = QueryOne(db_path(), "SELECT length(CAST(record AS BLOB)) FROM jobs");

  JobRecord changed = Must(store->Get(id, /*with_env=*/false));
  changed.state = JobState::kRunning;
  changed.start_ms = 42;
  ASSERT_TRUE(store->Update(changed).ok());
  JobRecord got = Must(store->Get(id));
  EXPECT_EQ(got.request.env, record.request.env);
  EXPECT_EQ(got.state, JobState::kRunning);
  EXPECT_EQ(got.start_ms, 42);

  changed.request.env = {{"OTHER", "1"}};  // not the stored one: not written
  changed.state = JobState::kCompleted;
  changed.end_ms = 43;
  ASSERT_TRUE(store->Update(changed).ok());
  got = Must(store->Get(id));
  EXPECT_EQ(got.request.env, record.request.env);
  EXPECT_EQ(got.state, JobState::kCompleted);
  EXPECT_GE(std::stoull(QueryOne(db_path(), "SELECT length(CAST(record AS BLOB)) FROM jobs")),
            std::stoull(bytes_before))
      << "the stored record still carries the environment's bytes";
}

TEST_F(JobStoreTest, HandEditedColumnIsReportedNotHidden) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  JobId id = Must(store->Insert(PendingRecord(1, 1)));
  ASSERT_TRUE(ExecSql(db_path(), "UPDATE jobs SET state = 'running'").ok());
  Result<JobRecord> got = store->Get(id);
  EXPECT_EQ(got.status().code(), Code::kInternal);
  EXPECT_THAT(got.status().message(), HasSubstr("state"));
  EXPECT_EQ(store->List({}).status().code(), Code::kInternal);
}

TEST_F(JobStoreTest, DamagedJsonIsReported) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  JobId id = Must(store->Insert(PendingRecord(1, 1)));
  ASSERT_TRUE(ExecSql(db_path(), "UPDATE jobs SET record = '{not json'").ok());
  EXPECT_EQ(store->Get(id).status().code(), Code::kInternal);
}

TEST_F(JobStoreTest, SecondConnectionSeesCommittedWrites) {
  auto writer = OpenStore();
  ASSERT_NE(writer, nullptr);
  auto reader = OpenStore();
  ASSERT_NE(reader, nullptr);
  JobId id = Must(writer->Insert(FullRecord()));
  Result<JobRecord> got = reader->Get(id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->user, "alice");
}

// What `sqlite3 pinpoint.db ".backup copy.db"` does (docs/store.md), while the store is open.
TEST_F(JobStoreTest, OnlineBackupIsAUsableStore) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  JobId id = Must(store->Insert(FullRecord()));
  ASSERT_TRUE(store->AppendEvent({id, 1, "start", ""}).ok());

  std::string copy_path = (dir_ / "copy.db").string();
  sqlite3* source = nullptr;
  sqlite3* copy = nullptr;
  ASSERT_EQ(sqlite3_open(db_path().c_str(), &source), SQLITE_OK);
  ASSERT_EQ(sqlite3_open(copy_path.c_str(), &copy), SQLITE_OK);
  sqlite3_backup* backup = sqlite3_backup_init(copy, "main", source, "main");
  ASSERT_NE(backup, nullptr);
  EXPECT_EQ(sqlite3_backup_step(backup, -1), SQLITE_DONE);
  EXPECT_EQ(sqlite3_backup_finish(backup), SQLITE_OK);
  sqlite3_close(copy);
  sqlite3_close(source);

  ASSERT_TRUE(store->Insert(PendingRecord(1, 2)).ok());  // the original goes on
  Result<std::unique_ptr<JobStore>> restored = JobStore::Open(copy_path);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(Must((*restored)->Get(id)), Must(store->Get(id)));
  EXPECT_EQ(Must((*restored)->Events(id)).size(), 2u);
  EXPECT_EQ(Must((*restored)->List({})).size(), 1u);
}

TEST_F(JobStoreTest, IdempotencyKeyFindsTheFirstJobAndCannotStoreASecond) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  IdempotencyKey key{1000, "cli-0123456789abcdef"};
  EXPECT_FALSE(Must(store->FindByIdempotencyKey(key)).has_value());
  JobId first = Must(store->Insert(PendingRecord(1000, 1), key));
  EXPECT_EQ(Must(store->FindByIdempotencyKey(key))->id, first);

  Result<JobId> again = store->Insert(PendingRecord(1000, 2), key);
  EXPECT_EQ(again.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(Must(store->List({})).size(), 1u);
  EXPECT_EQ(QueryOne(db_path(), "SELECT count(*) FROM job_events"), "1");
  // The key is the store's, not part of the job's record.
  EXPECT_THAT(QueryOne(db_path(), "SELECT record FROM jobs"), Not(HasSubstr(key.key)));
}

TEST_F(JobStoreTest, IdempotencyKeyIsScopedToTheSubmittingUid) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  JobId alice = Must(store->Insert(PendingRecord(1000, 1), IdempotencyKey{1000, "k"}));
  EXPECT_FALSE(Must(store->FindByIdempotencyKey({1001, "k"})).has_value());
  JobId bob = Must(store->Insert(PendingRecord(1001, 2), IdempotencyKey{1001, "k"}));
  EXPECT_NE(alice, bob);
  EXPECT_EQ(Must(store->FindByIdempotencyKey({1000, "k"}))->uid, 1000u);
  EXPECT_EQ(Must(store->FindByIdempotencyKey({1001, "k"}))->uid, 1001u);
  // Jobs without a key never collide.
  EXPECT_TRUE(store->Insert(PendingRecord(1000, 3)).ok());
  EXPECT_TRUE(store->Insert(PendingRecord(1000, 4)).ok());
}

TEST_F(JobStoreTest, IdempotencyKeySurvivesReopen) {
  JobId first = 0;
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    first = Must(store->Insert(PendingRecord(1000, 1), IdempotencyKey{1000, "retry"}));
  }
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Must(store->FindByIdempotencyKey({1000, "retry"}))->id, first);
  EXPECT_EQ(store->Insert(PendingRecord(1000, 2), IdempotencyKey{1000, "retry"}).status().code(),
            Code::kFailedPrecondition);
}

TEST_F(JobStoreTest, UnwritableDirectoryIsIo) {
  Result<std::unique_ptr<JobStore>> store = JobStore::Open((dir_ / "no/such/dir/x.db").string());
  EXPECT_EQ(store.status().code(), Code::kIo);
}

}  // namespace
}  // namespace pinpoint::store

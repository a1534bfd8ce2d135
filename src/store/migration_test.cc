#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "store/job_row.h"
#include "store/job_store.h"
#include "store/schema.h"
#include "store/store_test_util.h"

namespace pinpoint::store {
namespace {

using ::testing::AllOf;
using testing::ExecSql;
using testing::FullRecord;
using ::testing::HasSubstr;
using testing::Must;
using ::testing::Not;
using testing::PendingRecord;
using testing::QueryOne;

class MigrationTest : public testing::StoreTest {
 protected:
  // Builds a version 1 file as pinpoint at version 1 left it: WAL mode, the v1 step only, and
  // `records` stored with ids 1, 2, ...
  void WriteV1File(std::vector<JobRecord>* records) {
    Result<Db> db = Db::Open(db_path());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    ASSERT_EQ(Must(db->QueryText("PRAGMA journal_mode = WAL")), "wal");
    ASSERT_TRUE(MigrateTo(&*db, 1).ok());
    for (size_t i = 0; i < records->size(); ++i) {
      JobRecord& r = (*records)[i];
      r.id = static_cast<JobId>(i) + 1;
      Result<Statement> stmt = db->Prepare(
          "INSERT INTO jobs (uid, user, state, reason, priority, submit_ms, start_ms, end_ms, "
          "record, id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
      ASSERT_TRUE(stmt.ok());
      BindJobColumns(&*stmt, r, Must(EncodeRecord(r)));
      stmt->Bind(10, r.id);
      ASSERT_TRUE(stmt->Run().ok());
    }
  }

  std::string ReadFile() const {
    std::ifstream in(db_path(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void WriteFile(const std::string& bytes) const {
    std::ofstream(db_path(), std::ios::binary) << bytes;
  }
  bool Exists(const std::string& suffix) const {
    return std::filesystem::exists(db_path() + suffix);
  }
};

TEST_F(MigrationTest, StepsLeadToEachVersionInOrder) {
  ASSERT_EQ(Migrations().size(), static_cast<size_t>(kCurrentSchemaVersion));
  for (size_t i = 0; i < Migrations().size(); ++i) {
    EXPECT_EQ(Migrations()[i].to_version, static_cast<int>(i) + 1);
  }
}

TEST_F(MigrationTest, NewFileCarriesApplicationId) {
  ASSERT_TRUE(JobStore::Open(db_path()).ok());
  EXPECT_EQ(QueryOne(db_path(), "PRAGMA application_id"), std::to_string(kApplicationId));
}

TEST_F(MigrationTest, V1StepBuildsOnlyTheJobsTable) {
  std::vector<JobRecord> none;
  WriteV1File(&none);
  EXPECT_EQ(QueryOne(db_path(), "PRAGMA user_version"), "1");
  EXPECT_EQ(QueryOne(db_path(),
                     "SELECT group_concat(name, ',') FROM (SELECT name FROM "
                     "sqlite_master WHERE type IN ('table', 'index') ORDER BY name)"),
            "jobs,jobs_by_state,sqlite_sequence");
}

TEST_F(MigrationTest, V1FileMigratesToCurrentWithRowsIntact) {
  std::vector<JobRecord> records = {FullRecord(), PendingRecord(1000, 111),
                                    PendingRecord(2000, 222)};
  WriteV1File(&records);

  Result<std::unique_ptr<JobStore>> store = JobStore::Open(db_path());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->SchemaVersion(), JobStore::kCurrentVersion);
  EXPECT_EQ(QueryOne(db_path(), "PRAGMA user_version"), std::to_string(JobStore::kCurrentVersion));
  for (const JobRecord& r : records) {
    Result<JobRecord> got = (*store)->Get(r.id);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, r);
    // Jobs from before history began still start with a submit event.
    Result<std::vector<JobEvent>> events = (*store)->Events(r.id);
    ASSERT_TRUE(events.ok());
    ASSERT_EQ(events->size(), 1u);
    EXPECT_EQ((*events)[0].kind, kSubmitEventKind);
    EXPECT_EQ((*events)[0].time_ms, r.submit_ms);
  }
  ASSERT_TRUE((*store)->AppendEvent({2, 333, "start", "after migration"}).ok());
  EXPECT_EQ(Must((*store)->Events(2)).size(), 2u);
  EXPECT_EQ(Must((*store)->Insert(PendingRecord(3, 444))), 4);
}

TEST_F(MigrationTest, V2FileGainsIdempotencyKeysAndKeepsItsJobsKeyless) {
  std::vector<JobRecord> records = {PendingRecord(1000, 111), PendingRecord(1000, 222)};
  WriteV1File(&records);
  {
    Result<Db> db = Db::Open(db_path());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(MigrateTo(&*db, 2).ok());
  }
  ASSERT_EQ(QueryOne(db_path(), "PRAGMA user_version"), "2");

  std::unique_ptr<JobStore> store = Must(JobStore::Open(db_path()));
  EXPECT_EQ(QueryOne(db_path(), "PRAGMA user_version"), std::to_string(JobStore::kCurrentVersion));
  EXPECT_EQ(QueryOne(db_path(), "SELECT count(*) FROM jobs WHERE idempotency_key IS NULL"), "2");
  EXPECT_EQ(QueryOne(db_path(),
                     "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
                     "name = 'jobs_by_idempotency_key'"),
            "1");
  for (const JobRecord& r : records) EXPECT_EQ(Must(store->Get(r.id)), r);
  // Keyless old jobs do not collide with each other or with a key.
  IdempotencyKey key{1000, "retry-1"};
  JobId id = Must(store->Insert(PendingRecord(1000, 333), key));
  EXPECT_EQ(id, 3);
  EXPECT_EQ(Must(store->FindByIdempotencyKey(key))->id, id);
  EXPECT_EQ(store->Insert(PendingRecord(1000, 444), key).status().code(),
            Code::kFailedPrecondition);
}

TEST_F(MigrationTest, V3FileGainsTheListingIndexAndListsAsBefore) {
  std::vector<JobRecord> records = {PendingRecord(1000, 111), PendingRecord(2000, 222),
                                    PendingRecord(1000, 333)};
  WriteV1File(&records);
  {
    Result<Db> db = Db::Open(db_path());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(MigrateTo(&*db, 3).ok());
  }
  std::unique_ptr<JobStore> store = Must(JobStore::Open(db_path()));
  EXPECT_EQ(QueryOne(db_path(), "PRAGMA user_version"), std::to_string(JobStore::kCurrentVersion));
  EXPECT_EQ(QueryOne(db_path(),
                     "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
                     "name = 'jobs_listing'"),
            "1");
  ListFilter mine;
  mine.uid = 1000;
  EXPECT_EQ(Must(store->ListIds(mine)), (std::vector<JobId>{1, 3}));
  mine.limit = 1;
  EXPECT_EQ(Must(store->ListIds(mine)), (std::vector<JobId>{3}));
  mine.offset = 1;
  EXPECT_EQ(Must(store->List(mine)).at(0), records[0]);
}

TEST_F(MigrationTest, V4FileCountsWhatEachUsersEndedJobsTake) {
  JobRecord ended = PendingRecord(1000, 111);
  ended.state = JobState::kCompleted;
  ended.end_ms = 5;
  std::vector<JobRecord> records = {ended, PendingRecord(1000, 222), ended,
                                    PendingRecord(2000, 333)};
  WriteV1File(&records);
  {
    Result<Db> db = Db::Open(db_path());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(MigrateTo(&*db, 4).ok());
  }
  std::string stored =
      QueryOne(db_path(), "SELECT length(CAST(record AS BLOB)) FROM jobs WHERE id = 1");
  std::unique_ptr<JobStore> store = Must(JobStore::Open(db_path()));
  EndedBytes of_1000 = Must(store->EndedBytesOf(1000));
  EXPECT_EQ(of_1000.jobs, 2);
  EXPECT_EQ(of_1000.bytes, 2 * std::stoull(stored));
  EXPECT_EQ(Must(store->EndedBytesOf(2000)).jobs, 0);
  EXPECT_EQ(Must(store->OldestEnded(1000, 10)), (std::vector<JobId>{1, 3}));
}

TEST_F(MigrationTest, ReopeningACurrentFileChangesNothing) {
  std::vector<JobRecord> records = {PendingRecord(1, 1)};
  WriteV1File(&records);
  ASSERT_TRUE(JobStore::Open(db_path()).ok());
  ASSERT_TRUE(JobStore::Open(db_path()).ok());
  EXPECT_EQ(QueryOne(db_path(), "SELECT count(*) FROM job_events"), "1");
}

TEST_F(MigrationTest, FailedStepLeavesFileAtItsVersion) {
  std::vector<JobRecord> records = {PendingRecord(1, 1)};
  WriteV1File(&records);
  // A table in the way makes the v2 step fail part way through.
  ASSERT_TRUE(ExecSql(db_path(), "CREATE INDEX job_events_by_job ON jobs(uid)").ok());

  Result<std::unique_ptr<JobStore>> store = JobStore::Open(db_path());
  EXPECT_EQ(store.status().code(), Code::kIo);
  EXPECT_THAT(store.status().message(), HasSubstr("schema version 2"));
  EXPECT_EQ(QueryOne(db_path(), "PRAGMA user_version"), "1");
  EXPECT_EQ(QueryOne(db_path(), "SELECT count(*) FROM sqlite_master WHERE name = 'job_events'"),
            "0");
}

TEST_F(MigrationTest, NewerVersionIsRefusedAndLeftAlone) {
  ASSERT_TRUE(JobStore::Open(db_path()).ok());
  std::string newer = std::to_string(kCurrentSchemaVersion + 1);
  ASSERT_TRUE(ExecSql(db_path(), ("PRAGMA user_version = " + newer).c_str()).ok());

  Result<std::unique_ptr<JobStore>> store = JobStore::Open(db_path());
  EXPECT_EQ(store.status().code(), Code::kFailedPrecondition);
  EXPECT_THAT(
      store.status().message(),
      AllOf(HasSubstr("version " + newer), HasSubstr("newer"),
            HasSubstr("1 to " + std::to_string(kCurrentSchemaVersion)), Not(HasSubstr("\n"))));
  EXPECT_EQ(QueryOne(db_path(), "PRAGMA user_version"), newer);
}

TEST_F(MigrationTest, OlderThanOldestSupportedIsRefused) {
  ASSERT_TRUE(JobStore::Open(db_path()).ok());
  ASSERT_TRUE(ExecSql(db_path(), "PRAGMA user_version = -1").ok());
  Result<std::unique_ptr<JobStore>> store = JobStore::Open(db_path());
  EXPECT_EQ(store.status().code(), Code::kFailedPrecondition);
  EXPECT_THAT(
      store.status().message(),
      AllOf(HasSubstr("older"), HasSubstr("1 to " + std::to_string(kCurrentSchemaVersion))));
}

TEST_F(MigrationTest, GarbageFileIsRefusedAndLeftAlone) {
  for (const std::string& garbage :
       {std::string("hello"), std::string(4096, 'x'), std::string("SQLite format 2\0junk", 20)}) {
    WriteFile(garbage);
    Result<std::unique_ptr<JobStore>> store = JobStore::Open(db_path());
    EXPECT_EQ(store.status().code(), Code::kFailedPrecondition);
    EXPECT_THAT(store.status().message(), HasSubstr("not a SQLite database"));
    EXPECT_EQ(ReadFile(), garbage);
    EXPECT_FALSE(Exists("-wal"));
  }
}

TEST_F(MigrationTest, OtherApplicationsDatabaseIsRefused) {
  ASSERT_TRUE(ExecSql(db_path(), "CREATE TABLE notes (text TEXT)").ok());
  Result<std::unique_ptr<JobStore>> store = JobStore::Open(db_path());
  EXPECT_EQ(store.status().code(), Code::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("not a pinpoint job store"));

  ASSERT_TRUE(ExecSql(db_path(), "PRAGMA user_version = 2").ok());
  store = JobStore::Open(db_path());
  EXPECT_EQ(store.status().code(), Code::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("application_id"));
}

TEST_F(MigrationTest, EmptyFileIsANewStore) {
  WriteFile("");
  Result<std::unique_ptr<JobStore>> store = JobStore::Open(db_path());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->SchemaVersion(), JobStore::kCurrentVersion);
}

// Version 6 keeps a job array's pending tasks as one record, its rest: the unstarted tasks of an
// older store that differ only in their index are folded into the first one's record; the
// others (a started task, one held apart) stay, and so does an array with a purged task.
TEST_F(MigrationTest, V6FoldsEachArraysPendingTasksIntoOneRest) {
  std::vector<JobRecord> records;
  records.push_back(PendingRecord(1000, 1));  // id 1: no array
  for (int index = 1; index <= 5; ++index) {  // ids 2..6: array 2, indices 1..5
    JobRecord task = PendingRecord(1000, 2);
    task.array = {{2, index, 5, 1, 5, 2}};
    records.push_back(task);
  }
  records[1].state = JobState::kRunning;  // task 1 started
  records[1].start_ms = 3;
  records[3].reason = Reason::kArrayLimit;   // a wait is no difference
  records[5].hold = Hold::kUser;             // task 5 held apart
  for (int index = 0; index < 2; ++index) {  // ids 7..8: array 7 of 3 tasks, the third purged
    JobRecord task = PendingRecord(1000, 4);
    task.array = {{7, index, 3, 0, 2, 0}};
    records.push_back(task);
  }
  WriteV1File(&records);
  auto store = JobStore::Open(db_path());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  JobRecord rest = Must((*store)->Get(3));
  EXPECT_EQ(rest.array.pending, "2-4");
  EXPECT_EQ(rest.array.indices, "1-5");
  EXPECT_EQ(rest.array.index, 2);
  for (JobId gone : {4, 5}) {
    EXPECT_EQ((*store)->Get(gone).status().code(), Code::kNotFound) << gone;
    EXPECT_EQ(QueryOne(db_path(),
                       "SELECT count(*) FROM job_events WHERE job_id = " + std::to_string(gone)),
              "0");
  }
  EXPECT_EQ(Must((*store)->Get(2)).state, JobState::kRunning);
  EXPECT_TRUE(Must((*store)->Get(6)).array.pending.empty()) << "held apart: a task of its own";
  EXPECT_EQ(Must((*store)->FindArrayRest(5))->id, 3);
  for (JobId kept : {7, 8}) EXPECT_TRUE(Must((*store)->Get(kept)).array.pending.empty()) << kept;
  EXPECT_EQ(QueryOne(db_path(), "SELECT count(*) FROM jobs"), "6");
}

TEST_F(MigrationTest, V7AddsAnEmptyTableOfMigChanges) {
  {
    Result<Db> db = Db::Open(db_path());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(MigrateTo(&*db, 6).ok());
  }
  Result<std::unique_ptr<JobStore>> store = JobStore::Open(db_path());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(QueryOne(db_path(), "PRAGMA user_version"), std::to_string(kCurrentSchemaVersion));
  EXPECT_TRUE(Must((*store)->RecentMigChanges(10)).empty());
  MigChange made;
  made.action = partition::MigAction::kCreate;
  made.profile = "1g.10gb";
  ASSERT_TRUE((*store)->AppendMigChanges({made}).ok());
  EXPECT_EQ(Must((*store)->RecentMigChanges(10)).size(), 1u);
}

TEST_F(MigrationTest, V8AddsAnEmptyTableOfGpuHolds) {
  {
    Result<Db> db = Db::Open(db_path());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(MigrateTo(&*db, 7).ok());
  }
  Result<std::unique_ptr<JobStore>> store = JobStore::Open(db_path());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(QueryOne(db_path(), "PRAGMA user_version"), std::to_string(kCurrentSchemaVersion));
  EXPECT_TRUE(Must((*store)->GpuHolds()).empty());
  ASSERT_TRUE((*store)->PutGpuHold(17, 1000).ok());
  ASSERT_TRUE((*store)->PutGpuHold(17, 2000).ok()) << "a second put keeps the first time";
  ASSERT_TRUE((*store)->PutGpuHold(9, 3000).ok());
  using Holds = std::vector<std::pair<JobId, int64_t>>;
  EXPECT_EQ(Must((*store)->GpuHolds()), (Holds{{9, 3000}, {17, 1000}}));
  ASSERT_TRUE((*store)->DeleteGpuHold(9).ok());
  ASSERT_TRUE((*store)->DeleteGpuHold(9).ok()) << "deleting what is gone is no error";
  EXPECT_EQ(Must((*store)->GpuHolds()), (Holds{{17, 1000}}));
}

TEST_F(MigrationTest, V9MovesEachEnvironmentToARowOfItsOwnAndCountsTheSameBytes) {
  JobRecord ended = PendingRecord(1000, 111);
  ended.request.env = {{"BIG", std::string(5000, 'x')}, {"PATH", "/bin"}};
  ended.state = JobState::kCompleted;
  ended.end_ms = 5;
  JobRecord pending = PendingRecord(1000, 222);
  pending.request.env = {{"HOME", "/home/a"}};
  JobRecord bare = PendingRecord(2000, 333);
  std::vector<JobRecord> records = {ended, pending, bare};
  WriteV1File(&records);
  {
    Result<Db> db = Db::Open(db_path());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(MigrateTo(&*db, 8).ok());
  }
  uint64_t v8_bytes =
      std::stoull(QueryOne(db_path(), "SELECT ended_bytes FROM user_bytes WHERE uid = 1000"));
  std::unique_ptr<JobStore> store = Must(JobStore::Open(db_path()));
  for (const JobRecord& r : records) EXPECT_EQ(Must(store->Get(r.id)), r);
  EXPECT_TRUE(Must(store->Get(1, /*with_env=*/false)).request.env.empty());
  EXPECT_EQ(QueryOne(db_path(), "SELECT count(*) FROM envs"), "2")
      << "the job without one has none";
  EXPECT_EQ(
      QueryOne(db_path(), "SELECT json_extract(record, '$.request.env') FROM jobs WHERE id = 1"),
      "{}");
  // The ended job counts what it took before, its record and its environment, and the 2 bytes
  // of the `{}` its record keeps in place of the environment.
  std::string record =
      QueryOne(db_path(), "SELECT length(CAST(record AS BLOB)) FROM jobs WHERE id = 1");
  std::string env = QueryOne(db_path(), "SELECT length(CAST(text AS BLOB)) FROM envs WHERE id = 1");
  EXPECT_EQ(Must(store->EndedBytesOf(1000)).bytes, std::stoull(record) + std::stoull(env));
  EXPECT_EQ(Must(store->EndedBytesOf(1000)).bytes, v8_bytes + 2);
  EXPECT_EQ(Must(store->DeleteEnded({1})), 1);
  EXPECT_EQ(QueryOne(db_path(), "SELECT count(*) FROM envs"), "1")
      << "an environment goes with its job";
  EXPECT_EQ(Must(store->EndedBytesOf(1000)).bytes, 0u);
}

TEST_F(MigrationTest, MigrateToRejectsUnknownTargetsAndGoingBack) {
  Result<Db> db = Db::Open(db_path());
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(MigrateTo(&*db, kCurrentSchemaVersion + 1).code(), Code::kInvalidArgument);
  ASSERT_TRUE(MigrateTo(&*db, 2).ok());
  EXPECT_EQ(MigrateTo(&*db, 1).code(), Code::kFailedPrecondition);
}

}  // namespace
}  // namespace pinpoint::store

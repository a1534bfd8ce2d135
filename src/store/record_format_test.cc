// The stored record's formats (record_codec.h): a store that an earlier pinpoint wrote, frozen
// as a fixture, must read back job for job; and the encoding is the store's own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <ostream>

#include "store/job_store.h"
#include "store/record_codec.h"
#include "store/schema.h"
#include "store/store_test_util.h"

namespace pinpoint::store {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::Must;
using testing::QueryOne;

// The jobs below name only the fields that differ from JobRecord's defaults.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kMax64 = 18446744073709551615ull;

// The jobs that testdata/record_format1_schema3.sql holds, ids 1 to 4, as the pinpoint that wrote
// it had them. Frozen with the fixture: never edit these.
// A few fields a line, grouped as in record_codec.cc.
// clang-format off
std::vector<JobRecord> Format1Jobs() {
  JobRecord failed{
      .id = 1,
      .request = {.name = "train resnet",
                  .argv = {"python3", "train.py", "--epochs=3", "with space", "",
                           "quote\"back\\slash"},
                  .cwd = "/home/alice/work",
                  .env = {{"PATH", "/usr/bin:/bin"}, {"TOKEN", "s3cr=t"}, {"EMPTY", ""},
                          {"UNICODE", "gr\xC3\xBC\xC3\x9F"}, {"MULTILINE", "a\nb\tc"}},
                  .gpus = 3, .gpu_mem_bytes = 8 * kGiB, .gpu_share_pct = 40,
                  .cpus = 6, .mem_bytes = 64 * kGiB, .priority = -7,
                  .as_user = "bob", .devices = {3, 0, 5}},
      .uid = 1001, .gid = 1002, .user = "alice",
      .state = JobState::kFailed, .reason = Reason::kGpuMemExceeded,
      .detail = "used \"9 GiB\" of 8 GiB",
      .submit_ms = 1700000000123, .start_ms = 1700000001456, .end_ms = 1700000099789,
      .exit_code = 137, .term_signal = 9,
      .allocations = {{0, "GPU-aaaa", 8 * kGiB, 40, SharingMode::kMps},
                      {3, "MIG-bbbb", 0, 0, SharingMode::kExclusive},
                      {5, "GPU-cccc", 8 * kGiB, 40, SharingMode::kTimeslice}},
      .pid = 424242, .pid_start_ticks = kMax64,
      .cancel_requested = true, .cancelled_by = "root",
      .fault_suspect = true, .stop_reason = Reason::kGpuMemExceeded,
      .stop_detail = "device memory 9 GiB over its 8 GiB budget",
      .usage = {.samples = 1234, .gpu_mem_now_bytes = 0, .gpu_mem_peak_bytes = 9 * kGiB,
                .energy_mj = kMax64, .util_pct_mean = 73, .final = true}};
  JobRecord pending{
      .id = 2, .request = {.argv = {"true"}, .cwd = "/"},
      .uid = 1000, .user = "user1000", .submit_ms = 1700000200000};
  JobRecord running{
      .id = 3,
      .request = {.name = "bench", .argv = {"/usr/bin/nbody", "-benchmark"}, .cwd = "/tmp",
                  .gpus = 1, .gpu_mem_bytes = 4 * kGiB, .priority = 5},
      .uid = 0, .user = "root", .state = JobState::kRunning,
      .submit_ms = 1700000300000, .start_ms = 1700000300500,
      .allocations = {{1, "GPU-dddd", 4 * kGiB, 0, SharingMode::kMps}},
      .pid = 77, .pid_start_ticks = 5555,
      .usage = {.samples = 3, .gpu_mem_now_bytes = 1 * kGiB, .gpu_mem_peak_bytes = 2 * kGiB,
                .energy_mj = 42}};
  JobRecord cancelled{
      .id = 4, .request = {.argv = {"true"}, .cwd = "/"},
      .uid = 1001, .user = "alice",
      .state = JobState::kCancelled, .reason = Reason::kCancelled, .detail = "cancelled by alice",
      .submit_ms = 1700000400000, .end_ms = 1700000400100,
      .cancel_requested = true, .cancelled_by = "alice"};
  return {failed, pending, running, cancelled};
}
// clang-format on

class RecordFormatTest : public testing::StoreTest {
 protected:
  // Builds db_path() as the earlier pinpoint left it: the schema at version 3, the fixture's rows.
  void LoadFormat1Fixture() {
    std::ifstream in(std::string(PINPOINT_SOURCE_DIR) +
                     "/src/store/testdata/record_format1_schema3.sql");
    ASSERT_TRUE(in.good());
    std::string rows(std::istreambuf_iterator<char>(in), {});
    Result<Db> db = Db::Open(db_path());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(MigrateTo(&*db, 3).ok());
    Status loaded = db->Exec(rows.c_str());
    ASSERT_TRUE(loaded.ok()) << loaded.ToString();
  }
};

TEST_F(RecordFormatTest, StoreWrittenInFormat1ReadsBackJobForJob) {
  LoadFormat1Fixture();
  ASSERT_EQ(QueryOne(db_path(), "PRAGMA user_version"), "3");
  std::unique_ptr<JobStore> store = Must(JobStore::Open(db_path()));

  const std::vector<JobRecord> want = Format1Jobs();
  for (const JobRecord& job : want) EXPECT_EQ(Must(store->Get(job.id)), job);
  EXPECT_EQ(Must(store->List({})), want);
  EXPECT_EQ(Must(store->List({.states = {JobState::kRunning}})), std::vector<JobRecord>{want[2]});
  EXPECT_EQ(Must(store->Count({.states = {JobState::kPending}, .uid = 1000})), 1);
  EXPECT_EQ(Must(store->FindByIdempotencyKey({1000, "retry-7"})), want[1]);
  std::vector<JobEvent> events = Must(store->Events(1));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2].kind, "end");
  EXPECT_EQ(events[2].detail, "failed (gpu-mem-exceeded)");

  // The store goes on from there: a job updated and a new one, both read back whole.
  JobRecord done = want[2];
  done.state = JobState::kCompleted;
  done.reason = Reason::kExitedZero;
  done.exit_code = 0;
  done.end_ms = 1700000309999;
  ASSERT_TRUE(store->Update(done).ok());
  EXPECT_EQ(Must(store->Get(3)), done);
  EXPECT_EQ(QueryOne(db_path(), "SELECT state FROM jobs WHERE id = 3"), "completed");
  JobRecord next = want[0];
  next.id = Must(store->Insert(next));
  EXPECT_EQ(next.id, 5);
  EXPECT_EQ(Must(store->Get(5)), next);
}

// While format 1 is the current one, what this pinpoint writes is what the earlier one wrote,
// byte for byte: a file it touched still opens in that release.
TEST_F(RecordFormatTest, Format1IsWrittenAsTheEarlierPinpointWroteIt) {
  static_assert(kCurrentRecordFormat == 1, "a new format changes this test: see docs/store.md");
  LoadFormat1Fixture();
  for (const JobRecord& job : Format1Jobs()) {
    EXPECT_EQ(Must(EncodeRecord(job)),
              QueryOne(db_path(), "SELECT record FROM jobs WHERE id = " + std::to_string(job.id)));
  }
}

TEST_F(RecordFormatTest, RowInANewerFormatIsReportedNotGuessed) {
  std::unique_ptr<JobStore> store = Must(JobStore::Open(db_path()));
  JobId id = Must(store->Insert(testing::PendingRecord(1, 1)));
  ASSERT_TRUE(
      testing::ExecSql(db_path(), "UPDATE jobs SET record = json_set(record, '$.record_format', 2)")
          .ok());
  Result<JobRecord> got = store->Get(id);
  EXPECT_EQ(got.status().code(), Code::kInternal);
  EXPECT_THAT(got.status().message(),
              AllOf(HasSubstr("job " + std::to_string(id)), HasSubstr("record_format is 2")));
}

TEST(RecordCodecTest, RoundTripsEveryJob) {
  std::vector<JobRecord> jobs = Format1Jobs();
  jobs.push_back(JobRecord{});
  jobs.push_back(testing::FullRecord());
  for (const JobRecord& job : jobs) {
    EXPECT_EQ(Must(DecodeRecord(Must(EncodeRecord(job)))), job);
  }
}

TEST(RecordCodecTest, ALeaseRoundTripsAndAJobLeavesItsLeaseFieldsOut) {
  JobRecord lease = testing::FullRecord();
  lease.kind = JobKind::kLease;
  lease.lease_cgroup = "pids:/libpod_parent/libpod-f5";
  std::string text = Must(EncodeRecord(lease));
  EXPECT_THAT(text, AllOf(HasSubstr(R"("kind":"lease")"),
                          HasSubstr(R"("lease_cgroup":"pids:/libpod_parent/libpod-f5")")));
  EXPECT_EQ(Must(DecodeRecord(text)), lease);
  std::string job = Must(EncodeRecord(testing::FullRecord()));
  EXPECT_THAT(job, ::testing::Not(HasSubstr("kind")));
  EXPECT_THAT(job, ::testing::Not(HasSubstr("lease_cgroup")));
  EXPECT_EQ(Must(DecodeRecord(R"({"kind": "lease"})")).kind, JobKind::kLease);
  EXPECT_EQ(DecodeRecord(R"({"kind": "pod"})").status().code(), Code::kInvalidArgument);
}

TEST(RecordCodecTest, TimeLimitAndDependenciesAreStoredOnlyWhenSet) {
  JobRecord job = testing::FullRecord();
  std::string text = Must(EncodeRecord(job));
  EXPECT_THAT(text, AllOf(HasSubstr(R"("time_limit_s":5400)"), HasSubstr(R"("after":[3])"),
                          HasSubstr(R"("afterok":[4,5])")));
  EXPECT_EQ(Must(DecodeRecord(text)), job);
  job.request.time_limit_s = 0;
  job.request.after.clear();
  job.request.afterok.clear();
  text = Must(EncodeRecord(job));
  for (const char* key : {"time_limit_s", "after"})
    EXPECT_THAT(text, ::testing::Not(HasSubstr(key)));
  EXPECT_EQ(DecodeRecord(R"({"request": {"afterok": [1, "2"]}})").status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(DecodeRecord(R"({"request": {"time_limit_s": 1.5}})").status().code(),
            Code::kInvalidArgument);
}

TEST(RecordCodecTest, ASignalAndRequeueAreStoredOnlyWhenSet) {
  JobRecord job = testing::FullRecord();
  for (const char* key : {R"("signal":)", R"("signal_)", R"("requeue")"})
    EXPECT_THAT(Must(EncodeRecord(job)), ::testing::Not(HasSubstr(key)))
        << "a job without one: as before";
  job.request.signal = 10;
  job.request.signal_before_s = 120;
  job.request.signal_leader_only = true;
  job.request.requeue = true;
  std::string text = Must(EncodeRecord(job));
  EXPECT_THAT(text,
              AllOf(HasSubstr(R"("signal":10)"), HasSubstr(R"("signal_before_s":120)"),
                    HasSubstr(R"("signal_leader_only":true)"), HasSubstr(R"("requeue":true)")));
  EXPECT_EQ(Must(DecodeRecord(text)), job);
}

TEST(RecordCodecTest, AMigProfileIsStoredOnlyWhenSet) {
  JobRecord job = testing::FullRecord();
  EXPECT_THAT(Must(EncodeRecord(job)), ::testing::Not(HasSubstr("mig_profile")))
      << "a job without one: as before";
  job.request.mig_profile = "3g.40gb";
  std::string text = Must(EncodeRecord(job));
  EXPECT_THAT(text, HasSubstr(R"("mig_profile":"3g.40gb")"));
  EXPECT_EQ(Must(DecodeRecord(text)), job);
}

TEST(RecordCodecTest, AnArrayTaskRoundTripsAndAJobLeavesTheArrayOut) {
  JobRecord task = testing::FullRecord();
  task.array = {{12, 3, 100, 1, 100, 5}};
  std::string text = Must(EncodeRecord(task));
  EXPECT_THAT(
      text,
      HasSubstr(
          R"("array":{"count":100,"id":12,"index":3,"limit":5,"max_index":100,"min_index":1})"));
  EXPECT_EQ(Must(DecodeRecord(text)), task);
  EXPECT_THAT(Must(EncodeRecord(testing::FullRecord())), ::testing::Not(HasSubstr("array")));
  EXPECT_THAT(DecodeRecord(R"({"array": {"index": "3"}})").status().message(),
              HasSubstr("record.array.index must be an integer"));
}

TEST(RecordCodecTest, WhatWasReadBackRoundTripsAndAJobWithoutItIsStoredAsBefore) {
  EXPECT_THAT(Must(EncodeRecord(testing::FullRecord())), ::testing::Not(HasSubstr("readback")));
  JobRecord job = testing::FullRecord();
  job.readback.cpuset = "2-3";
  job.readback.cpu_max = "max 100000";
  job.readback.memory_max = "8589934592";
  job.readback.limits = {
      AppliedLimit{.resource = "gpu_mem",
                   .variable = "LIMIT",
                   .expected = "1",
                   .strength = LimitStrength::kDriver,
                   .what = "a limit",
                   .unobservable = "",
                   .given = "1"},
      AppliedLimit{
          .resource = "gpu_share", .expected = "all", .strength = LimitStrength::kHardware}};
  job.readback.env_read = true;
  job.readback.env = {{"CUDA_VISIBLE_DEVICES", "GPU-1"}, {"LIMIT", "1"}};
  job.readback.gpu_env_reads = 2;
  job.readback.gpu_env = {{"LIMIT", {"1", ""}}};
  job.readback.gpus_seen = {0, 1};
  job.readback.cpu_usec = 0;
  job.readback.mem_peak_bytes = 4096;
  std::string text = Must(EncodeRecord(job));
  EXPECT_THAT(text, AllOf(HasSubstr(R"("cpu_usec":0)"), HasSubstr(R"("gpus_seen":[0,1])")))
      << "0 CPU time is a value read, kept apart from -1 (not read)";
  EXPECT_EQ(Must(DecodeRecord(text)), job);
  EXPECT_THAT(DecodeRecord(R"({"readback": {"cpu_usec": "1"}})").status().message(),
              HasSubstr("record.readback.cpu_usec must be an integer"));
  EXPECT_THAT(
      DecodeRecord(R"({"readback": {"limits": [{"resource": "gpu_mem", "strength": "x"}]}})")
          .status()
          .message(),
      HasSubstr("record.readback.limits[0].strength is not a known limit strength"));
  // A record an earlier release wrote, with the three variables it kept: read without them.
  auto old = DecodeRecord(R"({"readback": {"env_read": true, "pinned_mem_limit": "0=3072M"}})");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_TRUE(old->readback.env_read);
}

// A reason the store has no word for would be written as one it cannot read back: the job's
// record would be lost at the next start.
// Every value the API has a word for has one in the store: a value added to an enum and to the
// API's codec but not to the store's tables would be written as "unknown" and lost.
TEST(RecordCodecTest, EveryValueTheApiNamesHasAStoredName) {
  for (int i = 0; i < 256; ++i) {
    if (std::string(SharingModeName(static_cast<SharingMode>(i))) != "unknown") {
      EXPECT_STRNE(StoredModeName(static_cast<SharingMode>(i)), "unknown") << "sharing mode " << i;
    }
    if (std::string(JobStateName(static_cast<JobState>(i))) != "unknown") {
      EXPECT_STRNE(StoredStateName(static_cast<JobState>(i)), "unknown") << "state " << i;
    }
    if (std::string(HoldName(static_cast<Hold>(i))) != "unknown") {
      EXPECT_STRNE(StoredHoldName(static_cast<Hold>(i)), "unknown") << "hold " << i;
    }
    if (std::string(JobKindName(static_cast<JobKind>(i))) != "unknown") {
      EXPECT_STRNE(StoredKindName(static_cast<JobKind>(i)), "unknown") << "kind " << i;
    }
    if (std::string(ReasonName(static_cast<Reason>(i))) != "unknown") {
      EXPECT_STRNE(StoredReasonName(static_cast<Reason>(i)), "unknown") << "reason " << i;
    }
  }
}

TEST(RecordCodecTest, AValueWithoutAStoredNameIsRefusedNotStoredAsUnknown) {
  JobRecord r;
  r.request.argv = {"true"};
  r.allocations.push_back(Allocation{0, "GPU-0", 1, 0, static_cast<SharingMode>(99)});
  Result<std::string> json = EncodeRecord(r);
  EXPECT_EQ(json.status().code(), Code::kInvalidArgument);
  EXPECT_NE(json.status().message().find("sharing mode 99 has no stored name"), std::string::npos)
      << json.status().message();
}

TEST(RecordCodecTest, EveryReasonRoundTripsAsAStopReasonToo) {
  for (int i = 0; i <= static_cast<int>(kLastReason); ++i) {
    JobRecord job = testing::FullRecord();
    job.reason = job.stop_reason = static_cast<Reason>(i);
    Result<JobRecord> back = DecodeRecord(Must(EncodeRecord(job)));
    ASSERT_TRUE(back.ok()) << i << ": " << back.status().ToString();
    EXPECT_EQ(back->reason, job.reason);
    EXPECT_EQ(back->stop_reason, job.reason);
    EXPECT_NE(std::string(StoredReasonName(job.reason)), "unknown") << i;
  }
  Result<JobRecord> unknown = DecodeRecord(R"({"id": 1, "reason": "no-such-reason"})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("reason"), std::string::npos)
      << unknown.status().message();
}

TEST(RecordCodecTest, MissingAndNullFieldsKeepTheirDefaults) {
  EXPECT_EQ(Must(DecodeRecord("{}")), JobRecord{});
  EXPECT_EQ(Must(DecodeRecord(R"({"exit_code": null, "request": null, "usage": {}})")),
            JobRecord{});
  JobRecord exited = Must(DecodeRecord(R"({"exit_code": 0, "term_signal": null})"));
  EXPECT_EQ(exited.exit_code, 0);
  EXPECT_EQ(exited.term_signal, std::nullopt);
}

TEST(RecordCodecTest, Format1MayNameItself) {
  EXPECT_EQ(Must(DecodeRecord(R"({"record_format": 1, "id": 7})")).id, 7);
}

TEST(RecordCodecTest, NewerFormatIsRefusedNotGuessed) {
  Result<JobRecord> got = DecodeRecord(R"({"record_format": 2, "id": 7})");
  EXPECT_EQ(got.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(got.status().message(), AllOf(HasSubstr("record_format"), HasSubstr("1 to 1")));
  EXPECT_EQ(DecodeRecord(R"({"record_format": "1"})").status().code(), Code::kInvalidArgument);
}

TEST(RecordCodecTest, BadFieldsAreNamed) {
  struct Case {
    const char* text;
    const char* names;
  };
  const Case cases[] = {
      {"{not json", "not valid JSON"},
      {"[]", "record must be a JSON object"},
      {R"({"state": "done"})", "record.state is not a known job state"},
      {R"({"state": 1})", "record.state must be a string"},
      {R"({"request": []})", "record.request must be a JSON object"},
      {R"({"request": {"argv": ["a", 1]}})", "record.request.argv[1] must be a string"},
      {R"({"request": {"env": {"A": 1}}})", "record.request.env[A] must be a string"},
      {R"({"request": {"devices": [0, 2147483648]}})", "record.request.devices[1] must be"},
      {R"({"allocations": {}})", "record.allocations must be an array"},
      {R"({"allocations": [{"device_index": "0"}]})", "record.allocations[0].device_index"},
      {R"({"usage": {"final": 1}})", "record.usage.final must be true or false"},
      {R"({"allocations": [{"mode": "shared"}]})",
       "record.allocations[0].mode is not a known allocation mode"},
      {R"({"uid": -1})", "record.uid must be an integer in range"},
      {R"({"uid": 4294967296})", "record.uid must be an integer in range"},
      {R"({"pid_start_ticks": 1.5})", "record.pid_start_ticks must be an integer"},
      {R"({"exit_code": true})", "record.exit_code must be an integer"},
  };
  for (const Case& c : cases) {
    Result<JobRecord> got = DecodeRecord(c.text);
    EXPECT_EQ(got.status().code(), Code::kInvalidArgument) << c.text;
    EXPECT_THAT(got.status().message(), HasSubstr(c.names)) << c.text;
  }
}

TEST(RecordCodecTest, TextThatIsNotUtf8IsRefused) {
  JobRecord job;
  job.request.env["BAD"] = "\xff\xfe";
  EXPECT_EQ(EncodeRecord(job).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace pinpoint::store

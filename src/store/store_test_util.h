// Helpers shared by the store's tests: a scratch directory per test and sample records.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <utility>

#include "common/job_record.h"
#include "pinpoint/job.h"
#include "store/job_store.h"
#include "store/record_codec.h"
#include "store/sqlite.h"

namespace pinpoint {

// Failures print a record in its stored form, not bytes.
inline void PrintTo(const JobRecord& record, std::ostream* out) {
  auto text = store::EncodeRecord(record);
  *out << (text.ok() ? *text : text.status().ToString());
}

}  // namespace pinpoint

namespace pinpoint::store::testing {

// The value of a result a test cannot go on without; an error ends the test binary, naming it.
template <typename T>
T Must(Result<T> result) {
  if (!result.ok()) {
    std::fprintf(stderr, "unexpected error: %s\n", result.status().ToString().c_str());
    std::abort();
  }
  return std::move(result).value();
}

// A fresh directory per test, removed afterwards; db_path() is a file name inside it.
class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "pinpoint_store_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string db_path() const { return (dir_ / "pinpoint.db").string(); }
  // The store at db_path(), opened (null, and a test failure, when it cannot be).
  std::unique_ptr<JobStore> OpenStore() {
    Result<std::unique_ptr<JobStore>> store = JobStore::Open(db_path());
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  std::filesystem::path dir_;
};

// A record with every field set to something other than its default.
inline JobRecord FullRecord() {
  JobRecord r;
  r.request.name = "train resnet";
  r.request.argv = {"python3", "train.py", "--epochs=3", "with space", ""};
  r.request.cwd = "/home/alice/work";
  r.request.env = {{"PATH", "/usr/bin:/bin"},
                   {"TOKEN", "s3cr=t"},
                   {"EMPTY", ""},
                   {"UNICODE", "gr\xC3\xBC\xC3\x9F"}};
  r.request.gpus = 2;
  r.request.gpu_mem_bytes = 8ull << 30;
  r.request.gpu_share_pct = 40;
  r.request.cpus = 6;
  r.request.mem_bytes = 64ull << 30;
  r.request.priority = -7;
  r.request.as_user = "bob";
  r.request.output_path = "out-%j.txt";
  r.request.error_path = "/home/alice/err-%u.txt";
  r.request.time_limit_s = 5400;
  r.request.after = {3};
  r.request.afterok = {4, 5};
  r.hold = Hold::kRoot;
  r.uid = 1001;
  r.gid = 1002;
  r.user = "alice";
  r.state = JobState::kFailed;
  r.reason = Reason::kSignaled;
  r.detail = "killed by SIGKILL";
  r.submit_ms = 1700000000123;
  r.start_ms = 1700000001456;
  r.end_ms = 1700000099789;
  r.exit_code = 137;
  r.term_signal = 9;
  r.allocations = {{0, "GPU-aaaa", 8ull << 30, 40, SharingMode::kMps},
                   {3, "MIG-bbbb", 8ull << 30, 40, SharingMode::kMps}};
  r.pid = 424242;
  r.pid_start_ticks = 987654321;
  r.cancel_requested = true;
  r.cancelled_by = "root";
  return r;
}

// A minimal pending job for `uid`.
inline JobRecord PendingRecord(uint32_t uid, int64_t submit_ms) {
  JobRecord r;
  r.request.argv = {"true"};
  r.request.cwd = "/";
  r.uid = uid;
  r.user = "user" + std::to_string(uid);
  r.submit_ms = submit_ms;
  return r;
}

// Runs `sql` on its own connection to `path` and returns the first column of the first row.
inline std::string QueryOne(const std::string& path, const std::string& sql) {
  Result<Db> db = Db::Open(path);
  if (!db.ok()) return "open failed: " + db.status().ToString();
  Result<std::string> value = db->QueryText(sql);
  if (!value.ok()) return "query failed: " + value.status().ToString();
  return *value;
}

// Runs SQL text with no values on its own connection to `path`, as an admin with sqlite3 would.
inline Status ExecSql(const std::string& path, const std::string& sql) {
  Result<Db> db = Db::Open(path);
  if (!db.ok()) return db.status();
  return db->Exec(sql.c_str());
}

}  // namespace pinpoint::store::testing
